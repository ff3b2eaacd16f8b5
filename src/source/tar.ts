/**
 * A minimal POSIX ustar writer: regular files only, which is all the source archive holds.
 * Paths longer than 100 bytes are split into the ustar prefix (155) and name fields.
 */

const BLOCK = 512;

function field(header: Buffer, offset: number, length: number, value: string): void {
  header.write(value, offset, length, 'utf8');
}

function octal(header: Buffer, offset: number, length: number, value: number): void {
  field(header, offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
}

function splitPath(path: string): { prefix: string; name: string } {
  if (Buffer.byteLength(path) <= 100) return { prefix: '', name: path };
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { prefix, name };
  }
  throw new Error(`path too long for a ustar archive: ${path}`);
}

export interface TarEntry {
  path: string;
  data: Buffer;
  mode?: number;
  mtimeSec?: number;
}

function header(entry: TarEntry): Buffer {
  const h = Buffer.alloc(BLOCK, 0);
  const { prefix, name } = splitPath(entry.path);
  field(h, 0, 100, name);
  octal(h, 100, 8, entry.mode ?? 0o644);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, entry.data.length);
  octal(h, 136, 12, entry.mtimeSec ?? 0);
  field(h, 148, 8, '        '); // checksum is computed over spaces here
  field(h, 156, 1, '0');
  field(h, 257, 6, 'ustar\0');
  field(h, 263, 2, '00');
  field(h, 265, 32, 'root');
  field(h, 297, 32, 'root');
  field(h, 345, 155, prefix);
  let sum = 0;
  for (const byte of h) sum += byte;
  field(h, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return h;
}

/** The whole archive as one buffer (ends with the two zero blocks of the format). */
export function tarArchive(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    parts.push(header(e), e.data);
    const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad, 0));
  }
  parts.push(Buffer.alloc(2 * BLOCK, 0));
  return Buffer.concat(parts);
}
