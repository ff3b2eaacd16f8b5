//! The text an annotation's normal appearance draws, read as the page machinery reads a
//! page (fonts, `/ToUnicode`, glyph ids), for text that is not there as literal strings
//! (a signature appearance drawn in a CID font).

use lopdf::{Dictionary, Document, Object, ObjectId};

use crate::model::fonts::{DocFonts, Source};
use crate::model::text::build_lines;

/// Annotations looked at per page.
const MAX_ANNOTS_PER_PAGE: usize = 10_000;

/// The indirect annotations of page `page_id` that have a normal appearance stream (the
/// stream of the state /AS names when /N holds states), with that stream.
pub(crate) fn page_appearances(doc: &Document, page_id: ObjectId) -> Vec<(ObjectId, ObjectId)> {
    let Ok(page) = doc.get_dictionary(page_id) else {
        return Vec::new();
    };
    let annots = match page.get(b"Annots").map(|o| doc.dereference(o)) {
        Ok(Ok((_, Object::Array(a)))) => a,
        _ => return Vec::new(),
    };
    annots
        .iter()
        .take(MAX_ANNOTS_PER_PAGE)
        .filter_map(|a| a.as_reference().ok())
        .filter_map(|id| Some((id, normal_stream(doc, doc.get_dictionary(id).ok()?)?)))
        .collect()
}

/// The stream an annotation shows in its normal state.
fn normal_stream(doc: &Document, annot: &Dictionary) -> Option<ObjectId> {
    let ap = doc
        .dereference(annot.get(b"AP").ok()?)
        .ok()?
        .1
        .as_dict()
        .ok()?;
    let n = ap.get(b"N").ok()?;
    let id = match doc.dereference(n).ok()? {
        (Some(id), Object::Stream(_)) => id,
        (_, Object::Dictionary(states)) => {
            let state = annot.get(b"AS").ok()?.as_name().ok()?;
            states.get(state).ok()?.as_reference().ok()?
        }
        _ => return None,
    };
    doc.get_object(id).ok()?.as_stream().ok()?;
    Some(id)
}

/// Adds a page object that draws content stream `contents` with `resources` on
/// `media_box`, so that the page machinery can read a form's content (an appearance) as it
/// reads a page. The caller removes it again.
pub(crate) fn scratch_page(
    doc: &mut Document,
    contents: ObjectId,
    resources: Dictionary,
    media_box: Object,
) -> ObjectId {
    let mut page = Dictionary::new();
    page.set("Type", Object::Name(b"Page".to_vec()));
    page.set("MediaBox", media_box);
    page.set("Contents", Object::Reference(contents));
    page.set("Resources", Object::Dictionary(resources));
    doc.add_object(page)
}

/// The lines of text appearance stream `stream` draws. A scratch page drawing the stream
/// with its resources is added to `doc` for the reading and removed again.
pub(crate) fn appearance_lines(
    doc: &mut Document,
    fonts: &mut DocFonts,
    stream: ObjectId,
) -> Vec<String> {
    let Ok(s) = doc.get_object(stream).and_then(Object::as_stream) else {
        return Vec::new();
    };
    let resources = s
        .dict
        .get(b"Resources")
        .ok()
        .and_then(|r| doc.dereference(r).ok())
        .and_then(|(_, r)| r.as_dict().ok().cloned())
        .unwrap_or_default();
    let bbox = s
        .dict
        .get(b"BBox")
        .ok()
        .cloned()
        .unwrap_or_else(|| Object::Array(vec![0.into(), 0.into(), 1000.into(), 1000.into()]));
    let max_id = doc.max_id;
    let scratch = scratch_page(doc, stream, resources, bbox);
    let read = {
        let doc: &Document = doc;
        let mut source = Source { doc, fonts };
        pdf_content::interpret_page(doc, scratch, &mut source)
    };
    doc.objects.remove(&scratch);
    doc.max_id = max_id;
    match read {
        Ok(glyphs) => build_lines(&glyphs.glyphs)
            .into_iter()
            .map(|l| l.text)
            .collect(),
        Err(_) => Vec::new(),
    }
}
