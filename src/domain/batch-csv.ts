import { ApiError } from '../kernel/api-error.js';

/**
 * Records of a batch from CSV (RFC 4180): the header row names the placeholders, each
 * further row is one record. Quoted fields may hold commas, quotes ("") and line breaks;
 * CRLF and LF both end a row; a UTF-8 byte order mark is ignored; blank lines are skipped.
 * A malformed file is the caller's 400 naming the line.
 */
export function parseCsvRecords(text: string, maxRecords: number): Record<string, string>[] {
  const rows = parseCsv(text.startsWith('\uFEFF') ? text.slice(1) : text, maxRecords + 1);
  const header = rows.shift();
  if (!header) throw new ApiError('invalid_request', 'records_url: the CSV is empty; it needs a header row.');
  const names = header.fields.map((h) => h.trim());
  const seen = new Set<string>();
  for (const name of names) {
    if (name === '')
      throw new ApiError('invalid_request', 'records_url: the CSV header has an empty column name.');
    if (seen.has(name))
      throw new ApiError('invalid_request', `records_url: the CSV header names "${name}" twice.`);
    seen.add(name);
  }
  return rows.map((row) => {
    if (row.fields.length !== names.length) {
      throw new ApiError(
        'invalid_request',
        `records_url: line ${row.line} has ${row.fields.length} field(s); the header has ${names.length}.`,
      );
    }
    return Object.fromEntries(names.map((n, i) => [n, row.fields[i] ?? '']));
  });
}

interface Row {
  fields: string[];
  /** 1-based line where the row starts, for messages. */
  line: number;
}

/** Splits CSV text into rows of fields. Stops early past `maxRows` (the caller then has
 * more records than the plan allows and says so). */
function parseCsv(text: string, maxRows: number): Row[] {
  const rows: Row[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let fieldStarted = false;
  let line = 1;
  let rowLine = 1;
  const endRow = () => {
    fields.push(field);
    // A blank line (one empty unquoted field) is not a record.
    if (!(fields.length === 1 && fields[0] === '' && !fieldStarted)) rows.push({ fields, line: rowLine });
    fields = [];
    field = '';
    fieldStarted = false;
    rowLine = line;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (ch === '\n') line++;
        field += ch;
      }
      continue;
    }
    if (ch === '"') {
      if (field !== '')
        throw new ApiError(
          'invalid_request',
          `records_url: line ${line} has a quote inside an unquoted field.`,
        );
      quoted = true;
      fieldStarted = true;
    } else if (ch === ',') {
      fields.push(field);
      field = '';
      fieldStarted = true;
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      line++;
      endRow();
      if (rows.length > maxRows) return rows;
    } else {
      field += ch;
    }
  }
  if (quoted) throw new ApiError('invalid_request', 'records_url: the CSV ends inside a quoted field.');
  if (field !== '' || fields.length > 0 || fieldStarted) endRow();
  return rows;
}
