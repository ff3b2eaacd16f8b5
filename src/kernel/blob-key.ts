/**
 * Keys are our own identifiers (`file_…`), never user paths. The rule is strict so that no
 * key can name anything outside the store: no separators, no dot segments, bounded length.
 * The blob stores check every key by it, and so does an engine process before it writes an
 * edit's output under a key (src/engine/output-file.ts).
 */
const KEY = /^[A-Za-z0-9][A-Za-z0-9_-]{0,199}$/;

export function assertBlobKey(key: string): void {
  if (!KEY.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key.slice(0, 40))}`);
}
