//! Font descriptor values and what we infer from a font's name.

use lopdf::{Dictionary, Document};

use crate::obj;

/// The `/Flags` bits of a font descriptor (PDF 32000 Table 121).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FontFlags(pub u32);

impl FontFlags {
    /// All glyphs have the same width.
    pub fn fixed_pitch(self) -> bool {
        self.0 & 1 != 0
    }
    /// Glyphs have serifs.
    pub fn serif(self) -> bool {
        self.0 & (1 << 1) != 0
    }
    /// The font uses glyphs outside the Standard Latin set (its encoding is its own).
    pub fn symbolic(self) -> bool {
        self.0 & (1 << 2) != 0
    }
    /// Glyphs resemble cursive handwriting.
    pub fn script(self) -> bool {
        self.0 & (1 << 3) != 0
    }
    /// The font uses the Standard Latin character set.
    pub fn nonsymbolic(self) -> bool {
        self.0 & (1 << 5) != 0
    }
    /// Glyphs have dominant slanted strokes.
    pub fn italic(self) -> bool {
        self.0 & (1 << 6) != 0
    }
    /// No lowercase letters.
    pub fn all_cap(self) -> bool {
        self.0 & (1 << 16) != 0
    }
    /// Lowercase letters are small capitals.
    pub fn small_cap(self) -> bool {
        self.0 & (1 << 17) != 0
    }
    /// Bold glyphs should be painted bolder at small sizes.
    pub fn force_bold(self) -> bool {
        self.0 & (1 << 18) != 0
    }
}

/// Metrics of a font descriptor, in glyph space (1/1000 em). Absent entries are 0 (and the
/// bbox all zeros); Type3 fonts take the bbox from the font dictionary.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Descriptor {
    /// `/Ascent`.
    pub ascent: f64,
    /// `/Descent` (negative below the baseline).
    pub descent: f64,
    /// `/CapHeight`.
    pub cap_height: f64,
    /// `/XHeight`.
    pub x_height: f64,
    /// `/ItalicAngle` in degrees, counter-clockwise from vertical.
    pub italic_angle: f64,
    /// `/StemV`.
    pub stem_v: f64,
    /// `/Flags`.
    pub flags: FontFlags,
    /// `/FontBBox` as `[llx, lly, urx, ury]`.
    pub bbox: [f64; 4],
    /// `/MissingWidth`.
    pub missing_width: f64,
    /// `/FontWeight` (100..900) if given.
    pub weight: Option<f64>,
}

impl Descriptor {
    /// Reads a `/FontDescriptor` dictionary.
    pub(crate) fn read(doc: &Document, d: &Dictionary) -> Self {
        let n = |k: &[u8]| obj::num(doc, d, k).unwrap_or(0.0);
        Self {
            ascent: n(b"Ascent"),
            descent: n(b"Descent"),
            cap_height: n(b"CapHeight"),
            x_height: n(b"XHeight"),
            italic_angle: n(b"ItalicAngle"),
            stem_v: n(b"StemV"),
            flags: FontFlags(obj::num(doc, d, b"Flags").unwrap_or(0.0) as i64 as u32),
            bbox: read_bbox(doc, d, b"FontBBox"),
            missing_width: n(b"MissingWidth"),
            weight: obj::num(doc, d, b"FontWeight"),
        }
    }
}

pub(crate) fn read_bbox(doc: &Document, d: &Dictionary, key: &[u8]) -> [f64; 4] {
    match obj::nums(doc, d, key).as_deref() {
        Some([a, b, c, e, ..]) => [a.min(*c), b.min(*e), a.max(*c), b.max(*e)],
        _ => [0.0; 4],
    }
}

/// Bold and italic, as far as name and flags tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FontStyle {
    /// Bold (or heavier).
    pub bold: bool,
    /// Italic or oblique.
    pub italic: bool,
}

/// `ABCDEF+Name` → (`Some("ABCDEF")`, `Name`).
pub(crate) fn split_subset_tag(base: &str) -> (Option<&str>, &str) {
    match base.split_once('+') {
        Some((tag, rest)) if tag.len() == 6 && tag.bytes().all(|b| b.is_ascii_uppercase()) => {
            (Some(tag), rest)
        }
        _ => (None, base),
    }
}

/// Family from a PostScript-style name: `Calibri-Bold` → `Calibri`, `Arial,BoldItalic` →
/// `Arial`, `TimesNewRomanPS-ItalicMT` → `TimesNewRomanPS`.
pub(crate) fn family_of(base: &str) -> String {
    let (_, name) = split_subset_tag(base);
    let cut = name.find([',', '-']).unwrap_or(name.len());
    let fam = &name[..cut];
    let fam = fam
        .strip_suffix("MT")
        .filter(|f| !f.is_empty())
        .unwrap_or(fam);
    fam.to_string()
}

/// Style from the name's style part and the descriptor, the name winning when explicit:
/// many producers leave `/Flags` at 32 for bold fonts, while the name rarely lies.
pub(crate) fn style_of(base: &str, d: &Descriptor) -> FontStyle {
    let (_, name) = split_subset_tag(base);
    let lower = name.to_ascii_lowercase();
    let style_part = lower.find([',', '-']).map_or("", |i| &lower[i..]);
    let bold_words = [
        "bold",
        "black",
        "heavy",
        "semibold",
        "demi",
        "extrabold",
        "ultra",
    ];
    // URW's abbreviation of its bold weight (NimbusRomNo9L-Medi), not "Medium".
    let urw_medi = style_part.starts_with("-medi") && !style_part.starts_with("-medium");
    let bold = bold_words.iter().any(|w| style_part.contains(w))
        || urw_medi
        || d.flags.force_bold()
        || d.weight.is_some_and(|w| w >= 600.0)
        || (style_part.is_empty() && lower.contains("bold"));
    let italic = style_part.contains("italic")
        || style_part.contains("oblique")
        || d.flags.italic()
        || d.italic_angle.abs() > 0.5
        || (style_part.is_empty() && (lower.contains("italic") || lower.contains("oblique")));
    FontStyle { bold, italic }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            split_subset_tag("ABCDEF+Calibri-Bold"),
            (Some("ABCDEF"), "Calibri-Bold")
        );
        assert_eq!(split_subset_tag("Abcdef+X"), (None, "Abcdef+X"));
        assert_eq!(family_of("ABCDEF+Calibri-Bold"), "Calibri");
        assert_eq!(family_of("Arial,BoldItalic"), "Arial");
        assert_eq!(family_of("ArialMT"), "Arial");
        let s = style_of("ABCDEF+Calibri-BoldItalic", &Descriptor::default());
        assert!(s.bold && s.italic);
        assert_eq!(
            style_of("Helvetica", &Descriptor::default()),
            FontStyle::default()
        );
        let flagged = Descriptor {
            flags: FontFlags(1 << 6),
            ..Descriptor::default()
        };
        assert!(style_of("X", &flagged).italic);
        // URW's bold Times clone that pdfTeX embeds; a Medium weight elsewhere is not bold.
        assert!(style_of("TACTGM+NimbusRomNo9L-Medi", &Descriptor::default()).bold);
        assert!(!style_of("Roboto-Medium", &Descriptor::default()).bold);
    }
}
