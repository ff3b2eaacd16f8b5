import { createHash } from 'node:crypto';
import type { DocInfo } from '../../native/index.js';
import type { EngineLimits } from './tasks.js';

/**
 * What the engine's open said of a document, kept by content (issue 18 item 1: no second
 * open of the same bytes). A client that uploads a file once and edits it many times, or
 * sends the same template again, pays the open (a PDFium load in an engine process and the
 * budget scan, 2–10 ms on a one-page invoice) once. The key is the SHA-256 of the bytes,
 * of the password and of the limits the scan ran under: an answer under a paid plan's
 * budgets is never reused for a keyless caller's tighter ones, and a document that opened
 * with a password is never reported as open to a caller without it. Only successful opens
 * are kept; a refusal (encrypted, damaged, over a budget) is worked out again each time.
 */
export class DocInfoCache {
  private readonly entries = new Map<string, { info: DocInfo; expires: number }>();

  constructor(
    private readonly maxEntries = 512,
    private readonly ttlMs = 15 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * `bytes` are the document, or the SHA-256 (hex) of the document when it is already known
   * (a stored file's row holds the digest of its bytes, so they are not hashed again).
   */
  static keyOf(
    bytes: Uint8Array | string,
    password: string | undefined,
    limits: EngineLimits | undefined,
  ): string {
    const digest = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');
    // Each part digested on its own: no choice of bytes can make two different triples
    // produce the same key by moving a boundary between them.
    const pw = password === undefined ? '-' : digest(password);
    const lim = limits === undefined ? '-' : digest(JSON.stringify(limits, Object.keys(limits).sort()));
    const doc = typeof bytes === 'string' ? bytes.toLowerCase() : digest(bytes);
    return `${doc}.${pw}.${lim}`;
  }

  get(key: string): DocInfo | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    // Map order is insertion order: re-inserting makes this the most recently used.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return structuredClone(hit.info);
  }

  put(key: string, info: DocInfo): void {
    this.entries.delete(key);
    this.entries.set(key, { info: structuredClone(info), expires: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
