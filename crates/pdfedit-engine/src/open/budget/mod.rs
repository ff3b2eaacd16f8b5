//! Budgets a document cannot escape (issue 21 item 1), checked before PDFium sees the
//! bytes: PDFium cannot be patched, and it decompresses, parses every operator of a page
//! and expands every Form XObject it draws as soon as a page is loaded.
//!
//! Two passes, each cheap on an ordinary document:
//! - **structure** (lopdf): every page's content streams and the forms, annotation
//!   appearances and tiling patterns they draw are decoded once, under the byte budget,
//!   and tokenised to count operators; forms are costed once each (memoised) and their
//!   draws multiplied through the nesting, so 20 levels of "draw the next form twice" are
//!   refused without expanding a million draws. The page tree must list distinct page
//!   objects: a tree that lists itself or one page many times is read differently by
//!   PDFium and lopdf.
//! - **bytes** (the raw file, no parser): every `stream … endstream` in the file, whatever
//!   object or revision it belongs to and whether or not lopdf could load the file. A
//!   stream's decoded size is bounded from its filters (deflate expands at most 1032:1);
//!   only the streams whose bound does not already fit are decoded, streaming and counted,
//!   never held, and never twice (the content streams measured by the structure pass are
//!   skipped).
//!
//! A refusal is [`Error::Unsupported`] whose message starts with `limit <name>:`, so the
//! service can name the limit in its hint.

mod bytes;
mod decoders;
mod kept;
mod structure;

use std::collections::HashSet;

use lopdf::{Document, LoadOptions};

#[cfg(test)]
use bytes::*;
use bytes::{decrypted_streams, find_streams, raw_bytes, RawStream};
#[cfg(test)]
use decoders::*;
pub use kept::scan_kept;
pub(crate) use kept::scan_kept_loading;
use structure::structure;

use crate::{Error, Result};

/// What one call may cost. The defaults are the paid plans'; the service passes tighter
/// ones for keyless and free callers (src/billing/plans.ts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Decoded bytes of one stream.
    pub stream_bytes: u64,
    /// Decoded bytes of all the streams of the document together.
    pub document_bytes: u64,
    /// Operators one page executes, counting those of every form it draws as often as
    /// it draws them.
    pub page_operators: u64,
    /// How deep Form XObjects may nest (a page drawing a form is depth 1).
    pub form_depth: u32,
    /// Form XObjects one page draws, nested draws included.
    pub form_draws: u64,
    /// Largest side of a page's MediaBox and CropBox, in default user space units times
    /// the page's `/UserUnit` (the same for every plan: see [`PAGE_SIDE`]).
    pub page_side: u64,
}

/// The default largest page side: ten times ISO 32000-1 Annex C's 14,400 units (200
/// inches), so a CAD drawing larger than a viewer's limit still reads; about 50 m. A page
/// of a billion units is no drawing: PDFium's allocations for it fail under the engine's
/// address-space ceiling, which leaves pdfium-render's lock held and its process hanging
/// until the wall-time budget ends it.
pub const PAGE_SIDE: u64 = 144_000;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            stream_bytes: 512 << 20,
            document_bytes: 2 << 30,
            page_operators: 1_000_000,
            form_depth: 12,
            form_draws: 20_000,
            page_side: PAGE_SIDE,
        }
    }
}

/// What the scan learnt: lopdf's page count (`None` when lopdf cannot load the file), to
/// compare with PDFium's, and what the document costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scan {
    /// Pages lopdf lists.
    pub lopdf_pages: Option<usize>,
    /// The most operators one page executes.
    pub page_operators: u64,
    /// The deepest form nesting of a page.
    pub form_depth: u32,
    /// The most form draws of one page.
    pub form_draws: u64,
    /// Decoded bytes counted (measured, or bounded from the filters).
    pub decoded_bytes: u64,
    /// Streams the bytes pass had to decode (their bound did not settle them).
    pub streams_decoded: usize,
}

fn refuse<T>(limit: &str, message: String) -> Result<T> {
    Err(Error::Unsupported(format!("limit {limit}: {message}")))
}

/// Checks `bytes` against `limits` before any PDFium call.
pub fn scan(bytes: &[u8], password: Option<&str>, limits: &Limits) -> Result<Scan> {
    Ok(scan_loading(bytes, password, limits)?.0)
}

/// [`scan`], also handing back the document lopdf loaded for it (`None` when lopdf could
/// not load the file): the scan only reads it, so an edit that follows edits this one
/// rather than parsing the same bytes a second time.
pub(crate) fn scan_loading(
    bytes: &[u8],
    password: Option<&str>,
    limits: &Limits,
) -> Result<(Scan, Option<Document>)> {
    let mut measured = Measured::default();
    let mut out = Scan::default();
    let options = LoadOptions::with_password(password.unwrap_or(""));
    let loaded = Document::load_mem_with_options(bytes, options)
        .ok()
        .or_else(|| {
            // An encrypted file whose trailer lopdf reads only once patched (see
            // `crypt::open_encrypted`): the patch is appended, so stream offsets stay.
            bytes::find(bytes, b"/Encrypt")?;
            crate::open::crypt::open_encrypted(bytes, password.unwrap_or("")).map(|(d, _)| d)
        });
    let streams = find_streams(bytes);
    if let Some(doc) = &loaded {
        out.lopdf_pages = Some(structure(doc, limits, &mut measured, &mut out)?);
        if doc.encryption_state.is_some() {
            out.streams_decoded = decrypted_streams(doc, limits, &mut measured)?;
        }
        measured.locate(doc, &streams);
    }
    out.streams_decoded += raw_bytes(bytes, streams, limits, &mut measured)?;
    out.decoded_bytes = measured.total;
    Ok((out, loaded))
}

/// PDFium's page count must be lopdf's: otherwise reading, editing and billing would each
/// see a different document.
pub fn check_page_count(scan: &Scan, pdfium_pages: u32) -> Result<()> {
    match scan.lopdf_pages {
        Some(n) if n != pdfium_pages as usize => refuse(
            "page_tree",
            format!(
                "the page tree is damaged: it lists {n} page(s) where {pdfium_pages} are counted; the two readers must agree"
            ),
        ),
        _ => Ok(()),
    }
}

/// Streams counted by the structure pass (the objects, then the file offsets of their
/// data), and the decoded bytes counted so far.
#[derive(Default)]
struct Measured {
    ids: HashSet<lopdf::ObjectId>,
    at: HashSet<usize>,
    total: u64,
}

impl Measured {
    /// The file offsets of the data of the objects counted, so that the bytes pass skips
    /// them: lopdf keeps a stream's offset only when its `/Length` is indirect; otherwise
    /// the object's cross-reference offset is followed to the first stream after it.
    fn locate(&mut self, doc: &Document, streams: &[RawStream]) {
        let starts: Vec<usize> = streams.iter().map(|s| s.data.start).collect();
        for id in &self.ids {
            if let Ok(lopdf::Object::Stream(s)) = doc.get_object(*id) {
                if let Some(at) = s.start_position {
                    self.at.insert(at);
                    continue;
                }
            }
            let Some(lopdf::xref::XrefEntry::Normal { offset, generation }) =
                doc.reference_table.get(id.0)
            else {
                continue;
            };
            if *generation != id.1 {
                continue;
            }
            let offset = *offset as usize;
            let i = starts.partition_point(|&s| s <= offset);
            if let Some(&at) = starts.get(i) {
                self.at.insert(at);
            }
        }
    }

    fn add(&mut self, n: u64, limits: &Limits) -> Result<()> {
        self.total = self.total.saturating_add(n);
        if self.total > limits.document_bytes {
            return refuse(
                "document_bytes",
                format!(
                    "the document's streams decode to more than {} bytes",
                    limits.document_bytes
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
