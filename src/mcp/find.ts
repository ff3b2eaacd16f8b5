import vm from 'node:vm';

/** A span of POST /v1/text, as far as finding needs it. */
export interface TextSpan {
  span_id: string;
  page: number;
  text: string;
  box: number[];
  font: string;
  size: number;
  line: number;
  block: number;
  space_before: boolean;
}

export interface TextPage {
  page: number;
  spans: TextSpan[];
}

export type MatchMode = 'exact' | 'icase' | 'word' | 'regex';

export interface FindHit {
  page: number;
  text: string;
  box: [number, number, number, number];
  context: string;
  spans: { span_id: string; text: string; box: number[]; font: string; size: number }[];
}

/** How long one search may run its pattern over all pages before it is refused. */
const REGEX_BUDGET_MS = 1000;

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The pattern a query is searched with. Whitespace in a phrase matches any run of
 * whitespace (a phrase may wrap onto the next line); `word` needs word boundaries on both
 * ends; `regex` is the query as an ECMAScript regular expression (Unicode mode).
 */
export function patternOf(query: string, match: MatchMode): { source: string; flags: string } {
  if (match === 'regex') {
    try {
      new RegExp(query, 'gu');
    } catch (err) {
      throw new Error(`The regular expression is not valid: ${(err as Error).message}`);
    }
    return { source: query, flags: 'gu' };
  }
  const phrase = query.trim().split(/\s+/u).map(escapeRegex).join('\\s+');
  const source = match === 'word' ? `(?<![\\p{L}\\p{N}_])${phrase}(?![\\p{L}\\p{N}_])` : phrase;
  return { source, flags: match === 'icase' ? 'giu' : 'gu' };
}

/** The page as one string (spans of a line joined, lines by a space) and, per character, its span. */
function pageString(spans: TextSpan[]): { text: string; owner: number[] } {
  let text = '';
  const owner: number[] = [];
  spans.forEach((s, i) => {
    const prev = spans[i - 1];
    if (prev && (prev.line !== s.line || prev.block !== s.block || s.space_before)) {
      text += ' ';
      owner.push(-1);
    }
    for (const ch of s.text) {
      text += ch;
      for (let k = 0; k < ch.length; k++) owner.push(i);
    }
  });
  return { text, owner };
}

type Found = { index: number; length: number }[];

/**
 * Runs the pattern over every page's text in a separate V8 context with one time limit for
 * the whole search, so a pattern that backtracks without end (an agent's regex is input like
 * any other, and over /mcp it runs inside the service) cannot stall the process.
 */
function matchesOf(texts: string[], source: string, flags: string): Found[] {
  const ctx = vm.createContext({ texts, source, flags, out: [] as Found[] });
  try {
    vm.runInContext(
      `const re = new RegExp(source, flags);
       for (const text of texts) {
         const found = [];
         for (const m of text.matchAll(re)) {
           if (m[0].length > 0) found.push({ index: m.index, length: m[0].length });
           if (found.length >= 10000) break;
         }
         out.push(found);
       }`,
      ctx,
      { timeout: REGEX_BUDGET_MS },
    );
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      throw new Error(`The regular expression ran longer than ${REGEX_BUDGET_MS} ms; simplify it.`);
    }
    throw err;
  }
  // Objects made in the other context: copied into plain ones of this context.
  return (ctx.out as Found[]).map((page) => page.map((m) => ({ index: m.index, length: m.length })));
}

/** Every hit of `query` on `pages`, in reading order, each with the spans it covers. */
export function findInPages(
  pages: TextPage[],
  query: string,
  match: MatchMode,
  contextChars = 40,
): FindHit[] {
  const { source, flags } = patternOf(query, match);
  const hits: FindHit[] = [];
  const strings = pages.map((p) => pageString(p.spans));
  const found = matchesOf(
    strings.map((p) => p.text),
    source,
    flags,
  );
  pages.forEach((page, p) => {
    const { text, owner } = strings[p]!;
    for (const m of found[p]!) {
      const ids = new Set<number>();
      for (let i = m.index; i < m.index + m.length; i++) if (owner[i]! >= 0) ids.add(owner[i]!);
      const spans = [...ids].sort((a, b) => a - b).map((i) => page.spans[i]!);
      if (spans.length === 0) continue;
      const box: [number, number, number, number] = [
        Math.min(...spans.map((s) => s.box[0]!)),
        Math.min(...spans.map((s) => s.box[1]!)),
        Math.max(...spans.map((s) => s.box[2]!)),
        Math.max(...spans.map((s) => s.box[3]!)),
      ];
      const from = Math.max(0, m.index - contextChars);
      const to = Math.min(text.length, m.index + m.length + contextChars);
      hits.push({
        page: page.page,
        text: text.slice(m.index, m.index + m.length),
        box,
        context: `${from > 0 ? '…' : ''}${text.slice(from, to)}${to < text.length ? '…' : ''}`,
        spans: spans.map((s) => ({
          span_id: s.span_id,
          text: s.text,
          box: s.box,
          font: s.font,
          size: s.size,
        })),
      });
    }
  });
  return hits;
}
