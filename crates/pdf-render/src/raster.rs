//! Raw page rasters for verification: the same page rendered before and after an edit,
//! compared pixel by pixel (see [`crate::diff`]).
//!
//! Verification needs determinism more than beauty: two renders of identical content must
//! give identical bytes, and an unchanged glyph must land on the same pixels whatever
//! happens to its neighbours. Paths and images are rendered without anti-aliasing.
//!
//! Text is rendered in PDFium's LCD mode. In every other text mode (aliased included)
//! PDFium runs `AdjustGlyphSpace` over each text object: a glyph's rounded x depends on the
//! rounded x of the *next* glyph in the same `TJ`, walking backwards through the run, so
//! replacing a word moved untouched glyphs before it by one pixel (the "sub-pixel"
//! collateral changes on pdfTeX and Distiller files). In LCD mode each glyph is placed
//! from its own origin only (floor plus a third-of-a-pixel phase).

use pdfium_render::prelude::*;

use crate::document::Document;
use crate::png_budget::{encode_png_within, RgbImage};
use crate::{Error, Result};

/// Default verification resolution: about 2 pixels per point (144 dpi).
pub const VERIFY_PX_PER_PT: f32 = 2.0;
/// Largest raster we allocate for one page (RGB bytes = 3 × this); huge pages are
/// rendered at a lower resolution instead.
pub const MAX_RASTER_PIXELS: u64 = 24_000_000;

/// A rendered page: opaque RGB, rows top to bottom, origin at the displayed top-left.
#[derive(Debug, Clone, PartialEq)]
pub struct Raster {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Pixels per PDF point actually used (lower than asked for very large pages).
    pub px_per_pt: f32,
    /// `width * height * 3` bytes.
    pub pixels: Vec<u8>,
}

impl Document<'_> {
    /// Renders page `index` (0-based) at `px_per_pt` (capped so the raster stays below
    /// [`MAX_RASTER_PIXELS`]), text in LCD mode, paths and images without anti-aliasing,
    /// annotations and form data included.
    pub fn rasterize(&self, index: u32, px_per_pt: f32) -> Result<Raster> {
        let page = self.page(index)?;
        let (w_pt, h_pt) = (page.width().value.max(1.0), page.height().value.max(1.0));
        let mut ppp = if px_per_pt.is_finite() && px_per_pt > 0.0 {
            px_per_pt
        } else {
            VERIFY_PX_PER_PT
        };
        let area = f64::from(w_pt) * f64::from(h_pt) * f64::from(ppp) * f64::from(ppp);
        if area > MAX_RASTER_PIXELS as f64 {
            ppp *= (MAX_RASTER_PIXELS as f64 / area).sqrt() as f32;
        }
        let width = (w_pt * ppp).round().max(1.0) as i32;
        let height = (h_pt * ppp).round().max(1.0) as i32;
        let config = PdfRenderConfig::new()
            .set_target_width(width)
            .set_maximum_height(height)
            .set_text_smoothing(true)
            .use_lcd_text_rendering(true)
            .set_path_smoothing(false)
            .set_image_smoothing(false)
            .clear_before_rendering(true)
            .set_clear_color(PdfColor::WHITE)
            .render_form_data(true)
            .render_annotations(true);
        let mut bitmap = PdfBitmap::empty(width, height, PdfBitmapFormat::BGRA)
            .map_err(|e| Error::pdfium("allocating a bitmap", e))?;
        page.render_into_bitmap_with_config(&mut bitmap, &config)
            .map_err(|e| Error::pdfium("rendering a page", e))?;
        let pixels = crate::render::rgb_pixels(&bitmap);
        Ok(Raster {
            width: u32::try_from(width).unwrap_or(1),
            height: u32::try_from(height).unwrap_or(1),
            px_per_pt: ppp,
            pixels,
        })
    }
}

/// Opens `bytes` (with an optional password) and rasterises page `index` (0-based).
pub fn rasterize_page(
    bytes: &[u8],
    password: Option<&str>,
    index: u32,
    px_per_pt: f32,
) -> Result<Raster> {
    Document::open(bytes, password)?.rasterize(index, px_per_pt)
}

/// Crops `bbox` (top-left page points) out of `raster` and encodes it as a PNG of at most
/// `max_bytes` bytes, shrinking (then reducing colours) as the preview budget code does.
pub fn crop_png(raster: &Raster, bbox: [f64; 4], max_bytes: usize) -> Result<Vec<u8>> {
    let s = f64::from(raster.px_per_pt);
    let clamp = |v: f64, limit: u32| (v * s).round().clamp(0.0, f64::from(limit)) as u32;
    let x0 = clamp(bbox[0].min(bbox[2]), raster.width);
    let x1 = clamp(bbox[0].max(bbox[2]), raster.width);
    let y0 = clamp(bbox[1].min(bbox[3]), raster.height);
    let y1 = clamp(bbox[1].max(bbox[3]), raster.height);
    if x1 <= x0 || y1 <= y0 {
        return Err(Error::InvalidRequest("crop box is empty".into()));
    }
    let (cw, ch) = (x1 - x0, y1 - y0);
    let stride = raster.width as usize * 3;
    let mut full = Vec::with_capacity(cw as usize * ch as usize * 3);
    for y in y0..y1 {
        let start = y as usize * stride + x0 as usize * 3;
        full.extend_from_slice(&raster.pixels[start..start + cw as usize * 3]);
    }
    let full = RgbImage {
        width: cw,
        height: ch,
        pixels: full,
    };
    encode_png_within(|scale| Ok(downscale(&full, scale)), cw, max_bytes)
}

/// Nearest-neighbour downscale (previews only; verification never scales).
fn downscale(img: &RgbImage, scale: f32) -> RgbImage {
    if scale >= 1.0 {
        return img.clone();
    }
    let w = ((img.width as f32 * scale).round() as u32).max(1);
    let h = ((img.height as f32 * scale).round() as u32).max(1);
    let mut pixels = Vec::with_capacity(w as usize * h as usize * 3);
    for y in 0..h {
        let sy = (u64::from(y) * u64::from(img.height) / u64::from(h)) as usize;
        for x in 0..w {
            let sx = (u64::from(x) * u64::from(img.width) / u64::from(w)) as usize;
            let i = (sy * img.width as usize + sx) * 3;
            pixels.extend_from_slice(&img.pixels[i..i + 3]);
        }
    }
    RgbImage {
        width: w,
        height: h,
        pixels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crop_png_stays_within_budget() {
        let raster = Raster {
            width: 200,
            height: 100,
            px_per_pt: 2.0,
            pixels: (0..200 * 100 * 3).map(|i| (i * 7 % 251) as u8).collect(),
        };
        let png = crop_png(&raster, [10.0, 10.0, 90.0, 40.0], 4_000).expect("fits");
        assert!(png.len() <= 4_000);
        assert!(crop_png(&raster, [10.0, 10.0, 10.0, 40.0], 4_000).is_err());
    }
}
