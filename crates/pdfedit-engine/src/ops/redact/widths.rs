//! Where PDFium puts the glyphs after a removed one. PDFium keeps a font's widths as
//! whole units of 1/1000 em: the `/Widths` of a simple font and the `/W` and `/DW` of a
//! CID font are cut to integers when the font loads (pdfTeX, for one, writes widths such
//! as `525.3`), and Type 3 widths (`/Widths` through the `FontMatrix`) are rounded. It
//! then draws each glyph at the sum of those whole widths. A removed glyph replaced by a
//! `TJ` number of its exact width therefore moves the rest of its line, in PDFium only,
//! by the fractions the whole widths dropped; on a long word in a large size that is a
//! tenth of a point, visible to the verification. Other viewers (and the specification)
//! use the exact widths, so both cannot hold at once when the fractions add up: the
//! redaction keeps the exact number when PDFium's drift stays within
//! [`EXACT_TOLERANCE_PT`], and otherwise keeps the rest where PDFium draws it, the place
//! the verification checks (SPEC rule 1: nothing else on the rendered page may move).
//! Type 3 glyphs have no such tolerance: PDFium draws them (as cached bitmaps) at whole
//! device pixels, so any drift at all can move one of them a whole pixel; a removal of
//! Type 3 glyphs follows PDFium's widths whenever they dropped anything.

use lopdf::{Document, Object};
use pdf_content::Glyph;
use pdf_fonts::FontKind;

use crate::model::fonts::DocFonts;

/// How far (user space, points) the rest of a line may drift from PDFium's place before
/// the removal follows PDFium's whole widths instead of the exact ones.
pub(crate) const EXACT_TOLERANCE_PT: f64 = 0.01;

/// What PDFium's whole width of a glyph drops, and how PDFium places the glyph.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Dropped {
    /// The exact width minus PDFium's whole width, in 1/1000 em (0 when PDFium takes the
    /// width from elsewhere: the font program, standard metrics, vertical `W2`).
    pub fraction: f64,
    /// PDFium draws the glyph at whole device pixels (a Type 3 glyph).
    pub whole_pixels: bool,
}

/// What PDFium's width of glyph `gl` drops from its exact width (see [`Dropped`]).
pub(crate) fn dropped(doc: &Document, fonts: &mut DocFonts, gl: &Glyph) -> Dropped {
    let none = Dropped::default();
    if gl.vertical {
        return none;
    }
    let Some(f) = fonts.get(doc, &gl.font) else {
        return none;
    };
    let font = &f.font;
    let Some(dict) = gl.font.dictionary(doc) else {
        return none;
    };
    let w = font.width(gl.code);
    if !w.is_finite() {
        return none;
    }
    let type3 = font.kind() == FontKind::Type3;
    let whole = match font.kind() {
        FontKind::Type3 => w.round(),
        _ if font.is_composite() => w.trunc(),
        _ if has_widths(doc, dict) => w.trunc(),
        _ => return none,
    };
    Dropped {
        fraction: w - whole,
        whole_pixels: type3,
    }
}

/// Whether a simple font dictionary carries `/Widths` (PDFium uses them, cut to integers).
fn has_widths(doc: &Document, dict: &lopdf::Dictionary) -> bool {
    match dict.get(b"Widths") {
        Ok(Object::Array(a)) => !a.is_empty(),
        Ok(Object::Reference(id)) => {
            matches!(doc.get_object(*id), Ok(Object::Array(a)) if !a.is_empty())
        }
        _ => false,
    }
}

/// Whether a removed run of horizontal glyphs is replaced by PDFium's whole widths rather
/// than the exact ones: `fractions` (1/1000 em) is what PDFium's whole widths dropped over
/// the run, `em` the length of one em along the line in user space, `whole_pixels` whether
/// a glyph of the run is one PDFium draws at whole pixels (then no drift is tolerated).
pub(crate) fn follow_pdfium(fractions: f64, em: f64, whole_pixels: bool) -> bool {
    let drift = (fractions / 1000.0 * em).abs();
    if whole_pixels {
        return drift > 1e-9;
    }
    drift > EXACT_TOLERANCE_PT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_drifts_keep_the_exact_number() {
        // pdfTeX's cmr10 at 10 pt: a word of 8 glyphs dropping 0.3/1000 em each drifts
        // 0.024 pt in PDFium: follow PDFium. One glyph dropping 0.3 drifts 0.003 pt.
        assert!(follow_pdfium(8.0 * 0.3, 10.0, false));
        assert!(!follow_pdfium(0.3, 10.0, false));
        assert!(!follow_pdfium(0.0, 100.0, false));
        assert!(follow_pdfium(-0.5 * 4.0, 12.0, false));
    }

    #[test]
    fn glyphs_drawn_at_whole_pixels_tolerate_no_drift() {
        // A Type 3 run whose rounded widths dropped 0.7/1000 em at 10 pt: 0.007 pt, under
        // the outline tolerance, but enough to push a bitmap glyph over a pixel boundary.
        assert!(!follow_pdfium(0.7, 10.0, false));
        assert!(follow_pdfium(0.7, 10.0, true));
        assert!(!follow_pdfium(0.0, 10.0, true));
    }
}
