//! Occurrences that run over a line break ("John" at the end of one line, "Smith" at the
//! start of the next). Finding text works line by line; a redaction must not leave a
//! name readable only because it was wrapped, so the page's lines are also searched
//! joined, with any white space of the phrase matching the break, and each occurrence is
//! cut into one match per line (each line gets its own box).

use regex::{Regex, RegexBuilder};

use crate::edit::find::{Match, Matcher, PageModel};
use crate::edit::text::union;

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

/// Matches on `model` that cross a line break, one per line part.
pub(crate) fn cross_line(model: &PageModel, re: &Regex) -> Vec<Match> {
    let mut text = String::new();
    let mut starts = Vec::with_capacity(model.lines.len());
    for l in &model.lines {
        starts.push(text.len());
        text.push_str(&l.text);
        text.push('\n');
    }
    let mut out = Vec::new();
    for m in re.find_iter(&text) {
        if !m.as_str().contains('\n') || m.as_str().trim().is_empty() {
            continue;
        }
        for (li, l) in model.lines.iter().enumerate() {
            let (ls, le) = (starts[li], starts[li] + l.text.len());
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
            out.push(Match {
                page: model.number,
                line: li,
                start: s,
                end: e,
                glyphs,
                found: l.text[s..e].to_string(),
                replacement: String::new(),
                bbox_user,
                bbox: model.geom.display_box(bbox_user),
            });
        }
    }
    out
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
}
