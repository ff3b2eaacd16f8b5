// Run by db.test.ts as a separate process: opens the database given as argv[2], migrates,
// prints the names of the migrations this process applied as JSON. Separate processes,
// because better-sqlite3 is synchronous: two connections in one process cannot wait on
// each other's locks. argv[3] is an epoch-ms start time: every child loads and connects
// first, then they all migrate at that same moment, so the race is real, not staggered by
// process start-up.
import { migrateToLatest, openDatabase } from '../../src/store/db.js';

const url = process.argv[2];
if (!url) throw new Error('usage: migrate-child.ts DATABASE_URL');
const startAt = Number(process.argv[3] ?? 0);
const { db, close } = openDatabase(url);
await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
try {
  const results = await migrateToLatest(db);
  process.stdout.write(`${JSON.stringify(results.map((r) => r.migrationName))}\n`);
} finally {
  await close();
}
