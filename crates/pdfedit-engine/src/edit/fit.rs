//! Widths of new text and how it is fitted into the room the old text leaves.

use pdf_content::{OpKind, StreamId};
use pdf_fonts::Font;

use super::find::PageModel;
use super::types::Fit;

/// Smallest horizontal scaling `fit: auto` condenses to.
pub(crate) const MIN_CONDENSE: f64 = 0.85;
/// Smallest size factor `fit: auto` shrinks to (after condensing).
pub(crate) const MIN_SHRINK: f64 = 0.80;

/// The text state parameters that change widths (§9.3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spacing {
    /// `Tc`.
    pub char_spacing: f64,
    /// `Tw`.
    pub word_spacing: f64,
    /// `Tz` as a factor (1.0 = 100 %).
    pub scale: f64,
}

impl Default for Spacing {
    fn default() -> Self {
        Spacing {
            char_spacing: 0.0,
            word_spacing: 0.0,
            scale: 1.0,
        }
    }
}

/// `Tc`, `Tw` and `Tz` in force when op `op_index` of `stream` runs (the op's own `"`
/// operands included). Page streams carry state across /Contents; a form starts afresh
/// (it inherits the caller's state, which is rarely anything but the default).
pub(crate) fn spacing_at(model: &PageModel, stream: StreamId, op_index: usize) -> Spacing {
    let mut stack: Vec<Spacing> = Vec::new();
    let mut s = Spacing::default();
    for cs in &model.glyphs.streams {
        let last = cs.id == stream;
        let same_family = matches!(
            (cs.id, stream),
            (StreamId::PageContent { .. }, StreamId::PageContent { .. })
        );
        if !last && !same_family {
            continue;
        }
        let end = if last { op_index + 1 } else { cs.ops.len() };
        for op in cs.ops.iter().take(end) {
            match &op.kind {
                OpKind::Save => stack.push(s),
                OpKind::Restore => s = stack.pop().unwrap_or(s),
                OpKind::CharSpacing(v) => s.char_spacing = *v,
                OpKind::WordSpacing(v) => s.word_spacing = *v,
                OpKind::HorizontalScaling(v) => s.scale = *v / 100.0,
                OpKind::NextLineShowTextSpacing {
                    word_spacing,
                    char_spacing,
                } => {
                    s.word_spacing = *word_spacing;
                    s.char_spacing = *char_spacing;
                }
                _ => {}
            }
        }
        if last {
            break;
        }
    }
    s
}

/// Advance of `codes` in `font` at `size`, in text space (§9.4.4), with spacing applied.
pub(crate) fn text_width(font: &Font, codes: &[u8], size: f64, sp: Spacing) -> f64 {
    let mut pos = 0;
    let mut w = 0.0;
    while pos < codes.len() {
        let (code, used) = font.next_code(&codes[pos..]);
        let used = used.clamp(1, codes.len() - pos);
        let word = if used == 1 && code == 32 {
            sp.word_spacing
        } else {
            0.0
        };
        w += (font.width(code) / 1000.0 * size + sp.char_spacing + word) * sp.scale;
        pos += used;
    }
    w
}

/// How the new text is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fitted {
    /// Horizontal scaling factor applied on top of the current `Tz`.
    pub condense: f64,
    /// Size factor.
    pub shrink: f64,
    /// Whether the text after the match keeps its place (a compensating kern).
    pub keep_place: bool,
}

/// Decides how text of natural width `new_w` (text space) replaces text of width `old_w`
/// with `room` before the next glyph on the line. `width_at(shrink)` gives the natural
/// width at a size factor (character spacing does not scale with size).
pub(crate) fn decide(
    fit: Fit,
    new_w: f64,
    old_w: f64,
    room: f64,
    width_at: impl Fn(f64) -> f64,
    can_shrink: bool,
) -> Result<Fitted, String> {
    let plain = Fitted {
        condense: 1.0,
        shrink: 1.0,
        keep_place: true,
    };
    if new_w <= 0.0 {
        return Ok(plain);
    }
    match fit {
        Fit::None => Ok(Fitted {
            keep_place: false,
            ..plain
        }),
        Fit::Shrink => Ok(Fitted {
            condense: (old_w / new_w).clamp(0.05, 20.0),
            ..plain
        }),
        // Text that fits its line is replaced in place; otherwise the paragraph reflows.
        Fit::Reflow if new_w <= room * 1.0005 + 1e-6 => Ok(plain),
        Fit::Reflow => Err("reflow: the new text does not fit its line".into()),
        Fit::Auto => {
            // A hair of tolerance: equal widths computed two ways differ in the last bits.
            if new_w <= room * 1.0005 + 1e-6 {
                return Ok(plain);
            }
            let condense = (room / new_w).min(1.0);
            if condense >= MIN_CONDENSE {
                return Ok(Fitted { condense, ..plain });
            }
            // Condense fully, then find the size factor that fits.
            let mut shrink = 1.0;
            let floor = if can_shrink { MIN_SHRINK } else { 1.0 };
            while shrink >= floor - 1e-9 {
                if width_at(shrink) * MIN_CONDENSE <= room {
                    return Ok(Fitted {
                        condense: MIN_CONDENSE,
                        shrink,
                        keep_place: true,
                    });
                }
                shrink -= 0.01;
            }
            Err(format!(
                "the new text needs {:.0} % of the room before the next text on the line",
                new_w / room.max(1e-9) * 100.0
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_condenses_then_shrinks_then_refuses() {
        let w = |s: f64| 100.0 * s;
        assert_eq!(
            decide(Fit::Auto, 90.0, 80.0, 95.0, w, true).map(|f| f.condense),
            Ok(1.0)
        );
        let f = decide(Fit::Auto, 100.0, 80.0, 90.0, w, true).expect("condensed");
        assert!((f.condense - 0.9).abs() < 1e-9 && f.shrink == 1.0);
        let f = decide(Fit::Auto, 100.0, 80.0, 75.0, w, true).expect("shrunk");
        assert_eq!(f.condense, MIN_CONDENSE);
        assert!(f.shrink < 0.9 && f.shrink >= MIN_SHRINK);
        assert!(decide(Fit::Auto, 100.0, 50.0, 50.0, w, true).is_err());
        assert!(
            !decide(Fit::None, 300.0, 50.0, 50.0, w, true)
                .expect("none")
                .keep_place
        );
    }
}
