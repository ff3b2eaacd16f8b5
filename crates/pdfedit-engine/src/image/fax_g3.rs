//! Masking a CCITT Group 3 one-dimensional fax image (/K 0) row by row.
//!
//! In such an image every row is coded on its own (Modified Huffman run lengths, an
//! optional EOL before it, optional fill bits that align rows to bytes): a row's code
//! depends on no other row. So only the rows the mask changed are coded again; every
//! other row keeps its original bits, and a viewer decodes it exactly as before (PDFium's
//! fax decoder has quirks of its own on some rows; a re-encoded image would "fix" those
//! and change the page far from the box).
//!
//! The splice is done only when this module's reading of the original matches the
//! decoded samples row for row; otherwise the caller re-encodes the whole image.

use fax::maps::{black, white};
use fax::{BitReader, Bits};

/// Reads bits from a byte slice, keeping the absolute bit position.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn len(&self) -> usize {
        self.data.len() * 8
    }

    fn bit(&self, at: usize) -> bool {
        self.data[at / 8] & (0x80 >> (at % 8)) != 0
    }

    /// Skips fill bits and EOLs: a run of at least 11 zero bits and the 1 that ends it,
    /// as often as one follows. A shorter run of zeros is the start of a code.
    fn skip_eols(&mut self) -> bool {
        let mut skipped = false;
        loop {
            let mut p = self.pos;
            while p < self.len() && !self.bit(p) {
                p += 1;
            }
            if p >= self.len() || p - self.pos < 11 {
                return skipped;
            }
            self.pos = p + 1;
            skipped = true;
        }
    }
}

impl BitReader for Reader<'_> {
    type Error = ();

    /// Bits past the end read as zeros (a code there then fails to consume).
    fn peek(&self, bits: u8) -> Option<u16> {
        if bits > 16 {
            return None;
        }
        let mut v = 0u16;
        for i in 0..usize::from(bits) {
            let at = self.pos + i;
            v = v << 1 | u16::from(at < self.len() && self.bit(at));
        }
        Some(v)
    }

    fn consume(&mut self, bits: u8) -> Result<(), ()> {
        if self.pos + usize::from(bits) > self.len() {
            return Err(());
        }
        self.pos += usize::from(bits);
        Ok(())
    }

    fn bits_to_byte_boundary(&self) -> u8 {
        ((8 - self.pos % 8) % 8) as u8
    }
}

/// Writes bits into bytes (zero-padded at the end).
#[derive(Default)]
struct Writer {
    data: Vec<u8>,
    len: usize,
}

impl Writer {
    fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(8) {
            self.data.push(0);
        }
        if bit {
            self.data[self.len / 8] |= 0x80 >> (self.len % 8);
        }
        self.len += 1;
    }

    fn code(&mut self, b: Bits) {
        for i in (0..b.len).rev() {
            self.push(b.data >> i & 1 != 0);
        }
    }

    /// Copies bits `[from, to)` of `src`.
    fn copy(&mut self, src: &Reader, from: usize, to: usize) {
        if from.is_multiple_of(8) && self.len.is_multiple_of(8) && to.is_multiple_of(8) {
            self.data.extend_from_slice(&src.data[from / 8..to / 8]);
            self.len += to - from;
            return;
        }
        for at in from..to {
            self.push(src.bit(at));
        }
    }

    fn align(&mut self) {
        self.len = self.data.len() * 8;
    }
}

/// One row of the original data: `[start, end)` is all of its bits (fill and EOL
/// before the row's codes, fill after them when rows are byte-aligned), its codes
/// begin at `codes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unit {
    pub start: usize,
    pub codes: usize,
    pub end: usize,
}

/// The layout of a Group 3 1-D image: one unit per row and where the rest (RTC, padding)
/// begins.
pub(super) struct Layout {
    pub units: Vec<Unit>,
    pub tail: usize,
}

/// Reads the row codes of `data` (`width` columns, `height` rows). With `expect` (decoded
/// 1-bit samples, 1 = white unless `black_is_1`), every row read must equal its row there.
pub(super) fn layout(
    data: &[u8],
    width: u32,
    height: u32,
    byte_align: bool,
    black_is_1: bool,
    expect: Option<&[u8]>,
) -> Result<Layout, String> {
    let stride = (width as usize).div_ceil(8);
    let mut r = Reader { data, pos: 0 };
    let mut units = Vec::with_capacity(height as usize);
    let mut row = vec![0u8; stride];
    for y in 0..height as usize {
        let start = r.pos;
        if byte_align && !start.is_multiple_of(8) {
            return Err(format!("row {y} does not start on a byte"));
        }
        r.skip_eols();
        let codes = r.pos;
        row.fill(0);
        let mut x = 0u32;
        let mut is_white = true;
        while x < width {
            let mut run = 0u32;
            loop {
                let v = if is_white {
                    white::decode(&mut r)
                } else {
                    black::decode(&mut r)
                }
                .ok_or_else(|| format!("row {y}: no run-length code at bit {}", r.pos))?;
                run += u32::from(v);
                if v < 64 {
                    break;
                }
            }
            if x + run > width {
                return Err(format!("row {y} is longer than {width} columns"));
            }
            // Sample bit 1 is white unless /BlackIs1.
            if is_white != black_is_1 {
                for c in x..x + run {
                    row[c as usize / 8] |= 0x80 >> (c % 8);
                }
            }
            x += run;
            is_white = !is_white;
        }
        if byte_align {
            let end = r.pos.div_ceil(8) * 8;
            if (r.pos..end.min(r.len())).any(|at| r.bit(at)) {
                return Err(format!("row {y}: fill bits are not zero"));
            }
            r.pos = end.min(r.len());
        }
        if let Some(e) = expect {
            let want = &e[y * stride..(y + 1) * stride];
            let last = width as usize % 8;
            let tail_mask = if last == 0 {
                0xFF
            } else {
                0xFFu8 << (8 - last)
            };
            let same = want[..stride - 1] == row[..stride - 1]
                && want[stride - 1] & tail_mask == row[stride - 1] & tail_mask;
            if !same {
                return Err(format!("row {y} reads differently from the decoder's"));
            }
        }
        units.push(Unit {
            start,
            codes,
            end: r.pos,
        });
    }
    Ok(Layout { units, tail: r.pos })
}

/// Modified Huffman codes of one row of 1-bit samples.
fn encode_row(w: &mut Writer, row: &[u8], width: u32, black_is_1: bool) {
    let mut x = 0u32;
    let mut is_white = true;
    while x < width {
        let mut n = 0u32;
        while x + n < width {
            let c = x + n;
            let bit = row[c as usize / 8] & (0x80 >> (c % 8)) != 0;
            if (bit != black_is_1) != is_white {
                break;
            }
            n += 1;
        }
        let code = |v: u32| {
            let v = v as u16;
            if is_white {
                white::encode(v)
            } else {
                black::encode(v)
            }
            .expect("every run length below 2561 has a code")
        };
        let mut left = n;
        while left >= 2560 {
            w.code(code(2560));
            left -= 2560;
        }
        if left >= 64 {
            w.code(code(left & !63));
            left &= 63;
        }
        w.code(code(left));
        x += n;
        is_white = !is_white;
    }
}

/// The image `data` with the rows that differ between `before` and `after` (decoded
/// 1-bit samples, `stride` bytes a row) coded again from `after`; every other row keeps
/// its original bits, at the same place within a byte when rows are byte-aligned.
pub(super) fn splice(
    data: &[u8],
    width: u32,
    height: u32,
    byte_align: bool,
    black_is_1: bool,
    before: &[u8],
    after: &[u8],
) -> Result<Vec<u8>, String> {
    let stride = (width as usize).div_ceil(8);
    let lay = layout(data, width, height, byte_align, black_is_1, Some(before))?;
    let src = Reader { data, pos: 0 };
    let mut w = Writer::default();
    for (y, u) in lay.units.iter().enumerate() {
        let rows = y * stride..(y + 1) * stride;
        if before[rows.clone()] == after[rows.clone()] {
            w.copy(&src, u.start, u.end);
            continue;
        }
        // The fill and EOL before the row as they were, then the new codes.
        w.copy(&src, u.start, u.codes);
        encode_row(&mut w, &after[rows], width, black_is_1);
        if byte_align {
            w.align();
        }
    }
    w.copy(&src, lay.tail, src.len());
    Ok(w.data)
}

#[cfg(test)]
mod tests {
    use super::super::decoders::decode_ccitt;
    use super::*;
    use lopdf::dictionary;

    /// A G3 1-D image of `rows` (1-bit samples), each row an EOL then its codes, padded
    /// to a byte when `byte_align`; ends with RTC (six EOLs).
    fn g3(rows: &[u8], width: u32, byte_align: bool) -> Vec<u8> {
        let stride = (width as usize).div_ceil(8);
        let mut w = Writer::default();
        for row in rows.chunks_exact(stride) {
            w.code(fax::maps::EOL);
            encode_row(&mut w, row, width, false);
            if byte_align {
                w.align();
            }
        }
        for _ in 0..6 {
            w.code(fax::maps::EOL);
        }
        w.data
    }

    fn pattern(width: u32, height: u32) -> Vec<u8> {
        let stride = (width as usize).div_ceil(8);
        let mut data = vec![0xFFu8; stride * height as usize];
        for y in 0..height {
            for x in 0..width {
                if (x * 7 + y * 3) % 11 < 3 || (40..90).contains(&x) && y % 4 == 1 {
                    data[y as usize * stride + x as usize / 8] &= !(0x80 >> (x % 8));
                }
            }
        }
        data
    }

    fn check_splice(byte_align: bool) {
        let (width, height) = (101u32, 12u32);
        let stride = (width as usize).div_ceil(8);
        let before = pattern(width, height);
        let data = g3(&before, width, byte_align);
        let mut after = before.clone();
        for y in 4..7 {
            for x in 10..70usize {
                after[y * stride + x / 8] &= !(0x80 >> (x % 8));
            }
        }
        let out = splice(&data, width, height, byte_align, false, &before, &after).unwrap();
        let old = layout(&data, width, height, byte_align, false, Some(&before)).unwrap();
        let new = layout(&out, width, height, byte_align, false, Some(&after)).unwrap();
        let bits = |d: &[u8], u: Unit| -> Vec<bool> {
            (u.start..u.end)
                .map(|at| d[at / 8] & (0x80 >> (at % 8)) != 0)
                .collect()
        };
        for y in 0..height as usize {
            let (o, n) = (old.units[y], new.units[y]);
            if (4..7).contains(&y) {
                assert_ne!(bits(&data, o), bits(&out, n), "row {y} is re-coded");
            } else {
                assert_eq!(bits(&data, o), bits(&out, n), "row {y} kept bit for bit");
                if byte_align {
                    assert_eq!(
                        data[o.start / 8..o.end / 8],
                        out[n.start / 8..n.end / 8],
                        "row {y} kept byte for byte"
                    );
                }
            }
        }
        // An independent decoder reads the masked image.
        let parms = dictionary! {
            "K" => 0, "Columns" => i64::from(width), "EndOfLine" => true,
            "EncodedByteAlign" => byte_align,
        };
        let decoded = decode_ccitt(&out, width, height, Some(&parms)).unwrap();
        assert_eq!(decoded.data, after);
    }

    #[test]
    fn only_changed_rows_are_coded_again_byte_aligned() {
        check_splice(true);
    }

    #[test]
    fn only_changed_rows_are_coded_again_unaligned() {
        check_splice(false);
    }

    #[test]
    fn a_reading_that_differs_from_the_decoder_is_refused() {
        let (width, height) = (40u32, 3u32);
        let before = pattern(width, height);
        let data = g3(&before, width, true);
        let mut wrong = before.clone();
        wrong[0] ^= 0x10;
        assert!(splice(&data, width, height, true, false, &wrong, &before).is_err());
    }
}
