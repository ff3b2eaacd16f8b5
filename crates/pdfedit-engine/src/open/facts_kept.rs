//! Facts of documents this process already opened for an edit, kept by their exact bytes:
//! a stored document edited again and again (`options.template_cache`) was opened in
//! PDFium by every edit for the same facts. Facts are a function of the bytes (and of the
//! password, so only documents opened without one and not encrypted are kept), and an
//! entry is found only by presenting bytes equal, byte for byte, to the ones it was
//! worked out from. The budget scan (of the caller's limits) and PDFium's page count
//! against lopdf's still run on every call; only PDFium's open is skipped.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use pdf_render::DocInfo;

use super::{budget, open_facts_within, Limits};
use crate::Result;

/// Documents kept at once; the oldest goes first.
const KEPT: usize = 4;
/// Bytes of documents kept at once; a larger document is not kept.
const KEPT_BYTES: usize = 32 << 20;

static KEPT_FACTS: Mutex<VecDeque<(Vec<u8>, DocInfo)>> = Mutex::new(VecDeque::new());
static FOUND: AtomicU64 = AtomicU64::new(0);

/// How many times this process's edits took a document's facts from what it kept.
pub fn found() -> u64 {
    FOUND.load(Ordering::Relaxed)
}

fn kept() -> std::sync::MutexGuard<'static, VecDeque<(Vec<u8>, DocInfo)>> {
    KEPT_FACTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`open_facts_within`], or the facts kept for exactly these bytes (opened without a
/// password, not encrypted) once they pass the budget scan of `limits` again.
pub(crate) fn open_facts_kept(
    bytes: &[u8],
    password: Option<&str>,
    limits: &Limits,
) -> Result<DocInfo> {
    if password.is_none() {
        let found = kept()
            .iter()
            .find(|(b, _)| b.len() == bytes.len() && b.as_slice() == bytes)
            .map(|(_, info)| info.clone());
        if let Some(info) = found {
            let scan = budget::scan_kept(bytes, None, limits)?;
            budget::check_page_count(&scan, info.page_count)?;
            FOUND.fetch_add(1, Ordering::Relaxed);
            return Ok(info);
        }
    }
    let info = open_facts_within(bytes, password, limits)?;
    if password.is_none() && !info.encrypted && bytes.len() <= KEPT_BYTES / KEPT {
        let mut kept = kept();
        if !kept.iter().any(|(b, _)| b.as_slice() == bytes) {
            if kept.len() == KEPT {
                kept.pop_front();
            }
            kept.push_back((bytes.to_vec(), info.clone()));
        }
    }
    Ok(info)
}
