//! A delete closes the line up: the text after the phrase moves back to where the phrase
//! began, as if it had been typed without it (SPEC rule 7), instead of leaving a hole.
//!
//! The rest of the line moves with one `TJ` number after the last removed glyph when it
//! is drawn in the same flow of the pen (the same content stream, no op in between that
//! sets the text position). When the rest is placed by relative moves (`Td`/`TD`, as word
//! processors write each run), the first of them moves back by as much and a `Td` after
//! the line's last op moves the line matrix forward again, so the lines after it stay.
//! A line that crosses a wide gap (a table's next column, a tab stop), is placed by an
//! absolute `Tm`, or shares its ops with other lines keeps its place and the hole stays
//! (the extracted text is tidy either way).
//!
//! An inline insert is the mirror image: the same planning with a forward shift pushes
//! the rest of the line on by the new text's width ([`Shift::Forward`]).

use pdf_content::write::write_number;
use pdf_content::{Glyph, OpKind, StreamId};

use crate::plan::fit::spacing_at;
use crate::plan::rewrite::ByteEdit;

use crate::find::Match;
use crate::model::text::{union, writing_dir};
use crate::model::PageModel;

/// A gap wider than this (in ems of the glyph's size) separates columns, not words.
pub(crate) const MAX_WORD_GAP_EM: f64 = 1.5;

/// How far the rest of a line moves.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shift {
    /// Back to where the removed text began (a delete).
    CloseUp,
    /// Forward by this user-space length along the writing direction (an inline insert).
    Forward(f64),
}

/// Why the rest of a line cannot move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stay {
    /// Nothing visible follows on the line (or there is nothing to move).
    NoRest,
    /// A gap wider than a word gap (a column, a tab stop) follows.
    Gap,
    /// The rest is placed absolutely, in another stream, or shares its ops with other
    /// lines.
    Placed,
}

/// How the rest of a line moves (closes up after a delete, or is pushed on by an insert).
pub(crate) struct CloseUp {
    /// The `TJ` number to add after glyph `after_glyph` (the last removed one).
    pub kern: f64,
    /// The last removed glyph.
    pub after_glyph: usize,
    /// Boxes of the glyphs that move, united (user space): their old places, which also
    /// hold their new ones.
    pub moved_box: [f64; 4],
    /// Further byte edits of the stream (relative placement): the first move of the rest
    /// of the line shortened, and a move back after the line.
    pub edits: Vec<ByteEdit>,
    /// The glyphs that move (content order).
    pub moving: Vec<usize>,
    /// Where they move, in user space.
    pub shift: [f64; 2],
}

/// The part of a content stream that draws the rest of a line by relative moves.
struct Region {
    /// The rest's last glyph (content order).
    end_glyph: usize,
    /// Index of the first `Td`/`TD` op in the region.
    first_move: usize,
}

/// The close-up for deleting `removed` (glyph indices in content order: the match and the
/// space tidied with it), or `None` when the rest of the line stays where it is.
pub(crate) fn plan(model: &PageModel, m: &Match, removed: &[usize]) -> Option<CloseUp> {
    plan_shift(model, m, removed, Shift::CloseUp).ok()
}

/// The move of the rest of the line after `removed` (glyph indices in content order: the
/// match, and for a delete the space tidied with it) by `shift`, or why it stays.
pub(crate) fn plan_shift(
    model: &PageModel,
    m: &Match,
    removed: &[usize],
    shift: Shift,
) -> Result<CloseUp, Stay> {
    let glyphs = &model.glyphs.glyphs;
    let line = &model.lines[m.line];
    let mut rest: Vec<usize> = Vec::new();
    for &g in line.byte_glyph[m.end..].iter().flatten() {
        if !removed.contains(&g) && !rest.contains(&g) {
            rest.push(g);
        }
    }
    let visible = |g: &usize| {
        glyphs[*g]
            .unicode
            .as_deref()
            .is_some_and(|u| !u.trim().is_empty())
    };
    if !rest.iter().any(visible) {
        return Err(Stay::NoRest);
    }
    let (Some(&next), Some(&last), Some(&first)) =
        (rest.first(), removed.iter().max(), removed.iter().min())
    else {
        return Err(Stay::NoRest);
    };
    let lg = &glyphs[last];
    // An insert pushes on the rest up to a column gap; what lies beyond keeps its place.
    let ahead = matches!(shift, Shift::Forward(_)).then(|| before_gap(glyphs, &rest, last));
    let (moving, relative) = ahead
        .filter(|a| a.iter().any(visible))
        .and_then(|a| moving_glyphs(model, &a, last, visible).ok())
        .map_or_else(|| moving_glyphs(model, &rest, last, visible), Ok)?;
    let dir = writing_dir(lg);
    let along = |g: &Glyph| g.trm[4] * dir[0] + g.trm[5] * dir[1];
    let end_of = |g: &Glyph| far_end(g, dir);
    let em = |g: &Glyph| (g.trm[2] * g.trm[2] + g.trm[3] * g.trm[3]).sqrt();
    // Word gaps only, from the phrase to the line's end.
    let mut prev = glyphs[last].clone();
    for &g in &moving {
        let gl = &glyphs[g];
        if along(gl) - end_of(&prev) > MAX_WORD_GAP_EM * em(gl) {
            return Err(Stay::Gap);
        }
        prev = gl.clone();
    }
    // How far the rest moves back (negative: forward).
    let d = match shift {
        Shift::Forward(by) => -by,
        Shift::CloseUp => {
            let text = &line.text;
            let before = text[..m.start].chars().next_back();
            let after = text[m.end..].chars().next();
            // "word phrase, more": the comma closes up to the word before, not to the gap.
            let target = if before == Some(' ') && after.is_some_and(|c| c.is_ascii_punctuation()) {
                let prev_kept = line.byte_glyph[..m.start]
                    .iter()
                    .flatten()
                    .rev()
                    .find(|g| !removed.contains(g) && visible(g))
                    .ok_or(Stay::NoRest)?;
                end_of(&glyphs[*prev_kept])
            } else {
                along(&glyphs[first])
            };
            along(&glyphs[next]) - target
        }
    };
    let tiny = 1e-3 * em(lg);
    let too_small = match shift {
        Shift::CloseUp => d <= tiny,
        Shift::Forward(_) => d.abs() <= tiny,
    };
    if too_small {
        return Err(Stay::NoRest);
    }
    let axis = if lg.vertical {
        [lg.trm[2], lg.trm[3]]
    } else {
        [lg.trm[0], lg.trm[1]]
    };
    let unit = (axis[0] * axis[0] + axis[1] * axis[1]).sqrt().max(1e-9);
    let moved_box = moving
        .iter()
        .map(|&g| glyphs[g].bbox)
        .reduce(union)
        .unwrap_or(lg.bbox);
    let edits = match relative {
        Some(region) => relative_edits(model, lg.stream, &region, d).ok_or(Stay::Placed)?,
        None => Vec::new(),
    };
    Ok(CloseUp {
        // A positive number moves the pen back along the writing direction by
        // value/1000 of the rendering matrix's axis.
        kern: d * 1000.0 / unit,
        after_glyph: last,
        moved_box,
        edits,
        moving,
        shift: [-d * dir[0], -d * dir[1]],
    })
}

/// How far glyph `g`'s box reaches along direction `dir` (its far corner).
fn far_end(g: &Glyph, dir: [f64; 2]) -> f64 {
    let b = g.bbox;
    [(b[0], b[1]), (b[2], b[3]), (b[0], b[3]), (b[2], b[1])]
        .iter()
        .map(|(x, y)| x * dir[0] + y * dir[1])
        .fold(f64::NEG_INFINITY, f64::max)
}

/// The glyphs of `rest` (the rest of a line after glyph `last`, in line order) before the
/// first gap wider than a word gap (a column, a tab stop): an inline insert pushes those on
/// while the text beyond the gap keeps its place ([`crate::plan::room::room_for_shift`]
/// keeps the pushed words clear of it).
fn before_gap(glyphs: &[Glyph], rest: &[usize], last: usize) -> Vec<usize> {
    let dir = writing_dir(&glyphs[last]);
    let along = |g: &Glyph| g.trm[4] * dir[0] + g.trm[5] * dir[1];
    let end_of = |g: &Glyph| far_end(g, dir);
    let mut prev = &glyphs[last];
    for (k, &g) in rest.iter().enumerate() {
        let gl = &glyphs[g];
        if gl.unicode.as_deref().is_none_or(|u| u.trim().is_empty()) {
            continue;
        }
        let em = gl.trm[2].hypot(gl.trm[3]);
        if along(gl) - end_of(prev) > MAX_WORD_GAP_EM * em {
            return rest[..k].to_vec();
        }
        prev = gl;
    }
    rest.to_vec()
}

/// The glyphs that move with the rest of the line after glyph `last`: every glyph the
/// pen draws after it until the text position is set again, which must be exactly the
/// rest of this line (`rest`); else, when the rest is placed by relative moves only, the
/// glyphs up to its end and the region of those moves.
fn moving_glyphs(
    model: &PageModel,
    rest: &[usize],
    last: usize,
    visible: impl Fn(&usize) -> bool + Copy,
) -> Result<(Vec<usize>, Option<Region>), Stay> {
    let glyphs = &model.glyphs.glyphs;
    let lg = &glyphs[last];
    let ops = &model.glyphs.stream(lg.stream).ok_or(Stay::Placed)?.ops;
    let mut flow_end = lg.op_index + 1;
    while let Some(op) = ops.get(flow_end) {
        if breaks_flow(&op.kind) {
            break;
        }
        flow_end += 1;
    }
    let mut moving: Vec<usize> = Vec::new();
    for (i, g) in glyphs.iter().enumerate().skip(last + 1) {
        if g.stream != lg.stream || g.op_index >= flow_end {
            // Glyphs of another stream drawn inside the flow (a form run by `Do` would
            // have broken it) end it too.
            break;
        }
        moving.push(i);
    }
    if moving
        .iter()
        .filter(|g| visible(g))
        .any(|g| !rest.contains(g))
    {
        return Err(Stay::Placed);
    }
    // Not one flow: the rest may still be placed by relative moves only.
    if rest
        .iter()
        .filter(|g| visible(g))
        .any(|g| !moving.contains(g))
    {
        if lg.vertical {
            return Err(Stay::Placed);
        }
        let region = relative_region(model, rest, last, visible).ok_or(Stay::Placed)?;
        let moving = (last + 1..=region.end_glyph).collect();
        return Ok((moving, Some(region)));
    }
    Ok((moving, None))
}

/// For a rest of line placed by relative moves after glyph `last`: the region to move,
/// when it draws nothing but the rest's glyphs, places nothing absolutely, and nothing
/// after it continues the pen's flow.
fn relative_region(
    model: &PageModel,
    rest: &[usize],
    last: usize,
    visible: impl Fn(&usize) -> bool,
) -> Option<Region> {
    let glyphs = &model.glyphs.glyphs;
    let lg = &glyphs[last];
    let end_glyph = rest.iter().copied().filter(|g| visible(g)).max()?;
    if rest.iter().any(|&g| g < last) {
        return None;
    }
    for (i, g) in glyphs.iter().enumerate().take(end_glyph + 1).skip(last + 1) {
        if g.stream != lg.stream || (visible(&i) && !rest.contains(&i)) {
            return None;
        }
    }
    let ops = &model.glyphs.stream(lg.stream)?.ops;
    let end_op = glyphs[end_glyph].op_index;
    let mut first_move = None;
    for (oi, op) in ops
        .iter()
        .enumerate()
        .take(end_op + 1)
        .skip(lg.op_index + 1)
    {
        match op.kind {
            OpKind::MoveText(_) | OpKind::MoveTextSetLeading(_) => {
                first_move.get_or_insert(oi);
            }
            ref k if breaks_flow(k) => return None,
            _ => {}
        }
    }
    // Text drawn after the region without being placed anew would move with it.
    for op in ops.iter().skip(end_op + 1) {
        match op.kind {
            OpKind::ShowText | OpKind::ShowTextArray => return None,
            ref k if breaks_flow(k) => break,
            _ => {}
        }
    }
    Some(Region {
        end_glyph,
        first_move: first_move?,
    })
}

/// The region's first move shortened by `d` (user space) and the move back after the
/// region's last op, as byte edits.
fn relative_edits(
    model: &PageModel,
    stream: StreamId,
    region: &Region,
    d: f64,
) -> Option<Vec<ByteEdit>> {
    let glyphs = &model.glyphs.glyphs;
    let ops = &model.glyphs.stream(stream)?.ops;
    let op = ops.get(region.first_move)?;
    let (t, operator) = match op.kind {
        OpKind::MoveText(t) => (t, &b"Td"[..]),
        OpKind::MoveTextSetLeading(t) => (t, &b"TD"[..]),
        _ => return None,
    };
    // Line-matrix units per user-space length, from the first glyph the move places: its
    // rendering matrix is [Tfs·Th 0 0 Tfs 0 Ts] × Tm × CTM.
    let g = glyphs
        .iter()
        .find(|g| g.stream == stream && g.op_index > region.first_move)?;
    let th = spacing_at(model, stream, g.op_index).scale;
    let axis = (g.trm[0] * g.trm[0] + g.trm[1] * g.trm[1]).sqrt();
    if axis < 1e-9 {
        return None;
    }
    let dt = d * g.font_size * th / axis;
    let mut moved = Vec::new();
    write_number(&mut moved, t[0] - dt);
    moved.push(b' ');
    write_number(&mut moved, t[1]);
    moved.push(b' ');
    moved.extend_from_slice(operator);
    let mut back = vec![b' '];
    write_number(&mut back, dt);
    back.extend_from_slice(b" 0 Td ");
    let at = ops[glyphs[region.end_glyph].op_index].span.end;
    Some(vec![
        (stream, op.span.clone(), moved),
        (stream, at..at, back),
    ])
}

/// Ops after which the pen is placed anew (or the frame changes), so later text does not
/// follow a kern written before them.
fn breaks_flow(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::BeginText
            | OpKind::EndText
            | OpKind::MoveText(_)
            | OpKind::MoveTextSetLeading(_)
            | OpKind::TextMatrix(_)
            | OpKind::NextLine
            | OpKind::NextLineShowText
            | OpKind::NextLineShowTextSpacing { .. }
            | OpKind::Transform(_)
            | OpKind::XObject(_)
            | OpKind::InlineImage { .. }
            | OpKind::Other(_)
            | OpKind::Malformed(_)
            | OpKind::Trailing
    )
}
