//! Decoding an image's samples, zeroing a set of pixel rectangles and writing the result
//! back as a Flate stream.
//!
//! Flate-family filters (Flate with PNG/TIFF predictors, LZW, ASCII85/Hex, RunLength) are
//! decoded by lopdf; DCT (JPEG) by `jpeg-decoder`. Both come back as the same samples the
//! viewer paints, so the re-encoded image is lossless: every pixel outside the rectangles
//! keeps its exact value. JPX, JBIG2 and CCITT images are refused (the redaction fails
//! closed) because no decoder for them is linked.

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use lopdf::{Document, Object, Stream};

/// Largest decoded image accepted (decompression-bomb guard).
const MAX_IMAGE_BYTES: usize = 256 << 20;

/// Pixels `[x0, x1) × [y0, y1)`, row 0 at the top of the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PixelRect {
    pub x0: u32,
    pub y0: u32,
    pub x1: u32,
    pub y1: u32,
}

impl PixelRect {
    /// The same area in an image of another size (a soft mask's own resolution),
    /// rounded outwards.
    pub fn scaled(self, w: u32, h: u32, to_w: u32, to_h: u32) -> PixelRect {
        let sx = f64::from(to_w) / f64::from(w.max(1));
        let sy = f64::from(to_h) / f64::from(h.max(1));
        PixelRect {
            x0: (f64::from(self.x0) * sx).floor() as u32,
            y0: (f64::from(self.y0) * sy).floor() as u32,
            x1: ((f64::from(self.x1) * sx).ceil() as u32).min(to_w),
            y1: ((f64::from(self.y1) * sy).ceil() as u32).min(to_h),
        }
    }
}

/// Decoded samples and their layout.
struct Samples {
    data: Vec<u8>,
    width: u32,
    height: u32,
    comps: u32,
    bpc: u32,
}

/// A copy of image `s` with the pixels in `rects` set to zero, Flate-encoded.
pub(crate) fn mask_stream(
    doc: &Document,
    s: &Stream,
    rects: &[PixelRect],
) -> Result<Stream, String> {
    let mut samples = decode(doc, s)?;
    let stride =
        (samples.width as usize * samples.comps as usize * samples.bpc as usize).div_ceil(8);
    let need = stride * samples.height as usize;
    if samples.data.len() < need {
        return Err(format!(
            "image data is short ({} of {need} bytes)",
            samples.data.len()
        ));
    }
    samples.data.truncate(need);
    for r in rects {
        zero_rect(&mut samples, stride, *r);
    }
    let mut enc = ZlibEncoder::new(Vec::new(), Compression::default());
    enc.write_all(&samples.data).map_err(|e| e.to_string())?;
    let compressed = enc.finish().map_err(|e| e.to_string())?;
    let mut dict = s.dict.clone();
    dict.remove(b"DecodeParms");
    dict.remove(b"Length");
    dict.set("Filter", Object::Name(b"FlateDecode".to_vec()));
    dict.set("BitsPerComponent", i64::from(samples.bpc));
    Ok(Stream::new(dict, compressed))
}

/// Sets every sample of the pixels in `r` to 0 (any bit depth, any component count).
fn zero_rect(s: &mut Samples, stride: usize, r: PixelRect) {
    let bits_per_pixel = (s.comps * s.bpc) as usize;
    for y in r.y0..r.y1.min(s.height) {
        let row = &mut s.data[y as usize * stride..(y as usize + 1) * stride];
        let start = r.x0.min(s.width) as usize * bits_per_pixel;
        let end = r.x1.min(s.width) as usize * bits_per_pixel;
        for bit in start..end {
            row[bit / 8] &= !(0x80 >> (bit % 8));
        }
    }
}

fn filters(s: &Stream) -> Vec<Vec<u8>> {
    match s.dict.get(b"Filter") {
        Ok(Object::Name(n)) => vec![n.clone()],
        Ok(Object::Array(a)) => a
            .iter()
            .filter_map(|o| o.as_name().ok().map(<[u8]>::to_vec))
            .collect(),
        _ => Vec::new(),
    }
}

fn decode(doc: &Document, s: &Stream) -> Result<Samples, String> {
    let get = |k: &[u8]| s.dict.get(k).and_then(Object::as_i64).ok();
    let (Some(w), Some(h)) = (get(b"Width"), get(b"Height")) else {
        return Err("no /Width or /Height".into());
    };
    let (width, height) = (
        u32::try_from(w).map_err(|_| "bad /Width")?,
        u32::try_from(h).map_err(|_| "bad /Height")?,
    );
    let image_mask = s
        .dict
        .get(b"ImageMask")
        .and_then(Object::as_bool)
        .unwrap_or(false);
    let fs = filters(s);
    if fs.last().map(Vec::as_slice) == Some(b"DCTDecode") {
        if fs.len() > 1 {
            return Err("DCT behind other filters is not decoded".into());
        }
        return decode_dct(&s.content, width, height);
    }
    if let Some(f) = fs.iter().find(|f| {
        !matches!(
            f.as_slice(),
            b"FlateDecode"
                | b"LZWDecode"
                | b"ASCII85Decode"
                | b"ASCIIHexDecode"
                | b"RunLengthDecode"
        )
    }) {
        return Err(format!(
            "{} images cannot be re-encoded yet",
            String::from_utf8_lossy(f)
        ));
    }
    let (comps, bpc) = if image_mask {
        (1, 1)
    } else {
        let bpc = get(b"BitsPerComponent").unwrap_or(8);
        if !matches!(bpc, 1 | 2 | 4 | 8 | 16) {
            return Err(format!("unsupported /BitsPerComponent {bpc}"));
        }
        let cs = s.dict.get(b"ColorSpace").map_err(|_| "no /ColorSpace")?;
        (components(doc, cs, 0)?, bpc as u32)
    };
    let data = s
        .decompressed_content_with_limit(MAX_IMAGE_BYTES)
        .map_err(|e| format!("cannot decode the image: {e}"))?;
    Ok(Samples {
        data,
        width,
        height,
        comps,
        bpc,
    })
}

fn decode_dct(bytes: &[u8], width: u32, height: u32) -> Result<Samples, String> {
    let mut dec = jpeg_decoder::Decoder::new(bytes);
    dec.set_max_decoding_buffer_size(MAX_IMAGE_BYTES);
    let data = dec
        .decode()
        .map_err(|e| format!("cannot decode the JPEG: {e}"))?;
    let info = dec.info().ok_or("the JPEG has no frame")?;
    if u32::from(info.width) != width || u32::from(info.height) != height {
        return Err("the JPEG's size differs from /Width and /Height".into());
    }
    let (comps, bpc) = match info.pixel_format {
        jpeg_decoder::PixelFormat::L8 => (1, 8),
        jpeg_decoder::PixelFormat::L16 => (1, 16),
        jpeg_decoder::PixelFormat::RGB24 => (3, 8),
        jpeg_decoder::PixelFormat::CMYK32 => (4, 8),
    };
    Ok(Samples {
        data,
        width,
        height,
        comps,
        bpc,
    })
}

/// Colour components of a colour space.
fn components(doc: &Document, cs: &Object, depth: usize) -> Result<u32, String> {
    if depth > 4 {
        return Err("colour space nested too deeply".into());
    }
    let cs = doc.dereference(cs).map_err(|e| e.to_string())?.1;
    let name_of = |o: &Object| o.as_name().map(<[u8]>::to_vec).ok();
    let (family, arr) = match cs {
        Object::Name(n) => (n.clone(), None),
        Object::Array(a) => (a.first().and_then(name_of).unwrap_or_default(), Some(a)),
        _ => return Err("unreadable /ColorSpace".into()),
    };
    Ok(match family.as_slice() {
        b"DeviceGray" | b"CalGray" | b"G" | b"Indexed" | b"I" | b"Separation" => 1,
        b"DeviceRGB" | b"CalRGB" | b"RGB" | b"Lab" => 3,
        b"DeviceCMYK" | b"CMYK" => 4,
        b"ICCBased" => {
            let stream = arr
                .and_then(|a| a.get(1))
                .and_then(|o| doc.dereference(o).ok())
                .and_then(|(_, o)| o.as_stream().ok())
                .ok_or("unreadable ICC profile")?;
            match stream.dict.get(b"N").and_then(Object::as_i64) {
                Ok(n @ 1..=4) => n as u32,
                _ => match stream.dict.get(b"Alternate") {
                    Ok(alt) => components(doc, alt, depth + 1)?,
                    Err(_) => return Err("ICC profile without /N".into()),
                },
            }
        }
        b"DeviceN" => arr
            .and_then(|a| a.get(1))
            .and_then(|o| doc.dereference(o).ok())
            .and_then(|(_, o)| o.as_array().ok())
            .map(|names| names.len() as u32)
            .filter(|&n| n > 0)
            .ok_or("unreadable DeviceN colour space")?,
        other => {
            return Err(format!(
                "colour space {} is not handled",
                String::from_utf8_lossy(other)
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::dictionary;

    fn rgb_image(w: u32, h: u32) -> Stream {
        let data: Vec<u8> = (0..w * h * 3).map(|i| (i % 251) as u8 + 1).collect();
        let mut enc = ZlibEncoder::new(Vec::new(), Compression::default());
        enc.write_all(&data).unwrap();
        Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => w as i64,
                "Height" => h as i64, "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8,
                "Filter" => "FlateDecode",
            },
            enc.finish().unwrap(),
        )
    }

    #[test]
    fn only_the_rectangle_is_zeroed() {
        let doc = Document::with_version("1.7");
        let img = rgb_image(8, 4);
        let before = img.decompressed_content().unwrap();
        let rect = PixelRect {
            x0: 2,
            y0: 1,
            x1: 5,
            y1: 3,
        };
        let after = mask_stream(&doc, &img, &[rect])
            .unwrap()
            .decompressed_content()
            .unwrap();
        for y in 0..4u32 {
            for x in 0..8u32 {
                let i = ((y * 8 + x) * 3) as usize;
                let inside = (2..5).contains(&x) && (1..3).contains(&y);
                if inside {
                    assert_eq!(&after[i..i + 3], &[0, 0, 0]);
                } else {
                    assert_eq!(&after[i..i + 3], &before[i..i + 3]);
                }
            }
        }
    }

    #[test]
    fn one_bit_samples_are_zeroed_bit_by_bit() {
        let mut s = Samples {
            data: vec![0xFF; 4],
            width: 16,
            height: 2,
            comps: 1,
            bpc: 1,
        };
        zero_rect(
            &mut s,
            2,
            PixelRect {
                x0: 3,
                y0: 1,
                x1: 10,
                y1: 2,
            },
        );
        assert_eq!(s.data, vec![0xFF, 0xFF, 0b1110_0000, 0b0011_1111]);
    }

    #[test]
    fn jbig2_is_refused() {
        let doc = Document::with_version("1.7");
        let s = Stream::new(
            dictionary! { "Width" => 4, "Height" => 4, "Filter" => "JBIG2Decode", "ImageMask" => true },
            vec![0; 4],
        );
        let err = mask_stream(&doc, &s, &[]).unwrap_err();
        assert!(err.contains("JBIG2Decode"), "{err}");
    }

    #[test]
    fn rects_scale_outwards() {
        let r = PixelRect {
            x0: 3,
            y0: 3,
            x1: 5,
            y1: 5,
        }
        .scaled(10, 10, 4, 4);
        assert_eq!(
            r,
            PixelRect {
                x0: 1,
                y0: 1,
                x1: 2,
                y1: 2
            }
        );
    }
}
