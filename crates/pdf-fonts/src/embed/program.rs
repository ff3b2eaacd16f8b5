//! Reading the font file that gets embedded: metrics, cmap lookup and subsetting.

use super::{EmbedError, Result};
use ttf_parser::{name_id, Face, GlyphId, Tag};

/// Which outlines the program carries, deciding the CIDFont subtype and font file key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outlines {
    /// `glyf` outlines: CIDFontType2, `/FontFile2`.
    TrueType,
    /// `CFF ` outlines: CIDFontType0, `/FontFile3 /Subtype /OpenType`.
    Cff,
}

/// Font-wide values the FontDescriptor needs, already in 1000-unit glyph space.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// PostScript name without spaces (name ID 6), e.g. `LiberationSans`.
    pub postscript_name: String,
    /// Typographic ascender.
    pub ascent: f32,
    /// Typographic descender (negative).
    pub descent: f32,
    /// Cap height (the ascender when the font does not say).
    pub cap_height: f32,
    /// `[xMin yMin xMax yMax]` over all glyphs.
    pub bbox: [f32; 4],
    /// Degrees counter-clockwise from vertical.
    pub italic_angle: f32,
    /// FontDescriptor /Flags.
    pub flags: i64,
    /// Dominant vertical stem width (estimated from the weight class).
    pub stem_v: f32,
}

/// A parsed font file (face 0 of a collection).
pub struct Program<'a> {
    data: &'a [u8],
    face: Face<'a>,
}

impl<'a> Program<'a> {
    /// Parse OpenType/TrueType bytes.
    pub fn parse(data: &'a [u8]) -> Result<Program<'a>> {
        let face = Face::parse(data, 0).map_err(|e| EmbedError::BadFont(e.to_string()))?;
        if face.tables().glyf.is_none() && face.tables().cff.is_none() {
            return Err(EmbedError::BadFont(
                "no glyf or CFF outlines (CFF2 is not supported)".into(),
            ));
        }
        Ok(Program { data, face })
    }

    /// The outline flavour.
    pub fn outlines(&self) -> Outlines {
        if self.face.tables().glyf.is_some() {
            Outlines::TrueType
        } else {
            Outlines::Cff
        }
    }

    /// The glyph for a character through the font's Unicode cmap; `None` for .notdef.
    pub fn glyph(&self, c: char) -> Option<u16> {
        self.face.glyph_index(c).map(|g| g.0).filter(|&g| g != 0)
    }

    /// Advance width of a glyph in 1000-unit glyph space, rounded.
    pub fn advance(&self, gid: u16) -> f32 {
        let units = self.face.glyph_hor_advance(GlyphId(gid)).unwrap_or(0);
        (self.scale(f32::from(units))).round()
    }

    fn scale(&self, units: f32) -> f32 {
        units * 1000.0 / f32::from(self.face.units_per_em().max(1))
    }

    /// Font-wide metrics for the descriptor.
    pub fn metrics(&self) -> Metrics {
        let f = &self.face;
        let b = f.global_bounding_box();
        let ascent = self.scale(f32::from(f.ascender())).round();
        let italic_angle = f.italic_angle();
        // Flags (PDF 32000 table 121): FixedPitch 1, Serif 2, Symbolic 4, Italic 64. A CID font
        // with Identity encoding uses a non-standard character set, hence Symbolic.
        let mut flags = 4;
        if f.is_monospaced() {
            flags |= 1;
        }
        if self.is_serif() {
            flags |= 2;
        }
        if italic_angle != 0.0 || f.is_italic() || f.is_oblique() {
            flags |= 64;
        }
        Metrics {
            postscript_name: self.postscript_name(),
            ascent,
            descent: self.scale(f32::from(f.descender())).round(),
            cap_height: f
                .capital_height()
                .map_or(ascent, |h| self.scale(f32::from(h)).round()),
            bbox: [
                self.scale(f32::from(b.x_min)).round(),
                self.scale(f32::from(b.y_min)).round(),
                self.scale(f32::from(b.x_max)).round(),
                self.scale(f32::from(b.y_max)).round(),
            ],
            italic_angle,
            flags,
            // No table stores StemV; this is the customary estimate from the weight class
            // (400 → 80, 700 → 147), which viewers only use when synthesising a substitute.
            stem_v: (10.0 + 220.0 * (f32::from(f.weight().to_number()) - 50.0) / 900.0).round(),
        }
    }

    /// OS/2 sFamilyClass: classes 1–5 and 7 are serif designs.
    fn is_serif(&self) -> bool {
        let Some(os2) = self.face.raw_face().table(Tag::from_bytes(b"OS/2")) else {
            return false;
        };
        match os2.get(30) {
            Some(&class) => matches!(class, 1..=5 | 7),
            None => false,
        }
    }

    fn postscript_name(&self) -> String {
        let from_table = self
            .face
            .names()
            .into_iter()
            .filter(|n| n.name_id == name_id::POST_SCRIPT_NAME)
            .find_map(|n| n.to_string());
        let name = from_table.unwrap_or_else(|| "Font".to_string());
        // A PDF name must not carry delimiters or spaces; PostScript names should not either.
        name.chars()
            .filter(|c| c.is_ascii_graphic() && !"()<>[]{}/%#".contains(*c))
            .collect()
    }

    /// A font program holding `.notdef` plus `glyphs` at new IDs 1, 2, … in the given order
    /// (composite components are appended after them by the subsetter).
    pub fn subset(&self, glyphs: &[u16]) -> Result<Vec<u8>> {
        let remapper = subsetter::GlyphRemapper::new_from_glyphs(glyphs);
        // The remapper must give glyph i the ID i + 1, since that ID is the CID we write.
        debug_assert!(glyphs
            .iter()
            .enumerate()
            .all(|(i, &g)| remapper.get(g) == Some(i as u16 + 1)));
        subsetter::subset(self.data, 0, &remapper).map_err(|e| EmbedError::Subset(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SANS: &str = "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf";

    #[test]
    fn liberation_sans_metrics_match_arial() {
        let Ok(data) = std::fs::read(SANS) else {
            eprintln!("skipped: {SANS} not installed");
            return;
        };
        let p = Program::parse(&data).expect("parse");
        assert_eq!(p.outlines(), Outlines::TrueType);
        let gid = |c| p.glyph(c).expect("glyph");
        assert_eq!(p.advance(gid('a')), 556.0);
        assert_eq!(p.advance(gid('W')), 944.0);
        assert_eq!(p.advance(gid(' ')), 278.0);
        let m = p.metrics();
        assert_eq!(m.postscript_name, "LiberationSans");
        assert_eq!(m.flags & 64, 0);
        assert!(m.ascent > 800.0 && m.descent < -150.0);
    }

    #[test]
    fn garbage_is_not_a_font() {
        assert!(matches!(
            Program::parse(b"not a font"),
            Err(EmbedError::BadFont(_))
        ));
    }
}
