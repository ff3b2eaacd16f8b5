//! Glyphs that PDFium places a rounding error away from where it drew them before.
//!
//! PDFium sums a text object's advances in `f32`, starting from the object's origin. An edit
//! that rewrites part of a text object (a removal, or a replacement whose run is split off
//! with its own size and scaling and followed by a kern back to where the rest was)
//! changes the numbers the glyphs after it are summed from, so they land a few
//! hundred-thousandths of a point from where they were. That is no move; but PDFium places
//! a glyph at a third of a pixel (LCD text) or at a whole pixel (Type 3 bitmaps), and a
//! glyph that sat on such a step's boundary then renders one step over, which the pixel
//! comparison counts as collateral. Such a glyph is recognised by both facts at once:
//! PDFium's own origin for it moved by no more than the policy's `noise_pt`, and its
//! pixels after match the render before shifted by one placement step (the policy's
//! `noise_steps_px`) in the direction of that tiny move ([`super::moved_mismatch`]). Only
//! then is its box left out of the comparison; anything else (a glyph lost, added, changed
//! or truly moved) still counts. Replace, delete and redaction run this as the first noise
//! round of the commit step (`crate::commit`), only when pixels outside the change differ.

use pdf_render::raster::Raster;
use pdf_render::RawChar;

use super::Policy;
use crate::verify;
use crate::Error;

/// Boxes (top-left points) of the characters on 1-based `page` that PDFium places within
/// the policy's `noise_pt` of their old origin and that render as before, one placement
/// step over.
pub(crate) fn settled_areas(
    policy: &Policy,
    before_pdf: &[u8],
    after_pdf: &[u8],
    page: u32,
    before: &Raster,
    after: &Raster,
) -> Result<Vec<[f64; 4]>, Error> {
    let chars = |pdf: &[u8]| -> Result<Vec<RawChar>, Error> {
        let doc = pdf_render::Document::open(pdf, None)?;
        Ok(doc
            .page_chars(page - 1)?
            .into_iter()
            .filter(|c| !c.generated && c.ch.is_some_and(|ch| !ch.is_whitespace()))
            .collect())
    };
    let (old, new) = (chars(before_pdf)?, chars(after_pdf)?);
    let px = 1.0 / f64::from(before.px_per_pt);
    let mut out = Vec::new();
    for c in &new {
        let Some(d) = nearest_move(&old, c) else {
            continue;
        };
        if d == [0.0, 0.0] || d[0].abs().max(d[1].abs()) > policy.noise_pt {
            continue;
        }
        let b = [
            c.bbox.x0.min(c.advance_box.x0),
            c.bbox.y0.min(c.advance_box.y0),
            c.bbox.x1.max(c.advance_box.x1),
            c.bbox.y1.max(c.advance_box.y1),
        ]
        .map(f64::from);
        if b[2] <= b[0] || b[3] <= b[1] {
            continue;
        }
        // Rendered one step over, in the direction of the tiny move (either axis).
        let settled = policy.noise_steps_px.iter().any(|&step| {
            let m = [d[0].signum() * step * px, d[1].signum() * step * px];
            let shifts = [[m[0], 0.0], [0.0, m[1]], m];
            shifts
                .iter()
                .filter(|s| s[0] != 0.0 || s[1] != 0.0)
                .any(|s| verify::moved_mismatch(policy, before, after, &[(b, *s)]) == 0)
        });
        if settled {
            out.push(b);
        }
    }
    Ok(out)
}

/// The move (points) from the nearest character of `old` with the same text to `c`.
fn nearest_move(old: &[RawChar], c: &RawChar) -> Option<[f64; 2]> {
    old.iter()
        .filter(|o| o.ch == c.ch)
        .map(|o| {
            [
                f64::from(c.origin.0) - f64::from(o.origin.0),
                f64::from(c.origin.1) - f64::from(o.origin.1),
            ]
        })
        .min_by(|p, q| p[0].hypot(p[1]).total_cmp(&q[0].hypot(q[1])))
}
