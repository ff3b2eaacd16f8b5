import type { Principal } from '../kernel/principal.js';

/** The text of the SAMPLE mark (SPEC rule 12; API-DECISIONS "Test and live keys"). */
export const SAMPLE_MARK = 'SAMPLE';

/**
 * Test-mode keys and keyless callers get the SAMPLE mark on every output page; live keys
 * never do. (The 'Edited' watermark of flagged documents is a separate rule.)
 */
export function sampleMarkFor(principal: Pick<Principal, 'mode'> | undefined): string | undefined {
  return !principal || principal.mode === 'test' ? SAMPLE_MARK : undefined;
}
