/**
 * The closed list of error codes of SPEC.md ("Errors"). Clients switch on `code`, so this
 * list only grows with a new API version; every error the service answers maps onto it.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  quota_exceeded: 402,
  forbidden_watermark_off: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  document_encrypted: 422,
  document_unsupported: 422,
  signed_document: 422,
  edit_failed: 422,
  rate_limited: 429,
  engine_error: 500,
  upstream_error: 502,
  engine_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}

/** Default hints: what the caller can do next. A thrower may give a more precise one. */
export const DEFAULT_HINTS: Record<ErrorCode, string> = {
  invalid_request: 'Fix the request as the message says; see /openapi.json for the exact shape.',
  unauthorized: 'Send Authorization: Bearer <API key>; keys are created on the account page.',
  quota_exceeded: "Buy a credit pack or upgrade the plan; the month's allowance is used up.",
  forbidden_watermark_off: 'Watermark off on flagged documents needs Growth or Scale and accepted terms.',
  not_found: 'Check the identifier; objects of other accounts and of the other key mode are invisible.',
  conflict: 'A request with this Idempotency-Key is still running: wait and retry, do not start another.',
  too_large: "The document exceeds the plan's size or page limit; see GET /v1/limits.",
  document_encrypted: 'Send the open password (source.password, or the multipart password field).',
  document_unsupported: 'Send a PDF the engine can open (not damaged, not a portfolio, not another format).',
  signed_document:
    'The document is digitally signed; pass options.break_signature true to edit it (the edit is appended after the signed revision, a redaction removes the signatures).',
  edit_failed: 'Every edit was rolled back; see failed[] for the reason of each.',
  rate_limited: 'Wait Retry-After seconds, or send the edit with options.async true.',
  engine_error: 'Retry once; if it fails again, report the X-Request-Id.',
  upstream_error: 'The URL could not be fetched: check that it is public, reachable and small enough.',
  engine_timeout: 'Send the request again with options.async true.',
};
