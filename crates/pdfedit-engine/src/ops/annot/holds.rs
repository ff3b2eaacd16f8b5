//! Whether a FreeText annotation's /Contents holds the text, for the case where its
//! appearance could not be opened for editing: such a find is reported in `failed[]`
//! (reason `annotation_text`) instead of `unmatched[]`, since the text is on the page and
//! the caller should know why it stayed.

use lopdf::{Document, Object};
use pdf_content::decode_text_string;

use crate::find::{line_matches, Matcher};
use crate::types::Scope;

use super::MAX_ANNOTS_PER_PAGE;

/// Whether a FreeText annotation on a page in `scope` shows text `matcher` finds.
pub(crate) fn freetext_holds(doc: &Document, scope: &Scope, matcher: &Matcher) -> bool {
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
