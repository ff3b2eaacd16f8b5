//! Lines the content stream wrote in pieces.
//!
//! `layout` groups consecutive spans into lines, so a line whose pieces are written apart
//! (a word's first letter drawn separately, a kerned heading, a table row filled in later)
//! ends up as several lines. pdftotext reads such pieces as one line, and so should a
//! client: a later line that sits on the same baseline right before or after an earlier
//! line, closer than a span split, joins it. Its spans are then ordered along the baseline
//! and the word spaces between them are judged again from the gaps.

use crate::Span;

/// Pieces closer than this many ems along the baseline belong to one line (the span split
/// gap of `spans`).
const JOIN_GAP_EM: f32 = 0.45;
/// Baselines closer than this many ems are the same baseline.
const BASELINE_EM: f32 = 0.35;
/// A gap wider than this many ems between two pieces is a word space.
const WORD_GAP_EM: f32 = 0.12;
/// How many earlier lines a line is compared with (keeps big pages linear).
const LOOK_BACK: usize = 64;

/// Geometry of a span in its text frame, as `layout` knows it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Geo {
    pub baseline: f32,
    pub along: (f32, f32),
    pub size: f32,
    pub angle: f32,
    pub vertical: bool,
}

struct Line {
    id: u32,
    block: u32,
    baseline: f32,
    along: (f32, f32),
    size: f32,
    angle: f32,
    vertical: bool,
    /// Index (in `lines`) of the line this one joined, if any.
    root: Option<usize>,
}

/// Joins split lines in `spans` (one page, in layout order, with `geo` beside each span).
pub(crate) fn join_split_lines(spans: &mut Vec<Span>, geo: Vec<Geo>) {
    let mut lines: Vec<Line> = Vec::new();
    for (s, g) in spans.iter().zip(&geo) {
        match lines.last_mut() {
            Some(l) if l.id == s.line => {
                l.along = (l.along.0.min(g.along.0), l.along.1.max(g.along.1));
                l.size = l.size.max(g.size);
            }
            _ => lines.push(Line {
                id: s.line,
                block: s.block,
                baseline: g.baseline,
                along: g.along,
                size: g.size.max(1.0),
                angle: g.angle,
                vertical: g.vertical,
                root: None,
            }),
        }
    }
    let mut joined = false;
    for i in 1..lines.len() {
        for j in (i.saturating_sub(LOOK_BACK)..i).rev() {
            if lines[j].root.is_some() {
                continue;
            }
            let (a, b) = (&lines[j], &lines[i]);
            if a.vertical || b.vertical || (a.angle - b.angle).abs() >= 2.0 {
                continue;
            }
            let size = a.size.max(b.size);
            if (a.baseline - b.baseline).abs() > BASELINE_EM * size {
                continue;
            }
            let gap = if b.along.0 >= a.along.1 - 0.1 * size {
                b.along.0 - a.along.1
            } else if b.along.1 <= a.along.0 + 0.1 * size {
                a.along.0 - b.along.1
            } else {
                continue;
            };
            if gap <= JOIN_GAP_EM * size {
                let along = (a.along.0.min(b.along.0), a.along.1.max(b.along.1));
                lines[j].along = along;
                lines[i].root = Some(j);
                joined = true;
                break;
            }
        }
    }
    if !joined {
        return;
    }
    // Every span gets its root line; joined lines are sorted along the baseline.
    let mut has_joins = vec![false; lines.len()];
    for l in &lines {
        if let Some(r) = l.root {
            has_joins[r] = true;
        }
    }
    let mut first_pos: Vec<usize> = vec![usize::MAX; lines.len()];
    let mut keyed: Vec<(usize, f32, bool, Span, Geo)> = Vec::with_capacity(spans.len());
    let mut li = 0;
    for (pos, (s, g)) in spans.drain(..).zip(geo).enumerate() {
        while lines[li].id != s.line {
            li += 1;
        }
        let root = lines[li].root.unwrap_or(li);
        if first_pos[root] == usize::MAX {
            first_pos[root] = pos;
        }
        let has_joins = has_joins[root];
        let along_key = if has_joins { g.along.0 } else { pos as f32 };
        let mut s = s;
        s.line = lines[root].id;
        s.block = lines[root].block;
        keyed.push((root, along_key, has_joins, s, g));
    }
    keyed.sort_by(|a, b| {
        (first_pos[a.0], a.1)
            .partial_cmp(&(first_pos[b.0], b.1))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut prev: Option<(usize, Geo)> = None;
    for (root, _, has_joins, mut s, g) in keyed {
        if let Some((prev_root, pg)) = prev {
            if has_joins && prev_root == root {
                let size = g.size.max(pg.size).max(1.0);
                s.space_before = g.along.0 - pg.along.1 > WORD_GAP_EM * size;
            }
        }
        prev = Some((root, g));
        spans.push(s);
    }
}
