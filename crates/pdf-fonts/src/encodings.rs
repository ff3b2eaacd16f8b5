//! The base encodings of PDF 32000 Annex D, plus the built-in encodings of Symbol and
//! ZapfDingbats.
//!
//! Tables are kept as Unicode values (one `u16` per code, `0` = undefined) because that is what
//! text extraction needs; glyph names, needed to look glyphs up in Type1/CFF programs, are the
//! AGLFN names of those characters with the few places where fonts use another name fixed up.
//! MacExpertEncoding has no Unicode for most of its glyphs (old-style figures, small capitals),
//! so it is the one table kept as names, and only its commonly used part is listed.

use std::borrow::Cow;

/// A named base encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseEncoding {
    /// Adobe StandardEncoding, the default of Type1 programs.
    Standard,
    /// WinAnsiEncoding (Windows code page 1252).
    WinAnsi,
    /// MacRomanEncoding.
    MacRoman,
    /// MacExpertEncoding (expert fonts: small capitals, old-style figures).
    MacExpert,
    /// The built-in encoding of the Symbol font.
    Symbol,
    /// The built-in encoding of the ZapfDingbats font.
    ZapfDingbats,
}

impl BaseEncoding {
    /// The encoding named by a PDF `/Encoding` or `/BaseEncoding` name.
    pub fn from_pdf_name(name: &[u8]) -> Option<Self> {
        match name {
            b"StandardEncoding" => Some(Self::Standard),
            b"WinAnsiEncoding" => Some(Self::WinAnsi),
            b"MacRomanEncoding" => Some(Self::MacRoman),
            b"MacExpertEncoding" => Some(Self::MacExpert),
            _ => None,
        }
    }

    /// Unicode of a code, if the encoding defines one.
    pub fn unicode(self, code: u8) -> Option<char> {
        let v = match self {
            Self::Standard => latin(code, STANDARD_HIGH, true),
            Self::WinAnsi => latin(code, WIN_ANSI_HIGH, false),
            Self::MacRoman => latin(code, MAC_ROMAN_HIGH, false),
            Self::Symbol => symbol(code),
            Self::ZapfDingbats => zapf(code),
            Self::MacExpert => {
                return self
                    .glyph_name(code)
                    .and_then(|n| crate::agl::name_to_unicode(&n)?.chars().next())
            }
        };
        (v != 0).then(|| char::from_u32(u32::from(v))).flatten()
    }

    /// Glyph name of a code, if the encoding defines one.
    pub fn glyph_name(self, code: u8) -> Option<Cow<'static, str>> {
        match (self, code) {
            (Self::MacExpert, _) => mac_expert(code).map(Cow::Borrowed),
            // Fonts name these glyphs after their Latin-1 role, not their Unicode code point.
            (Self::WinAnsi, 0xA0) | (Self::MacRoman, 0xCA) => Some(Cow::Borrowed("space")),
            (Self::WinAnsi, 0xAD) => Some(Cow::Borrowed("hyphen")),
            (Self::Symbol, 0x44) => Some(Cow::Borrowed("Delta")),
            (Self::Symbol, 0x57) => Some(Cow::Borrowed("Omega")),
            (Self::Symbol, 0x6D) => Some(Cow::Borrowed("mu")),
            // ZapfDingbats glyphs are named a1..a191 in an order unrelated to the codes; we
            // do not need them (the font is never subset-embedded under those names in practice).
            (Self::ZapfDingbats, _) => None,
            _ => self
                .unicode(code)
                .map(|c| Cow::Owned(crate::agl::name_for_char(c))),
        }
    }
}

/// 0x20..=0x7E as ASCII (StandardEncoding has curly quotes at 0x27 and 0x60), then the table
/// for 0x80..=0xFF.
fn latin(code: u8, high: &[u16; 128], standard: bool) -> u16 {
    match code {
        0x27 if standard => 0x2019,
        0x60 if standard => 0x2018,
        0x20..=0x7E => u16::from(code),
        0x80..=0xFF => high[usize::from(code - 0x80)],
        _ => 0,
    }
}

const STANDARD_HIGH: &[u16; 128] = &[
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 0x80
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 0x90
    0, 0xA1, 0xA2, 0xA3, 0x2044, 0xA5, 0x192, 0xA7, 0xA4, 0x27, 0x201C, 0xAB, 0x2039, 0x203A,
    0xFB01, 0xFB02, // 0xA0
    0, 0x2013, 0x2020, 0x2021, 0xB7, 0, 0xB6, 0x2022, 0x201A, 0x201E, 0x201D, 0xBB, 0x2026, 0x2030,
    0, 0xBF, // 0xB0
    0, 0x60, 0xB4, 0x2C6, 0x2DC, 0xAF, 0x2D8, 0x2D9, 0xA8, 0, 0x2DA, 0xB8, 0, 0x2DD, 0x2DB,
    0x2C7, // 0xC0
    0x2014, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 0xD0
    0, 0xC6, 0, 0xAA, 0, 0, 0, 0, 0x141, 0xD8, 0x152, 0xBA, 0, 0, 0, 0, // 0xE0
    0, 0xE6, 0, 0, 0, 0x131, 0, 0, 0x142, 0xF8, 0x153, 0xDF, 0, 0, 0, 0, // 0xF0
];

const WIN_ANSI_HIGH: &[u16; 128] = &{
    let mut t = [0u16; 128];
    let low: [u16; 32] = [
        0x20AC, 0, 0x201A, 0x192, 0x201E, 0x2026, 0x2020, 0x2021, 0x2C6, 0x2030, 0x160, 0x2039,
        0x152, 0, 0x17D, 0, // 0x80
        0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x2DC, 0x2122, 0x161, 0x203A,
        0x153, 0, 0x17E, 0x178, // 0x90
    ];
    let mut i = 0;
    while i < 128 {
        // 0xA0..=0xFF is ISO Latin-1, i.e. the code point itself.
        t[i] = if i < 32 { low[i] } else { 0x80 + i as u16 };
        i += 1;
    }
    t
};

const MAC_ROMAN_HIGH: &[u16; 128] = &[
    0xC4, 0xC5, 0xC7, 0xC9, 0xD1, 0xD6, 0xDC, 0xE1, 0xE0, 0xE2, 0xE4, 0xE3, 0xE5, 0xE7, 0xE9,
    0xE8, // 0x80
    0xEA, 0xEB, 0xED, 0xEC, 0xEE, 0xEF, 0xF1, 0xF3, 0xF2, 0xF4, 0xF6, 0xF5, 0xFA, 0xF9, 0xFB,
    0xFC, // 0x90
    0x2020, 0xB0, 0xA2, 0xA3, 0xA7, 0x2022, 0xB6, 0xDF, 0xAE, 0xA9, 0x2122, 0xB4, 0xA8, 0x2260,
    0xC6, 0xD8, // 0xA0
    0x221E, 0xB1, 0x2264, 0x2265, 0xA5, 0xB5, 0x2202, 0x2211, 0x220F, 0x3C0, 0x222B, 0xAA, 0xBA,
    0x2126, 0xE6, 0xF8, // 0xB0
    0xBF, 0xA1, 0xAC, 0x221A, 0x192, 0x2248, 0x2206, 0xAB, 0xBB, 0x2026, 0x20, 0xC0, 0xC3, 0xD5,
    0x152, 0x153, // 0xC0
    0x2013, 0x2014, 0x201C, 0x201D, 0x2018, 0x2019, 0xF7, 0x25CA, 0xFF, 0x178, 0x2044, 0xA4,
    0x2039, 0x203A, 0xFB01, 0xFB02, // 0xD0
    0x2021, 0xB7, 0x201A, 0x201E, 0x2030, 0xC2, 0xCA, 0xC1, 0xCB, 0xC8, 0xCD, 0xCE, 0xCF, 0xCC,
    0xD3, 0xD4, // 0xE0
    0, 0xD2, 0xDA, 0xDB, 0xD9, 0x131, 0x2C6, 0x2DC, 0xAF, 0x2D8, 0x2D9, 0x2DA, 0xB8, 0x2DD, 0x2DB,
    0x2C7, // 0xF0
];

/// Symbol: ASCII punctuation and digits where the font has them, Greek letters, math.
fn symbol(code: u8) -> u16 {
    const ASCII_AT: &[u8] = b" !#%&()+,./0123456789:;<=>?[]_{|}";
    const LETTERS_UP: &[u16; 26] = &[
        0x391, 0x392, 0x3A7, 0x2206, 0x395, 0x3A6, 0x393, 0x397, 0x399, 0x3D1, 0x39A, 0x39B, 0x39C,
        0x39D, 0x39F, 0x3A0, 0x398, 0x3A1, 0x3A3, 0x3A4, 0x3A5, 0x3C2, 0x2126, 0x39E, 0x3A8, 0x396,
    ];
    const LETTERS_LOW: &[u16; 26] = &[
        0x3B1, 0x3B2, 0x3C7, 0x3B4, 0x3B5, 0x3C6, 0x3B3, 0x3B7, 0x3B9, 0x3D5, 0x3BA, 0x3BB, 0xB5,
        0x3BD, 0x3BF, 0x3C0, 0x3B8, 0x3C1, 0x3C3, 0x3C4, 0x3C5, 0x3D6, 0x3C9, 0x3BE, 0x3C8, 0x3B6,
    ];
    const HIGH: &[u16; 96] = &[
        0x20AC, 0x3D2, 0x2032, 0x2264, 0x2044, 0x221E, 0x192, 0x2663, 0x2666, 0x2665, 0x2660,
        0x2194, 0x2190, 0x2191, 0x2192, 0x2193, // 0xA0
        0xB0, 0xB1, 0x2033, 0x2265, 0xD7, 0x221D, 0x2202, 0x2022, 0xF7, 0x2260, 0x2261, 0x2248,
        0x2026, 0xF8E6, 0xF8E7, 0x21B5, // 0xB0
        0x2135, 0x2111, 0x211C, 0x2118, 0x2297, 0x2295, 0x2205, 0x2229, 0x222A, 0x2283, 0x2287,
        0x2284, 0x2282, 0x2286, 0x2208, 0x2209, // 0xC0
        0x2220, 0x2207, 0xAE, 0xA9, 0x2122, 0x220F, 0x221A, 0x22C5, 0xAC, 0x2227, 0x2228, 0x21D4,
        0x21D0, 0x21D1, 0x21D2, 0x21D3, // 0xD0
        0x25CA, 0x2329, 0xAE, 0xA9, 0x2122, 0x2211, 0xF8EB, 0xF8EC, 0xF8ED, 0xF8EE, 0xF8EF, 0xF8F0,
        0xF8F1, 0xF8F2, 0xF8F3, 0xF8F4, // 0xE0
        0, 0x232A, 0x222B, 0x2320, 0xF8F5, 0x2321, 0xF8F6, 0xF8F7, 0xF8F8, 0xF8F9, 0xF8FA, 0xF8FB,
        0xF8FC, 0xF8FD, 0xF8FE, 0, // 0xF0
    ];
    match code {
        0x22 => 0x2200,
        0x24 => 0x2203,
        0x27 => 0x220B,
        0x2A => 0x2217,
        0x2D => 0x2212,
        0x40 => 0x2245,
        0x5C => 0x2234,
        0x5E => 0x22A5,
        0x60 => 0xF8E5,
        0x7E => 0x223C,
        0x41..=0x5A => LETTERS_UP[usize::from(code - 0x41)],
        0x61..=0x7A => LETTERS_LOW[usize::from(code - 0x61)],
        0xA0..=0xFF => HIGH[usize::from(code - 0xA0)],
        _ if ASCII_AT.contains(&code) => u16::from(code),
        _ => 0,
    }
}

/// ZapfDingbats: the Unicode Dingbats block was laid out after this font, so codes map in
/// order onto U+2701.. except where Unicode already had the character elsewhere.
fn zapf(code: u8) -> u16 {
    match code {
        0x20 => 0x20,
        0x25 => 0x260E,
        0x2A => 0x261B,
        0x2B => 0x261E,
        0x48 => 0x2605,
        0x6C => 0x25CF,
        0x6E => 0x25A0,
        0x73 => 0x25B2,
        0x74 => 0x25BC,
        0x75 => 0x25C6,
        0x77 => 0x25D7,
        0x21..=0x7E => 0x2700 + u16::from(code - 0x20),
        0x80..=0x8D => 0x2768 + u16::from(code - 0x80),
        0xA1..=0xA7 => 0x2761 + u16::from(code - 0xA1),
        0xA8 => 0x2663,
        0xA9 => 0x2666,
        0xAA => 0x2665,
        0xAB => 0x2660,
        0xAC..=0xB5 => 0x2460 + u16::from(code - 0xAC),
        0xB6..=0xD4 => 0x2776 + u16::from(code - 0xB6),
        0xD5 => 0x2192,
        0xD6 => 0x2194,
        0xD7 => 0x2195,
        0xD8..=0xEF => 0x2798 + u16::from(code - 0xD8),
        0xF1..=0xFE => 0x27B1 + u16::from(code - 0xF1),
        _ => 0,
    }
}

/// MacExpertEncoding, 0x20..=0x7E (the part expert fonts in PDFs actually use).
fn mac_expert(code: u8) -> Option<&'static str> {
    const LOW: [&str; 32] = [
        "space",
        "exclamsmall",
        "Hungarumlautsmall",
        "centoldstyle",
        "dollaroldstyle",
        "dollarsuperior",
        "ampersandsmall",
        "Acutesmall",
        "parenleftsuperior",
        "parenrightsuperior",
        "twodotenleader",
        "onedotenleader",
        "comma",
        "hyphen",
        "period",
        "fraction",
        "zerooldstyle",
        "oneoldstyle",
        "twooldstyle",
        "threeoldstyle",
        "fouroldstyle",
        "fiveoldstyle",
        "sixoldstyle",
        "sevenoldstyle",
        "eightoldstyle",
        "nineoldstyle",
        "colon",
        "semicolon",
        "",
        "threequartersemdash",
        "",
        "questionsmall",
    ];
    const SMALL: [&str; 26] = [
        "Asmall", "Bsmall", "Csmall", "Dsmall", "Esmall", "Fsmall", "Gsmall", "Hsmall", "Ismall",
        "Jsmall", "Ksmall", "Lsmall", "Msmall", "Nsmall", "Osmall", "Psmall", "Qsmall", "Rsmall",
        "Ssmall", "Tsmall", "Usmall", "Vsmall", "Wsmall", "Xsmall", "Ysmall", "Zsmall",
    ];
    let name = match code {
        0x20..=0x3F => LOW[usize::from(code - 0x20)],
        0x44 => "Ethsmall",
        0x47 => "onequarter",
        0x48 => "onehalf",
        0x49 => "threequarters",
        0x4A => "oneeighth",
        0x4B => "threeeighths",
        0x4C => "fiveeighths",
        0x4D => "seveneighths",
        0x4E => "onethird",
        0x4F => "twothirds",
        0x56 => "ff",
        0x57 => "fi",
        0x58 => "fl",
        0x59 => "ffi",
        0x5A => "ffl",
        0x5B => "parenleftinferior",
        0x5D => "parenrightinferior",
        0x5E => "Circumflexsmall",
        0x5F => "hypheninferior",
        0x60 => "Gravesmall",
        0x61..=0x7A => SMALL[usize::from(code - 0x61)],
        0x7B => "colonmonetary",
        0x7C => "onefitted",
        0x7D => "rupiah",
        0x7E => "Tildesmall",
        _ => "",
    };
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::BaseEncoding::*;

    #[test]
    fn standard() {
        assert_eq!(Standard.unicode(0x41), Some('A'));
        assert_eq!(Standard.unicode(0x27), Some('\u{2019}'));
        assert_eq!(Standard.glyph_name(0x27).as_deref(), Some("quoteright"));
        assert_eq!(Standard.glyph_name(0xAE).as_deref(), Some("fi"));
        assert_eq!(Standard.glyph_name(0xE8).as_deref(), Some("Lslash"));
        assert_eq!(Standard.unicode(0x80), None);
    }

    #[test]
    fn win_ansi() {
        assert_eq!(WinAnsi.unicode(0x80), Some('€'));
        assert_eq!(WinAnsi.unicode(0x93), Some('\u{201C}'));
        assert_eq!(WinAnsi.unicode(0xE9), Some('é'));
        assert_eq!(WinAnsi.glyph_name(0xE9).as_deref(), Some("eacute"));
        assert_eq!(WinAnsi.glyph_name(0x27).as_deref(), Some("quotesingle"));
        assert_eq!(WinAnsi.glyph_name(0xA0).as_deref(), Some("space"));
        assert_eq!(WinAnsi.unicode(0x81), None);
    }

    #[test]
    fn mac_roman_and_expert() {
        assert_eq!(MacRoman.unicode(0x8E), Some('é'));
        assert_eq!(MacRoman.unicode(0xD5), Some('\u{2019}'));
        assert_eq!(MacRoman.glyph_name(0xDE).as_deref(), Some("fi"));
        assert_eq!(MacExpert.glyph_name(0x61).as_deref(), Some("Asmall"));
        assert_eq!(
            MacExpert.unicode(0x59).map(String::from).as_deref(),
            Some("f"),
            "first char of ffi"
        );
    }

    #[test]
    fn symbol_and_dingbats() {
        assert_eq!(Symbol.unicode(0x61), Some('α'));
        assert_eq!(Symbol.unicode(0x44), Some('\u{2206}'));
        assert_eq!(Symbol.glyph_name(0x61).as_deref(), Some("alpha"));
        assert_eq!(Symbol.unicode(0xB7), Some('•'));
        assert_eq!(ZapfDingbats.unicode(0x21), Some('\u{2701}'));
        assert_eq!(ZapfDingbats.unicode(0x48), Some('\u{2605}'));
        assert_eq!(ZapfDingbats.unicode(0x7E), Some('\u{275E}'));
        assert_eq!(ZapfDingbats.unicode(0xAC), Some('\u{2460}'));
        assert_eq!(ZapfDingbats.unicode(0xFE), Some('\u{27BE}'));
    }
}
