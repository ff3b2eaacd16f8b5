import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { buildWorker } from '../queue/worker-app.js';
import { type CliIo, EXIT_OK } from './io.js';

export const WORKER_USAGE = `Usage:
  pdfedit worker [--concurrency N]
      Run job workers (async edits, batches, webhook deliveries) without the HTTP server.
      Shares DATABASE_URL, REDIS_URL and the blob store (S3_BUCKET or DATA_DIR) with the API;
      start as many as the machines allow. --concurrency defaults to JOB_WORKERS (or
      ENGINE_THREADS). SIGTERM: running jobs get WORKER_GRACE_MS to finish, then are
      released to other workers.`;

/** `pdfedit worker`: runs until SIGTERM/SIGINT; resolves with the exit code. */
export async function runWorker(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { concurrency: { type: 'string' } }, strict: true });
  const env = { ...io.env };
  if (values.concurrency !== undefined) env.JOB_WORKERS = values.concurrency;
  const config = loadConfig(env);
  if (config.jobs.workers < 1) throw new Error('a worker needs --concurrency (or JOB_WORKERS) of at least 1');
  const worker = await buildWorker(config);
  io.out(
    `pdfedit worker: running ${config.jobs.workers} job(s) at a time (${config.redisUrl ? 'BullMQ on Redis' : 'embedded queue'})`,
  );
  // The service's timers are unref'd (they must not hold a closing server open); a worker
  // has nothing else keeping the process alive, so this does until a signal arrives.
  const keepAlive = setInterval(() => {}, 60_000);
  return new Promise<number>((resolve) => {
    let closing = false;
    const stop = (signal: string) => {
      if (closing) return;
      closing = true;
      clearInterval(keepAlive);
      worker.log.info({ signal }, 'worker stopping');
      worker.close().then(
        () => resolve(EXIT_OK),
        (err: unknown) => {
          worker.log.error({ err }, 'error while stopping');
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
