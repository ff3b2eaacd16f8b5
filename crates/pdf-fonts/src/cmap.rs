//! CMap programs: the embedded `/Encoding` CMaps of Type0 fonts and `/ToUnicode` CMaps.
//!
//! We read the PostScript-like syntax with our own small tokenizer and only act on the
//! operators that carry data (`begincodespacerange`, `beginbfchar`, `beginbfrange`,
//! `begincidchar`, `begincidrange`, `usecmap`, `/WMode`). Everything else is skipped, which is
//! what pdf.js and MuPDF do too: producers write all sorts of decoration around the tables.

use std::collections::HashMap;

use crate::cmap_tokens::{tokenize, Tok};

/// bfrange/cidrange spans larger than this are clamped: a broken range like
/// `<0000> <FFFFFFFF>` must not allocate billions of entries.
const MAX_RANGE: u32 = 0x1_0000;

/// One codespace range: codes of `len` bytes whose every byte lies between `lo` and `hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeRange {
    /// Number of bytes of the codes in this range (1..=4).
    pub len: usize,
    /// Lowest byte value per position.
    pub lo: [u8; 4],
    /// Highest byte value per position.
    pub hi: [u8; 4],
}

impl CodeRange {
    /// A range from hex-string bounds as written in a CMap; `None` if lengths differ or are not 1..=4.
    pub fn from_bounds(lo: &[u8], hi: &[u8]) -> Option<Self> {
        if lo.len() != hi.len() || lo.is_empty() || lo.len() > 4 {
            return None;
        }
        let mut r = CodeRange {
            len: lo.len(),
            lo: [0; 4],
            hi: [0; 4],
        };
        r.lo[..lo.len()].copy_from_slice(lo);
        r.hi[..hi.len()].copy_from_slice(hi);
        Some(r)
    }

    fn matches(&self, bytes: &[u8]) -> bool {
        bytes.len() >= self.len
            && (0..self.len).all(|i| (self.lo[i]..=self.hi[i]).contains(&bytes[i]))
    }
}

/// How a string of a font splits into character codes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CodeSpace {
    ranges: Vec<CodeRange>,
}

impl CodeSpace {
    /// One byte per code: every simple font.
    pub fn one_byte() -> Self {
        Self {
            ranges: vec![CodeRange {
                len: 1,
                lo: [0; 4],
                hi: [0xFF, 0, 0, 0],
            }],
        }
    }

    /// Two bytes per code: Identity-H/V, UCS-2 CMaps.
    pub fn two_byte() -> Self {
        Self {
            ranges: vec![CodeRange {
                len: 2,
                lo: [0; 4],
                hi: [0xFF, 0xFF, 0, 0],
            }],
        }
    }

    /// A codespace from explicit ranges.
    pub fn from_ranges(ranges: Vec<CodeRange>) -> Self {
        Self { ranges }
    }

    /// The ranges, as declared.
    pub fn ranges(&self) -> &[CodeRange] {
        &self.ranges
    }

    /// True when no range was declared.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Splits the next code off `bytes`: `(code, bytes consumed)`; `(0, 0)` for empty input.
    ///
    /// Follows PDF 32000 9.7.6.2: try 1, 2, 3, 4-byte prefixes against the ranges of that
    /// length. When nothing matches we consume the length of the shortest range whose first
    /// byte matches (else the shortest range), as Acrobat does, so a bad byte never stalls
    /// the caller.
    pub fn next_code(&self, bytes: &[u8]) -> (u32, usize) {
        if bytes.is_empty() {
            return (0, 0);
        }
        for n in 1..=4usize {
            if self.ranges.iter().any(|r| r.len == n && r.matches(bytes)) {
                return (be_code(&bytes[..n]), n);
            }
        }
        let first_byte = self
            .ranges
            .iter()
            .filter(|r| (r.lo[0]..=r.hi[0]).contains(&bytes[0]))
            .map(|r| r.len)
            .min();
        let n = first_byte
            .or_else(|| self.ranges.iter().map(|r| r.len).min())
            .unwrap_or(1);
        let n = n.min(bytes.len());
        (be_code(&bytes[..n]), n)
    }

    /// The byte length a code of this value has, if it lies in some range (shortest first).
    pub fn code_len(&self, code: u32) -> Option<usize> {
        let mut ranges: Vec<&CodeRange> = self.ranges.iter().collect();
        ranges.sort_by_key(|r| r.len);
        ranges
            .into_iter()
            .find(|r| {
                (r.len == 4 || code < (1u32 << (8 * r.len))) && r.matches(&code_bytes(code, r.len))
            })
            .map(|r| r.len)
    }
}

/// Big-endian integer value of up to 4 bytes.
pub fn be_code(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .take(4)
        .fold(0u32, |acc, b| (acc << 8) | u32::from(*b))
}

/// The `len` big-endian bytes of `code`.
pub fn code_bytes(code: u32, len: usize) -> Vec<u8> {
    (0..len)
        .rev()
        .map(|i| ((code >> (8 * i)) & 0xFF) as u8)
        .collect()
}

/// A parsed CMap: codespace, Unicode targets (ToUnicode) and CIDs (encoding CMaps).
#[derive(Debug, Clone, Default)]
pub struct CMap {
    /// Declared codespace ranges (may be empty in sloppy ToUnicode CMaps).
    pub codespace: CodeSpace,
    /// Code → Unicode text, with the code's byte length.
    pub unicode: HashMap<u32, (String, usize)>,
    /// Code → CID, for encoding CMaps.
    pub cids: HashMap<u32, u32>,
    /// The name given to `usecmap`, e.g. `Identity-H`.
    pub use_cmap: Option<String>,
    /// `/WMode 1` was declared.
    pub vertical: bool,
}

impl CMap {
    /// Parses a CMap stream's decoded bytes. Never fails: unreadable parts are skipped.
    pub fn parse(data: &[u8]) -> Self {
        let toks = tokenize(data);
        let mut cmap = CMap::default();
        let mut i = 0;
        while i < toks.len() {
            match &toks[i] {
                Tok::Op(op) => match op.as_str() {
                    "begincodespacerange" => i = cmap.codespace_section(&toks, i + 1),
                    "beginbfchar" => i = cmap.bfchar_section(&toks, i + 1),
                    "beginbfrange" => i = cmap.bfrange_section(&toks, i + 1),
                    "begincidchar" => i = cmap.cidchar_section(&toks, i + 1),
                    "begincidrange" => i = cmap.cidrange_section(&toks, i + 1),
                    "usecmap" => {
                        if let Some(Tok::Name(n)) = i.checked_sub(1).and_then(|j| toks.get(j)) {
                            cmap.use_cmap = Some(n.clone());
                        }
                        i += 1;
                    }
                    _ => i += 1,
                },
                Tok::Name(n) if n == "WMode" => {
                    cmap.vertical = matches!(toks.get(i + 1), Some(Tok::Int(1)));
                    i += 1;
                }
                _ => i += 1,
            }
        }
        cmap
    }

    fn codespace_section(&mut self, toks: &[Tok], mut i: usize) -> usize {
        while let (Some(Tok::Hex(lo)), Some(Tok::Hex(hi))) = (toks.get(i), toks.get(i + 1)) {
            if let Some(r) = CodeRange::from_bounds(lo, hi) {
                self.codespace.ranges.push(r);
            }
            i += 2;
        }
        i
    }

    fn bfchar_section(&mut self, toks: &[Tok], mut i: usize) -> usize {
        while let (Some(Tok::Hex(src)), Some(dst)) = (toks.get(i), toks.get(i + 1)) {
            let text = match dst {
                Tok::Hex(d) => Some(utf16be(d)),
                // Some producers write glyph names as targets (allowed by the spec for bfchar).
                Tok::Name(n) => crate::agl::name_to_unicode(n),
                _ => None,
            };
            if let Some(text) = text.filter(|_| src.len() <= 4) {
                self.unicode.insert(be_code(src), (text, src.len()));
            }
            i += 2;
        }
        i
    }

    fn bfrange_section(&mut self, toks: &[Tok], mut i: usize) -> usize {
        while let (Some(Tok::Hex(lo)), Some(Tok::Hex(hi))) = (toks.get(i), toks.get(i + 1)) {
            let len = lo.len();
            let (lo_c, hi_c) = (be_code(lo), be_code(hi));
            let count = hi_c.saturating_sub(lo_c).min(MAX_RANGE - 1);
            match toks.get(i + 2) {
                Some(Tok::Hex(dst)) if len <= 4 => {
                    let units = utf16_units(dst);
                    for k in 0..=count {
                        let mut u = units.clone();
                        if let Some(last) = u.last_mut() {
                            // The spec increments the last byte; real files (and every viewer)
                            // let the increment carry into the whole last UTF-16 unit.
                            *last = last.wrapping_add(k as u16);
                        }
                        self.unicode
                            .insert(lo_c + k, (String::from_utf16_lossy(&u), len));
                    }
                    i += 3;
                }
                Some(Tok::ArrOpen) => {
                    let mut j = i + 3;
                    let mut k = 0u32;
                    while let Some(Tok::Hex(dst)) = toks.get(j) {
                        if k <= count && len <= 4 {
                            self.unicode.insert(lo_c + k, (utf16be(dst), len));
                        }
                        k += 1;
                        j += 1;
                    }
                    i = if matches!(toks.get(j), Some(Tok::ArrClose)) {
                        j + 1
                    } else {
                        j
                    };
                }
                _ => i += 3,
            }
        }
        i
    }

    fn cidchar_section(&mut self, toks: &[Tok], mut i: usize) -> usize {
        while let (Some(Tok::Hex(src)), Some(Tok::Int(cid))) = (toks.get(i), toks.get(i + 1)) {
            self.cids.insert(be_code(src), (*cid).max(0) as u32);
            i += 2;
        }
        i
    }

    fn cidrange_section(&mut self, toks: &[Tok], mut i: usize) -> usize {
        while let (Some(Tok::Hex(lo)), Some(Tok::Hex(hi)), Some(Tok::Int(cid))) =
            (toks.get(i), toks.get(i + 1), toks.get(i + 2))
        {
            let (lo_c, hi_c) = (be_code(lo), be_code(hi));
            for k in 0..=hi_c.saturating_sub(lo_c).min(MAX_RANGE - 1) {
                self.cids.insert(lo_c + k, (*cid).max(0) as u32 + k);
            }
            i += 3;
        }
        i
    }
}

/// Decodes UTF-16BE (with surrogate pairs); a lone odd byte is taken as a code unit.
pub fn utf16be(bytes: &[u8]) -> String {
    String::from_utf16_lossy(&utf16_units(bytes))
}

fn utf16_units(bytes: &[u8]) -> Vec<u16> {
    if bytes.len() == 1 {
        return vec![u16::from(bytes[0])];
    }
    bytes
        .chunks(2)
        .map(|c| {
            if c.len() == 2 {
                u16::from_be_bytes([c[0], c[1]])
            } else {
                u16::from(c[0])
            }
        })
        .collect()
}

/// Codespace of a predefined (named) CMap, for splitting strings only.
///
/// Supported: Identity-H/V; the Unicode CMaps (`Uni*-UCS2-*`, `Uni*-UTF16-*`, `Uni*-UTF8-*`,
/// `Uni*-UTF32-*`, `Adobe-*-UCS2`); Shift-JIS (`*RKSJ*`); EUC (`EUC-H/V`, `GB-EUC`, `GBpc-EUC`,
/// `GBK-EUC`, `GBK2K`, `KSC-EUC`, `KSCpc-EUC`, `CNS-EUC`); UHC (`KSCms-UHC*`); Big Five (`*B5*`);
/// plain ISO-2022 (`H`, `V`, `GB-H`, `KSC-H`, `CNS1-H`, ...). Unknown names get two bytes,
/// the most common shape. Code → CID for these is not needed by this crate and not provided.
pub fn predefined_codespace(name: &str) -> CodeSpace {
    let r = |lo: &[u8], hi: &[u8]| {
        CodeRange::from_bounds(lo, hi).unwrap_or(CodeRange {
            len: 1,
            lo: [0; 4],
            hi: [0; 4],
        })
    };
    let ascii = r(&[0x00], &[0x80]);
    let ranges = if name.starts_with("Identity") || name.contains("UCS2") {
        return CodeSpace::two_byte();
    } else if name.contains("UTF16") {
        vec![
            r(&[0, 0], &[0xD7, 0xFF]),
            r(&[0xE0, 0], &[0xFF, 0xFF]),
            r(&[0xD8, 0, 0xDC, 0], &[0xDB, 0xFF, 0xDF, 0xFF]),
        ]
    } else if name.contains("UTF8") {
        vec![
            r(&[0], &[0x7F]),
            r(&[0xC0, 0x80], &[0xDF, 0xBF]),
            r(&[0xE0, 0x80, 0x80], &[0xEF, 0xBF, 0xBF]),
            r(&[0xF0, 0x80, 0x80, 0x80], &[0xF7, 0xBF, 0xBF, 0xBF]),
        ]
    } else if name.contains("UTF32") {
        vec![r(&[0, 0, 0, 0], &[0, 0x10, 0xFF, 0xFF])]
    } else if name.contains("RKSJ") {
        vec![
            ascii,
            r(&[0xA0], &[0xDF]),
            r(&[0x81, 0x40], &[0x9F, 0xFC]),
            r(&[0xE0, 0x40], &[0xFC, 0xFC]),
        ]
    } else if name.starts_with("GBK") {
        vec![ascii, r(&[0x81, 0x40], &[0xFE, 0xFE])]
    } else if name.contains("UHC") {
        vec![ascii, r(&[0x81, 0x41], &[0xFE, 0xFE])]
    } else if name.contains("B5") || name.contains("ETen") || name.contains("ETHK") {
        vec![ascii, r(&[0xA1, 0x40], &[0xFE, 0xFE])]
    } else if name.starts_with("EUC") {
        vec![
            ascii,
            r(&[0x8E, 0xA0], &[0x8E, 0xDF]),
            r(&[0xA1, 0xA1], &[0xFE, 0xFE]),
        ]
    } else if name.contains("EUC") {
        vec![ascii, r(&[0xA1, 0xA1], &[0xFE, 0xFE])]
    } else if matches!(name, "H" | "V") || name.ends_with("-H") || name.ends_with("-V") {
        vec![r(&[0x21, 0x21], &[0x7E, 0x7E])]
    } else {
        return CodeSpace::two_byte();
    };
    CodeSpace::from_ranges(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &[u8] = br"/CIDInit /ProcSet findresource begin 12 dict begin begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def /CMapType 2 def
2 begincodespacerange <00> <7F> <8000> <FFFF> endcodespacerange
3 beginbfchar <01> <0041> <8001> <D835DC00> <02> <006600660069> endbfchar
2 beginbfrange <10> <12> <0061> <20> <22> [<0078> <0079> <007A007A>] endbfrange
endcmap CMapName currentdict /CMap defineresource pop end end";

    #[test]
    fn codespace_mixed_lengths() {
        let c = CMap::parse(SAMPLE);
        assert_eq!(c.codespace.next_code(&[0x41, 0x80]), (0x41, 1));
        assert_eq!(c.codespace.next_code(&[0x80, 0x01, 0x41]), (0x8001, 2));
        assert_eq!(c.codespace.next_code(&[0x80]), (0x80, 1));
        assert_eq!(c.codespace.code_len(0x8001), Some(2));
        assert_eq!(c.codespace.code_len(0x41), Some(1));
    }

    #[test]
    fn bfchar_surrogates_and_ligatures() {
        let c = CMap::parse(SAMPLE);
        assert_eq!(c.unicode[&1].0, "A");
        assert_eq!(c.unicode[&0x8001], ("\u{1D400}".to_string(), 2));
        assert_eq!(c.unicode[&2].0, "ffi");
    }

    #[test]
    fn bfrange_plain_and_array() {
        let c = CMap::parse(SAMPLE);
        assert_eq!(c.unicode[&0x11].0, "b");
        assert_eq!(c.unicode[&0x12].0, "c");
        assert_eq!(c.unicode[&0x20].0, "x");
        assert_eq!(c.unicode[&0x22].0, "zz");
    }

    #[test]
    fn cid_ranges_usecmap_and_wmode() {
        let c = CMap::parse(b"/WMode 1 def /Identity-H usecmap 1 begincidrange <0000> <00FF> 10 endcidrange 1 begincidchar <0300> 7 endcidchar");
        assert!(c.vertical);
        assert_eq!(c.use_cmap.as_deref(), Some("Identity-H"));
        assert_eq!(c.cids[&5], 15);
        assert_eq!(c.cids[&0x300], 7);
    }

    #[test]
    fn predefined_shapes() {
        let sj = predefined_codespace("90ms-RKSJ-H");
        assert_eq!(sj.next_code(&[0x41, 0x82]), (0x41, 1));
        assert_eq!(sj.next_code(&[0x82, 0xA0]), (0x82A0, 2));
        assert_eq!(sj.next_code(&[0xB1]), (0xB1, 1));
        assert_eq!(
            predefined_codespace("UniJIS-UCS2-H").next_code(&[0x30, 0x42]),
            (0x3042, 2)
        );
        assert_eq!(
            predefined_codespace("GBK-EUC-H").next_code(&[0xB0, 0xA1]),
            (0xB0A1, 2)
        );
        assert_eq!(
            predefined_codespace("Identity-V").next_code(&[0, 3, 0]),
            (3, 2)
        );
    }
}
