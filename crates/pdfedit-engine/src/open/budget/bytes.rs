//! The bytes pass: every `stream … endstream` of the raw file, bounded from its filters
//! and decoded (streaming, counted, never held) only where the bound does not fit.

use std::io::Read;

use super::decoders::{LzwReader, RunLengthReader};
use super::{refuse, Limits, Measured};
use crate::Result;

/// One stream found in the file: its data and its filters in decoding order.
pub(super) struct RawStream {
    pub(super) data: std::ops::Range<usize>,
    pub(super) filters: Vec<Filter>,
    /// For an image: the bytes of its samples (width x height x components x bits / 8).
    pub(super) samples: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Filter {
    Flate,
    Lzw,
    RunLength,
    Ascii85,
    AsciiHex,
    /// An image codec (DCT, JPX, JBIG2, CCITT): its output is pixels, bounded by the
    /// image's size rather than by its stream; counting stops before it.
    Image,
    /// Named indirectly or unknown: decoded by lopdf when it can.
    Other,
}

impl Filter {
    pub(super) fn from_name(name: &[u8]) -> Filter {
        match name {
            b"FlateDecode" | b"Fl" => Filter::Flate,
            b"LZWDecode" | b"LZW" => Filter::Lzw,
            b"RunLengthDecode" | b"RL" => Filter::RunLength,
            b"ASCII85Decode" | b"A85" => Filter::Ascii85,
            b"ASCIIHexDecode" | b"AHx" => Filter::AsciiHex,
            b"DCTDecode" | b"DCT" | b"JPXDecode" | b"JBIG2Decode" | b"CCITTFaxDecode" | b"CCF" => {
                Filter::Image
            }
            _ => Filter::Other,
        }
    }

    /// Most bytes one input byte can decode to.
    fn expansion(self) -> u64 {
        match self {
            // Deflate's longest match (258 bytes) costs at least two bits: 1032:1.
            Filter::Flate => 1032,
            // A 9-bit LZW code emits at most 4096 bytes.
            Filter::Lzw => 3641,
            Filter::RunLength => 64,
            // `z` is four zero bytes.
            Filter::Ascii85 => 4,
            Filter::AsciiHex | Filter::Image | Filter::Other => 1,
        }
    }
}

/// Counts every stream of the file; returns how many had to be decoded.
pub(super) fn raw_bytes(
    bytes: &[u8],
    streams: Vec<RawStream>,
    limits: &Limits,
    measured: &mut Measured,
) -> Result<usize> {
    let streams: Vec<(&[u8], RawStream)> = streams
        .into_iter()
        .filter(|s| !measured.at.contains(&s.data.start))
        .map(|s| (bytes, s))
        .collect();
    count(&streams, limits, measured)
}

/// Counts the streams of an encrypted document that lopdf loaded (and so decrypted) and
/// the structure pass did not measure: their decoded size is bounded, not that of their
/// ciphertext, which no decoder reads. They are then marked measured, so the bytes pass
/// skips them. Returns how many had to be decoded.
pub(super) fn decrypted_streams(
    doc: &lopdf::Document,
    limits: &Limits,
    measured: &mut Measured,
) -> Result<usize> {
    let mut items: Vec<(&[u8], RawStream)> = Vec::new();
    let mut ids = Vec::new();
    for (id, obj) in &doc.objects {
        let lopdf::Object::Stream(stream) = obj else {
            continue;
        };
        if measured.ids.contains(id) {
            continue;
        }
        let filters = stream_filters(doc, &stream.dict);
        items.push((
            &stream.content,
            RawStream {
                data: 0..stream.content.len(),
                filters,
                samples: dict_samples(doc, &stream.dict),
            },
        ));
        ids.push(*id);
    }
    let n = count(&items, limits, measured)?;
    measured.ids.extend(ids);
    Ok(n)
}

/// A stream dictionary's filters, the array resolved when it sits behind a reference.
pub(super) fn stream_filters(doc: &lopdf::Document, dict: &lopdf::Dictionary) -> Vec<Filter> {
    match dict
        .get(b"Filter")
        .ok()
        .and_then(|f| doc.dereference(f).ok())
    {
        Some((_, lopdf::Object::Name(n))) => vec![Filter::from_name(n)],
        Some((_, lopdf::Object::Array(a))) => a
            .iter()
            .filter_map(|o| o.as_name().ok().map(Filter::from_name))
            .collect(),
        _ => Vec::new(),
    }
}

/// The sample bytes of an image stream's dictionary (as [`image_samples`] reads them from
/// the file's text).
fn dict_samples(doc: &lopdf::Document, dict: &lopdf::Dictionary) -> Option<u64> {
    let get = |k: &[u8]| doc.dereference(dict.get(k).ok()?).ok().map(|(_, o)| o);
    if get(b"Subtype")?.as_name().ok()? != b"Image" {
        return None;
    }
    let int = |k: &[u8]| get(k)?.as_i64().ok().and_then(|n| u64::try_from(n).ok());
    let (w, h, bpc) = (int(b"Width")?, int(b"Height")?, int(b"BitsPerComponent")?);
    let components = match get(b"ColorSpace").and_then(|c| c.as_name().ok()) {
        Some(b"DeviceGray" | b"G") => 1,
        Some(b"DeviceRGB" | b"RGB") => 3,
        _ => 4,
    };
    w.checked_mul(components)?
        .checked_mul(bpc.clamp(1, 16))?
        .div_ceil(8)
        .checked_mul(h)
}

/// Bounds every stream from its filters and decodes only what the bounds do not settle.
fn count(
    streams: &[(&[u8], RawStream)],
    limits: &Limits,
    measured: &mut Measured,
) -> Result<usize> {
    let bounds: Vec<u64> = streams.iter().map(|(_, s)| bound(s)).collect();
    let mut known: Vec<Option<u64>> = vec![None; streams.len()];
    for (i, (buf, s)) in streams.iter().enumerate() {
        if bounds[i] > limits.stream_bytes {
            known[i] = Some(decoded_size(buf, s, limits.stream_bytes)?);
        }
    }
    let sum = |known: &[Option<u64>]| -> u64 {
        known
            .iter()
            .zip(&bounds)
            .fold(0u64, |acc, (k, b)| acc.saturating_add(k.unwrap_or(*b)))
    };
    if measured.total.saturating_add(sum(&known)) > limits.document_bytes {
        // Largest bounds first: they are the ones that may be far from their real size.
        let mut order: Vec<usize> = (0..streams.len()).filter(|&i| known[i].is_none()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(bounds[i]));
        for i in order {
            let (buf, s) = &streams[i];
            known[i] = Some(decoded_size(buf, s, limits.stream_bytes)?);
            if measured.total.saturating_add(sum(&known)) <= limits.document_bytes {
                break;
            }
        }
    }
    measured.add(sum(&known), limits)?;
    Ok(known.iter().filter(|k| k.is_some()).count())
}

/// Upper bound of a stream's decoded size (up to the first image codec).
pub(super) fn bound(s: &RawStream) -> u64 {
    // PDFium decodes an image of one filter a row at a time and stops after its last row:
    // it never decodes more than the image's samples, whatever the stream holds.
    if let (Some(samples), [Filter::Flate | Filter::Lzw | Filter::RunLength]) =
        (s.samples, s.filters.as_slice())
    {
        return samples;
    }
    let mut n = s.data.len() as u64;
    for f in &s.filters {
        if *f == Filter::Image {
            break;
        }
        n = n.saturating_mul(f.expansion());
    }
    n
}

/// The decoded size of one stream, counted while streaming, never held; past `cap` it is
/// refused.
pub(super) fn decoded_size(bytes: &[u8], s: &RawStream, cap: u64) -> Result<u64> {
    let data = &bytes[s.data.clone()];
    let chain: Vec<Filter> = s
        .filters
        .iter()
        .copied()
        .take_while(|f| *f != Filter::Image)
        .collect();
    let mut reader: Box<dyn Read + '_> = Box::new(data);
    for f in chain {
        reader = match f {
            Filter::Flate => Box::new(flate2::read::ZlibDecoder::new(reader)),
            Filter::Lzw => Box::new(LzwReader::new(reader)),
            Filter::RunLength => Box::new(RunLengthReader::new(reader)),
            // Text encodings shrink or barely grow: their input bounds them.
            Filter::Ascii85 | Filter::AsciiHex | Filter::Image | Filter::Other => reader,
        };
    }
    let mut buf = vec![0u8; 64 << 10];
    let mut total: u64 = 0;
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total += n as u64;
                if total > cap {
                    return refuse(
                        "stream_bytes",
                        format!("a stream decodes to more than {cap} bytes"),
                    );
                }
            }
        }
    }
    Ok(total)
}

/// Every `stream … endstream` of the file with the filters of its dictionary.
pub(super) fn find_streams(bytes: &[u8]) -> Vec<RawStream> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = find(&bytes[pos..], b"stream") {
        let at = pos + i;
        pos = at + 6;
        if at >= 3 && &bytes[at - 3..at] == b"end" {
            continue;
        }
        // The keyword follows a dictionary's `>>`.
        let mut j = at;
        while j > 0 && is_space(bytes[j - 1]) {
            j -= 1;
        }
        if j < 2 || &bytes[j - 2..j] != b">>" {
            continue;
        }
        let mut start = at + 6;
        if bytes.get(start) == Some(&b'\r') {
            start += 1;
        }
        if bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
        let end =
            find(&bytes[start.min(bytes.len())..], b"endstream").map_or(bytes.len(), |e| start + e);
        let dict = dict_before(bytes, j);
        let mut filters = filters_of(dict);
        if filters == [Filter::Other] {
            filters = indirect_filters(bytes, dict).unwrap_or(filters);
        }
        out.push(RawStream {
            data: start.min(end)..end,
            filters,
            samples: image_samples(dict),
        });
        pos = end.max(pos);
    }
    out
}

/// The dictionary that ends at `end` (just past its `>>`), found by matching `<<`/`>>`
/// backwards within 64 KiB.
pub(super) fn dict_before(bytes: &[u8], end: usize) -> &[u8] {
    let floor = end.saturating_sub(64 << 10);
    let mut depth = 0i32;
    let mut i = end;
    while i >= floor + 2 {
        match &bytes[i - 2..i] {
            b">>" => {
                depth += 1;
                i -= 2;
            }
            b"<<" => {
                depth -= 1;
                i -= 2;
                if depth == 0 {
                    return &bytes[i..end];
                }
            }
            _ => i -= 1,
        }
    }
    &bytes[floor..end]
}

/// The `/Filter` of a stream dictionary's text: one name or an array of names.
pub(super) fn filters_of(dict: &[u8]) -> Vec<Filter> {
    let Some(p) = find(dict, b"/Filter") else {
        return Vec::new();
    };
    let rest = &dict[p + 7..];
    // `/FilterX` is another key.
    if rest
        .first()
        .is_some_and(|b| !is_space(*b) && !b"/[".contains(b))
    {
        return Vec::new();
    }
    let rest = &rest[rest
        .iter()
        .position(|b| !is_space(*b))
        .unwrap_or(rest.len())..];
    let names = |s: &[u8]| -> Vec<Filter> {
        s.split(|b| *b == b'/')
            .skip(1)
            .map(|n| {
                let end = n
                    .iter()
                    .position(|b| is_space(*b) || b"[]<>()%".contains(b))
                    .unwrap_or(n.len());
                Filter::from_name(&n[..end])
            })
            .collect()
    };
    match rest.first() {
        Some(b'[') => {
            let close = rest.iter().position(|b| *b == b']').unwrap_or(rest.len());
            names(&rest[1..close])
        }
        Some(b'/') => {
            let end = rest[1..]
                .iter()
                .position(|b| is_space(*b) || b"/[]<>()%".contains(b))
                .map_or(rest.len(), |e| e + 1);
            names(&rest[..end])
        }
        // An indirect filter array: unknown, counted at its raw size. The structure pass
        // has decoded it already when it is page content.
        _ => vec![Filter::Other],
    }
}

/// The filters of a `/Filter N G R` whose object `N G obj` holds a name or an array of
/// names (PDFium resolves the reference: `[/FlateDecode /FlateDecode]` hidden there must
/// count as two layers). The last definition of the object in the file wins, as in an
/// incremental update.
pub(super) fn indirect_filters(bytes: &[u8], dict: &[u8]) -> Option<Vec<Filter>> {
    let p = find(dict, b"/Filter")? + 7;
    let rest = std::str::from_utf8(&dict[p..(p + 32).min(dict.len())]).ok()?;
    let mut words = rest.split_ascii_whitespace();
    let n: u32 = words.next()?.parse().ok()?;
    let g: u16 = words.next()?.parse().ok()?;
    let header = format!("{n} {g} obj");
    let mut from = 0;
    let mut last = None;
    while let Some(i) = find(&bytes[from..], header.as_bytes()) {
        let at = from + i;
        // A whole number, not the tail of a longer one (`12 0 obj` inside `112 0 obj`).
        if at == 0 || !bytes[at - 1].is_ascii_digit() {
            last = Some(at + header.len());
        }
        from = at + header.len();
    }
    let body = &bytes[last?..];
    let body = &body[..find(body, b"endobj").unwrap_or(body.len()).min(4096)];
    let mut text = b"/Filter ".to_vec();
    text.extend_from_slice(body);
    let filters = filters_of(&text);
    (filters != [Filter::Other]).then_some(filters)
}

/// The sample bytes of an image dictionary's text: `/Subtype /Image` with direct
/// `/Width`, `/Height` and `/BitsPerComponent`; four components unless the colour space
/// is named as gray or RGB.
pub(super) fn image_samples(dict: &[u8]) -> Option<u64> {
    let value = |key: &[u8]| -> Option<&[u8]> {
        let mut from = 0;
        loop {
            let p = find(&dict[from..], key)? + from + key.len();
            // The key itself, not a longer one (`/Width` in `/WidthX`).
            if dict
                .get(p)
                .is_some_and(|b| is_space(*b) || b"/[<(".contains(b))
            {
                let rest = &dict[p..];
                let start = rest.iter().position(|b| !is_space(*b))?;
                return Some(&rest[start..]);
            }
            from = p;
        }
    };
    let int = |key: &[u8]| -> Option<u64> {
        let v = value(key)?;
        let end = v
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(v.len());
        // A reference (`12 0 R`) is not the number itself.
        let after = &v[end..];
        let after = &after[after
            .iter()
            .position(|b| !is_space(*b))
            .unwrap_or(after.len())..];
        if after.first().is_some_and(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(&v[..end]).ok()?.parse().ok()
    };
    if !value(b"/Subtype")?.starts_with(b"/Image") {
        return None;
    }
    let (w, h, bpc) = (
        int(b"/Width")?,
        int(b"/Height")?,
        int(b"/BitsPerComponent")?,
    );
    let components = match value(b"/ColorSpace") {
        Some(cs) if cs.starts_with(b"/DeviceGray") || cs.starts_with(b"/G") => 1,
        Some(cs) if cs.starts_with(b"/DeviceRGB") || cs.starts_with(b"/RGB") => 3,
        _ => 4,
    };
    let bits = w
        .checked_mul(components)?
        .checked_mul(bpc.clamp(1, 16))?
        .div_ceil(8);
    bits.checked_mul(h)
}

pub(super) fn is_space(b: u8) -> bool {
    matches!(b, 0 | 9 | 10 | 12 | 13 | 32)
}

pub(super) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
