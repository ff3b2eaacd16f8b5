import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { getWebhookSecret } from '../domain/accounts.js';
import { WebhookDispatcher } from '../net/webhooks.js';
import blobsPlugin from '../plugins/app/blobs.js';
import type { JobRow } from '../store/jobs-schema.js';
import { BullQueue } from './bullmq-queue.js';
import { EmbeddedQueue } from './embedded-queue.js';
import type { JobQueue } from './job-queue.js';
import { bellsOf, Reconciler } from './reconciler.js';
import { JobRunner } from './runner.js';

export interface Jobs {
  queue: JobQueue;
  runner: JobRunner;
  reconciler: Reconciler;
  webhooks: WebhookDispatcher;
  /** Rings for a job just stored as queued. */
  submit(row: Pick<JobRow, 'id' | 'kind' | 'progress_total'>): Promise<void>;
}

/**
 * Jobs as an app service: the queue (BullMQ when REDIS_URL is set, else in-process), the
 * runner with `config.jobs.workers` at a time (0: this process only queues), the
 * reconciler and the webhook dispatcher. On close: no new work, running jobs get the
 * grace to finish, then whatever is still held is released for other workers.
 */
export default fp(
  async function jobs(fastify: FastifyInstance) {
    const { config } = fastify;
    if (!fastify.hasDecorator('blobs')) await fastify.register(blobsPlugin);
    const queue: JobQueue = config.redisUrl
      ? await BullQueue.open({
          redisUrl: config.redisUrl,
          prefix: config.jobs.queuePrefix,
          leaseMs: config.jobs.leaseMs,
        })
      : new EmbeddedQueue();
    const runner = new JobRunner(fastify, fastify.log);
    const reconciler = new Reconciler({
      db: fastify.db,
      queue,
      now: () => config.now(),
      intervalMs: config.jobs.reconcileMs,
      shards: config.jobs.batchShards,
      log: fastify.log,
    });
    const webhooks = new WebhookDispatcher({
      db: fastify.db,
      now: () => config.now(),
      timeoutMs: config.jobs.webhookTimeoutMs,
      pollMs: config.jobs.webhookPollMs,
      allowPrivate: config.allowPrivateUrls,
      log: fastify.log,
      secretOf: (accountId) => getWebhookSecret(fastify.db, accountId),
    });
    const service: Jobs = {
      queue,
      runner,
      reconciler,
      webhooks,
      // The job is already stored: if the queue cannot take the bell now (Redis down), the
      // caller still gets its 202 and the reconciler rings once the queue is back.
      submit: async (row) => {
        try {
          await queue.ring(bellsOf(row, config.jobs.batchShards));
        } catch (err) {
          fastify.log.warn(
            { err, job: row.id },
            'job stored but not queued yet; the reconciler will queue it',
          );
        }
      },
    };
    fastify.decorate('jobs', service);
    fastify.addHook('onReady', async () => {
      if (config.jobs.workers > 0) {
        queue.consume((bell) => runner.run(bell), config.jobs.workers);
        reconciler.start();
      }
      webhooks.start();
    });
    fastify.addHook('preClose', async () => {
      runner.stop();
      await queue.stopConsuming(config.jobs.shutdownGraceMs);
      await runner.releaseAll();
      await reconciler.stop();
      await webhooks.stop();
      await queue.close();
    });
  },
  { name: 'jobs', dependencies: ['db', 'engine'] },
);

declare module 'fastify' {
  interface FastifyInstance {
    jobs: Jobs;
  }
}
