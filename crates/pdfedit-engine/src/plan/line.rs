//! Planning a replace or delete: which glyph bytes go, which codes come in, and the kerns
//! that keep the rest of the line where it was.

use std::collections::HashMap;

use lopdf::Document;
use pdf_content::interp::matrix::transform_rect;

use crate::plan::actual::ActualTexts;
use crate::plan::align;
use crate::plan::choose::{
    choose_font, embed_resolved, encode_in_phrase_fonts, encode_segments, prefer_shown_codes,
    space_width, Chosen, Seg,
};
use crate::plan::close_up::{self, Shift, Stay};

use crate::find::Match;
use crate::model::fonts::{own_font_source, strip_subset, DocFonts};
use crate::model::text::union;
use crate::model::PageModel;
use crate::plan::fit::{decide, spacing_at, text_width, Fitted, Run};
use crate::plan::rewrite::{rewrite_ops_with, Action, Insert, InsertItem};
use crate::plan::room::{
    ascent_descent, collision, collision_beyond, ink_margin, pad, room_after, room_for_shift,
    tidy_space,
};
use crate::plan::style;
use crate::plan::vertical;
use crate::plan::{PagePlan, Planned, Refusal, REFLOW_NEEDED};
use crate::types::FailReason;
use crate::types::{Alignment, Edit, EditOp, Fit, FontPolicy, Style};
use pdf_fonts::registry::Kind;

/// Plans every match of one edit on one page. `keep_prefix` is non-zero for an inline
/// insert only: that many bytes of the replacement (the anchor) keep the line's style, and
/// the rest of the line is pushed on by the new text instead of being fitted.
/// A plan whose aligned lines would draw over other text is made again with every line
/// keeping its start (when the first attempt embedded no font, so nothing is left over).
pub(crate) fn plan_page(
    doc: &mut Document,
    fonts: &mut DocFonts,
    model: &PageModel,
    matches: &[Match],
    edit: &Edit,
    policy: FontPolicy,
    keep_prefix: usize,
) -> Result<PagePlan, Refusal> {
    let objects = doc.max_id;
    let args = (matches, edit, policy, keep_prefix);
    match plan_page_with(doc, fonts, model, args, true) {
        Err((FailReason::CollateralChange, _)) if doc.max_id == objects => {
            plan_page_with(doc, fonts, model, args, false)
        }
        other => other,
    }
}

/// [`plan_page`], keeping the alignment of replaced lines when `align`.
fn plan_page_with(
    doc: &mut Document,
    fonts: &mut DocFonts,
    model: &PageModel,
    (matches, edit, policy, keep_prefix): (&[Match], &Edit, FontPolicy, usize),
    align: bool,
) -> Result<PagePlan, Refusal> {
    let glyphs = &model.glyphs.glyphs;
    let inline = keep_prefix > 0;
    let mut actions: HashMap<usize, Action> = HashMap::new();
    let mut changes = Vec::new();
    let mut actual = ActualTexts::default();
    // New boxes, each with the old text's box drawn the same way (its room).
    let mut new_boxes: Vec<([f64; 4], Option<[f64; 4]>)> = Vec::new();
    let mut edited: Vec<usize> = Vec::new();
    // Byte edits besides the rewritten ops (a delete's close-up by relative moves).
    let mut extra_edits = Vec::new();
    // The page's line segments, read when a replace first needs its line's alignment.
    let mut segs: Option<Vec<align::Segment>> = None;
    let mut old_box_extra: Vec<[f64; 4]> = Vec::new();
    for (mi, m) in matches.iter().enumerate() {
        if model.lines[m.line].stacked && m.glyphs.len() > 1 {
            return Err((
                FailReason::UnsupportedLayout,
                "the text is a column of characters set one under the other in a \
                 horizontal font; only redaction edits such columns"
                    .into(),
            ));
        }
        let mut members = m.glyphs.clone();
        if edit.op == EditOp::Delete {
            let first_stream = glyphs[members[0]].stream;
            if let Some(extra) = tidy_space(model, m).filter(|&g| glyphs[g].stream == first_stream)
            {
                members.push(extra);
                members.sort_unstable();
            }
        }
        let first = &glyphs[members[0]];
        if members.iter().any(|&g| glyphs[g].stream != first.stream) {
            return Err((
                FailReason::UnsupportedLayout,
                "the text spans several content streams".into(),
            ));
        }
        if members.iter().any(|g| actions.contains_key(g)) {
            continue; // overlapping match already planned
        }
        let font = fonts.get(doc, &first.font).ok_or_else(|| {
            (
                FailReason::MissingGlyphs,
                "the text's font cannot be read".to_string(),
            )
        })?;
        let vertical = first.vertical;
        let mut sp = spacing_at(model, first.stream, first.op_index);
        if vertical {
            // Horizontal scaling does not apply to a column.
            sp.scale = 1.0;
        }
        let size = first.font_size;
        // An inline insert keeps the anchor (and the word space after it) in the line's
        // own style; a style override applies to the rest.
        let styled = edit.style != Style::default();
        if styled && vertical {
            return Err((
                FailReason::UnsupportedLayout,
                "style overrides are not applied to vertical text".into(),
            ));
        }
        let cut = if styled && keep_prefix > 0 && keep_prefix < m.replacement.len() {
            keep_prefix
        } else {
            0
        };
        let (head_text, tail_text) = m.replacement.split_at(cut);
        let head_segs = if head_text.is_empty() {
            Vec::new()
        } else {
            encode_segments(&font.font, head_text).map_err(|e| {
                (
                    FailReason::UnsupportedLayout,
                    format!("the anchor cannot be re-encoded in its own font ({e})"),
                )
            })?
        };
        // Font switches inside the new text, when the phrase's own fonts share it out.
        let mut switches: Vec<(usize, pdf_content::FontKey)> = Vec::new();
        let mut chosen = if tail_text.is_empty() {
            Chosen {
                segs: Vec::new(),
                font_id: None,
                switch_to: None,
                source: "none",
                name: strip_subset(font.font.base_font()).to_string(),
                warning: None,
            }
        } else if vertical {
            // Another font would be horizontal: a column is written in its own font only.
            let segs = encode_segments(&font.font, tail_text).map_err(|e| {
                let msg = format!("the vertical font lacks glyphs for the new text ({e})");
                (FailReason::MissingGlyphs, msg)
            })?;
            in_own_font(&font.font, segs)
        } else if let Some(name) = &edit.style.font {
            let own_style = font.font.style();
            let resolved =
                style::resolve_font(name, own_style.bold, own_style.italic).ok_or_else(|| {
                    (
                        FailReason::MissingGlyphs,
                        format!("style.font {name} is not installed"),
                    )
                })?;
            if policy == FontPolicy::MetricOnly && resolved.kind == Kind::LookAlike {
                return Err((
                    FailReason::NoMetricFont,
                    format!("style.font {} is a look-alike", resolved.name),
                ));
            }
            embed_resolved(doc, fonts, model, first, &resolved, tail_text)?
        } else {
            match choose_font(doc, fonts, model, first, tail_text, policy) {
                Ok(c) => c,
                Err(refusal) => {
                    let Some((segs, sw)) = (cut == 0)
                        .then(|| encode_in_phrase_fonts(doc, fonts, model, &members, tail_text))
                        .flatten()
                    else {
                        return Err(refusal);
                    };
                    switches = sw;
                    in_own_font(&font.font, segs)
                }
            }
        };
        if chosen.font_id.is_none() && switches.is_empty() {
            prefer_shown_codes(model, &first.font, &font.font, &mut chosen.segs);
        }
        let new_font = match chosen.font_id {
            Some(id) => fonts.by_id(doc, id).unwrap_or_else(|| font.clone()),
            None => font.clone(),
        };
        // The size asked for is the rendered size in points; the Tf size that gives it.
        let rendered = first.trm[2].hypot(first.trm[3]).max(1e-6);
        let tail_size = edit.style.size.map_or(size, |s| size * s / rendered);
        let own_space_w = space_width(&font.font);
        // A column's word space is a full em.
        let space_w = if vertical {
            1000.0
        } else {
            space_width(&new_font.font)
        };
        let head_w: f64 = head_segs
            .iter()
            .map(|seg| match seg {
                Seg::Codes(c) => text_width(&font.font, c, size, sp),
                Seg::Space => {
                    (own_space_w / 1000.0 * size + sp.char_spacing + sp.word_spacing) * sp.scale
                }
            })
            .sum();
        // The font each segment is drawn in.
        let mut seg_fonts = Vec::with_capacity(chosen.segs.len());
        let mut current = new_font.clone();
        for i in 0..chosen.segs.len() {
            if let Some((_, key)) = switches.iter().find(|(at, _)| *at == i) {
                current = fonts.get(doc, key).unwrap_or(current);
            }
            seg_fonts.push(current.clone());
        }
        let width_at = |shrink: f64| -> f64 {
            let sz = tail_size * shrink;
            head_w
                + chosen
                    .segs
                    .iter()
                    .zip(&seg_fonts)
                    .map(|(seg, seg_font)| match seg {
                        Seg::Codes(c) if vertical => {
                            vertical::text_length(&new_font.font, c, sz, sp)
                        }
                        Seg::Codes(c) => text_width(&seg_font.font, c, sz, sp),
                        Seg::Space => {
                            (space_w / 1000.0 * sz + sp.char_spacing + sp.word_spacing) * sp.scale
                        }
                    })
                    .sum::<f64>()
        };
        let new_w = width_at(1.0);
        // Advances run down a column as negative numbers.
        let old_w: f64 = members.iter().map(|&g| glyphs[g].advance.abs()).sum();
        // A word gap after the phrase stays a word gap: the new text may use the room up
        // to the next word less a space (or less the old gap when that was narrower).
        let word_gap = if vertical {
            space_w
        } else {
            space_width(&font.font)
        } / 1000.0
            * size
            * sp.scale;
        let mut room = room_after(model, m, first, sp.scale, (word_gap, old_w));
        // A replace keeps its line's alignment when it changes the line's width.
        let alignable = align
            && edit.op == EditOp::Replace
            && !inline
            && !vertical
            && edit.fit != Fit::None
            // A reflow lays the paragraph out again itself; the room beside an aligned line
            // would keep a tripled phrase on its line, moved over its neighbours' reading
            // order (tests/reflow_corpus.rs on the IRS W-9).
            && edit.fit != Fit::Reflow
            && head_segs.is_empty()
            && matches.iter().filter(|o| o.line == m.line).count() == 1;
        let aligned = if alignable {
            let segs = segs.get_or_insert_with(|| align::segments(model));
            align_line(model, segs, m, &members)
        } else {
            None
        };
        // How wide the match is drawn (its kerns and word gaps included), text space: what
        // an aligned line's width changes by is the new text's width less this.
        let old_span = {
            let per_unit = axis_len(first) / unit_of(size, sp.scale);
            let x0 = members
                .iter()
                .map(|&g| glyphs[g].bbox[0])
                .fold(f64::MAX, f64::min);
            let x1 = members
                .iter()
                .map(|&g| glyphs[g].bbox[2])
                .fold(f64::MIN, f64::max);
            ((x1 - x0) / per_unit).max(0.0)
        };
        if let Some((me, al, true)) = aligned {
            // A centred or right-aligned line grows to its left too: the room is beside it.
            let segs = segs.as_deref().unwrap_or_default();
            let (l, r) = align::free_beside(segs, me, model.geom.x_range());
            let per_unit = axis_len(first) / unit_of(size, sp.scale);
            let slack = match al {
                Alignment::Centre => Some(2.0 * l.min(r)),
                Alignment::Right => Some(l),
                // A justified line's word gaps take the change: the new text keeps its
                // size and spacing where they can (the fit condenses only past that).
                Alignment::Justified => Some(align::justified_slack(model, &segs[me], &members)),
                Alignment::Left => None,
            };
            match (al, slack) {
                // Never less room than before the next word on the line.
                (Alignment::Justified, Some(slack)) => room = room.max(old_span + slack / per_unit),
                (_, Some(slack)) => room = old_span + slack / per_unit,
                _ => {}
            }
        }
        // A size asked for is kept: fitting may condense but not shrink it.
        let can_shrink = edit.style.size.is_none();
        let fitted = if inline {
            // The anchor and its new text keep their size; the rest of the line moves on.
            Ok(Fitted {
                condense: 1.0,
                shrink: 1.0,
                keep_place: true,
            })
        } else {
            let run = if vertical { Run::Column } else { Run::Line };
            decide(edit.fit, new_w, old_w, room, width_at, can_shrink, run)
        };
        let fitted = fitted.map_err(|msg| {
            let reason = if msg.starts_with("reflow") {
                REFLOW_NEEDED
            } else {
                FailReason::Overflow
            };
            (reason, msg)
        })?;
        let eff_size = tail_size * fitted.shrink;
        let eff_scale = sp.scale * fitted.condense;
        let drawn_w = if head_segs.is_empty() {
            width_at(fitted.shrink) * fitted.condense
        } else {
            // A kept anchor is never condensed (inline inserts do not fit).
            width_at(fitted.shrink)
        };
        // Wrapping ops around the new text: font switch, size, scaling and colour; after
        // it, the state in force before is set again.
        let mut before = Vec::new();
        let mut after = Vec::new();
        let font_name = chosen
            .switch_to
            .clone()
            .unwrap_or_else(|| first.font.name.clone());
        if chosen.switch_to.is_some() || eff_size != size || !switches.is_empty() {
            before.extend(tf(&font_name, eff_size));
            after.extend(tf(&first.font.name, size));
        }
        if fitted.condense != 1.0 {
            before.extend(tz(eff_scale));
            after.splice(0..0, tz(sp.scale));
        }
        if let Some(c) = edit.style.color.as_deref().and_then(style::parse_hex) {
            let restore = style::fill_state_at(model, first.stream, first.op_index, false)
                .ok_or_else(|| {
                    (
                        FailReason::UnsupportedLayout,
                        "the text's colour is inherited from outside its form XObject".to_string(),
                    )
                })?;
            before.extend(style::rgb_op(c));
            after.splice(0..0, restore);
        }
        // The new text's box when it starts `start` further on (text space), user space.
        let text_box = |start: f64| {
            let (asc, desc) = ascent_descent(&new_font.font);
            let tall = (eff_size / size).max(fitted.shrink);
            let unit = unit_of(size, sp.scale);
            let x0 = start / unit;
            transform_rect(
                &first.trm,
                [x0, desc * tall, x0 + drawn_w / unit, asc * tall],
            )
        };
        let (alignment, moves) = match aligned {
            Some((me, al, _)) if fitted.keep_place => {
                let d = drawn_w - old_span;
                let segs = segs.as_deref().unwrap_or_default();
                if al == Alignment::Left || d.abs() < 1e-9 {
                    (Some(al), None)
                } else {
                    match align::plan_moves(model, &segs[me], m, &members, al, d) {
                        // Moved onto other text where the line's start kept would not be:
                        // the start stays (an overlap between lines set tight).
                        Some(mv)
                            if moved_clash(
                                model,
                                &segs[me].glyphs,
                                &members,
                                &edited,
                                &mv,
                                text_box,
                            ) =>
                        {
                            (None, None)
                        }
                        Some(mv) => (Some(al), Some(mv)),
                        None => (None, None),
                    }
                }
            }
            _ => (None, None),
        };
        // TJ numbers move the pen back along a line but further down a column (§9.4.4).
        let back = if vertical { -1.0 } else { 1.0 };
        let (lead, lead_back) = match &moves {
            Some(mv) if mv.lead_returns => (mv.lead, mv.lead),
            Some(mv) => (mv.lead, 0.0),
            None => (0.0, 0.0),
        };
        let kern_after = if fitted.keep_place && (drawn_w > 0.0 || lead != 0.0) {
            back * (drawn_w + lead_back) * 1000.0 / (eff_size * eff_scale)
        } else {
            0.0
        };
        for (k, &g) in members.iter().enumerate() {
            let gl = &glyphs[g];
            // Each op may run under its own Tz.
            let op_scale = if gl.op_index == first.op_index || vertical {
                sp.scale
            } else {
                spacing_at(model, gl.stream, gl.op_index).scale
            };
            let remove_kern = fitted
                .keep_place
                .then(|| -back * gl.advance.abs() * 1000.0 / (gl.font_size * op_scale));
            let space_kern = |sw: f64, sz: f64| {
                InsertItem::Kern(-back * (sw + (sp.char_spacing + sp.word_spacing) * 1000.0 / sz))
            };
            let mut items: Vec<InsertItem> = head_segs
                .iter()
                .map(|seg| match seg {
                    Seg::Codes(c) => InsertItem::Codes(c.clone()),
                    Seg::Space => space_kern(own_space_w, size),
                })
                .collect();
            let mut ins_before = before.clone();
            if !items.is_empty() && !ins_before.is_empty() {
                items.push(InsertItem::Raw(std::mem::take(&mut ins_before)));
            }
            // An aligned line's new text starts `lead` further on, in its own size and Tz.
            if k == 0 && lead != 0.0 {
                items.push(InsertItem::Kern(-lead * 1000.0 / (eff_size * eff_scale)));
            }
            for (i, seg) in chosen.segs.iter().enumerate() {
                if let Some((_, key)) = switches.iter().find(|(at, _)| *at == i) {
                    items.push(InsertItem::Raw(tf(&key.name, eff_size)));
                }
                items.push(match seg {
                    Seg::Codes(c) => InsertItem::Codes(c.clone()),
                    Seg::Space => space_kern(space_w, eff_size),
                });
            }
            let insert = (k == 0 && !items.is_empty()).then(|| Insert {
                before: ins_before,
                items,
                hex: chosen.switch_to.is_some() && new_font.font.is_composite(),
                kern_after,
                after: after.clone(),
            });
            actions.insert(
                g,
                Action {
                    insert,
                    remove_kern,
                    keep: false,
                },
            );
        }
        // The kept parts of an aligned line move by numbers around them.
        let per_unit = axis_len(first) / (size * sp.scale).max(1e-9);
        if let Some(mv) = &moves {
            let to_kern = |t: f64| -t * 1000.0 / (size * sp.scale).max(1e-9);
            if mv.after_match != 0.0 {
                if let Some(a) = members.iter().max().and_then(|g| actions.get_mut(g)) {
                    a.remove_kern = Some(a.remove_kern.unwrap_or(0.0) + to_kern(mv.after_match));
                }
            }
            for &(g, t) in &mv.before {
                actions.entry(g).or_default().insert = Some(Insert {
                    before: Vec::new(),
                    items: vec![InsertItem::Kern(to_kern(t))],
                    hex: false,
                    kern_after: 0.0,
                    after: Vec::new(),
                });
            }
            if let Some((g, t)) = mv.after {
                actions.entry(g).or_default().remove_kern = Some(to_kern(t));
            }
            for &(g, t) in &mv.kept {
                actions.entry(g).or_default().keep = true;
                let b = glyphs[g].bbox;
                let dx = t * per_unit;
                old_box_extra.push(b);
                new_boxes.push(([b[0] + dx, b[1], b[2] + dx, b[3]], Some(b)));
                old_box_extra.push([b[0] + dx, b[1], b[2] + dx, b[3]]);
                edited.push(g);
            }
            for &(g, _) in mv.before.iter().chain(mv.after.iter()) {
                actions.entry(g).or_default().keep = true;
            }
            // The whole segment is touched: a part planned to stay may still drift by the
            // renderer's rounding of the widths (PDFium cuts pdfTeX's decimal widths).
            if let (Some((me, _, _)), Some(segs)) = (aligned, segs.as_deref()) {
                old_box_extra.extend(segs[me].glyphs.iter().map(|&g| glyphs[g].bbox));
            }
        }
        let start = moves.as_ref().map_or(0.0, |mv| mv.start) / unit_of(size, sp.scale);
        // The new text's box: from the first glyph's origin, drawn width long.
        let (asc, desc) = ascent_descent(&new_font.font);
        let tall = (eff_size / size).max(fitted.shrink);
        let unit = size * sp.scale;
        let new_box = if vertical {
            // Down the column from the pen, an em wide around it.
            let half = 0.55 * fitted.shrink;
            transform_rect(&first.trm, [-half, -drawn_w / unit, half, 0.0])
        } else {
            transform_rect(
                &first.trm,
                [start, desc * tall, start + drawn_w / unit, asc * tall],
            )
        };
        let mut old_box = members
            .iter()
            .map(|&g| glyphs[g].bbox)
            .fold(m.bbox_user, union);
        if !vertical {
            // The interpreter's boxes follow the descriptor, whose descent some producers
            // write with the wrong sign: the old ink reaches at least a fifth of an em down.
            let (asc, desc) = ascent_descent(&font.font);
            let old_ink = transform_rect(&first.trm, [0.0, desc, old_w / unit, asc]);
            old_box = union(old_box, old_ink);
        }
        for b in old_box_extra.drain(..) {
            old_box = union(old_box, b);
        }
        let mut moved = None;
        let shift = if edit.op == EditOp::Delete {
            close_up::plan(model, m, &members)
        } else if inline {
            let pushed = push_on(model, m, &members, drawn_w / unit, room / unit)?;
            pushed.inspect(|c| edited.extend(c.moving.iter().copied()))
        } else {
            None
        };
        if let Some(c) = shift {
            if let Some(a) = actions.get_mut(&c.after_glyph) {
                a.remove_kern = Some(a.remove_kern.unwrap_or(0.0) + c.kern);
                let to = c.moved_box;
                let [dx, dy] = c.shift;
                old_box = union(
                    union(old_box, to),
                    [to[0] + dx, to[1] + dy, to[2] + dx, to[3] + dy],
                );
                extra_edits.extend(c.edits);
                // The moved ink of an insert's rest of line is checked against the render
                // before, moved (invisible OCR text moves no ink; a delete's close-up keeps
                // the check it had: its area).
                let ink = c.moving.iter().any(|&g| glyphs[g].render_mode != 3);
                if inline && ink {
                    moved = Some((c.moved_box, c.shift));
                }
            }
        }
        if drawn_w > 0.0 {
            // The old text's box, drawn as the new one is (same ascent and descent): what
            // the new text touches inside it, the old text touched.
            let old_room = (!vertical).then(|| {
                let (asc, desc) = ascent_descent(&new_font.font);
                transform_rect(&first.trm, [0.0, desc, old_span / unit, asc])
            });
            new_boxes.push((new_box, old_room));
        }
        edited.extend(members.iter().copied());
        actual.record(model, m);
        changes.push(Planned {
            match_index: mi,
            font_source: chosen.source,
            font_used: chosen.name,
            warning: chosen.warning,
            moved,
            alignment,
            area_user: pad(
                if drawn_w > 0.0 {
                    union(old_box, new_box)
                } else {
                    old_box
                },
                ink_margin(first),
            ),
        });
    }
    if let Some(hit) = collision_beyond(glyphs, &new_boxes, &edited) {
        return Err((
            FailReason::CollateralChange,
            format!("the new text would overlap other text on the page (\"{hit}\")"),
        ));
    }
    let streams = rewrite_ops_with(model, &actions, &actual, &extra_edits)
        .map_err(|e| (FailReason::EngineError, e))?;
    Ok(PagePlan {
        streams,
        changes,
        append: None,
        blank_user: Vec::new(),
    })
}

/// The segment of `segs` holding match `m`, its alignment, and whether the segment can be
/// moved to keep it (its parts are moved by `TJ` numbers of one operator, or the match is
/// all of it). `None` when the match's glyphs draw nothing or lie on no upright line.
fn align_line(
    model: &PageModel,
    segs: &[align::Segment],
    m: &Match,
    members: &[usize],
) -> Option<(usize, Alignment, bool)> {
    let glyphs = &model.glyphs.glyphs;
    let ink = *members.iter().find(|&&g| {
        glyphs[g]
            .unicode
            .as_deref()
            .is_none_or(|u| !u.trim().is_empty())
    })?;
    let me = segs.iter().position(|s| s.glyphs.contains(&ink))?;
    let al = align::detect(segs, me, model.geom.x_range());
    let movable = align::plan_moves(model, &segs[me], m, members, al, 1.0).is_some();
    Some((me, al, movable))
}

/// Whether moving the new text and the kept glyphs of an aligned segment by `mv` brings
/// them onto other text that the unmoved new text would not touch. `text_box(start)` is
/// the new text's box starting `start` further on; every shift is in the text space of the
/// match's first glyph.
fn moved_clash(
    model: &PageModel,
    seg: &[usize],
    members: &[usize],
    edited: &[usize],
    mv: &align::Moves,
    text_box: impl Fn(f64) -> [f64; 4],
) -> bool {
    let glyphs = &model.glyphs.glyphs;
    let Some(first) = members.first().map(|&g| &glyphs[g]) else {
        return false;
    };
    let per_unit = axis_len(first) / advance_unit(model, first);
    let shifted = |b: [f64; 4], t: f64| [b[0] + t * per_unit, b[1], b[2] + t * per_unit, b[3]];
    let mut ignore: Vec<usize> = edited.to_vec();
    ignore.extend(members);
    ignore.extend(seg);
    let mut moved = vec![text_box(mv.start)];
    moved.extend(mv.kept.iter().map(|&(g, t)| shifted(glyphs[g].bbox, t)));
    collision(glyphs, &moved, &ignore).is_some()
        && collision(glyphs, &[text_box(0.0)], &ignore).is_none()
}

fn unit_of(size: f64, scale: f64) -> f64 {
    (size * scale).max(1e-9)
}

/// For an inline insert whose anchor and new text are `new_len` long (in units of the
/// anchor's rendering matrix axis, i.e. its drawn width / (size · Tz)), with `room` (same
/// units) before the next text on the line: the move that pushes the rest of the line on,
/// `None` when the rest keeps its place (nothing follows, or the new text fits the gap
/// before it), or a refusal when the rest cannot move or has no room to.
fn push_on(
    model: &PageModel,
    m: &Match,
    members: &[usize],
    new_len: f64,
    room: f64,
) -> Result<Option<close_up::CloseUp>, Refusal> {
    let glyphs = &model.glyphs.glyphs;
    let (Some(&first), Some(&last)) = (members.first(), members.iter().max()) else {
        return Ok(None);
    };
    let (f, l) = (&glyphs[first], &glyphs[last]);
    let dir = crate::model::text::writing_dir(f);
    let along =
        |g: &pdf_content::Glyph| (g.trm[4] - f.trm[4]) * dir[0] + (g.trm[5] - f.trm[5]) * dir[1];
    // The anchor's old end (its last glyph's origin plus its advance) and its new end,
    // in user space from the anchor's origin.
    let old_end = along(l) + l.advance.abs() * axis_len(l) / advance_unit(model, l);
    let new_end = new_len * axis_len(f);
    let by = new_end - old_end;
    let fits = new_len <= room * 1.0005 + 1e-6;
    match close_up::plan_shift(model, m, members, Shift::Forward(by)) {
        Ok(c) => {
            let free = room_for_shift(model, m.line, &c.moving);
            if by > free + 0.05 * axis_len(f) {
                return Err((
                    FailReason::Overflow,
                    format!(
                        "the rest of the line would run into other text or past the margin \
                         (it needs {by:.1} pt, {:.1} pt free)",
                        free.max(0.0)
                    ),
                ));
            }
            Ok(Some(c))
        }
        Err(_) if fits => Ok(None),
        Err(Stay::NoRest) => Err((
            FailReason::Overflow,
            "the new text runs past the margin".into(),
        )),
        Err(Stay::Gap) => Err((
            FailReason::Overflow,
            "the new text does not fit before the next column or tab stop on the line".into(),
        )),
        Err(Stay::Placed) => Err((
            FailReason::UnsupportedLayout,
            "the rest of the line is placed on its own and cannot be moved to make room".into(),
        )),
    }
}

/// Length of a glyph's rendering matrix axis along its writing direction (user space per
/// unit of text space divided by the size).
fn axis_len(g: &pdf_content::Glyph) -> f64 {
    if g.vertical {
        g.trm[2].hypot(g.trm[3])
    } else {
        g.trm[0].hypot(g.trm[1])
    }
}

/// What a glyph's advance (text space) is divided by to count in units of its axis:
/// size · Tz (size alone down a column).
fn advance_unit(model: &PageModel, g: &pdf_content::Glyph) -> f64 {
    let th = if g.vertical {
        1.0
    } else {
        spacing_at(model, g.stream, g.op_index).scale
    };
    (g.font_size.abs() * th).max(1e-9)
}

/// New text written in the phrase's own font (or its own fonts, with switches).
fn in_own_font(font: &pdf_fonts::Font, segs: Vec<Seg>) -> Chosen {
    Chosen {
        segs,
        font_id: None,
        switch_to: None,
        source: own_font_source(font.is_embedded()),
        name: strip_subset(font.base_font()).to_string(),
        warning: None,
    }
}

fn tf(name: &[u8], size: f64) -> Vec<u8> {
    let mut out = Vec::new();
    pdf_content::write::write_name(&mut out, name);
    out.push(b' ');
    pdf_content::write::write_number(&mut out, size);
    out.extend_from_slice(b" Tf ");
    out
}

fn tz(scale: f64) -> Vec<u8> {
    let mut out = Vec::new();
    pdf_content::write::write_number(&mut out, scale * 100.0);
    out.extend_from_slice(b" Tz ");
    out
}
