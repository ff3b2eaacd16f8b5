//! A page loaded once for `/v1/text`: its size, characters, widgets and the text its
//! annotations draw all come from that one load. Loading a page parses its whole content
//! (most of reading's cost), so asking each through its own [`Document`] call parsed a
//! page up to four times.

use pdfium_render::prelude::*;

use crate::annots::{draws_text_annotations, flattened_chars};
use crate::chars::{chars_of, RawChar};
use crate::document::{page_info_of, page_transform, Document, PageInfo};
use crate::forms::FieldCollector;
use crate::geometry::PageTransform;
use crate::Result;

/// One page as reading needs it (see [`Document::read_page`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PageRead {
    /// The page as displayed.
    pub info: PageInfo,
    /// Its characters, as [`Document::page_chars`] gives them.
    pub chars: Vec<RawChar>,
    /// Whether it has an annotation that may draw text, as
    /// [`Document::has_text_annotations`] says.
    pub text_annotations: bool,
}

/// A page loaded for reading (see [`Document::load_for_reading`]).
pub struct ReadingPage<'d> {
    page: PdfPage<'d>,
    /// The page as displayed, taken at load (flattening rewrites the page's boxes).
    transform: PageTransform,
}

impl Document<'_> {
    /// Page `index` (0-based) as reading needs it, from one load of the page.
    pub fn read_page(&self, index: u32) -> Result<PageRead> {
        let page = self.load_for_reading(index)?;
        Ok(PageRead {
            info: page.info(),
            chars: page.chars()?,
            text_annotations: page.has_text_annotations(),
        })
    }

    /// Loads page `index` (0-based) once for everything reading asks of it.
    pub fn load_for_reading(&self, index: u32) -> Result<ReadingPage<'_>> {
        let page = self.page(index)?;
        let transform = page_transform(&page);
        Ok(ReadingPage { page, transform })
    }
}

impl ReadingPage<'_> {
    /// The page as displayed.
    pub fn info(&self) -> PageInfo {
        page_info_of(&self.page)
    }

    /// Its characters, as [`Document::page_chars`] gives them.
    pub fn chars(&self) -> Result<Vec<RawChar>> {
        chars_of(&self.page, &self.transform)
    }

    /// Whether it has an annotation that may draw text, as
    /// [`Document::has_text_annotations`] says.
    pub fn has_text_annotations(&self) -> bool {
        draws_text_annotations(&self.page)
    }

    /// Adds its form widgets to `fields` (see [`FieldCollector`]); `index` is the page's
    /// 0-based index.
    pub fn add_fields(&self, index: u32, fields: &mut FieldCollector) {
        fields.add_page(index, &self.page);
    }

    /// The characters the page gains when its annotations are flattened, as
    /// [`Document::flattened_annotation_chars`] gives them, given the page's own `content`
    /// characters ([`ReadingPage::chars`]).
    ///
    /// **Flattens the page in the document it was loaded from**, so that document no
    /// longer shows the page as it was (its annotations are gone, its boxes rewritten):
    /// only for a document opened to be read, once every other question about this page
    /// (its characters, widgets, a raster for OCR) is answered. Done in place rather than
    /// in a second copy of the document, the page is not parsed once more before
    /// flattening and its fonts, already loaded by the document, are not loaded again.
    pub fn flattened_annotation_chars(self, content: &[RawChar]) -> Result<Vec<RawChar>> {
        let ReadingPage {
            mut page,
            transform,
        } = self;
        flattened_chars(&mut page, &transform, content)
    }
}
