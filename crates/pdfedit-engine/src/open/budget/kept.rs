//! Scans this process already passed, kept by content: the service opens a document (a
//! scan) before it reads or previews it (another scan of the same bytes), and a client
//! reads the same upload again and again. The scan is a function of the bytes, the
//! password and the limits, so a pass is kept under the SHA-256 of the three and the
//! next call with the same three skips the scan (on a 2-page, 1.2 MB statement the scan
//! was a third of reading it). Refusals are not kept: they are worked out each time.

use std::collections::VecDeque;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use lopdf::Document;

use super::{scan_loading, Limits, Scan};
use crate::Result;

/// Passes kept per process; the oldest goes first.
const KEPT: usize = 64;

static PASSED: Mutex<VecDeque<([u8; 32], Scan)>> = Mutex::new(VecDeque::new());

/// [`scan`], or the scan this process already passed for the same bytes, password and
/// limits.
pub fn scan_kept(bytes: &[u8], password: Option<&str>, limits: &Limits) -> Result<Scan> {
    Ok(scan_kept_loading(bytes, password, limits)?.0)
}

/// [`scan_kept`], with the document the scan loaded when it ran now (`None` when the scan
/// was kept, or lopdf could not load the file), so that a caller who needs the parsed
/// document does not parse the bytes again.
pub(crate) fn scan_kept_loading(
    bytes: &[u8],
    password: Option<&str>,
    limits: &Limits,
) -> Result<(Scan, Option<Document>)> {
    let key = key_of(bytes, password, limits);
    if let Some(found) = passed().iter().find(|(k, _)| *k == key) {
        return Ok((found.1, None));
    }
    let (fresh, loaded) = scan_loading(bytes, password, limits)?;
    let mut kept = passed();
    if !kept.iter().any(|(k, _)| *k == key) {
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back((key, fresh));
    }
    Ok((fresh, loaded))
}

/// [`scan_kept`], saying whether the scan was kept (`true`) or run now.
#[cfg(test)]
pub(super) fn scan_or_kept(
    bytes: &[u8],
    password: Option<&str>,
    limits: &Limits,
) -> Result<(Scan, bool)> {
    let key = key_of(bytes, password, limits);
    let kept = passed().iter().any(|(k, _)| *k == key);
    Ok((scan_kept(bytes, password, limits)?, kept))
}

/// The list, also after a thread panicked holding it (it is only ever pushed to and
/// popped whole entries, so it stays consistent).
fn passed() -> std::sync::MutexGuard<'static, VecDeque<([u8; 32], Scan)>> {
    PASSED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The fixed-width limits first, then the password with its length, then the bytes: no
/// two different triples hash the same input.
fn key_of(bytes: &[u8], password: Option<&str>, limits: &Limits) -> [u8; 32] {
    let Limits {
        stream_bytes,
        document_bytes,
        page_operators,
        form_depth,
        form_draws,
        page_side,
    } = *limits;
    let mut h = Sha256::new();
    for v in [
        stream_bytes,
        document_bytes,
        page_operators,
        u64::from(form_depth),
        form_draws,
        page_side,
    ] {
        h.update(v.to_le_bytes());
    }
    match password {
        None => h.update([0]),
        Some(p) => {
            h.update([1]);
            h.update((p.len() as u64).to_le_bytes());
            h.update(p.as_bytes());
        }
    }
    h.update(bytes);
    h.finalize().into()
}
