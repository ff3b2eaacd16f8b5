import { describe, expect, it } from 'vitest';
import { ApiCallError, PdfeditApi } from '../../src/mcp/api.js';

// The CLI and the MCP tools follow only file links of the service they talk to. A service
// on this machine hands out links under its PUBLIC_URL (127.0.0.1 by default) while the
// client may have been given localhost: the same service, so the link is followed.
describe('file links followed by the client', () => {
  const api = new PdfeditApi({ baseUrl: 'http://localhost:8080' });

  it('takes a loopback alias of its own service at its own origin', () => {
    expect(api.sameOrigin('http://127.0.0.1:8080/v1/files/file_x/content?t=1')).toBe(
      'http://localhost:8080/v1/files/file_x/content?t=1',
    );
    expect(
      new PdfeditApi({ baseUrl: 'http://127.0.0.1:8080/' }).sameOrigin('http://[::1]:8080/v1/files/a'),
    ).toBe('http://127.0.0.1:8080/v1/files/a');
  });

  it('refuses another port, another host, another scheme and other routes', () => {
    for (const link of [
      'http://127.0.0.1:8081/v1/files/file_x/content',
      'http://10.0.0.1:8080/v1/files/file_x/content',
      'https://127.0.0.1:8080/v1/files/file_x/content',
      'http://127.0.0.1:8080/v1/webhook-secret',
      'http://169.254.169.254/latest',
    ]) {
      expect(() => api.sameOrigin(link), link).toThrow(ApiCallError);
    }
  });
});
