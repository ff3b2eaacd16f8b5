//! Verification: the page rendered before and after an edit, compared outside the change,
//! with the tolerances of one [`Policy`]. The commit step (`crate::commit`) is what calls
//! these for every operation.

mod policy;
pub(crate) mod settle;

use pdf_render::diff::{diff, pixel_boxes, DiffReport};
use pdf_render::raster::{crop_png, rasterize_page, Raster};

use crate::{Error, Result};
pub(crate) use policy::Policy;
/// Margin around a change in its preview crops, in points.
const PREVIEW_MARGIN_PT: f64 = 6.0;
/// Byte budget of one preview crop (the API's preview limit).
const PREVIEW_MAX_BYTES: usize = 200_000;

/// Renders 1-based `page` of `bytes` for verification (at the policy's resolution).
pub(crate) fn render(policy: &Policy, bytes: &[u8], page: u32) -> Result<Raster> {
    Ok(rasterize_page(
        bytes,
        None,
        page.saturating_sub(1),
        policy.px_per_pt,
    )?)
}

/// Compares two renders of a page outside `areas` (top-left points).
pub(crate) fn compare(
    policy: &Policy,
    before: &Raster,
    after: &Raster,
    areas: &[[f64; 4]],
) -> Result<DiffReport> {
    if before.width != after.width || before.height != after.height {
        // The page itself changed size: everything counts as collateral.
        return Ok(DiffReport {
            changed_pixels_outside: u64::from(after.width) * u64::from(after.height),
            changed_pixels_total: u64::from(after.width) * u64::from(after.height),
            bbox_of_changes: None,
        });
    }
    let mut report = diff(
        before,
        after,
        areas,
        policy.dilate_px,
        policy.channel_tolerance,
    )
    .map_err(|e| Error::Engine(e.to_string()))?;
    if report.changed_pixels_outside > 0 {
        let (count, bbox) = moved_beyond_subpixel(policy, before, after, areas);
        report.changed_pixels_outside = count;
        report.bbox_of_changes = bbox;
    }
    Ok(report)
}

/// Pixels outside `areas` whose change is more than an untouched glyph's sub-pixel drift,
/// and their box (top-left points).
///
/// PDFium places glyphs at a third of a pixel and computes positions in `f32` with the
/// font's widths rounded to whole units, while the kerns that keep the rest of a line in
/// place are computed from the exact `/Widths` (as the specification and other viewers
/// do). The rest of the line then lands a few thousandths of a point away from where PDFium
/// had drawn it, and a glyph near a phase boundary changes its anti-aliased edge. Such a
/// pixel lies between its horizontal neighbours in both renders and changed by at most
/// half the local edge contrast; new ink, vanished ink and a move of a whole pixel
/// (half a point) or more do not, and still count.
fn moved_beyond_subpixel(
    policy: &Policy,
    before: &Raster,
    after: &Raster,
    areas: &[[f64; 4]],
) -> (u64, Option<[f64; 4]>) {
    let (w, h) = (before.width as usize, before.height as usize);
    let s = f64::from(before.px_per_pt);
    let boxes = pixel_boxes(before, areas, policy.dilate_px);
    let tol = i32::from(policy.channel_tolerance);
    let stride = w * 3;
    let mut count = 0u64;
    let mut bbox: Option<[usize; 4]> = None;
    for y in 0..h {
        let row = y * stride..(y + 1) * stride;
        let (a, b) = (&before.pixels[row.clone()], &after.pixels[row]);
        if a == b {
            continue;
        }
        for x in 0..w {
            if boxes
                .iter()
                .any(|r| r[0] <= x && x < r[2] && r[1] <= y && y < r[3])
            {
                continue;
            }
            if (0..3).all(|c| subpixel_drift(a, b, x, c, tol)) {
                continue;
            }
            count += 1;
            let e = bbox.get_or_insert([x, y, x, y]);
            e[0] = e[0].min(x);
            e[1] = e[1].min(y);
            e[2] = e[2].max(x);
            e[3] = e[3].max(y);
        }
    }
    let bbox = bbox.map(|[x0, y0, x1, y1]| {
        [
            x0 as f64 / s,
            y0 as f64 / s,
            (x1 + 1) as f64 / s,
            (y1 + 1) as f64 / s,
        ]
    });
    (count, bbox)
}

/// Whether channel `c` of pixel `x` in two RGB rows is unchanged or changed only as a
/// horizontal sub-pixel shift of an edge would change it (`tol`: the channel tolerance).
fn subpixel_drift(a: &[u8], b: &[u8], x: usize, c: usize, tol: i32) -> bool {
    let at = |row: &[u8], i: usize| i32::from(row[i * 3 + c]);
    let (va, vb) = (at(a, x), at(b, x));
    if (va - vb).abs() <= tol {
        return true;
    }
    let last = a.len() / 3 - 1;
    let near = [x.saturating_sub(1), x, (x + 1).min(last)];
    let range = |row: &[u8]| {
        near.iter().fold((255, 0), |(lo, hi), &i| {
            let v = at(row, i);
            (v.min(lo), v.max(hi))
        })
    };
    let contrast = |row: &[u8], v: i32| {
        near.iter()
            .map(|&i| (at(row, i) - v).abs())
            .max()
            .unwrap_or(0)
    };
    let ((lo_a, hi_a), (lo_b, hi_b)) = (range(a), range(b));
    let between = vb >= lo_a - tol && vb <= hi_a + tol && va >= lo_b - tol && va <= hi_b + tol;
    let edge = contrast(a, va).max(contrast(b, vb));
    between && (va - vb).abs() <= edge / 2 + tol
}

/// Pixels of glyphs a change moved along their line (a delete's close-up, the rest of a
/// line an inline insert pushes on) that do not render as they did before, moved.
///
/// `moved` holds each moved box (top-left points) and its move (points). Every pixel of the
/// moved box after must match the render before, resampled (bilinearly) at its old place:
/// sub-pixel phase and anti-aliasing pass, a lost, added or different glyph does not. The
/// box is taken a pixel inside its advance edges and a little inside its ascent–descent
/// edges, where the ink of neighbouring glyphs and lines may reach. A pixel is off when a
/// channel differs by more than the policy's `moved_tolerance`.
pub(crate) fn moved_mismatch(
    policy: &Policy,
    before: &Raster,
    after: &Raster,
    moved: &[([f64; 4], [f64; 2])],
) -> u64 {
    if before.width != after.width || before.height != after.height {
        return 0; // the page size check in `compare` counts this already
    }
    let s = f64::from(before.px_per_pt);
    let tolerance = f64::from(policy.moved_tolerance);
    let (w, h) = (i64::from(before.width), i64::from(before.height));
    let px = |r: &Raster, x: i64, y: i64, c: usize| -> f64 {
        let (x, y) = (x.clamp(0, w - 1), y.clamp(0, h - 1));
        f64::from(r.pixels[((y * w + x) * 3) as usize + c])
    };
    let mut count = 0;
    for &(b, [mx, my]) in moved {
        let (sx, sy) = (mx * s, my * s);
        let height = (b[3] - b[1]) * s;
        let x0 = ((b[0] + mx) * s).ceil() as i64 + 1;
        let x1 = ((b[2] + mx) * s).floor() as i64 - 1;
        let y0 = ((b[1] + my) * s + 0.1 * height).ceil() as i64;
        let y1 = ((b[3] + my) * s - 0.05 * height).floor() as i64;
        for y in y0.max(0)..=y1.min(h - 1) {
            for x in x0.max(0)..=x1.min(w - 1) {
                // Pixel centres: (x + 0.5) after came from (x + 0.5 - sx) before.
                let (fx, fy) = (x as f64 - sx, y as f64 - sy);
                let (ix, iy) = (fx.floor() as i64, fy.floor() as i64);
                let (tx, ty) = (fx - ix as f64, fy - iy as f64);
                let off = (0..3).any(|c| {
                    let top = px(before, ix, iy, c) * (1.0 - tx) + px(before, ix + 1, iy, c) * tx;
                    let bottom =
                        px(before, ix, iy + 1, c) * (1.0 - tx) + px(before, ix + 1, iy + 1, c) * tx;
                    let predicted = top * (1.0 - ty) + bottom * ty;
                    (px(after, x, y, c) - predicted).abs() > tolerance
                });
                count += u64::from(off);
            }
        }
    }
    count
}

/// Before and after PNG crops of one change area; empty when `want` is false (the service
/// renders them from the stored documents when they are first fetched).
pub(crate) fn previews(
    before: &Raster,
    after: &Raster,
    area: [f64; 4],
    want: bool,
) -> (Vec<u8>, Vec<u8>) {
    if !want {
        return (Vec::new(), Vec::new());
    }
    let m = PREVIEW_MARGIN_PT;
    let b = [area[0] - m, area[1] - m, area[2] + m, area[3] + m];
    let crop = |r: &Raster| crop_png(r, b, PREVIEW_MAX_BYTES).unwrap_or_default();
    (crop(before), crop(after))
}

/// Renders 1-based `page` exactly as verification does (same resolution, pixels copied
/// out), and returns the raster's size. Benchmarks time two of these as the floor an
/// edit's before-and-after check compares with.
pub fn bare_render(bytes: &[u8], password: Option<&str>, page: u32) -> Result<(u32, u32)> {
    if page == 0 {
        return Err(Error::InvalidRequest("pages are 1-based".into()));
    }
    let r = rasterize_page(bytes, password, page - 1, Policy::default().px_per_pt)?;
    Ok((r.width, r.height))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raster(rows: &[&[u8]]) -> Raster {
        let width = rows[0].len() as u32;
        Raster {
            width,
            height: rows.len() as u32,
            px_per_pt: 2.0,
            pixels: rows
                .iter()
                .flat_map(|r| r.iter().flat_map(|&v| [v, v, v]))
                .collect(),
        }
    }

    #[test]
    fn a_third_of_a_pixel_drift_is_not_collateral() {
        // A black stem with anti-aliased edges, moved right by about a third of a pixel.
        let before = raster(&[&[255, 255, 170, 0, 0, 255, 255, 255]]);
        let after = raster(&[&[255, 255, 200, 10, 0, 170, 255, 255]]);
        let rep = compare(&Policy::default(), &before, &after, &[]).expect("same size");
        assert_eq!(rep.changed_pixels_outside, 0);
    }

    #[test]
    fn moved_glyphs_must_render_as_before_moved() {
        let before = raster(&[
            &[255, 0, 0, 255, 255, 255, 255, 255],
            &[255, 0, 0, 255, 255, 255, 255, 255],
        ]);
        let moved = raster(&[
            &[255, 255, 255, 255, 0, 0, 255, 255],
            &[255, 255, 255, 255, 0, 0, 255, 255],
        ]);
        // At 2 px per point: the box [0, 0, 2, 1] pt moved right by 1.5 pt (3 px).
        let boxes = [([0.0, 0.0, 2.0, 1.0], [1.5, 0.0])];
        // Half a pixel further, the stems spread over their neighbours: that passes.
        let phase = raster(&[
            &[255, 255, 255, 255, 128, 0, 128, 255],
            &[255, 255, 255, 255, 128, 0, 128, 255],
        ]);
        let half = [([0.0, 0.0, 2.0, 1.0], [1.75, 0.0])];
        assert_eq!(
            moved_mismatch(&Policy::default(), &before, &phase, &half),
            0
        );
        assert_eq!(
            moved_mismatch(&Policy::default(), &before, &moved, &boxes),
            0
        );
        // The glyph lost on the way, or not moved at all, counts.
        let lost = raster(&[&[255; 8], &[255; 8]]);
        assert!(moved_mismatch(&Policy::default(), &before, &lost, &boxes) > 0);
        assert!(moved_mismatch(&Policy::default(), &before, &before, &boxes) > 0);
    }

    #[test]
    fn a_whole_pixel_move_new_ink_and_lost_ink_count() {
        let before = raster(&[&[255, 255, 0, 0, 255, 255, 255, 255]]);
        let moved = raster(&[&[255, 255, 255, 0, 0, 255, 255, 255]]);
        assert!(
            compare(&Policy::default(), &before, &moved, &[])
                .expect("diff")
                .changed_pixels_outside
                > 0
        );
        let ink = raster(&[&[255, 255, 0, 0, 255, 255, 0, 255]]);
        let rep = compare(&Policy::default(), &before, &ink, &[]).expect("diff");
        assert_eq!(rep.changed_pixels_outside, 1);
        let lost = raster(&[&[255, 255, 255, 255, 255, 255, 255, 255]]);
        assert_eq!(
            compare(&Policy::default(), &before, &lost, &[])
                .expect("diff")
                .changed_pixels_outside,
            2
        );
        // Inside an area nothing counts.
        let rep =
            compare(&Policy::default(), &before, &ink, &[[2.5, 0.0, 4.0, 0.5]]).expect("diff");
        assert_eq!(rep.changed_pixels_outside, 0);
    }
}
