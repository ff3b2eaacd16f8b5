//! Affine matrices `[a b c d e f]` in PDF's row-vector convention (§8.3.3): a point
//! `[x y 1]` maps to `[x y 1] × M`, so `multiply(a, b)` applies `a` first, then `b`.

/// An affine matrix `[a b c d e f]`.
pub type Matrix = [f64; 6];

/// The identity.
pub const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// `a × b`: transform by `a`, then by `b`.
pub fn multiply(a: &Matrix, b: &Matrix) -> Matrix {
    [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    ]
}

/// A translation.
pub fn translate(tx: f64, ty: f64) -> Matrix {
    [1.0, 0.0, 0.0, 1.0, tx, ty]
}

/// The inverse of `m`, when it has one (a finite determinant not within 1e-12 of zero).
pub fn invert(m: &Matrix) -> Option<Matrix> {
    let det = m[0] * m[3] - m[1] * m[2];
    if det.abs() < 1e-12 || !det.is_finite() {
        return None;
    }
    let (a, b, c, d) = (m[3] / det, -m[1] / det, -m[2] / det, m[0] / det);
    Some([a, b, c, d, -(m[4] * a + m[5] * c), -(m[4] * b + m[5] * d)])
}

/// Maps a point.
pub fn apply(m: &Matrix, x: f64, y: f64) -> (f64, f64) {
    (x * m[0] + y * m[2] + m[4], x * m[1] + y * m[3] + m[5])
}

/// The axis-aligned box around `rect` (`[x0 y0 x1 y1]`) after mapping by `m`.
pub fn transform_rect(m: &Matrix, rect: [f64; 4]) -> [f64; 4] {
    let corners = [
        apply(m, rect[0], rect[1]),
        apply(m, rect[2], rect[1]),
        apply(m, rect[0], rect[3]),
        apply(m, rect[2], rect[3]),
    ];
    let mut out = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    for (x, y) in corners {
        out[0] = out[0].min(x);
        out[1] = out[1].min(y);
        out[2] = out[2].max(x);
        out[3] = out[3].max(y);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiply_applies_left_first() {
        let scale = [2.0, 0.0, 0.0, 2.0, 0.0, 0.0];
        let shift = translate(10.0, 5.0);
        // Scale then shift: (1,1) → (2,2) → (12,7).
        assert_eq!(apply(&multiply(&scale, &shift), 1.0, 1.0), (12.0, 7.0));
        // Shift then scale: (1,1) → (11,6) → (22,12).
        assert_eq!(apply(&multiply(&shift, &scale), 1.0, 1.0), (22.0, 12.0));
    }

    #[test]
    fn rect_of_rotation_is_axis_aligned() {
        let rot90 = [0.0, 1.0, -1.0, 0.0, 0.0, 0.0];
        assert_eq!(
            transform_rect(&rot90, [0.0, 0.0, 2.0, 1.0]),
            [-1.0, 0.0, 0.0, 2.0]
        );
    }
}
