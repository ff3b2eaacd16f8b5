import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { BlobStore } from '../../store/blobs.js';
import { DiskBlobStore } from '../../store/blobs-disk.js';

/**
 * The blob store as an app service. Embedded mode keeps blobs on disk under DATA_DIR;
 * an S3-compatible store will be chosen here from the configuration.
 */
export default fp(
  async function blobs(fastify: FastifyInstance) {
    fastify.decorate('blobs', new DiskBlobStore(fastify.config.dataDir));
  },
  { name: 'blobs' },
);

declare module 'fastify' {
  interface FastifyInstance {
    blobs: BlobStore;
  }
}
