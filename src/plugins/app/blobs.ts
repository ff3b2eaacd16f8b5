import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { BlobStore } from '../../store/blobs.js';
import { DiskBlobStore } from '../../store/blobs-disk.js';
import { S3BlobStore } from '../../store/blobs-s3.js';

const TEMP_MAX_AGE_MS = 60 * 60_000;
const TEMP_SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * The blob store as an app service: an S3-compatible bucket when S3_BUCKET is set, else
 * local disk under DATA_DIR (embedded mode).
 */
export default fp(
  async function blobs(fastify: FastifyInstance) {
    const s3 = fastify.config.s3;
    if (s3) {
      const store = new S3BlobStore(s3);
      fastify.decorate('blobs', store);
      fastify.addHook('onClose', async () => store.close());
    } else {
      const store = new DiskBlobStore(fastify.config.dataDir);
      fastify.decorate('blobs', store);
      // A process killed mid-write leaves its temporary file behind (never read as a blob,
      // but it holds disk space): every process sweeps those untouched for an hour, at start
      // and every ten minutes.
      let timer: NodeJS.Timeout | undefined;
      const sweep = () => {
        store
          .sweepTemp(Date.now() - TEMP_MAX_AGE_MS)
          .then((n) => {
            if (n > 0) fastify.log.info({ removed: n }, 'abandoned temporary blob files removed');
          })
          .catch((err: unknown) => fastify.log.error({ err }, 'temporary blob sweep failed'));
      };
      fastify.addHook('onReady', async () => {
        sweep();
        timer = setInterval(sweep, TEMP_SWEEP_INTERVAL_MS);
        timer.unref();
      });
      fastify.addHook('onClose', async () => clearInterval(timer));
    }
  },
  { name: 'blobs' },
);

declare module 'fastify' {
  interface FastifyInstance {
    blobs: BlobStore;
  }
}
