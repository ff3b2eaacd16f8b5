import { afterEach, describe, expect, it } from 'vitest';
import { buildWorker } from '../../src/queue/worker-app.js';
import { makeTestEnv, type TestEnv } from '../helpers/env.js';

describe('pdfedit worker', () => {
  let env: TestEnv | undefined;
  afterEach(async () => {
    await env?.cleanup();
    env = undefined;
  });

  it('starts its engine processes at boot, before any job asks for one', async () => {
    env = await makeTestEnv('sqlite', { ENGINE_PROCESSES: '2' });
    const worker = await buildWorker({ ...env.config, jobs: { ...env.config.jobs, workers: 1 } });
    try {
      // No job and no engine call yet: the processes are up (or starting) all the same.
      expect(worker.engine.stats.completed).toBe(0);
      expect(worker.engine.pids).toHaveLength(2);
    } finally {
      await worker.close();
    }
  });
});
