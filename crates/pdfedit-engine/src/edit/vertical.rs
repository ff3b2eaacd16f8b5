//! Vertical writing (Identity-V and other vertical CMaps, §9.7.4.3): the pen moves down
//! by each glyph's vertical advance w1 (W2/DW2), `Tz` does not apply, and a positive
//! `TJ` number moves it back up (as PDFium draws it).

use pdf_fonts::Font;

use super::fit::{Fitted, Spacing, MIN_SHRINK};
use super::types::Fit;

/// Length of `codes` down the column in `font` at `size`, in text space (positive), with
/// character spacing (which lengthens each step down, as PDFium applies it).
pub(crate) fn text_length(font: &Font, codes: &[u8], size: f64, sp: Spacing) -> f64 {
    let mut pos = 0;
    let mut len = 0.0;
    while pos < codes.len() {
        let (code, used) = font.next_code(&codes[pos..]);
        let used = used.clamp(1, codes.len() - pos);
        len += -font.vertical_advance(code) / 1000.0 * size + sp.char_spacing;
        pos += used;
    }
    len
}

/// Like [`super::fit::decide`] for a column: horizontal scaling cannot condense vertical
/// text, so `fit: auto` only reduces the size (down to [`MIN_SHRINK`]) and `fit: shrink`
/// scales the size to the old length.
pub(crate) fn decide(
    fit: Fit,
    new_len: f64,
    old_len: f64,
    room: f64,
    length_at: impl Fn(f64) -> f64,
) -> Result<Fitted, String> {
    let plain = Fitted {
        condense: 1.0,
        shrink: 1.0,
        keep_place: true,
    };
    if new_len <= 0.0 {
        return Ok(plain);
    }
    match fit {
        Fit::None => Ok(Fitted {
            keep_place: false,
            ..plain
        }),
        Fit::Shrink => Ok(Fitted {
            shrink: (old_len / new_len).clamp(0.05, 20.0),
            ..plain
        }),
        Fit::Reflow => Err("reflow is not supported yet".into()),
        Fit::Auto => {
            let mut shrink = 1.0;
            while shrink >= MIN_SHRINK - 1e-9 {
                if length_at(shrink) <= room * 1.0005 + 1e-6 {
                    return Ok(Fitted { shrink, ..plain });
                }
                shrink -= 0.01;
            }
            Err(format!(
                "the new text needs {:.0} % of the room before the next text in the column",
                new_len / room.max(1e-9) * 100.0
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_shrinks_a_column_but_never_condenses() {
        let len = |s: f64| 100.0 * s;
        let f = decide(Fit::Auto, 100.0, 100.0, 100.0, len).expect("fits");
        assert_eq!((f.condense, f.shrink), (1.0, 1.0));
        let f = decide(Fit::Auto, 100.0, 80.0, 90.0, len).expect("shrunk");
        assert_eq!(f.condense, 1.0);
        assert!(f.shrink <= 0.9 && f.shrink > 0.88);
        assert!(decide(Fit::Auto, 100.0, 50.0, 70.0, len).is_err());
        assert!(
            !decide(Fit::None, 300.0, 50.0, 50.0, len)
                .unwrap()
                .keep_place
        );
    }
}
