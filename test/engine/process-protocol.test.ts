import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import {
  plainBytes,
  TEMPLATE_MAX_BYTES,
  TEMPLATE_SHELF_SIZE,
  TemplateShelf,
} from '../../src/engine/process-protocol.js';

describe('plainBytes (what crosses the engine IPC channel)', () => {
  it('turns every Buffer into a Uint8Array over the same bytes, without touching the input', () => {
    const pdf = Buffer.from('%PDF-1.7 body');
    const png = Buffer.alloc(4, 7);
    const value = { ok: true, value: { pdf, changes: [{ page: 1, before_png: png, box: [1, 2] }], n: 3 } };
    const out = plainBytes(value);
    expect(Buffer.isBuffer(out.value.pdf)).toBe(false);
    expect(out.value.pdf).toBeInstanceOf(Uint8Array);
    expect(out.value.pdf.buffer).toBe(pdf.buffer);
    expect(Buffer.from(out.value.pdf).toString()).toBe('%PDF-1.7 body');
    expect(Buffer.isBuffer(out.value.changes[0]!.before_png)).toBe(false);
    expect(out.value.changes[0]!.box).toBe(value.value.changes[0]!.box);
    // The input keeps its Buffers (the pool still holds the task).
    expect(Buffer.isBuffer(value.value.pdf)).toBe(true);
    expect(Buffer.isBuffer(value.value.changes[0]!.before_png)).toBe(true);
    // The same bytes on the wire, as the channel serialises them.
    expect(serialize(out).length).toBe(serialize({ ...value }).length);
  });

  it('returns values without Buffers as they are', () => {
    const value = { op: 'open', pdf: new Uint8Array([1, 2]), limits: { a: 1 }, list: ['x'] };
    expect(plainBytes(value)).toBe(value);
    expect(plainBytes(null)).toBe(null);
    expect(plainBytes('s')).toBe('s');
  });
});

describe('TemplateShelf (batch templates an engine process keeps)', () => {
  it('keeps the most recently used templates within its bounds', () => {
    const shelf = new TemplateShelf<string>();
    for (let i = 1; i <= TEMPLATE_SHELF_SIZE; i++) shelf.put(`t${i}`, `bytes${i}`, 10);
    expect(shelf.get('t1')).toBe('bytes1'); // t1 now the most recently used
    shelf.put('t5', 'bytes5', 10);
    expect(shelf.size).toBe(TEMPLATE_SHELF_SIZE);
    expect(shelf.has('t2')).toBe(false); // the least recently used went
    expect(shelf.has('t1')).toBe(true);
    expect(shelf.get('t5')).toBe('bytes5');
    // A template too large is not kept, and replaces nothing kept under its key.
    shelf.put('t1', 'huge', TEMPLATE_MAX_BYTES + 1);
    expect(shelf.has('t1')).toBe(false);
    expect(shelf.size).toBe(TEMPLATE_SHELF_SIZE - 1);
  });
});
