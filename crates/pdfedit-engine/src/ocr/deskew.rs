//! Skew of a scanned page: the angle whose horizontal projection of the dark pixels has
//! the sharpest rows (the sum of squared row counts peaks when text lines run level), and
//! rotating the grey image by it before Tesseract reads it.

/// Angles tried, degrees either side of level.
const MAX_SKEW_DEG: f32 = 6.0;
/// A skew below this is left alone (Tesseract copes, and rotating resamples every pixel).
pub(crate) const MIN_SKEW_DEG: f32 = 0.3;
/// Grey value below which a pixel counts as ink.
const INK: u8 = 128;

/// The page's skew in degrees: positive when text lines rise to the right. Measured on
/// a quarter-resolution copy.
pub(crate) fn estimate(gray: &[u8], width: u32, height: u32) -> f32 {
    let (w, h) = (width as usize, height as usize);
    let step = 4usize;
    let mut ink: Vec<(f32, f32)> = Vec::new();
    for y in (0..h).step_by(step) {
        for x in (0..w).step_by(step) {
            if gray[y * w + x] < INK {
                ink.push((x as f32, y as f32));
            }
        }
    }
    // A nearly blank or nearly black page has no lines to level.
    let total = (w / step) * (h / step);
    if ink.len() < 200 || ink.len() > total / 2 {
        return 0.0;
    }
    let score = |deg: f32| -> f64 {
        let (s, c) = deg.to_radians().sin_cos();
        let rows = (h + w) / step + 2;
        let mut hist = vec![0u32; rows * 2];
        let offset = rows as f32;
        for &(x, y) in &ink {
            // Row of the point once the page is turned by `deg` (lines rising to the right
            // by `deg` come out level).
            let r = ((y * c + x * s) / step as f32 + offset) as usize;
            if let Some(v) = hist.get_mut(r) {
                *v += 1;
            }
        }
        hist.iter().map(|&v| f64::from(v) * f64::from(v)).sum()
    };
    let mut best = (0.0f32, score(0.0));
    let mut deg = -MAX_SKEW_DEG;
    while deg <= MAX_SKEW_DEG + 1e-3 {
        let s = score(deg);
        if s > best.1 {
            best = (deg, s);
        }
        deg += 0.5;
    }
    // Refine around the coarse peak.
    let centre = best.0;
    let mut deg = centre - 0.5;
    while deg <= centre + 0.5 + 1e-3 {
        let s = score(deg);
        if s > best.1 {
            best = (deg, s);
        }
        deg += 0.1;
    }
    // Level text scores highest at 0 unless another angle is clearly better.
    if best.0.abs() < MIN_SKEW_DEG {
        0.0
    } else {
        best.0
    }
}

/// `gray` turned by `deg` about its centre (bilinear, paper-white outside), same size. A page
/// whose [`estimate`] is `s` is levelled by turning it by `-s`.
pub(crate) fn rotate(gray: &[u8], width: u32, height: u32, deg: f32) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    let (s, c) = deg.to_radians().sin_cos();
    let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
    let mut out = vec![255u8; w * h];
    for y in 0..h {
        for x in 0..w {
            // Source of the output pixel: the inverse of `to_rotated`.
            let (dx, dy) = (x as f32 - cx, y as f32 - cy);
            let sx = dx * c - dy * s + cx;
            let sy = dx * s + dy * c + cy;
            if sx < 0.0 || sy < 0.0 || sx >= (w - 1) as f32 || sy >= (h - 1) as f32 {
                continue;
            }
            let (x0, y0) = (sx as usize, sy as usize);
            let (fx, fy) = (sx - x0 as f32, sy - y0 as f32);
            let p = |xx: usize, yy: usize| f32::from(gray[yy * w + xx]);
            let top = p(x0, y0) * (1.0 - fx) + p(x0 + 1, y0) * fx;
            let bottom = p(x0, y0 + 1) * (1.0 - fx) + p(x0 + 1, y0 + 1) * fx;
            out[y * w + x] = (top * (1.0 - fy) + bottom * fy).round() as u8;
        }
    }
    out
}

/// A box `[x0, y0, x1, y1]` of the rotated image (see [`rotate`]) back in the pixels of
/// the original: the bounding box of its four corners.
pub(crate) fn unrotate_box(b: [f32; 4], width: u32, height: u32, deg: f32) -> [f32; 4] {
    let (s, c) = deg.to_radians().sin_cos();
    let (cx, cy) = (width as f32 / 2.0, height as f32 / 2.0);
    let corners = [(b[0], b[1]), (b[2], b[1]), (b[0], b[3]), (b[2], b[3])];
    let mut out = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
    for (x, y) in corners {
        let (dx, dy) = (x - cx, y - cy);
        let sx = dx * c - dy * s + cx;
        let sy = dx * s + dy * c + cy;
        out = [
            out[0].min(sx),
            out[1].min(sy),
            out[2].max(sx),
            out[3].max(sy),
        ];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Horizontal bars of ink, then turned: the estimate finds the turn again.
    #[test]
    fn finds_the_skew_of_ruled_lines() {
        let (w, h) = (800u32, 600u32);
        let mut page = vec![255u8; (w * h) as usize];
        for line in 0..12 {
            let y = 60 + line * 40;
            for yy in y..y + 8 {
                for x in 100..700 {
                    if x % 13 < 9 {
                        page[(yy * w + x) as usize] = 0;
                    }
                }
            }
        }
        assert_eq!(estimate(&page, w, h), 0.0);
        let turned = rotate(&page, w, h, -2.0);
        let found = estimate(&turned, w, h);
        assert!((found.abs() - 2.0).abs() < 0.3, "found {found}");
        // Turning back by the found angle levels it again.
        let back = rotate(&turned, w, h, -found);
        assert_eq!(estimate(&back, w, h), 0.0);
    }
}
