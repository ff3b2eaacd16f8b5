import type { Edit } from '../schemas/edit.js';

/**
 * `{name}` placeholders of a batch (SPEC "Edit object": ordinary edit text and form
 * values are filled per record). A name starts with a letter or underscore, so regex
 * quantifiers such as `\d{3}` are never mistaken for placeholders.
 *
 * The substitution walks the edit's JSON generically: every string except the members
 * that are keywords or ids (op, match, fit, style, scope.span_ids, scope.pages), so the
 * ops that arrive later (insert `text`, `at.after`, form `fields` values) are covered as
 * they are merged. Values inserted into a regex `find` are escaped (the record's text is
 * literal text), `$` in a regex `replace` likewise. A form field value that is exactly one
 * placeholder takes the record value's own JSON type (true for a checkbox).
 */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g;
const EXACT = /^\{([A-Za-z_][A-Za-z0-9_.-]*)\}$/;
const SKIP = new Set(['op', 'match', 'fit', 'style', 'span_ids', 'pages']);

export type RecordValues = Record<string, unknown>;

/** A record lacks values for some placeholders: that record fails, not the batch. */
export class MissingPlaceholderError extends Error {
  override readonly name = 'MissingPlaceholderError';
  constructor(readonly missing: string[]) {
    super(`The record has no value for ${missing.map((m) => `{${m}}`).join(', ')}.`);
  }
}

/** Every placeholder name used in the edits (for messages and checks). */
export function placeholdersOf(edits: Edit[]): string[] {
  const names = new Set<string>();
  const walk = (v: unknown, key: string | undefined) => {
    if (key !== undefined && SKIP.has(key)) return;
    if (typeof v === 'string') for (const m of v.matchAll(PLACEHOLDER)) names.add(m[1]!);
    else if (Array.isArray(v)) for (const x of v) walk(x, undefined);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(edits, undefined);
  return [...names];
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : String(value);
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** The edits with this record's values in place of the placeholders. */
export function fillEdits(edits: Edit[], record: RecordValues): Edit[] {
  const missing = placeholdersOf(edits).filter((n) => !Object.hasOwn(record, n));
  if (missing.length > 0) throw new MissingPlaceholderError(missing);
  return edits.map((edit) => {
    const regex = edit.match === 'regex';
    const fill = (s: string, how: 'plain' | 'pattern' | 'replacement') =>
      s.replace(PLACEHOLDER, (_, name: string) => {
        const v = text(record[name]);
        if (how === 'pattern') return escapeRegex(v);
        if (how === 'replacement') return v.replaceAll('$', '$$$$');
        return v;
      });
    const walk = (v: unknown, key: string | undefined, inFields: boolean): unknown => {
      if (key !== undefined && SKIP.has(key)) return v;
      if (typeof v === 'string') {
        if (inFields) {
          const exact = EXACT.exec(v);
          const value = exact ? record[exact[1]!] : undefined;
          if (exact && (typeof value === 'boolean' || typeof value === 'number')) return value;
        }
        return fill(
          v,
          regex && key === 'find' ? 'pattern' : regex && key === 'replace' ? 'replacement' : 'plain',
        );
      }
      if (Array.isArray(v)) return v.map((x) => walk(x, undefined, inFields));
      if (v && typeof v === 'object')
        return Object.fromEntries(
          Object.entries(v).map(([k, x]) => [k, walk(x, k, inFields || key === 'fields')]),
        );
      return v;
    };
    return walk(edit, undefined, false) as Edit;
  });
}
