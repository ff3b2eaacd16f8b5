//! The embedded font program (`/FontFile`, `/FontFile2`, `/FontFile3`).
//!
//! The bytes are kept and parsed again on demand: ttf-parser borrows its input, and parsing
//! the table directory is cheap compared with the decoding the caller already paid for.

use std::collections::HashMap;
use std::sync::OnceLock;

use lopdf::{Dictionary, Document};
use ttf_parser::{cff, Face, GlyphId};

use crate::obj;
use crate::type1::Type1Program;

/// What kind of program a font embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramKind {
    /// Type 1 (`/FontFile`).
    Type1,
    /// TrueType (`/FontFile2`).
    TrueType,
    /// Bare CFF (`/FontFile3` with `/Subtype /Type1C` or `/CIDFontType0C`).
    Cff,
    /// OpenType (`/FontFile3 /Subtype /OpenType`), CFF- or glyf-based.
    OpenType,
}

/// An embedded program.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    pub kind: ProgramKind,
    pub data: Vec<u8>,
    pub type1: Option<Type1Program>,
    /// CFF glyph name → glyph id. Built by walking the charset because ttf-parser's
    /// `glyph_index_by_name` cannot resolve the predefined ISOAdobe charset.
    cff_names: HashMap<String, u16>,
    /// Glyph count, read once.
    count: Option<u16>,
    /// Outline bounds of every glyph (1/1000 em), computed on first use in a single parse:
    /// re-parsing per glyph made `encode` on large CID fonts far too slow.
    bboxes: OnceLock<Vec<Ink>>,
    /// Reverse Unicode cmap, computed on first use.
    gid_chars: OnceLock<HashMap<u16, char>>,
}

impl Program {
    /// Reads the program of a font descriptor, trusting the bytes over the key they sit under:
    /// producers put OpenType in FontFile2 and CFF in FontFile3/OpenType often enough.
    pub fn load(doc: &Document, descriptor: &Dictionary) -> Option<Self> {
        let (key, data) = [&b"FontFile2"[..], b"FontFile3", b"FontFile"]
            .into_iter()
            .find_map(|k| {
                descriptor
                    .get(k)
                    .ok()
                    .and_then(|o| obj::stream_bytes(doc, o))
                    .map(|d| (k, d))
            })?;
        let kind = match data.get(..4) {
            Some(b"OTTO") => ProgramKind::OpenType,
            Some([0, 1, 0, 0]) | Some(b"true") | Some(b"ttcf") => ProgramKind::TrueType,
            Some([1, 0, ..]) => ProgramKind::Cff,
            Some([b'%', b'!', ..]) | Some([0x80, 1, ..]) => ProgramKind::Type1,
            _ if key == b"FontFile" => ProgramKind::Type1,
            _ if key == b"FontFile2" => ProgramKind::TrueType,
            _ => ProgramKind::Cff,
        };
        let type1 = (kind == ProgramKind::Type1).then(|| Type1Program::parse(&data));
        let mut p = Self {
            kind,
            data,
            type1,
            cff_names: HashMap::new(),
            count: None,
            bboxes: OnceLock::new(),
            gid_chars: OnceLock::new(),
        };
        p.count = p
            .face(|f| f.number_of_glyphs())
            .or_else(|| p.cff(|c| c.number_of_glyphs()));
        p.cff_names = p
            .cff(|c| {
                (0..c.number_of_glyphs())
                    .filter_map(|g| c.glyph_name(GlyphId(g)).map(|n| (n.to_string(), g)))
                    .collect()
            })
            .unwrap_or_default();
        Some(p)
    }

    /// Runs `f` on the sfnt face (TrueType and OpenType programs).
    pub fn face<R>(&self, f: impl FnOnce(&Face) -> R) -> Option<R> {
        match self.kind {
            ProgramKind::TrueType | ProgramKind::OpenType => {
                Face::parse(&self.data, 0).ok().map(|face| f(&face))
            }
            _ => None,
        }
    }

    /// Runs `f` on the CFF table (bare CFF, or the `CFF ` table of an OpenType program).
    pub fn cff<R>(&self, f: impl FnOnce(&cff::Table) -> R) -> Option<R> {
        match self.kind {
            ProgramKind::Cff => cff::Table::parse(&self.data).map(|t| f(&t)),
            ProgramKind::OpenType => {
                let face = Face::parse(&self.data, 0).ok()?;
                face.tables().cff.as_ref().map(f)
            }
            _ => None,
        }
    }

    /// Number of glyphs, when the program is parseable.
    pub fn glyph_count(&self) -> Option<u16> {
        self.count
    }

    /// Glyph id of a glyph name (post table or CFF charset).
    pub fn gid_by_name(&self, name: &str) -> Option<u16> {
        if let Some(g) = self.cff_names.get(name) {
            return Some(*g);
        }
        self.face(|f| f.glyph_index_by_name(name))
            .flatten()
            .map(|g| g.0)
    }

    /// Whether a glyph really carries a drawing. Subsetters keep glyph ids stable and empty
    /// the outlines they drop, so an empty outline means "not in the subset" — except for
    /// glyphs that are blank by nature (space and friends), which is what `blank_ok` says.
    pub fn gid_has_glyph(&self, gid: u16, blank_ok: bool) -> Option<bool> {
        if self.kind == ProgramKind::Type1 {
            return None;
        }
        let count = self.glyph_count()?;
        if gid == 0 || gid >= count {
            return Some(false);
        }
        Some(blank_ok || self.ink(gid) != Ink::Empty)
    }

    /// Outline bounds of a glyph in 1/1000 em (glyph space of a 1000-unit font).
    pub fn gid_bbox(&self, gid: u16) -> Option<[f64; 4]> {
        match self.ink(gid) {
            Ink::Bounds(b) => Some(b),
            _ => None,
        }
    }

    fn ink(&self, gid: u16) -> Ink {
        self.bboxes
            .get_or_init(|| self.all_bboxes())
            .get(usize::from(gid))
            .copied()
            .unwrap_or(Ink::Empty)
    }

    fn all_bboxes(&self) -> Vec<Ink> {
        let n = self.count.unwrap_or(0);
        let from_face = self.face(|f| {
            if f.tables().cff.is_some() {
                return None;
            }
            let s = 1000.0 / f64::from(f.units_per_em().max(1));
            Some(
                (0..n)
                    .map(|g| match f.glyph_bounding_box(GlyphId(g)) {
                        Some(r) => Ink::Bounds([
                            f64::from(r.x_min) * s,
                            f64::from(r.y_min) * s,
                            f64::from(r.x_max) * s,
                            f64::from(r.y_max) * s,
                        ]),
                        None => Ink::Empty,
                    })
                    .collect(),
            )
        });
        if let Some(Some(v)) = from_face {
            return v;
        }
        self.cff(|c| {
            // CFF glyph space is scaled by the FontMatrix (usually 0.001).
            let m = c.matrix();
            let (sx, sy) = (f64::from(m.sx) * 1000.0, f64::from(m.sy) * 1000.0);
            (0..n)
                .map(|g| match c.outline(GlyphId(g), &mut NoOutline) {
                    Ok(r) => Ink::Bounds([
                        f64::from(r.x_min) * sx,
                        f64::from(r.y_min) * sy,
                        f64::from(r.x_max) * sx,
                        f64::from(r.y_max) * sy,
                    ]),
                    Err(ttf_parser::CFFError::ZeroBBox | ttf_parser::CFFError::NoGlyph) => {
                        Ink::Empty
                    }
                    // ttf-parser rejects some legal Type 2 operators (old flex/hint forms); the
                    // charstring is there and draws, we just cannot measure it.
                    Err(_) => Ink::Unmeasured,
                })
                .collect()
        })
        .unwrap_or_default()
    }

    /// Glyph name of a glyph id (CFF charset or `post`).
    pub fn glyph_name(&self, gid: u16) -> Option<String> {
        self.cff(|c| c.glyph_name(GlyphId(gid)).map(str::to_string))
            .flatten()
            .or_else(|| {
                self.face(|f| f.glyph_name(GlyphId(gid)).map(str::to_string))
                    .flatten()
            })
    }

    /// Advance width of a glyph in 1/1000 em, from `hmtx`.
    pub fn gid_advance(&self, gid: u16) -> Option<f64> {
        self.face(|f| {
            f.glyph_hor_advance(GlyphId(gid))
                .map(|a| f64::from(a) * 1000.0 / f64::from(f.units_per_em().max(1)))
        })
        .flatten()
    }

    /// Glyph id for a code of a simple TrueType font with no usable encoding, per
    /// PDF 32000 9.6.6.4: the (3,0) subtable at 0xF000+code (or code), else (1,0) at code.
    pub fn truetype_symbolic_gid(&self, code: u8) -> Option<u16> {
        self.face(|f| {
            let cmap = f.tables().cmap?;
            let by = |platform: ttf_parser::PlatformId, enc: u16, cp: u32| {
                cmap.subtables
                    .into_iter()
                    .filter(|s| s.platform_id == platform && s.encoding_id == enc)
                    .find_map(|s| s.glyph_index(cp))
                    .map(|g| g.0)
                    .filter(|g| *g != 0)
            };
            by(ttf_parser::PlatformId::Windows, 0, 0xF000 + u32::from(code))
                .or_else(|| by(ttf_parser::PlatformId::Windows, 0, u32::from(code)))
                .or_else(|| by(ttf_parser::PlatformId::Macintosh, 0, u32::from(code)))
        })
        .flatten()
    }

    /// Glyph id of a Unicode character through the program's Unicode cmap.
    pub fn gid_for_char(&self, c: char) -> Option<u16> {
        self.face(|f| f.glyph_index(c).map(|g| g.0))
            .flatten()
            .filter(|g| *g != 0)
    }

    /// Reverse Unicode cmap: glyph id → the first character mapped to it.
    pub fn gid_to_char(&self) -> &HashMap<u16, char> {
        self.gid_chars.get_or_init(|| self.read_gid_chars())
    }

    /// Every character the program's Unicode cmap maps to `gid` (none without a cmap).
    /// Walks the cmap on each call: meant for the few glyphs a redaction cuts.
    pub fn chars_of_gid(&self, gid: u16) -> Vec<char> {
        let mut out = Vec::new();
        self.each_unicode_mapping(|g, c| {
            if g == gid && !out.contains(&c) {
                out.push(c);
            }
        });
        out
    }

    fn read_gid_chars(&self) -> HashMap<u16, char> {
        let mut map = HashMap::new();
        self.each_unicode_mapping(|g, c| {
            map.entry(g).or_insert(c);
        });
        map
    }

    /// Calls `f(glyph id, character)` for every mapping of the program's Unicode cmap
    /// subtables, in subtable order.
    fn each_unicode_mapping(&self, mut f: impl FnMut(u16, char)) {
        self.face(|face| {
            let Some(cmap) = face.tables().cmap else {
                return;
            };
            for sub in cmap.subtables.into_iter().filter(|s| s.is_unicode()) {
                sub.codepoints(|cp| {
                    if let (Some(c), Some(g)) = (char::from_u32(cp), sub.glyph_index(cp)) {
                        f(g.0, c);
                    }
                });
            }
        });
    }

    /// CFF CID-keyed fonts: CID → glyph id through the charset. `None` for name-keyed CFF,
    /// where CIDs are glyph ids.
    pub fn cid_to_gid_cff(&self) -> Option<HashMap<u16, u16>> {
        self.cff(|c| {
            let n = c.number_of_glyphs();
            let map: HashMap<u16, u16> = (0..n)
                .filter_map(|g| c.glyph_cid(GlyphId(g)).map(|cid| (cid, g)))
                .collect();
            (!map.is_empty()).then_some(map)
        })
        .flatten()
    }

    /// The built-in code → glyph id of a name-keyed CFF program (its own Encoding).
    pub fn cff_builtin_gid(&self, code: u8) -> Option<u16> {
        self.cff(|c| c.glyph_index(code).map(|g| g.0))
            .flatten()
            .filter(|g| *g != 0)
    }
}

/// What a glyph's outline holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ink {
    /// No contours (dropped by a subsetter, or a blank glyph).
    Empty,
    /// Contours within these bounds (1/1000 em).
    Bounds([f64; 4]),
    /// A charstring we could not interpret but which is not empty.
    Unmeasured,
}

struct NoOutline;

impl ttf_parser::OutlineBuilder for NoOutline {
    fn move_to(&mut self, _: f32, _: f32) {}
    fn line_to(&mut self, _: f32, _: f32) {}
    fn quad_to(&mut self, _: f32, _: f32, _: f32, _: f32) {}
    fn curve_to(&mut self, _: f32, _: f32, _: f32, _: f32, _: f32, _: f32) {}
    fn close(&mut self) {}
}
