//! Conversion from PDF user space to the API's top-left, as-displayed coordinates.

/// An axis-aligned box `[x0, y0, x1, y1]` in API coordinates (points, top-left origin,
/// y down), normalised so that `x0 <= x1` and `y0 <= y1`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rect {
    /// Left edge.
    pub x0: f32,
    /// Top edge.
    pub y0: f32,
    /// Right edge.
    pub x1: f32,
    /// Bottom edge.
    pub y1: f32,
}

impl Rect {
    /// A normalised rectangle from two corners in any order.
    pub fn from_corners(ax: f32, ay: f32, bx: f32, by: f32) -> Self {
        Rect {
            x0: ax.min(bx),
            y0: ay.min(by),
            x1: ax.max(bx),
            y1: ay.max(by),
        }
    }

    /// `[x0, y0, x1, y1]`.
    pub fn to_array(self) -> [f32; 4] {
        [self.x0, self.y0, self.x1, self.y1]
    }

    /// Width (never negative).
    pub fn width(&self) -> f32 {
        self.x1 - self.x0
    }

    /// Height (never negative).
    pub fn height(&self) -> f32 {
        self.y1 - self.y0
    }

    /// The smallest rectangle containing both.
    pub fn union(&self, other: &Rect) -> Rect {
        Rect {
            x0: self.x0.min(other.x0),
            y0: self.y0.min(other.y0),
            x1: self.x1.max(other.x1),
            y1: self.y1.max(other.y1),
        }
    }
}

/// Maps user-space points of one page to displayed, top-left coordinates.
///
/// PDFium shows the intersection of the media box and the crop box (its "bounding box"),
/// rotated clockwise by `/Rotate`; we reproduce exactly that so boxes line up with renders.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageTransform {
    left: f32,
    bottom: f32,
    /// Unrotated width and height of the visible box.
    width: f32,
    height: f32,
    /// Clockwise page rotation, one of 0, 90, 180, 270.
    rotation: u16,
}

impl PageTransform {
    pub(crate) fn new(left: f32, bottom: f32, right: f32, top: f32, rotation: u16) -> Self {
        PageTransform {
            left: left.min(right),
            bottom: bottom.min(top),
            width: (right - left).abs(),
            height: (top - bottom).abs(),
            rotation,
        }
    }

    /// One user-space point to displayed coordinates.
    pub(crate) fn point(&self, x: f32, y: f32) -> (f32, f32) {
        // First to top-left coordinates of the unrotated box, then rotate clockwise.
        let u = x - self.left;
        let v = self.height - (y - self.bottom);
        match self.rotation {
            90 => (self.height - v, u),
            180 => (self.width - u, self.height - v),
            270 => (v, self.width - u),
            _ => (u, v),
        }
    }

    /// A user-space rectangle (left, bottom, right, top) to a displayed box.
    pub(crate) fn rect(&self, left: f32, bottom: f32, right: f32, top: f32) -> Rect {
        let (ax, ay) = self.point(left, bottom);
        let (bx, by) = self.point(right, top);
        Rect::from_corners(ax, ay, bx, by)
    }

    /// A rectangle as PDFium reports it (character, widget bounds) to a displayed box.
    pub(crate) fn pdf_rect(&self, r: &pdfium_render::prelude::PdfRect) -> Rect {
        self.rect(
            r.left().value,
            r.bottom().value,
            r.right().value,
            r.top().value,
        )
    }

    /// Converts PDFium's character angle to degrees counter-clockwise as displayed.
    ///
    /// PDFium computes `atan2(c, a)` of the glyph matrix, which is the rotation measured
    /// *clockwise* in user space; a clockwise page rotation then turns the text further.
    pub(crate) fn display_angle_degrees(&self, pdfium_radians: f32) -> f32 {
        let deg = -pdfium_radians.to_degrees() - f32::from(self.rotation);
        deg.rem_euclid(360.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unrotated_page_flips_y() {
        let t = PageTransform::new(0.0, 0.0, 612.0, 792.0, 0);
        assert_eq!(t.point(10.0, 782.0), (10.0, 10.0));
    }

    #[test]
    fn crop_origin_is_removed() {
        let t = PageTransform::new(100.0, 50.0, 300.0, 250.0, 0);
        assert_eq!(t.point(100.0, 250.0), (0.0, 0.0));
    }

    #[test]
    fn rotation_90_puts_the_left_edge_on_top() {
        // A 200 x 100 (w x h) box rotated clockwise displays as 100 x 200.
        let t = PageTransform::new(0.0, 0.0, 200.0, 100.0, 90);
        // Bottom-left corner of the unrotated page becomes the displayed top-left.
        assert_eq!(t.point(0.0, 0.0), (0.0, 0.0));
        // Top-left becomes top-right.
        assert_eq!(t.point(0.0, 100.0), (100.0, 0.0));
        assert_eq!(t.display_angle_degrees(0.0), 270.0);
        // Text drawn rotated 90° counter-clockwise on a page shown rotated 90° clockwise
        // reads upright; PDFium reports that glyph matrix as 270° (clockwise).
        assert_eq!(t.display_angle_degrees(270f32.to_radians()), 0.0);
    }

    #[test]
    fn rotation_270_and_180() {
        let t = PageTransform::new(0.0, 0.0, 200.0, 100.0, 270);
        assert_eq!(t.point(200.0, 100.0), (0.0, 0.0));
        let t = PageTransform::new(0.0, 0.0, 200.0, 100.0, 180);
        assert_eq!(t.point(200.0, 0.0), (0.0, 0.0));
    }
}
