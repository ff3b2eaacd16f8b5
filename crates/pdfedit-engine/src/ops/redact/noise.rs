//! A redaction's second noise round: Type 3 bitmap glyphs that PDFium snaps a row higher or
//! lower once glyphs before them are gone (the first round, glyphs an `f32` rounding away,
//! is shared with replace and delete: [`crate::verify::settle`]).

use pdf_render::raster::Raster;

/// Boxes (top-left points) of Type 3 glyphs that stayed where they were but that PDFium
/// rasterises a pixel taller or shorter after the removal.
///
/// PDFium renders a Type 3 glyph to a bitmap once per font and size, and snaps the
/// bitmap's top and bottom rows to the nearest "blue" line of the glyphs of that font it
/// rendered before (`CPDF_Type3GlyphMap::AdjustBlue`). Which lines exist depends on the
/// order the glyphs first appear on the page, so removing glyphs that came first can make
/// an untouched glyph further on snap a row higher or lower, and its bitmap is then drawn
/// at a slightly different scale (a crossbar a row lower, a dot a row higher). Such a
/// glyph is recognised by its ink: the same columns before and after, the top and bottom
/// rows each at most one pixel apart, and not both moved the same way (that would be the
/// glyph moved, which still counts). The glyph itself is untouched in the content and
/// stays at its origin; only the rasteriser's choice differs.
pub(crate) fn snapped_bitmap_glyphs(
    boxes: &[[f64; 4]],
    before: &Raster,
    after: &Raster,
) -> Vec<[f64; 4]> {
    let ppp = f64::from(before.px_per_pt);
    let mut out = Vec::new();
    for b in boxes {
        let clamp_x = |v: f64| (v.max(0.0) as u32).min(before.width);
        let clamp_y = |v: f64| (v.max(0.0) as u32).min(before.height);
        let region = [
            clamp_x((b[0] * ppp).floor() - 1.0),
            clamp_y((b[1] * ppp).floor() - 2.0),
            clamp_x((b[2] * ppp).ceil() + 1.0),
            clamp_y((b[3] * ppp).ceil() + 2.0),
        ];
        let (Some(ib), Some(ia)) = (ink_box(before, region), ink_box(after, region)) else {
            continue;
        };
        if region_equal(before, after, region) {
            continue;
        }
        let (dt, db) = (
            i64::from(ia[1]) - i64::from(ib[1]),
            i64::from(ia[3]) - i64::from(ib[3]),
        );
        let stretched = ib[0] == ia[0]
            && ib[2] == ia[2]
            && dt.abs() <= 1
            && db.abs() <= 1
            && (dt != db || dt == 0);
        if stretched {
            let to_pt = |v: u32| f64::from(v) / ppp;
            out.push([
                to_pt(region[0]),
                to_pt(region[1]),
                to_pt(region[2]),
                to_pt(region[3]),
            ]);
        }
    }
    out
}

/// Whether `a` and `b` hold the same pixels inside `region`.
fn region_equal(a: &Raster, b: &Raster, region: [u32; 4]) -> bool {
    (region[1]..region[3]).all(|y| {
        let row = |r: &Raster| {
            let i = 3 * (y as usize * r.width as usize + region[0] as usize);
            let j = 3 * (y as usize * r.width as usize + region[2] as usize);
            r.pixels[i..j].to_vec()
        };
        row(a) == row(b)
    })
}

/// The box (pixels, `[x0, y0, x1, y1]` inclusive) of the dark pixels of `r` inside
/// `region` (`[x0, y0, x1, y1)`), or `None` when there are none.
fn ink_box(r: &Raster, region: [u32; 4]) -> Option<[u32; 4]> {
    let mut bx: Option<[u32; 4]> = None;
    for y in region[1]..region[3] {
        for x in region[0]..region[2] {
            let i = 3 * (y as usize * r.width as usize + x as usize);
            if r.pixels[i..i + 3].iter().any(|&c| c < 128) {
                bx = Some(match bx {
                    None => [x, y, x, y],
                    Some(b) => [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)],
                });
            }
        }
    }
    bx
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A white 20×20 raster at 1 px/pt with black rows `rows` in columns 5..10.
    fn glyph(rows: std::ops::Range<u32>, cols: std::ops::Range<u32>) -> Raster {
        let mut pixels = vec![255u8; 20 * 20 * 3];
        for y in rows {
            for x in cols.clone() {
                let i = 3 * (y as usize * 20 + x as usize);
                pixels[i..i + 3].fill(0);
            }
        }
        Raster {
            width: 20,
            height: 20,
            px_per_pt: 1.0,
            pixels,
        }
    }

    const BOX: [[f64; 4]; 1] = [[5.0, 5.0, 10.0, 12.0]];

    #[test]
    fn a_glyph_one_row_taller_is_a_snap() {
        let (before, after) = (glyph(5..12, 5..10), glyph(4..12, 5..10));
        assert_eq!(snapped_bitmap_glyphs(&BOX, &before, &after).len(), 1);
        let (before, after) = (glyph(5..12, 5..10), glyph(5..11, 5..10));
        assert_eq!(snapped_bitmap_glyphs(&BOX, &before, &after).len(), 1);
    }

    #[test]
    fn a_moved_widened_or_much_taller_glyph_is_not() {
        let before = glyph(5..12, 5..10);
        for after in [
            glyph(6..13, 5..10), // moved down a row
            glyph(5..12, 5..11), // a column more
            glyph(3..12, 5..10), // two rows taller
            glyph(5..12, 5..10), // unchanged: nothing to exempt
            glyph(5..12, 4..10), // a column more on the left
            glyph(0..0, 0..0),   // gone
        ] {
            assert!(snapped_bitmap_glyphs(&BOX, &before, &after).is_empty());
        }
    }
}
