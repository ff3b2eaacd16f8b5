//! Glyph names ↔ Unicode, following the Adobe Glyph List Specification.
//!
//! The name list itself comes from the `glyph-names` crate (AGLFN, BSD-3-Clause), which only
//! offers char → name; we build the reverse map once. AGLFN leaves out legacy names that real
//! PDF fonts still use (`fi`, `ff`, `nbspace`, `Ohm`...), so a short supplement follows.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Legacy AGL names seen in real fonts that AGLFN does not list.
const SUPPLEMENT: &[(&str, &str)] = &[
    ("ff", "ff"),
    ("fi", "fi"),
    ("fl", "fl"),
    ("ffi", "ffi"),
    ("ffl", "ffl"),
    ("st", "st"),
    ("nbspace", "\u{A0}"),
    ("nonbreakingspace", "\u{A0}"),
    ("sfthyphen", "\u{AD}"),
    ("softhyphen", "\u{AD}"),
    ("middot", "\u{B7}"),
    ("mu1", "\u{B5}"),
    ("Ohm", "\u{2126}"),
    ("increment", "\u{2206}"),
    ("divisionslash", "\u{2215}"),
    ("overscore", "\u{AF}"),
    ("Tcommaaccent", "\u{162}"),
    ("tcommaaccent", "\u{163}"),
    ("commaaccent", "\u{326}"),
    ("apple", "\u{F8FF}"),
    ("registerserif", "\u{AE}"),
    ("copyrightserif", "\u{A9}"),
    ("trademarkserif", "\u{2122}"),
    ("registersans", "\u{AE}"),
    ("copyrightsans", "\u{A9}"),
    ("trademarksans", "\u{2122}"),
    ("radicalex", "\u{F8E5}"),
    ("arrowvertex", "\u{F8E6}"),
    ("arrowhorizex", "\u{F8E7}"),
    ("dotlessj", "\u{237}"),
    ("Euro", "\u{20AC}"),
    ("hyphenminus", "-"),
    ("minus", "\u{2212}"),
    ("bullet", "\u{2022}"),
    ("quotesingle", "'"),
];

fn by_name() -> &'static HashMap<&'static str, String> {
    static MAP: OnceLock<HashMap<&'static str, String>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut m: HashMap<&'static str, String> = glyph_names::GLYPH_NAME_PAIRS
            .iter()
            .map(|(c, n)| (*n, c.to_string()))
            .collect();
        for (n, u) in SUPPLEMENT {
            m.entry(n).or_insert_with(|| (*u).to_string());
        }
        m
    })
}

/// Unicode text for a glyph name, per AGL spec section 2: drop everything after the first
/// period, split at underscores (ligatures), and map each component by the list, `uniXXXX…`
/// (groups of four hex digits, no surrogates) or `uXXXX`–`uXXXXXX`.
pub fn name_to_unicode(name: &str) -> Option<String> {
    let base = name.split('.').next().unwrap_or("");
    if base.is_empty() {
        return None;
    }
    let mut out = String::new();
    for part in base.split('_') {
        out.push_str(&component(part)?);
    }
    Some(out)
}

fn component(part: &str) -> Option<String> {
    if let Some(u) = by_name().get(part) {
        return Some(u.clone());
    }
    if let Some(hex) = part.strip_prefix("uni") {
        if !hex.is_empty()
            && hex.len() % 4 == 0
            && hex
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_lowercase())
        {
            return (0..hex.len())
                .step_by(4)
                .map(|i| {
                    u32::from_str_radix(&hex[i..i + 4], 16)
                        .ok()
                        .and_then(char::from_u32)
                })
                .collect();
        }
    }
    if let Some(hex) = part.strip_prefix('u') {
        if (4..=6).contains(&hex.len())
            && hex
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_lowercase())
        {
            return u32::from_str_radix(hex, 16)
                .ok()
                .and_then(char::from_u32)
                .map(String::from);
        }
    }
    // Not AGL, but ubiquitous in TeX and subset fonts: `g123`/`cid123` carry no meaning, while
    // `a`–`z` single letters are already in the list. Anything else is unknown.
    None
}

/// Glyph names a font might use for `c`, most likely first: the AGLFN name, legacy
/// alternatives, then `uniXXXX` and `uXXXX`.
pub fn names_for_char(c: char) -> Vec<String> {
    let mut names = Vec::with_capacity(4);
    if let Some(n) = glyph_names::glyph_name(c as u32) {
        names.push(n.into_owned());
    }
    for (n, u) in SUPPLEMENT {
        if u.chars().eq(std::iter::once(c)) && !names.iter().any(|x| x == n) {
            names.push((*n).to_string());
        }
    }
    if c == '\u{A0}' {
        names.push("space".into());
    }
    if c == '\u{AD}' {
        names.push("hyphen".into());
    }
    let v = c as u32;
    for n in [format!("uni{v:04X}"), format!("u{v:04X}")] {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// The AGLFN name for one character (falls back to `uniXXXX`/`uXXXXX`). The Latin
/// ligatures, absent from AGLFN, get the names every Type1 font uses for them.
pub fn name_for_char(c: char) -> String {
    if let Some(lig) = ligature_text(c) {
        return lig.to_string();
    }
    glyph_names::glyph_name(c as u32)
        .map_or_else(|| format!("uni{:04X}", c as u32), |n| n.into_owned())
}

/// The Latin presentation-form ligatures U+FB00..U+FB06 as the letters they join. We report
/// ligature glyphs as their letters, like most ToUnicode CMaps do, so search and replace
/// see "office" rather than "o\u{FB03}ce".
pub fn ligature_text(c: char) -> Option<&'static str> {
    match c {
        '\u{FB00}' => Some("ff"),
        '\u{FB01}' => Some("fi"),
        '\u{FB02}' => Some("fl"),
        '\u{FB03}' => Some("ffi"),
        '\u{FB04}' => Some("ffl"),
        '\u{FB06}' => Some("st"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_names() {
        assert_eq!(name_to_unicode("A").as_deref(), Some("A"));
        assert_eq!(name_to_unicode("quoteright").as_deref(), Some("\u{2019}"));
        assert_eq!(name_to_unicode("Euro").as_deref(), Some("€"));
        assert_eq!(name_to_unicode("fi").as_deref(), Some("fi"));
        assert_eq!(name_to_unicode("nosuchglyph"), None);
    }

    #[test]
    fn uni_and_u_forms() {
        assert_eq!(name_to_unicode("uni20AC").as_deref(), Some("€"));
        assert_eq!(name_to_unicode("uni00660066").as_deref(), Some("ff"));
        assert_eq!(name_to_unicode("u1D400").as_deref(), Some("\u{1D400}"));
        assert_eq!(
            name_to_unicode("uni20ac"),
            None,
            "lower-case hex is not AGL"
        );
        assert_eq!(name_to_unicode("uniD835"), None, "surrogates are invalid");
    }

    #[test]
    fn suffix_and_ligature_rules() {
        assert_eq!(name_to_unicode("a.sc").as_deref(), Some("a"));
        assert_eq!(name_to_unicode("f_f_i").as_deref(), Some("ffi"));
        assert_eq!(name_to_unicode("f_i.liga").as_deref(), Some("fi"));
        assert_eq!(name_to_unicode(".notdef"), None);
    }

    #[test]
    fn reverse_names() {
        assert_eq!(names_for_char('a')[0], "a");
        assert!(names_for_char('\u{A0}').contains(&"space".to_string()));
        assert!(names_for_char('€').contains(&"uni20AC".to_string()));
    }
}
