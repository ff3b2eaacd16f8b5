//! Occurrences that run over a line break ("John" at the end of one line, "Smith" at the
//! start of the next). Finding text works line by line; reading joins a wrapped line to
//! the next with a space (so does pdftotext), so the page's lines are also searched
//! joined, with any white space of the phrase matching the break, and each occurrence is
//! cut into one match per line (each line gets its own box). A redaction takes every such
//! occurrence, so that no name stays readable only because it was wrapped; a replace or
//! delete takes those of a column's lines ([`add_wrapped`]), its new text split between
//! the lines at word boundaries.
//!
//! The page's lines are sorted top to bottom across the whole page, so in a narrow column
//! beside others the next line of the column is not the next line of the page (another
//! column's line sits between them). The lines are therefore also joined column by column:
//! each line followed by the nearest line below it that starts within its extent.

use regex::{Regex, RegexBuilder};

use super::{line_match, Match, Matcher};
use crate::model::text::{union, writing_dir};
use crate::model::PageModel;

/// The pattern for occurrences across lines, or None when the phrase cannot cross one
/// (no white space in it and not a regular expression).
pub(crate) fn pattern(matcher: &Matcher) -> Option<Regex> {
    let (text, icase, word) = match matcher {
        Matcher::Exact(t) => (t.as_str(), false, false),
        Matcher::Word(t) => (t.as_str(), false, true),
        Matcher::Pattern(re, true) => return Some(re.clone()),
        Matcher::Pattern(re, false) => (re.as_str(), true, false),
    };
    // An icase matcher holds the escaped phrase: undo the escaping by matching literally
    // on the pattern's own words is not possible, so rebuild from its words.
    let words: Vec<String> = if icase {
        text.split(r"\ ")
            .flat_map(|p| p.split(' '))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    } else {
        text.split_whitespace().map(regex::escape).collect()
    };
    if words.len() < 2 {
        return None;
    }
    let mut p = words.join(r"\s+");
    if word {
        p = format!(r"\b{p}\b");
    }
    RegexBuilder::new(&p)
        .case_insensitive(icase)
        .size_limit(1 << 20)
        .build()
        .ok()
}

/// Matches on `model` that cross a line break, one per line part: on the page's lines in
/// reading order, and on each column's lines in turn.
pub(crate) fn cross_line(model: &PageModel, re: &Regex) -> Vec<Match> {
    let order: Vec<usize> = (0..model.lines.len()).collect();
    let mut out: Vec<Match> = search(model, &order, re).into_iter().flatten().collect();
    for chain in columns(model) {
        for m in search(model, &chain, re).into_iter().flatten() {
            let known = out
                .iter()
                .any(|o| o.line == m.line && o.start == m.start && o.end == m.end);
            if !known {
                out.push(m);
            }
        }
    }
    out
}

/// Occurrences of `re` crossing a break when the lines `order` (indices) are joined, each
/// as its parts (one match per line, in order).
fn search(model: &PageModel, order: &[usize], re: &Regex) -> Vec<Vec<Match>> {
    let mut text = String::new();
    let mut starts = Vec::with_capacity(order.len());
    for &li in order {
        starts.push(text.len());
        text.push_str(&model.lines[li].text);
        text.push('\n');
    }
    let mut out = Vec::new();
    for m in re.find_iter(&text) {
        if !m.as_str().contains('\n') || m.as_str().trim().is_empty() {
            continue;
        }
        let mut parts = Vec::new();
        for (k, &li) in order.iter().enumerate() {
            let l = &model.lines[li];
            let (ls, le) = (starts[k], starts[k] + l.text.len());
            if m.end() <= ls || m.start() >= le {
                continue;
            }
            let (s, e) = (m.start().max(ls) - ls, m.end().min(le) - ls);
            let mut glyphs: Vec<usize> = l.byte_glyph[s..e].iter().flatten().copied().collect();
            glyphs.sort_unstable();
            glyphs.dedup();
            let Some(bbox_user) = glyphs
                .iter()
                .map(|&g| model.glyphs.glyphs[g].bbox)
                .reduce(union)
            else {
                continue;
            };
            parts.push(Match {
                page: model.number,
                line: li,
                start: s,
                end: e,
                glyphs,
                found: l.text[s..e].to_string(),
                replacement: String::new(),
                bbox_user,
                bbox: model.geom.display_box(bbox_user),
                unicode_cuts: Vec::new(),
                ocr: false,
                wrapped: false,
            });
        }
        if parts.len() > 1 {
            out.push(parts);
        }
    }
    out
}

/// The new text of an occurrence found in `parts` split at word boundaries: each part but
/// the last keeps as many words as its old text had, the last takes the rest, and every
/// part gets at least one word. `None` when the new text has fewer words than there are
/// parts (a line would be left with nothing drawn in the occurrence's place).
fn split_new(new: &str, parts: &[usize]) -> Option<Vec<String>> {
    if new.is_empty() {
        return Some(vec![String::new(); parts.len()]);
    }
    let words: Vec<&str> = new.split(' ').collect();
    if words.len() < parts.len() {
        return None;
    }
    let mut out = Vec::with_capacity(parts.len());
    let mut at = 0;
    for (i, &n) in parts.iter().enumerate() {
        let later = parts.len() - 1 - i;
        let take = if later == 0 {
            words.len() - at
        } else {
            n.clamp(1, words.len() - at - later)
        };
        out.push(words[at..at + take].join(" "));
        at += take;
    }
    Some(out)
}

/// The text drawn instead of `found` (the occurrence's text, line breaks as found): the
/// edit's `replace`, with a regular expression's groups expanded.
fn replacement_of(matcher: &Matcher, found: &str, replace: &str) -> Option<String> {
    match matcher {
        Matcher::Pattern(re, true) => {
            let caps = re.captures(found)?;
            let whole = caps.get(0)?;
            if whole.start() != 0 || whole.end() != found.len() {
                return None;
            }
            let mut out = String::new();
            caps.expand(replace, &mut out);
            Some(out)
        }
        _ => Some(replace.to_string()),
    }
}

/// Adds to `out` (a page's matches inside single lines, in reading order) the occurrences
/// of a replace or delete that wrap from one line of a column to the next: each as one
/// match per line, the later ones marked `wrapped`, placed after the matches before it.
/// An occurrence that cuts a glyph's text, overlaps a match already found, or whose new
/// text cannot be split over its lines is left out.
pub(crate) fn add_wrapped(
    model: &PageModel,
    matcher: &Matcher,
    replace: &str,
    out: &mut Vec<Match>,
) {
    if let Some(re) = pattern(matcher) {
        add_wrapped_by(model, matcher, &re, replace, out);
    }
}

/// [`add_wrapped`] with the matcher's [`pattern`] compiled already (once for every page
/// of a find).
pub(crate) fn add_wrapped_by(
    model: &PageModel,
    matcher: &Matcher,
    re: &Regex,
    replace: &str,
    out: &mut Vec<Match>,
) {
    for chain in columns(model) {
        for parts in search(model, &chain, re) {
            let found: Vec<&str> = parts.iter().map(|p| p.found.as_str()).collect();
            let Some(new) = replacement_of(matcher, &found.join("\n"), replace) else {
                continue;
            };
            let words: Vec<usize> = found.iter().map(|f| f.split_whitespace().count()).collect();
            let Some(news) = split_new(&new, &words) else {
                continue;
            };
            let overlaps = |p: &Match| {
                out.iter()
                    .any(|o| o.line == p.line && o.start < p.end && p.start < o.end)
            };
            if parts.iter().any(overlaps) {
                continue;
            }
            let whole: Option<Vec<Match>> = parts
                .iter()
                .zip(news)
                .enumerate()
                .map(|(i, (p, new))| {
                    // The white space at the break (a line's trailing space) stays.
                    let text = &model.lines[p.line].text[p.start..p.end];
                    let start = p.start + (text.len() - text.trim_start().len());
                    let end = p.end - (text.len() - text.trim_end().len());
                    let mut m = line_match(
                        model,
                        p.line,
                        (start, end.max(start)),
                        new,
                        (&mut None, false),
                    )?;
                    m.wrapped = i > 0;
                    Some(m)
                })
                .collect();
            let Some(whole) = whole else {
                continue;
            };
            let whole = drop_unchanged(whole);
            let head = (whole[0].line, whole[0].start);
            let at = out
                .iter()
                .position(|o| (o.line, o.start) > head && !o.wrapped)
                .unwrap_or(out.len());
            out.splice(at..at, whole);
        }
    }
}

/// The parts of one wrapped occurrence that change: a line whose words stay as they are
/// (a replace that keeps the words before the break) is no change and is left out, so the
/// result lists only what was redrawn. The first part kept heads the occurrence. When no
/// part changes (a replace by the same text), all are kept, as for a one-line match.
fn drop_unchanged(parts: Vec<Match>) -> Vec<Match> {
    if parts.iter().all(|m| m.found == m.replacement) {
        return parts;
    }
    let mut kept: Vec<Match> = parts
        .into_iter()
        .filter(|m| m.found != m.replacement)
        .collect();
    for (i, m) in kept.iter_mut().enumerate() {
        m.wrapped = i > 0;
    }
    kept
}

/// Where a line lies: writing direction, first origin, extent along the direction, size.
struct Extent {
    dir: [f64; 2],
    origin: [f64; 2],
    start: f64,
    end: f64,
    size: f64,
}

fn extent(model: &PageModel, li: usize) -> Option<Extent> {
    let glyphs = &model.glyphs.glyphs;
    let members: Vec<usize> = model.lines[li]
        .byte_glyph
        .iter()
        .flatten()
        .copied()
        .collect();
    let first = &glyphs[*members.first()?];
    let dir = writing_dir(first);
    let along = |x: f64, y: f64| x * dir[0] + y * dir[1];
    let (mut start, mut end) = (f64::INFINITY, f64::NEG_INFINITY);
    for &g in &members {
        let b = glyphs[g].bbox;
        for (x, y) in [(b[0], b[1]), (b[2], b[3])] {
            start = start.min(along(x, y));
            end = end.max(along(x, y));
        }
    }
    let size = first.trm[2].hypot(first.trm[3]);
    (start.is_finite() && size > 0.0).then_some(Extent {
        dir,
        origin: [first.trm[4], first.trm[5]],
        start,
        end,
        size,
    })
}

/// The page's lines chained column by column: each line is followed by the nearest line
/// below it (baselines half a line to two and a half lines apart) that runs the same way
/// and starts within its extent. Chains of a single line are left out.
fn columns(model: &PageModel) -> Vec<Vec<usize>> {
    let n = model.lines.len();
    let ext: Vec<Option<Extent>> = (0..n).map(|li| extent(model, li)).collect();
    // next[i] = (successor, gap below).
    let mut next: Vec<Option<(usize, f64)>> = vec![None; n];
    for (i, a) in ext.iter().enumerate() {
        let Some(a) = a else { continue };
        let normal = [-a.dir[1], a.dir[0]];
        let mut best: Option<(usize, f64, f64)> = None;
        for (j, b) in ext.iter().enumerate() {
            let Some(b) = b.as_ref().filter(|_| j != i) else {
                continue;
            };
            if a.dir[0] * b.dir[0] + a.dir[1] * b.dir[1] < 0.99 {
                continue;
            }
            let gap =
                (a.origin[0] - b.origin[0]) * normal[0] + (a.origin[1] - b.origin[1]) * normal[1];
            let size = a.size.max(b.size);
            if gap < 0.5 * size || gap > 2.5 * size {
                continue;
            }
            if b.start < a.start - 2.0 * size || b.start > a.end {
                continue;
            }
            let indent = (b.start - a.start).abs();
            if best.is_none_or(|(_, g, d)| (gap, indent) < (g, d)) {
                best = Some((j, gap, indent));
            }
        }
        next[i] = best.map(|(j, g, _)| (j, g));
    }
    // A line continues at most one line: the nearest above it.
    let mut prev: Vec<Option<(usize, f64)>> = vec![None; n];
    for (i, nx) in next.iter().enumerate() {
        if let Some((j, g)) = *nx {
            if prev[j].is_none_or(|(_, pg)| g < pg) {
                prev[j] = Some((i, g));
            }
        }
    }
    let mut chains = Vec::new();
    for head in (0..n).filter(|&i| prev[i].is_none()) {
        let mut chain = vec![head];
        let mut at = head;
        while let Some((j, _)) = next[at].filter(|&(j, _)| prev[j].is_some_and(|(p, _)| p == at)) {
            chain.push(j);
            at = j;
        }
        if chain.len() > 1 {
            chains.push(chain);
        }
    }
    chains
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_with_spaces_get_a_pattern() {
        let re = pattern(&Matcher::Exact("John Smith".into())).unwrap();
        assert!(re.is_match("John\nSmith"));
        assert!(pattern(&Matcher::Exact("Smith".into())).is_none());
        let re = pattern(&Matcher::Word("a.b c".into())).unwrap();
        assert!(re.is_match("x a.b\nc y"));
        assert!(!re.is_match("axb\nc"));
    }

    #[test]
    fn new_text_splits_at_word_boundaries() {
        let v = |x: &[&str]| Some(x.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            split_new("oremL psumi olord its meta", &[3, 2]),
            v(&["oremL psumi olord", "its meta"])
        );
        // More words than the old text: the rest goes to the last line.
        assert_eq!(split_new("a b c d e f", &[2, 1]), v(&["a b", "c d e f"]));
        // Fewer: every line keeps at least one word.
        assert_eq!(split_new("a b", &[3, 1]), v(&["a", "b"]));
        assert_eq!(split_new("a b c", &[1, 1, 1]), v(&["a", "b", "c"]));
        assert_eq!(split_new("", &[2, 2]), v(&["", ""]));
        assert_eq!(split_new("single", &[2, 1]), None);
    }

    #[test]
    fn a_regular_expression_expands_over_the_whole_occurrence() {
        let re = RegexBuilder::new(r"(\w+)\s+(\w+)").build().unwrap();
        let m = Matcher::Pattern(re, true);
        assert_eq!(
            replacement_of(&m, "John\nSmith", "$2 $1").as_deref(),
            Some("Smith John")
        );
        assert_eq!(
            replacement_of(&Matcher::Exact("a b".into()), "a\nb", "c d").as_deref(),
            Some("c d")
        );
    }
}
