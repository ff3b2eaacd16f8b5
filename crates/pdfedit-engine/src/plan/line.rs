//! Planning a replace or delete: which glyph bytes go, which codes come in, and the kerns
//! that keep the rest of the line where it was.

use std::collections::HashMap;
use std::rc::Rc;

use lopdf::Document;
use pdf_content::interp::matrix::transform_rect;
use pdf_content::{FontKey, Glyph};

use crate::plan::actual::ActualTexts;
use crate::plan::align;
use crate::plan::choose::{
    choose_font, embed_resolved, encode_in_phrase_fonts, encode_segments, prefer_shown_codes,
    space_width, Chosen, Seg,
};
use crate::plan::close_up::{self, Shift, Stay};

use crate::find::Match;
use crate::model::fonts::{own_font_source, strip_subset, DocFont, DocFonts};
use crate::model::text::union;
use crate::model::PageModel;
use crate::plan::fit::{decide, spacing_at, text_width, Fitted, Run, Spacing};
use crate::plan::rewrite::{rewrite_ops_with, Action, ByteEdit, Insert, InsertItem};
use crate::plan::room::{
    ascent_descent, collision, collision_beyond, ink_margin, pad, room_after, room_for_shift,
    tidy_space,
};
use crate::plan::style;
use crate::plan::vertical;
use crate::plan::{PagePlan, Planned, Refusal, REFLOW_NEEDED};
use crate::types::FailReason;
use crate::types::{Alignment, Edit, EditOp, Fit, FontPolicy, Style};

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
    let mut planner = Planner {
        model,
        matches,
        edit,
        policy,
        keep_prefix,
        align,
        actions: HashMap::new(),
        changes: Vec::new(),
        actual: ActualTexts::default(),
        new_boxes: Vec::new(),
        edited: Vec::new(),
        extra_edits: Vec::new(),
        segs: None,
    };
    for (mi, m) in matches.iter().enumerate() {
        planner.plan_match(doc, fonts, mi, m)?;
    }
    planner.finish()
}

/// The matches of one page planned so far: what each adds to the page's plan.
struct Planner<'p> {
    model: &'p PageModel,
    matches: &'p [Match],
    edit: &'p Edit,
    policy: FontPolicy,
    /// Bytes of each replacement that keep the line's style (an inline insert's anchor).
    keep_prefix: usize,
    /// Whether replaced lines keep their alignment.
    align: bool,
    /// What happens to each touched glyph.
    actions: HashMap<usize, Action>,
    changes: Vec<Planned>,
    actual: ActualTexts,
    /// New boxes, each with the old text's box drawn the same way (its room).
    new_boxes: Vec<([f64; 4], Option<[f64; 4]>)>,
    /// Glyphs edited or moved, which the new text may overlap.
    edited: Vec<usize>,
    /// Byte edits besides the rewritten ops (a delete's close-up by relative moves).
    extra_edits: Vec<ByteEdit>,
    /// The page's line segments, read when a replace first needs its line's alignment.
    segs: Option<Vec<align::Segment>>,
}

/// One match being planned: its glyphs, the first of them (font, size, place) and the
/// text state where it is drawn.
struct Phrase<'p> {
    /// The match's index among the page's matches.
    mi: usize,
    m: &'p Match,
    members: Vec<usize>,
    first: &'p Glyph,
    font: Rc<DocFont>,
    vertical: bool,
    sp: Spacing,
    size: f64,
    /// Bytes of the replacement drawn in the line's own style (the anchor of a styled
    /// inline insert), else 0.
    cut: usize,
    /// The old text's advance (absolute: a column's advances are negative).
    old_w: f64,
}

/// The new text: the kept anchor's codes, the rest in the font chosen for it, and what
/// its widths are made of.
struct NewText {
    head_segs: Vec<Seg>,
    chosen: Chosen,
    /// Font switches inside the new text, when the phrase's own fonts share it out.
    switches: Vec<(usize, FontKey)>,
    new_font: Rc<DocFont>,
    /// The Tf size of the new text (a size asked for, as the Tf size that renders it).
    tail_size: f64,
    own_space_w: f64,
    /// The word space of the new text's font (a full em down a column).
    space_w: f64,
    /// The kept anchor's width.
    head_w: f64,
    /// The font each segment is drawn in.
    seg_fonts: Vec<Rc<DocFont>>,
    /// The new text in logical order when it is drawn otherwise (shaped, right to left):
    /// it goes in an `/ActualText` span around the codes, so readers read the words.
    actual: Option<String>,
}

/// How the new text is drawn once fitted.
struct Drawn {
    fitted: Fitted,
    eff_size: f64,
    eff_scale: f64,
    /// Its width, text space.
    drawn_w: f64,
}

/// The alignment a replaced line keeps, and the moves of its parts that keep it.
struct KeptAlignment {
    alignment: Option<Alignment>,
    moves: Option<align::Moves>,
}

/// The line's alignment and the room the new text has.
struct Room {
    /// Room for the new text, text space.
    room: f64,
    /// The segment holding the match, its alignment, and whether it can be moved.
    aligned: Option<(usize, Alignment, bool)>,
    /// How wide the match is drawn (its kerns and word gaps included), text space.
    old_span: f64,
}

impl Phrase<'_> {
    /// The width of the anchor and new text at size factor `shrink`, text space.
    fn width_at(&self, t: &NewText, shrink: f64) -> f64 {
        let sp = self.sp;
        let sz = t.tail_size * shrink;
        t.head_w
            + t.chosen
                .segs
                .iter()
                .zip(&t.seg_fonts)
                .map(|(seg, seg_font)| match seg {
                    Seg::Codes(c) if self.vertical => {
                        vertical::text_length(&t.new_font.font, c, sz, sp)
                    }
                    Seg::Codes(c) => text_width(&seg_font.font, c, sz, sp),
                    Seg::Space => {
                        (t.space_w / 1000.0 * sz + sp.char_spacing + sp.word_spacing) * sp.scale
                    }
                })
                .sum::<f64>()
    }
}

impl<'p> Planner<'p> {
    /// Plans match `mi`: its glyphs, the new text and its font, the room and fit, the ops
    /// around it and the kerns that keep the rest of the line in place, and the boxes it
    /// touches.
    fn plan_match(
        &mut self,
        doc: &mut Document,
        fonts: &mut DocFonts,
        mi: usize,
        m: &'p Match,
    ) -> Result<(), Refusal> {
        let members = self.members(m)?;
        if members.iter().any(|g| self.actions.contains_key(g)) {
            return Ok(()); // overlapping match already planned
        }
        let phrase = self.phrase(doc, fonts, mi, m, members)?;
        let text = self.new_text(doc, fonts, &phrase)?;
        let room = self.room(&phrase, &text);
        let drawn = self.fit(&phrase, &text, room.room)?;
        let (before, after) = self.wrapping_ops(&phrase, &text, &drawn)?;
        let kept = self.alignment_moves(&phrase, &text, &drawn, &room);
        self.glyph_actions(
            &phrase,
            &text,
            &drawn,
            kept.moves.as_ref(),
            (&before, &after),
        );
        let kept_boxes = self.move_kept(&phrase, kept.moves.as_ref(), room.aligned);
        self.record(&phrase, &text, &drawn, &room, &kept, kept_boxes)
    }

    /// The match's glyphs (a delete takes the word space after it too), refused when they
    /// cannot be edited as one piece.
    fn members(&self, m: &Match) -> Result<Vec<usize>, Refusal> {
        let (model, glyphs) = (self.model, &self.model.glyphs.glyphs);
        if model.lines[m.line].stacked && m.glyphs.len() > 1 {
            return Err((
                FailReason::UnsupportedLayout,
                "the text is a column of characters set one under the other in a \
                 horizontal font; only redaction edits such columns"
                    .into(),
            ));
        }
        let mut members = m.glyphs.clone();
        if self.edit.op == EditOp::Delete {
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
        Ok(members)
    }

    /// The match as drawn: its first glyph's font, size and text state.
    fn phrase(
        &self,
        doc: &Document,
        fonts: &mut DocFonts,
        mi: usize,
        m: &'p Match,
        members: Vec<usize>,
    ) -> Result<Phrase<'p>, Refusal> {
        let glyphs = &self.model.glyphs.glyphs;
        let first = &glyphs[members[0]];
        let font = fonts.get(doc, &first.font).ok_or_else(|| {
            (
                FailReason::MissingGlyphs,
                "the text's font cannot be read".to_string(),
            )
        })?;
        let vertical = first.vertical;
        let mut sp = spacing_at(self.model, first.stream, first.op_index);
        if vertical {
            // Horizontal scaling does not apply to a column.
            sp.scale = 1.0;
        }
        // An inline insert keeps the anchor (and the word space after it) in the line's
        // own style; a style override applies to the rest, and so does another font when
        // the anchor's own cannot draw the rest.
        let styled = self.edit.style != Style::default();
        if styled && vertical {
            return Err((
                FailReason::UnsupportedLayout,
                "style overrides are not applied to vertical text".into(),
            ));
        }
        let keep = self.keep_prefix;
        let splits = keep > 0 && keep < m.replacement.len() && m.replacement.is_char_boundary(keep);
        let cut = if splits && (styled || own_lacks_text(&font.font, &m.replacement, keep)) {
            keep
        } else {
            0
        };
        // Advances run down a column as negative numbers.
        let old_w: f64 = members.iter().map(|&g| glyphs[g].advance.abs()).sum();
        Ok(Phrase {
            mi,
            m,
            members,
            first,
            font,
            vertical,
            sp,
            size: first.font_size,
            cut,
            old_w,
        })
    }

    /// The new text's codes and fonts: the anchor in its own font, the rest in the style's
    /// font, else the font chosen for it (own font, another subset, a twin, a look-alike),
    /// else shared out over the phrase's own fonts.
    fn new_text(
        &self,
        doc: &mut Document,
        fonts: &mut DocFonts,
        p: &Phrase<'_>,
    ) -> Result<NewText, Refusal> {
        let (edit, font, first, size, sp) = (self.edit, &p.font, p.first, p.size, p.sp);
        let (head_text, tail_text) = p.m.replacement.split_at(p.cut);
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
        // Right-to-left text is drawn shaped and in visual order (plan/arabic.rs).
        let drawn_text = crate::plan::arabic::for_drawing(tail_text);
        let (mut chosen, switches) = self.choose(doc, fonts, p, &drawn_text)?;
        let actual =
            matches!(drawn_text, std::borrow::Cow::Owned(_)).then(|| tail_text.to_string());
        if chosen.font_id.is_none() && switches.is_empty() {
            prefer_shown_codes(self.model, &first.font, &font.font, &mut chosen.segs);
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
        let space_w = if p.vertical {
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
        let mut seg_fonts = Vec::with_capacity(chosen.segs.len());
        let mut current = new_font.clone();
        for i in 0..chosen.segs.len() {
            if let Some((_, key)) = switches.iter().find(|(at, _)| *at == i) {
                current = fonts.get(doc, key).unwrap_or(current);
            }
            seg_fonts.push(current.clone());
        }
        Ok(NewText {
            head_segs,
            chosen,
            switches,
            new_font,
            tail_size,
            own_space_w,
            space_w,
            head_w,
            seg_fonts,
            actual,
        })
    }

    /// The font and codes of the text after the anchor, and the font switches inside it.
    fn choose(
        &self,
        doc: &mut Document,
        fonts: &mut DocFonts,
        p: &Phrase<'_>,
        tail_text: &str,
    ) -> Result<(Chosen, Vec<(usize, FontKey)>), Refusal> {
        let (edit, policy, font, first) = (self.edit, self.policy, &p.font, p.first);
        if tail_text.is_empty() {
            let none = Chosen {
                segs: Vec::new(),
                font_id: None,
                switch_to: None,
                source: "none",
                name: strip_subset(font.font.base_font()).to_string(),
                warning: None,
            };
            return Ok((none, Vec::new()));
        }
        if p.vertical {
            // Another font would be horizontal: a column is written in its own font only.
            let segs = encode_segments(&font.font, tail_text).map_err(|e| {
                let msg = format!("the vertical font lacks glyphs for the new text ({e})");
                (FailReason::MissingGlyphs, msg)
            })?;
            return Ok((in_own_font(&font.font, segs), Vec::new()));
        }
        if let Some(name) = &edit.style.font {
            let own_style = font.font.style();
            let resolved =
                style::resolve_style_font(name, own_style.bold, own_style.italic, policy)?;
            let chosen = embed_resolved(doc, fonts, self.model, first, &resolved, tail_text)?;
            return Ok((chosen, Vec::new()));
        }
        match choose_font(doc, fonts, self.model, first, tail_text, policy) {
            Ok(c) => Ok((c, Vec::new())),
            Err(refusal) => {
                let Some((segs, sw)) = (p.cut == 0)
                    .then(|| encode_in_phrase_fonts(doc, fonts, self.model, &p.members, tail_text))
                    .flatten()
                else {
                    return Err(refusal);
                };
                Ok((in_own_font(&font.font, segs), sw))
            }
        }
    }

    /// The room after the match, and beside it when the line keeps its alignment.
    fn room(&mut self, p: &Phrase<'_>, t: &NewText) -> Room {
        let (model, edit, m, first) = (self.model, self.edit, p.m, p.first);
        let glyphs = &model.glyphs.glyphs;
        let (size, sp, members) = (p.size, p.sp, &p.members);
        // A word gap after the phrase stays a word gap: the new text may use the room up
        // to the next word less a space (or less the old gap when that was narrower).
        let word_gap = if p.vertical {
            t.space_w
        } else {
            space_width(&p.font.font)
        } / 1000.0
            * size
            * sp.scale;
        let mut room = room_after(model, m, first, sp.scale, (word_gap, p.old_w));
        // A replace keeps its line's alignment when it changes the line's width.
        let alignable = self.align
            && edit.op == EditOp::Replace
            && self.keep_prefix == 0
            && !p.vertical
            && edit.fit != Fit::None
            // A reflow lays the paragraph out again itself; the room beside an aligned line
            // would keep a tripled phrase on its line, moved over its neighbours' reading
            // order (tests/reflow_corpus.rs on the IRS W-9).
            && edit.fit != Fit::Reflow
            && t.head_segs.is_empty()
            && self.matches.iter().filter(|o| o.line == m.line).count() == 1;
        let aligned = if alignable {
            let segs = self.segs.get_or_insert_with(|| align::segments(model));
            align_line(model, segs, m, members)
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
            let segs = self.segs.as_deref().unwrap_or_default();
            let (l, r) = align::free_beside(segs, me, model.geom.x_range());
            let per_unit = axis_len(first) / unit_of(size, sp.scale);
            let slack = match al {
                Alignment::Centre => Some(2.0 * l.min(r)),
                Alignment::Right => Some(l),
                // A justified line's word gaps take the change: the new text keeps its
                // size and spacing where they can (the fit condenses only past that).
                Alignment::Justified => Some(align::justified_slack(model, &segs[me], members)),
                Alignment::Left => None,
            };
            match (al, slack) {
                // A match that ends its justified segment has the line's right edge after
                // it, which stays: the room past it (to the margin) is not the new text's,
                // only what the word gaps give up.
                (Alignment::Justified, Some(slack))
                    if align::ends_segment(model, &segs[me], members) =>
                {
                    room = old_span + slack / per_unit;
                }
                // Never less room than before the next word on the line.
                (Alignment::Justified, Some(slack)) => room = room.max(old_span + slack / per_unit),
                (_, Some(slack)) => room = old_span + slack / per_unit,
                _ => {}
            }
        }
        Room {
            room,
            aligned,
            old_span,
        }
    }

    /// How the new text fits its room (`fit`): condensed, shrunk, or refused.
    fn fit(&self, p: &Phrase<'_>, t: &NewText, room: f64) -> Result<Drawn, Refusal> {
        let edit = self.edit;
        // A size asked for is kept: fitting may condense but not shrink it.
        let can_shrink = edit.style.size.is_none();
        let fitted = if self.keep_prefix > 0 {
            // The anchor and its new text keep their size; the rest of the line moves on.
            Ok(Fitted {
                condense: 1.0,
                shrink: 1.0,
                keep_place: true,
            })
        } else {
            let run = if p.vertical { Run::Column } else { Run::Line };
            let width_at = |shrink: f64| p.width_at(t, shrink);
            decide(
                edit.fit,
                width_at(1.0),
                p.old_w,
                room,
                width_at,
                can_shrink,
                run,
            )
        };
        let fitted = fitted.map_err(|msg| {
            let reason = if msg.starts_with("reflow") {
                REFLOW_NEEDED
            } else {
                FailReason::Overflow
            };
            (reason, msg)
        })?;
        let drawn_w = if t.head_segs.is_empty() {
            p.width_at(t, fitted.shrink) * fitted.condense
        } else {
            // A kept anchor is never condensed (inline inserts do not fit).
            p.width_at(t, fitted.shrink)
        };
        Ok(Drawn {
            eff_size: t.tail_size * fitted.shrink,
            eff_scale: p.sp.scale * fitted.condense,
            drawn_w,
            fitted,
        })
    }

    /// Ops around the new text: font switch, size, scaling and colour; after it, the state
    /// in force before is set again.
    fn wrapping_ops(
        &self,
        p: &Phrase<'_>,
        t: &NewText,
        d: &Drawn,
    ) -> Result<(Vec<u8>, Vec<u8>), Refusal> {
        let (first, size) = (p.first, p.size);
        let mut before = Vec::new();
        let mut after = Vec::new();
        let font_name = t
            .chosen
            .switch_to
            .clone()
            .unwrap_or_else(|| first.font.name.to_vec());
        if t.chosen.switch_to.is_some() || d.eff_size != size || !t.switches.is_empty() {
            before.extend(tf(&font_name, d.eff_size));
            after.extend(tf(&first.font.name, size));
        }
        if d.fitted.condense != 1.0 {
            before.extend(tz(d.eff_scale));
            after.splice(0..0, tz(p.sp.scale));
        }
        if let Some(c) = self.edit.style.color.as_deref().and_then(style::parse_hex) {
            let restore = style::fill_state_at(self.model, first.stream, first.op_index, false)
                .ok_or_else(|| {
                    (
                        FailReason::UnsupportedLayout,
                        "the text's colour is inherited from outside its form XObject".to_string(),
                    )
                })?;
            before.extend(style::rgb_op(c));
            after.splice(0..0, restore);
        }
        Ok((before, after))
    }

    /// The alignment kept and the moves of the aligned line's parts that keep it; none
    /// when the moved line would land on other text (its start stays).
    fn alignment_moves(
        &self,
        p: &Phrase<'_>,
        t: &NewText,
        d: &Drawn,
        room: &Room,
    ) -> KeptAlignment {
        let (first, size, sp) = (p.first, p.size, p.sp);
        // The new text's box when it starts `start` further on (text space), user space.
        let text_box = |start: f64| {
            let (asc, desc) = ascent_descent(&t.new_font.font);
            let tall = (d.eff_size / size).max(d.fitted.shrink);
            let unit = unit_of(size, sp.scale);
            let x0 = start / unit;
            transform_rect(
                &first.trm,
                [x0, desc * tall, x0 + d.drawn_w / unit, asc * tall],
            )
        };
        let kept = |alignment, moves| KeptAlignment { alignment, moves };
        let Some((me, al, _)) = room.aligned.filter(|_| d.fitted.keep_place) else {
            return kept(None, None);
        };
        let change = d.drawn_w - room.old_span;
        let segs = self.segs.as_deref().unwrap_or_default();
        if al == Alignment::Left || change.abs() < 1e-9 {
            return kept(Some(al), None);
        }
        match align::plan_moves(self.model, &segs[me], p.m, &p.members, al, change) {
            // Moved onto other text where the line's start kept would not be: the start
            // stays (an overlap between lines set tight).
            Some(mv)
                if moved_clash(
                    self.model,
                    &segs[me].glyphs,
                    &p.members,
                    &self.edited,
                    &mv,
                    text_box,
                ) =>
            {
                kept(None, None)
            }
            Some(mv) => kept(Some(al), Some(mv)),
            None => kept(None, None),
        }
    }

    /// Each of the match's glyphs goes (its advance kept by a kern when the rest keeps its
    /// place); the first one brings the new text, with the ops around it.
    fn glyph_actions(
        &mut self,
        p: &Phrase<'_>,
        t: &NewText,
        d: &Drawn,
        moves: Option<&align::Moves>,
        (before, after): (&[u8], &[u8]),
    ) {
        let glyphs = &self.model.glyphs.glyphs;
        let (first, size, sp, vertical) = (p.first, p.size, p.sp, p.vertical);
        // TJ numbers move the pen back along a line but further down a column (§9.4.4).
        let back = if vertical { -1.0 } else { 1.0 };
        let (lead, lead_back) = match moves {
            Some(mv) if mv.lead_returns => (mv.lead, mv.lead),
            Some(mv) => (mv.lead, 0.0),
            None => (0.0, 0.0),
        };
        let kern_after = if d.fitted.keep_place && (d.drawn_w > 0.0 || lead != 0.0) {
            back * (d.drawn_w + lead_back) * 1000.0 / (d.eff_size * d.eff_scale)
        } else {
            0.0
        };
        for (k, &g) in p.members.iter().enumerate() {
            let gl = &glyphs[g];
            // Each op may run under its own Tz.
            let op_scale = if gl.op_index == first.op_index || vertical {
                sp.scale
            } else {
                spacing_at(self.model, gl.stream, gl.op_index).scale
            };
            let remove_kern = d
                .fitted
                .keep_place
                .then(|| -back * gl.advance.abs() * 1000.0 / (gl.font_size * op_scale));
            let space_kern = |sw: f64, sz: f64| {
                InsertItem::Kern(-back * (sw + (sp.char_spacing + sp.word_spacing) * 1000.0 / sz))
            };
            let mut items: Vec<InsertItem> = t
                .head_segs
                .iter()
                .map(|seg| match seg {
                    Seg::Codes(c) => InsertItem::Codes(c.clone()),
                    Seg::Space => space_kern(t.own_space_w, size),
                })
                .collect();
            let mut ins_before = before.to_vec();
            if !items.is_empty() && !ins_before.is_empty() {
                items.push(InsertItem::Raw(std::mem::take(&mut ins_before)));
            }
            // An aligned line's new text starts `lead` further on, in its own size and Tz.
            if k == 0 && lead != 0.0 {
                items.push(InsertItem::Kern(
                    -lead * 1000.0 / (d.eff_size * d.eff_scale),
                ));
            }
            // Shaped right-to-left text reads as its words (ISO 32000 §14.9.4).
            let actual = t
                .actual
                .as_ref()
                .filter(|_| k == 0 && !t.chosen.segs.is_empty());
            if let Some(text) = actual {
                let mut bdc = b"/Span <</ActualText ".to_vec();
                bdc.extend(crate::plan::actual::text_string(text));
                bdc.extend_from_slice(b">> BDC ");
                items.push(InsertItem::Raw(bdc));
            }
            for (i, seg) in t.chosen.segs.iter().enumerate() {
                if let Some((_, key)) = t.switches.iter().find(|(at, _)| *at == i) {
                    items.push(InsertItem::Raw(tf(&key.name, d.eff_size)));
                }
                items.push(match seg {
                    Seg::Codes(c) => InsertItem::Codes(c.clone()),
                    Seg::Space => space_kern(t.space_w, d.eff_size),
                });
            }
            let insert = (k == 0 && !items.is_empty()).then(|| Insert {
                before: ins_before,
                items,
                hex: t.chosen.switch_to.is_some() && t.new_font.font.is_composite(),
                kern_after,
                after: match actual {
                    Some(_) => [b"EMC ".as_slice(), after].concat(),
                    None => after.to_vec(),
                },
            });
            self.actions.insert(
                g,
                Action {
                    insert,
                    remove_kern,
                    keep: false,
                },
            );
        }
    }

    /// The kept parts of an aligned line move by numbers around them. Returns the boxes
    /// the moves touch (old and new places, and the whole segment).
    fn move_kept(
        &mut self,
        p: &Phrase<'_>,
        moves: Option<&align::Moves>,
        aligned: Option<(usize, Alignment, bool)>,
    ) -> Vec<[f64; 4]> {
        let glyphs = &self.model.glyphs.glyphs;
        let (size, sp) = (p.size, p.sp);
        let mut touched = Vec::new();
        let per_unit = axis_len(p.first) / (size * sp.scale).max(1e-9);
        let Some(mv) = moves else {
            return touched;
        };
        let to_kern = |t: f64| -t * 1000.0 / (size * sp.scale).max(1e-9);
        if mv.after_match != 0.0 {
            if let Some(a) = p.members.iter().max().and_then(|g| self.actions.get_mut(g)) {
                a.remove_kern = Some(a.remove_kern.unwrap_or(0.0) + to_kern(mv.after_match));
            }
        }
        for &(g, t) in &mv.before {
            self.actions.entry(g).or_default().insert = Some(Insert {
                before: Vec::new(),
                items: vec![InsertItem::Kern(to_kern(t))],
                hex: false,
                kern_after: 0.0,
                after: Vec::new(),
            });
        }
        if let Some((g, t)) = mv.after {
            self.actions.entry(g).or_default().remove_kern = Some(to_kern(t));
        }
        for &(g, t) in &mv.kept {
            self.actions.entry(g).or_default().keep = true;
            let b = glyphs[g].bbox;
            let dx = t * per_unit;
            touched.push(b);
            self.new_boxes
                .push(([b[0] + dx, b[1], b[2] + dx, b[3]], Some(b)));
            touched.push([b[0] + dx, b[1], b[2] + dx, b[3]]);
            self.edited.push(g);
        }
        for &(g, _) in mv.before.iter().chain(mv.after.iter()) {
            self.actions.entry(g).or_default().keep = true;
        }
        // The whole segment is touched: a part planned to stay may still drift by the
        // renderer's rounding of the widths (PDFium cuts pdfTeX's decimal widths).
        if let (Some((me, _, _)), Some(segs)) = (aligned, self.segs.as_deref()) {
            touched.extend(segs[me].glyphs.iter().map(|&g| glyphs[g].bbox));
        }
        touched
    }

    /// The new text's box and the old one (the moved parts' boxes in it), the rest of the
    /// line closed up (delete) or pushed on (inline insert), and the change recorded.
    fn record(
        &mut self,
        p: &Phrase<'_>,
        t: &NewText,
        d: &Drawn,
        room: &Room,
        kept: &KeptAlignment,
        kept_boxes: Vec<[f64; 4]>,
    ) -> Result<(), Refusal> {
        let (model, edit, m, first) = (self.model, self.edit, p.m, p.first);
        let glyphs = &model.glyphs.glyphs;
        let (size, sp, vertical, members) = (p.size, p.sp, p.vertical, &p.members);
        let inline = self.keep_prefix > 0;
        let drawn_w = d.drawn_w;
        let start = kept.moves.as_ref().map_or(0.0, |mv| mv.start) / unit_of(size, sp.scale);
        // The new text's box: from the first glyph's origin, drawn width long.
        let (asc, desc) = ascent_descent(&t.new_font.font);
        let tall = (d.eff_size / size).max(d.fitted.shrink);
        let unit = size * sp.scale;
        let new_box = if vertical {
            // Down the column from the pen, an em wide around it.
            let half = 0.55 * d.fitted.shrink;
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
            let (asc, desc) = ascent_descent(&p.font.font);
            let old_ink = transform_rect(&first.trm, [0.0, desc, p.old_w / unit, asc]);
            old_box = union(old_box, old_ink);
        }
        for b in kept_boxes {
            old_box = union(old_box, b);
        }
        let mut moved = None;
        let shift = if edit.op == EditOp::Delete {
            close_up::plan(model, m, members)
        } else if inline {
            let pushed = push_on(model, m, members, drawn_w / unit, room.room / unit)?;
            pushed.inspect(|c| self.edited.extend(c.moving.iter().copied()))
        } else {
            None
        };
        if let Some(c) = shift {
            if let Some(a) = self.actions.get_mut(&c.after_glyph) {
                a.remove_kern = Some(a.remove_kern.unwrap_or(0.0) + c.kern);
                let to = c.moved_box;
                let [dx, dy] = c.shift;
                old_box = union(
                    union(old_box, to),
                    [to[0] + dx, to[1] + dy, to[2] + dx, to[3] + dy],
                );
                self.extra_edits.extend(c.edits);
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
                let (asc, desc) = ascent_descent(&t.new_font.font);
                transform_rect(&first.trm, [0.0, desc, room.old_span / unit, asc])
            });
            self.new_boxes.push((new_box, old_room));
        }
        self.edited.extend(members.iter().copied());
        self.actual.record(model, m);
        self.changes.push(Planned {
            match_index: p.mi,
            font_source: t.chosen.source,
            font_used: t.chosen.name.clone(),
            warning: t.chosen.warning,
            moved,
            alignment: kept.alignment,
            area_user: pad(
                if drawn_w > 0.0 {
                    union(old_box, new_box)
                } else {
                    old_box
                },
                ink_margin(first),
            ),
        });
        Ok(())
    }

    /// The page's plan: refused when new text would overlap other text, else the
    /// rewritten streams.
    fn finish(self) -> Result<PagePlan, Refusal> {
        let glyphs = &self.model.glyphs.glyphs;
        if let Some(hit) = collision_beyond(glyphs, &self.new_boxes, &self.edited) {
            return Err((
                FailReason::CollateralChange,
                format!("the new text would overlap other text on the page (\"{hit}\")"),
            ));
        }
        let streams = rewrite_ops_with(self.model, &self.actions, &self.actual, &self.extra_edits)
            .map_err(|e| (FailReason::EngineError, e))?;
        Ok(PagePlan {
            streams,
            changes: self.changes,
            append: None,
            blank_user: Vec::new(),
        })
    }
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

/// For an inline insert (`keep` bytes of `replacement` are the anchor): the anchor's own
/// font draws the anchor but not the inserted text (a CJK subset has no Latin letters, a
/// TeX subset only the letters the document uses), so the anchor keeps its codes and only
/// the inserted text goes to the font chain, instead of the whole anchor being redrawn in
/// another font. Not for a Type 3 font, whose phrases may be shared out over several of the
/// document's fonts.
fn own_lacks_text(font: &pdf_fonts::Font, replacement: &str, keep: usize) -> bool {
    font.kind() != pdf_fonts::FontKind::Type3
        && encode_segments(font, replacement).is_err()
        && encode_segments(font, &replacement[..keep]).is_ok()
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
