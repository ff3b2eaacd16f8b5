//! `fit: reflow`: when new text does not fit its line, the paragraph is broken again from
//! the match's line to its end, greedily on the font's widths, at the same left edge and
//! leading; it may grow by lines only into empty room below it.
//!
//! The old glyphs of those lines leave their content streams (kerns keep anything else in
//! the same ops in place) and the re-broken lines are drawn in a stream appended to the
//! page: each word in its own font and codes, the intra-word kerns it had, at its new
//! position. Only simple paragraphs are taken: horizontal, one font, size and colour, page
//! content (not a form XObject), no ActualText, left-aligned lines without hyphenated
//! ends. Anything else is refused with `reflow_unsupported`, a paragraph without room to
//! grow with `overflow`.

use std::collections::HashMap;

use lopdf::Document;
use pdf_content::write::{write_name, write_number};
use pdf_content::{Glyph, StreamId, Value};
use pdf_render::raster::Raster;

use crate::find::Match;
use crate::model::fonts::{own_font_source, strip_subset, DocFonts};
use crate::model::text::union;
use crate::model::PageModel;
use crate::plan::choose::{choose_font, space_width};
use crate::plan::fit::{spacing_at, text_width};
use crate::plan::rewrite::{rewrite_ops, write_pieces, Action, Piece};
use crate::plan::room::{ascent_descent, collision, ink_margin, pad};
use crate::plan::style;
use crate::plan::{PagePlan, Planned, Refusal};
use crate::types::{Edit, FontPolicy, Style};

mod paragraph;

use crate::types::FailReason;
use paragraph::{blank, paragraph, text_to_user, Para};

/// Most lines of a paragraph followed (bounds work on hostile files).
pub(super) const MAX_LINES: usize = 400;
/// Most glyphs between a line's first and last looked at for folded space glyphs.
const MAX_SPACE_SCAN: usize = 20_000;
/// Most lines a paragraph may grow by.
const MAX_GROWTH: usize = 100;

pub(super) fn unsupported(msg: impl Into<String>) -> Refusal {
    (FailReason::ReflowUnsupported, msg.into())
}

/// The code bytes a glyph was shown with.
fn code_bytes(model: &PageModel, g: &Glyph) -> Option<Vec<u8>> {
    let stream = model.glyphs.stream(g.stream)?;
    let shown = stream.ops.get(g.op_index)?.shown_operand()?;
    let v = match &shown.value {
        Value::Array(items) => &items.get(g.string_index)?.value,
        v => v,
    };
    let Value::String(s) = v else { return None };
    s.bytes.get(g.code_span.clone()).map(<[u8]>::to_vec)
}

/// A piece of a word: an old glyph, or new text.
#[derive(Debug, Clone)]
enum Unit {
    Old(usize),
    New(String),
}

/// Plans every match of a reflow edit on one page.
pub(crate) fn plan_page(
    doc: &mut Document,
    fonts: &mut DocFonts,
    model: &PageModel,
    matches: &[Match],
    edit: &Edit,
    policy: FontPolicy,
) -> Result<PagePlan, Refusal> {
    if edit.style != Style::default() {
        return Err(unsupported(
            "style overrides are not combined with a reflow yet",
        ));
    }
    let glyphs = &model.glyphs.glyphs;
    let mut order: Vec<usize> = (0..matches.len()).collect();
    order.sort_by_key(|&i| (matches[i].line, matches[i].start));
    // Paragraphs, each with its matches (indices into `matches`).
    let mut paras: Vec<(Para, Vec<usize>)> = Vec::new();
    for &mi in &order {
        let m = &matches[mi];
        if let Some((_, ms)) = paras
            .iter_mut()
            .find(|(p, _)| p.lines.iter().any(|l| l.li == m.line))
        {
            ms.push(mi);
            continue;
        }
        let line = &model.lines[m.line];
        let g0 = line
            .byte_glyph
            .get(m.start)
            .copied()
            .flatten()
            .ok_or_else(|| unsupported("the match starts on no glyph"))?;
        let r = &glyphs[g0];
        if !matches!(r.stream, StreamId::PageContent { .. }) {
            return Err(unsupported("the paragraph is drawn inside a form XObject"));
        }
        let horizontal =
            r.trm[0] > 0.0 && r.trm[3] > 0.0 && r.trm[1].abs() < 1e-6 && r.trm[2].abs() < 1e-6;
        if !horizontal || r.render_mode != 0 {
            return Err(unsupported("only horizontal, filled text is reflowed"));
        }
        paras.push((paragraph(model, m.line, r)?, vec![mi]));
    }
    let mut actions: HashMap<usize, Action> = HashMap::new();
    let mut changes = Vec::new();
    let mut append = Vec::new();
    let mut new_boxes = Vec::new();
    let mut blank_user = Vec::new();
    let mut removed: Vec<usize> = Vec::new();
    for (para, ms) in &paras {
        let drawn = plan_paragraph(doc, fonts, model, matches, para, ms, policy)?;
        for g in &drawn.removed {
            if actions.contains_key(g) {
                return Err(unsupported("two paragraphs share glyphs"));
            }
        }
        let mut op_scale: HashMap<(StreamId, usize), f64> = HashMap::new();
        for &g in &drawn.removed {
            let gl = &glyphs[g];
            let scale = *op_scale
                .entry((gl.stream, gl.op_index))
                .or_insert_with(|| spacing_at(model, gl.stream, gl.op_index).scale);
            actions.insert(
                g,
                Action {
                    insert: None,
                    remove_kern: Some(-gl.advance * 1000.0 / (gl.font_size * scale)),
                    keep: false,
                },
            );
        }
        removed.extend(&drawn.removed);
        append.extend(drawn.ops);
        new_boxes.extend(drawn.line_boxes.iter().copied());
        blank_user.extend(drawn.growth.iter().copied());
        for &mi in ms {
            changes.push(Planned {
                match_index: mi,
                font_source: drawn.font_source,
                font_used: drawn.font_used.clone(),
                area_user: drawn.area,
                alignment: None,
                warning: drawn.warning,
                moved: None,
            });
        }
    }
    if let Some(hit) = collision(glyphs, &blank_user, &removed) {
        return Err((
            FailReason::Overflow,
            format!("the paragraph needs more lines and the room below it is taken (\"{hit}\")"),
        ));
    }
    if let Some(hit) = collision(glyphs, &new_boxes, &removed) {
        return Err((
            FailReason::CollateralChange,
            format!("the reflowed text would overlap other text on the page (\"{hit}\")"),
        ));
    }
    let streams = rewrite_ops(model, &actions, &Default::default())
        .map_err(|e| (FailReason::EngineError, e))?;
    changes.sort_by_key(|c| c.match_index);
    Ok(PagePlan {
        streams,
        changes,
        append: Some(append),
        blank_user,
    })
}

/// One paragraph's new lines.
struct Drawn {
    ops: Vec<u8>,
    removed: Vec<usize>,
    line_boxes: Vec<[f64; 4]>,
    growth: Vec<[f64; 4]>,
    area: [f64; 4],
    font_source: &'static str,
    font_used: String,
    warning: Option<&'static str>,
}

fn plan_paragraph(
    doc: &mut Document,
    fonts: &mut DocFonts,
    model: &PageModel,
    matches: &[Match],
    para: &Para,
    ms: &[usize],
    policy: FontPolicy,
) -> Result<Drawn, Refusal> {
    let glyphs = &model.glyphs.glyphs;
    let m0 = &matches[ms[0]];
    let line0 = &model.lines[m0.line];
    let r_idx = line0.byte_glyph[m0.start].ok_or_else(|| unsupported("no glyph at the match"))?;
    let r = &glyphs[r_idx];
    let size_u = r.trm[3];
    let own = fonts.get(doc, &r.font).ok_or_else(|| {
        (
            FailReason::MissingGlyphs,
            "the text's font cannot be read".to_string(),
        )
    })?;
    if own.font.is_vertical() {
        return Err(unsupported("vertical text is not reflowed"));
    }
    // A Type 3 glyph is a drawing in its own glyph space (FontMatrix); its text is only
    // re-encoded in place, never re-laid out.
    if own.font.kind() == pdf_fonts::FontKind::Type3 {
        return Err(unsupported("text in a Type 3 font is not reflowed"));
    }
    let sp = spacing_at(model, r.stream, r.op_index);
    let tfs = r.font_size;
    let ux = text_to_user(r, sp);
    // Tokens (words) from the match on, each match replaced by its text.
    let mut tokens: Vec<Vec<Unit>> = vec![Vec::new()];
    let mut visited: Vec<usize> = Vec::new();
    let mut new_texts: Vec<&str> = Vec::new();
    let attached = !line0.text[..m0.start].is_empty() && !line0.text[..m0.start].ends_with(' ');
    for (k, info) in para.lines.iter().enumerate() {
        let line = &model.lines[info.li];
        let mut on_line: Vec<&Match> = ms
            .iter()
            .map(|&i| &matches[i])
            .filter(|m| m.line == info.li)
            .collect();
        on_line.sort_by_key(|m| m.start);
        let mut b = if k == 0 { m0.start } else { 0 };
        let mut next_match = on_line.iter().peekable();
        while b < line.text.len() {
            if let Some(m) = next_match.next_if(|m| m.start <= b) {
                if m.start < b {
                    continue; // overlapping match: the first one won
                }
                new_texts.push(&m.replacement);
                for (i, part) in m.replacement.split(' ').enumerate() {
                    if i > 0 {
                        tokens.push(Vec::new());
                    }
                    if let (false, Some(t)) = (part.is_empty(), tokens.last_mut()) {
                        t.push(Unit::New(part.to_string()));
                    }
                }
                visited.extend(m.glyphs.iter().copied());
                b = m.end;
                continue;
            }
            let c = line.text[b..].chars().next().unwrap_or(' ');
            let g = line.byte_glyph[b];
            if let Some(g) = g {
                visited.push(g);
            }
            match g {
                Some(g) if c != ' ' => {
                    if let Some(t) = tokens.last_mut() {
                        if !matches!(t.last(), Some(Unit::Old(p)) if *p == g) {
                            t.push(Unit::Old(g));
                        }
                    }
                }
                _ => tokens.push(Vec::new()),
            }
            b += c.len_utf8();
        }
        tokens.push(Vec::new());
    }
    tokens.retain(|t| !t.is_empty());
    // Space glyphs a line's text folded away go too.
    let start_x = r.trm[4];
    for (k, info) in para.lines.iter().enumerate() {
        let lo = info.glyphs.iter().min().copied().unwrap_or(0);
        let hi = info.glyphs.iter().max().copied().unwrap_or(0);
        if hi - lo > MAX_SPACE_SCAN {
            continue; // a line drawn from far-apart ops: its folded spaces stay (invisible)
        }
        for (g, gl) in glyphs.iter().enumerate().take(hi + 1).skip(lo) {
            if blank(gl)
                && gl.stream == r.stream
                && (gl.trm[5] - info.y).abs() < 0.3 * size_u
                && (k > 0 || gl.trm[4] >= start_x - 0.01)
            {
                visited.push(g);
            }
        }
    }
    visited.sort_unstable();
    visited.dedup();
    // The font of new text: the chain of SPEC rule 5.
    let joined = new_texts.join(" ");
    let chosen = if joined.trim().is_empty() {
        None
    } else {
        Some(choose_font(doc, fonts, model, r, &joined, policy)?)
    };
    let new_font = match chosen.as_ref().and_then(|c| c.font_id) {
        Some(id) => fonts.by_id(doc, id).unwrap_or_else(|| own.clone()),
        None => own.clone(),
    };
    let switch = chosen.as_ref().and_then(|c| c.switch_to.clone());
    let tf = |name: &[u8]| {
        let mut out = Vec::new();
        write_name(&mut out, name);
        out.push(b' ');
        write_number(&mut out, tfs);
        out.extend_from_slice(b" Tf ");
        out
    };
    // Widths in user space.
    let glyph_adv = |g: &Glyph| {
        let single_space = !own.font.is_composite() && g.code == 32;
        let tw = if single_space { sp.word_spacing } else { 0.0 };
        (own.font.width(g.code) / 1000.0 * tfs + sp.char_spacing + tw) * sp.scale * ux
    };
    let to_tj = |user: f64| -user / (ux * sp.scale * tfs) * 1000.0;
    let mut words: Vec<(Vec<Piece>, f64)> = Vec::new();
    for t in &tokens {
        let mut pieces = Vec::new();
        let mut w = 0.0;
        for (i, u) in t.iter().enumerate() {
            match u {
                Unit::Old(g) => {
                    let gl = &glyphs[*g];
                    let bytes = code_bytes(model, gl)
                        .ok_or_else(|| unsupported("a glyph's codes cannot be read"))?;
                    pieces.push(Piece::Text(bytes, true));
                    let adv = glyph_adv(gl);
                    w += adv;
                    if let Some(Unit::Old(h)) = t.get(i + 1) {
                        let kern = glyphs[*h].trm[4] - gl.trm[4] - adv;
                        if kern.abs() > 1e-4 && kern.abs() < size_u {
                            pieces.push(Piece::Kern(to_tj(kern)));
                            w += kern;
                        }
                    }
                }
                Unit::New(text) => {
                    let codes = new_font
                        .font
                        .encode(text)
                        .map_err(|e| (FailReason::MissingGlyphs, e.to_string()))?;
                    w += text_width(&new_font.font, &codes, tfs, sp) * ux;
                    match &switch {
                        Some(name) => {
                            pieces.push(Piece::Raw(tf(name)));
                            pieces.push(Piece::Text(codes, true));
                            pieces.push(Piece::Raw(tf(&r.font.name)));
                        }
                        None => pieces.push(Piece::Text(codes, true)),
                    }
                }
            }
        }
        words.push((pieces, w));
    }
    // A word space: the font's space glyph, else a kern of its width.
    let (space_piece, space_u) = match own.font.encode(" ") {
        Ok(c) => {
            let w = text_width(&own.font, &c, tfs, sp) * ux;
            (Piece::Text(c, true), w)
        }
        Err(_) => {
            let w = (space_width(&own.font) / 1000.0 * tfs + sp.char_spacing + sp.word_spacing)
                * sp.scale
                * ux;
            (Piece::Kern(to_tj(w)), w)
        }
    };
    // Greedy line breaking.
    let avail = |k: usize| {
        if k == 0 {
            para.right - start_x
        } else {
            para.right - para.left
        }
    };
    let max_lines = para.lines.len() + MAX_GROWTH;
    let mut broken: Vec<(Vec<usize>, f64)> = vec![(Vec::new(), 0.0)];
    for (ti, (_, w)) in words.iter().enumerate() {
        loop {
            let k = broken.len() - 1;
            let (line, cur) = &mut broken[k];
            let need = if line.is_empty() {
                *w
            } else {
                *cur + space_u + w
            };
            if need <= avail(k) + 0.01 {
                line.push(ti);
                *cur = need;
                break;
            }
            if line.is_empty() && (k > 0 || (ti == 0 && attached)) {
                return Err((
                    FailReason::Overflow,
                    "a word of the new text is wider than the paragraph's column".into(),
                ));
            }
            if broken.len() >= max_lines {
                return Err((
                    FailReason::Overflow,
                    "the paragraph would grow too long".into(),
                ));
            }
            broken.push((Vec::new(), 0.0));
        }
    }
    // Positions, boxes and the new content.
    let n_old = para.lines.len();
    let (asc, desc) = ascent_descent(&own.font);
    let page_bottom = r.trm[5] - model.geom.distance_to_edge(start_x, r.trm[5], [0.0, -1.0]);
    let lowest = glyphs
        .iter()
        .filter(|g| !blank(g))
        .map(|g| g.bbox[1])
        .fold(f64::INFINITY, f64::min);
    let floor = lowest.min(page_bottom + 36.0);
    let state = style::fill_state_at(model, r.stream, r.op_index, true)
        .ok_or_else(|| unsupported("the text's colour is inherited from a form XObject"))?;
    let mut ops = b"q\n".to_vec();
    ops.extend(state);
    ops.extend_from_slice(b"\nBT\n");
    ops.extend(tf(&r.font.name));
    if sp.char_spacing != 0.0 {
        write_number(&mut ops, sp.char_spacing);
        ops.extend_from_slice(b" Tc ");
    }
    if sp.word_spacing != 0.0 {
        write_number(&mut ops, sp.word_spacing);
        ops.extend_from_slice(b" Tw ");
    }
    if sp.scale != 1.0 {
        write_number(&mut ops, sp.scale * 100.0);
        ops.extend_from_slice(b" Tz ");
    }
    let lin = [
        r.trm[0] / (tfs * sp.scale),
        r.trm[1] / (tfs * sp.scale),
        r.trm[2] / tfs,
        r.trm[3] / tfs,
    ];
    let mut line_boxes = Vec::new();
    let mut growth = Vec::new();
    let last = broken.len() - 1;
    let y_last = para.lines[n_old - 1].y;
    for (k, (members, w)) in broken.iter().enumerate() {
        if members.is_empty() {
            continue;
        }
        let x = if k == 0 { start_x } else { para.left };
        let y = if k < n_old {
            para.lines[k].y
        } else {
            y_last - (k + 1 - n_old) as f64 * para.leading
        };
        let bx = [x, y + desc * size_u, x + w, y + asc * size_u];
        if k >= n_old {
            if bx[1] < floor {
                return Err((
                    FailReason::Overflow,
                    "the paragraph needs more lines than the page has room for".into(),
                ));
            }
            growth.push(bx);
        }
        line_boxes.push(bx);
        // Justified paragraphs stay justified, except their last line.
        let gaps = members.len().saturating_sub(1);
        let extra = if para.justified && k < last && gaps > 0 {
            let e = (para.right - x - w) / gaps as f64;
            if e > 0.0 && e < 3.0 * space_u {
                e
            } else {
                0.0
            }
        } else {
            0.0
        };
        let mut pieces = Vec::new();
        for (i, &ti) in members.iter().enumerate() {
            if i > 0 {
                pieces.push(match &space_piece {
                    Piece::Text(c, h) => Piece::Text(c.clone(), *h),
                    Piece::Kern(v) => Piece::Kern(*v),
                    Piece::Raw(v) => Piece::Raw(v.clone()),
                });
                if extra > 0.0 {
                    pieces.push(Piece::Kern(to_tj(extra)));
                }
            }
            for p in &words[ti].0 {
                pieces.push(match p {
                    Piece::Text(c, h) => Piece::Text(c.clone(), *h),
                    Piece::Kern(v) => Piece::Kern(*v),
                    Piece::Raw(v) => Piece::Raw(v.clone()),
                });
            }
        }
        for v in [lin[0], lin[1], lin[2], lin[3], x, y] {
            write_number(&mut ops, v);
            ops.push(b' ');
        }
        ops.extend_from_slice(b"Tm\n");
        write_pieces(&mut ops, &pieces);
        ops.push(b'\n');
    }
    ops.extend_from_slice(b"ET\nQ\n");
    let old_box = visited
        .iter()
        .filter(|&&g| !blank(&glyphs[g]))
        .map(|&g| glyphs[g].bbox)
        .reduce(union)
        .unwrap_or(m0.bbox_user);
    let area = pad(
        line_boxes.iter().copied().fold(old_box, union),
        ink_margin(r),
    );
    let (font_source, font_used, warning) = match &chosen {
        Some(c) => (c.source, c.name.clone(), c.warning),
        None => (
            own_font_source(own.font.is_embedded()),
            strip_subset(own.font.base_font()).to_string(),
            None,
        ),
    };
    Ok(Drawn {
        ops,
        removed: visited,
        line_boxes,
        growth,
        area,
        font_source,
        font_used,
        warning,
    })
}

/// Whether every box (top-left points) is blank in `raster`: one colour, the page's
/// background, within a small tolerance (room a paragraph may grow into must hold no
/// drawing either, not only no text).
pub(crate) fn is_blank(raster: &Raster, boxes: &[[f64; 4]]) -> bool {
    let s = f64::from(raster.px_per_pt);
    let (w, h) = (raster.width as usize, raster.height as usize);
    for b in boxes {
        let px = |v: f64, lim: usize| (v * s).clamp(0.0, lim as f64) as usize;
        let (x0, x1) = (px(b[0].min(b[2]), w), px(b[0].max(b[2]), w));
        let (y0, y1) = (px(b[1].min(b[3]), h), px(b[1].max(b[3]), h));
        if x0 >= x1 || y0 >= y1 {
            continue;
        }
        let at = |x: usize, y: usize| {
            let i = (y * w + x) * 3;
            &raster.pixels[i..i + 3]
        };
        let reference = at(x0, y0).to_vec();
        for y in y0..y1 {
            for x in x0..x1 {
                let p = at(x, y);
                if p.iter().zip(&reference).any(|(a, b)| a.abs_diff(*b) > 8) {
                    return false;
                }
            }
        }
    }
    true
}
