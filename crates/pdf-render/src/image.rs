//! An image's samples as PDFium decodes them (before any scaling, mask or transform):
//! the colour values PDFium paints for it.

use pdfium_render::prelude::*;

use crate::document::Document;
use crate::{Error, Result};

/// Decoded pixels of one image, rows top to bottom.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// 3 (RGB) or 1 (gray).
    pub channels: u32,
    /// `width * height * channels` bytes.
    pub samples: Vec<u8>,
}

impl Document<'_> {
    /// PDFium's decoding, as RGB, of the first image object drawn directly on page
    /// `index` (0-based), or `None` when the page draws none. An 8-bit bitmap is refused
    /// (`Unsupported`): its bytes may be palette indices rather than colours.
    pub fn first_image_samples(&self, index: u32) -> Result<Option<DecodedImage>> {
        let page = self.page(index)?;
        let Some(object) = page
            .objects()
            .iter()
            .find(|o| o.object_type() == PdfPageObjectType::Image)
        else {
            return Ok(None);
        };
        let Some(image) = object.as_image_object() else {
            return Ok(None);
        };
        let bitmap = image
            .get_raw_bitmap()
            .map_err(|e| Error::pdfium("decoding an image", e))?;
        let (width, height) = (bitmap.width(), bitmap.height());
        let format = bitmap
            .format()
            .map_err(|e| Error::pdfium("reading a bitmap's format", e))?;
        let bytes = bitmap.as_raw_bytes();
        let (w, h) = (
            usize::try_from(width).unwrap_or(0),
            usize::try_from(height).unwrap_or(0),
        );
        if w == 0 || h == 0 || bytes.len() % h != 0 {
            return Err(Error::Unsupported("PDFium decoded an empty image".into()));
        }
        let stride = bytes.len() / h;
        let bpp = match format {
            PdfBitmapFormat::BGR => 3,
            PdfBitmapFormat::BGRx | PdfBitmapFormat::BGRA => 4,
            PdfBitmapFormat::Gray => {
                return Err(Error::Unsupported(
                    "PDFium decoded the image to palette indices".into(),
                ))
            }
        };
        if stride < w * bpp {
            return Err(Error::Unsupported("PDFium's bitmap rows are short".into()));
        }
        let mut samples = Vec::with_capacity(w * h * 3);
        for row in bytes.chunks_exact(stride) {
            for px in row[..w * bpp].chunks_exact(bpp) {
                if matches!(format, PdfBitmapFormat::BGRA) && px[3] != 255 {
                    return Err(Error::Unsupported(
                        "PDFium decoded the image with transparency".into(),
                    ));
                }
                samples.extend_from_slice(&[px[2], px[1], px[0]]);
            }
        }
        Ok(Some(DecodedImage {
            width: u32::try_from(width).unwrap_or(0),
            height: u32::try_from(height).unwrap_or(0),
            channels: 3,
            samples,
        }))
    }
}
