//! Graphics state and text state (§8.4, §9.3) as far as glyph positions and colours
//! need them. Line widths, dashes and the like are parsed but not tracked.

use std::rc::Rc;

use super::matrix::{Matrix, IDENTITY};
use super::{FontKey, GlyphFont};

/// Device families we can approximate as RGB (§8.6.4); everything else (Lab,
/// Indexed, Separation, DeviceN, Pattern) is `Unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColorFamily {
    Gray,
    Rgb,
    Cmyk,
    Unknown,
}

impl ColorFamily {
    /// The initial colour after `cs` selects this family (§8.6.8): black for the
    /// device families.
    pub(crate) fn initial_rgb(self) -> Option<[f64; 3]> {
        match self {
            Self::Gray | Self::Rgb | Self::Cmyk => Some([0.0, 0.0, 0.0]),
            Self::Unknown => None,
        }
    }

    /// Components in this family to RGB; `None` when the count does not fit.
    pub(crate) fn to_rgb(self, c: &[f64]) -> Option<[f64; 3]> {
        match (self, c) {
            (Self::Gray, [g]) => Some(gray(*g)),
            (Self::Rgb, [r, g, b]) => Some([clamp(*r), clamp(*g), clamp(*b)]),
            (Self::Cmyk, [c, m, y, k]) => Some(cmyk(*c, *m, *y, *k)),
            _ => None,
        }
    }
}

fn clamp(v: f64) -> f64 {
    if v.is_nan() {
        0.0
    } else {
        v.clamp(0.0, 1.0)
    }
}

pub(crate) fn gray(g: f64) -> [f64; 3] {
    let g = clamp(g);
    [g, g, g]
}

/// The naive conversion of §10.4.2.3 (no colour management); good enough to tell
/// "black text" from "red text".
pub(crate) fn cmyk(c: f64, m: f64, y: f64, k: f64) -> [f64; 3] {
    let k = clamp(k);
    [
        (1.0 - clamp(c)) * (1.0 - k),
        (1.0 - clamp(m)) * (1.0 - k),
        (1.0 - clamp(y)) * (1.0 - k),
    ]
}

/// The font chosen by `Tf`, once the font source has supplied it.
#[derive(Clone)]
pub(crate) struct ActiveFont {
    pub key: FontKey,
    pub font: Rc<dyn GlyphFont>,
}

/// Text state parameters (§9.3.1). They belong to the graphics state, so `q`/`Q`
/// save and restore them.
#[derive(Clone)]
pub(crate) struct TextState {
    pub char_spacing: f64,
    pub word_spacing: f64,
    /// `Tz / 100`.
    pub horizontal_scale: f64,
    pub leading: f64,
    pub font: Option<ActiveFont>,
    /// Name given to the last `Tf`, kept even when no font could be supplied.
    pub font_name: Option<Vec<u8>>,
    pub font_size: f64,
    pub render_mode: i64,
    pub rise: f64,
}

impl Default for TextState {
    fn default() -> Self {
        Self {
            char_spacing: 0.0,
            word_spacing: 0.0,
            horizontal_scale: 1.0,
            leading: 0.0,
            font: None,
            font_name: None,
            font_size: 0.0,
            render_mode: 0,
            rise: 0.0,
        }
    }
}

/// The parts of the graphics state we track.
#[derive(Clone)]
pub(crate) struct GraphicsState {
    pub ctm: Matrix,
    pub fill_family: ColorFamily,
    /// Initial fill colour is DeviceGray black (§8.4.1, Table 52).
    pub fill_rgb: Option<[f64; 3]>,
    pub text: TextState,
}

impl GraphicsState {
    pub(crate) fn new(ctm: Matrix) -> Self {
        Self {
            ctm,
            fill_family: ColorFamily::Gray,
            fill_rgb: Some([0.0, 0.0, 0.0]),
            text: TextState::default(),
        }
    }
}

impl Default for GraphicsState {
    fn default() -> Self {
        Self::new(IDENTITY)
    }
}

/// The text matrix and text line matrix (§9.4.2); not part of the graphics state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TextObject {
    pub tm: Matrix,
    pub tlm: Matrix,
}

impl Default for TextObject {
    fn default() -> Self {
        Self {
            tm: IDENTITY,
            tlm: IDENTITY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmyk_black_and_red() {
        assert_eq!(cmyk(0.0, 0.0, 0.0, 1.0), [0.0, 0.0, 0.0]);
        assert_eq!(cmyk(0.0, 1.0, 1.0, 0.0), [1.0, 0.0, 0.0]);
    }

    #[test]
    fn component_count_must_match_family() {
        assert_eq!(ColorFamily::Rgb.to_rgb(&[1.0, 0.0]), None);
        assert_eq!(ColorFamily::Gray.to_rgb(&[0.5]), Some([0.5, 0.5, 0.5]));
        assert_eq!(ColorFamily::Unknown.to_rgb(&[0.5]), None);
    }
}
