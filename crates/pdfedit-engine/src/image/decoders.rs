//! The decoders of image filters lopdf does not handle: DCT (JPEG) by `jpeg-decoder`, CCITT
//! fax by `hayro-ccitt`, JBIG2 by `hayro-jbig2` and JPEG 2000 by `hayro-jpeg2000` (an RGB
//! one's samples then come from PDFium, see `jpx_pdfium`). Each returns the samples the
//! viewer paints.

use lopdf::{Document, Object, Stream};

use super::samples::{Samples, MAX_IMAGE_BYTES};

pub(super) fn decode_dct(bytes: &[u8], width: u32, height: u32) -> Result<Samples, String> {
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
    Ok(Samples::new(data, width, height, comps, bpc))
}

/// The image's /DecodeParms (the first one when it is an array).
pub(super) fn decode_parms(doc: &Document, s: &Stream) -> Option<lopdf::Dictionary> {
    let o = s.dict.get(b"DecodeParms").ok()?;
    let o = doc.dereference(o).ok()?.1;
    let o = match o {
        Object::Array(a) => doc.dereference(a.first()?).ok()?.1,
        o => o,
    };
    o.as_dict().ok().cloned()
}

/// Packs bi-level pixels into rows of 1-bit samples (1 = white unless told otherwise),
/// ignoring anything past the declared size.
struct BitSink {
    data: Vec<u8>,
    width: u32,
    height: u32,
    stride: usize,
    x: u32,
    y: u32,
    /// Sample value of a black pixel.
    black_bit: bool,
}

impl BitSink {
    fn new(width: u32, height: u32, black_bit: bool) -> BitSink {
        let stride = (width as usize).div_ceil(8);
        let fill = if black_bit { 0x00 } else { 0xFF };
        BitSink {
            data: vec![fill; stride * height as usize],
            width,
            height,
            stride,
            x: 0,
            y: 0,
            black_bit,
        }
    }

    fn push(&mut self, black: bool) {
        if self.x < self.width && self.y < self.height {
            let i = self.y as usize * self.stride + self.x as usize / 8;
            let bit = 0x80u8 >> (self.x % 8);
            if black == self.black_bit {
                self.data[i] |= bit;
            } else {
                self.data[i] &= !bit;
            }
        }
        self.x = self.x.saturating_add(1);
    }

    fn push_chunk(&mut self, black: bool, chunks: u32) {
        let n = chunks
            .saturating_mul(8)
            .min(self.width.saturating_sub(self.x) + 8);
        for _ in 0..n {
            self.push(black);
        }
    }

    fn row(&mut self) {
        self.x = 0;
        self.y = self.y.saturating_add(1);
    }
}

impl hayro_ccitt::Decoder for BitSink {
    fn push_pixel(&mut self, white: bool) {
        self.push(!white);
    }
    fn push_pixel_chunk(&mut self, white: bool, chunk_count: u32) {
        self.push_chunk(!white, chunk_count);
    }
    fn next_line(&mut self) {
        self.row();
    }
}

impl hayro_jbig2::Decoder for BitSink {
    fn push_pixel(&mut self, black: bool) {
        self.push(black);
    }
    fn push_pixel_chunk(&mut self, black: bool, chunk_count: u32) {
        self.push_chunk(black, chunk_count);
    }
    fn next_line(&mut self) {
        self.row();
    }
}

/// CCITT fax (Group 3 or 4), per the stream's /DecodeParms.
pub(super) fn decode_ccitt(
    bytes: &[u8],
    width: u32,
    height: u32,
    parms: Option<&lopdf::Dictionary>,
) -> Result<Samples, String> {
    let int = |k: &[u8], d: i64| {
        parms
            .and_then(|p| p.get(k).ok())
            .and_then(|o| o.as_i64().ok())
            .unwrap_or(d)
    };
    let flag = |k: &[u8], d: bool| {
        parms
            .and_then(|p| p.get(k).ok())
            .and_then(|o| o.as_bool().ok())
            .unwrap_or(d)
    };
    let columns = int(b"Columns", 1728);
    if columns != i64::from(width) {
        return Err("the fax data's /Columns differ from the image's /Width".into());
    }
    let k = int(b"K", 0);
    let settings = hayro_ccitt::DecodeSettings {
        columns: width,
        rows: height,
        end_of_block: flag(b"EndOfBlock", true),
        end_of_line: flag(b"EndOfLine", false),
        rows_are_byte_aligned: flag(b"EncodedByteAlign", false),
        encoding: match k {
            k if k < 0 => hayro_ccitt::EncodingMode::Group4,
            0 => hayro_ccitt::EncodingMode::Group3_1D,
            k => hayro_ccitt::EncodingMode::Group3_2D {
                k: u32::try_from(k).unwrap_or(u32::MAX),
            },
        },
        invert_black: false,
    };
    // Samples as the filter hands them to the viewer: 0 is black unless /BlackIs1.
    let black_is_1 = flag(b"BlackIs1", false);
    let mut sink = BitSink::new(width, height, black_is_1);
    let mut ctx = hayro_ccitt::DecoderContext::new(settings);
    hayro_ccitt::decode(bytes, &mut sink, &mut ctx)
        .map_err(|e| format!("cannot decode the fax image: {e}"))?;
    if sink.y < height {
        return Err(format!("the fax image decoded {} of {height} rows", sink.y));
    }
    let mut out = Samples::new(sink.data, width, height, 1, 1);
    out.fax = Some(black_is_1);
    Ok(out)
}

/// JBIG2 (embedded organisation, with the /JBIG2Globals stream when there is one).
pub(super) fn decode_jbig2(
    doc: &Document,
    bytes: &[u8],
    width: u32,
    height: u32,
    parms: Option<&lopdf::Dictionary>,
) -> Result<Samples, String> {
    let globals = parms
        .and_then(|p| p.get(b"JBIG2Globals").ok())
        .and_then(|o| doc.dereference(o).ok())
        .and_then(|(_, o)| o.as_stream().ok())
        .map(|g| {
            g.decompressed_content_with_limit(MAX_IMAGE_BYTES)
                .unwrap_or_else(|_| g.content.clone())
        });
    let image = hayro_jbig2::Image::new_embedded(bytes, globals.as_deref())
        .map_err(|e| format!("cannot read the JBIG2 image: {e}"))?;
    if image.width() != width || image.height() != height {
        return Err("the JBIG2 page's size differs from /Width and /Height".into());
    }
    // The filter's output: 1 bits of JBIG2 (black) become 0 samples.
    let mut sink = BitSink::new(width, height, false);
    image
        .decode(&mut sink)
        .map_err(|e| format!("cannot decode the JBIG2 image: {e}"))?;
    Ok(Samples::new(sink.data, width, height, 1, 1))
}

/// JPEG 2000: the colour space comes from the image data unless the dictionary states
/// one. An alpha channel is dropped (viewers ignore it) unless /SMaskInData asks for it,
/// which is refused.
pub(super) fn decode_jpx(
    doc: &Document,
    s: &Stream,
    width: u32,
    height: u32,
    image_mask: bool,
) -> Result<Samples, String> {
    if image_mask {
        return Err("a JPEG 2000 stencil mask is not decoded".into());
    }
    let stated = s.dict.get(b"ColorSpace").ok();
    let indexed = stated
        .and_then(|cs| doc.dereference(cs).ok())
        .and_then(|(_, cs)| match cs {
            Object::Array(a) => a.first().and_then(|n| n.as_name().ok()),
            Object::Name(n) => Some(n.as_slice()),
            _ => None,
        })
        .is_some_and(|n| n == b"Indexed" || n == b"I");
    let settings = hayro_jpeg2000::DecodeSettings {
        resolve_palette_indices: !indexed,
        ..hayro_jpeg2000::DecodeSettings::default()
    };
    let image = hayro_jpeg2000::Image::new(&s.content, &settings)
        .map_err(|e| format!("cannot read the JPEG 2000 image: {e:?}"))?;
    if image.width() != width || image.height() != height {
        return Err("the JPEG 2000 image's size differs from /Width and /Height".into());
    }
    let channels = u32::from(image.color_space().num_channels());
    let alpha = image.has_alpha();
    let total = channels + u32::from(alpha);
    let smask_in_data = s
        .dict
        .get(b"SMaskInData")
        .and_then(Object::as_i64)
        .unwrap_or(0);
    if alpha && smask_in_data != 0 {
        return Err("a JPEG 2000 image whose alpha is its soft mask is not re-encoded".into());
    }
    if (width as usize) * (height as usize) * (total as usize) > MAX_IMAGE_BYTES {
        return Err("the decoded image is too large".into());
    }
    let mut set = Vec::new();
    match stated {
        Some(cs) => {
            let want = components(doc, cs, 0)?;
            if want != channels {
                return Err(format!(
                    "the JPEG 2000 image has {channels} channels, its /ColorSpace {want}"
                ));
            }
        }
        None => {
            let cs = match image.color_space() {
                hayro_jpeg2000::ColorSpace::Gray => Object::Name(b"DeviceGray".to_vec()),
                hayro_jpeg2000::ColorSpace::RGB => Object::Name(b"DeviceRGB".to_vec()),
                hayro_jpeg2000::ColorSpace::CMYK => Object::Name(b"DeviceCMYK".to_vec()),
                hayro_jpeg2000::ColorSpace::Icc { num_channels, .. } => match num_channels {
                    1 => Object::Name(b"DeviceGray".to_vec()),
                    3 => Object::Name(b"DeviceRGB".to_vec()),
                    4 => Object::Name(b"DeviceCMYK".to_vec()),
                    _ => return Err("JPEG 2000 ICC colour space not handled".into()),
                },
                hayro_jpeg2000::ColorSpace::Unknown { .. } => {
                    return Err("the JPEG 2000 image's colour space is unknown".into())
                }
            };
            set.push(("ColorSpace", cs));
        }
    }
    let data = image
        .decode()
        .map_err(|e| format!("cannot decode the JPEG 2000 image: {e:?}"))?;
    let px = width as usize * height as usize;
    if data.len() < px * total as usize {
        return Err("the JPEG 2000 image decoded short".into());
    }
    let samples = if alpha {
        let t = total as usize;
        let c = channels as usize;
        let mut colour = Vec::with_capacity(px * c);
        for p in data.chunks_exact(t).take(px) {
            colour.extend_from_slice(&p[..c]);
        }
        colour
    } else {
        data
    };
    // What PDFium paints for an RGB image (see `jpx_pdfium`); hayro's samples when
    // PDFium is not at hand.
    let device_rgb = channels == 3
        && match stated {
            Some(cs) => doc
                .dereference(cs)
                .is_ok_and(|(_, o)| o.as_name().is_ok_and(|n| n == b"DeviceRGB")),
            None => matches!(image.color_space(), hayro_jpeg2000::ColorSpace::RGB),
        };
    let samples = match device_rgb.then(|| super::jpx_pdfium::decode_rgb(s, width, height)) {
        Some(Ok(p)) => p,
        _ => samples,
    };
    let mut out = Samples::new(samples, width, height, channels, 8);
    out.set = set;
    Ok(out)
}

/// Colour components of a colour space.
pub(super) fn components(doc: &Document, cs: &Object, depth: usize) -> Result<u32, String> {
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
