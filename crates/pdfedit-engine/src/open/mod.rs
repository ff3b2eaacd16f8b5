//! Opening a document: its facts through PDFium (`open_info`), and for editing, an
//! encrypted document decrypted with the state needed to encrypt the output again
//! (`crypt`).

pub mod budget;
pub(crate) mod crypt;
pub(crate) mod facts_kept;

use pdf_render::DocInfo;

pub use budget::Limits;

use crate::Result;

/// Document facts: pages, encryption, signatures, forms (under the default [`Limits`]).
pub fn open_info(bytes: &[u8], password: Option<&str>) -> Result<DocInfo> {
    open_info_within(bytes, password, &Limits::default())
}

/// Document facts, once the document passed the budget scan of `limits`.
pub fn open_info_within(bytes: &[u8], password: Option<&str>, limits: &Limits) -> Result<DocInfo> {
    let doc = open_checked(bytes, password, limits)?;
    Ok(doc.info()?)
}

/// [`open_info_within`] without the pages' own facts (`pages` empty, see
/// [`pdf_render::Document::facts`]): what an edit needs, at the cost of opening the
/// document, not of loading every page.
pub fn open_facts_within(bytes: &[u8], password: Option<&str>, limits: &Limits) -> Result<DocInfo> {
    Ok(open_facts_loading(bytes, password, limits)?.0)
}

/// [`open_facts_within`], with the document lopdf loaded for the budget scan when the scan
/// ran now (see [`budget::scan_kept_loading`]): an edit parses the bytes once.
pub(crate) fn open_facts_loading(
    bytes: &[u8],
    password: Option<&str>,
    limits: &Limits,
) -> Result<(DocInfo, Option<lopdf::Document>)> {
    let (doc, loaded) = open_checked_loading(bytes, password, limits)?;
    Ok((doc.facts()?, loaded))
}

/// Opens `bytes` in PDFium after [`budget::scan`] passed (now, or earlier in this process:
/// [`budget::scan_kept`]), and only when PDFium counts the pages lopdf lists.
pub(crate) fn open_checked<'a>(
    bytes: &'a [u8],
    password: Option<&str>,
    limits: &Limits,
) -> Result<pdf_render::Document<'a>> {
    Ok(open_checked_loading(bytes, password, limits)?.0)
}

/// [`open_checked`], with the document lopdf loaded for the scan when it ran now.
fn open_checked_loading<'a>(
    bytes: &'a [u8],
    password: Option<&str>,
    limits: &Limits,
) -> Result<(pdf_render::Document<'a>, Option<lopdf::Document>)> {
    let (scan, loaded) = budget::scan_kept_loading(bytes, password, limits)?;
    let doc = pdf_render::Document::open(bytes, password)?;
    budget::check_page_count(&scan, doc.page_count())?;
    Ok((doc, loaded))
}

/// Largest page side an edit accepts, in points: PDF's own limit (ISO 32000-1, Annex C:
/// 14,400 units, 200 inches). Verifying an edit renders the page, and a page a billion
/// points wide cannot be rendered at any useful resolution.
const MAX_PAGE_SIDE: f32 = 14_400.0;

/// Refuses, before an edit, a page tree the two readers do not see alike or a page that
/// cannot be edited, where reading it (PDFium alone) may still work: a page lopdf cannot
/// read as a dictionary (nested past its parser's depth limit, or damaged), a tree node
/// listed as a page (the tree lists itself), a tree whose pages or distinct page objects
/// lopdf and PDFium count differently (a cycle, one page object listed many times), or a
/// page larger than PDF's limit. Each would otherwise fail later, inside PDFium, as an
/// engine error, or bill pages that are not there.
pub(crate) fn check_pages(doc: &lopdf::Document, pdfium_pages: u32) -> Result<()> {
    let unsupported = |m: String| Err(crate::Error::Unsupported(m));
    let pages = doc.get_pages();
    let mut distinct = std::collections::BTreeSet::new();
    for (number, id) in &pages {
        let Ok(dict) = doc.get_dictionary(*id) else {
            return unsupported(format!(
                "page {number} (object {} {}) cannot be read for editing: damaged or nested too deeply",
                id.0, id.1
            ));
        };
        if dict.get(b"Type").and_then(|t| t.as_name()).ok() == Some(b"Pages".as_slice()) {
            return unsupported(format!(
                "the page tree is damaged: page {number} is a page tree node (the tree lists itself)"
            ));
        }
        distinct.insert(*id);
        if let Some((w, h)) = media_box_size(doc, dict) {
            if w > MAX_PAGE_SIDE || h > MAX_PAGE_SIDE {
                return unsupported(format!(
                    "page {number} is {w} x {h} points; an edit takes pages up to {MAX_PAGE_SIDE} points a side"
                ));
            }
        }
    }
    if pages.len() != pdfium_pages as usize || distinct.len() != pdfium_pages as usize {
        return unsupported(format!(
            "the page tree is damaged: it lists {} page(s) of {} distinct object(s) where {pdfium_pages} page(s) are counted",
            pages.len(),
            distinct.len()
        ));
    }
    Ok(())
}

/// Width and height of a page's MediaBox, inherited through /Parent (at most 64 levels).
fn media_box_size(doc: &lopdf::Document, page: &lopdf::Dictionary) -> Option<(f32, f32)> {
    let mut dict = page;
    for _ in 0..64 {
        if let Ok(obj) = dict.get(b"MediaBox") {
            let arr = match obj {
                lopdf::Object::Reference(id) => doc.get_object(*id).ok()?.as_array().ok()?,
                other => other.as_array().ok()?,
            };
            let n: Vec<f32> = arr.iter().filter_map(|o| o.as_float().ok()).collect();
            if n.len() != 4 {
                return None;
            }
            return Some(((n[2] - n[0]).abs(), (n[3] - n[1]).abs()));
        }
        let parent = dict.get(b"Parent").ok()?.as_reference().ok()?;
        dict = doc.get_dictionary(parent).ok()?;
    }
    None
}

/// The stream objects of one entry of an appearance dictionary (`/N`, `/R` or `/D`): the
/// stream itself, or each state's stream of a dictionary of states.
pub(crate) fn appearance_entry_streams(
    doc: &lopdf::Document,
    entry: &lopdf::Object,
) -> Vec<lopdf::ObjectId> {
    use lopdf::Object;
    let states = |d: &lopdf::Dictionary| -> Vec<lopdf::ObjectId> {
        d.iter()
            .filter_map(|(_, s)| s.as_reference().ok())
            .collect()
    };
    match entry {
        Object::Reference(id) => match doc.get_object(*id) {
            Ok(Object::Stream(_)) => vec![*id],
            Ok(Object::Dictionary(d)) => states(d),
            _ => Vec::new(),
        },
        Object::Dictionary(d) => states(d),
        _ => Vec::new(),
    }
}
