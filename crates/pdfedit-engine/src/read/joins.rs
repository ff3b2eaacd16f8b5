//! Lines the content stream wrote in pieces.
//!
//! `layout` groups consecutive spans into lines, so a line whose pieces are written apart
//! (a word's first letter drawn separately, a kerned heading, a table row filled in later)
//! ends up as several lines. pdftotext reads such pieces as one line, and so should a
//! client: a later line that sits on the same baseline right before or after an earlier
//! line, closer than a span split, joins it. Its spans are then ordered along the baseline
//! and the word spaces between them are judged again from the gaps.

use super::layout::span_id;
use super::page_text::Span;

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
    /// PDFium index of the span's first glyph (for the id of a merged span).
    pub first_index: u32,
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
    /// Extents of the line's spans along the baseline (with those of joined lines).
    pieces: Vec<(f32, f32)>,
}

/// Joins split lines in `spans` (one page, in layout order, with `geo` beside each span),
/// then merges same-style neighbours.
pub(crate) fn join_split_lines(spans: &mut Vec<Span>, geo: Vec<Geo>) {
    let geo = join_lines(spans, geo);
    merge_runs(spans, geo);
}

/// Whether a line with `pieces` can take in one with `other`: along the baseline no piece
/// of one overlaps a piece of the other, and wherever the reading passes from one line's
/// piece to the other's the gap is at most a span split.
fn interleaves(pieces: &[(f32, f32)], other: &[(f32, f32)], size: f32) -> bool {
    let mut all: Vec<(f32, f32, bool)> = pieces.iter().map(|p| (p.0, p.1, false)).collect();
    all.extend(other.iter().map(|p| (p.0, p.1, true)));
    all.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
    let tolerance = 0.1 * size;
    // Furthest end so far of each line's pieces, and of any piece.
    let mut end = [f32::MIN, f32::MIN];
    let mut last: Option<bool> = None;
    for (start, stop, theirs) in all {
        let other_end = end[usize::from(!theirs)];
        if start < other_end - tolerance {
            return false;
        }
        if last.is_some_and(|l| l != theirs) && start - end[0].max(end[1]) > JOIN_GAP_EM * size {
            return false;
        }
        let e = &mut end[usize::from(theirs)];
        *e = e.max(stop);
        last = Some(theirs);
    }
    true
}

/// The line-joining pass; returns `geo` in the spans' new order.
fn join_lines(spans: &mut Vec<Span>, geo: Vec<Geo>) -> Vec<Geo> {
    let mut lines: Vec<Line> = Vec::new();
    for (s, g) in spans.iter().zip(&geo) {
        match lines.last_mut() {
            Some(l) if l.id == s.line => {
                l.along = (l.along.0.min(g.along.0), l.along.1.max(g.along.1));
                l.size = l.size.max(g.size);
                l.pieces.push(g.along);
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
                pieces: vec![g.along],
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
            if interleaves(&a.pieces, &b.pieces, size) {
                let along = (a.along.0.min(b.along.0), a.along.1.max(b.along.1));
                let pieces = std::mem::take(&mut lines[i].pieces);
                lines[j].along = along;
                lines[j].pieces.extend(pieces);
                lines[i].root = Some(j);
                joined = true;
                break;
            }
        }
    }
    if !joined {
        return geo;
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
    let mut out_geo = Vec::with_capacity(keyed.len());
    for (root, _, has_joins, mut s, g) in keyed {
        if let Some((prev_root, pg)) = prev {
            if has_joins && prev_root == root {
                let size = g.size.max(pg.size).max(1.0);
                s.space_before = g.along.0 - pg.along.1 > WORD_GAP_EM * size;
            }
        }
        prev = Some((root, g));
        spans.push(s);
        out_geo.push(g);
    }
    out_geo
}

/// Merges each span into the one before it when both are on one line in the same font,
/// size, colour, angle and source, the second starts where the first ends (no overlap) and
/// no gap wider than a span split lies between them. A merged span gets a fresh id from
/// its first glyph and its whole text.
fn merge_runs(spans: &mut Vec<Span>, geo: Vec<Geo>) {
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    let mut out_geo: Vec<Geo> = Vec::with_capacity(geo.len());
    for (s, g) in spans.drain(..).zip(geo) {
        if let (Some(p), Some(pg)) = (out.last_mut(), out_geo.last_mut()) {
            let size = g.size.max(pg.size).max(1.0);
            let gap = g.along.0 - pg.along.1;
            let same_style = p.font == s.font
                && p.size == s.size
                && p.color == s.color
                && p.source == s.source
                && p.flags == s.flags
                && (pg.angle - g.angle).abs() < 2.0;
            if p.line == s.line
                && same_style
                && !pg.vertical
                && !g.vertical
                && !p.soft_hyphen_end
                && gap >= -0.1 * size
                && gap <= JOIN_GAP_EM * size
            {
                if s.space_before {
                    p.text.push(' ');
                }
                p.text.push_str(&s.text);
                p.bbox = [
                    p.bbox[0].min(s.bbox[0]),
                    p.bbox[1].min(s.bbox[1]),
                    p.bbox[2].max(s.bbox[2]),
                    p.bbox[3].max(s.bbox[3]),
                ];
                p.span_id = span_id(p.page, pg.first_index, &p.text, &p.font);
                p.soft_hyphen_end = s.soft_hyphen_end;
                pg.along = (pg.along.0.min(g.along.0), pg.along.1.max(g.along.1));
                continue;
            }
        }
        out.push(s);
        out_geo.push(g);
    }
    *spans = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10 pt span of `text` on `line` from `x0` to `x1` along a baseline at y = 100.
    fn span(text: &str, line: u32, x0: f32, x1: f32, index: u32) -> (Span, Geo) {
        let s = Span {
            span_id: format!("id{index}"),
            page: 1,
            text: text.into(),
            bbox: [x0, 92.0, x1, 102.0],
            font: "Helvetica".into(),
            size: 10.0,
            color: "#000000".into(),
            flags: Vec::new(),
            line,
            block: line,
            rotation: 0.0,
            source: "text-layer",
            space_before: true,
            soft_hyphen_end: false,
            confidence: None,
        };
        let g = Geo {
            baseline: 100.0,
            along: (x0, x1),
            size: 10.0,
            angle: 0.0,
            vertical: false,
            first_index: index,
        };
        (s, g)
    }

    fn run(parts: Vec<(Span, Geo)>) -> Vec<Span> {
        let (mut spans, geo): (Vec<Span>, Vec<Geo>) = parts.into_iter().unzip();
        join_split_lines(&mut spans, geo);
        spans
    }

    #[test]
    fn a_piece_written_into_a_gap_of_a_later_line_joins_it() {
        // "shipboard service" drawn first, then "For" and "s please…" around it.
        let out = run(vec![
            span("shipboard service", 0, 54.1, 133.9, 0),
            span("For", 1, 36.8, 50.8, 20),
            span("s please include", 1, 134.7, 210.0, 24),
        ]);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].text, "For shipboard services please include");
        assert_eq!(out[0].bbox[0], 36.8);
        assert_eq!(out[0].bbox[2], 210.0);
    }

    #[test]
    fn a_word_written_in_two_pieces_is_one_span() {
        let (a, ga) = span("The physicia", 0, 81.1, 136.9, 0);
        let (mut b, gb) = span("n is legally", 0, 137.0, 190.0, 12);
        b.space_before = false;
        let out = run(vec![(a, ga), (b, gb)]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].text, "The physician is legally");
        assert_eq!(
            out[0].span_id,
            span_id(1, 0, "The physician is legally", "Helvetica")
        );
    }

    #[test]
    fn table_cells_and_other_styles_stay_apart() {
        // A column gap wider than a span split, and a bold neighbour.
        let (a, ga) = span("Name", 0, 10.0, 40.0, 0);
        let (b, gb) = span("Amount", 0, 90.0, 130.0, 4);
        let (mut c, gc) = span("due", 0, 131.0, 150.0, 10);
        c.flags = vec!["bold"];
        let out = run(vec![(a, ga), (b, gb), (c, gc)]);
        let texts: Vec<&str> = out.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["Name", "Amount", "due"]);
    }

    #[test]
    fn overlapping_lines_on_one_baseline_do_not_join() {
        let out = run(vec![
            span("first line", 0, 10.0, 80.0, 0),
            span("overprint", 1, 40.0, 100.0, 10),
        ]);
        assert_eq!(out.len(), 2);
        assert_ne!(out[0].line, out[1].line);
    }
}
