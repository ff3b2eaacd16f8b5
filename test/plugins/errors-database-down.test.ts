import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { databasePort, toApiError } from '../../src/plugins/app/errors.js';
import { freePort } from '../helpers/private-services.js';

/**
 * Issue 21 item 5: an untyped failure that says PostgreSQL cannot be reached answers
 * engine_error (the closed list has no other 5xx for it) with a message and hint saying so;
 * any other untyped failure stays "Internal error.".
 */
describe('errors while the database is down', () => {
  it('a refused connection to the database port says the database is not answering', async () => {
    const port = await freePort();
    const url = `postgres://nobody@127.0.0.1:${port}/none`;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    const err = await client.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeDefined();
    const api = toApiError(err, databasePort(url));
    expect(api.code).toBe('engine_error');
    expect(api.status).toBe(500);
    expect(api.message).toMatch(/database is not answering/);
    expect(api.hint).toMatch(/retry the request in a few seconds/i);
    // The same socket error on another port (a blob store, Redis) is not the database's.
    expect(toApiError(err, port + 1).message).toBe('Internal error.');
    // Embedded mode (SQLite) has no database port.
    expect(databasePort('sqlite:/tmp/x.sqlite')).toBeUndefined();
    expect(databasePort('postgres://u@db/x')).toBe(5432);
  });

  it("PostgreSQL's shutdown states and node-postgres's lost connections, also wrapped", () => {
    const coded = (code: string) => Object.assign(new Error('terminating connection'), { code });
    for (const err of [
      coded('57P01'), // admin_shutdown: pg_ctl stop with the connection open
      coded('57P03'), // cannot_connect_now: the server is starting
      coded('08006'), // connection_failure
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new Error('query failed', { cause: coded('57P01') }),
      new AggregateError([coded('57P02')], 'all failed'),
    ]) {
      expect(toApiError(err, 5432).message, String(err)).toMatch(/database is not answering/);
    }
    for (const err of [new Error('boom'), coded('23505'), new TypeError('x is undefined')]) {
      expect(toApiError(err, 5432).message, String(err)).toBe('Internal error.');
    }
  });
});
