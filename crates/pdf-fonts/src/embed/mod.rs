//! Embedding a substitute font (metric twin or look-alike) as a new subset Type0 font.
//!
//! The font is written as Type0 / Identity-H over a CIDFontType2 (glyf outlines, FontFile2)
//! or CIDFontType0 (CFF outlines, FontFile3 /OpenType) descendant. CIDs are the glyph IDs
//! of the subset program: glyph `i` of the subset has CID `i`, and CIDToGIDMap is
//! /Identity. New glyphs are only ever appended, so a CID once written into a content
//! stream keeps its meaning when a later edit adds glyphs: [`EmbeddedFont::add_text`]
//! rebuilds the program, /W, ToUnicode and the subset tag in the same objects.
//! The ToUnicode CMap doubles as the record of which glyph each CID is, which is how
//! [`EmbeddedFont::open`] picks up a font embedded by an earlier request.

mod objects;
mod program;
mod to_unicode;

pub use program::{Metrics, Outlines};

use lopdf::{Document, ObjectId};
use program::Program;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What can go wrong while embedding.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The font file could not be read.
    #[error("cannot read font file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The bytes are not an OpenType font we can embed.
    #[error("unusable font program: {0}")]
    BadFont(String),
    /// Characters with no glyph (in the font file, or for `encode`, in the subset so far).
    #[error("no glyph for {}", format_chars(.chars))]
    MissingGlyphs {
        /// The characters, in order of first appearance, without repeats.
        chars: Vec<char>,
    },
    /// The subsetter refused the font.
    #[error("subsetting failed: {0}")]
    Subset(String),
    /// More glyphs than 2-byte CIDs can address.
    #[error("more than 65535 glyphs in one subset")]
    TooManyGlyphs,
    /// `open` was given an object that is not a font this module embedded.
    #[error("object {0:?} is not a font embedded by pdfedit: {1}")]
    NotEmbeddedByUs(ObjectId, &'static str),
}

fn format_chars(chars: &[char]) -> String {
    chars
        .iter()
        .map(|c| format!("{c:?} (U+{:04X})", u32::from(*c)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Result alias for this module.
pub type Result<T> = std::result::Result<T, EmbedError>;

/// Object ids of the five objects that make up an embedded font.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FontObjects {
    /// The Type0 font dictionary (what a page's /Font resource points to).
    pub font: ObjectId,
    /// The CIDFont descendant.
    pub descendant: ObjectId,
    /// The FontDescriptor.
    pub descriptor: ObjectId,
    /// The FontFile2 / FontFile3 stream.
    pub program: ObjectId,
    /// The ToUnicode stream.
    pub to_unicode: ObjectId,
}

/// A Type0 font this module embedded, with what is needed to encode text in it.
#[derive(Debug, Clone)]
pub struct EmbeddedFont {
    /// The Type0 font dictionary.
    pub font_id: ObjectId,
    /// `/BaseFont`, e.g. `QWERTY+LiberationSans` (the tag changes when glyphs are added).
    pub base_font: String,
    /// All object ids.
    pub objects: FontObjects,
    data: Arc<Vec<u8>>,
    /// Original glyph ids in CID order; CID = index + 1.
    glyphs: Vec<u16>,
    /// Text of each CID (index + 1), for ToUnicode.
    chars: Vec<char>,
    /// char → CID.
    cids: HashMap<char, u16>,
    /// Advance per CID (index = CID, CID 0 is .notdef), 1000-unit glyph space.
    widths: Vec<f32>,
}

/// Embed `font_data` (an OpenType/TrueType file) into `doc` as a subset Type0 font holding
/// the glyphs of `text`. Fails with [`EmbedError::MissingGlyphs`] listing every character
/// the font has no glyph for.
pub fn embed_font(doc: &mut Document, font_data: Vec<u8>, text: &str) -> Result<EmbeddedFont> {
    let mut font = EmbeddedFont {
        font_id: (0, 0),
        base_font: String::new(),
        objects: objects::reserve(doc),
        data: Arc::new(font_data),
        glyphs: Vec::new(),
        chars: Vec::new(),
        cids: HashMap::new(),
        widths: Vec::new(),
    };
    font.font_id = font.objects.font;
    if let Err(e) = font.add_text(doc, text) {
        // Leave no placeholder objects behind in a document the caller keeps.
        let o = font.objects;
        for id in [o.font, o.descendant, o.descriptor, o.program, o.to_unicode] {
            doc.objects.remove(&id);
        }
        return Err(e);
    }
    Ok(font)
}

/// [`embed_font`] reading the font from a file (e.g. a [`crate::registry::Resolved`] path).
pub fn embed_font_file(doc: &mut Document, path: &Path, text: &str) -> Result<EmbeddedFont> {
    let data = std::fs::read(path).map_err(|source| EmbedError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    embed_font(doc, data, text)
}

impl EmbeddedFont {
    /// Pick up a font embedded earlier (possibly by another request) from its Type0
    /// dictionary, given the same font file it was made from.
    pub fn open(doc: &Document, font_id: ObjectId, font_data: Vec<u8>) -> Result<EmbeddedFont> {
        let (objects, base_font, cmap) = objects::locate(doc, font_id)?;
        let mut font = EmbeddedFont {
            font_id,
            base_font,
            objects,
            data: Arc::new(font_data),
            glyphs: Vec::new(),
            chars: Vec::new(),
            cids: HashMap::new(),
            widths: Vec::new(),
        };
        let program = Program::parse(&font.data)?;
        let mut pairs = to_unicode::read(&cmap);
        pairs.sort_by_key(|&(cid, _)| cid);
        for (expected, &(cid, c)) in (1u16..).zip(&pairs) {
            let gid = program.glyph(c);
            match gid {
                Some(gid) if cid == expected => {
                    font.glyphs.push(gid);
                    font.chars.push(c);
                    font.cids.entry(c).or_insert(cid);
                }
                _ => {
                    return Err(EmbedError::NotEmbeddedByUs(
                        font_id,
                        "ToUnicode does not match the font file",
                    ))
                }
            }
        }
        font.widths = std::iter::once(program.advance(0))
            .chain(font.glyphs.iter().map(|&g| program.advance(g)))
            .collect();
        Ok(font)
    }

    /// Make sure every character of `text` has a CID, rebuilding the subset program, /W,
    /// ToUnicode and the subset tag in place when glyphs had to be added.
    pub fn add_text(&mut self, doc: &mut Document, text: &str) -> Result<()> {
        let data = Arc::clone(&self.data);
        let program = Program::parse(&data)?;
        // All or nothing: check every character before the subset state changes.
        let mut missing = Vec::new();
        for c in text.chars() {
            if !self.cids.contains_key(&c) && !missing.contains(&c) && program.glyph(c).is_none() {
                missing.push(c);
            }
        }
        if !missing.is_empty() {
            return Err(EmbedError::MissingGlyphs { chars: missing });
        }
        let mut added = false;
        for c in text.chars() {
            if self.cids.contains_key(&c) {
                continue;
            }
            let Some(gid) = program.glyph(c) else {
                continue;
            };
            // Two characters drawn by one glyph (space and no-break space) share its CID;
            // ToUnicode keeps the first.
            let cid = match self.glyphs.iter().position(|&g| g == gid) {
                Some(i) => i + 1,
                None => {
                    self.glyphs.push(gid);
                    self.chars.push(c);
                    added = true;
                    self.glyphs.len()
                }
            };
            self.cids.insert(
                c,
                u16::try_from(cid).map_err(|_| EmbedError::TooManyGlyphs)?,
            );
        }
        if added || self.base_font.is_empty() {
            if self.glyphs.len() >= usize::from(u16::MAX) {
                return Err(EmbedError::TooManyGlyphs);
            }
            self.widths = std::iter::once(program.advance(0))
                .chain(self.glyphs.iter().map(|&g| program.advance(g)))
                .collect();
            let subset = program.subset(&self.glyphs)?;
            let metrics = program.metrics();
            self.base_font = format!("{}+{}", subset_tag(&self.glyphs), metrics.postscript_name);
            objects::write(
                doc,
                &self.objects,
                &objects::Parts {
                    base_font: &self.base_font,
                    outlines: program.outlines(),
                    metrics: &metrics,
                    program: subset,
                    widths: &self.widths,
                    to_unicode: to_unicode::write(&self.chars),
                },
            );
        }
        Ok(())
    }

    /// The 2-byte big-endian CIDs for `text`, for a Tj/TJ string in this font. Characters
    /// not yet in the subset are listed in [`EmbedError::MissingGlyphs`] (see `add_text`).
    pub fn encode(&self, text: &str) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(text.len() * 2);
        let mut missing = Vec::new();
        for c in text.chars() {
            match self.cids.get(&c) {
                Some(cid) => out.extend_from_slice(&cid.to_be_bytes()),
                None if !missing.contains(&c) => missing.push(c),
                None => {}
            }
        }
        if missing.is_empty() {
            Ok(out)
        } else {
            Err(EmbedError::MissingGlyphs { chars: missing })
        }
    }

    /// Advance of a CID in 1000-unit glyph space (0 for a CID not in the subset).
    pub fn width(&self, cid: u16) -> f32 {
        self.widths.get(usize::from(cid)).copied().unwrap_or(0.0)
    }

    /// Advance of a whole text in 1000-unit glyph space (characters without a CID count 0).
    pub fn text_width(&self, text: &str) -> f32 {
        text.chars()
            .filter_map(|c| self.cids.get(&c))
            .map(|&cid| self.width(cid))
            .sum()
    }

    /// Number of glyphs in the subset besides .notdef.
    pub fn glyph_count(&self) -> usize {
        self.glyphs.len()
    }
}

/// Six upper-case letters from a hash of the glyph list (PDF 32000 9.6.4: the tag should
/// differ between subsets). FNV-1a, because std's hasher is not stable across releases and
/// the same glyph set should give the same tag on every server.
fn subset_tag(glyphs: &[u16]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for g in glyphs {
        for b in g.to_be_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    (0..6)
        .map(|_| {
            let letter = char::from(b'A' + (h % 26) as u8);
            h /= 26;
            letter
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subset_tag_is_six_capitals_and_depends_on_the_glyphs() {
        let a = subset_tag(&[3, 4, 5]);
        assert_eq!(a.len(), 6);
        assert!(a.bytes().all(|b| b.is_ascii_uppercase()));
        assert_eq!(a, subset_tag(&[3, 4, 5]));
        assert_ne!(a, subset_tag(&[3, 4, 6]));
    }

    #[test]
    fn missing_glyph_message_names_the_characters() {
        let e = EmbedError::MissingGlyphs {
            chars: vec!['中', 'x'],
        };
        assert_eq!(e.to_string(), "no glyph for '中' (U+4E2D), 'x' (U+0078)");
    }
}
