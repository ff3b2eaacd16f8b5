import type { Migration } from 'kysely';
import { accountsAndKeys } from './0001_accounts_keys.js';
import { files } from './0002_files.js';

/**
 * Every migration, by name. Kysely runs them in the order of their names, so a new one
 * gets the next number and one line here; a name, once shipped, never changes.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_accounts_keys': accountsAndKeys,
  '0002_files': files,
};
