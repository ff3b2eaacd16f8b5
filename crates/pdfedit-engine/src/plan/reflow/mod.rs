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
use std::rc::Rc;

use lopdf::Document;
use pdf_content::write::{write_name, write_number};
use pdf_content::{Glyph, StreamId, Value};
use pdf_render::raster::Raster;

use crate::find::Match;
use crate::model::fonts::{own_font_source, strip_subset, DocFont, DocFonts};
use crate::model::text::union;
use crate::model::PageModel;
use crate::plan::choose::{choose_font, space_width, Chosen};
use crate::plan::fit::{spacing_at, text_width, Spacing};
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
    let paras = paragraphs(model, matches)?;
    let mut actions: HashMap<usize, Action> = HashMap::new();
    let mut changes = Vec::new();
    let mut append = Vec::new();
    let mut new_boxes = Vec::new();
    let mut blank_user = Vec::new();
    let mut removed: Vec<usize> = Vec::new();
    for (para, ms) in &paras {
        let drawn = plan_paragraph(doc, fonts, model, matches, para, ms, policy)?;
        remove_glyphs(model, &drawn.removed, &mut actions)?;
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

/// The paragraphs holding the matches (in reading order), each with its matches (indices
/// into `matches`); refused when a paragraph is not a simple one (drawn in a form
/// XObject, not horizontal and filled).
fn paragraphs(model: &PageModel, matches: &[Match]) -> Result<Vec<(Para, Vec<usize>)>, Refusal> {
    let glyphs = &model.glyphs.glyphs;
    let mut order: Vec<usize> = (0..matches.len()).collect();
    order.sort_by_key(|&i| (matches[i].line, matches[i].start));
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
    Ok(paras)
}

/// The old glyphs of a re-broken paragraph leave their ops (a kern keeps what follows in
/// the same op in place); refused when another paragraph took one already.
fn remove_glyphs(
    model: &PageModel,
    removed: &[usize],
    actions: &mut HashMap<usize, Action>,
) -> Result<(), Refusal> {
    let glyphs = &model.glyphs.glyphs;
    if removed.iter().any(|g| actions.contains_key(g)) {
        return Err(unsupported("two paragraphs share glyphs"));
    }
    let mut op_scale: HashMap<(StreamId, usize), f64> = HashMap::new();
    for &g in removed {
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
    Ok(())
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

/// The setting of a paragraph's new text, read from the glyph where the first match
/// starts: its font, size and text state, and how text space maps to user space.
struct Setting<'a> {
    r: &'a Glyph,
    own: Rc<DocFont>,
    sp: Spacing,
    /// The Tf size.
    tfs: f64,
    /// User space per unit of text space along the line.
    ux: f64,
    /// The rendered size (user space).
    size_u: f64,
    /// Where the match starts on its line (user space).
    start_x: f64,
}

impl Setting<'_> {
    /// A `Tf` op selecting resource `name` at the paragraph's size.
    fn tf(&self, name: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_name(&mut out, name);
        out.push(b' ');
        write_number(&mut out, self.tfs);
        out.extend_from_slice(b" Tf ");
        out
    }

    /// A `TJ` number moving the pen `user` further (user space).
    fn to_tj(&self, user: f64) -> f64 {
        -user / (self.ux * self.sp.scale * self.tfs) * 1000.0
    }

    /// An old glyph's advance in user space.
    fn glyph_adv(&self, g: &Glyph) -> f64 {
        let (own, sp) = (&self.own.font, self.sp);
        let single_space = !own.is_composite() && g.code == 32;
        let tw = if single_space { sp.word_spacing } else { 0.0 };
        (own.width(g.code) / 1000.0 * self.tfs + sp.char_spacing + tw) * sp.scale * self.ux
    }
}

/// The words of a paragraph from the match on, each match replaced by its text.
struct Tokens<'m> {
    tokens: Vec<Vec<Unit>>,
    /// The old glyphs the new lines replace.
    visited: Vec<usize>,
    /// The matches' new texts.
    new_texts: Vec<&'m str>,
    /// Whether the match starts inside a word (its line's first part cannot break).
    attached: bool,
}

/// The font the new text is drawn in.
struct NewFont {
    chosen: Option<Chosen>,
    font: Rc<DocFont>,
    /// The resource to switch to around new text, when not the paragraph's own font.
    switch: Option<Vec<u8>>,
}

/// The words as pieces with their widths (user space), and the word space.
struct Words {
    words: Vec<(Vec<Piece>, f64)>,
    space_piece: Piece,
    space_u: f64,
}

/// The new lines: their content, boxes, and the boxes below the paragraph it grows into.
struct Lines {
    ops: Vec<u8>,
    line_boxes: Vec<[f64; 4]>,
    growth: Vec<[f64; 4]>,
}

/// One paragraph re-broken: the words from the match on (matches replaced), the font of
/// the new text, widths, greedy line breaking, and the new lines drawn.
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
    let set = setting(doc, fonts, model, m0)?;
    let mut tokens = tokenize(model, matches, para, ms);
    tokens.visited.extend(folded_spaces(model, para, &set));
    tokens.visited.sort_unstable();
    tokens.visited.dedup();
    let font = new_font(doc, fonts, model, &set, &tokens.new_texts, policy)?;
    let words = measure_words(model, &set, &font, &tokens.tokens)?;
    let broken = break_lines(para, &set, &words, tokens.attached)?;
    let lines = draw_lines(model, para, &set, &words, &broken)?;
    let visited = tokens.visited;
    let old_box = visited
        .iter()
        .filter(|&&g| !blank(&glyphs[g]))
        .map(|&g| glyphs[g].bbox)
        .reduce(union)
        .unwrap_or(m0.bbox_user);
    let area = pad(
        lines.line_boxes.iter().copied().fold(old_box, union),
        ink_margin(set.r),
    );
    let (font_source, font_used, warning) = match &font.chosen {
        Some(c) => (c.source, c.name.clone(), c.warning),
        None => (
            own_font_source(set.own.font.is_embedded()),
            strip_subset(set.own.font.base_font()).to_string(),
            None,
        ),
    };
    Ok(Drawn {
        ops: lines.ops,
        removed: visited,
        line_boxes: lines.line_boxes,
        growth: lines.growth,
        area,
        font_source,
        font_used,
        warning,
    })
}

/// The setting at the first match; refused for vertical and Type 3 text.
fn setting<'a>(
    doc: &Document,
    fonts: &mut DocFonts,
    model: &'a PageModel,
    m0: &Match,
) -> Result<Setting<'a>, Refusal> {
    let line0 = &model.lines[m0.line];
    let r_idx = line0.byte_glyph[m0.start].ok_or_else(|| unsupported("no glyph at the match"))?;
    let r = &model.glyphs.glyphs[r_idx];
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
    Ok(Setting {
        r,
        own,
        sp,
        tfs: r.font_size,
        ux: text_to_user(r, sp),
        size_u: r.trm[3],
        start_x: r.trm[4],
    })
}

/// Tokens (words) from the first match on, each match replaced by its text.
fn tokenize<'m>(model: &PageModel, matches: &'m [Match], para: &Para, ms: &[usize]) -> Tokens<'m> {
    let m0 = &matches[ms[0]];
    let line0 = &model.lines[m0.line];
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
    Tokens {
        tokens,
        visited,
        new_texts,
        attached,
    }
}

/// Space glyphs a line's text folded away: they go too.
fn folded_spaces(model: &PageModel, para: &Para, set: &Setting<'_>) -> Vec<usize> {
    let glyphs = &model.glyphs.glyphs;
    let r = set.r;
    let mut out = Vec::new();
    for (k, info) in para.lines.iter().enumerate() {
        let lo = info.glyphs.iter().min().copied().unwrap_or(0);
        let hi = info.glyphs.iter().max().copied().unwrap_or(0);
        if hi - lo > MAX_SPACE_SCAN {
            continue; // a line drawn from far-apart ops: its folded spaces stay (invisible)
        }
        for (g, gl) in glyphs.iter().enumerate().take(hi + 1).skip(lo) {
            if blank(gl)
                && gl.stream == r.stream
                && (gl.trm[5] - info.y).abs() < 0.3 * set.size_u
                && (k > 0 || gl.trm[4] >= set.start_x - 0.01)
            {
                out.push(g);
            }
        }
    }
    out
}

/// The font of new text: the chain of SPEC rule 5.
fn new_font(
    doc: &mut Document,
    fonts: &mut DocFonts,
    model: &PageModel,
    set: &Setting<'_>,
    new_texts: &[&str],
    policy: FontPolicy,
) -> Result<NewFont, Refusal> {
    let joined = new_texts.join(" ");
    let chosen = if joined.trim().is_empty() {
        None
    } else {
        Some(choose_font(doc, fonts, model, set.r, &joined, policy)?)
    };
    let font = match chosen.as_ref().and_then(|c| c.font_id) {
        Some(id) => fonts.by_id(doc, id).unwrap_or_else(|| set.own.clone()),
        None => set.own.clone(),
    };
    let switch = chosen.as_ref().and_then(|c| c.switch_to.clone());
    Ok(NewFont {
        chosen,
        font,
        switch,
    })
}

/// Each token as pieces (old glyphs with the kerns they had, new text in its font) and
/// its width; and the word space: the font's space glyph, else a kern of its width.
fn measure_words(
    model: &PageModel,
    set: &Setting<'_>,
    font: &NewFont,
    tokens: &[Vec<Unit>],
) -> Result<Words, Refusal> {
    let glyphs = &model.glyphs.glyphs;
    let (sp, tfs, ux) = (set.sp, set.tfs, set.ux);
    let mut words: Vec<(Vec<Piece>, f64)> = Vec::new();
    for t in tokens {
        let mut pieces = Vec::new();
        let mut w = 0.0;
        for (i, u) in t.iter().enumerate() {
            match u {
                Unit::Old(g) => {
                    let gl = &glyphs[*g];
                    let bytes = code_bytes(model, gl)
                        .ok_or_else(|| unsupported("a glyph's codes cannot be read"))?;
                    pieces.push(Piece::Text(bytes, true));
                    let adv = set.glyph_adv(gl);
                    w += adv;
                    if let Some(Unit::Old(h)) = t.get(i + 1) {
                        let kern = glyphs[*h].trm[4] - gl.trm[4] - adv;
                        if kern.abs() > 1e-4 && kern.abs() < set.size_u {
                            pieces.push(Piece::Kern(set.to_tj(kern)));
                            w += kern;
                        }
                    }
                }
                Unit::New(text) => {
                    let codes = font
                        .font
                        .font
                        .encode(text)
                        .map_err(|e| (FailReason::MissingGlyphs, e.to_string()))?;
                    w += text_width(&font.font.font, &codes, tfs, sp) * ux;
                    match &font.switch {
                        Some(name) => {
                            pieces.push(Piece::Raw(set.tf(name)));
                            pieces.push(Piece::Text(codes, true));
                            pieces.push(Piece::Raw(set.tf(&set.r.font.name)));
                        }
                        None => pieces.push(Piece::Text(codes, true)),
                    }
                }
            }
        }
        words.push((pieces, w));
    }
    let own = &set.own.font;
    let (space_piece, space_u) = match own.encode(" ") {
        Ok(c) => {
            let w = text_width(own, &c, tfs, sp) * ux;
            (Piece::Text(c, true), w)
        }
        Err(_) => {
            let w = (space_width(own) / 1000.0 * tfs + sp.char_spacing + sp.word_spacing)
                * sp.scale
                * ux;
            (Piece::Kern(set.to_tj(w)), w)
        }
    };
    Ok(Words {
        words,
        space_piece,
        space_u,
    })
}

/// Greedy line breaking: each line's words (indices) and width; the first line starts at
/// the match, the others at the paragraph's left edge.
fn break_lines(
    para: &Para,
    set: &Setting<'_>,
    words: &Words,
    attached: bool,
) -> Result<Vec<(Vec<usize>, f64)>, Refusal> {
    let avail = |k: usize| {
        if k == 0 {
            para.right - set.start_x
        } else {
            para.right - para.left
        }
    };
    let max_lines = para.lines.len() + MAX_GROWTH;
    let mut broken: Vec<(Vec<usize>, f64)> = vec![(Vec::new(), 0.0)];
    for (ti, (_, w)) in words.words.iter().enumerate() {
        loop {
            let k = broken.len() - 1;
            let (line, cur) = &mut broken[k];
            let need = if line.is_empty() {
                *w
            } else {
                *cur + words.space_u + w
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
    Ok(broken)
}

/// A copy of a piece.
fn copy(p: &Piece) -> Piece {
    match p {
        Piece::Text(c, h) => Piece::Text(c.clone(), *h),
        Piece::Kern(v) => Piece::Kern(*v),
        Piece::Raw(v) => Piece::Raw(v.clone()),
    }
}

/// The start of the new lines' content: the paragraph's colour, font, size and spacing.
fn opening_ops(model: &PageModel, set: &Setting<'_>) -> Result<Vec<u8>, Refusal> {
    let (r, sp) = (set.r, set.sp);
    let state = style::fill_state_at(model, r.stream, r.op_index, true)
        .ok_or_else(|| unsupported("the text's colour is inherited from a form XObject"))?;
    let mut ops = b"q\n".to_vec();
    ops.extend(state);
    ops.extend_from_slice(b"\nBT\n");
    ops.extend(set.tf(&r.font.name));
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
    Ok(ops)
}

/// The new lines' content (one text object in the paragraph's state, a `Tm` a line),
/// their boxes, and the boxes of lines added below the paragraph (refused past the
/// lowest text or the page's bottom margin).
fn draw_lines(
    model: &PageModel,
    para: &Para,
    set: &Setting<'_>,
    words: &Words,
    broken: &[(Vec<usize>, f64)],
) -> Result<Lines, Refusal> {
    let glyphs = &model.glyphs.glyphs;
    let (r, sp, tfs, size_u, start_x) = (set.r, set.sp, set.tfs, set.size_u, set.start_x);
    let n_old = para.lines.len();
    let (asc, desc) = ascent_descent(&set.own.font);
    let page_bottom = r.trm[5] - model.geom.distance_to_edge(start_x, r.trm[5], [0.0, -1.0]);
    let lowest = glyphs
        .iter()
        .filter(|g| !blank(g))
        .map(|g| g.bbox[1])
        .fold(f64::INFINITY, f64::min);
    let floor = lowest.min(page_bottom + 36.0);
    let mut ops = opening_ops(model, set)?;
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
            if e > 0.0 && e < 3.0 * words.space_u {
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
                pieces.push(copy(&words.space_piece));
                if extra > 0.0 {
                    pieces.push(Piece::Kern(set.to_tj(extra)));
                }
            }
            pieces.extend(words.words[ti].0.iter().map(copy));
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
    Ok(Lines {
        ops,
        line_boxes,
        growth,
    })
}

/// Whether every box (top-left points) is blank in `raster`: one colour, the page's
/// background, each channel within `tolerance` (the verification policy's channel
/// tolerance; room a paragraph may grow into must hold no drawing either, not only no
/// text).
pub(crate) fn is_blank(raster: &Raster, boxes: &[[f64; 4]], tolerance: u8) -> bool {
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
                if p.iter()
                    .zip(&reference)
                    .any(|(a, b)| a.abs_diff(*b) > tolerance)
                {
                    return false;
                }
            }
        }
    }
    true
}
