/** ISO 8601 UTC to the second, as API-DECISIONS writes times (`2026-11-22T10:00:00Z`). */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
