//! Rendering a page, or a region of it, with highlight boxes, to a PNG under a budget.

use pdfium_render::prelude::*;

use crate::document::Document;
use crate::geometry::Rect;
use crate::png_budget::{encode_png_within, RgbImage};
use crate::{Error, Result};

/// Default preview width in pixels.
pub const DEFAULT_WIDTH: u32 = 1000;
/// Largest preview width in pixels.
pub const MAX_WIDTH: u32 = 2000;
/// Default byte budget of a preview (the API's 200 KB promise).
pub const DEFAULT_MAX_BYTES: usize = 200_000;
/// A very tall region at full width would allocate a huge bitmap: cap the height.
const MAX_HEIGHT: u32 = 4 * MAX_WIDTH;

/// What to render.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderOptions {
    /// Region of the page in API coordinates; `None` renders the whole page.
    pub region: Option<Rect>,
    /// Boxes to highlight, in API coordinates of the page.
    pub highlights: Vec<Rect>,
    /// Output width in pixels (clamped to 1..=`MAX_WIDTH`).
    pub width: u32,
    /// The PNG never exceeds this many bytes.
    pub max_bytes: usize,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            region: None,
            highlights: Vec::new(),
            width: DEFAULT_WIDTH,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl Document<'_> {
    /// Renders page `index` (0-based) to a PNG of at most `options.max_bytes` bytes.
    pub fn render_png(&self, index: u32, options: &RenderOptions) -> Result<Vec<u8>> {
        let page = self.page(index)?;
        let page_w = page.width().value;
        let page_h = page.height().value;
        let region = clamp_region(options.region, page_w, page_h)?;
        let width = options.width.clamp(1, MAX_WIDTH);
        // Pixels per point at scale 1.0, reduced if the region is very tall.
        let mut base = width as f32 / region.width();
        if region.height() * base > MAX_HEIGHT as f32 {
            base = MAX_HEIGHT as f32 / region.height();
        }
        let render = |scale: f32| -> Result<RgbImage> {
            let ppp = base * scale;
            let mut img = render_region(&page, region, page_w, ppp)?;
            for h in &options.highlights {
                draw_highlight(&mut img, h, region, ppp);
            }
            Ok(img)
        };
        let requested = (region.width() * base).round().max(1.0) as u32;
        encode_png_within(render, requested, options.max_bytes)
    }
}

/// The region to render, clipped to the page; refuses empty or non-finite regions.
fn clamp_region(region: Option<Rect>, page_w: f32, page_h: f32) -> Result<Rect> {
    let Some(r) = region else {
        return Ok(Rect::from_corners(0.0, 0.0, page_w, page_h));
    };
    if ![r.x0, r.y0, r.x1, r.y1].iter().all(|v| v.is_finite()) {
        return Err(Error::InvalidRequest(
            "region must be four finite numbers".into(),
        ));
    }
    let c = Rect::from_corners(
        r.x0.clamp(0.0, page_w),
        r.y0.clamp(0.0, page_h),
        r.x1.clamp(0.0, page_w),
        r.y1.clamp(0.0, page_h),
    );
    if c.width() < 1.0 || c.height() < 1.0 {
        return Err(Error::InvalidRequest(
            "region must cover at least 1 x 1 pt of the page".into(),
        ));
    }
    Ok(c)
}

/// Renders `region` at `ppp` pixels per point. The whole page is laid out at that scale
/// and shifted so the region's corner lands on the bitmap's origin: PDFium only rasterises
/// what falls inside the bitmap, so a small region at high zoom stays cheap, and form
/// widgets are drawn (which PDFium's matrix/clip rendering path would skip).
fn render_region(page: &PdfPage, region: Rect, page_w: f32, ppp: f32) -> Result<RgbImage> {
    let out_w = (region.width() * ppp).round().max(1.0) as i32;
    let out_h = (region.height() * ppp).round().max(1.0) as i32;
    let full_w = (page_w * ppp).round().max(1.0) as i32;
    let mut bitmap = PdfBitmap::empty(out_w, out_h, PdfBitmapFormat::BGRA)
        .map_err(|e| Error::pdfium("allocating a bitmap", e))?;
    let config = PdfRenderConfig::new()
        .set_target_width(full_w)
        .set_origin(
            -(region.x0 * ppp).round() as i32,
            -(region.y0 * ppp).round() as i32,
        )
        // PDFium clears the shifted page rectangle; its fill is clipped to the bitmap.
        .clear_before_rendering(true)
        .set_clear_color(PdfColor::WHITE)
        .render_form_data(true)
        .render_annotations(true);
    page.render_into_bitmap_with_config(&mut bitmap, &config)
        .map_err(|e| Error::pdfium("rendering a page", e))?;
    let pixels = rgb_pixels(&bitmap);
    Ok(RgbImage {
        width: u32::try_from(out_w).unwrap_or(1),
        height: u32::try_from(out_h).unwrap_or(1),
        pixels,
    })
}

/// The bitmap's pixels as packed RGB (the alpha of a white-cleared page carries nothing).
///
/// The bitmaps here are BGRA (never rendered with reversed byte order): each row's pixels
/// are read from the raw buffer once into a buffer of their final size. Going through
/// `as_rgba_bytes` and a per-pixel `flat_map` made three copies of a page and grew the
/// output a few bytes at a time: 13 % of a batch record's engine CPU (perf).
pub(crate) fn rgb_pixels(bitmap: &PdfBitmap) -> Vec<u8> {
    let raw = bitmap.as_raw_bytes();
    let width = usize::try_from(bitmap.width()).unwrap_or(0);
    let height = usize::try_from(bitmap.height()).unwrap_or(0);
    bgra_rows_to_rgb(&raw, width, height)
}

/// Packed RGB of `height` rows of `width` BGRA pixels, rows `raw.len() / height` bytes apart.
pub(crate) fn bgra_rows_to_rgb(raw: &[u8], width: usize, height: usize) -> Vec<u8> {
    if width == 0 || height == 0 {
        return Vec::new();
    }
    let stride = raw.len() / height;
    let row_bytes = (width * 4).min(stride);
    let mut out = vec![0u8; height * (row_bytes / 4) * 3];
    for (row, dst) in raw
        .chunks_exact(stride)
        .zip(out.chunks_exact_mut((row_bytes / 4) * 3))
    {
        for (p, q) in row[..row_bytes]
            .chunks_exact(4)
            .zip(dst.chunks_exact_mut(3))
        {
            q[0] = p[2];
            q[1] = p[1];
            q[2] = p[0];
        }
    }
    out
}

/// Packed RGB of a tightly packed BGRA buffer (`4 * pixels` bytes, no row padding),
/// converted in place: no second page-sized buffer is allocated or zeroed, and the buffer
/// is shrunk to its RGB length at the end (glibc shrinks a block in place). Four pixels
/// are moved at a time as 32-bit words (a byte swap puts B, G, R in RGB order, and three
/// words hold the four RGB pixels); RGB bytes are written only below the BGRA bytes still
/// to be read (the write position 12k never passes the read position 16k), so the buffer
/// is read before it is overwritten. Same bytes as [`bgra_rows_to_rgb`]; on a 1224x1584
/// page 1.08 ms of CPU instead of 1.76 alone (perf stat), and two verification renders
/// 14.8 ms instead of 16.4 (edit_timing's CPU line, six alternating runs).
pub(crate) fn bgra_to_rgb_in_place(mut buf: Vec<u8>) -> Vec<u8> {
    let pixels = buf.len() / 4;
    let quads = pixels / 4;
    // B, G, R, A bytes as a little-endian word, byte-swapped and shifted: R, G, B, 0.
    let rgb = |b: &[u8; 16], i: usize| -> u32 {
        u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]).swap_bytes() >> 8
    };
    for k in 0..quads {
        let mut src = [0u8; 16];
        src.copy_from_slice(&buf[16 * k..16 * k + 16]);
        let (p0, p1, p2, p3) = (rgb(&src, 0), rgb(&src, 4), rgb(&src, 8), rgb(&src, 12));
        let dst = &mut buf[12 * k..12 * k + 12];
        dst[0..4].copy_from_slice(&(p0 | p1 << 24).to_le_bytes());
        dst[4..8].copy_from_slice(&(p1 >> 8 | p2 << 16).to_le_bytes());
        dst[8..12].copy_from_slice(&(p2 >> 16 | p3 << 8).to_le_bytes());
    }
    for k in 4 * quads..pixels {
        let (b, g, r) = (buf[4 * k], buf[4 * k + 1], buf[4 * k + 2]);
        buf[3 * k..3 * k + 3].copy_from_slice(&[r, g, b]);
    }
    buf.truncate(3 * pixels);
    buf.shrink_to_fit();
    buf
}

/// Semi-transparent yellow fill with a thin orange outline, like a highlighter pen.
fn draw_highlight(img: &mut RgbImage, h: &Rect, region: Rect, ppp: f32) {
    const FILL: [u8; 3] = [255, 230, 0];
    const FILL_ALPHA: u32 = 90; // of 255
    const LINE: [u8; 3] = [255, 128, 0];
    let to_px = |v: f32, origin: f32, limit: u32| -> i64 {
        (((v - origin) * ppp).round() as i64).clamp(-1, i64::from(limit))
    };
    let x0 = to_px(h.x0.min(h.x1), region.x0, img.width);
    let x1 = to_px(h.x0.max(h.x1), region.x0, img.width);
    let y0 = to_px(h.y0.min(h.y1), region.y0, img.height);
    let y1 = to_px(h.y0.max(h.y1), region.y0, img.height);
    if x1 < 0 || y1 < 0 || x0 >= i64::from(img.width) || y0 >= i64::from(img.height) {
        return;
    }
    let stroke = ((ppp * 0.75).round() as i64).clamp(1, 3);
    let (w, hgt) = (i64::from(img.width), i64::from(img.height));
    for y in y0.max(0)..y1.min(hgt) {
        for x in x0.max(0)..x1.min(w) {
            let edge =
                x - x0 < stroke || x1 - 1 - x < stroke || y - y0 < stroke || y1 - 1 - y < stroke;
            let Ok(i) = usize::try_from((y * w + x) * 3) else {
                continue;
            };
            let px = &mut img.pixels[i..i + 3];
            if edge {
                px.copy_from_slice(&LINE);
            } else {
                for (c, f) in px.iter_mut().zip(FILL) {
                    let blended =
                        (u32::from(*c) * (255 - FILL_ALPHA) + u32::from(f) * FILL_ALPHA) / 255;
                    *c = u8::try_from(blended).unwrap_or(255);
                }
            }
        }
    }
}

#[cfg(test)]
mod rgb_tests {
    use super::{bgra_rows_to_rgb, bgra_to_rgb_in_place};

    /// What the conversion replaced: pdfium-render's BGRA to RGBA, then alpha dropped.
    fn through_rgba(raw: &[u8]) -> Vec<u8> {
        raw.chunks_exact(4)
            .flat_map(|p| [p[2], p[1], p[0], p[3]])
            .collect::<Vec<_>>()
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect()
    }

    #[test]
    fn same_pixels_as_through_rgba() {
        let (w, h) = (37, 11);
        let raw: Vec<u8> = (0..w * h * 4).map(|i| (i * 31 % 251) as u8).collect();
        let rgb = bgra_rows_to_rgb(&raw, w, h);
        assert_eq!(rgb.len(), w * h * 3);
        assert_eq!(rgb, through_rgba(&raw));
        // Rows with padding past their pixels: the padding is not a pixel.
        let padded: Vec<u8> = raw
            .chunks_exact(w * 4)
            .flat_map(|r| r.iter().copied().chain([9u8; 8]))
            .collect();
        assert_eq!(bgra_rows_to_rgb(&padded, w, h), rgb);
    }

    #[test]
    fn in_place_conversion_gives_the_same_bytes() {
        // Pixel counts that are and are not a multiple of the four moved at a time, so the
        // last (tail) pixels are checked too; bytes varied so every channel is distinct.
        for (w, h) in [(1, 1), (3, 1), (4, 1), (5, 3), (37, 11), (1224, 7)] {
            let mut seed = (w * 7919 + h) as u64;
            let raw: Vec<u8> = (0..w * h * 4)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (seed >> 56) as u8
                })
                .collect();
            let rgb = bgra_to_rgb_in_place(raw.clone());
            assert_eq!(rgb, through_rgba(&raw), "{w}x{h}");
            assert_eq!(rgb, bgra_rows_to_rgb(&raw, w, h), "{w}x{h}");
        }
        assert!(bgra_to_rgb_in_place(Vec::new()).is_empty());
    }
}
