//! The characters PDFium extracts from a page, in API coordinates.

use std::collections::HashMap;
use std::sync::Arc;

use pdfium_render::prelude::*;

use crate::document::{page_transform, Document};
use crate::geometry::PageTransform;
use crate::geometry::Rect;
use crate::{Error, Result};

/// One character of PDFium's page text, in PDFium's order.
#[derive(Debug, Clone, PartialEq)]
pub struct RawChar {
    /// Index in PDFium's page text (stable for the same bytes).
    pub index: u32,
    /// The character, or `None` when PDFium has no Unicode for it.
    pub ch: Option<char>,
    /// PDFium inserted it (a space or line break it inferred); not a glyph on the page.
    pub generated: bool,
    /// Tight glyph box in API coordinates (zero-sized for generated characters).
    pub bbox: Rect,
    /// PDFium says this is a hyphen that breaks a word at the end of a line.
    pub hyphen: bool,
    /// Loose box (font ascent to descent, origin to advance) in API coordinates: the
    /// right measure for gaps between glyphs, which ink boxes exaggerate.
    pub advance_box: Rect,
    /// Origin (baseline start) in API coordinates.
    pub origin: (f32, f32),
    /// Font name as PDFium reports it (may carry a subset tag `ABCDEF+`), shared by the
    /// characters of one text object (a page has hundreds of thousands of characters and
    /// few fonts: a string of its own per character was an allocation each).
    pub font: Arc<str>,
    /// Font size in points, text matrix and CTM applied.
    pub size: f32,
    /// Font weight (400 normal, 700 bold) when known.
    pub weight: Option<u32>,
    /// Font descriptor says italic.
    pub italic: bool,
    /// Font descriptor says fixed pitch.
    pub monospace: bool,
    /// Font descriptor says serif.
    pub serif: bool,
    /// Fill colour as `[r, g, b]`.
    pub color: [u8; 3],
    /// Baseline angle in degrees, counter-clockwise as displayed, in `[0, 360)`.
    pub angle: f32,
    /// Drawn in text render mode 3 or 7 (neither filled nor stroked): an OCR layer's text.
    pub invisible: bool,
}

impl Document<'_> {
    /// The characters of page `index` (0-based) in PDFium's text order.
    pub fn page_chars(&self, index: u32) -> Result<Vec<RawChar>> {
        let page = self.page(index)?;
        let transform = page_transform(&page);
        chars_of(&page, &transform)
    }
}

/// The characters of a loaded page, mapped to API coordinates with `transform`.
///
/// What PDFium reports of a character's font (name, descriptor flags, weight), size, fill
/// colour and render mode belongs to the text object that shows it (`fpdf_text.cpp` reads
/// each from `charinfo.text_object()`), and a text object shows many characters: those are
/// asked once per text object, the rest (Unicode, boxes, origin, matrix) per character.
/// The angle is PDFium's own `atan2(c, a)` of the matrix already fetched. Asked per
/// character with pdfium-render's wrappers this was 17 calls through its lock and two
/// allocations a character, most of the reading of a long document.
pub(crate) fn chars_of(page: &PdfPage, transform: &PageTransform) -> Result<Vec<RawChar>> {
    let text = page
        .text()
        .map_err(|e| Error::pdfium("extracting page text", e))?;
    let chars = text.chars();
    let bindings = page.bindings();
    let mut out = Vec::with_capacity(chars.len());
    let mut objects = ObjectFacts::default();
    for c in chars.iter() {
        let object = c.text_object().ok();
        let facts = match object {
            Some(o) => objects.of(bindings, o, &c),
            None => TextObjectFacts::of(&c, None),
        };
        let generated = c.is_generated().unwrap_or(false);
        let bbox = c
            .tight_bounds()
            .map(|r| transform.pdf_rect(&r))
            .unwrap_or_default();
        let advance_box = c
            .loose_bounds()
            .map(|r| transform.pdf_rect(&r))
            .unwrap_or(bbox);
        let origin = c
            .origin()
            .map(|(x, y)| transform.point(x.value, y.value))
            .unwrap_or((bbox.x0, bbox.y1));
        let matrix = c.matrix().ok();
        out.push(RawChar {
            index: u32::try_from(c.index()).unwrap_or(u32::MAX),
            ch: c.unicode_char(),
            generated,
            hyphen: c.is_hyphen().unwrap_or(false),
            bbox,
            advance_box,
            origin,
            font: facts.font,
            size: effective_size(facts.size, matrix.as_ref()),
            weight: facts.weight,
            italic: facts.italic,
            monospace: facts.monospace,
            serif: facts.serif,
            color: facts.color,
            angle: transform.display_angle_degrees(char_angle(matrix.as_ref())),
            invisible: facts.invisible,
        });
    }
    Ok(out)
}

/// What PDFium reports per text object, kept by the object's handle for one page (the
/// handles stay valid while the page is loaded). Consecutive characters nearly always
/// share their object, so the last one is checked before the map.
#[derive(Default)]
struct ObjectFacts {
    last: Option<(usize, TextObjectFacts)>,
    seen: HashMap<usize, TextObjectFacts>,
}

impl ObjectFacts {
    /// The facts of `object`, the text object of character `c`.
    fn of(
        &mut self,
        bindings: &dyn PdfiumLibraryBindings,
        object: PdfPageTextObject,
        c: &PdfPageTextChar,
    ) -> TextObjectFacts {
        let object = PdfPageObject::Text(object);
        // The handle's address names the object; it is never dereferenced here.
        let key = bindings.get_handle_from_object(&object) as usize;
        if let Some((k, f)) = &self.last {
            if *k == key {
                return f.clone();
            }
        }
        let facts = match (self.seen.get(&key), &object) {
            (Some(f), _) => f.clone(),
            (None, PdfPageObject::Text(text)) => {
                let f = TextObjectFacts::of(c, Some(text));
                self.seen.insert(key, f.clone());
                f
            }
            (None, _) => TextObjectFacts::of(c, None),
        };
        self.last = Some((key, facts.clone()));
        facts
    }
}

/// The facts of one text object, as PDFium reports them for each of its characters.
#[derive(Clone)]
struct TextObjectFacts {
    font: Arc<str>,
    /// Tf size, before the glyph matrix (`FPDFText_GetFontSize`).
    size: f32,
    weight: Option<u32>,
    italic: bool,
    monospace: bool,
    serif: bool,
    color: [u8; 3],
    invisible: bool,
}

impl TextObjectFacts {
    /// Asked of character `c`, whose text object is `object` (`None` when it has none:
    /// then each answer is PDFium's "unknown" one and the render mode is not invisible).
    fn of(c: &PdfPageTextChar, object: Option<&PdfPageTextObject>) -> Self {
        TextObjectFacts {
            font: c.font_name().into(),
            size: c.unscaled_font_size().value,
            weight: c.font_weight().map(weight_value),
            italic: c.font_is_italic(),
            monospace: c.font_is_fixed_pitch(),
            serif: c.font_is_serif(),
            color: c
                .fill_color()
                .map(|k| [k.red(), k.green(), k.blue()])
                .unwrap_or([0, 0, 0]),
            invisible: object.is_some_and(|o| {
                matches!(
                    o.render_mode(),
                    PdfPageTextRenderMode::Invisible | PdfPageTextRenderMode::InvisibleClipping
                )
            }),
        }
    }
}

/// `FPDFText_GetCharAngle` from the character's matrix, as PDFium computes it:
/// `atan2f(c, a)`, turned into `[0, 2π)`; an angle PDFium would report with a negative
/// sign (only `-0`) reads as 0, as pdfium-render's `angle_radians` made it.
fn char_angle(m: Option<&PdfMatrix>) -> f32 {
    let Some(m) = m else {
        return 0.0;
    };
    let mut angle = m.c().atan2(m.a());
    if angle < 0.0 {
        angle += 2.0 * std::f32::consts::PI;
    }
    if angle.is_sign_negative() {
        0.0
    } else {
        angle
    }
}

/// Tf size times the vertical scale of the glyph's matrix. pdfium-render's own scaled size
/// multiplies by the matrix's `d` alone, which is 0 (or negative) for rotated text.
fn effective_size(size: f32, m: Option<&PdfMatrix>) -> f32 {
    match m {
        Some(m) => {
            let scale = m.c().hypot(m.d());
            if scale > 0.0 {
                size * scale
            } else {
                size
            }
        }
        None => size,
    }
}

fn weight_value(w: PdfFontWeight) -> u32 {
    match w {
        PdfFontWeight::Weight100 => 100,
        PdfFontWeight::Weight200 => 200,
        PdfFontWeight::Weight300 => 300,
        PdfFontWeight::Weight400Normal => 400,
        PdfFontWeight::Weight500 => 500,
        PdfFontWeight::Weight600 => 600,
        PdfFontWeight::Weight700Bold => 700,
        PdfFontWeight::Weight800 => 800,
        PdfFontWeight::Weight900 => 900,
        PdfFontWeight::Custom(v) => v,
    }
}
