import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeOf } from '../../src/cli/user/output.js';
import { ERROR_STATUS, type ErrorCode } from '../../src/kernel/error-codes.js';
import { ApiCallError } from '../../src/mcp/api.js';

describe('exit codes of the user commands, per class of API error', () => {
  it('maps every code of the closed list (and a network failure) onto its documented class', () => {
    const expected: Record<ErrorCode, number> = {
      invalid_request: EXIT.refused,
      unauthorized: EXIT.auth,
      quota_exceeded: EXIT.plan,
      forbidden_watermark_off: EXIT.plan,
      not_found: EXIT.refused,
      conflict: EXIT.refused,
      too_large: EXIT.plan,
      document_encrypted: EXIT.refused,
      document_unsupported: EXIT.refused,
      signed_document: EXIT.refused,
      edit_failed: EXIT.refused,
      rate_limited: EXIT.plan,
      engine_error: EXIT.service,
      upstream_error: EXIT.service,
      engine_timeout: EXIT.service,
    };
    for (const [code, status] of Object.entries(ERROR_STATUS) as [ErrorCode, number][]) {
      expect(exitCodeOf(new ApiCallError(status, code, 'm', 'h')), code).toBe(expected[code]);
    }
    expect(exitCodeOf(new ApiCallError(0, 'network_error', 'm', 'h'))).toBe(EXIT.service);
    expect(new Set(Object.values(EXIT)).size).toBe(Object.keys(EXIT).length);
  });
});
