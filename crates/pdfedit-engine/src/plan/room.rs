//! The geometry a replace or delete is planned in: the room before the next text on the
//! line, the band a phrase's line occupies, the glyph boxes new text must not meet, and
//! the space a delete takes with it.

use pdf_content::Glyph;

use crate::find::Match;
use crate::model::text::writing_dir;
use crate::model::PageModel;

/// The middle of a box: a glyph's ink sits well inside its ascent-descent box, and
/// neighbouring lines' boxes may touch, so only the cores of two boxes must not meet.
fn core(b: [f64; 4]) -> [f64; 4] {
    let (w, h) = (b[2] - b[0], b[3] - b[1]);
    [
        b[0] + 0.1 * w,
        b[1] + 0.25 * h,
        b[2] - 0.1 * w,
        b[3] - 0.3 * h,
    ]
}

/// New text drawn over other visible text collides with it, even though no pixel outside
/// the change's own area moves (the pixel check cannot see inside that area): the first
/// glyph hit, or None.
pub(crate) fn collision(
    glyphs: &[Glyph],
    new_boxes: &[[f64; 4]],
    edited: &[usize],
) -> Option<String> {
    let drawn: Vec<([f64; 4], Option<[f64; 4]>)> = new_boxes.iter().map(|&b| (b, None)).collect();
    collision_beyond(glyphs, &drawn, edited)
}

/// [`collision`] for new boxes each drawn where old text was (`(new, Some(old))`): a glyph
/// that the new box touches only inside the old box (text set tight, line on line) was
/// touched by the old text already, and is not counted.
pub(crate) fn collision_beyond(
    glyphs: &[Glyph],
    new_boxes: &[([f64; 4], Option<[f64; 4]>)],
    edited: &[usize],
) -> Option<String> {
    for (nb, old) in new_boxes.iter().map(|(b, o)| (core(*b), o.map(core))) {
        for (i, g) in glyphs.iter().enumerate() {
            let blank = g.unicode.as_deref().is_none_or(|u| u.trim().is_empty());
            if blank || g.render_mode == 3 || edited.contains(&i) {
                continue;
            }
            let gb = core(g.bbox);
            if gb[0] < nb[2] && nb[0] < gb[2] && gb[1] < nb[3] && nb[1] < gb[3] {
                let hit = [
                    gb[0].max(nb[0]),
                    gb[1].max(nb[1]),
                    gb[2].min(nb[2]),
                    gb[3].min(nb[3]),
                ];
                let within = old.is_some_and(|o| {
                    let e = 1e-6;
                    hit[0] >= o[0] - e
                        && hit[1] >= o[1] - e
                        && hit[2] <= o[2] + e
                        && hit[3] <= o[3] + e
                });
                if !within {
                    return Some(g.unicode.clone().unwrap_or_default());
                }
            }
        }
    }
    None
}

/// Advance boxes do not hold all the ink (overhangs, accents, italic slant): the change's
/// own area reaches this far beyond them, in user space (a fifth of the em).
pub(crate) fn ink_margin(g: &Glyph) -> f64 {
    0.2 * (g.trm[2] * g.trm[2] + g.trm[3] * g.trm[3]).sqrt()
}

pub(crate) fn pad(b: [f64; 4], m: f64) -> [f64; 4] {
    [b[0] - m, b[1] - m, b[2] + m, b[3] + m]
}

/// Ascent and descent in text space per unit of font size. Producers write the descent
/// with the wrong sign (OpenOffice: `/Descent 211`) or leave it out, and the box must hold
/// the descenders, so the descent is taken as negative and at least a fifth of the em.
pub(crate) fn ascent_descent(font: &pdf_fonts::Font) -> (f64, f64) {
    let d = font.descriptor();
    let ascent = if d.ascent > 0.0 {
        d.ascent / 1000.0
    } else {
        0.9
    };
    let descent = if d.descent != 0.0 {
        -(d.descent.abs() / 1000.0).max(0.2)
    } else {
        -0.25
    };
    (ascent.clamp(0.6, 1.5), descent.max(-1.0))
}

/// Room for the new text, in text space: up to the next glyph on the line after the match,
/// less the word gap (`gap.0`) when a space separates them, but never less than the old
/// text's width (`gap.1`).
pub(crate) fn room_after(
    model: &PageModel,
    m: &Match,
    first: &Glyph,
    scale: f64,
    gap: (f64, f64),
) -> f64 {
    let line = &model.lines[m.line];
    // Spaces after the phrase are room too: the next glyph that draws something.
    let glyphs = &model.glyphs.glyphs;
    let next = line.byte_glyph[m.end..].iter().flatten().find(|&&g| {
        !m.glyphs.contains(&g)
            && !glyphs[g]
                .unicode
                .as_deref()
                .is_some_and(|u| u.chars().all(char::is_whitespace))
    });
    let unit = writing_dir(first);
    let axis = if first.vertical {
        [first.trm[2], first.trm[3]]
    } else {
        [first.trm[0], first.trm[1]]
    };
    let len = (axis[0] * axis[0] + axis[1] * axis[1]).sqrt().max(1e-9);
    // User-space length per text-space unit along the baseline.
    let per_unit = len / (first.font_size * scale).max(1e-9);
    let line_room = match next {
        // Nothing after it on the line: the room ends in the margin, half as far into it
        // as the side where lines start leaves blank (not at the paper's edge: text that
        // runs off the page or touches it looks broken, and a justified line's end is
        // the column's edge, so some margin must serve).
        None => (margin_room(model, first, unit) / per_unit).max(gap.1),
        Some(&next) => {
            let n = &glyphs[next];
            let along = (n.trm[4] - first.trm[4]) * unit[0] + (n.trm[5] - first.trm[5]) * unit[1];
            let room = along / per_unit;
            if line.text[m.end..].starts_with(char::is_whitespace) {
                (room - gap.0).max(gap.1.min(room))
            } else {
                room
            }
        }
    };
    match band_limit(model, m, first, unit) {
        Some(along) => line_room.min((along / per_unit).max(gap.1)),
        None => line_room,
    }
}

/// User-space distance from glyph `g`'s origin along `unit` to where a line may end when
/// nothing follows on it: into the margin, half as far as the side where lines start
/// leaves blank (not at the paper's edge: text that runs off the page or touches it looks
/// broken, and a justified line's end is the column's edge, so some margin must serve).
fn margin_room(model: &PageModel, g: &Glyph, unit: [f64; 2]) -> f64 {
    let glyphs = &model.glyphs.glyphs;
    let edge = model.geom.distance_to_edge(g.trm[4], g.trm[5], unit);
    let back = [-unit[0], -unit[1]];
    let margin = glyphs
        .iter()
        .filter(|o| {
            let d = writing_dir(o);
            d[0] * unit[0] + d[1] * unit[1] > 0.9
        })
        .map(|o| model.geom.distance_to_edge(o.trm[4], o.trm[5], back))
        .fold(f64::INFINITY, f64::min);
    let margin = if margin.is_finite() {
        margin / 2.0
    } else {
        0.0
    };
    edge - margin
}

/// How far (user space, along the line) the `moving` glyphs of line `line` (the rest of a
/// line an inline insert pushes on) may move before they meet other text: the next glyph
/// on the line, a glyph sharing their band (a column set slightly lower, a footnote mark),
/// or the margin rule of [`room_after`] when nothing follows.
pub(crate) fn room_for_shift(model: &PageModel, line: usize, moving: &[usize]) -> f64 {
    let glyphs = &model.glyphs.glyphs;
    let visible = |i: usize| {
        let g = &glyphs[i];
        g.render_mode != 3 && g.unicode.as_deref().is_some_and(|u| !u.trim().is_empty())
    };
    let Some(&first) = moving.iter().find(|&&i| visible(i)) else {
        return f64::INFINITY;
    };
    let f = &glyphs[first];
    let unit = writing_dir(f);
    let origin = [f.trm[4], f.trm[5]];
    let along = |x: f64, y: f64| (x - origin[0]) * unit[0] + (y - origin[1]) * unit[1];
    let ends = |b: [f64; 4]| {
        [(b[0], b[1]), (b[0], b[3]), (b[2], b[1]), (b[2], b[3])]
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(x, y)| {
                let v = along(x, y);
                (lo.min(v), hi.max(v))
            })
    };
    let shown: Vec<usize> = moving.iter().copied().filter(|&i| visible(i)).collect();
    let end = shown
        .iter()
        .map(|&i| ends(glyphs[i].bbox).1)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut room = margin_room(model, f, unit) - end;
    // The next glyph on the line that does not move (beyond a column gap, which stays one).
    for i in model.lines[line].byte_glyph.iter().flatten().copied() {
        if visible(i) && !moving.contains(&i) {
            let g = &glyphs[i];
            let start = along(g.trm[4], g.trm[5]);
            if start > 0.0 {
                let gap = crate::plan::close_up::MAX_WORD_GAP_EM * g.trm[2].hypot(g.trm[3]);
                room = room.min(start - end - gap);
            }
        }
    }
    let band = shown
        .iter()
        .map(|&i| glyphs[i].bbox)
        .reduce(crate::model::text::union)
        .unwrap_or(f.bbox);
    if let Some(start) = band_ahead(model, band, &shown, line, f, unit) {
        room = room.min(start - end);
    }
    room
}

/// Distance along the baseline, from the phrase's origin, to the nearest visible glyph
/// after the phrase that shares its band across the baseline without belonging to its
/// line: a footnote mark, a superscript, a word of the next column set slightly lower.
fn band_limit(model: &PageModel, m: &Match, first: &Glyph, unit: [f64; 2]) -> Option<f64> {
    band_ahead(model, m.bbox_user, &m.glyphs, m.line, first, unit)
}

/// Distance along the baseline, from `first`'s origin, to the nearest visible glyph that
/// starts after the end of `own` (glyph indices), shares the band of `band` (user space)
/// across the baseline and is not on line `line`.
fn band_ahead(
    model: &PageModel,
    band: [f64; 4],
    own: &[usize],
    line: usize,
    first: &Glyph,
    unit: [f64; 2],
) -> Option<f64> {
    let glyphs = &model.glyphs.glyphs;
    let normal = [-unit[1], unit[0]];
    let origin = [first.trm[4], first.trm[5]];
    // Projections of a box's corners on an axis, relative to the phrase's origin.
    let span = |b: [f64; 4], axis: [f64; 2]| {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for (x, y) in [(b[0], b[1]), (b[0], b[3]), (b[2], b[1]), (b[2], b[3])] {
            let v = (x - origin[0]) * axis[0] + (y - origin[1]) * axis[1];
            lo = lo.min(v);
            hi = hi.max(v);
        }
        (lo, hi)
    };
    let (band_lo, band_hi) = span(band, normal);
    let end = own
        .iter()
        .map(|&g| span(glyphs[g].bbox, unit).1)
        .fold(f64::NEG_INFINITY, f64::max);
    let on_line = &model.lines[line].byte_glyph;
    let mut best: Option<f64> = None;
    for (i, g) in glyphs.iter().enumerate() {
        let blank = g.unicode.as_deref().is_none_or(|u| u.trim().is_empty());
        if blank || g.render_mode == 3 || own.contains(&i) {
            continue;
        }
        let (lo, hi) = span(g.bbox, normal);
        let overlap = band_hi.min(hi) - band_lo.max(lo);
        if overlap <= 0.3 * (band_hi - band_lo).min(hi - lo) {
            continue;
        }
        let (start, _) = span(g.bbox, unit);
        // A hair of tolerance: a glyph touching the phrase's end still comes after it.
        if start < end - 0.05 * (band_hi - band_lo) || on_line.contains(&Some(i)) {
            continue;
        }
        best = Some(best.map_or(start, |b: f64| b.min(start)));
    }
    best
}

/// For a delete: one space glyph next to the phrase, so no double space is left behind.
pub(crate) fn tidy_space(model: &PageModel, m: &Match) -> Option<usize> {
    let line = &model.lines[m.line];
    let text = &line.text;
    let after = text[m.end..].chars().next();
    let before = text[..m.start].chars().next_back();
    let glyph_at = |byte: usize| line.byte_glyph.get(byte).copied().flatten();
    if after == Some(' ') && (before.is_none() || before == Some(' ')) {
        return glyph_at(m.end);
    }
    let punct_after = after.is_none_or(|c| c.is_ascii_punctuation() || c == ' ');
    if before == Some(' ') && punct_after {
        return glyph_at(m.start - 1);
    }
    if after == Some(' ') {
        return glyph_at(m.end);
    }
    None
}
