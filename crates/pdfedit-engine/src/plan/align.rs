//! Keeping a line's alignment when a replace changes its width: which way the line is
//! aligned (read from its block, its neighbours and the page box) and the `TJ` numbers
//! that move its parts so that a centred line stays centred, a right-aligned one flush
//! right and a justified one justified.
//!
//! The unit aligned is a *segment*: the part of a line between column gaps (a table row
//! is one line of several segments). Lines are upright horizontal text only.

use pdf_content::Glyph;

use crate::find::Match;
use crate::model::PageModel;
use crate::types::Alignment;

/// A gap wider than this many ems between two glyphs of a line starts a new segment.
const COLUMN_GAP_EM: f64 = 1.5;
/// Lines further apart than this many ems (baseline to baseline) are not one block.
const BLOCK_LEADING_EM: f64 = 2.2;
/// Lines of the block looked at above and below.
const BLOCK_REACH: usize = 3;

/// A run of a line's glyphs without a column gap.
#[derive(Debug, Clone)]
pub(crate) struct Segment {
    /// The line it belongs to.
    pub line: usize,
    /// Its glyphs in line order, from the first glyph that draws something to the last.
    pub glyphs: Vec<usize>,
    /// Left and right edge (user space x, the glyphs' advance boxes).
    pub left: f64,
    pub right: f64,
    /// Baseline (user space y).
    pub base: f64,
    /// Em (user space).
    pub size: f64,
}

impl Segment {
    fn centre(&self) -> f64 {
        (self.left + self.right) / 2.0
    }
}

/// Upright horizontal text: the rendering matrix is a scale (no rotation, no flip).
fn upright(g: &Glyph) -> bool {
    let t = g.trm;
    !g.vertical
        && t[0] > 1e-6
        && t[3] > 1e-6
        && t[1].abs() <= 1e-3 * t[0]
        && t[2].abs() <= 1e-3 * t[3]
}

/// A glyph that draws nothing (a space, or invisible text) does not make an edge.
fn blank(g: &Glyph) -> bool {
    g.render_mode == 3 || g.unicode.as_deref().is_some_and(|u| u.trim().is_empty())
}

/// The line's glyphs in line order, each once.
fn line_glyphs(model: &PageModel, line: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for &g in model.lines[line].byte_glyph.iter().flatten() {
        if out.last() != Some(&g) && !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// The segments of every upright line of the page.
pub(crate) fn segments(model: &PageModel) -> Vec<Segment> {
    let glyphs = &model.glyphs.glyphs;
    let mut out = Vec::new();
    for line in 0..model.lines.len() {
        let order = line_glyphs(model, line);
        if order.is_empty() || !order.iter().all(|&g| upright(&glyphs[g])) {
            continue;
        }
        let mut cur: Option<Segment> = None;
        let mut pending: Vec<usize> = Vec::new();
        for g in order {
            let gl = &glyphs[g];
            if blank(gl) {
                if cur.is_some() {
                    pending.push(g);
                }
                continue;
            }
            let size = gl.trm[3];
            let (x0, x1) = (gl.bbox[0].min(gl.bbox[2]), gl.bbox[0].max(gl.bbox[2]));
            match cur.as_mut() {
                Some(s) if x0 - s.right <= COLUMN_GAP_EM * s.size.max(size) => {
                    s.glyphs.append(&mut pending);
                    s.glyphs.push(g);
                    s.left = s.left.min(x0);
                    s.right = s.right.max(x1);
                }
                _ => {
                    out.extend(cur.take());
                    pending.clear();
                    cur = Some(Segment {
                        line,
                        glyphs: vec![g],
                        left: x0,
                        right: x1,
                        base: gl.trm[5],
                        size,
                    });
                }
            }
        }
        out.extend(cur);
    }
    out
}

/// How close two edges must be to count as shared.
fn tolerance(size: f64) -> f64 {
    (0.08 * size).clamp(0.5, 1.5)
}

fn similar_size(a: &Segment, b: &Segment) -> bool {
    let r = a.size / b.size.max(1e-9);
    (0.7..=1.45).contains(&r)
}

fn overlaps(a: &Segment, b: &Segment) -> bool {
    a.left < b.right && b.left < a.right
}

/// The segments of the block around `segs[me]`: the nearest line above and below that
/// overlaps it, of a similar size, within [`BLOCK_LEADING_EM`], and so on up to
/// [`BLOCK_REACH`] lines each way.
fn block(segs: &[Segment], me: usize) -> Vec<usize> {
    let s = &segs[me];
    let mut out = Vec::new();
    for dir in [1.0, -1.0] {
        let mut base = s.base;
        for _ in 0..BLOCK_REACH {
            let next = segs
                .iter()
                .enumerate()
                .filter(|(i, o)| {
                    let dy = (o.base - base) * dir;
                    *i != me
                        && o.line != s.line
                        && !out.contains(i)
                        && similar_size(o, s)
                        && overlaps(o, s)
                        && dy > 0.3 * s.size
                        && dy <= BLOCK_LEADING_EM * s.size.max(o.size)
                })
                .min_by(|a, b| {
                    let da = (a.1.base - base).abs();
                    let db = (b.1.base - base).abs();
                    da.total_cmp(&db)
                });
            let Some((i, o)) = next else { break };
            base = o.base;
            out.push(i);
        }
    }
    out
}

/// How `segs[me]` is aligned. `page_x` is the page box's left and right edge.
pub(crate) fn detect(segs: &[Segment], me: usize, page_x: (f64, f64)) -> Alignment {
    let s = &segs[me];
    let tol = tolerance(s.size);
    let same = |a: f64, b: f64| (a - b).abs() <= tol;
    let near = block(segs, me);
    if !near.is_empty() {
        let lefts = near.iter().filter(|&&i| same(segs[i].left, s.left)).count();
        let rights = near
            .iter()
            .filter(|&&i| same(segs[i].right, s.right))
            .count();
        let centres = near
            .iter()
            .filter(|&&i| same(segs[i].centre(), s.centre()))
            .count();
        // Two other lines of the block sharing both edges: a justified paragraph (whose
        // indented first line shares only the right edge).
        let justified_block = near.iter().enumerate().any(|(k, &a)| {
            near[k + 1..]
                .iter()
                .any(|&b| same(segs[a].left, segs[b].left) && same(segs[a].right, segs[b].right))
        });
        match (lefts > 0, rights > 0) {
            (true, true) => return Alignment::Justified,
            (false, true) if justified_block => return Alignment::Justified,
            (false, true) => return Alignment::Right,
            (true, false) => return Alignment::Left,
            (false, false) if centres > 0 => return Alignment::Centre,
            (false, false) => {}
        }
    }
    // No block to read it from: the column's other lines, anywhere on the page (a column
    // of amounts whose rows are far apart), then the page box.
    let mates = segs
        .iter()
        .enumerate()
        .filter(|(i, o)| *i != me && o.line != s.line && similar_size(o, s) && overlaps(o, s));
    let (mut right_only, mut left_only) = (0, 0);
    for (_, o) in mates {
        match (same(o.left, s.left), same(o.right, s.right)) {
            (false, true) => right_only += 1,
            (true, false) => left_only += 1,
            _ => {}
        }
    }
    if right_only >= 2 && left_only == 0 {
        return Alignment::Right;
    }
    let (x0, x1) = page_x;
    let narrow = s.right - s.left < 0.8 * (x1 - x0);
    if narrow && (s.centre() - (x0 + x1) / 2.0).abs() <= tol.max(1.0) {
        return Alignment::Centre;
    }
    Alignment::Left
}

/// How far (user space) segment `segs[me]` may grow to its left and to its right: to the
/// line's neighbouring segment less a column gap, or to the page box less a margin.
pub(crate) fn free_beside(segs: &[Segment], me: usize, page_x: (f64, f64)) -> (f64, f64) {
    const MARGIN: f64 = 36.0;
    let s = &segs[me];
    let gap = COLUMN_GAP_EM * s.size;
    let mut left = s.left - (page_x.0 + MARGIN);
    let mut right = page_x.1 - MARGIN - s.right;
    for o in segs.iter().filter(|o| o.line == s.line) {
        if o.right <= s.left {
            left = left.min(s.left - o.right - gap);
        } else if o.left >= s.right {
            right = right.min(o.left - s.right - gap);
        }
    }
    (left.max(0.0), right.max(0.0))
}

/// The moves that keep a segment aligned when the match inside it changes width by `d`
/// (text space of the match's first glyph). Every shift is in that text space.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Moves {
    /// The alignment kept.
    pub alignment: Alignment,
    /// How far the new text's start moves.
    pub start: f64,
    /// Pen move before the new text.
    pub lead: f64,
    /// The new text's compensating number takes the lead back too (a whole segment
    /// replaced: nothing else moves).
    pub lead_returns: bool,
    /// Kept glyphs of the segment with their shift (non-zero only).
    pub kept: Vec<(usize, f64)>,
    /// `TJ`-space pen moves: before which kept glyph, by how much (text space).
    pub before: Vec<(usize, f64)>,
    /// Pen move right after the match's last glyph (text space).
    pub after_match: f64,
    /// Pen move after which kept glyph (the segment's last), by how much.
    pub after: Option<(usize, f64)>,
}

/// The moves when the match is the whole segment: the new text alone moves, by a lead
/// before it that is taken back after it.
fn whole_segment_moves(al: Alignment, d: f64) -> Option<Moves> {
    let lead = match al {
        Alignment::Centre => -d / 2.0,
        Alignment::Right => -d,
        // A justified line replaced whole has no word gaps of its own to spread.
        _ => return None,
    };
    Some(Moves {
        alignment: al,
        start: lead,
        lead,
        lead_returns: true,
        kept: Vec::new(),
        before: Vec::new(),
        after_match: 0.0,
        after: None,
    })
}

/// Plans the moves for match `m` (glyphs `members`) in `seg` aligned `al`, the match's
/// width changing by `d`. `None` when nothing moves (a left-aligned line) or when the
/// segment cannot be moved by `TJ` numbers (its glyphs are drawn by several operators, or
/// the match is not one run of it).
pub(crate) fn plan_moves(
    model: &PageModel,
    seg: &Segment,
    m: &Match,
    members: &[usize],
    al: Alignment,
    d: f64,
) -> Option<Moves> {
    let glyphs = &model.glyphs.glyphs;
    if al == Alignment::Left || d.abs() < 1e-9 {
        return None;
    }
    let first = &glyphs[*members.first()?];
    let pos: Vec<usize> = members
        .iter()
        .filter_map(|g| seg.glyphs.iter().position(|x| x == g))
        .collect();
    // Every ink glyph of the match lies in the segment, as one run.
    let ink_members = members.iter().filter(|&&g| !blank(&glyphs[g])).count();
    let (lo, hi) = (*pos.iter().min()?, *pos.iter().max()?);
    if pos.len() < ink_members || pos.is_empty() {
        return None;
    }
    if seg.glyphs[lo..=hi].iter().any(|g| !members.contains(g)) {
        return None;
    }
    if lo == 0 && hi == seg.glyphs.len() - 1 {
        return whole_segment_moves(al, d);
    }
    // Kept glyphs move by numbers inside one operator: every glyph of the segment is drawn
    // by the match's own operator.
    if seg
        .glyphs
        .iter()
        .chain(m.glyphs.iter())
        .any(|&g| glyphs[g].stream != first.stream || glyphs[g].op_index != first.op_index)
    {
        return None;
    }
    let in_match = |k: usize| (lo..=hi).contains(&k);
    let unit_of = units(model, seg, lo, hi);
    let q = unit_of[lo];
    let last_unit = unit_of.last().copied().unwrap_or(0);
    if al == Alignment::Justified && last_unit == 0 {
        return None;
    }
    let shift = |u: usize| -> f64 {
        let after = u > q;
        match al {
            Alignment::Centre if after => d / 2.0,
            Alignment::Centre => -d / 2.0,
            Alignment::Right if after => 0.0,
            Alignment::Right => -d,
            Alignment::Justified => {
                // Each word gap of the segment takes an equal part of the change.
                let spread = d * u as f64 / last_unit as f64;
                if after {
                    d - spread
                } else {
                    -spread
                }
            }
            Alignment::Left => 0.0,
        }
    };
    let mut before = Vec::new();
    let mut kept = Vec::new();
    // How far the pen is from where it was, as the rewritten operator runs.
    let mut offset = 0.0;
    let mut lead = 0.0;
    let mut after_match = 0.0;
    let mut current = None;
    for (k, &g) in seg.glyphs.iter().enumerate() {
        let u = unit_of[k];
        // Right after the match the pen is set again: a glyph of the match's own word
        // follows the new text's end (the change `d` further on), any other its unit.
        if current != Some(u) || k == hi + 1 {
            current = Some(u);
            let want = if u == q && k > hi {
                shift(u) + d
            } else {
                shift(u)
            };
            let delta = want - offset;
            offset = want;
            if k == lo {
                lead = delta;
            } else if k == hi + 1 {
                after_match = delta;
            } else if delta.abs() > 1e-12 {
                before.push((g, delta));
            }
        }
        if !in_match(k) && offset.abs() > 1e-12 && !blank(&glyphs[g]) {
            kept.push((g, offset));
        }
    }
    // The pen goes back where it was after the segment.
    let after = if hi == seg.glyphs.len() - 1 {
        after_match = -offset;
        None
    } else {
        seg.glyphs.last().map(|&g| (g, -offset))
    };
    Some(Moves {
        alignment: al,
        start: shift(q),
        lead,
        lead_returns: false,
        kept,
        before,
        after_match,
        after,
    })
}

/// The unit of each glyph of `seg`: the words of the segment. The match (positions
/// `lo..=hi`) belongs to the word it is set in: a glyph drawn tight against it (punctuation
/// after it, a quote before it, the rest of a word it is part of) moves with it rather than
/// by a share of the change, since a gap that is not there cannot give anything up (sharing
/// it drew the comma of "font," into the new word's last letter).
fn units(model: &PageModel, seg: &Segment, lo: usize, hi: usize) -> Vec<usize> {
    let glyphs = &model.glyphs.glyphs;
    let line = &model.lines[seg.line];
    let in_match = |k: usize| (lo..=hi).contains(&k);
    let mut unit_of = vec![0usize; seg.glyphs.len()];
    let mut unit = 0;
    for (k, &g) in seg.glyphs.iter().enumerate().skip(1) {
        let p = seg.glyphs[k - 1];
        let new_word = if in_match(k) && in_match(k - 1) {
            false
        } else if in_match(k) {
            blank(&glyphs[p]) || gap_before(line, p, g)
        } else {
            !blank(&glyphs[g]) && (blank(&glyphs[p]) || gap_before(line, p, g))
        };
        if new_word {
            unit += 1;
        }
        unit_of[k] = unit;
    }
    unit_of
}

/// Share of the narrowest word gap each gap of a justified line may give up when a word in
/// it grows: a typesetter's interword space shrinks to about two thirds of its natural width
/// (TeX's default glue: 3.33 pt shrinking by 1.11 pt at 10 pt), so gaps set at or above
/// natural width lose at most this much and words never come close to touching.
const GAP_SHRINK: f64 = 0.3;

/// How much a justified segment's word gaps can give up together when its match (glyphs
/// `members`) grows, user space: [`plan_moves`] takes an equal part from every gap, so it is
/// the gap count times [`GAP_SHRINK`] of the narrowest gap. 0 when the match is not one run
/// of the segment or a gap is already closed.
pub(crate) fn justified_slack(model: &PageModel, seg: &Segment, members: &[usize]) -> f64 {
    let glyphs = &model.glyphs.glyphs;
    let pos: Vec<usize> = members
        .iter()
        .filter_map(|g| seg.glyphs.iter().position(|x| x == g))
        .collect();
    let (Some(&lo), Some(&hi)) = (pos.iter().min(), pos.iter().max()) else {
        return 0.0;
    };
    let unit_of = units(model, seg, lo, hi);
    let last_unit = unit_of.last().copied().unwrap_or(0);
    if last_unit == 0 {
        return 0.0;
    }
    // Each unit's ink extent along the line.
    let mut extent = vec![(f64::MAX, f64::MIN); last_unit + 1];
    for (k, &g) in seg.glyphs.iter().enumerate() {
        if blank(&glyphs[g]) {
            continue;
        }
        let e = &mut extent[unit_of[k]];
        e.0 = e.0.min(glyphs[g].bbox[0]);
        e.1 = e.1.max(glyphs[g].bbox[2]);
    }
    let narrowest = extent
        .windows(2)
        .map(|w| w[1].0 - w[0].1)
        .fold(f64::MAX, f64::min);
    if !narrowest.is_finite() || narrowest <= 0.0 {
        return 0.0;
    }
    last_unit as f64 * GAP_SHRINK * narrowest
}

/// Whether the match (glyphs `members`) is the last thing segment `seg` draws: no glyph
/// that draws ink follows it.
pub(crate) fn ends_segment(model: &PageModel, seg: &Segment, members: &[usize]) -> bool {
    let glyphs = &model.glyphs.glyphs;
    let Some(hi) = members
        .iter()
        .filter_map(|g| seg.glyphs.iter().position(|x| x == g))
        .max()
    else {
        return false;
    };
    seg.glyphs[hi + 1..].iter().all(|&g| blank(&glyphs[g]))
}

/// Whether the line reads a word gap between glyphs `a` and `b` (an inserted space).
fn gap_before(line: &crate::model::text::Line, a: usize, b: usize) -> bool {
    let pa = line.byte_glyph.iter().rposition(|x| *x == Some(a));
    let pb = line.byte_glyph.iter().position(|x| *x == Some(b));
    match (pa, pb) {
        (Some(pa), Some(pb)) if pb > pa => line.byte_glyph[pa + 1..pb].iter().any(Option::is_none),
        _ => false,
    }
}
