//! Finding an edit's text on the pages' lines: match modes and scope.

use regex::{Regex, RegexBuilder};

pub(crate) mod clusters;
pub(crate) mod ocr;
pub(crate) mod wrap;

pub(crate) use clusters::DrawnChars;

use crate::model::text::union;
use crate::model::PageModel;
use crate::types::{Edit, EditOp, MatchMode, Occurrence};

/// Longest regular expression accepted.
pub(crate) const MAX_PATTERN_CHARS: usize = 1000;
/// Compiled-program and lazy-DFA size limits: with the regex crate's linear-time engines
/// these bound both memory and run time per line.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// One occurrence of an edit's text.
#[derive(Debug, Clone)]
pub(crate) struct Match {
    /// 1-based page.
    pub page: u32,
    /// Line index on the page.
    pub line: usize,
    /// Byte range in the line text.
    pub start: usize,
    /// End of the byte range.
    pub end: usize,
    /// Glyph indices (content order).
    pub glyphs: Vec<usize>,
    /// The text found.
    pub found: String,
    /// The text to draw instead.
    pub replacement: String,
    /// Box of the matched glyphs in user space.
    pub bbox_user: [f64; 4],
    /// Box in top-left display points.
    pub bbox: [f64; 4],
    /// Redaction only: glyphs that stay drawn but lose the matched text from their
    /// `/ToUnicode` entry (glyph index, the entry's text left), because the font's own
    /// cmap shows they draw none of it.
    pub unicode_cuts: Vec<(usize, String)>,
    /// Found among the OCR words of a scanned page (no glyphs: the text is the image).
    pub ocr: bool,
    /// The second part of an occurrence that wraps from the end of the line before: it
    /// goes with the match before it, and the two count as one occurrence.
    pub wrapped: bool,
}

/// A compiled `find`.
pub(crate) enum Matcher {
    Exact(String),
    Word(String),
    Pattern(Regex, bool),
}

/// Compiles the edit's `find` for its match mode; `Err` is an invalid request.
pub(crate) fn compile(edit: &Edit) -> Result<Matcher, String> {
    if edit.find.is_empty() {
        return Err("find must not be empty".into());
    }
    let build = |p: &str, icase: bool| {
        RegexBuilder::new(p)
            .case_insensitive(icase)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| format!("invalid regular expression: {e}"))
    };
    // Lines read presentation forms as the letters they present (model/text.rs): a phrase
    // typed in those forms (Arabic copied from a viewer that keeps them) is folded alike.
    let folded = crate::model::text::fold_forms(&edit.find);
    Ok(match edit.match_mode {
        MatchMode::Exact => Matcher::Exact(folded),
        MatchMode::Word => Matcher::Word(folded),
        MatchMode::Icase => Matcher::Pattern(build(&regex::escape(&edit.find), true)?, false),
        MatchMode::Regex => {
            if edit.find.chars().count() > MAX_PATTERN_CHARS {
                return Err(format!("regex longer than {MAX_PATTERN_CHARS} characters"));
            }
            Matcher::Pattern(build(&edit.find, false)?, true)
        }
    })
}

/// The matcher for `find` in visual order (its characters reversed), for a phrase of
/// right-to-left letters (Hebrew, Arabic, Syriac, Thaana, NKo…) and no regular
/// expression; `None` otherwise.
pub(crate) fn visual_order(m: &Matcher) -> Option<Matcher> {
    let rtl = |t: &str| {
        t.chars()
            .any(|c| matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF))
    };
    let rev = |t: &str| t.chars().rev().collect::<String>();
    match m {
        Matcher::Exact(t) if rtl(t) => Some(Matcher::Exact(rev(t))),
        Matcher::Word(t) if rtl(t) => Some(Matcher::Word(rev(t))),
        _ => None,
    }
}

fn is_word_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Byte ranges and replacements of every match in `text`.
pub(crate) fn line_matches(m: &Matcher, text: &str, replace: &str) -> Vec<(usize, usize, String)> {
    match m {
        Matcher::Exact(n) => text
            .match_indices(n.as_str())
            .map(|(s, f)| (s, s + f.len(), replace.to_string()))
            .collect(),
        Matcher::Word(n) => text
            .match_indices(n.as_str())
            .filter(|(s, f)| {
                let before = text[..*s].chars().next_back();
                let after = text[s + f.len()..].chars().next();
                !is_word_char(before) && !is_word_char(after)
            })
            .map(|(s, f)| (s, s + f.len(), replace.to_string()))
            .collect(),
        Matcher::Pattern(re, expand) => re
            .captures_iter(text)
            .filter_map(|c| {
                let whole = c.get(0)?;
                if whole.is_empty() {
                    return None;
                }
                let mut out = String::new();
                if *expand {
                    c.expand(replace, &mut out);
                } else {
                    out.push_str(replace);
                }
                Some((whole.start(), whole.end(), out))
            })
            .collect(),
    }
}

/// Every match on one page, in reading order. A match that covers only part of a glyph's
/// text (a ligature, or a `/ToUnicode` entry holding more than its glyph draws) is
/// skipped, except for a redaction, which settles such glyphs with
/// [`crate::find::clusters::settle`], and a replace or delete whose cut glyph draws none
/// of the text left out ([`crate::find::clusters::draws_only_the_match`]); both need
/// `drawn`. Occurrences over a line break: [`wrap`].
pub(crate) fn page_matches(
    page: &PageModel,
    m: &Matcher,
    edit: &Edit,
    mut drawn: Option<DrawnChars<'_>>,
) -> Vec<Match> {
    let replace = match edit.op {
        EditOp::Replace => edit.replace.as_str(),
        _ => "",
    };
    let settle = edit.op == EditOp::Redact;
    let mut out = Vec::new();
    for (li, line) in page.lines.iter().enumerate() {
        for (s, e, replacement) in line_matches(m, &line.text, replace) {
            out.extend(line_match(
                page,
                li,
                (s, e),
                replacement,
                (&mut drawn, settle),
            ));
        }
    }
    out
}

/// The match of bytes `s..e` of line `li`, or `None` when it cuts a glyph's text (and no
/// redaction settles it, `settle`, nor does the cut glyph draw only matched text) or
/// covers no glyph.
pub(crate) fn line_match(
    page: &PageModel,
    li: usize,
    (s, e): (usize, usize),
    replacement: String,
    (drawn, settle): (&mut Option<DrawnChars<'_>>, bool),
) -> Option<Match> {
    let line = &page.lines[li];
    let mut glyphs: Vec<usize> = Vec::new();
    for gi in line.byte_glyph[s..e].iter().flatten() {
        if glyphs.last() != Some(gi) && !glyphs.contains(gi) {
            glyphs.push(*gi);
        }
    }
    let (&first, &last) = (glyphs.first()?, glyphs.last()?);
    let cut_before = s > 0 && line.byte_glyph[s - 1] == Some(first);
    let cut_after = line.byte_glyph.get(e).copied().flatten() == Some(last);
    let mut unicode_cuts = Vec::new();
    match drawn.as_mut() {
        Some(drawn) if settle => {
            let settled = crate::find::clusters::settle(page, line, (s, e), glyphs, *drawn);
            glyphs = settled.0;
            unicode_cuts = settled.1;
        }
        Some(drawn) if cut_before || cut_after => {
            let cut = [cut_before.then_some(first), cut_after.then_some(last)];
            let whole = cut.into_iter().flatten().all(|g| {
                crate::find::clusters::draws_only_the_match(page, line, (s, e), g, *drawn)
            });
            if !whole {
                // A shaped cluster (an Arabic word whose text sits on one glyph): the
                // match takes the silent glyphs that draw the rest of it.
                glyphs = crate::find::clusters::shaped_cluster(page, line, (s, e), glyphs, *drawn)?;
            }
        }
        None if cut_before || cut_after => return None,
        _ => {}
    }
    glyphs.sort_unstable();
    let bbox_user = glyphs
        .iter()
        .chain(unicode_cuts.iter().map(|c| &c.0))
        .map(|&g| page.glyphs.glyphs[g].bbox)
        .reduce(union)?;
    Some(Match {
        page: page.number,
        line: li,
        start: s,
        end: e,
        glyphs,
        found: line.text[s..e].to_string(),
        replacement,
        bbox_user,
        bbox: page.geom.display_box(bbox_user),
        unicode_cuts,
        ocr: false,
        wrapped: false,
    })
}

/// Where an anchor phrase ends on a page: (line, byte end), first occurrence.
pub(crate) fn anchor_end(page: &PageModel, anchor: &str, icase: bool) -> Option<(usize, usize)> {
    page.lines.iter().enumerate().find_map(|(li, l)| {
        let pos = if icase {
            l.text.to_lowercase().find(&anchor.to_lowercase())
        } else {
            l.text.find(anchor)
        };
        pos.map(|p| (li, p + anchor.len()))
    })
}

/// Applies anchor and occurrence to matches already filtered by page, region and spans.
/// A wrapped occurrence's parts count as one occurrence and stay together.
pub(crate) fn select(
    matches: Vec<Match>,
    anchors: &[(u32, (usize, usize))],
    anchor_given: bool,
    occurrence: Option<Occurrence>,
) -> Vec<Match> {
    let mut found = occurrences(matches);
    if anchor_given {
        // Per page with an anchor: the matches after it; the first page that has one wins.
        let mut after: Vec<Vec<Match>> = Vec::new();
        for (page, (line, end)) in anchors {
            after = found
                .iter()
                .filter(|o| o[0].page == *page && (o[0].line, o[0].start) >= (*line, *end))
                .cloned()
                .collect();
            if !after.is_empty() {
                break;
            }
        }
        found = after;
        if occurrence.is_none() {
            found.truncate(1);
        }
    }
    pick_occurrence(found, occurrence)
        .into_iter()
        .flatten()
        .collect()
}

/// Matches grouped by occurrence: a `wrapped` match goes with the one before it.
fn occurrences(matches: Vec<Match>) -> Vec<Vec<Match>> {
    let mut out: Vec<Vec<Match>> = Vec::new();
    for m in matches {
        match out.last_mut() {
            Some(o) if m.wrapped => o.push(m),
            _ => out.push(vec![m]),
        }
    }
    out
}

/// Keeps the occurrences among `matches` whose every part `keep` accepts (a wrapped
/// occurrence is never cut in half by a region or by span ids).
pub(crate) fn retain_whole(matches: &mut Vec<Match>, keep: impl Fn(&Match) -> bool) {
    let kept = occurrences(std::mem::take(matches))
        .into_iter()
        .filter(|o| o.iter().all(&keep));
    matches.extend(kept.flatten());
}

/// The occurrence `occurrence` names among `found` (in order); all of them for `None`.
pub(crate) fn pick_occurrence<T>(mut found: Vec<T>, occurrence: Option<Occurrence>) -> Vec<T> {
    match occurrence {
        None => found,
        Some(Occurrence::First) => found.into_iter().take(1).collect(),
        Some(Occurrence::Last) => found.pop().into_iter().collect(),
        Some(Occurrence::Nth(n)) => found
            .into_iter()
            .nth(n.max(1) as usize - 1)
            .into_iter()
            .collect(),
    }
}

/// Whether box `inner` lies inside `outer` (1 pt tolerance).
pub(crate) fn inside(inner: [f64; 4], outer: [f64; 4]) -> bool {
    const TOL: f64 = 1.0;
    inner[0] >= outer[0] - TOL
        && inner[1] >= outer[1] - TOL
        && inner[2] <= outer[2] + TOL
        && inner[3] <= outer[3] + TOL
}

/// The boxes (top-left display points) of the spans of 1-based `page` named by `ids`.
pub(crate) fn span_boxes(
    spans: &[crate::read::PageText],
    page: u32,
    ids: &[String],
) -> Vec<[f64; 4]> {
    spans
        .iter()
        .filter(|p| p.page == page)
        .flat_map(|p| p.spans.iter())
        .filter(|s| ids.contains(&s.span_id))
        .map(|s| s.bbox.map(f64::from))
        .collect()
}

/// Whether a match's box `m` lies in a span's box `span`: they overlap by at least half of
/// the smaller one. The span's box is PDFium's ink box and the match's the glyphs' advance
/// from descent to ascent, so a short word's ink ("1", "on") covers well under half of its
/// match box, and a match that lies in its span covers most of the span's ink.
///
/// A font whose ascent and descent are far taller than its ink (a signature appearance's
/// font with a 2.3 em box) makes the match box a tall narrow cross over a long, flat span:
/// such a match lies in the span too when the two overlap by half of the narrower along
/// the line and the span's middle across the line lies inside the taller match box (the
/// same across a vertical column).
pub(crate) fn mostly_overlaps(m: [f64; 4], span: [f64; 4]) -> bool {
    let w = (m[2].min(span[2]) - m[0].max(span[0])).max(0.0);
    let h = (m[3].min(span[3]) - m[1].max(span[1])).max(0.0);
    let area = |b: [f64; 4]| ((b[2] - b[0]) * (b[3] - b[1])).max(1e-9);
    if w * h >= 0.5 * area(m).min(area(span)) {
        return true;
    }
    let (mw, mh) = (m[2] - m[0], m[3] - m[1]);
    let (sw, sh) = (span[2] - span[0], span[3] - span[1]);
    let mid = |lo: f64, hi: f64| (lo + hi) / 2.0;
    let along_x =
        w >= 0.5 * mw.min(sw) && sh <= mh && (m[1]..=m[3]).contains(&mid(span[1], span[3]));
    let along_y =
        h >= 0.5 * mh.min(sh) && sw <= mw && (m[0]..=m[2]).contains(&mid(span[0], span[2]));
    along_x || along_y
}
