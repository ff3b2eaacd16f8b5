//! The parts of the edit machinery that `form` and `insert` reuse (saving, rendering and
//! comparing pages, page geometry, resources, the font registry), in one place so the
//! modules they live in stay private.

use lopdf::{Dictionary, Document, Object, ObjectId};
use pdf_fonts::registry::Registry;
use pdf_render::raster::Raster;

use super::text::PageGeom;
use crate::Error;

/// The document saved as the edit run saves it (full rewrite, object streams dropped).
pub(crate) fn save_document(doc: &Document) -> Result<Vec<u8>, Error> {
    super::save(doc)
}

/// Renders 1-based `page` of `bytes` at the verification resolution.
pub(crate) fn render_page(bytes: &[u8], page: u32) -> Result<Raster, Error> {
    super::verify::render(bytes, page)
}

/// Pixels that changed between two renders outside `areas` (top-left points).
pub(crate) fn verify_pages(
    before: &Raster,
    after: &Raster,
    areas: &[[f64; 4]],
) -> Result<u64, Error> {
    Ok(super::verify::compare(before, after, areas)?.changed_pixels_outside)
}

/// Before and after PNG crops of `area` (top-left points).
pub(crate) fn preview_pair(before: &Raster, after: &Raster, area: [f64; 4]) -> (Vec<u8>, Vec<u8>) {
    super::verify::previews(before, after, area)
}

/// A box in the page's user space as a top-left display box.
pub(crate) fn display_box(doc: &Document, page_id: ObjectId, user: [f64; 4]) -> [f64; 4] {
    PageGeom::read(doc, page_id).display_box(user)
}

/// An annotation's /Rect on its page as a top-left display box.
pub(crate) fn page_geom_box(
    doc: &Document,
    page_id: ObjectId,
    annot: ObjectId,
) -> Option<[f64; 4]> {
    let d = doc.get_dictionary(annot).ok()?;
    let rect = doc
        .dereference(d.get(b"Rect").ok()?)
        .ok()?
        .1
        .as_array()
        .ok()?;
    let v: Vec<f64> = rect
        .iter()
        .filter_map(|o| match o {
            Object::Integer(i) => Some(*i as f64),
            Object::Real(r) => Some(f64::from(*r)),
            _ => None,
        })
        .collect();
    let [x0, y0, x1, y1] = v.as_slice() else {
        return None;
    };
    Some(display_box(
        doc,
        page_id,
        [x0.min(*x1), y0.min(*y1), x0.max(*x1), y0.max(*y1)],
    ))
}

/// The page's own resource sub-dictionary `key` (e.g. /XObject), direct and writable.
pub(crate) fn page_resources_mut<'a>(
    doc: &'a mut Document,
    page_id: ObjectId,
    key: &[u8],
) -> Result<&'a mut Dictionary, String> {
    super::streams::page_subdict_mut(doc, page_id, key)
}

/// The installed substitute fonts (metric twins and look-alikes).
pub(crate) fn font_registry() -> &'static Registry {
    super::choose::registry()
}

pub(crate) use super::choose::{choose_font, embed_resolved, space_width, Seg};
pub(crate) use super::find::PageModel;
pub(crate) use super::fonts::DocFonts;
pub(crate) use super::streams::{add_font_resource, append_page_stream, hex};
pub(crate) use super::style::{parse_hex, resolve_font};

/// Where `anchor` ends on the page: (line index, byte offset in the line's text).
pub(crate) fn anchor_position(model: &PageModel, anchor: &str) -> Option<(usize, usize)> {
    super::find::anchor_end(model, anchor, false)
}
