//! Every tolerance of verification in one place: the resolution pages are rendered at, what
//! a pixel may differ by and still be the same, how far a change area reaches, how far a
//! moved glyph may differ from its old self, and what a redaction's noise rounds accept.
//! The commit step (`crate::commit`) reads them from the [`Policy`] it is given.

use pdf_render::diff::CHANNEL_TOLERANCE;
use pdf_render::raster::VERIFY_PX_PER_PT;

/// Pixels added around every change area before comparing (glyph edges, rounding).
pub(crate) const DILATE_PX: u32 = 3;

/// Most a pixel of a moved glyph may differ, per channel, from the render before moved
/// by the same (fractional) distance: the glyph lands at another sub-pixel phase, which
/// re-distributes the ink of thin stems and edges over their pixels.
pub(crate) const MOVED_TOLERANCE: i32 = 96;

/// The largest origin difference (points) a redaction's noise round takes as `f32`
/// rounding rather than a move: a fiftieth of a pixel at the verification's resolution,
/// far above the `f32` spacing of page coordinates (6e-5 at 1000 pt) and far below
/// anything visible.
pub(crate) const NOISE_PT: f64 = 0.001;

/// PDFium's placement steps, in pixels: a third of a pixel for outline glyphs (LCD text),
/// a whole pixel for glyph bitmaps (Type 3).
pub(crate) const STEPS_PX: [f64; 2] = [1.0 / 3.0, 1.0];

/// How many noise rounds a comparison that found collateral may run (a redaction's:
/// glyphs an `f32` rounding away, then Type 3 bitmap glyphs snapped a row over).
pub(crate) const NOISE_ROUNDS: usize = 2;

/// The tolerances of one edit run's verification.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Policy {
    /// Verification resolution, pixels per point.
    pub px_per_pt: f32,
    /// Per-channel difference still counted as the same pixel.
    pub channel_tolerance: u8,
    /// Pixels added around every change area.
    pub dilate_px: u32,
    /// Per-channel difference a moved glyph's pixel may have from the render before,
    /// resampled at its old place (sub-pixel phase).
    pub moved_tolerance: i32,
    /// Origin difference (points) a noise round takes as rounding, not a move.
    pub noise_pt: f64,
    /// PDFium's placement steps (pixels) a noise round tries.
    pub noise_steps_px: [f64; 2],
    /// How many noise rounds may run after a comparison found collateral.
    pub noise_rounds: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            px_per_pt: VERIFY_PX_PER_PT,
            channel_tolerance: CHANNEL_TOLERANCE,
            dilate_px: DILATE_PX,
            moved_tolerance: MOVED_TOLERANCE,
            noise_pt: NOISE_PT,
            noise_steps_px: STEPS_PX,
            noise_rounds: NOISE_ROUNDS,
        }
    }
}
