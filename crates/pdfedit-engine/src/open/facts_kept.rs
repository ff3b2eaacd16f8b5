//! Facts of documents this process already opened for an edit, kept with their template
//! (`crate::template`, by the input's exact bytes): a stored document edited again and
//! again (`options.template_cache`) was opened in PDFium by every edit for the same facts.
//! Facts are a function of the bytes (and of the password, so only documents opened
//! without one and not encrypted are kept), and they are found only by presenting bytes
//! equal, byte for byte, to the ones they were worked out from. The budget scan (of the
//! caller's limits) and PDFium's page count against lopdf's still run on every call; only
//! PDFium's open is skipped.

use std::sync::atomic::{AtomicU64, Ordering};

use pdf_render::DocInfo;

use super::{budget, open_facts_loading, Limits};
use crate::Result;

static FOUND: AtomicU64 = AtomicU64::new(0);

/// How many times this process's edits took a document's facts from what it kept.
pub fn found() -> u64 {
    FOUND.load(Ordering::Relaxed)
}

/// [`open_facts_loading`], or the facts kept for exactly these bytes (opened without a
/// password, not encrypted) once they pass the budget scan of `limits` again (the
/// document the scan loaded handed back when it ran now). The run keeps what it found
/// with its template (`crate::template::register`).
pub(crate) fn open_facts_kept(
    bytes: &[u8],
    password: Option<&str>,
    limits: &Limits,
) -> Result<(DocInfo, Option<lopdf::Document>)> {
    if password.is_none() {
        if let Some(info) = crate::template::facts_of(bytes) {
            let (scan, loaded) = budget::scan_kept_loading(bytes, None, limits)?;
            budget::check_page_count(&scan, info.page_count)?;
            FOUND.fetch_add(1, Ordering::Relaxed);
            return Ok((info, loaded));
        }
    }
    open_facts_loading(bytes, password, limits)
}
