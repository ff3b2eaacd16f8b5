import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CORPUS_DIR, HAVE_CORPUS } from './env.js';

export interface CorpusEntry {
  file: string;
  pages: number;
  pagesWithoutText: number;
  textChars: number;
  userPassword: string | undefined;
  ownerPassword: string | undefined;
  phrases: string[];
  signed: boolean;
}

/** The shared corpus manifest, or [] when ../shared/corpus is absent (tests then skip). */
export function corpus(): CorpusEntry[] {
  if (!HAVE_CORPUS) return [];
  const raw = JSON.parse(readFileSync(path.join(CORPUS_DIR, 'manifest.json'), 'utf8')) as Record<
    string,
    unknown
  >[];
  return raw.map((m) => ({
    file: String(m.file),
    pages: Number(m.pages ?? 1),
    pagesWithoutText: Number(m.pages_without_text ?? 0),
    textChars: Number(m.text_chars ?? 0),
    userPassword: (m.user_password as string | null) ?? undefined,
    ownerPassword: (m.owner_password as string | null) ?? undefined,
    phrases: (m.phrases as string[] | undefined) ?? [],
    signed: Number((m.sig as { signed?: number } | undefined)?.signed ?? 0) > 0,
  }));
}

export function corpusPath(file: string): string {
  return path.join(CORPUS_DIR, file);
}

let havePdftotext: boolean | undefined;
export function pdftotextAvailable(): boolean {
  if (havePdftotext === undefined) {
    try {
      execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
      havePdftotext = true;
    } catch {
      havePdftotext = false;
    }
  }
  return havePdftotext;
}

/** Text of a PDF by poppler's pdftotext: the independent reference for text extraction. */
export function pdftotext(file: string, password?: string): string {
  const args = ['-q', '-enc', 'UTF-8'];
  if (password) args.push('-upw', password);
  return execFileSync('pdftotext', [...args, file, '-'], { maxBuffer: 64 * 1024 * 1024 }).toString('utf8');
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const RTL = /[\p{Script=Arabic}\p{Script=Hebrew}]/u;

/**
 * Words as both tools can be compared on them: NFKC (ligature code points compare equal),
 * split on whitespace. Scripts written without spaces (CJK) count each character as a
 * word, so where one tool breaks a column into lines the other does not, the count stays
 * fair. pdftotext writes right-to-left runs in visual order (MANIFEST.md notes it for the
 * Arabic file) while a text layer reads in logical order: an RTL word is compared in the
 * lesser of its two orders.
 */
export function words(text: string): string[] {
  const out: string[] = [];
  // Format characters (bidi embeddings and marks, zero-width joiners) are invisible: pdftotext
  // wraps right-to-left runs in them, a text layer does not. A glyph whose font maps it to a
  // control code is printed raw by pdftotext and as U+FFFD by us: both say "an unreadable
  // glyph here", so they compare equal.
  for (const token of text
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .replace(/[^\P{Cc}\s]/gu, '\uFFFD')
    .split(/\s+/u)) {
    if (!token) continue;
    if (CJK.test(token)) {
      let rest = '';
      for (const ch of token) {
        if (CJK.test(ch)) {
          if (rest) out.push(rest);
          rest = '';
          out.push(ch);
        } else rest += ch;
      }
      if (rest) out.push(rest);
    } else if (RTL.test(token)) {
      const reversed = [...token].reverse().join('');
      out.push([reversed, token].sort()[0]!);
    } else out.push(token);
  }
  return out;
}

/** Multiset overlap |A∩B| / max(|A|, |B|): 1 when both tools read the same words. */
export function wordOverlap(a: string[], b: string[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  const counts = new Map<string, number>();
  for (const w of a) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of b) {
    const c = counts.get(w) ?? 0;
    if (c > 0) {
      common++;
      counts.set(w, c - 1);
    }
  }
  return common / Math.max(a.length, b.length);
}

/**
 * The independent evaluator's words (../shared/tools/evallib.py `words_of`): every run of
 * 5 to 12 ASCII letters, found as Python's `re.findall(r"[A-Za-z]{5,12}")` finds them (a
 * longer run yields several), counted with multiplicity and case.
 */
export function letterWords(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/[A-Za-z]{5,12}/g)) out.set(m[0], (out.get(m[0]) ?? 0) + 1);
  return out;
}

/** How many words a count map holds. */
export function wordTotal(words: Map<string, number>): number {
  let n = 0;
  for (const c of words.values()) n += c;
  return n;
}

/**
 * The evaluator's agreement (evallib.py `check_text`): the share of the reference's words,
 * with multiplicity, that the other text also has. Words the reference lacks cost nothing.
 */
export function letterWordRecall(ours: Map<string, number>, reference: Map<string, number>): number {
  let common = 0;
  for (const [w, c] of reference) common += Math.min(c, ours.get(w) ?? 0);
  return common / Math.max(1, wordTotal(reference));
}

/** Width and height of a PNG from its IHDR chunk (throws when the bytes are not a PNG). */
export function pngSize(png: Buffer): { width: number; height: number } {
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (png.length < 24 || !png.subarray(0, 8).equals(sig) || png.toString('latin1', 12, 16) !== 'IHDR') {
    throw new Error('not a PNG');
  }
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}
