//! [`Font`]: loading a font dictionary and the per-glyph queries.

use std::collections::HashMap;

use lopdf::{Dictionary, Document, Object, ObjectId};

use crate::cmap::{predefined_codespace, CMap, CodeSpace};
use crate::descriptor::{self, Descriptor, FontStyle};
use crate::metrics::CidMetrics;
use crate::obj;
use crate::program::{Program, ProgramKind};
use crate::simple::SimpleMap;
use crate::{Error, Result};

/// The font dictionary's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FontKind {
    /// `/Type1` (including the standard 14).
    Type1,
    /// `/MMType1` (multiple master instance).
    MMType1,
    /// `/TrueType`.
    TrueType,
    /// `/Type3` (glyphs are content streams).
    Type3,
    /// `/Type0` with a `/CIDFontType0` (CFF) descendant.
    CidType0,
    /// `/Type0` with a `/CIDFontType2` (TrueType) descendant.
    CidType2,
}

/// How codes of a Type0 font become CIDs.
#[derive(Debug, Clone)]
pub(crate) enum CidCoding {
    /// Identity-H/V: the 2-byte code is the CID.
    Identity,
    /// An embedded CMap with explicit cidchar/cidrange entries.
    Embedded(HashMap<u32, u32>),
    /// A predefined CMap we only know the codespace of.
    Predefined,
}

/// What only Type0 fonts have.
#[derive(Debug, Clone)]
pub(crate) struct CidMap {
    pub coding: CidCoding,
    /// `/CIDToGIDMap` stream (CIDFontType2); `None` is Identity.
    pub cid_to_gid: Option<Vec<u16>>,
    /// CID → GID from a CID-keyed CFF charset (CIDFontType0).
    pub cff_cid_gid: Option<HashMap<u16, u16>>,
    pub metrics: CidMetrics,
    /// GID → text from the program's own Unicode cmap, used when ToUnicode is silent.
    pub gid_text: HashMap<u16, String>,
}

/// A loaded PDF font. Cheap per-glyph queries; see the crate docs.
#[derive(Debug, Clone)]
pub struct Font {
    pub(crate) kind: FontKind,
    pub(crate) base_font: String,
    pub(crate) descriptor: Descriptor,
    pub(crate) program: Option<Program>,
    pub(crate) font_matrix: [f64; 6],
    pub(crate) vertical: bool,
    pub(crate) codespace: CodeSpace,
    pub(crate) to_unicode: HashMap<u32, (String, usize)>,
    pub(crate) simple: Option<Box<SimpleMap>>,
    pub(crate) cid: Option<Box<CidMap>>,
}

impl Font {
    /// Loads the font dictionary stored at `id`.
    pub fn load_id(doc: &Document, id: ObjectId) -> Result<Self> {
        let dict = doc.get_dictionary(id).map_err(|source| Error::Object {
            what: "font dictionary",
            source,
        })?;
        Self::load(doc, dict)
    }

    /// Loads a font dictionary. Never panics on malformed input; unreadable optional parts
    /// (ToUnicode, program, widths) degrade to defaults rather than failing the load.
    pub fn load(doc: &Document, font: &Dictionary) -> Result<Self> {
        let subtype = obj::name(doc, font, b"Subtype").ok_or_else(|| Error::NotAFont {
            reason: "no /Subtype".into(),
        })?;
        let base_font = obj::text(doc, font, b"BaseFont").unwrap_or_default();
        let to_unicode = font
            .get(b"ToUnicode")
            .ok()
            .and_then(|o| obj::stream_bytes(doc, o))
            .map(|d| CMap::parse(&d).unicode)
            .unwrap_or_default();
        let kind = match subtype {
            b"Type1" => FontKind::Type1,
            b"MMType1" => FontKind::MMType1,
            b"TrueType" => FontKind::TrueType,
            b"Type3" => FontKind::Type3,
            b"Type0" => return Self::load_type0(doc, font, base_font, to_unicode),
            other => {
                return Err(Error::UnsupportedSubtype {
                    subtype: String::from_utf8_lossy(other).into_owned(),
                })
            }
        };
        let fd = obj::dict(doc, font, b"FontDescriptor");
        let mut descriptor = fd.map(|d| Descriptor::read(doc, d)).unwrap_or_default();
        let program = fd.and_then(|d| Program::load(doc, d));
        let mut font_matrix = [0.001, 0.0, 0.0, 0.001, 0.0, 0.0];
        if kind == FontKind::Type3 {
            if let Some(m) = obj::nums(doc, font, b"FontMatrix").filter(|m| m.len() == 6) {
                font_matrix.copy_from_slice(&m);
            }
            descriptor.bbox = descriptor::read_bbox(doc, font, b"FontBBox");
        }
        let mut f = Font {
            kind,
            base_font,
            descriptor,
            program,
            font_matrix,
            vertical: false,
            codespace: CodeSpace::one_byte(),
            to_unicode,
            simple: None,
            cid: None,
        };
        f.simple = Some(Box::new(SimpleMap::build(doc, font, &f)));
        Ok(f)
    }

    fn load_type0(
        doc: &Document,
        font: &Dictionary,
        base_font: String,
        to_unicode: HashMap<u32, (String, usize)>,
    ) -> Result<Self> {
        let cid_font = match obj::array(doc, font, b"DescendantFonts")
            .and_then(|a| a.first())
            .map(|o| obj::deref(doc, o))
        {
            Some(Object::Dictionary(d)) => d,
            _ => {
                return Err(Error::NotAFont {
                    reason: "Type0 without a descendant CIDFont".into(),
                })
            }
        };
        let kind = match obj::name(doc, cid_font, b"Subtype") {
            Some(b"CIDFontType0") => FontKind::CidType0,
            _ => FontKind::CidType2,
        };
        let (codespace, coding, vertical) = cid_encoding(doc, font);
        let fd = obj::dict(doc, cid_font, b"FontDescriptor");
        let descriptor = fd.map(|d| Descriptor::read(doc, d)).unwrap_or_default();
        let program = fd.and_then(|d| Program::load(doc, d));
        // No ToUnicode and no program to read a cmap from, codes that are CIDs of a
        // predefined collection: the collection's own table tells the text (as pdftotext
        // and PDFium read it).
        let mut to_unicode = to_unicode;
        if to_unicode.is_empty() && program.is_none() && matches!(coding, CidCoding::Identity) {
            let info = obj::dict(doc, cid_font, b"CIDSystemInfo");
            let string = |key: &[u8]| match info.and_then(|i| obj::get(doc, i, key)) {
                Some(Object::String(s, _)) => Some(s.clone()),
                _ => None,
            };
            if let (Some(reg), Some(ord)) = (string(b"Registry"), string(b"Ordering")) {
                if let Some(table) = crate::collection::cid_to_unicode(&reg, &ord) {
                    to_unicode = (*table).clone();
                }
            }
        }
        let cid_to_gid = cid_font
            .get(b"CIDToGIDMap")
            .ok()
            .and_then(|o| obj::stream_bytes(doc, o))
            .map(|b| {
                b.chunks_exact(2)
                    .map(|c| u16::from_be_bytes([c[0], c[1]]))
                    .collect()
            });
        let cff_cid_gid = program.as_ref().and_then(Program::cid_to_gid_cff);
        let mut cid = CidMap {
            coding,
            cid_to_gid,
            cff_cid_gid,
            metrics: CidMetrics::read(doc, cid_font),
            gid_text: HashMap::new(),
        };
        if let Some(p) = &program {
            cid.gid_text = p
                .gid_to_char()
                .iter()
                .map(|(g, c)| (*g, c.to_string()))
                .collect();
        }
        Ok(Font {
            kind,
            base_font,
            descriptor,
            program,
            font_matrix: [0.001, 0.0, 0.0, 0.001, 0.0, 0.0],
            vertical,
            codespace,
            to_unicode,
            simple: None,
            cid: Some(Box::new(cid)),
        })
    }

    /// Splits the next character code off `bytes`: `(code, bytes consumed)`.
    /// Simple fonts take one byte; Type0 fonts follow their CMap's codespace. `(0, 0)` only
    /// for empty input, so a loop `while !bytes.is_empty()` always advances.
    pub fn next_code(&self, bytes: &[u8]) -> (u32, usize) {
        if self.simple.is_some() {
            return bytes.first().map_or((0, 0), |b| (u32::from(*b), 1));
        }
        self.codespace.next_code(bytes)
    }

    /// The text a code stands for, borrowed: ToUnicode first, then the encoding's glyph name
    /// (simple fonts) or the program's cmap (Type0). `None` when nothing tells.
    pub fn unicode_str(&self, code: u32) -> Option<&str> {
        if let Some((text, _)) = self.to_unicode.get(&code) {
            return Some(text);
        }
        if let Some(s) = &self.simple {
            return s.unicode.get(code as usize)?.as_deref();
        }
        let gid = self.gid_for_code(code)?;
        self.cid.as_ref()?.gid_text.get(&gid).map(String::as_str)
    }

    /// The text a code stands for (owned); see [`Font::unicode_str`]. CID fonts with a
    /// predefined character collection (Adobe-Japan1, -GB1, -CNS1, -Korea1) and no ToUnicode
    /// nor usable program cmap give `None`: we do not ship the CID → Unicode tables.
    pub fn unicode(&self, code: u32) -> Option<String> {
        self.unicode_str(code).map(str::to_owned)
    }

    /// Horizontal advance of a code in glyph space units of 1/1000 em (so the text-space
    /// advance is `width / 1000 * font_size`). Type3 widths are already multiplied through the
    /// FontMatrix, which makes that formula hold for them too.
    pub fn width(&self, code: u32) -> f64 {
        match (&self.simple, &self.cid) {
            (Some(s), _) => s
                .widths
                .get(code as usize)
                .copied()
                .unwrap_or(self.descriptor.missing_width),
            (None, Some(c)) => c.metrics.width(self.cid_for_code(code).unwrap_or(0)),
            (None, None) => self.descriptor.missing_width,
        }
    }

    /// Vertical advance (`w1y`, negative = downwards) in 1/1000 em, from `/W2` or `/DW2`.
    /// Horizontal fonts return 0.
    pub fn vertical_advance(&self, code: u32) -> f64 {
        match &self.cid {
            Some(c) if self.vertical => c.metrics.vertical(self.cid_for_code(code).unwrap_or(0)).0,
            _ => 0.0,
        }
    }

    /// Position vector `(vx, vy)` from the horizontal to the vertical origin, 1/1000 em.
    pub fn vertical_origin(&self, code: u32) -> (f64, f64) {
        match &self.cid {
            Some(c) if self.vertical => {
                let (_, vx, vy) = c.metrics.vertical(self.cid_for_code(code).unwrap_or(0));
                (vx, vy)
            }
            _ => (0.0, 0.0),
        }
    }

    /// The CID of a code (Type0 fonts; `None` for simple fonts or predefined non-Identity
    /// CMaps, whose code → CID tables we do not carry).
    pub fn cid_for_code(&self, code: u32) -> Option<u32> {
        match &self.cid.as_ref()?.coding {
            CidCoding::Identity => Some(code),
            CidCoding::Embedded(map) => map.get(&code).copied(),
            CidCoding::Predefined => None,
        }
    }

    /// Glyph name of a simple font's code (encoding, Differences or the program's encoding).
    pub fn glyph_name(&self, code: u32) -> Option<&str> {
        self.simple.as_ref()?.names.get(code as usize)?.as_deref()
    }

    /// Glyph id in the embedded program for a code, when it can be known.
    pub fn gid_for_code(&self, code: u32) -> Option<u16> {
        if let Some(s) = &self.simple {
            return s.gids.get(code as usize).copied().flatten();
        }
        let c = self.cid.as_ref()?;
        let cid = self.cid_for_code(code)?;
        if let Some(map) = &c.cid_to_gid {
            return map.get(cid as usize).copied();
        }
        if let Some(map) = &c.cff_cid_gid {
            return map.get(&u16::try_from(cid).ok()?).copied();
        }
        u16::try_from(cid).ok()
    }

    /// The characters the embedded program's own Unicode cmap maps to the glyph of
    /// `code`: what the glyph draws, independent of `/ToUnicode`. `None` when that cannot
    /// be known (no program, no glyph id, no Unicode cmap entry for the glyph).
    pub fn program_chars(&self, code: u32) -> Option<Vec<char>> {
        let gid = self.gid_for_code(code)?;
        let chars = self.program.as_ref()?.chars_of_gid(gid);
        (!chars.is_empty()).then_some(chars)
    }

    /// The font's kind.
    pub fn kind(&self) -> FontKind {
        self.kind
    }
    /// `/BaseFont` as written, e.g. `ABCDEF+Calibri-Bold`.
    pub fn base_font(&self) -> &str {
        &self.base_font
    }
    /// The six-letter subset tag, if the name has one.
    pub fn subset_tag(&self) -> Option<&str> {
        descriptor::split_subset_tag(&self.base_font).0
    }
    /// Family name without tag and style, e.g. `Calibri`.
    pub fn family(&self) -> String {
        descriptor::family_of(&self.base_font)
    }
    /// Bold/italic from name and descriptor.
    pub fn style(&self) -> FontStyle {
        descriptor::style_of(&self.base_font, &self.descriptor)
    }

    /// How this font looks, for choosing the nearest installed face: class from the
    /// descriptor's flags (serif also when the name says Roman, Times or Serif), style as
    /// [`Font::style`], the descriptor's x-height, and the mean width of the lowercase
    /// Latin letters it can encode.
    pub fn appearance(&self) -> crate::nearest::Appearance {
        let d = &self.descriptor;
        let style = self.style();
        let name = self.base_font.to_ascii_lowercase();
        let serif = d.flags.serif()
            || [
                "roman", "times", "serif", "garamond", "cmr", "minion", "georgia",
            ]
            .iter()
            .any(|k| name.contains(k) && !name.contains("sans"));
        let widths: Vec<f64> = ('a'..='z')
            .filter_map(|c| self.encode(&c.to_string()).ok())
            .map(|codes| self.width(self.next_code(&codes).0))
            .filter(|w| *w > 0.0)
            .collect();
        crate::nearest::Appearance {
            serif,
            fixed: d.flags.fixed_pitch(),
            bold: style.bold,
            italic: style.italic || d.italic_angle.abs() > 1.0,
            x_height: d.x_height.max(0.0),
            lower_width: if widths.len() >= 5 {
                widths.iter().sum::<f64>() / widths.len() as f64
            } else {
                0.0
            },
        }
    }
    /// The font descriptor's metrics and flags.
    pub fn descriptor(&self) -> &Descriptor {
        &self.descriptor
    }
    /// Glyph space → text space matrix (`[0.001 0 0 0.001 0 0]` except for Type3).
    pub fn font_matrix(&self) -> [f64; 6] {
        self.font_matrix
    }
    /// Whether the document embeds the font program (Type3 glyphs always are).
    pub fn is_embedded(&self) -> bool {
        self.program.is_some() || self.kind == FontKind::Type3
    }
    /// Kind of the embedded program, if any.
    pub fn program_kind(&self) -> Option<ProgramKind> {
        self.program.as_ref().map(|p| p.kind)
    }
    /// Vertical writing mode (a `-V` CMap or `/WMode 1`).
    pub fn is_vertical(&self) -> bool {
        self.vertical
    }
    /// The descriptor's symbolic flag.
    pub fn is_symbolic(&self) -> bool {
        self.descriptor.flags.symbolic()
    }
    /// Whether this is a Type0 (composite) font.
    pub fn is_composite(&self) -> bool {
        self.cid.is_some()
    }
}

/// A Type 0 font's `/Encoding`: its codespace, how its codes map to CIDs, and whether it
/// writes vertically (a predefined CMap by name, or an embedded CMap stream).
fn cid_encoding(doc: &Document, font: &Dictionary) -> (CodeSpace, CidCoding, bool) {
    match obj::get(doc, font, b"Encoding") {
        Some(Object::Name(n)) => {
            let name = String::from_utf8_lossy(n).into_owned();
            let coding = if name.starts_with("Identity") {
                CidCoding::Identity
            } else {
                CidCoding::Predefined
            };
            (predefined_codespace(&name), coding, name.ends_with("-V"))
        }
        Some(Object::Stream(s)) => {
            let cmap = s
                .get_plain_content_with_limit(obj::MAX_STREAM)
                .map(|d| CMap::parse(&d))
                .unwrap_or_default();
            let parent = cmap.use_cmap.clone().unwrap_or_default();
            let space = if cmap.codespace.is_empty() {
                predefined_codespace(&parent)
            } else {
                cmap.codespace.clone()
            };
            let coding = if !cmap.cids.is_empty() {
                CidCoding::Embedded(cmap.cids)
            } else if parent.is_empty() || parent.starts_with("Identity") {
                CidCoding::Identity
            } else {
                CidCoding::Predefined
            };
            let vertical = cmap.vertical
                || parent.ends_with("-V")
                || obj::num(doc, &s.dict, b"WMode") == Some(1.0);
            (space, coding, vertical)
        }
        _ => (CodeSpace::two_byte(), CidCoding::Identity, false),
    }
}
