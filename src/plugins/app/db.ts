import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Kysely } from 'kysely';
import { type DbKind, migrateToLatest, openDatabase } from '../../store/db.js';
import type { Database } from '../../store/schema.js';

/**
 * The database as an app service: opened from `fastify.config.databaseUrl`, migrated to
 * the latest schema before the first request, closed with the server.
 */
export default fp(
  async function db(fastify: FastifyInstance) {
    const opened = openDatabase(fastify.config.databaseUrl, {
      onPoolError: (err) => fastify.log.error({ err }, 'idle database connection failed'),
    });
    try {
      const applied = await migrateToLatest(opened.db);
      for (const m of applied)
        fastify.log.info({ migration: m.migrationName, status: m.status }, 'migration');
    } catch (err) {
      await opened.close();
      throw err;
    }
    fastify.decorate('db', opened.db);
    fastify.decorate('dbKind', opened.kind);
    fastify.addHook('onClose', async () => {
      await opened.close();
    });
  },
  { name: 'db' },
);

declare module 'fastify' {
  interface FastifyInstance {
    db: Kysely<Database>;
    dbKind: DbKind;
  }
}
