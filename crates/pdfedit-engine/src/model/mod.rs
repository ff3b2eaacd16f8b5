//! The page model an edit works on: the page's glyphs as our interpreter reads them
//! (`pdf-content`), grouped into lines (`text`), with the page's display geometry; the
//! document's fonts (`fonts`) and its AcroForm field tree (`form`); the text an
//! annotation's appearance draws (`drawn`).

pub(crate) mod drawn;
pub(crate) mod fonts;
pub(crate) mod form;
pub(crate) mod reading;
pub(crate) mod text;

use lopdf::ObjectId;
use pdf_content::PageGlyphs;

use text::{Line, PageGeom};

/// A page read for editing.
#[derive(Clone)]
pub(crate) struct PageModel {
    /// 1-based page number.
    pub number: u32,
    /// The page object.
    pub page_id: ObjectId,
    /// Glyphs and streams.
    pub glyphs: PageGlyphs,
    /// Lines in reading order.
    pub lines: Vec<Line>,
    /// Display geometry.
    pub geom: PageGeom,
}
