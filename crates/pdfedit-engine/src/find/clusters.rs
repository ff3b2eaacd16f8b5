//! Glyphs whose text and drawing do not line up one to one.
//!
//! A redaction match is found in the page's text, but what it removes are glyphs. Three
//! cases break the one-glyph-one-character picture, and a redaction must settle each
//! without leaving the phrase readable:
//!
//! - A glyph whose `/ToUnicode` entry holds more than the match (a ligature "ffi" when
//!   the phrase ends in "f"). The glyph may draw the matched letters, so it goes whole:
//!   a redaction errs on the side of removing.
//! - A glyph whose entry holds text it does not draw. WeasyPrint maps the first glyph of
//!   a line ("h") to the whole preceding Arabic word plus "h". The font program's own
//!   cmap tells what a glyph draws; when it draws none of the matched characters but
//!   draws the rest of its text, the glyph stays and only the matched text leaves its
//!   `/ToUnicode` entry (`unicode_cuts`).
//! - Glyphs with no text at all: a shaped cluster (Arabic letters joined, a base letter
//!   and its marks) whose whole text sits on one glyph while the others map to nothing.
//!   The matched text the carrying glyph does not draw itself is drawn by those silent
//!   neighbours; each next to it (in content order) whose cmap character is one of those
//!   goes with it.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;

use crate::model::text::Line;
use crate::model::PageModel;

/// What a glyph draws according to its font program's own cmap, by glyph index; `None`
/// when that cannot be known.
pub(crate) type DrawnChars<'a> = &'a mut dyn FnMut(usize) -> Option<Vec<char>>;

/// Folds characters to their compatibility forms (Arabic presentation forms to letters,
/// ligature code points to their letters), dropping white space.
pub(crate) fn fold(chars: &[char]) -> Vec<char> {
    let mut out: Vec<char> = Vec::new();
    for c in chars {
        for f in c.to_string().nfkc() {
            if !f.is_whitespace() && !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// The byte range of `line.text` drawn by glyph `g` around byte `at`.
fn glyph_bytes(line: &Line, g: usize, at: usize) -> (usize, usize) {
    let mut s = at;
    while s > 0 && line.byte_glyph[s - 1] == Some(g) {
        s -= 1;
    }
    let mut e = at;
    while e < line.byte_glyph.len() && line.byte_glyph[e] == Some(g) {
        e += 1;
    }
    (s, e)
}

/// The glyphs a redaction of bytes `range` of `line` removes, and the glyphs that stay
/// but lose text from their `/ToUnicode` entry (see the module docs).
pub(crate) fn settle(
    page: &PageModel,
    line: &Line,
    range: (usize, usize),
    mut glyphs: Vec<usize>,
    drawn: DrawnChars<'_>,
) -> (Vec<usize>, Vec<(usize, String)>) {
    let (s, e) = range;
    let mut memo: HashMap<usize, Option<Vec<char>>> = HashMap::new();
    let mut drawn_by = |g: usize| -> Option<Vec<char>> {
        memo.entry(g)
            .or_insert_with(|| drawn(g).map(|c| fold(&c)).filter(|c| !c.is_empty()))
            .clone()
    };
    // Per glyph of the match: the matched characters it carries.
    let mut carried: Vec<(usize, Vec<char>)> = Vec::new();
    let mut cuts = Vec::new();
    for &g in &glyphs.clone() {
        let at = line.byte_glyph[s..e]
            .iter()
            .position(|x| *x == Some(g))
            .map_or(s, |p| s + p);
        let (gs, ge) = glyph_bytes(line, g, at);
        let matched: Vec<char> = line.text[gs.max(s)..ge.min(e)].chars().collect();
        // The glyph's own text must be what the line shows for it: the rest becomes its
        // new text map entry.
        let whole = page.glyphs.glyphs[g]
            .unicode
            .as_deref()
            .is_some_and(|u| crate::model::text::fold_forms(u) == line.text[gs..ge]);
        if (gs < s || ge > e) && whole {
            let rest: String =
                format!("{}{}", &line.text[gs..s.max(gs)], &line.text[e.min(ge)..ge]);
            let rest_chars: Vec<char> = rest.chars().collect();
            if let Some(d) = drawn_by(g) {
                let draws = |cs: &[char]| fold(cs).iter().any(|c| d.contains(c));
                if !draws(&matched) && draws(&rest_chars) {
                    glyphs.retain(|x| *x != g);
                    cuts.push((g, rest));
                    continue;
                }
            }
        }
        carried.push((g, matched));
    }
    // Silent neighbours of a glyph carrying matched text it does not draw itself.
    let all = &page.glyphs.glyphs;
    // No text, or only NUL / control characters (an empty `<>` target reads as NUL).
    let silent = |n: usize| {
        all[n]
            .unicode
            .as_deref()
            .is_none_or(|t| t.chars().all(char::is_control))
    };
    let mut absorbed = Vec::new();
    for (g, matched) in carried {
        // Only a glyph carrying more than one character can stand for a cluster.
        if matched.len() < 2 {
            continue;
        }
        let Some(own) = drawn_by(g) else { continue };
        // The matched characters, folded, each counted once per occurrence.
        let mut owed: Vec<char> = matched
            .iter()
            .flat_map(|c| c.to_string().nfkc().collect::<Vec<_>>())
            .filter(|f| !f.is_whitespace())
            .collect();
        if let Some(p) = owed.iter().position(|c| own.contains(c)) {
            owed.remove(p);
        }
        for step in [-1isize, 1] {
            let mut n = g as isize + step;
            while !owed.is_empty() && n >= 0 && (n as usize) < all.len() {
                let k = n as usize;
                if glyphs.contains(&k) || absorbed.contains(&k) || !silent(k) {
                    break;
                }
                let Some(d) = drawn_by(k) else { break };
                let Some(p) = owed.iter().position(|c| d.contains(c)) else {
                    break;
                };
                owed.remove(p);
                absorbed.push(k);
                n += step;
            }
        }
    }
    glyphs.extend(absorbed);
    (glyphs, cuts)
}

/// Whether glyph `g`, whose text the match of bytes `range` of `line` cuts, draws matched
/// text and none of the text left out, by its font program's own cmap, and stands alone
/// (no silent neighbour in content order whose ink would be the left-out text: then it
/// carries a shaped cluster, of which a replace cannot change a part). WeasyPrint maps
/// the first glyph of a line ("h") to the whole Arabic word before it plus "h": a
/// replace of "habibi" replaces the "h" glyph, and the word it does not draw leaves the
/// page's text with it (the Arabic glyphs, which draw that word, carry it too).
pub(crate) fn draws_only_the_match(
    page: &PageModel,
    line: &Line,
    (s, e): (usize, usize),
    g: usize,
    drawn: DrawnChars<'_>,
) -> bool {
    let at = line.byte_glyph[s..e]
        .iter()
        .position(|x| *x == Some(g))
        .map_or(s, |p| s + p);
    let (gs, ge) = glyph_bytes(line, g, at);
    let inside: Vec<char> = line.text[gs.max(s)..ge.min(e)].chars().collect();
    let outside: Vec<char> = line.text[gs..s.max(gs)]
        .chars()
        .chain(line.text[e.min(ge)..ge].chars())
        .collect();
    let Some(own) = drawn(g).map(|c| fold(&c)).filter(|c| !c.is_empty()) else {
        return false;
    };
    let all = &page.glyphs.glyphs;
    let silent = |n: usize| {
        all[n]
            .unicode
            .as_deref()
            .is_none_or(|t| t.chars().all(char::is_control))
    };
    let alone = [g.checked_sub(1), Some(g + 1)]
        .into_iter()
        .flatten()
        .filter(|&n| n < all.len() && all[n].stream == all[g].stream)
        .all(|n| !silent(n));
    alone
        && fold(&inside).iter().any(|c| own.contains(c))
        && !fold(&outside).iter().any(|c| own.contains(c))
}

/// For a replace or delete whose match cuts a glyph's text: the glyphs of a shaped
/// cluster that draws the match whole, or `None`. WeasyPrint maps a shaped Arabic word's
/// whole text (and the space after it) to one of its glyphs and nothing to the others:
/// the glyph carrying the match and its silent neighbours that draw the rest of it (by
/// their font program's cmap, [`settle`]) are the word. The text the cut leaves out must
/// be white space, no glyph may lose part of its `/ToUnicode` entry, and every letter of
/// the match must be drawn by one of the glyphs taken.
pub(crate) fn shaped_cluster(
    page: &PageModel,
    line: &Line,
    (s, e): (usize, usize),
    glyphs: Vec<usize>,
    drawn: DrawnChars<'_>,
) -> Option<Vec<usize>> {
    let (&first, &last) = (glyphs.first()?, glyphs.last()?);
    let (gs, _) = glyph_bytes(line, first, s);
    let (_, ge) = glyph_bytes(line, last, e.saturating_sub(1).max(s));
    let left_out = format!("{}{}", &line.text[gs..s], &line.text[e..ge.max(e)]);
    if !left_out.chars().all(char::is_whitespace) {
        return None;
    }
    let before = glyphs.len();
    let (taken, cuts) = settle(page, line, (s, e), glyphs, &mut *drawn);
    if !cuts.is_empty() || taken.len() <= before {
        return None;
    }
    let mut ink: Vec<char> = Vec::new();
    for &g in &taken {
        ink.extend(fold(&drawn(g)?));
    }
    let wanted: Vec<char> = line.text[s..e].chars().collect();
    fold(&wanted)
        .iter()
        .all(|c| ink.contains(c))
        .then_some(taken)
}

/// Rewrites the `/ToUnicode` maps behind `cuts` (glyph index, text left) of `model`'s
/// glyphs: each font gets a new map with those codes' entries replaced and every other
/// entry as it was. Returns one description per font changed. Fonts without a
/// `/ToUnicode` stream or given inline are refused: the text came from elsewhere, and
/// the redaction fails closed.
pub(crate) fn rewrite_text_maps(
    doc: &mut lopdf::Document,
    model: &PageModel,
    cuts: &[(usize, String)],
) -> Result<Vec<String>, String> {
    use pdf_content::FontObject;
    use std::collections::BTreeMap;
    let glyphs = &model.glyphs.glyphs;
    let mut by_font: BTreeMap<lopdf::ObjectId, BTreeMap<u32, String>> = BTreeMap::new();
    for (g, text) in cuts {
        let FontObject::Reference(id) = glyphs[*g].font.object else {
            return Err("a glyph whose text map must change is in an inline font".into());
        };
        by_font
            .entry(id)
            .or_default()
            .insert(glyphs[*g].code, text.clone());
    }
    let mut out = Vec::new();
    for (font_id, overrides) in by_font {
        let font = doc.get_dictionary(font_id).map_err(|e| e.to_string())?;
        let name = font
            .get(b"BaseFont")
            .and_then(lopdf::Object::as_name)
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default();
        let data = font
            .get(b"ToUnicode")
            .ok()
            .and_then(|o| match o {
                lopdf::Object::Reference(r) => doc.get_object(*r).ok(),
                other => Some(other),
            })
            .and_then(|o| o.as_stream().ok())
            .and_then(|s| s.get_plain_content().ok())
            .ok_or_else(|| format!("font {name} has no readable /ToUnicode map to correct"))?;
        let cmap = pdf_fonts::cmap::CMap::parse(&data);
        let mut entries = cmap.unicode.clone();
        let mut said = Vec::new();
        for (code, text) in &overrides {
            let Some((old, len)) = entries.get(code).cloned() else {
                return Err(format!(
                    "font {name}: code {code:X} is not in its /ToUnicode map"
                ));
            };
            said.push(format!(
                "<{}> {:?} -> {:?}",
                hex_code(*code, len),
                old,
                text
            ));
            entries.insert(*code, (text.clone(), len));
        }
        let bytes = write_cmap(&cmap.codespace, &entries);
        let mut stream = lopdf::Stream::new(lopdf::Dictionary::new(), bytes);
        let _ = stream.compress();
        let new_id = doc.add_object(stream);
        doc.get_dictionary_mut(font_id)
            .map_err(|e| e.to_string())?
            .set("ToUnicode", new_id);
        out.push(format!(
            "text map (/ToUnicode) of font {name}: {}",
            said.join(", ")
        ));
    }
    Ok(out)
}

fn hex_code(code: u32, len: usize) -> String {
    pdf_fonts::cmap::code_bytes(code, len)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect()
}

/// A ToUnicode CMap with `codespace` (or, when the original declared none, one range per
/// code length used) and one bfchar entry per code.
fn write_cmap(
    codespace: &pdf_fonts::cmap::CodeSpace,
    entries: &HashMap<u32, (String, usize)>,
) -> Vec<u8> {
    use std::fmt::Write;
    let mut ranges: Vec<(String, String)> = codespace
        .ranges()
        .iter()
        .map(|r| {
            let hex = |b: &[u8; 4]| b[..r.len].iter().map(|x| format!("{x:02X}")).collect();
            (hex(&r.lo), hex(&r.hi))
        })
        .collect();
    if ranges.is_empty() {
        let mut lens: Vec<usize> = entries.values().map(|e| e.1).collect();
        lens.sort_unstable();
        lens.dedup();
        ranges = lens
            .into_iter()
            .map(|l| ("00".repeat(l), "FF".repeat(l)))
            .collect();
    }
    let mut s = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
         /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n",
    );
    let _ = writeln!(s, "{} begincodespacerange", ranges.len());
    for (lo, hi) in &ranges {
        let _ = writeln!(s, "<{lo}> <{hi}>");
    }
    s.push_str("endcodespacerange\n");
    let mut codes: Vec<(&u32, &(String, usize))> = entries.iter().collect();
    codes.sort_unstable_by_key(|(c, (_, l))| (*l, **c));
    for block in codes.chunks(100) {
        let _ = writeln!(s, "{} beginbfchar", block.len());
        for (code, (text, len)) in block {
            let utf16: String = text.encode_utf16().map(|u| format!("{u:04X}")).collect();
            let _ = writeln!(s, "<{}> <{utf16}>", hex_code(**code, *len));
        }
        s.push_str("endbfchar\n");
    }
    s.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    s.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find::{visual_order, Matcher};

    #[test]
    fn presentation_forms_fold_to_letters() {
        // Initial hah, medial beh, final yeh as a subset font's cmap maps them.
        assert_eq!(fold(&['\u{FEA3}']), ['\u{062D}']);
        assert_eq!(
            fold(&['\u{FE92}', '\u{FEF2}', ' ']),
            ['\u{0628}', '\u{064A}']
        );
        assert_eq!(fold(&['\u{FB01}']), ['f', 'i']);
    }

    #[test]
    fn right_to_left_phrases_are_also_searched_reversed() {
        let Some(Matcher::Exact(v)) = visual_order(&Matcher::Exact("حَبيبي".into())) else {
            panic!("an Arabic phrase has a visual order");
        };
        assert_eq!(v, "يبيبَح");
        assert!(visual_order(&Matcher::Exact("habibi".into())).is_none());
    }
}
