import Fastify, { type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import db from '../plugins/app/db.js';
import engine from '../plugins/app/engine.js';
import jobs from './plugin.js';

/**
 * `pdfedit worker`: the job workers without the HTTP server. Same database, blob store,
 * engine pool and queue plugins as the service, so a worker on another machine sharing
 * Redis, PostgreSQL and S3 runs jobs exactly as the API process would.
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
  return fastify;
}
