//! Pixel comparison of two rasters of the same page, outside the areas an edit may touch.
//!
//! Most of a page is unchanged after an edit, so the loop is built for the equal case:
//! rows are compared as whole slices first (a `memcmp`), and differing rows in 24-byte
//! blocks (eight RGB pixels, three `u64` words) before any per-pixel work. Only blocks that
//! differ are examined pixel by pixel with a per-channel tolerance the caller gives (the
//! engine's verification policy; [`CHANNEL_TOLERANCE`] is its default).

use crate::raster::Raster;
use crate::{Error, Result};

/// The default per-channel difference still counted as "the same" (rounding noise of a
/// re-encode); callers pass the tolerance they use to [`diff`].
pub const CHANNEL_TOLERANCE: u8 = 8;

/// What changed between two rasters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiffReport {
    /// Pixels that differ outside every (dilated) ignore box.
    pub changed_pixels_outside: u64,
    /// All pixels that differ, ignore boxes included.
    pub changed_pixels_total: u64,
    /// Box of the changes outside the ignore boxes, in top-left page points.
    pub bbox_of_changes: Option<[f64; 4]>,
}

/// Compares `before` and `after` (same size), ignoring `ignore_boxes` (top-left page
/// points) grown by `dilate_px` pixels on every side; a pixel changed when some channel
/// differs by more than `tolerance`.
pub fn diff(
    before: &Raster,
    after: &Raster,
    ignore_boxes: &[[f64; 4]],
    dilate_px: u32,
    tolerance: u8,
) -> Result<DiffReport> {
    if before.width != after.width
        || before.height != after.height
        || before.pixels.len() != after.pixels.len()
    {
        return Err(Error::InvalidRequest(
            "rasters of different sizes cannot be compared".into(),
        ));
    }
    let (w, h) = (before.width as usize, before.height as usize);
    let s = f64::from(before.px_per_pt);
    let boxes = pixel_boxes(before, ignore_boxes, dilate_px);
    let stride = w * 3;
    let mut report = DiffReport::default();
    let mut bbox: Option<[usize; 4]> = None;
    let mut row_ignores: Vec<(usize, usize)> = Vec::new();
    for y in 0..h {
        let a = &before.pixels[y * stride..(y + 1) * stride];
        let b = &after.pixels[y * stride..(y + 1) * stride];
        if a == b {
            continue;
        }
        row_ignores.clear();
        row_ignores.extend(
            boxes
                .iter()
                .filter(|r| r[1] <= y && y < r[3])
                .map(|r| (r[0], r[2])),
        );
        for_each_changed_pixel(a, b, tolerance, |x| {
            report.changed_pixels_total += 1;
            if row_ignores.iter().any(|&(x0, x1)| x0 <= x && x < x1) {
                return;
            }
            report.changed_pixels_outside += 1;
            let e = bbox.get_or_insert([x, y, x, y]);
            e[0] = e[0].min(x);
            e[1] = e[1].min(y);
            e[2] = e[2].max(x);
            e[3] = e[3].max(y);
        });
    }
    report.bbox_of_changes = bbox.map(|[x0, y0, x1, y1]| {
        [
            x0 as f64 / s,
            y0 as f64 / s,
            (x1 + 1) as f64 / s,
            (y1 + 1) as f64 / s,
        ]
    });
    Ok(report)
}

/// Calls `hit(x)` for every pixel of two equal-length RGB rows that differs by more than
/// `tolerance` in some channel.
fn for_each_changed_pixel(a: &[u8], b: &[u8], tolerance: u8, mut hit: impl FnMut(usize)) {
    const BLOCK: usize = 24; // 8 pixels, 3 u64 words
    let blocks = a.len() / BLOCK;
    for i in 0..blocks {
        let (pa, pb) = (
            &a[i * BLOCK..(i + 1) * BLOCK],
            &b[i * BLOCK..(i + 1) * BLOCK],
        );
        if words_equal(pa, pb) {
            continue;
        }
        check_pixels(pa, pb, i * 8, tolerance, &mut hit);
    }
    let tail = blocks * BLOCK;
    check_pixels(&a[tail..], &b[tail..], blocks * 8, tolerance, &mut hit);
}

fn words_equal(a: &[u8], b: &[u8]) -> bool {
    a.chunks_exact(8).zip(b.chunks_exact(8)).all(|(x, y)| {
        let wx = u64::from_ne_bytes(x.try_into().unwrap_or([0; 8]));
        let wy = u64::from_ne_bytes(y.try_into().unwrap_or([0; 8]));
        wx == wy
    })
}

fn check_pixels(a: &[u8], b: &[u8], first_x: usize, tolerance: u8, hit: &mut impl FnMut(usize)) {
    for (k, (pa, pb)) in a.chunks_exact(3).zip(b.chunks_exact(3)).enumerate() {
        let delta = pa
            .iter()
            .zip(pb)
            .map(|(x, y)| x.abs_diff(*y))
            .max()
            .unwrap_or(0);
        if delta > tolerance {
            hit(first_x + k);
        }
    }
}

/// Boxes `[x0, y0, x1, y1]` in top-left points as pixel boxes of `raster`, half-open
/// [x0, x1) × [y0, y1), grown by `dilate_px` on every side and clamped to the raster.
pub fn pixel_boxes(raster: &Raster, boxes: &[[f64; 4]], dilate_px: u32) -> Vec<[usize; 4]> {
    let (w, h) = (raster.width as usize, raster.height as usize);
    let s = f64::from(raster.px_per_pt);
    let d = f64::from(dilate_px);
    boxes
        .iter()
        .map(|b| {
            let px = |v: f64, lim: usize| v.clamp(0.0, lim as f64) as usize;
            [
                px((b[0].min(b[2]) * s - d).floor(), w),
                px((b[1].min(b[3]) * s - d).floor(), h),
                px((b[0].max(b[2]) * s + d).ceil(), w),
                px((b[1].max(b[3]) * s + d).ceil(), h),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank(w: u32, h: u32) -> Raster {
        Raster {
            width: w,
            height: h,
            px_per_pt: 2.0,
            pixels: vec![255; (w * h * 3) as usize],
        }
    }

    fn paint(r: &mut Raster, x: u32, y: u32) {
        let i = ((y * r.width + x) * 3) as usize;
        r.pixels[i..i + 3].copy_from_slice(&[0, 0, 0]);
    }

    #[test]
    fn identical_rasters_have_no_changes() {
        let a = blank(37, 11);
        let rep = diff(&a, &a.clone(), &[], 0, CHANNEL_TOLERANCE).expect("same size");
        assert_eq!(rep, DiffReport::default());
    }

    #[test]
    fn changes_inside_ignore_boxes_do_not_count() {
        let a = blank(100, 50);
        let mut b = a.clone();
        paint(&mut b, 21, 21); // inside box [10,10,12,12] pt = px [20,24)
        paint(&mut b, 25, 21); // inside only after dilating by 2 px
        paint(&mut b, 90, 40); // outside
        let rep =
            diff(&a, &b, &[[10.0, 10.0, 12.0, 12.0]], 2, CHANNEL_TOLERANCE).expect("same size");
        assert_eq!(rep.changed_pixels_total, 3);
        assert_eq!(rep.changed_pixels_outside, 1);
        assert_eq!(rep.bbox_of_changes, Some([45.0, 20.0, 45.5, 20.5]));
        let rep =
            diff(&a, &b, &[[10.0, 10.0, 12.0, 12.0]], 0, CHANNEL_TOLERANCE).expect("same size");
        assert_eq!(rep.changed_pixels_outside, 2);
    }

    #[test]
    fn small_differences_are_tolerated_and_sizes_checked() {
        let a = blank(9, 3);
        let mut b = a.clone();
        b.pixels[4] = 250;
        assert_eq!(
            diff(&a, &b, &[], 0, CHANNEL_TOLERANCE)
                .expect("ok")
                .changed_pixels_total,
            0
        );
        assert!(diff(&a, &blank(9, 4), &[], 0, CHANNEL_TOLERANCE).is_err());
        // A stricter tolerance counts the small difference.
        assert_eq!(diff(&a, &b, &[], 0, 2).expect("ok").changed_pixels_total, 1);
    }
}
