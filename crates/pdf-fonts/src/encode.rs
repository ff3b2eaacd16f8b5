//! Coverage and re-encoding: can this font show this text with glyphs it really has?
//!
//! Policy, in one place:
//! - A code qualifies for a character when the font maps the code to exactly that text
//!   (ToUnicode, else encoding/glyph name, else the program's cmap) and the code's glyph
//!   exists in the embedded program (subsets carry only the glyphs they used).
//! - Non-embedded fonts: the viewer supplies the glyphs, so an expressible code is enough.
//! - When the program cannot tell (unparseable, or a predefined CJK CMap whose code → CID
//!   table we lack), a code counts only if the document's own ToUnicode lists it: producers
//!   write ToUnicode for the glyphs they embedded, so that is the best evidence we have.
//! - Single characters are preferred; a multi-character target (a ligature glyph mapped to
//!   "ffi") is used only when the single characters are not available.

use std::collections::HashMap;

use crate::cmap::code_bytes;
use crate::font::{CidCoding, Font};
use crate::program::ProgramKind;
use crate::{Error, Result};

/// Longest multi-character target we try to match (ligatures are 2–3 chars in practice).
const MAX_TARGET_CHARS: usize = 4;

impl Font {
    /// Encodes `text` as this font's string bytes using only codes whose glyph exists.
    /// Fails with [`Error::Missing`] listing every character that cannot be shown.
    pub fn encode(&self, text: &str) -> Result<Vec<u8>> {
        let reverse = self.reverse_map();
        let chars: Vec<char> = text.chars().collect();
        let mut out = Vec::with_capacity(chars.len() * 2);
        let mut missing: Vec<char> = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            if let Some((code, len)) = self.code_for(&reverse, &chars[i].to_string()) {
                out.extend(code_bytes(code, len));
                i += 1;
                continue;
            }
            let lig = (2..=MAX_TARGET_CHARS.min(chars.len() - i))
                .rev()
                .find_map(|n| {
                    let s: String = chars[i..i + n].iter().collect();
                    self.code_for(&reverse, &s).map(|c| (c, n))
                });
            match lig {
                Some(((code, len), n)) => {
                    out.extend(code_bytes(code, len));
                    i += n;
                }
                None => {
                    if !missing.contains(&chars[i]) {
                        missing.push(chars[i]);
                    }
                    i += 1;
                }
            }
        }
        if missing.is_empty() {
            Ok(out)
        } else {
            Err(Error::Missing { chars: missing })
        }
    }

    /// Whether [`Font::encode`] would succeed for this one character.
    pub fn has_glyph_for(&self, c: char) -> bool {
        self.code_for(&self.reverse_map(), &c.to_string()).is_some()
    }

    /// Whether the glyph of `code` exists in the embedded program: `Some(true/false)` when the
    /// program tells, `None` when it cannot (not embedded, unparseable, unknown code → CID).
    pub fn code_has_glyph(&self, code: u32) -> Option<bool> {
        if let Some(s) = &self.simple {
            return s.present.get(code as usize).copied().flatten();
        }
        let p = self.program.as_ref()?;
        let gid = self.gid_for_code(code)?;
        let blank = self
            .unicode_str(code)
            .is_some_and(|t| t.chars().all(char::is_whitespace));
        p.gid_has_glyph(gid, blank)
    }

    /// Outline bounds of a code's glyph in glyph space (1/1000 em; Type3: through the
    /// FontMatrix), when the program is parseable. Type1 programs and Type3 fonts give `None`.
    pub fn glyph_bbox(&self, code: u32) -> Option<[f64; 4]> {
        let p = self.program.as_ref()?;
        if p.kind == ProgramKind::Type1 {
            return None;
        }
        p.gid_bbox(self.gid_for_code(code)?)
    }

    /// Text → candidate `(code, byte length)`s, best first: codes of the ToUnicode map and
    /// the encoding, then (Type0) codes reached through the program's cmap.
    fn reverse_map(&self) -> HashMap<String, Vec<(u32, usize)>> {
        let mut rev: HashMap<String, Vec<(u32, usize)>> = HashMap::new();
        let mut push = |text: &str, code: u32, len: usize| {
            let v = rev.entry(text.to_string()).or_default();
            if !v.iter().any(|(c, _)| *c == code) {
                v.push((code, len));
            }
        };
        if self.simple.is_some() {
            for code in 0..256u32 {
                if let Some(t) = self.unicode_str(code) {
                    push(t, code, 1);
                }
            }
        } else {
            let mut tu: Vec<(&u32, &(String, usize))> = self.to_unicode.iter().collect();
            tu.sort_by_key(|(c, _)| **c);
            for (code, (text, len)) in tu {
                push(text, *code, *len);
            }
        }
        rev
    }

    fn code_for(
        &self,
        rev: &HashMap<String, Vec<(u32, usize)>>,
        text: &str,
    ) -> Option<(u32, usize)> {
        let listed = rev.get(text).map(Vec::as_slice).unwrap_or(&[]);
        let usable = |code: u32| match self.code_has_glyph(code) {
            Some(ok) => ok,
            None => !self.is_embedded() || self.to_unicode.contains_key(&code),
        };
        if let Some(found) = listed.iter().copied().find(|(c, _)| usable(*c)) {
            return Some(found);
        }
        // Type0: characters the document never showed may still be in the program's cmap.
        let mut chars = text.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return None;
        };
        let code = self.code_via_program(c)?;
        // A code the ToUnicode maps to other text would render right but extract wrong.
        // An empty entry (`<>`, as WeasyPrint writes for the glyphs of a shaped Arabic
        // word) says nothing: readers take the program's cmap for it.
        let other = |t: &str| t != text && !t.chars().all(|c| c == '\0');
        if self.to_unicode.get(&code).is_some_and(|(t, _)| other(t)) || !usable(code) {
            return None;
        }
        let len = self.codespace.code_len(code).unwrap_or(2);
        Some((code, len))
    }

    /// char → GID (program cmap) → CID (CIDToGIDMap / CFF charset reversed) → code (CMap).
    fn code_via_program(&self, c: char) -> Option<u32> {
        let cid_map = self.cid.as_ref()?;
        let p = self.program.as_ref()?;
        let gid = p.gid_for_char(c)?;
        let cid = if let Some(map) = &cid_map.cid_to_gid {
            map.iter().position(|g| *g == gid)? as u32
        } else if let Some(map) = &cid_map.cff_cid_gid {
            u32::from(*map.iter().find(|(_, g)| **g == gid)?.0)
        } else {
            u32::from(gid)
        };
        match &cid_map.coding {
            CidCoding::Identity => Some(cid),
            CidCoding::Embedded(map) => map
                .iter()
                .filter(|(_, v)| **v == cid)
                .map(|(k, _)| *k)
                .min(),
            CidCoding::Predefined => None,
        }
    }
}
