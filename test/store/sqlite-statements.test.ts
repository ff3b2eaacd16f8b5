import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { CachedStatements } from '../../src/store/sqlite-dialect.js';

describe('CachedStatements', () => {
  it('prepares each SQL text once, and a fresh statement while the cached one is mid-iteration', () => {
    const raw = new BetterSqlite3(':memory:');
    raw.exec('create table t (n integer)');
    raw.exec('insert into t values (1), (2), (3)');
    const prepare = vi.spyOn(raw, 'prepare');
    const db = new CachedStatements(raw, 2);
    const select = 'select n from t order by n';
    const first = db.prepare(select);
    expect(db.prepare(select)).toBe(first);
    expect(prepare).toHaveBeenCalledTimes(1);
    // Iterating: the cached statement is busy, so the same text gets another statement.
    const it = first.iterate([]);
    expect(it.next().value).toEqual({ n: 1 });
    const second = db.prepare(select);
    expect(second).not.toBe(first);
    expect(second.all([])).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(it.next().value).toEqual({ n: 2 });
    it.return?.();
    // Past its bound the oldest text is prepared again.
    db.prepare('select 1');
    db.prepare('select 2');
    expect(db.prepare(select)).not.toBe(first);
    db.close();
    expect(raw.open).toBe(false);
  });
});
