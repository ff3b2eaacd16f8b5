import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { plainBytes } from '../../src/engine/process-protocol.js';

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
