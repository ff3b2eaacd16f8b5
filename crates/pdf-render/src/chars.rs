//! The characters PDFium extracts from a page, in API coordinates.

use std::collections::HashMap;

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
    /// Font name as PDFium reports it (may carry a subset tag `ABCDEF+`).
    pub font: String,
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
pub(crate) fn chars_of(page: &PdfPage, transform: &PageTransform) -> Result<Vec<RawChar>> {
    {
        let text = page
            .text()
            .map_err(|e| Error::pdfium("extracting page text", e))?;
        let chars = text.chars();
        let mut out = Vec::with_capacity(chars.len());
        // What PDFium says of a character's font comes from its font descriptor, the same for
        // every character of that font; asked per character it is seven calls (each flag
        // re-reads the name), a twelfth of a 15-page document's reading. Kept per font name
        // on this page; characters of a font without a name are asked each time.
        let mut fonts: HashMap<String, FontFacts> = HashMap::new();
        for c in chars.iter() {
            let font = c.font_name();
            let facts = match fonts.get(&font) {
                Some(f) => *f,
                None => {
                    let f = FontFacts {
                        weight: c.font_weight().map(weight_value),
                        italic: c.font_is_italic(),
                        monospace: c.font_is_fixed_pitch(),
                        serif: c.font_is_serif(),
                    };
                    if !font.is_empty() {
                        fonts.insert(font.clone(), f);
                    }
                    f
                }
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
            let color = c
                .fill_color()
                .map(|k| [k.red(), k.green(), k.blue()])
                .unwrap_or([0, 0, 0]);
            let angle = c
                .angle_radians()
                .map(|a| transform.display_angle_degrees(a))
                .unwrap_or(0.0);
            out.push(RawChar {
                index: u32::try_from(c.index()).unwrap_or(u32::MAX),
                ch: c.unicode_char(),
                generated,
                hyphen: c.is_hyphen().unwrap_or(false),
                bbox,
                advance_box,
                origin,
                font,
                size: effective_size(&c),
                weight: facts.weight,
                italic: facts.italic,
                monospace: facts.monospace,
                serif: facts.serif,
                color,
                angle,
                invisible: matches!(
                    c.render_mode(),
                    Ok(PdfPageTextRenderMode::Invisible | PdfPageTextRenderMode::InvisibleClipping)
                ),
            });
        }
        Ok(out)
    }
}

/// The font descriptor's facts of one font, as PDFium reports them for its characters.
#[derive(Clone, Copy)]
struct FontFacts {
    weight: Option<u32>,
    italic: bool,
    monospace: bool,
    serif: bool,
}

/// Tf size times the vertical scale of the glyph's matrix. pdfium-render's own scaled size
/// multiplies by the matrix's `d` alone, which is 0 (or negative) for rotated text.
fn effective_size(c: &PdfPageTextChar) -> f32 {
    let size = c.unscaled_font_size().value;
    match c.matrix() {
        Ok(m) => {
            let scale = m.c().hypot(m.d());
            if scale > 0.0 {
                size * scale
            } else {
                size
            }
        }
        Err(_) => size,
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
