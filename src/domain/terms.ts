/**
 * The document-integrity terms (SPEC rule 12). An account that accepted the current
 * version may, on the Growth and Scale plans, send `options.watermark: "off"` on a flagged
 * document. The version is a date: a new text gets a new version, and an acceptance of an
 * older version no longer counts.
 */
export const TERMS_VERSION = '2026-11-25';

/** What the accounts row records (migration 0006_terms). */
export interface TermsAcceptance {
  terms_accepted_at: number | null;
  terms_version: string | null;
}

/** True when the account accepted the terms in force now. */
export function acceptedCurrentTerms(row: TermsAcceptance): boolean {
  return row.terms_accepted_at !== null && row.terms_version === TERMS_VERSION;
}
