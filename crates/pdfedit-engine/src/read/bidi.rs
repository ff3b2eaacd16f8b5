//! Right-to-left text (Arabic, Hebrew) read in logical order, as a user types it.
//!
//! PDFium's page text is not in any one order for right-to-left script: per line it
//! reverses each run of strong right-to-left characters of the content's text on its
//! own, and a mark (a haraka, class NSM) or a space breaks those runs, so a word drawn
//! glyph by glyph comes out scrambled ("بيبيَح"), and a glyph whose `/ToUnicode` maps to
//! a whole word has its letters reversed around the mark ("حَيبيب").
//!
//! Reading therefore puts a line's right-to-left glyphs in *visual* order itself, from
//! their boxes (left to right, each mark right after the letter it sits on), before the
//! spans are built ([`visual_order`]); the span builder then sees ordinary left-to-right
//! glyphs. Each span's text is turned to logical order at the end
//! ([`logical_text`]): each right-to-left run's clusters (a letter and its marks)
//! reversed. A glyph that maps to several characters keeps them in its `/ToUnicode`
//! order: PDFium's reversal is undone inside it, and it is stored cluster-reversed so the
//! final reversal restores it. Left-to-right text and digits are left as they are.

use std::borrow::Cow;

use pdf_render::RawChar;
use unicode_bidi::{bidi_class, BidiClass};

/// Below this code point (Hebrew's block) no character is of bidi class R or AL, so
/// Latin, Greek and Cyrillic text skips the class table's search.
const FIRST_RTL: u32 = 0x0590;

/// A strong right-to-left character (bidi class R or AL).
fn strong_rtl(ch: char) -> bool {
    u32::from(ch) >= FIRST_RTL && matches!(bidi_class(ch), BidiClass::R | BidiClass::AL)
}

/// A non-spacing mark (a haraka): it belongs to the letter before it.
fn mark(ch: char) -> bool {
    bidi_class(ch) == BidiClass::NSM
}

/// Whether `text` has any right-to-left character (nothing to do otherwise).
fn has_rtl(mut chars: impl Iterator<Item = char>) -> bool {
    chars.any(strong_rtl)
}

/// Reverses the clusters (a character and the marks after it) of `s` in place.
fn reverse_clusters(s: &mut [char]) {
    let mut clusters: Vec<&[char]> = Vec::new();
    let mut start = 0;
    for i in 1..=s.len() {
        if i == s.len() || !mark(s[i]) {
            clusters.push(&s[start..i]);
            start = i;
        }
    }
    let out: Vec<char> = clusters.into_iter().rev().flatten().copied().collect();
    s.copy_from_slice(&out);
}

/// The maximal right-to-left runs of `s`: from a strong right-to-left character to the
/// last strong right-to-left character or mark before a character that is neither (nor
/// a space between two such), as half-open index ranges.
fn rtl_runs(s: &[char]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if !strong_rtl(s[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i + 1;
        let mut j = i + 1;
        while j < s.len() {
            let c = s[j];
            if strong_rtl(c) || mark(c) {
                end = j + 1;
            } else if !(c == ' ' || bidi_class(c) == BidiClass::WS) {
                break;
            }
            j += 1;
        }
        runs.push((start, end));
        i = end.max(start + 1);
    }
    runs
}

/// `text` (in visual order, as [`visual_order`] lays the glyphs) in logical order: each
/// right-to-left run's clusters reversed.
pub(crate) fn logical_text(text: &mut String) {
    if !has_rtl(text.chars()) {
        return;
    }
    let mut chars: Vec<char> = text.chars().collect();
    for (a, b) in rtl_runs(&chars) {
        reverse_clusters(&mut chars[a..b]);
    }
    *text = chars.into_iter().collect();
}

/// What a unit of the character stream is for the reordering.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A glyph of right-to-left text (no left-to-right letter in it).
    Rtl,
    /// A glyph of marks only.
    Mark,
    /// A space (a space glyph or one PDFium inferred).
    Space,
    /// Anything else: ends a right-to-left run.
    Other,
}

/// One glyph's characters (several when its `/ToUnicode` maps it to several, all with
/// the glyph's box), or one generated character: `chars[start..end]`.
struct Unit {
    start: usize,
    end: usize,
    kind: Kind,
}

/// Whether `b` comes from the same glyph as `a`: PDFium gives each character of a
/// glyph's `/ToUnicode` text the glyph's origin (its box may have grown since, when the
/// silent glyphs of its cluster were folded into it, see `silent`).
fn same_glyph(a: &RawChar, b: &RawChar) -> bool {
    !a.generated
        && !b.generated
        && (a.origin.0 - b.origin.0).abs() < 0.01
        && (a.origin.1 - b.origin.1).abs() < 0.01
        && a.font == b.font
}

fn kind_of(chars: &[RawChar]) -> Kind {
    let text = || chars.iter().filter_map(|c| c.ch);
    if text().all(|c| c == ' ') && chars.iter().any(|c| c.ch.is_some()) {
        return Kind::Space;
    }
    if text().any(|c| c.is_control() || c == '\u{2}') {
        return Kind::Other;
    }
    if text().any(|c| matches!(bidi_class(c), BidiClass::L | BidiClass::EN | BidiClass::AN)) {
        return Kind::Other;
    }
    if text().any(strong_rtl) {
        return Kind::Rtl;
    }
    if text().next().is_some() && text().all(mark) {
        return Kind::Mark;
    }
    Kind::Other
}

/// The characters in visual order (see the module's documentation); borrowed when there
/// is no right-to-left character.
pub(crate) fn visual_order(chars: &[RawChar]) -> Cow<'_, [RawChar]> {
    if !has_rtl(chars.iter().filter_map(|c| c.ch)) {
        return Cow::Borrowed(chars);
    }
    let mut out: Vec<RawChar> = chars.to_vec();
    let units = units_of(&out);
    for u in &units {
        let glyph = &mut out[u.start..u.end];
        if glyph.len() > 1 && spread(glyph) {
            actual_text_to_visual(glyph);
        } else if glyph.len() > 1 {
            glyph_to_visual(glyph);
        }
    }
    let mut i = 0;
    while i < units.len() {
        if units[i].kind != Kind::Rtl {
            i += 1;
            continue;
        }
        // A mark PDFium put before its letter belongs to the run.
        let mut first = i;
        while first > 0 && units[first - 1].kind == Kind::Mark {
            first -= 1;
        }
        let mut j = i;
        let mut last = i;
        while j < units.len() && units[j].kind != Kind::Other {
            if units[j].kind != Kind::Space {
                last = j;
            }
            j += 1;
        }
        reorder_run(&mut out, &units[first..=last]);
        i = last + 1;
    }
    Cow::Owned(out)
}

/// The characters with each glyph's text in its `/ToUnicode` order (PDFium's reversal
/// of its right-to-left runs undone), glyphs left where PDFium put them: what a glyph
/// reads as, for laying PDFium's reading onto the interpreter's glyphs
/// (`model::reading`). Borrowed when there is no right-to-left character.
pub(crate) fn glyph_text_order(chars: &[RawChar]) -> Cow<'_, [RawChar]> {
    if !has_rtl(chars.iter().filter_map(|c| c.ch)) {
        return Cow::Borrowed(chars);
    }
    let mut out: Vec<RawChar> = chars.to_vec();
    for u in units_of(chars) {
        let glyph = &mut out[u.start..u.end];
        if glyph.len() > 1 && !spread(glyph) {
            let text: Vec<char> = glyph.iter().map(|c| c.ch.unwrap_or('\u{0}')).collect();
            let order = undo_pdfium(&text);
            for (c, k) in glyph.iter_mut().zip(order) {
                if c.ch.is_some() {
                    c.ch = Some(text[k]);
                }
            }
        }
    }
    Cow::Owned(out)
}

/// The order PDFium's characters `text` of one glyph had before PDFium reversed each run
/// of strong right-to-left characters: indices into `text`.
fn undo_pdfium(text: &[char]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..text.len()).collect();
    let mut i = 0;
    while i < text.len() {
        if !strong_rtl(text[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < text.len() && strong_rtl(text[i]) {
            i += 1;
        }
        order[start..i].reverse();
    }
    order
}

fn units_of(chars: &[RawChar]) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut start = 0;
    for i in 1..=chars.len() {
        if i == chars.len() || !same_glyph(&chars[i - 1], &chars[i]) {
            units.push(Unit {
                start,
                end: i,
                kind: kind_of(&chars[start..i]),
            });
            start = i;
        }
    }
    units
}

/// Whether characters at one origin each have a box of their own (PDFium spreads the
/// text of an `/ActualText` span over the span's box): then their boxes order them.
/// One glyph's characters share its box, but the one that carries a cluster may have
/// grown to hold the cluster's silent glyphs (see `silent`), so boxes that nest are
/// still one glyph's.
fn spread(chars: &[RawChar]) -> bool {
    let nests = |a: &pdf_render::Rect, b: &pdf_render::Rect| {
        let within = |p: &pdf_render::Rect, q: &pdf_render::Rect| {
            p.x0 >= q.x0 - 0.01 && p.x1 <= q.x1 + 0.01 && p.y0 >= q.y0 - 0.01 && p.y1 <= q.y1 + 0.01
        };
        within(a, b) || within(b, a)
    };
    chars
        .iter()
        .enumerate()
        .any(|(k, a)| chars[k + 1..].iter().any(|b| !nests(&a.bbox, &b.bbox)))
}

/// One glyph's characters from PDFium's order to the visual order: PDFium reversed each
/// run of strong right-to-left characters (giving back the `/ToUnicode` order), then
/// each right-to-left run's clusters reversed (undone by [`logical_text`]). All share
/// the glyph's box, so only the characters move.
fn glyph_to_visual(glyph: &mut [RawChar]) {
    let text: Vec<char> = glyph.iter().map(|c| c.ch.unwrap_or('\u{0}')).collect();
    let mut order = undo_pdfium(&text);
    let logical: Vec<char> = order.iter().map(|&k| text[k]).collect();
    for (a, b) in rtl_runs(&logical) {
        reverse_cluster_order(&logical[a..b], &mut order[a..b]);
    }
    for (c, k) in glyph.iter_mut().zip(order) {
        if c.ch.is_some() {
            c.ch = Some(text[k]);
        }
    }
}

/// The characters of an `/ActualText` span in visual order, as one glyph: PDFium spreads
/// the span's text over its box, the first character rightmost when the text reads right
/// to left, so their boxes give the text's order, then each right-to-left run's clusters
/// are reversed (undone by [`logical_text`]). The boxes are made the span's: a mark's
/// share of the box is not where it is drawn, and would read as a gap between words.
fn actual_text_to_visual(span: &mut [RawChar]) {
    let union = |f: fn(&RawChar) -> pdf_render::Rect| {
        span.iter()
            .map(f)
            .reduce(|a, b| a.union(&b))
            .unwrap_or_default()
    };
    let (ink, loose) = (union(|c| c.bbox), union(|c| c.advance_box));
    let centre = |c: &RawChar| (c.bbox.x0 + c.bbox.x1) / 2.0;
    let mut order: Vec<usize> = (0..span.len()).collect();
    // Right to left when the text is: the first strong character decides.
    let rtl = span
        .iter()
        .filter_map(|c| c.ch)
        .find(|&c| strong_rtl(c) || bidi_class(c) == BidiClass::L)
        .is_some_and(strong_rtl);
    if rtl {
        order.sort_by(|&a, &b| centre(&span[b]).total_cmp(&centre(&span[a])));
    } else {
        order.sort_by(|&a, &b| centre(&span[a]).total_cmp(&centre(&span[b])));
    }
    let logical: Vec<char> = order
        .iter()
        .map(|&k| span[k].ch.unwrap_or('\u{0}'))
        .collect();
    for (a, b) in rtl_runs(&logical) {
        reverse_cluster_order(&logical[a..b], &mut order[a..b]);
    }
    let mut moved: Vec<RawChar> = order.iter().map(|&k| span[k].clone()).collect();
    for c in &mut moved {
        c.bbox = ink;
        c.advance_box = loose;
    }
    span.clone_from_slice(&moved);
}

/// Reverses `order` by the clusters of `text` (the characters `order` points at).
fn reverse_cluster_order(text: &[char], order: &mut [usize]) {
    let mut clusters: Vec<&[usize]> = Vec::new();
    let mut start = 0;
    for i in 1..=text.len() {
        if i == text.len() || !mark(text[i]) {
            clusters.push(&order[start..i]);
            start = i;
        }
    }
    let out: Vec<usize> = clusters.into_iter().rev().flatten().copied().collect();
    order.copy_from_slice(&out);
}

/// Puts a run of right-to-left units in visual order: letters and spaces by their
/// boxes' centres left to right, each mark glyph right after the letter under it.
fn reorder_run(out: &mut [RawChar], run: &[Unit]) {
    let first = run[0].start;
    let last = run[run.len() - 1].end;
    let centre = |u: &Unit| {
        let b = &out[u.start].bbox;
        (b.x0 + b.x1) / 2.0
    };
    let mut bases: Vec<(f32, usize, Vec<usize>)> = run
        .iter()
        .enumerate()
        .filter(|(_, u)| u.kind != Kind::Mark)
        .map(|(k, u)| (centre(u), k, Vec::new()))
        .collect();
    if bases.is_empty() {
        return;
    }
    bases.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (k, u) in run.iter().enumerate().filter(|(_, u)| u.kind == Kind::Mark) {
        let x = centre(u);
        // The letter whose box holds the mark's centre; else the letter right of it (the
        // mark has a box of its own in an `/ActualText` span, after its letter's); else
        // the nearest letter.
        let host = bases
            .iter()
            .position(|(_, b, _)| {
                let r = &out[run[*b].start].bbox;
                run[*b].kind == Kind::Rtl && r.x0 <= x && x <= r.x1
            })
            .or_else(|| {
                bases
                    .iter()
                    .position(|(c, b, _)| *c > x && run[*b].kind == Kind::Rtl)
            })
            .unwrap_or_else(|| {
                (0..bases.len())
                    .min_by(|&p, &q| (bases[p].0 - x).abs().total_cmp(&(bases[q].0 - x).abs()))
                    .unwrap_or(0)
            });
        bases[host].2.push(k);
    }
    let order: Vec<usize> = bases
        .iter()
        .flat_map(|(_, b, marks)| std::iter::once(*b).chain(marks.iter().copied()))
        .collect();
    let taken: Vec<RawChar> = order
        .iter()
        .flat_map(|&k| out[run[k].start..run[k].end].iter().cloned())
        .collect();
    out[first..last].clone_from_slice(&taken);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_text_reverses_rtl_clusters_only() {
        // Visual "يبيبحَ" (a glyph's word stored cluster-reversed) then Latin.
        let mut t = "يبيبحَ habibi".to_string();
        logical_text(&mut t);
        assert_eq!(t, "حَبيبي habibi");
        let mut t = "مالس".to_string();
        logical_text(&mut t);
        assert_eq!(t, "سلام");
        let mut t = "plain text".to_string();
        logical_text(&mut t);
        assert_eq!(t, "plain text");
    }

    #[test]
    fn no_strong_rtl_character_precedes_first_rtl() {
        // The fast path of `strong_rtl` skips the table below FIRST_RTL.
        for ch in (0..FIRST_RTL).filter_map(char::from_u32) {
            assert!(
                !matches!(bidi_class(ch), BidiClass::R | BidiClass::AL),
                "{ch:?}"
            );
        }
        assert!(strong_rtl('\u{05D0}') && strong_rtl('\u{0627}'));
        assert!(!strong_rtl('a') && !strong_rtl('\u{058F}'));
    }

    #[test]
    fn two_words_reverse_as_one_run() {
        // "سلام حَبيبي" as drawn left to right.
        let mut t: String = "يبيبحَ مالس".into();
        logical_text(&mut t);
        assert_eq!(t, "سلام حَبيبي");
    }
}
