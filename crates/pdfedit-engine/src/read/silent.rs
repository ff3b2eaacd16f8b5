//! Glyphs whose font maps them to no text.
//!
//! A shaping producer (WeasyPrint) writes the whole text of a cluster (an Arabic word's
//! joined letters and marks) into the `/ToUnicode` entry of one glyph and maps each
//! other glyph of the cluster to nothing (`<>`). PDFium, finding no text for those, gives
//! each one its character code as its character, so reading showed "ϲΒϴΒ" between the
//! Arabic words: text that no font says is there, and that no edit can find (our
//! interpreter reads those glyphs as silent, as the font says). Here such a glyph gives
//! no text; its ink belongs to the cluster whose carrier holds the text, so its box goes
//! to that character.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use lopdf::{Dictionary, Document, Object, ObjectId};
use pdf_render::{RawChar, Rect};

/// Form XObjects nested deeper than this are not searched for fonts.
const MAX_FORM_DEPTH: usize = 8;
/// Fonts (and forms) looked at per page, at most: hostile resources stay bounded.
const MAX_VISITS: usize = 512;

/// What a page's fonts of one name map to nothing, and every character they map to.
#[derive(Default)]
struct Maps {
    silent: HashSet<u32>,
    mapped: HashSet<char>,
}

/// Whether the page has a cluster carrier: several characters drawn at one origin (one
/// glyph's `/ToUnicode` entry) beyond a Latin ligature's ("fi", "ffl"). Only such a page
/// can have silent glyphs worth the parse (a cluster's text sits on its carrier).
pub(super) fn has_carrier(chars: &[RawChar]) -> bool {
    let mut run = 0usize;
    let mut plain = true;
    for (i, c) in chars.iter().enumerate() {
        let same = i > 0
            && !c.generated
            && !chars[i - 1].generated
            && (c.origin.0 - chars[i - 1].origin.0).abs() < 0.01
            && (c.origin.1 - chars[i - 1].origin.1).abs() < 0.01;
        if same {
            run += 1;
            plain &= c.ch.is_some_and(|ch| ch.is_ascii());
            if run >= 3 || !plain {
                return true;
            }
        } else {
            run = 0;
            plain = c.ch.is_none_or(|ch| ch.is_ascii());
        }
    }
    false
}

/// `chars` with every glyph its font maps to no text made text-free (`ch: None`), its
/// boxes joined to the carrier of its cluster (the nearest character of the same font
/// before or after the silent run: after it when that one reads right to left, as the
/// carrier of a right-to-left cluster is drawn last). PDFium's generated characters
/// inside a silent run (a space it inferred from the cluster's kerning) go too.
pub(super) fn fold_silent<'a>(
    chars: Cow<'a, [RawChar]>,
    doc: &Document,
    page_id: ObjectId,
) -> Cow<'a, [RawChar]> {
    let maps = page_font_maps(doc, page_id);
    if maps.values().all(|m| m.silent.is_empty()) {
        return chars;
    }
    let is_silent = |c: &RawChar| {
        let Some(ch) = c.ch.filter(|_| !c.generated) else {
            return false;
        };
        maps.get(strip_tag(&c.font))
            .is_some_and(|m| m.silent.contains(&u32::from(ch)) && !m.mapped.contains(&ch))
    };
    let silent: Vec<bool> = chars.iter().map(is_silent).collect();
    if !silent.contains(&true) {
        return chars;
    }
    let mut out = chars.into_owned();
    let mut i = 0;
    while i < out.len() {
        if !silent[i] {
            i += 1;
            continue;
        }
        // The run: silent glyphs, and the generated characters between two of them.
        let mut j = i;
        loop {
            while j < out.len() && silent[j] {
                j += 1;
            }
            let mut k = j;
            while k < out.len() && out[k].generated {
                k += 1;
            }
            if k > j && k < out.len() && silent[k] {
                j = k;
                continue;
            }
            break;
        }
        let font = strip_tag(&out[i].font).to_string();
        let carrier = carrier_of(&out, &silent, i, j, &font);
        let (mut ink, mut loose) = (None::<Rect>, None::<Rect>);
        for c in &mut out[i..j] {
            // Only real glyph boxes: a generated character's box is empty.
            if !c.generated {
                ink = Some(ink.map_or(c.bbox, |r| union(&r, &c.bbox)));
                loose = Some(loose.map_or(c.advance_box, |r| union(&r, &c.advance_box)));
            }
            c.ch = None;
        }
        if let (Some(k), Some(ink), Some(loose)) = (carrier, ink, loose) {
            let c = &mut out[k];
            c.bbox = union(&c.bbox, &ink);
            c.advance_box = union(&c.advance_box, &loose);
        }
        i = j.max(i + 1);
    }
    Cow::Owned(out)
}

/// The character that carries the text of the silent run `i..j` (see [`fold_silent`]).
fn carrier_of(chars: &[RawChar], silent: &[bool], i: usize, j: usize, font: &str) -> Option<usize> {
    let real = |k: &usize| !chars[*k].generated && !silent[*k] && chars[*k].ch.is_some();
    let same_font = |k: &usize| strip_tag(&chars[*k].font) == font;
    let after = (j..chars.len()).find(real).filter(same_font);
    let before = (0..i).rev().find(real).filter(same_font);
    match (before, after) {
        (_, Some(a)) if chars[a].ch.is_some_and(right_to_left) => Some(a),
        (Some(b), _) => Some(b),
        (None, a) => a,
    }
}

/// A letter of a right-to-left script (Hebrew, Arabic, Syriac, Thaana, NKo, their
/// presentation forms).
fn right_to_left(c: char) -> bool {
    matches!(u32::from(c), 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF)
}

fn union(a: &Rect, b: &Rect) -> Rect {
    let mut r = *a;
    r.x0 = a.x0.min(b.x0);
    r.y0 = a.y0.min(b.y0);
    r.x1 = a.x1.max(b.x1);
    r.y1 = a.y1.max(b.y1);
    r
}

/// A font name without its subset tag (`ABCDEF+Arial` → `Arial`).
fn strip_tag(name: &str) -> &str {
    crate::model::fonts::strip_subset(name)
}

/// Per font name (subset tag stripped): the codes the page's fonts of that name map to
/// no text, and every character they map to. Fonts in the page's resources and in the
/// forms it draws.
fn page_font_maps(doc: &Document, page_id: ObjectId) -> HashMap<String, Maps> {
    let mut maps: HashMap<String, Maps> = HashMap::new();
    let Ok((own, inherited)) = doc.get_page_resources(page_id) else {
        return maps;
    };
    let mut stack: Vec<(&Dictionary, usize)> = Vec::new();
    stack.extend(own.map(|d| (d, 0)));
    stack.extend(
        inherited
            .iter()
            .filter_map(|id| doc.get_dictionary(*id).ok())
            .map(|d| (d, 0)),
    );
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut visits = 0;
    while let Some((res, depth)) = stack.pop() {
        for font in entries(doc, res, b"Font") {
            visits += 1;
            if visits > MAX_VISITS {
                return maps;
            }
            if font.1.is_some_and(|id| !seen.insert(id)) {
                continue;
            }
            add_font(doc, font.0, &mut maps);
        }
        if depth >= MAX_FORM_DEPTH {
            continue;
        }
        for (xobject, id) in entries(doc, res, b"XObject") {
            visits += 1;
            if visits > MAX_VISITS {
                return maps;
            }
            if id.is_some_and(|id| !seen.insert(id)) {
                continue;
            }
            let Some(inner) = xobject.get(b"Resources").ok().and_then(|o| dict_of(doc, o)) else {
                continue;
            };
            stack.push((inner.0, depth + 1));
        }
    }
    maps
}

/// A dictionary, with its object id when it is an indirect object.
type Found<'d> = (&'d Dictionary, Option<ObjectId>);

/// The dictionaries under `key` of a resource dictionary.
fn entries<'d>(doc: &'d Document, res: &'d Dictionary, key: &[u8]) -> Vec<Found<'d>> {
    let Some((sub, _)) = res.get(key).ok().and_then(|o| dict_of(doc, o)) else {
        return Vec::new();
    };
    sub.iter().filter_map(|(_, v)| dict_of(doc, v)).collect()
}

/// The dictionary `o` is or refers to (a stream's dictionary for a stream).
fn dict_of<'d>(doc: &'d Document, o: &'d Object) -> Option<Found<'d>> {
    let (id, o) = match o {
        Object::Reference(r) => (Some(*r), doc.get_object(*r).ok()?),
        other => (None, other),
    };
    match o {
        Object::Dictionary(d) => Some((d, id)),
        Object::Stream(s) => Some((&s.dict, id)),
        _ => None,
    }
}

/// Adds what font `font`'s `/ToUnicode` map says to `maps`, under its base name.
fn add_font(doc: &Document, font: &Dictionary, maps: &mut HashMap<String, Maps>) {
    let Some(name) = font
        .get(b"BaseFont")
        .ok()
        .and_then(|o| o.as_name().ok())
        .map(|n| String::from_utf8_lossy(n).into_owned())
    else {
        return;
    };
    let stream = match font.get(b"ToUnicode") {
        Ok(Object::Reference(r)) => doc.get_object(*r).ok().and_then(|o| o.as_stream().ok()),
        Ok(Object::Stream(s)) => Some(s),
        _ => None,
    };
    let Some(data) = stream.and_then(|s| s.get_plain_content().ok()) else {
        return;
    };
    let cmap = pdf_fonts::cmap::CMap::parse(&data);
    let m = maps.entry(strip_tag(&name).to_string()).or_default();
    for (code, (text, _)) in &cmap.unicode {
        if text.chars().all(|c| c == '\0') {
            m.silent.insert(*code);
        } else {
            m.mapped.extend(text.chars());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(c: char, x: f32, font: &str) -> RawChar {
        let r = Rect {
            x0: x,
            y0: 10.0,
            x1: x + 5.0,
            y1: 20.0,
        };
        RawChar {
            index: 0,
            ch: Some(c),
            generated: false,
            bbox: r,
            hyphen: false,
            advance_box: r,
            origin: (x, 20.0),
            font: font.into(),
            size: 10.0,
            weight: None,
            italic: false,
            monospace: false,
            serif: false,
            color: [0; 3],
            angle: 0.0,
            invisible: false,
        }
    }

    #[test]
    fn a_cluster_carrier_is_several_characters_at_one_origin() {
        let lig = [ch('a', 0.0, "F"), ch('f', 5.0, "F"), ch('i', 5.0, "F")];
        assert!(!has_carrier(&lig), "a Latin ligature is not a cluster");
        let arabic = [ch('\u{62D}', 5.0, "F"), ch('\u{64E}', 5.0, "F")];
        assert!(has_carrier(&arabic));
        let long = [
            ch('a', 5.0, "F"),
            ch('b', 5.0, "F"),
            ch('c', 5.0, "F"),
            ch('d', 5.0, "F"),
        ];
        assert!(has_carrier(&long));
    }

    #[test]
    fn a_right_to_left_run_goes_to_the_carrier_after_it() {
        let chars = [
            ch('h', 0.0, "AAAAAA+Latin"),
            ch('\u{3F2}', 5.0, "BBBBBB+Arab"),
            ch('\u{392}', 10.0, "BBBBBB+Arab"),
            ch('\u{62D}', 15.0, "CCCCCC+Arab"),
        ];
        let silent = [false, true, true, false];
        assert_eq!(carrier_of(&chars, &silent, 1, 3, "Arab"), Some(3));
        let latin = [
            ch('a', 0.0, "Arab"),
            ch('\u{3F2}', 5.0, "Arab"),
            ch('b', 10.0, "Arab"),
        ];
        assert_eq!(
            carrier_of(&latin, &[false, true, false], 1, 2, "Arab"),
            Some(0)
        );
    }
}
