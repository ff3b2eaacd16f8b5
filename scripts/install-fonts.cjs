#!/usr/bin/env node
// Installs the metric twins that no Debian package carries, from pinned npm packages
// (package-lock.json), as TrueType files the engine's font registry indexes:
//   Gelasio (Georgia's metric twin, SIL OFL 1.1) from @fontsource/gelasio, whose files are
//   WOFF 1.0: each table is inflated back into a plain sfnt (OpenType 1.9 §5, WOFF 1.0 §5).
// Only Fontsource's "latin" subset is shipped per weight: Basic Latin, Latin-1 and the
// common punctuation; text outside it falls back to the next candidate (a look-alike).
// Usage: node scripts/install-fonts.cjs <target dir>
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const root = path.resolve(__dirname, '..');
const target = process.argv[2];
if (!target) {
  console.error('usage: install-fonts.cjs <target dir>');
  process.exit(2);
}

/** WOFF 1.0 bytes to the sfnt they wrap. Throws on anything that is not well-formed. */
function woffToSfnt(woff) {
  if (woff.toString('latin1', 0, 4) !== 'wOFF') throw new Error('not a WOFF 1.0 file');
  const flavor = woff.readUInt32BE(4);
  const numTables = woff.readUInt16BE(12);
  if (numTables === 0 || numTables > 200) throw new Error(`implausible table count ${numTables}`);
  const tables = [];
  for (let i = 0; i < numTables; i++) {
    const at = 44 + i * 20;
    const tag = woff.subarray(at, at + 4);
    const offset = woff.readUInt32BE(at + 4);
    const compLength = woff.readUInt32BE(at + 8);
    const origLength = woff.readUInt32BE(at + 12);
    const checksum = woff.readUInt32BE(at + 16);
    if (offset + compLength > woff.length) throw new Error('table past the end of the file');
    const stored = woff.subarray(offset, offset + compLength);
    const data = compLength < origLength ? zlib.inflateSync(stored) : Buffer.from(stored);
    if (data.length !== origLength) throw new Error(`table ${tag} inflates to the wrong size`);
    tables.push({ tag, checksum, data });
  }
  let entrySelector = 0;
  while (2 ** (entrySelector + 1) <= numTables) entrySelector++;
  const searchRange = 2 ** entrySelector * 16;
  const header = Buffer.alloc(12 + 16 * numTables);
  header.writeUInt32BE(flavor, 0);
  header.writeUInt16BE(numTables, 4);
  header.writeUInt16BE(searchRange, 6);
  header.writeUInt16BE(entrySelector, 8);
  header.writeUInt16BE(numTables * 16 - searchRange, 10);
  const parts = [header];
  let offset = header.length;
  tables.forEach((t, i) => {
    const rec = 12 + i * 16;
    t.tag.copy(header, rec);
    header.writeUInt32BE(t.checksum, rec + 4);
    header.writeUInt32BE(offset, rec + 8);
    header.writeUInt32BE(t.data.length, rec + 12);
    const padded = Buffer.alloc((t.data.length + 3) & ~3);
    t.data.copy(padded);
    parts.push(padded);
    offset += padded.length;
  });
  return Buffer.concat(parts);
}

const GELASIO = path.join(root, 'node_modules/@fontsource/gelasio/files');
const faces = [
  ['gelasio-latin-400-normal.woff', 'Gelasio-Regular.ttf'],
  ['gelasio-latin-700-normal.woff', 'Gelasio-Bold.ttf'],
  ['gelasio-latin-400-italic.woff', 'Gelasio-Italic.ttf'],
  ['gelasio-latin-700-italic.woff', 'Gelasio-BoldItalic.ttf'],
];
fs.mkdirSync(target, { recursive: true });
for (const [from, to] of faces) {
  const sfnt = woffToSfnt(fs.readFileSync(path.join(GELASIO, from)));
  const out = path.join(target, to);
  // Temp then rename: a reader never sees half a font.
  fs.writeFileSync(`${out}.tmp`, sfnt);
  fs.renameSync(`${out}.tmp`, out);
}
fs.copyFileSync(path.join(GELASIO, '..', 'LICENSE'), path.join(target, 'Gelasio-LICENSE.txt'));
console.log(`install-fonts: Gelasio (Georgia's metric twin) in ${target}`);
