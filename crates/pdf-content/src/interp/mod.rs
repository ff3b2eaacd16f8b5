//! The content-stream interpreter: graphics and text state, Form XObjects and marked
//! content, producing every shown glyph with its position and its bytes in the stream.
//!
//! Fonts are not this crate's business: a [`FontSource`] supplied by the caller turns a
//! font resource into a [`GlyphFont`] (code splitting, widths, Unicode, metrics).

mod marked;
/// Decoding PDF text strings (used for /ActualText).
pub mod marked_text {
    pub use super::marked::{decode_text_string, encode_text_string};
}
pub mod matrix;
mod resources;
mod run;
mod state;
mod text;

use std::ops::Range;
use std::rc::Rc;

use lopdf::{Dictionary, Document, ObjectId};

use crate::error::{Error, Result};
use crate::ops::Op;

/// Which content stream a glyph or op belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StreamId {
    /// The page's `index`-th content stream (in /Contents order).
    PageContent {
        /// Position in the page's /Contents array (0 for a single stream).
        index: usize,
        /// The stream object.
        object_id: ObjectId,
    },
    /// A Form XObject's stream, reached through `Do`.
    Form {
        /// The form's stream object.
        object_id: ObjectId,
    },
}

/// Where a font resource's dictionary lives.
#[derive(Debug, Clone)]
pub enum FontObject {
    /// An indirect font dictionary (the usual case); the id also identifies the font
    /// across pages.
    Reference(ObjectId),
    /// A font dictionary written directly into the /Font resource dictionary.
    Inline(Rc<Dictionary>),
    /// The name is not in the resources. PDFium draws such text in a stock font, so
    /// the [`FontSource`] is still asked and may supply one.
    Missing,
}

impl PartialEq for FontObject {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Reference(a), Self::Reference(b)) => a == b,
            (Self::Inline(a), Self::Inline(b)) => Rc::ptr_eq(a, b) || a == b,
            (Self::Missing, Self::Missing) => true,
            _ => false,
        }
    }
}

/// A font as selected by `Tf`: its resource name and its dictionary.
#[derive(Debug, Clone, PartialEq)]
pub struct FontKey {
    /// The resource name used with `Tf` (without `/`). Shared: every glyph carries its
    /// font's key, and a shared name is a count, not a copy, per glyph.
    pub name: Rc<[u8]>,
    /// The font dictionary.
    pub object: FontObject,
}

impl FontKey {
    /// The font dictionary, for a font loader.
    pub fn dictionary<'a>(&'a self, doc: &'a Document) -> Option<&'a Dictionary> {
        match &self.object {
            FontObject::Reference(id) => doc.get_dictionary(*id).ok(),
            FontObject::Inline(dict) => Some(dict),
            FontObject::Missing => None,
        }
    }
}

/// Supplies fonts to the interpreter (implemented by the engine over `pdf-fonts`).
pub trait FontSource {
    /// The font for `font_key`, as found in the resources owned by `resources_owner`
    /// (the page's first content stream for page resources, else the form). `None`
    /// skips the text shown with it (a [`Warning::FontUnavailable`] is recorded).
    fn font(&mut self, resources_owner: StreamId, font_key: &FontKey) -> Option<Rc<dyn GlyphFont>>;
}

/// What the interpreter needs to know about a loaded font.
pub trait GlyphFont {
    /// The next character code in `bytes` and how many bytes it takes (§9.4.3:
    /// one byte for simple fonts, per the CMap's codespace ranges for Type0).
    fn next_code(&self, bytes: &[u8]) -> (u32, usize);
    /// The Unicode text of `code`, if known.
    fn unicode(&self, code: u32) -> Option<String>;
    /// Horizontal advance: thousandths of text space for ordinary fonts; glyph-space
    /// units for Type 3 fonts (converted with [`GlyphFont::font_matrix`]).
    fn width(&self, code: u32) -> f64;
    /// Vertical writing (Identity-V and other vertical CMaps).
    fn is_vertical(&self) -> bool;
    /// Vertical advance w1 in thousandths of text space (negative: downwards, e.g.
    /// -1000), for vertical fonts.
    fn vertical_advance(&self, code: u32) -> f64;
    /// Ascent, same units as [`GlyphFont::width`].
    fn ascent(&self) -> f64;
    /// Descent (negative), same units as [`GlyphFont::width`].
    fn descent(&self) -> f64;
    /// A Type 3 font (glyphs are content streams; metrics in glyph space).
    fn is_type3(&self) -> bool;
    /// The glyph-to-text-space matrix; only read for Type 3 fonts (§9.6.5).
    fn font_matrix(&self) -> [f64; 6];
}

/// The /ActualText of the marked-content sequence around a glyph (§14.9.4).
#[derive(Debug, Clone, PartialEq)]
pub struct ActualText {
    /// The replacement text, decoded from a PDF text string.
    pub text: String,
    /// Which marked-content sequence on this page it belongs to (counts from 0 in
    /// content order), so glyphs of one sequence can be grouped.
    pub sequence: usize,
    /// This glyph is the first one shown inside that sequence.
    pub first: bool,
}

/// One shown glyph.
#[derive(Debug, Clone, PartialEq)]
pub struct Glyph {
    /// The stream holding the showing op.
    pub stream: StreamId,
    /// Index of the op in that stream's [`ContentStream::ops`].
    pub op_index: usize,
    /// The op's bytes in the stream.
    pub op_span: Range<usize>,
    /// Element index inside a `TJ` array; 0 for `Tj`, `'` and `"`.
    pub string_index: usize,
    /// The code's bytes inside the decoded string (see
    /// [`crate::string_source_ranges`] to map them to stream bytes).
    pub code_span: Range<usize>,
    /// The string token's bytes in the stream.
    pub operand_span: Range<usize>,
    /// The character code.
    pub code: u32,
    /// Its Unicode text, from the font.
    pub unicode: Option<String>,
    /// The font it is shown in.
    pub font: FontKey,
    /// The `Tf` size.
    pub font_size: f64,
    /// Text rendering matrix at the glyph's origin, in page user space (§9.4.4):
    /// `[Tfs·Th 0 0 Tfs 0 Trise] × Tm × CTM`.
    pub trm: [f64; 6],
    /// How far the pen moves after this glyph, in text space, with Tc, Tw and Tz
    /// (x for horizontal writing, y for vertical).
    pub advance: f64,
    /// Glyph box (advance × descent..ascent) in user space: `[x0, y0, x1, y1]`.
    pub bbox: [f64; 4],
    /// `Tr`.
    pub render_mode: i64,
    /// Shown in vertical writing (the pen moves down the text space's y axis).
    pub vertical: bool,
    /// Fill colour approximated as RGB; `None` in colour spaces we do not convert.
    pub fill_rgb: Option<[f64; 3]>,
    /// The innermost marked-content MCID.
    pub mcid: Option<i64>,
    /// The innermost enclosing /ActualText.
    pub actual_text: Option<ActualText>,
}

/// A number inside a `TJ` array.
#[derive(Debug, Clone, PartialEq)]
pub struct Kern {
    /// The stream holding the `TJ`.
    pub stream: StreamId,
    /// Index of the op in that stream's ops.
    pub op_index: usize,
    /// Element index inside the `TJ` array.
    pub element_index: usize,
    /// The number's bytes in the stream.
    pub span: Range<usize>,
    /// The number as written (thousandths of text space).
    pub value: f64,
    /// Resulting pen movement in text space, along the writing direction (negative
    /// for a positive number in horizontal writing).
    pub displacement: f64,
    /// The text rendering matrix before the adjustment.
    pub trm: [f64; 6],
}

/// A content stream of the page and what was parsed from it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentStream {
    /// Which stream.
    pub id: StreamId,
    /// Decoded bytes (what spans index into).
    pub bytes: Vec<u8>,
    /// Parsed operations.
    pub ops: Vec<Op>,
}

/// A recoverable problem met while interpreting; the rest of the page is still read.
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// A stream could not be decoded and was skipped.
    StreamUnreadable {
        /// The stream object.
        object_id: ObjectId,
        /// lopdf's reason.
        reason: String,
    },
    /// Text shown before any `Tf`.
    NoFont {
        /// Where.
        stream: StreamId,
        /// Op index.
        op_index: usize,
    },
    /// The font source had no font for this key; its text was skipped.
    FontUnavailable {
        /// Resource owner.
        stream: StreamId,
        /// Font resource name.
        name: Vec<u8>,
    },
    /// `Do` names an XObject that is not in the resources.
    MissingXObject {
        /// Where.
        stream: StreamId,
        /// Resource name.
        name: Vec<u8>,
    },
    /// A form draws itself (directly or through others); the inner `Do` was skipped.
    FormCycle {
        /// The form.
        object_id: ObjectId,
    },
    /// Forms nested deeper than [`MAX_FORM_DEPTH`]; the inner `Do` was skipped.
    FormTooDeep {
        /// The form.
        object_id: ObjectId,
    },
}

/// Everything read from one page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageGlyphs {
    /// Shown glyphs in content order.
    pub glyphs: Vec<Glyph>,
    /// `TJ` numbers in content order.
    pub kerns: Vec<Kern>,
    /// Every stream read (page streams, then forms as first reached), each once.
    pub streams: Vec<ContentStream>,
    /// Problems that did not stop interpretation.
    pub warnings: Vec<Warning>,
}

impl PageGlyphs {
    /// The stream with this id.
    pub fn stream(&self, id: StreamId) -> Option<&ContentStream> {
        self.streams.iter().find(|s| s.id == id)
    }
}

/// Deepest Form XObject nesting followed (PDFium stops at a similar depth).
pub const MAX_FORM_DEPTH: usize = 12;

/// Largest decoded size of one content stream (decompression-bomb guard).
pub const MAX_STREAM_BYTES: usize = 256 * 1024 * 1024;

/// Interprets the page `page_id` of `doc`: its content streams in /Contents order with
/// state carried across them (§7.8.2), Form XObjects included.
pub fn interpret_page(
    doc: &Document,
    page_id: ObjectId,
    fonts: &mut dyn FontSource,
) -> Result<PageGlyphs> {
    let page = doc
        .get_dictionary(page_id)
        .map_err(|_| Error::NotAPage(page_id))?;
    if page
        .get(b"Type")
        .and_then(lopdf::Object::as_name)
        .is_ok_and(|t| t != b"Page")
    {
        return Err(Error::NotAPage(page_id));
    }
    let mut interpreter = run::Interpreter::new(doc, fonts);
    interpreter.run_page(page_id);
    Ok(interpreter.finish())
}
