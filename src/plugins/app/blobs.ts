import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { BlobStore } from '../../store/blobs.js';
import { DiskBlobStore } from '../../store/blobs-disk.js';
import { S3BlobStore } from '../../store/blobs-s3.js';

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
      fastify.decorate('blobs', new DiskBlobStore(fastify.config.dataDir));
    }
  },
  { name: 'blobs' },
);

declare module 'fastify' {
  interface FastifyInstance {
    blobs: BlobStore;
  }
}
