//! Decoding an image's samples, zeroing a set of pixel rectangles and writing the result
//! back as a Flate stream (a fax image as CCITT fax).
//!
//! Flate-family filters (Flate with PNG/TIFF predictors, LZW, ASCII85/Hex, RunLength) are
//! decoded by lopdf; DCT (JPEG) by `jpeg-decoder`; CCITT fax by `hayro-ccitt`, JBIG2 by
//! `hayro-jbig2` and JPEG 2000 by `hayro-jpeg2000` (all pure Rust; an RGB JPEG 2000 image's
//! samples are then taken from PDFium). Each comes back as the samples the viewer paints,
//! so the re-encoded image is lossless: every pixel outside the rectangles keeps its exact
//! value. An image a decoder cannot read is refused (a redaction then fails closed, a
//! raster replace is not made).

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use lopdf::{dictionary, Document, Object, Stream};

use super::decoders::{
    components, decode_ccitt, decode_dct, decode_jbig2, decode_jpx, decode_parms,
};
use super::fax_g3;

/// Largest decoded image accepted (decompression-bomb guard).
pub(super) const MAX_IMAGE_BYTES: usize = 256 << 20;

/// Pixels `[x0, x1) × [y0, y1)`, row 0 at the top of the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PixelRect {
    pub x0: u32,
    pub y0: u32,
    pub x1: u32,
    pub y1: u32,
}

/// Decoded samples and their layout.
pub(crate) struct Samples {
    pub(crate) data: Vec<u8>,
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) comps: u32,
    pub(crate) bpc: u32,
    /// A fax image is written back as CCITT Group 4 with this /BlackIs1.
    pub(crate) fax: Option<bool>,
    /// Entries the re-encoded image's dictionary needs (a JPEG 2000 image's colour space
    /// comes from inside its data; as Flate it must be stated).
    pub(super) set: Vec<(&'static str, Object)>,
}

impl Samples {
    pub(super) fn new(data: Vec<u8>, width: u32, height: u32, comps: u32, bpc: u32) -> Samples {
        Samples {
            data,
            width,
            height,
            comps,
            bpc,
            fax: None,
            set: Vec::new(),
        }
    }
}

/// A copy of image `s` with the pixels in `rects` set to zero, Flate-encoded (a fax
/// image: Group 3 1-D rows spliced into the original data, else CCITT Group 4).
pub(crate) fn mask_stream(
    doc: &Document,
    s: &Stream,
    rects: &[PixelRect],
) -> Result<Stream, String> {
    rewrite_stream(doc, s, |samples, stride| {
        for r in rects {
            zero_rect(samples, stride, *r);
        }
    })
}

/// A copy of image `s` whose decoded samples `change` altered (`stride` bytes a row),
/// written back as [`mask_stream`] writes it.
pub(crate) fn rewrite_stream(
    doc: &Document,
    s: &Stream,
    change: impl FnOnce(&mut Samples, usize),
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
    let before = samples.fax.is_some().then(|| samples.data.clone());
    change(&mut samples, stride);
    if let (Some(before), Some(black_is_1)) = (before, samples.fax) {
        if let Some(content) = splice_g3(doc, s, &samples, &before, black_is_1) {
            let mut dict = s.dict.clone();
            dict.remove(b"Length");
            return Ok(Stream::new(dict, content));
        }
    }
    let mut dict = s.dict.clone();
    dict.remove(b"DecodeParms");
    dict.remove(b"Length");
    dict.remove(b"SMaskInData");
    dict.set("BitsPerComponent", i64::from(samples.bpc));
    let content = if let Some(black_is_1) = samples.fax {
        dict.set("Filter", Object::Name(b"CCITTFaxDecode".to_vec()));
        dict.set(
            "DecodeParms",
            dictionary! {
                "K" => -1, "Columns" => i64::from(samples.width),
                "Rows" => i64::from(samples.height), "BlackIs1" => black_is_1,
            },
        );
        encode_g4(&samples.data, samples.width, stride, black_is_1)
    } else {
        let mut enc = ZlibEncoder::new(Vec::new(), Compression::default());
        enc.write_all(&samples.data).map_err(|e| e.to_string())?;
        dict.set("Filter", Object::Name(b"FlateDecode".to_vec()));
        enc.finish().map_err(|e| e.to_string())?
    };
    for (k, v) in std::mem::take(&mut samples.set) {
        dict.set(k, v);
    }
    Ok(Stream::new(dict, content))
}

/// A Group 3 one-dimensional fax image (/K 0) keeps the bits of every row the mask left
/// alone (see [`fax_g3`]); None when the image is of another kind or its rows cannot be
/// read apart (then the whole image is written as Group 4).
fn splice_g3(
    doc: &Document,
    s: &Stream,
    masked: &Samples,
    before: &[u8],
    black_is_1: bool,
) -> Option<Vec<u8>> {
    let parms = decode_parms(doc, s);
    let get = |k: &[u8]| parms.as_ref().and_then(|p| p.get(k).ok());
    let k = get(b"K").and_then(|o| o.as_i64().ok()).unwrap_or(0);
    if k != 0 || filters(s).len() != 1 {
        return None;
    }
    let byte_align = get(b"EncodedByteAlign")
        .and_then(|o| o.as_bool().ok())
        .unwrap_or(false);
    fax_g3::splice(
        &s.content,
        masked.width,
        masked.height,
        byte_align,
        black_is_1,
        before,
        &masked.data,
    )
    .ok()
}

/// 1-bit rows (`stride` bytes each) as CCITT Group 4; `black_is_1` says which sample
/// value is black.
fn encode_g4(data: &[u8], width: u32, stride: usize, black_is_1: bool) -> Vec<u8> {
    let mut enc = fax::encoder::Encoder::new(fax::VecWriter::new());
    for row in data.chunks_exact(stride) {
        let pels = (0..width as usize).map(|x| {
            let bit = row[x / 8] & (0x80 >> (x % 8)) != 0;
            if bit == black_is_1 {
                fax::Color::Black
            } else {
                fax::Color::White
            }
        });
        let Ok(()) = enc.encode_line(pels, width);
    }
    match enc.finish() {
        Ok(w) => w.finish(),
        Err(e) => match e {},
    }
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

pub(crate) fn decode(doc: &Document, s: &Stream) -> Result<Samples, String> {
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
    if u64::from(width) * u64::from(height) > (MAX_IMAGE_BYTES as u64) * 8 {
        return Err("the image is too large".into());
    }
    let last = fs.last().map(Vec::as_slice);
    if let Some(f @ (b"DCTDecode" | b"CCITTFaxDecode" | b"JBIG2Decode" | b"JPXDecode")) = last {
        if fs.len() > 1 {
            return Err(format!(
                "{} behind other filters is not decoded",
                String::from_utf8_lossy(f)
            ));
        }
        let parms = decode_parms(doc, s);
        return match f {
            b"DCTDecode" => decode_dct(&s.content, width, height),
            b"CCITTFaxDecode" => decode_ccitt(&s.content, width, height, parms.as_ref()),
            b"JBIG2Decode" => decode_jbig2(doc, &s.content, width, height, parms.as_ref()),
            _ => decode_jpx(doc, s, width, height, image_mask),
        };
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
    Ok(Samples::new(data, width, height, comps, bpc))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut s = Samples::new(vec![0xFF; 4], 16, 2, 1, 1);
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
    fn unreadable_jbig2_is_refused() {
        let doc = Document::with_version("1.7");
        let s = Stream::new(
            dictionary! { "Width" => 4, "Height" => 4, "Filter" => "JBIG2Decode", "ImageMask" => true },
            vec![0; 4],
        );
        let err = mask_stream(&doc, &s, &[]).unwrap_err();
        assert!(err.contains("JBIG2"), "{err}");
    }

    #[test]
    fn jpx_with_its_alpha_as_soft_mask_is_refused() {
        let doc = Document::with_version("1.7");
        let s = Stream::new(
            dictionary! { "Width" => 4, "Height" => 4, "Filter" => "JPXDecode", "SMaskInData" => 1 },
            vec![0; 4],
        );
        assert!(mask_stream(&doc, &s, &[]).is_err());
    }

    /// Bit `x` of row `y` in 1-bit samples.
    fn bit(data: &[u8], stride: usize, x: u32, y: u32) -> bool {
        data[y as usize * stride + x as usize / 8] & (0x80 >> (x % 8)) != 0
    }

    #[test]
    fn fax_images_are_masked_and_written_back_as_group_4() {
        // A 37×20 pattern (1 = white, the default /BlackIs1 false): stripes and a block.
        let (w, h) = (37u32, 20u32);
        let stride = (w as usize).div_ceil(8);
        let mut data = vec![0xFFu8; stride * h as usize];
        for y in 0..h {
            for x in 0..w {
                if (x + y) % 5 == 0 || (10..20).contains(&x) && (4..9).contains(&y) {
                    data[y as usize * stride + x as usize / 8] &= !(0x80 >> (x % 8));
                }
            }
        }
        let g4 = encode_g4(&data, w, stride, false);
        let s = Stream::new(
            dictionary! {
                "Subtype" => "Image", "Width" => w as i64, "Height" => h as i64,
                "ColorSpace" => "DeviceGray", "BitsPerComponent" => 1,
                "Filter" => "CCITTFaxDecode",
                "DecodeParms" => dictionary! { "K" => -1, "Columns" => w as i64 },
            },
            g4,
        );
        let doc = Document::with_version("1.7");
        assert_eq!(decode(&doc, &s).unwrap().data, data, "round trip");
        let rect = PixelRect {
            x0: 3,
            y0: 2,
            x1: 30,
            y1: 6,
        };
        let out = mask_stream(&doc, &s, &[rect]).unwrap();
        assert_eq!(
            out.dict.get(b"Filter").unwrap().as_name().unwrap(),
            b"CCITTFaxDecode"
        );
        let after = decode(&doc, &out).unwrap().data;
        for y in 0..h {
            for x in 0..w {
                let inside = (3..30).contains(&x) && (2..6).contains(&y);
                let want = !inside && bit(&data, stride, x, y);
                assert_eq!(bit(&after, stride, x, y), want, "pixel {x},{y}");
            }
        }
    }

    /// The first image of `file` in the corpus with filter `filter`, or None (corpus
    /// absent: the test says so and passes).
    fn corpus_image(file: &str, filter: &[u8]) -> Option<(Document, Stream)> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/corpus")
            .join(file);
        let Ok(doc) = Document::load(&path) else {
            eprintln!("corpus file {} absent: skipped", path.display());
            return None;
        };
        let s = doc
            .objects
            .values()
            .filter_map(|o| o.as_stream().ok())
            .find(|s| {
                s.dict.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Image")
                    && filters(s).last().map(Vec::as_slice) == Some(filter)
                    && s.dict.get(b"Width").and_then(Object::as_i64).unwrap_or(0) > 64
            })
            .cloned()
            .expect("the corpus file has such an image");
        Some((doc, s))
    }

    /// Masks a rectangle of a corpus image, decodes the result again and checks that
    /// the rectangle is zero and every other sample unchanged.
    fn masks_exactly(file: &str, filter: &[u8]) {
        let Some((doc, s)) = corpus_image(file, filter) else {
            return;
        };
        let before = decode(&doc, &s).unwrap();
        let (w, h) = (before.width, before.height);
        let rect = PixelRect {
            x0: w / 4,
            y0: h / 3,
            x1: w / 2,
            y1: h / 2,
        };
        let out = mask_stream(&doc, &s, &[rect]).unwrap();
        let after = decode(&doc, &out).unwrap();
        assert_eq!((after.width, after.height), (w, h));
        assert_eq!((after.comps, after.bpc), (before.comps, before.bpc));
        let bits = (before.comps * before.bpc) as usize;
        let stride = (w as usize * bits).div_ceil(8);
        let mut inside_nonzero = 0;
        for y in 0..h {
            for x in 0..w {
                let inside = (rect.x0..rect.x1).contains(&x) && (rect.y0..rect.y1).contains(&y);
                for b in x as usize * bits..(x as usize + 1) * bits {
                    let i = y as usize * stride + b / 8;
                    let m = 0x80u8 >> (b % 8);
                    let (vb, va) = (before.data[i] & m, after.data[i] & m);
                    if inside {
                        inside_nonzero += usize::from(va != 0);
                    } else {
                        assert_eq!(va, vb, "{file}: sample bit {b} of row {y} changed");
                    }
                }
            }
        }
        assert_eq!(inside_nonzero, 0, "{file}: pixels left under the box");
    }

    #[test]
    fn corpus_fax_image_is_masked_exactly() {
        masks_exactly("scan-ocr-layer-brother-de.pdf", b"CCITTFaxDecode");
    }

    #[test]
    fn corpus_g3_image_keeps_the_bytes_of_rows_outside_the_mask() {
        // CCITT Group 3 1-D, EOLs, byte-aligned rows: PDFium decodes some of its rows
        // differently from other decoders, so rows the mask misses must stay as coded.
        let Some((doc, s)) = corpus_image("scan-ocr-layer-brother-de.pdf", b"CCITTFaxDecode")
        else {
            return;
        };
        let before = decode(&doc, &s).unwrap();
        let (w, h) = (before.width, before.height);
        let rect = PixelRect {
            x0: 300,
            y0: 1000,
            x1: 900,
            y1: 1060,
        };
        let out = mask_stream(&doc, &s, &[rect]).unwrap();
        assert_eq!(
            out.dict.get(b"DecodeParms").ok(),
            s.dict.get(b"DecodeParms").ok()
        );
        let after = decode(&doc, &out).unwrap();
        let old = fax_g3::layout(&s.content, w, h, true, false, Some(&before.data)).unwrap();
        let new = fax_g3::layout(&out.content, w, h, true, false, Some(&after.data)).unwrap();
        let bytes = |d: &[u8], u: fax_g3::Unit| d[u.start / 8..u.end / 8].to_vec();
        for y in 0..h as usize {
            let (o, n) = (
                bytes(&s.content, old.units[y]),
                bytes(&out.content, new.units[y]),
            );
            if (1000..1060).contains(&y) {
                assert_ne!(o, n, "row {y} is coded again");
            } else {
                assert_eq!(o, n, "row {y} changed its bytes");
            }
        }
        assert_eq!(s.content[old.tail / 8..], out.content[new.tail / 8..]);
    }

    #[test]
    fn corpus_jbig2_image_is_masked_exactly() {
        masks_exactly("scan-linn-brochure-2col-tiff2pdf.pdf", b"JBIG2Decode");
    }

    #[test]
    fn corpus_jpx_image_is_masked_exactly() {
        masks_exactly("scan-ocr-layer-vicksburg-luradoc.pdf", b"JPXDecode");
    }
}
