//! Whether a FreeText annotation's /Contents holds the text, for the case where its
//! appearance could not be opened for editing: such a find is reported in `failed[]`
//! (reason `annotation_text`) instead of `unmatched[]`, since the text is on the page and
//! the caller should know why it stayed.

use lopdf::{Document, Object};
use pdf_content::decode_text_string;

use crate::find::{line_matches, span_boxes, Matcher};
use crate::model::text::PageGeom;
use crate::read::PageText;
use crate::types::Scope;

use super::appearance::{numbers, rect_of};
use super::MAX_ANNOTS_PER_PAGE;

/// Whether a FreeText annotation in `scope` shows text `matcher` finds: on a page in
/// scope, and touching the scope's region and one of its spans (`spans`, the reading
/// `scope.span_ids` name) where it has them.
pub(crate) fn freetext_holds(
    doc: &Document,
    scope: &Scope,
    matcher: &Matcher,
    spans: Option<&[PageText]>,
) -> bool {
    for (number, page_id) in doc.get_pages() {
        if scope.pages.as_ref().is_some_and(|p| !p.contains(&number)) {
            continue;
        }
        if scope.region.as_ref().is_some_and(|r| r.page != number) {
            continue;
        }
        let Ok(page) = doc.get_dictionary(page_id) else {
            continue;
        };
        let annots = match page.get(b"Annots").map(|o| doc.dereference(o)) {
            Ok(Ok((_, Object::Array(a)))) => a,
            _ => continue,
        };
        for a in annots.iter().take(MAX_ANNOTS_PER_PAGE) {
            let Ok((_, Object::Dictionary(d))) = doc.dereference(a) else {
                continue;
            };
            if d.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"FreeText".as_slice()) {
                continue;
            }
            if !touches_scope(doc, page_id, d, scope, number, spans) {
                continue;
            }
            let text = match d.get(b"Contents").map(|o| doc.dereference(o)) {
                Ok(Ok((_, Object::String(s, _)))) => decode_text_string(s),
                _ => continue,
            };
            // Lines of the annotation as the page model reads lines: one space per run.
            let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if !line_matches(matcher, &flat, "").is_empty() {
                return true;
            }
        }
    }
    false
}

/// Whether the annotation `d` on page `number` touches the scope's region and, with
/// `scope.span_ids`, one of those spans (display boxes, top-left points).
fn touches_scope(
    doc: &Document,
    page_id: lopdf::ObjectId,
    d: &lopdf::Dictionary,
    scope: &Scope,
    number: u32,
    spans: Option<&[PageText]>,
) -> bool {
    if scope.region.is_none() && scope.span_ids.is_none() {
        return true;
    }
    let Some(rect) = d.get(b"Rect").ok().and_then(|r| rect_of(&numbers(doc, r))) else {
        return false;
    };
    let shown = PageGeom::read(doc, page_id).display_box(rect);
    let meets =
        |b: [f64; 4]| b[0] < shown[2] && shown[0] < b[2] && b[1] < shown[3] && shown[1] < b[3];
    if scope.region.as_ref().is_some_and(|r| !meets(r.bbox)) {
        return false;
    }
    match (&scope.span_ids, spans) {
        (Some(ids), Some(spans)) => span_boxes(spans, number, ids).into_iter().any(meets),
        (Some(_), None) => false,
        (None, _) => true,
    }
}
