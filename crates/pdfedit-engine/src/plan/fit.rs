//! Widths of new text and how it is fitted into the room the old text leaves.

use pdf_content::{OpKind, StreamId};
use pdf_fonts::Font;

use crate::model::PageModel;
use crate::types::Fit;

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

/// Which way the new text runs, for fitting: along a line it may be condensed with `Tz`;
/// down a column (§9.7.4.3) horizontal scaling does not apply, so only its size changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Run {
    Line,
    Column,
}

/// Decides how text of natural width `new_w` (text space; a column's length) replaces text
/// of width `old_w` with `room` before the next glyph on the line. `width_at(shrink)`
/// gives the natural width at a size factor (character spacing does not scale with size).
/// `fit: auto` condenses a line (down to [`MIN_CONDENSE`]) and then shrinks its size (down
/// to [`MIN_SHRINK`], when `can_shrink`); a column is only shrunk. `fit: shrink` scales a
/// line's width, a column's size, to the old text's.
pub(crate) fn decide(
    fit: Fit,
    new_w: f64,
    old_w: f64,
    room: f64,
    width_at: impl Fn(f64) -> f64,
    can_shrink: bool,
    run: Run,
) -> Result<Fitted, String> {
    let plain = Fitted {
        condense: 1.0,
        shrink: 1.0,
        keep_place: true,
    };
    if new_w <= 0.0 {
        return Ok(plain);
    }
    // A hair of tolerance: equal widths computed two ways differ in the last bits.
    let fits = |w: f64| w <= room * 1.0005 + 1e-6;
    let factor = (old_w / new_w).clamp(0.05, 20.0);
    match (fit, run) {
        (Fit::None, _) => Ok(Fitted {
            keep_place: false,
            ..plain
        }),
        (Fit::Shrink, Run::Line) => Ok(Fitted {
            condense: factor,
            ..plain
        }),
        (Fit::Shrink, Run::Column) => Ok(Fitted {
            shrink: factor,
            ..plain
        }),
        // A column is not reflowed (the reflow planner refuses it as reflow_unsupported).
        (Fit::Reflow, Run::Column) => Err("reflow: vertical text is not reflowed".into()),
        // Text that fits its line is replaced in place; otherwise the paragraph reflows.
        (Fit::Reflow, _) if fits(new_w) => Ok(plain),
        (Fit::Reflow, _) => Err("reflow: the new text does not fit its line".into()),
        (Fit::Auto, _) if fits(new_w) => Ok(plain),
        (Fit::Auto, _) => {
            let condense = match run {
                Run::Line => MIN_CONDENSE,
                Run::Column => 1.0,
            };
            if run == Run::Line && room / new_w >= MIN_CONDENSE {
                return Ok(Fitted {
                    condense: room / new_w,
                    ..plain
                });
            }
            // Condense fully (a line), then find the size factor that fits.
            let floor = if can_shrink { MIN_SHRINK } else { 1.0 };
            let mut shrink = 1.0;
            while shrink >= floor - 1e-9 {
                if width_at(shrink) * condense <= room * 1.0005 + 1e-6 {
                    return Ok(Fitted {
                        condense,
                        shrink,
                        keep_place: true,
                    });
                }
                shrink -= 0.01;
            }
            let place = match run {
                Run::Line => "on the line",
                Run::Column => "in the column",
            };
            Err(format!(
                "the new text needs {:.0} % of the room before the next text {place}",
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
            decide(Fit::Auto, 90.0, 80.0, 95.0, w, true, Run::Line).map(|f| f.condense),
            Ok(1.0)
        );
        let f = decide(Fit::Auto, 100.0, 80.0, 90.0, w, true, Run::Line).expect("condensed");
        assert!((f.condense - 0.9).abs() < 1e-9 && f.shrink == 1.0);
        let f = decide(Fit::Auto, 100.0, 80.0, 75.0, w, true, Run::Line).expect("shrunk");
        assert_eq!(f.condense, MIN_CONDENSE);
        assert!(f.shrink < 0.9 && f.shrink >= MIN_SHRINK);
        assert!(decide(Fit::Auto, 100.0, 50.0, 50.0, w, true, Run::Line).is_err());
        assert!(
            !decide(Fit::None, 300.0, 50.0, 50.0, w, true, Run::Line)
                .expect("none")
                .keep_place
        );
    }

    #[test]
    fn auto_shrinks_a_column_but_never_condenses() {
        let len = |s: f64| 100.0 * s;
        let col = |fit, new, old, room| decide(fit, new, old, room, len, true, Run::Column);
        let f = col(Fit::Auto, 100.0, 100.0, 100.0).expect("fits");
        assert_eq!((f.condense, f.shrink), (1.0, 1.0));
        let f = col(Fit::Auto, 100.0, 80.0, 90.0).expect("shrunk");
        assert_eq!(f.condense, 1.0);
        assert!(f.shrink <= 0.9 && f.shrink > 0.88);
        assert!(col(Fit::Auto, 100.0, 50.0, 70.0).is_err());
        let f = col(Fit::Shrink, 100.0, 50.0, 70.0).expect("shrink");
        assert_eq!((f.condense, f.shrink), (1.0, 0.5));
        assert!(!col(Fit::None, 300.0, 50.0, 50.0).expect("none").keep_place);
        assert!(col(Fit::Reflow, 10.0, 50.0, 70.0).is_err());
    }
}
