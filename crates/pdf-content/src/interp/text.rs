//! Text showing (§9.4.3, §9.4.4): splitting strings into codes, positioning each glyph
//! and moving the pen.

use std::ops::Range;

use super::marked;
use super::matrix::{multiply, transform_rect, translate, Matrix};
use super::run::{Ctx, Interpreter};
use super::state::ActiveFont;
use super::{Glyph, Kern, Warning};
use crate::ops::{Operand, Value};

/// Ordinary fonts measure in thousandths of text space (§9.2.4).
const THOUSANDTH: Matrix = [0.001, 0.0, 0.0, 0.001, 0.0, 0.0];

/// Glyph box used when a font reports no ascent/descent: the usual 0.8/−0.2 em split.
const FALLBACK_ASCENT: f64 = 0.8;
const FALLBACK_DESCENT: f64 = -0.2;

impl Interpreter<'_, '_> {
    /// Shows the string or `TJ` array of a text-showing op.
    pub(super) fn show(&mut self, ctx: &Ctx<'_, '_>) {
        let Some(operand) = ctx.op.shown_operand() else {
            return;
        };
        let Some(font) = self.gstate.text.font.clone() else {
            // With a `Tf` whose font was unavailable the warning is already recorded.
            if self.gstate.text.font_name.is_none() {
                self.out.warnings.push(Warning::NoFont {
                    stream: ctx.stream,
                    op_index: ctx.op_index,
                });
            }
            return;
        };
        match &operand.value {
            Value::String(s) => self.show_codes(ctx, &font, &s.bytes, 0, operand),
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    match &item.value {
                        Value::String(s) => self.show_codes(ctx, &font, &s.bytes, index, item),
                        _ => {
                            if let Some(value) = item.as_f64() {
                                self.adjust(ctx, &font, index, item.span.clone(), value);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// `[Tfs·Th 0 0 Tfs 0 Trise] × Tm × CTM`.
    fn rendering_matrix(&self) -> Matrix {
        let t = &self.gstate.text;
        let params = [
            t.font_size * t.horizontal_scale,
            0.0,
            0.0,
            t.font_size,
            0.0,
            t.rise,
        ];
        multiply(&params, &multiply(&self.text.tm, &self.gstate.ctm))
    }

    /// A number in a `TJ` array moves the pen by value/1000 em (§9.4.4): horizontally a
    /// positive number moves it back (left); in vertical writing `ty = (w1 − Tj/1000) ×
    /// Tfs` makes a positive number move it further down the column, as PDFium draws it
    /// (measured by the engine's `redact_vertical` test).
    fn adjust(
        &mut self,
        ctx: &Ctx<'_, '_>,
        font: &ActiveFont,
        element_index: usize,
        span: Range<usize>,
        value: f64,
    ) {
        let t = &self.gstate.text;
        let trm = self.rendering_matrix();
        let (displacement, shift) = if font.font.is_vertical() {
            let dy = -value / 1000.0 * t.font_size;
            (dy, translate(0.0, dy))
        } else {
            let dx = -value / 1000.0 * t.font_size * t.horizontal_scale;
            (dx, translate(dx, 0.0))
        };
        self.text.tm = multiply(&shift, &self.text.tm);
        self.out.kerns.push(Kern {
            stream: ctx.stream,
            op_index: ctx.op_index,
            element_index,
            span,
            value,
            displacement,
            trm,
        });
    }

    /// Shows the codes of one string, one glyph each.
    fn show_codes(
        &mut self,
        ctx: &Ctx<'_, '_>,
        font: &ActiveFont,
        bytes: &[u8],
        string_index: usize,
        operand: &Operand,
    ) {
        let glyph_font = &font.font;
        let vertical = glyph_font.is_vertical();
        let font_matrix = if glyph_font.is_type3() {
            glyph_font.font_matrix()
        } else {
            THOUSANDTH
        };
        let (descent, ascent) = {
            let a = glyph_font.ascent() * font_matrix[3];
            let d = glyph_font.descent() * font_matrix[3];
            if (a - d).abs() > f64::EPSILON && a.is_finite() && d.is_finite() {
                (a.min(d), a.max(d))
            } else {
                (FALLBACK_DESCENT, FALLBACK_ASCENT)
            }
        };
        let mut pos = 0;
        while pos < bytes.len() {
            let (code, used) = glyph_font.next_code(&bytes[pos..]);
            let used = used.clamp(1, bytes.len() - pos);
            let t = &self.gstate.text;
            let (size, scale) = (t.font_size, t.horizontal_scale);
            // Word spacing applies to the single-byte code 32 only, never to a
            // multi-byte code that happens to be 32 (§9.3.3).
            let spacing = t.char_spacing
                + if used == 1 && code == 32 {
                    t.word_spacing
                } else {
                    0.0
                };
            let trm = self.rendering_matrix();
            let w0 = glyph_font.width(code) * font_matrix[0];
            let (advance, glyph_box, shift) = if vertical {
                // w1 is negative (downwards). Spacing lengthens the step down, as in
                // PDFium; the literal §9.4.4 formula would shorten it.
                let w1 = glyph_font.vertical_advance(code) / 1000.0;
                let dy = w1 * size - spacing;
                let glyph_box = [-w0 / 2.0, w1.min(0.0), w0 / 2.0, w1.max(0.0)];
                (dy, glyph_box, translate(0.0, dy))
            } else {
                let dx = (w0 * size + spacing) * scale;
                (dx, [0.0, descent, w0, ascent], translate(dx, 0.0))
            };
            let (mcid, actual_text) = marked::current(&mut self.marked);
            self.out.glyphs.push(Glyph {
                stream: ctx.stream,
                op_index: ctx.op_index,
                op_span: ctx.op.span.clone(),
                string_index,
                code_span: pos..pos + used,
                operand_span: operand.span.clone(),
                code,
                unicode: glyph_font.unicode(code),
                font: font.key.clone(),
                font_size: size,
                trm,
                advance,
                bbox: transform_rect(&trm, glyph_box),
                render_mode: self.gstate.text.render_mode,
                vertical,
                fill_rgb: self.gstate.fill_rgb,
                mcid,
                actual_text,
            });
            self.text.tm = multiply(&shift, &self.text.tm);
            pos += used;
        }
    }
}
