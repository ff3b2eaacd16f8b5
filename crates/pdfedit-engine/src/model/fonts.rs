//! The engine's font source for the content interpreter, on top of `pdf-fonts`.
//!
//! Fonts are loaded once per object id and shared between the interpreter (which only needs
//! code splitting, widths and Unicode) and the editor (which also re-encodes text).

use std::collections::HashMap;
use std::rc::Rc;

use lopdf::{Document, ObjectId};
use pdf_content::{FontKey, FontObject, FontSource, GlyphFont, StreamId};
use pdf_fonts::{Font, FontKind};

/// A loaded document font.
pub(crate) struct DocFont {
    pub font: Font,
}

impl GlyphFont for DocFont {
    fn next_code(&self, bytes: &[u8]) -> (u32, usize) {
        self.font.next_code(bytes)
    }
    fn unicode(&self, code: u32) -> Option<String> {
        self.font.unicode(code)
    }
    fn width(&self, code: u32) -> f64 {
        // pdf-fonts gives Type 3 widths already through the FontMatrix (1/1000 em); the
        // interpreter wants them in glyph space, as the font dictionary writes them.
        let w = self.font.width(code);
        let fm = self.font.font_matrix()[0];
        if self.font.kind() == FontKind::Type3 && fm.abs() > 1e-12 {
            w / (fm * 1000.0)
        } else {
            w
        }
    }
    fn is_vertical(&self) -> bool {
        self.font.is_vertical()
    }
    fn vertical_advance(&self, code: u32) -> f64 {
        self.font.vertical_advance(code)
    }
    fn ascent(&self) -> f64 {
        self.font.descriptor().ascent
    }
    fn descent(&self) -> f64 {
        self.font.descriptor().descent
    }
    fn is_type3(&self) -> bool {
        self.font.kind() == FontKind::Type3
    }
    fn font_matrix(&self) -> [f64; 6] {
        self.font.font_matrix()
    }
}

/// Fonts of one document, loaded on demand (a clone shares the fonts loaded so far).
#[derive(Default, Clone)]
pub(crate) struct DocFonts {
    by_id: HashMap<ObjectId, Option<Rc<DocFont>>>,
}

impl DocFonts {
    /// The font behind a glyph's key (indirect fonts cached, inline ones loaded afresh).
    pub fn get(&mut self, doc: &Document, key: &FontKey) -> Option<Rc<DocFont>> {
        match &key.object {
            FontObject::Reference(id) => self.by_id(doc, *id),
            FontObject::Inline(dict) => Font::load(doc, dict)
                .ok()
                .map(|font| Rc::new(DocFont { font })),
            FontObject::Missing => None,
        }
    }

    /// The font stored at `id`.
    pub fn by_id(&mut self, doc: &Document, id: ObjectId) -> Option<Rc<DocFont>> {
        self.by_id
            .entry(id)
            .or_insert_with(|| {
                Font::load_id(doc, id)
                    .ok()
                    .map(|font| Rc::new(DocFont { font }))
            })
            .clone()
    }
}

/// The interpreter's view of [`DocFonts`] for one document.
pub(crate) struct Source<'a> {
    pub doc: &'a Document,
    pub fonts: &'a mut DocFonts,
}

impl FontSource for Source<'_> {
    fn font(&mut self, _owner: StreamId, key: &FontKey) -> Option<Rc<dyn GlyphFont>> {
        let f = self.fonts.get(self.doc, key)?;
        Some(f as Rc<dyn GlyphFont>)
    }
}

/// `font_source` of text drawn in one of the document's own fonts: `exact-embedded` when
/// the font program is in the file, else `exact-declared` (the viewer's substitute).
pub(crate) fn own_font_source(embedded: bool) -> &'static str {
    if embedded {
        "exact-embedded"
    } else {
        "exact-declared"
    }
}

/// Base font name without a subset tag (`ABCDEF+Arial` → `Arial`).
pub(crate) fn strip_subset(name: &str) -> &str {
    match name.split_once('+') {
        Some((tag, rest)) if tag.len() == 6 && tag.bytes().all(|b| b.is_ascii_uppercase()) => rest,
        _ => name,
    }
}
