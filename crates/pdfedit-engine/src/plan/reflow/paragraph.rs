//! Finding the paragraph a reflow re-breaks: the match's line and the lines below it at
//! the same leading and left edge, in the same font, size and colour, up to the first line
//! the next line's first word would have fitted on.

use std::collections::BTreeSet;

use pdf_content::Glyph;

use super::{unsupported, MAX_LINES};
use crate::model::PageModel;
use crate::plan::fit::{spacing_at, Spacing};
use crate::plan::Refusal;

/// One line of the page as the paragraph finder sees it.
#[derive(Debug, Clone)]
pub(super) struct LineInfo {
    /// Index in the page's lines.
    pub li: usize,
    /// Glyphs in reading order (each once).
    pub glyphs: Vec<usize>,
    /// Baseline origin of the first glyph, user space.
    pub x: f64,
    pub y: f64,
    /// Right end of the last visible glyph.
    pub end: f64,
}

pub(super) fn blank(g: &Glyph) -> bool {
    g.unicode.as_deref().is_none_or(|u| u.trim().is_empty())
}

fn line_info(model: &PageModel, li: usize) -> Option<LineInfo> {
    let glyphs_all = &model.glyphs.glyphs;
    let mut glyphs: Vec<usize> = Vec::new();
    for g in model.lines.get(li)?.byte_glyph.iter().flatten() {
        if glyphs.last() != Some(g) {
            glyphs.push(*g);
        }
    }
    let first = *glyphs.iter().find(|&&g| !blank(&glyphs_all[g]))?;
    let end = glyphs
        .iter()
        .filter(|&&g| !blank(&glyphs_all[g]))
        .map(|&g| glyphs_all[g].bbox[2])
        .fold(f64::NEG_INFINITY, f64::max);
    Some(LineInfo {
        li,
        glyphs,
        x: glyphs_all[first].trm[4],
        y: glyphs_all[first].trm[5],
        end,
    })
}

/// Whether `g` is drawn exactly as the paragraph's reference glyph `r`.
fn same_style(g: &Glyph, r: &Glyph) -> bool {
    let tol = 1e-3 * r.trm[3].abs().max(1e-3);
    g.font == r.font
        && (g.font_size - r.font_size).abs() < 1e-6 * r.font_size.abs().max(1.0)
        && (0..4).all(|i| (g.trm[i] - r.trm[i]).abs() <= tol)
        && g.render_mode == r.render_mode
        && g.fill_rgb == r.fill_rgb
        && g.stream == r.stream
        && g.actual_text.is_none()
}

/// The paragraph from line `l0` on.
pub(super) struct Para {
    /// The lines, the match's first.
    pub lines: Vec<LineInfo>,
    /// Baseline distance.
    pub leading: f64,
    /// Left edge of the continuation lines.
    pub left: f64,
    /// Right edge of the column.
    pub right: f64,
    /// Every line but the last ends at the right edge.
    pub justified: bool,
}

pub(super) fn paragraph(model: &PageModel, l0: usize, r: &Glyph) -> Result<Para, Refusal> {
    let glyphs = &model.glyphs.glyphs;
    let size_u = r.trm[3];
    let infos: Vec<Option<LineInfo>> = (0..model.lines.len())
        .map(|li| line_info(model, li))
        .collect();
    let styled_line = |info: &LineInfo| {
        info.glyphs
            .iter()
            .all(|&g| blank(&glyphs[g]) || same_style(&glyphs[g], r))
    };
    let first = infos[l0]
        .clone()
        .ok_or_else(|| unsupported("the match's line has no text"))?;
    if !styled_line(&first) {
        return Err(unsupported(
            "the match's line mixes fonts, sizes or colours",
        ));
    }
    let mut lines = vec![first.clone()];
    let mut used: BTreeSet<usize> = [l0].into();
    let above = leading_above(&infos, &first, r, glyphs);
    while lines.len() < MAX_LINES {
        let cur = lines.last().cloned().unwrap_or_else(|| first.clone());
        let expected = if lines.len() >= 2 {
            Some(lines[0].y - lines[1].y)
        } else {
            above
        };
        let (lo, hi) = lines.iter().fold((f64::MAX, f64::MIN), |(lo, hi), l| {
            (lo.min(l.x), hi.max(l.end))
        });
        let Some(next) = line_below(&infos, &used, &cur, (lo, hi), size_u) else {
            break;
        };
        let dy = cur.y - next.y;
        let spaced = match expected {
            Some(l) => (dy - l).abs() < 0.1 * size_u,
            None => dy < 1.7 * size_u,
        };
        let left_ok = match lines.get(1) {
            Some(l1) => (next.x - l1.x).abs() < 0.1 * size_u,
            None => {
                (next.x - first.x).abs() < 0.1 * size_u
                    || (next.x < first.x && first.x - next.x < 4.0 * size_u)
            }
        };
        let horizontal = glyphs[next.glyphs[0]].trm[1].abs() < 1e-6;
        if !(spaced && left_ok && horizontal) {
            break;
        }
        let any_same = next
            .glyphs
            .iter()
            .any(|&g| !blank(&glyphs[g]) && same_style(&glyphs[g], r));
        if !styled_line(next) {
            if any_same {
                return Err(unsupported(
                    "a line of the paragraph mixes fonts, sizes or colours",
                ));
            }
            break; // the next block (a heading, another style)
        }
        used.insert(next.li);
        lines.push(next.clone());
    }
    let space_u = space_width_user(model, r);
    // A line ends the paragraph when the next line's first word would have fitted on it.
    let right_of = |lines: &[LineInfo]| lines.iter().map(|l| l.end).fold(f64::MIN, f64::max);
    let right = column_right(model, &lines, right_of(&lines), size_u, r);
    lines.truncate(lines_kept(model, &lines, right, space_u, size_u));
    let max_end = right_of(&lines);
    let non_last = &lines[..lines.len() - 1];
    let justified = non_last.len() >= 2 && non_last.iter().all(|l| (max_end - l.end).abs() < 0.5);
    let right = if justified {
        max_end
    } else {
        column_right(model, &lines, max_end, size_u, r)
    };
    if non_last.iter().any(|l| hyphenated(model, l)) {
        return Err(unsupported(
            "a line of the paragraph ends in a hyphen (the word cannot be told apart)",
        ));
    }
    let leading = match lines.get(1) {
        Some(l1) => lines[0].y - l1.y,
        None => above.unwrap_or(1.2 * size_u),
    };
    let left = lines.get(1).map_or(first.x, |l| l.x);
    Ok(Para {
        lines,
        leading,
        left,
        right,
        justified,
    })
}

/// The nearest line below `cur` not `used` yet that overlaps the paragraph's extent
/// `lo..hi` across, within a line distance for text `size_u` high.
fn line_below<'a>(
    infos: &'a [Option<LineInfo>],
    used: &BTreeSet<usize>,
    cur: &LineInfo,
    (lo, hi): (f64, f64),
    size_u: f64,
) -> Option<&'a LineInfo> {
    infos
        .iter()
        .flatten()
        .filter(|c| !used.contains(&c.li))
        .filter(|c| {
            let dy = cur.y - c.y;
            dy > 0.3 * size_u && dy < 2.5 * size_u && c.x < hi && c.end > lo
        })
        .min_by(|a, b| (cur.y - a.y).total_cmp(&(cur.y - b.y)))
}

/// How many of `lines` are the paragraph: a line ends it when the next line's first word
/// would have fitted on it (before `right`, with a word space).
fn lines_kept(
    model: &PageModel,
    lines: &[LineInfo],
    right: f64,
    space_u: f64,
    size_u: f64,
) -> usize {
    for k in 0..lines.len().saturating_sub(1) {
        let w = first_word_width(model, &lines[k + 1]);
        if lines[k].end + space_u + w < right - 3.0 * size_u {
            return k + 1;
        }
    }
    lines.len()
}

/// Whether a line ends in a hyphen after a letter (a word broken over lines).
fn hyphenated(model: &PageModel, l: &LineInfo) -> bool {
    let text = model.lines[l.li].text.trim_end();
    let mut rev = text.chars().rev();
    rev.next() == Some('-') && rev.next().is_some_and(char::is_alphabetic)
}

/// The line distance to the line above, when that line is in the same style and close.
fn leading_above(
    infos: &[Option<LineInfo>],
    first: &LineInfo,
    r: &Glyph,
    glyphs: &[Glyph],
) -> Option<f64> {
    let size_u = r.trm[3];
    infos
        .iter()
        .flatten()
        .filter(|c| c.li != first.li && same_style(&glyphs[c.glyphs[0]], r))
        .map(|c| c.y - first.y)
        .filter(|dy| *dy > 0.8 * size_u && *dy < 2.5 * size_u)
        .min_by(f64::total_cmp)
}

/// The column's right edge: the longest line's end, or the page's mirror margin when the
/// longest line ends just short of it (ragged-right text in a single column).
fn column_right(
    model: &PageModel,
    lines: &[LineInfo],
    max_end: f64,
    size_u: f64,
    r: &Glyph,
) -> f64 {
    let left = lines.iter().map(|l| l.x).fold(f64::MAX, f64::min);
    let y = r.trm[5];
    let page_left = left - model.geom.distance_to_edge(left, y, [-1.0, 0.0]);
    let page_right = left + model.geom.distance_to_edge(left, y, [1.0, 0.0]);
    let mirror = page_right - (left - page_left);
    let single = lines.len() == 1;
    if mirror > max_end && (single || mirror - max_end < 3.0 * size_u) {
        mirror
    } else {
        max_end
    }
}

fn first_word_width(model: &PageModel, line: &LineInfo) -> f64 {
    let glyphs = &model.glyphs.glyphs;
    let mut end = line.x;
    for &g in &line.glyphs {
        if blank(&glyphs[g]) {
            break;
        }
        end = end.max(glyphs[g].bbox[2]);
    }
    end - line.x
}

fn space_width_user(model: &PageModel, r: &Glyph) -> f64 {
    let sp = spacing_at(model, r.stream, r.op_index);
    // Without the font at hand: a quarter em, as most text faces' space.
    (0.25 * r.font_size + sp.char_spacing + sp.word_spacing) * sp.scale * text_to_user(r, sp)
}

/// User-space length of one unit of text space along the baseline.
pub(super) fn text_to_user(r: &Glyph, sp: Spacing) -> f64 {
    r.trm[0] / (r.font_size * sp.scale).max(1e-9)
}
