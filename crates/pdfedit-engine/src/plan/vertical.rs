//! Vertical writing (Identity-V and other vertical CMaps, §9.7.4.3): the pen moves down
//! by each glyph's vertical advance w1 (W2/DW2), `Tz` does not apply, and a positive
//! `TJ` number moves it further down (§9.4.4; PDFium draws it so), the opposite of a
//! line, where a positive number moves the pen back.

use pdf_fonts::Font;

use crate::plan::fit::Spacing;

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
