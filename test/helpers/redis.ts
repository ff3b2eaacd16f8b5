import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** A queue prefix no other test uses. */
export function uniquePrefix(): string {
  return `pdfedit-test-${randomBytes(6).toString('hex')}`;
}

/** Removes every key under `prefix` (the test's own queue). */
export async function dropPrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Keys under `prefix` (tests check that cleanup works and that a bell exists). */
export async function countKeys(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  try {
    return (await redis.keys(`${prefix}:*`)).length;
  } finally {
    redis.disconnect();
  }
}
