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
use crate::png_budget::{encode_png_within, encode_rgb_fast, RgbImage};
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
            // The buffer below starts white: clearing it again would be a second pass.
            .clear_before_rendering(false)
            .render_form_data(true)
            .render_annotations(true);
        // One fill only: PDFium's own bitmap is zeroed when allocated and then filled
        // white by the clear (~8 % of an edit's engine CPU); a buffer allocated white is
        // written once, and its pixels are read in place (no copy out of PDFium).
        // BGRA white is every byte 0xFF, the exact bytes `FPDFBitmap_FillRect` writes.
        let stride = usize::try_from(width).unwrap_or(1) * 4;
        let mut buffer = vec![0xFFu8; stride * usize::try_from(height).unwrap_or(1)];
        {
            let mut bitmap =
                PdfBitmap::from_bytes(width, height, PdfBitmapFormat::BGRA, &mut buffer)
                    .map_err(|e| Error::pdfium("allocating a bitmap", e))?;
            page.render_into_bitmap_with_config(&mut bitmap, &config)
                .map_err(|e| Error::pdfium("rendering a page", e))?;
        }
        // The buffer is tightly packed (stride = 4 x width): converted where it lies.
        let pixels = crate::render::bgra_to_rgb_in_place(buffer);
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
/// `max_bytes` bytes: at the encoder's fast setting when that fits, else shrinking (then
/// reducing colours) as the preview budget code does.
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
    let fast = encode_rgb_fast(&full)?;
    if fast.len() <= max_bytes {
        return Ok(fast);
    }
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

    /// Width, height and RGB pixels of a PNG.
    fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
            .read_info()
            .expect("png");
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).expect("frame");
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    #[test]
    fn crops_are_encoded_fast_within_budget_and_never_shrunk_for_it() {
        // Text-like: white with short dark strokes at irregular places.
        let (w, h) = (300u32, 120u32);
        let mut pixels = vec![255u8; (w * h * 3) as usize];
        for (i, p) in pixels.chunks_exact_mut(3).enumerate() {
            if (i * 2_654_435_761) % 97 < 9 {
                p.copy_from_slice(&[20, 20, (i % 60) as u8]);
            }
        }
        let raster = Raster {
            width: w,
            height: h,
            px_per_pt: 2.0,
            pixels,
        };
        let bbox = [5.0, 5.0, 145.0, 55.0];
        // The crop's own pixels: 280 x 100 from (10, 10).
        let expect: Vec<u8> = (10..110)
            .flat_map(|y| {
                let start = (y * w as usize + 10) * 3;
                raster.pixels[start..start + 280 * 3].to_vec()
            })
            .collect();
        let img = RgbImage {
            width: 280,
            height: 100,
            pixels: expect.clone(),
        };
        let fast = encode_rgb_fast(&img).expect("fast");
        let best = crate::png_budget::encode_rgb(&img).expect("best");
        assert!(fast.len() > best.len(), "{} {}", fast.len(), best.len());
        // Within budget: the fast encoding, every pixel as it was.
        let png = crop_png(&raster, bbox, 200_000).expect("fits");
        assert!(png == fast, "not the fast encoding ({} bytes)", png.len());
        assert_eq!(decode(&png), (280, 100, expect.clone()));
        // A budget only the best setting meets: still full size, not shrunk.
        let budget = (fast.len() + best.len()) / 2;
        let png = crop_png(&raster, bbox, budget).expect("fits");
        assert!(png.len() <= budget);
        assert_eq!(decode(&png), (280, 100, expect));
    }
}

#[cfg(test)]
mod fill_once_tests {
    use std::path::PathBuf;

    use pdfium_render::prelude::*;

    use super::*;

    /// The rendering `rasterize` did before it rendered over a buffer allocated white:
    /// PDFium's own (zeroed) bitmap, cleared white by PDFium, pixels copied out.
    fn rasterize_cleared_by_pdfium(doc: &Document, index: u32, ppp: f32) -> Raster {
        let page = doc.page(index).expect("page");
        let (w_pt, h_pt) = (page.width().value.max(1.0), page.height().value.max(1.0));
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
        let mut bitmap = PdfBitmap::empty(width, height, PdfBitmapFormat::BGRA).expect("bitmap");
        page.render_into_bitmap_with_config(&mut bitmap, &config)
            .expect("renders");
        Raster {
            width: width as u32,
            height: height as u32,
            px_per_pt: ppp,
            pixels: crate::render::rgb_pixels(&bitmap),
        }
    }

    /// Rendering over a buffer allocated white gives, pixel for pixel, what PDFium's
    /// clear gave: on text, forms (widgets drawn over the page), annotations (some
    /// translucent), rotated pages and a scan, every page of each.
    #[test]
    fn one_fill_renders_the_same_pixels_as_pdfiums_clear() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let lib = std::env::var_os("PDFIUM_LIB_PATH")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("vendor/pdfium/lib/libpdfium.so"));
        if !lib.exists() {
            eprintln!("SKIP: libpdfium.so not found");
            return;
        }
        crate::init(Some(&lib)).expect("PDFium binds");
        let dir = root.join("../shared/corpus");
        let names = [
            "doc-invoice-itextsharp-demo.pdf",
            "annot-many-types.pdf",
            "annot-markup-openoffice.pdf",
            "form-fancy-fields-acrobat-dc.pdf",
            "form-libreoffice-writer-needappearances.pdf",
            "rot-0-90-180-270-pages.pdf",
            "scan-rotated-skewed.pdf",
        ];
        let (mut pages, mut short_edges) = (0, 0);
        for name in names {
            let Ok(bytes) = std::fs::read(dir.join(name)) else {
                continue;
            };
            let doc = Document::open(&bytes, None).expect("opens");
            for index in 0..doc.page_count().min(4) {
                for ppp in [VERIFY_PX_PER_PT, 0.75] {
                    let new = doc.rasterize(index, ppp).expect("renders");
                    let old = rasterize_cleared_by_pdfium(&doc, index, ppp);
                    assert_eq!((new.width, new.height), (old.width, old.height));
                    // Where PDFium's page size (from the width and the page's aspect)
                    // came out a pixel short of the bitmap, its clear left the last row
                    // or column unwritten: black before, white now. All else is the same.
                    let (w, h) = (new.width as usize, new.height as usize);
                    let px = |r: &Raster, x: usize, y: usize| {
                        let i = (y * w + x) * 3;
                        [r.pixels[i], r.pixels[i + 1], r.pixels[i + 2]]
                    };
                    let unwritten = |cells: Vec<(usize, usize)>| {
                        cells
                            .into_iter()
                            .all(|(x, y)| px(&old, x, y) == [0; 3] && px(&new, x, y) == [255; 3])
                    };
                    let h_kept = h - usize::from(unwritten((0..w).map(|x| (x, h - 1)).collect()));
                    let w_kept = w - usize::from(unwritten((0..h).map(|y| (w - 1, y)).collect()));
                    short_edges += (h - h_kept) + (w - w_kept);
                    for y in 0..h_kept {
                        let (a, b) = (y * w * 3, (y * w + w_kept) * 3);
                        assert!(
                            new.pixels[a..b] == old.pixels[a..b],
                            "{name} page {index} at {ppp} px/pt: row {y} differs"
                        );
                    }
                    pages += 1;
                }
            }
        }
        if pages == 0 {
            eprintln!("SKIP: corpus not found");
        }
        eprintln!(
            "{pages} renders compared, {short_edges} last rows or columns PDFium left unwritten"
        );
    }
}
