//! Rewriting the text-showing ops a plan touches, byte for byte everywhere else.

use std::collections::{BTreeMap, HashMap};

use pdf_content::write::{write_hex_string, write_literal_string, write_number};
use pdf_content::{patch, Op, OpKind, StreamId, Value};

use crate::model::PageModel;
use crate::plan::actual::ActualTexts;

/// A byte edit of one content stream: the range replaced and the new bytes.
pub(crate) type ByteEdit = (StreamId, std::ops::Range<usize>, Vec<u8>);

/// New text drawn in place of a glyph (before the glyph's own removal).
#[derive(Debug, Clone)]
pub(crate) struct Insert {
    /// Ops written before the new codes (font switch, `Tz`).
    pub before: Vec<u8>,
    /// The codes, and kerns standing in for spaces the font lacks.
    pub items: Vec<InsertItem>,
    /// Write the codes as hex even when the string was literal.
    pub hex: bool,
    /// `TJ` number after the codes (moves back over them when the rest keeps its place).
    pub kern_after: f64,
    /// Ops written after the new text (switch back).
    pub after: Vec<u8>,
}

/// A piece of inserted text.
#[derive(Debug, Clone)]
pub(crate) enum InsertItem {
    /// Codes.
    Codes(Vec<u8>),
    /// A `TJ` number.
    Kern(f64),
    /// Ops run between the pieces (a switch to another of the document's fonts, or the
    /// font, size or colour switch of a styled part).
    Raw(Vec<u8>),
}

/// What happens to one glyph: a matched glyph is removed (and new text may be drawn in
/// its place); a kept glyph stays and only moves (`keep`: a line shifted to keep its
/// alignment), by `TJ` numbers before it (`insert`'s items) and after it (`remove_kern`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Action {
    /// New text drawn where this glyph was (for a kept glyph: the numbers before it).
    pub insert: Option<Insert>,
    /// `TJ` number standing in for the removed glyph (`None`: the rest moves up); after a
    /// kept glyph, a number written after it.
    pub remove_kern: Option<f64>,
    /// The glyph's own bytes stay.
    pub keep: bool,
}

/// A piece of a rewritten or new text-showing sequence.
pub(crate) enum Piece {
    /// Codes, written as a hex string when the flag is set.
    Text(Vec<u8>, bool),
    /// A `TJ` number.
    Kern(f64),
    /// Ops between `TJ` arrays.
    Raw(Vec<u8>),
}

/// New decoded bytes of every stream with a glyph in `actions`.
pub(crate) fn rewrite_ops(
    model: &PageModel,
    actions: &HashMap<usize, Action>,
    actual: &ActualTexts,
) -> Result<Vec<(StreamId, Vec<u8>)>, String> {
    rewrite_ops_with(model, actions, actual, &[])
}

/// [`rewrite_ops`] plus `extra` byte edits (ranges of a stream's bytes, never inside a
/// text-showing op that `actions` rewrites).
pub(crate) fn rewrite_ops_with(
    model: &PageModel,
    actions: &HashMap<usize, Action>,
    actual: &ActualTexts,
    extra: &[ByteEdit],
) -> Result<Vec<(StreamId, Vec<u8>)>, String> {
    // stream → op → element → glyph indices in code order
    let mut touched: BTreeMap<StreamId, BTreeMap<usize, ()>> = BTreeMap::new();
    for &g in actions.keys() {
        let gl = &model.glyphs.glyphs[g];
        touched
            .entry(gl.stream)
            .or_default()
            .insert(gl.op_index, ());
    }
    for sid in actual.streams() {
        touched.entry(sid).or_default();
    }
    for (sid, _, _) in extra {
        touched.entry(*sid).or_default();
    }
    let mut out = Vec::new();
    for (sid, ops) in touched {
        let stream = model
            .glyphs
            .stream(sid)
            .ok_or_else(|| "content stream vanished".to_string())?;
        let mut edits = Vec::new();
        for &op_index in ops.keys() {
            let op = &stream.ops[op_index];
            let mut bytes = rewrite_op(model, sid, op_index, op, actions)?;
            // The op may follow the previous token without white space (`TD[(a)]TJ`);
            // ours starts with a number or name, so separate it.
            let glued = op.span.start > 0
                && stream
                    .bytes
                    .get(op.span.start - 1)
                    .is_some_and(|b| !b.is_ascii_whitespace());
            if glued {
                bytes.insert(0, b' ');
            }
            edits.push((op.span.clone(), bytes));
        }
        edits.extend(actual.edits_for(sid));
        edits.extend(
            extra
                .iter()
                .filter(|(s, _, _)| *s == sid)
                .map(|(_, r, b)| (r.clone(), b.clone())),
        );
        let new = patch(&stream.bytes, &edits).map_err(|e| e.to_string())?;
        out.push((sid, new));
    }
    Ok(out)
}

fn rewrite_op(
    model: &PageModel,
    sid: StreamId,
    op_index: usize,
    op: &Op,
    actions: &HashMap<usize, Action>,
) -> Result<Vec<u8>, String> {
    let shown = op
        .shown_operand()
        .ok_or_else(|| "not a text-showing op".to_string())?;
    let elements: Vec<(usize, &Value)> = match &shown.value {
        Value::Array(items) => items.iter().map(|o| &o.value).enumerate().collect(),
        v => vec![(0, v)],
    };
    let mut glyphs_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, g) in model.glyphs.glyphs.iter().enumerate() {
        if g.stream == sid && g.op_index == op_index {
            glyphs_of.entry(g.string_index).or_default().push(i);
        }
    }
    let mut pieces = Vec::new();
    for (ei, value) in elements {
        match value {
            Value::Integer(n) => pieces.push(Piece::Kern(*n as f64)),
            Value::Real(n) => pieces.push(Piece::Kern(*n)),
            Value::String(s) => {
                let mut members = glyphs_of.remove(&ei).unwrap_or_default();
                members.sort_by_key(|&g| model.glyphs.glyphs[g].code_span.start);
                let mut run = Vec::new();
                let mut pos = 0;
                for g in members {
                    let span = model.glyphs.glyphs[g].code_span.clone();
                    if span.start < pos || span.end > s.bytes.len() {
                        return Err("glyph bytes out of order".into());
                    }
                    // Bytes no glyph claimed (unreadable codes) stay as they were.
                    run.extend_from_slice(&s.bytes[pos..span.start]);
                    pos = span.end;
                    let Some(action) = actions.get(&g) else {
                        run.extend_from_slice(&s.bytes[span]);
                        continue;
                    };
                    if !run.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut run), s.hex));
                    }
                    if let Some(ins) = &action.insert {
                        if !ins.before.is_empty() {
                            pieces.push(Piece::Raw(ins.before.clone()));
                        }
                        for item in &ins.items {
                            pieces.push(match item {
                                InsertItem::Codes(c) => Piece::Text(c.clone(), ins.hex || s.hex),
                                InsertItem::Kern(k) => Piece::Kern(*k),
                                InsertItem::Raw(r) => Piece::Raw(r.clone()),
                            });
                        }
                        pieces.push(Piece::Kern(ins.kern_after));
                        if !ins.after.is_empty() {
                            pieces.push(Piece::Raw(ins.after.clone()));
                        }
                    }
                    if action.keep {
                        pieces.push(Piece::Text(s.bytes[span].to_vec(), s.hex));
                    }
                    if let Some(k) = action.remove_kern {
                        pieces.push(Piece::Kern(k));
                    }
                }
                run.extend_from_slice(&s.bytes[pos..]);
                if !run.is_empty() {
                    pieces.push(Piece::Text(run, s.hex));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    match &op.kind {
        OpKind::NextLineShowText => out.extend_from_slice(b"T* "),
        OpKind::NextLineShowTextSpacing {
            word_spacing,
            char_spacing,
        } => {
            write_number(&mut out, *word_spacing);
            out.extend_from_slice(b" Tw ");
            write_number(&mut out, *char_spacing);
            out.extend_from_slice(b" Tc T* ");
        }
        _ => {}
    }
    write_pieces(&mut out, &pieces);
    while out.last() == Some(&b' ') {
        out.pop();
    }
    if out.is_empty() {
        out.extend_from_slice(b"[] TJ");
    }
    Ok(out)
}

/// `[…] TJ` arrays, split where raw ops must run between them.
pub(crate) fn write_pieces(out: &mut Vec<u8>, pieces: &[Piece]) {
    let mut open = false;
    let mut pending_kern = 0.0;
    let flush_kern = |out: &mut Vec<u8>, k: &mut f64| {
        if *k != 0.0 {
            if out.last().is_some_and(|b| !b"[]()<>".contains(b)) {
                out.push(b' ');
            }
            write_number(out, *k);
            *k = 0.0;
        }
    };
    for p in pieces {
        match p {
            Piece::Kern(k) => {
                if !open {
                    out.push(b'[');
                    open = true;
                }
                pending_kern += k;
            }
            Piece::Text(bytes, hex) => {
                if !open {
                    out.push(b'[');
                    open = true;
                }
                flush_kern(out, &mut pending_kern);
                if *hex {
                    write_hex_string(out, bytes);
                } else {
                    write_literal_string(out, bytes);
                }
            }
            Piece::Raw(raw) => {
                if open {
                    flush_kern(out, &mut pending_kern);
                    out.extend_from_slice(b"] TJ ");
                    open = false;
                }
                out.extend_from_slice(raw);
            }
        }
    }
    if open {
        flush_kern(out, &mut pending_kern);
        out.extend_from_slice(b"] TJ");
    }
}
