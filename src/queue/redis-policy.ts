/**
 * BullMQ keeps jobs in Redis keys; a Redis that may evict keys under memory pressure can
 * drop queued jobs and locks silently. The service refuses to start against one.
 */
export class RedisPolicyError extends Error {
  override readonly name = 'RedisPolicyError';
}

interface InfoClient {
  info(section: string): Promise<string>;
}

/** Reads `maxmemory_policy` from INFO (CONFIG may be disabled on managed Redis). */
export async function assertNoEviction(client: InfoClient): Promise<void> {
  const info = await client.info('memory');
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy === undefined) {
    throw new RedisPolicyError(
      'Redis did not report maxmemory_policy (INFO memory); cannot confirm it is "noeviction".',
    );
  }
  if (policy !== 'noeviction') {
    throw new RedisPolicyError(
      `Redis maxmemory-policy is "${policy}"; jobs need "noeviction" (an evicting Redis can drop queued jobs). ` +
        'Run CONFIG SET maxmemory-policy noeviction, or set it in redis.conf.',
    );
  }
}
