//! Inserting text (SPEC rule 9) at a point or on a new line below an anchor, in the style
//! of the text around it: the nearest glyph's font (through the same chain as replace: own
//! font, another subset, a metric twin, a look-alike), size, direction and colour, each
//! overridable with `style` (a font of the font list is embedded as a new subset). The text
//! goes into a new content stream appended to the page, and is verified like any change:
//! it must not cover other glyphs, and nothing else on the page may change.
//!
//! Inline insertion right after an anchor is a replace of the anchor by anchor + text (see
//! `Run::insert` in `ops`), so the rest of the line moves along as it does for replace.

use lopdf::Document;
use pdf_content::{FontObject, Glyph, StreamId};

use crate::commit::{change, commit, PageCheck, Plain, Rules, Verdict, Verifier};
use crate::model::fonts::DocFonts;
use crate::model::text::display_box;
use crate::model::PageModel;
use crate::plan::choose::{choose_font, embed_resolved, space_width, Seg};
use crate::plan::streams::{add_font_resource, append_page_stream, hex};
use crate::plan::style::{parse_hex, resolve_style_font};
use crate::run::timed;
use crate::save::save;
use crate::types::{At, Change, Edit, EditResult, Failed, FontPolicy, InsertSpec};
use crate::Error;

use crate::types::FailReason;
/// Why an insert was refused: (reason, message).
use crate::types::Refusal;

/// The engine state an insert works on (owned by the edit run).
pub(crate) struct InsertRun<'a> {
    pub doc: &'a mut Document,
    pub fonts: &'a mut DocFonts,
    /// Current bytes, renders and result, as the commit step works on them.
    pub verifier: Verifier<'a>,
    pub policy: FontPolicy,
}

/// Where the new text starts and the glyph whose style it takes.
struct Target {
    /// Baseline start in user space.
    origin: [f64; 2],
    /// The glyph giving font, size, direction and colour.
    style_glyph: usize,
}

/// Applies a point or new-line insert on `model`'s page. Returns whether it applied.
pub(crate) fn apply(
    mut run: InsertRun<'_>,
    model: &PageModel,
    edit: &Edit,
    spec: &InsertSpec,
) -> Result<bool, Error> {
    let snapshot = run.doc.clone();
    let fail = |result: &mut EditResult, reason: FailReason, message: String| {
        result.failed.push(Failed {
            edit_index: edit.index,
            op: edit.op,
            reason,
            message,
            field: None,
        });
    };
    let result = &mut *run.verifier.result;
    let target = match target(model, &spec.at) {
        Ok(t) => t,
        Err((reason, m)) => {
            fail(result, reason, m);
            return Ok(false);
        }
    };
    let planned = match draw(run.doc, run.fonts, model, &target, edit, spec, run.policy) {
        Ok(p) => p,
        Err((reason, m)) => {
            *run.doc = snapshot;
            fail(result, reason, m);
            return Ok(false);
        }
    };
    // New text over existing glyphs would be unreadable: refused like any collision.
    let overlaps = model
        .glyphs
        .glyphs
        .iter()
        .any(|g| intersects(g.bbox, planned.area, 0.5));
    if overlaps {
        *run.doc = snapshot;
        let why = "the new text would cover other text on the page".to_string();
        fail(result, FailReason::CollateralChange, why);
        return Ok(false);
    }
    let area = display_box(run.doc, model.page_id, planned.area);
    let new_bytes = timed(&mut result.timings.save_ms, || save(run.doc))?;
    let page = PageCheck {
        page: model.number,
        areas: vec![area],
        moved: Vec::new(),
        shown: vec![area],
    };
    let rules = Rules::new(edit, "the new text");
    let verdict = commit(&mut run.verifier, &rules, new_bytes, &[page], &mut Plain)?;
    let Verdict::Kept(kept) = verdict else {
        *run.doc = snapshot;
        return Ok(false);
    };
    let result = &mut *run.verifier.result;
    if let Some(w) = planned.warning {
        if !result.warnings.iter().any(|x| x == w) {
            result.warnings.push(w.into());
        }
    }
    for crops in kept.into_iter().flat_map(|k| k.previews) {
        result.changes.push(Change {
            replace: spec.text.clone(),
            font_source: planned.font_source,
            font_used: planned.font_used.clone(),
            ..change(edit, model.number, 0, area, crops)
        });
    }
    Ok(true)
}

fn target(model: &PageModel, at: &At) -> Result<Target, Refusal> {
    let glyphs = &model.glyphs.glyphs;
    let shown = |i: &usize| {
        glyphs[*i]
            .unicode
            .as_deref()
            .is_some_and(|u| !u.trim().is_empty())
    };
    match at {
        At::Point { x, y, .. } => {
            let origin = user_point(model, *x, *y);
            // The style of the nearest visible glyph (by baseline origin).
            let nearest = (0..glyphs.len()).filter(shown).min_by(|a, b| {
                let d = |i: usize| {
                    let g = &glyphs[i];
                    (g.trm[4] - origin[0]).hypot(g.trm[5] - origin[1])
                };
                d(*a).total_cmp(&d(*b))
            });
            let style_glyph = nearest.ok_or((
                FailReason::NoTextStyle,
                "the page has no text to take a style from".to_string(),
            ))?;
            Ok(Target {
                origin,
                style_glyph,
            })
        }
        At::After { phrase, .. } => {
            let (li, end) = crate::find::anchor_end(model, phrase, false).ok_or((
                FailReason::AnchorNotFound,
                format!("'{phrase}' is not on the page"),
            ))?;
            let line = &model.lines[li];
            let last = line.byte_glyph[..end]
                .iter()
                .rev()
                .flatten()
                .copied()
                .next()
                .ok_or((
                    FailReason::AnchorNotFound,
                    "the anchor has no glyphs".to_string(),
                ))?;
            let first = line
                .byte_glyph
                .iter()
                .flatten()
                .copied()
                .next()
                .unwrap_or(last);
            let g = &glyphs[last];
            let size = g.trm[2].hypot(g.trm[3]).max(0.1);
            let up = [g.trm[2] / size, g.trm[3] / size];
            let leading = leading(model, li).unwrap_or(size * 1.2);
            // The new line starts at the line's left edge, one leading below its baseline.
            let start = &glyphs[first];
            let along = [g.trm[0], g.trm[1]];
            let along_len = along[0].hypot(along[1]).max(1e-9);
            let dir = [along[0] / along_len, along[1] / along_len];
            // Project the first glyph's origin onto the anchor's baseline, then step down.
            let rel = [start.trm[4] - g.trm[4], start.trm[5] - g.trm[5]];
            let t = rel[0] * dir[0] + rel[1] * dir[1];
            let on_line = [g.trm[4] + t * dir[0], g.trm[5] + t * dir[1]];
            Ok(Target {
                origin: [on_line[0] - up[0] * leading, on_line[1] - up[1] * leading],
                style_glyph: last,
            })
        }
    }
}

/// The paragraph's line distance at line `li`: to the line above, else to the line below,
/// when that line is close (within 2.5 sizes) and in the same direction.
fn leading(model: &PageModel, li: usize) -> Option<f64> {
    let base = |l: usize| -> Option<(f64, f64)> {
        let g = &model.glyphs.glyphs[*model.lines.get(l)?.byte_glyph.iter().flatten().next()?];
        Some((g.trm[5], g.trm[2].hypot(g.trm[3])))
    };
    let (y, size) = base(li)?;
    let near = |other: Option<(f64, f64)>| {
        other
            .map(|(oy, _)| (oy - y).abs())
            .filter(|d| *d > size * 0.8 && *d < size * 2.5)
    };
    near(li.checked_sub(1).and_then(base)).or_else(|| near(base(li + 1)))
}

/// Top-left display point to user space (inverse of the page's display mapping).
fn user_point(model: &PageModel, x: f64, y: f64) -> [f64; 2] {
    let f = |u: f64, v: f64| {
        let b = model.geom.display_box([u, v, u, v]);
        (b[0], b[1])
    };
    let (ox, oy) = f(0.0, 0.0);
    let (ax, ay) = f(1.0, 0.0);
    let (bx, by) = f(0.0, 1.0);
    // display = o + u·(a-o) + v·(b-o); solve for (u, v).
    let (m00, m10, m01, m11) = (ax - ox, ay - oy, bx - ox, by - oy);
    let det = m00 * m11 - m01 * m10;
    if det.abs() < 1e-12 {
        return [x, y];
    }
    let (dx, dy) = (x - ox, y - oy);
    [(dx * m11 - dy * m01) / det, (m00 * dy - m10 * dx) / det]
}

struct Drawn {
    /// User-space box of the new text.
    area: [f64; 4],
    font_source: &'static str,
    font_used: String,
    warning: Option<&'static str>,
}

/// Writes the new text as a content stream appended to the page.
fn draw(
    doc: &mut Document,
    fonts: &mut DocFonts,
    model: &PageModel,
    target: &Target,
    edit: &Edit,
    spec: &InsertSpec,
    policy: FontPolicy,
) -> Result<Drawn, Refusal> {
    let g: &Glyph = &model.glyphs.glyphs[target.style_glyph];
    let page_stream = match g.stream {
        StreamId::PageContent { .. } => g.stream,
        StreamId::Form { .. } => first_page_stream(model).ok_or((
            FailReason::UnsupportedLayout,
            "the page has no content stream".to_string(),
        ))?,
    };
    let mut reference = g.clone();
    reference.stream = page_stream;
    let chosen = match &edit.style.font {
        // A font picked by name is embedded as a new subset; its `font_source` is its kind
        // in the font list, and no look-alike warning is given for what was asked for.
        Some(name) => {
            let own = fonts.get(doc, &g.font).map(|f| f.font.style());
            let (bold, italic) = own.map_or((false, false), |s| (s.bold, s.italic));
            let resolved = resolve_style_font(name, bold, italic, policy)?;
            embed_resolved(doc, fonts, model, &reference, &resolved, &spec.text)?
        }
        None => choose_font(doc, fonts, model, &reference, &spec.text, policy)?,
    };
    let (font_id, name) = match (chosen.font_id, chosen.switch_to.clone()) {
        (Some(id), Some(name)) => (id, name),
        _ => {
            let FontObject::Reference(id) = g.font.object else {
                return Err((
                    FailReason::UnsupportedLayout,
                    "the text's font is inline".into(),
                ));
            };
            let name = add_font_resource(doc, model, page_stream, id)
                .map_err(|e| (FailReason::UnsupportedLayout, e))?;
            (id, name)
        }
    };
    let font = fonts.by_id(doc, font_id).ok_or((
        FailReason::MissingGlyphs,
        "the chosen font cannot be read".to_string(),
    ))?;
    let size = g.trm[2].hypot(g.trm[3]).max(0.1);
    let scale = edit
        .style
        .size
        .filter(|s| *s > 0.0)
        .map_or(1.0, |s| s / size);
    let m = [
        g.trm[0] * scale,
        g.trm[1] * scale,
        g.trm[2] * scale,
        g.trm[3] * scale,
        target.origin[0],
        target.origin[1],
    ];
    let color = match edit.style.color.as_deref().and_then(parse_hex) {
        Some(c) => c,
        None => g.fill_rgb.unwrap_or([0.0, 0.0, 0.0]),
    };
    let (tj, width) = shown_text(&font.font, &chosen.segs);
    let ops = format!(
        "q\nBT\n/{} 1 Tf\n{} {} {} rg\n{} Tm\n[{}] TJ\nET\nQ\n",
        String::from_utf8_lossy(&name),
        fmt(color[0]),
        fmt(color[1]),
        fmt(color[2]),
        m.iter().map(|v| fmt(*v)).collect::<Vec<_>>().join(" "),
        tj.trim()
    );
    append_page_stream(doc, model.page_id, ops.into_bytes())
        .map_err(|e| (FailReason::UnsupportedLayout, e))?;
    Ok(Drawn {
        area: text_box(&font.font, &m, width),
        font_source: chosen.source,
        font_used: chosen.name,
        warning: chosen.warning,
    })
}

/// The `TJ` array's contents for `segs` (hex codes, a word space as a number) and the
/// text's width in text space units (1/1000 em at size 1 of the matrix).
fn shown_text(font: &pdf_fonts::Font, segs: &[Seg]) -> (String, f64) {
    let space = space_width(font);
    let mut tj = String::new();
    let mut width = 0.0;
    for seg in segs {
        match seg {
            Seg::Codes(codes) => {
                tj += &format!("<{}>", hex(codes));
                let mut rest = codes.as_slice();
                while !rest.is_empty() {
                    let (code, used) = font.next_code(rest);
                    width += font.width(code);
                    rest = &rest[used.clamp(1, rest.len())..];
                }
            }
            Seg::Space => {
                tj += &format!(" {} ", fmt(-space));
                width += space;
            }
        }
    }
    (tj, width)
}

/// The box (user space) of text `width` long drawn with matrix `m`: its advance along the
/// baseline, descent to ascent across it (font units 1/1000).
fn text_box(font: &pdf_fonts::Font, m: &[f64; 6], width: f64) -> [f64; 4] {
    let d = font.descriptor();
    let (asc, desc) = (
        if d.ascent > 0.0 { d.ascent } else { 800.0 },
        if d.descent < 0.0 { d.descent } else { -200.0 },
    );
    let pt = |u: f64, v: f64| {
        let (u, v) = (u / 1000.0, v / 1000.0);
        (m[0] * u + m[2] * v + m[4], m[1] * u + m[3] * v + m[5])
    };
    let corners = [pt(0.0, desc), pt(width, desc), pt(0.0, asc), pt(width, asc)];
    let xs = corners.map(|c| c.0);
    let ys = corners.map(|c| c.1);
    let min = |v: [f64; 4]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: [f64; 4]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    [min(xs), min(ys), max(xs), max(ys)]
}

fn first_page_stream(model: &PageModel) -> Option<StreamId> {
    model
        .glyphs
        .glyphs
        .iter()
        .map(|g| g.stream)
        .find(|s| matches!(s, StreamId::PageContent { .. }))
}

fn intersects(a: [f64; 4], b: [f64; 4], inset: f64) -> bool {
    let (ax0, ax1) = (a[0].min(a[2]) + inset, a[0].max(a[2]) - inset);
    let (ay0, ay1) = (a[1].min(a[3]) + inset, a[1].max(a[3]) - inset);
    ax0 < b[2] && b[0] < ax1 && ay0 < b[3] && b[1] < ay1
}

fn fmt(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_touching_at_the_edge_do_not_intersect() {
        assert!(!intersects(
            [0.0, 0.0, 10.0, 10.0],
            [10.0, 0.0, 20.0, 10.0],
            0.5
        ));
        assert!(intersects(
            [0.0, 0.0, 10.0, 10.0],
            [5.0, 5.0, 20.0, 20.0],
            0.5
        ));
    }
}
