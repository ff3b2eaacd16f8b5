//! The text that reading gives a page, laid onto the interpreter's glyphs.
//!
//! `/v1/text` is built from PDFium's characters, finding from our interpreter's glyphs.
//! Where the two disagree about a glyph's text (a Type 3 font whose glyphs our tables do
//! not name, a font whose codes are shifted) or about where a word ends (a ligature whose
//! advance leaves a gap our line builder reads as a space), a word a user took from
//! reading would not be found. This pass matches each glyph to PDFium's characters at the
//! same origin, takes PDFium's text for it, and rebuilds the lines with PDFium's word
//! breaks. It runs only for a page where a find came up empty, so a page whose text
//! already agrees costs nothing more.

use pdf_content::Glyph;
use pdf_render::RawChar;

use super::text::{build_lines_with, fold_forms, Breaks, PageGeom};
use super::PageModel;

/// How far apart (points, display space) a glyph's origin and PDFium's may lie, at least.
const MIN_TOLERANCE_PT: f64 = 0.35;
/// The same as a fraction of the glyph's size.
const SIZE_TOLERANCE: f64 = 0.12;
/// Side of a bucket of the origin index, in points.
const CELL_PT: f64 = 2.0;

/// What laying reading onto glyphs takes of one of PDFium's characters (kept for a page
/// whose reading waits until its model is used: [`Needs`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadChar {
    pub ch: Option<char>,
    pub generated: bool,
    pub origin: (f32, f32),
}

impl From<&RawChar> for ReadChar {
    fn from(c: &RawChar) -> Self {
        ReadChar {
            ch: c.ch,
            generated: c.generated,
            origin: c.origin,
        }
    }
}

/// The characters a page's lines can hold once it takes reading, sorted: its glyphs' own
/// text, every character PDFium gave it, each folded as lines fold presentation forms,
/// and U+FFFD (a glyph with no text). A glyph's text after [`take_reading`] is its own or
/// a run of PDFium's characters; a line adds only spaces.
pub(crate) fn page_chars(glyphs: &[Glyph], chars: &[ReadChar]) -> Vec<char> {
    let mut set: Vec<char> = glyphs
        .iter()
        .filter_map(|g| g.unicode.as_deref())
        .flat_map(str::chars)
        .chain(chars.iter().filter_map(|c| c.ch))
        .chain(['\u{FFFD}'])
        .collect();
    set.sort_unstable();
    set.dedup();
    let folded = fold_forms(&set.iter().collect::<String>());
    set.extend(folded.chars());
    set.sort_unstable();
    set.dedup();
    set
}

/// The characters a find's text needs on a page to match there: a page whose characters
/// ([`page_chars`]) lack one cannot hold a match even after taking reading, so reading is
/// laid onto it only when its model is next used (by a find that may match there, an
/// edit, or the output's marks).
pub(crate) enum Needs {
    /// A regular expression, or a find with an anchor (whose own text is looked for on
    /// every page): every page is read.
    Any,
    /// An exact or whole-word phrase: each of these characters (its letters, digits and
    /// punctuation; white space aside: lines turn every white space into a space).
    Chars(Vec<char>),
    /// A case-insensitive phrase: a character that each of these matches (one character
    /// of the phrase each, matched as the find's own expression matches it).
    Folded(Vec<regex::Regex>),
}

impl Needs {
    pub(crate) fn of(matcher: &crate::find::Matcher, anchored: bool) -> Needs {
        use crate::find::Matcher;
        let distinct = |text: &str| {
            let mut chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
            chars.sort_unstable();
            chars.dedup();
            chars
        };
        match matcher {
            _ if anchored => Needs::Any,
            Matcher::Exact(t) | Matcher::Word(t) => Needs::Chars(distinct(t)),
            Matcher::Pattern(re, false) => {
                // The escaped phrase: every character after a backslash is itself.
                let mut text = String::new();
                let mut escaped = false;
                for c in re.as_str().chars() {
                    if c == '\\' && !escaped {
                        escaped = true;
                        continue;
                    }
                    escaped = false;
                    text.push(c);
                }
                let one = |c: char| {
                    regex::RegexBuilder::new(&regex::escape(&c.to_string()))
                        .case_insensitive(true)
                        .build()
                };
                match distinct(&text).into_iter().map(one).collect() {
                    Ok(each) => Needs::Folded(each),
                    Err(_) => Needs::Any,
                }
            }
            Matcher::Pattern(_, true) => Needs::Any,
        }
    }

    /// Whether a page holding `chars` (sorted, [`page_chars`]) may match.
    pub(crate) fn met_by(&self, chars: &[char]) -> bool {
        match self {
            Needs::Any => true,
            Needs::Chars(need) => need.iter().all(|c| chars.binary_search(c).is_ok()),
            Needs::Folded(need) => {
                let text: String = chars.iter().collect();
                need.iter().all(|re| re.is_match(&text))
            }
        }
    }
}

/// Replaces each glyph's Unicode by PDFium's where PDFium has text for the glyph at the
/// same origin and it differs, and rebuilds the lines with PDFium's word breaks. Returns
/// how many glyphs took a different text or lost or gained a break (0: lines unchanged).
pub(crate) fn take_reading(model: &mut PageModel, chars: &[ReadChar]) -> usize {
    let placed = Placed::new(chars);
    let geom = model.geom;
    // Glyphs drawn at one origin (a bold made by overprinting) take one character each;
    // a glyph alone at its origin takes every character PDFium gave it there.
    let mut keyed: Vec<((i64, i64), usize)> = model
        .glyphs
        .glyphs
        .iter()
        .enumerate()
        .map(|(i, g)| (origin_key(&geom, g), i))
        .collect();
    keyed.sort_unstable();
    let mut alone = vec![false; keyed.len()];
    for same in keyed.chunk_by(|a, b| a.0 == b.0) {
        if let [(_, i)] = same {
            alone[*i] = true;
        }
    }
    let mut used = vec![false; chars.len()];
    let mut runs = Vec::with_capacity(model.glyphs.glyphs.len());
    let mut changed = 0;
    let mut text = String::new();
    for (g, &alone) in model.glyphs.glyphs.iter_mut().zip(&alone) {
        let Some(run) = placed.at(&geom, g, &used, alone) else {
            runs.push(None);
            continue;
        };
        used[run.clone()].fill(true);
        runs.push(Some((run.start, run.end - 1)));
        text.clear();
        text.extend(chars[run].iter().filter_map(|c| c.ch));
        // PDFium marks a line-end hyphen with a control character; keep ours there.
        let readable = !text.is_empty() && !text.chars().any(|c| c == '\u{FFFD}' || c.is_control());
        if readable && !invented(g, &text) && g.unicode.as_deref() != Some(text.as_str()) {
            g.unicode = Some(text.clone());
            changed += 1;
        }
    }
    let mut upto = Vec::with_capacity(chars.len() + 1);
    let mut count = 0u32;
    upto.push(0);
    for c in chars {
        if c.generated || c.ch.is_some_and(char::is_whitespace) {
            count += 1;
        }
        upto.push(count);
    }
    let lines = build_lines_with(&model.glyphs.glyphs, Some(&Breaks { runs, upto }));
    let moved = lines
        .iter()
        .zip(&model.lines)
        .filter(|(a, b)| a.text != b.text)
        .count()
        + lines.len().abs_diff(model.lines.len());
    model.lines = lines;
    changed + moved
}

/// PDFium's drawn characters, indexed by the cell of their origin.
struct Placed<'a> {
    chars: &'a [ReadChar],
    /// `(row, column, index)` of every drawn character, sorted.
    cells: Vec<(i64, i64, usize)>,
    /// Each row of cells that holds characters, and where its characters start in
    /// `cells`.
    rows: Vec<(i64, usize)>,
}

impl<'a> Placed<'a> {
    fn new(chars: &'a [ReadChar]) -> Self {
        let mut cells: Vec<(i64, i64, usize)> = chars
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.generated)
            .map(|(i, c)| {
                let (cx, cy) = cell(f64::from(c.origin.0), f64::from(c.origin.1));
                (cy, cx, i)
            })
            .collect();
        cells.sort_unstable();
        let mut rows: Vec<(i64, usize)> = Vec::new();
        for (at, &(row, _, _)) in cells.iter().enumerate() {
            if rows.last().is_none_or(|&(r, _)| r != row) {
                rows.push((row, at));
            }
        }
        Placed { chars, cells, rows }
    }

    /// The run of PDFium characters drawn at glyph `g`'s origin: the nearest unused one
    /// within tolerance and, when the glyph is `alone` at its origin, the characters
    /// right after it in PDFium's order that share that origin (one glyph's
    /// `/ToUnicode` entry of several characters, such as a ligature's).
    fn at(
        &self,
        geom: &PageGeom,
        g: &Glyph,
        used: &[bool],
        alone: bool,
    ) -> Option<std::ops::Range<usize>> {
        let (x, y) = geom.display_point(g.trm[4], g.trm[5]);
        let size = g.trm[2].hypot(g.trm[3]);
        let tol = (SIZE_TOLERANCE * size).max(MIN_TOLERANCE_PT);
        let (cx, cy) = cell(x, y);
        let reach = (tol / CELL_PT).ceil() as i64;
        let (left, right) = (cx.saturating_sub(reach), cx.saturating_add(reach));
        let bottom = cy.saturating_add(reach);
        let mut best: Option<(f64, usize)> = None;
        // Each row of cells within reach that holds characters, then the cells of that
        // row within reach: the same characters as every cell of the square, in another
        // order (the nearest wins, ties to the first in PDFium's order).
        let top = self
            .rows
            .partition_point(|&(r, _)| r < cy.saturating_sub(reach));
        for (k, &(row, start)) in self.rows.iter().enumerate().skip(top) {
            if row > bottom {
                break;
            }
            let end = self.rows.get(k + 1).map_or(self.cells.len(), |&(_, s)| s);
            let cells = &self.cells[start..end];
            let from = cells.partition_point(|&(_, c, _)| c < left);
            let to = cells.partition_point(|&(_, c, _)| c <= right);
            for &(_, _, i) in &cells[from..to] {
                let o = self.chars[i].origin;
                let d = (f64::from(o.0) - x).hypot(f64::from(o.1) - y);
                let better = best.is_none_or(|(bd, bi)| d < bd || (d == bd && i < bi));
                if !used[i] && d <= tol && better {
                    best = Some((d, i));
                }
            }
        }
        let (_, first) = best?;
        let origin = self.chars[first].origin;
        let mut end = first + 1;
        if alone {
            for (i, c) in self.chars.iter().enumerate().skip(first + 1) {
                let same = !c.generated
                    && !used[i]
                    && (c.origin.0 - origin.0).abs() < 0.01
                    && (c.origin.1 - origin.1).abs() < 0.01;
                if !same {
                    break;
                }
                end = i + 1;
            }
        }
        Some(first..end)
    }
}

/// Whether PDFium's `text` for glyph `g` is only its character code, given because the
/// font maps the glyph to no text (`<>`, a shaped cluster's silent glyph): reading does
/// not show that text either (`read::silent`), so the glyph keeps its silence.
fn invented(g: &Glyph, text: &str) -> bool {
    let silent = g
        .unicode
        .as_deref()
        .is_some_and(|u| u.chars().all(|c| c == '\0'));
    let mut chars = text.chars();
    silent && chars.next().map(u32::from) == Some(g.code) && chars.next().is_none()
}

/// A glyph's display origin to a hundredth of a point.
fn origin_key(geom: &PageGeom, g: &Glyph) -> (i64, i64) {
    let (x, y) = geom.display_point(g.trm[4], g.trm[5]);
    ((x * 100.0).round() as i64, (y * 100.0).round() as i64)
}

fn cell(x: f64, y: f64) -> (i64, i64) {
    ((x / CELL_PT).floor() as i64, (y / CELL_PT).floor() as i64)
}
