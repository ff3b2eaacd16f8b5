import { ApiCallError } from '../../mcp/api.js';

/**
 * Exit codes of the user commands (documented in `pdfedit --help` and the README):
 * one per class of error, so scripts can tell "fix the key" from "retry later".
 */
export const EXIT = {
  ok: 0,
  /** The command ran but did not fully succeed: an edit partial, nothing found, a job failed. */
  incomplete: 1,
  /** The command line is wrong. */
  usage: 2,
  /** No key, unknown or revoked key (401). */
  auth: 3,
  /** Plan limits: quota (402), watermark (403), too large (413), rate limited (429). */
  plan: 4,
  /** The request or the document was refused: 400, 404, 409, 422. */
  refused: 5,
  /** The service failed or could not be reached: 5xx, network errors. */
  service: 6,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0  done
  1  ran, but not fully: an edit partial or failed, nothing found, a job failed
  2  wrong command line
  3  no key, or the key is unknown or revoked (401)
  4  plan limit: quota (402), watermark (403), too large (413), rate limited (429)
  5  request or document refused (400, 404, 409, 422: encrypted, unsupported, signed, edit_failed)
  6  service error or unreachable (500, 502, 504, network)`;

export function exitCodeOf(err: ApiCallError): number {
  if (err.status === 401) return EXIT.auth;
  if ([402, 403, 413, 429].includes(err.status)) return EXIT.plan;
  if (err.status >= 400 && err.status < 500) return EXIT.refused;
  return EXIT.service;
}

/** A plain text table: columns padded to their widest cell. */
export function table(headers: string[], rows: unknown[][]): string {
  const cells = [
    headers,
    ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c)))),
  ];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Key-value lines, keys padded. */
export function pairs(obj: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(obj).map((k) => k.length));
  return Object.entries(obj)
    .map(
      ([k, v]) =>
        `${k.padEnd(width)}  ${v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
    )
    .join('\n');
}

function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A progress bar on stderr, drawn only when stderr is a terminal (never into a pipe or a
 * file, where it would be noise in a log); redrawn at most every 80 ms.
 */
export class Progress {
  private last = 0;
  private drawn = false;
  constructor(
    private readonly enabled: boolean,
    private readonly write: (s: string) => void,
  ) {}

  update(label: string, done: number, total: number | undefined, unit: 'bytes' | 'count' = 'count'): void {
    if (!this.enabled) return;
    const now = Date.now();
    const complete = total !== undefined && done >= total;
    if (!complete && now - this.last < 80) return;
    this.last = now;
    const width = 30;
    const share = total ? Math.min(1, done / total) : 0;
    const filled = Math.round(share * width);
    const bar = total
      ? `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(share * 100)).padStart(3)}%`
      : '[working]';
    const amount =
      unit === 'bytes'
        ? `${size(done)}${total ? ` / ${size(total)}` : ''}`
        : `${done}${total !== undefined ? `/${total}` : ''}`;
    this.write(`\r\x1b[2K${label} ${bar} ${amount}`);
    this.drawn = true;
  }

  /** Ends the bar's line (if one was drawn). */
  done(): void {
    if (this.drawn) this.write('\n');
    this.drawn = false;
    this.last = 0;
  }
}

export { ApiCallError };
