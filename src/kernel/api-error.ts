import { DEFAULT_HINTS, ERROR_STATUS, type ErrorCode } from './error-codes.js';

/** An error that the service answers with its envelope `{error: {code, message, hint}}`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly hint: string;
  /** Extra members merged into the body beside `error` (for example `failed` of edit_failed). */
  readonly extra: Record<string, unknown> | undefined;
  /** Extra response headers (for example Retry-After). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: {
      hint?: string;
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: opts.cause });
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.hint = opts.hint ?? DEFAULT_HINTS[code];
    this.extra = opts.extra;
    this.headers = opts.headers;
  }

  toBody(): Record<string, unknown> {
    return { error: { code: this.code, message: this.message, hint: this.hint }, ...(this.extra ?? {}) };
  }
}
