import Fastify, { type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import db from '../plugins/app/db.js';
import engine from '../plugins/app/engine.js';
import jobs from './plugin.js';

/**
 * `pdfedit worker`: the job workers without the HTTP server. Same database, blob store,
 * engine pool and queue plugins as the service, so a worker on another machine sharing
 * Redis, PostgreSQL and S3 runs jobs exactly as the API process would. Unlike the API
 * process (whose pool starts with its first call), a worker starts its engine processes
 * at boot.
 */
export async function buildWorker(config: Config): Promise<FastifyInstance> {
  const fastify = Fastify({ logger: { level: config.logLevel } });
  await fastify.register(
    fp(
      async (instance) => {
        instance.decorate('config', config);
        await instance.register(db);
        await instance.register(engine);
        await instance.register(jobs);
      },
      { name: 'pdfedit-worker' },
    ),
  );
  await fastify.ready();
  // A worker is there to run jobs: its engine processes start now, not with its first job.
  fastify.engine.start();
  return fastify;
}
