//! Inline images (`BI … EI`) under a redaction: each is decoded, masked and drawn instead
//! as an image XObject of the page (`/RdImN Do` where the `BI … EI` was).

use std::collections::BTreeMap;

use lopdf::{Dictionary, Document, Object, ObjectId, Stream};
use pdf_content::interp::matrix::Matrix;
use pdf_content::{parse, Op, OpKind, StreamId, Value};

use super::images::{describe, rects_under, Masked};
use super::Refusal;
use crate::image::placements::dims;
use crate::image::samples::mask_stream;
use crate::model::PageModel;
use crate::plan::streams::{page_subdict_mut, resources, write_stream};
use crate::types::FailReason;

/// Inline images (by stream and op index) under `boxes`: each is decoded, masked and
/// drawn instead as an image XObject of the page (`/RdImN Do` in place of `BI … EI`).
pub(super) fn inline_images(
    doc: &mut Document,
    model: &PageModel,
    inline: &[((StreamId, usize), Matrix)],
    boxes: &[[f64; 4]],
    written: &[(StreamId, Vec<u8>)],
) -> Result<Vec<Masked>, Refusal> {
    let unsupported = |m: String| (FailReason::ImageUnsupported, m);
    let mut out = Vec::new();
    type Patch = (std::ops::Range<usize>, Vec<u8>);
    let mut patches: BTreeMap<StreamId, Vec<Patch>> = BTreeMap::new();
    let mut serial = 0;
    for &((sid, index), ctm) in inline {
        let cs = model
            .glyphs
            .stream(sid)
            .ok_or_else(|| unsupported("the inline image's stream is gone".into()))?;
        let op = &cs.ops[index];
        let OpKind::InlineImage { data } = &op.kind else {
            continue;
        };
        let image = inline_stream(doc, model.page_id, op, &cs.bytes[data.clone()])
            .map_err(|m| unsupported(format!("an inline image: {m}")))?;
        let (w, h) =
            dims(&image).ok_or_else(|| unsupported("an inline image has no usable size".into()))?;
        let (rects, areas) = rects_under(&[ctm], w, h, boxes);
        if rects.is_empty() {
            continue;
        }
        let masked = mask_stream(doc, &image, &rects)
            .map_err(|m| unsupported(format!("an inline image: {m}")))?;
        let new_id = doc.add_object(masked);
        let name = loop {
            serial += 1;
            let n = format!("RdIm{serial}").into_bytes();
            let taken = resources(doc, model.page_id)
                .and_then(|r| r.get(b"XObject").ok())
                .and_then(|x| doc.dereference(x).ok())
                .and_then(|(_, x)| x.as_dict().ok())
                .is_some_and(|x| x.has(&n));
            if !taken {
                break n;
            }
        };
        page_subdict_mut(doc, model.page_id, b"XObject")
            .map_err(unsupported)?
            .set(name.clone(), Object::Reference(new_id));
        // The op's place in the stream as it is now (the text part may have rewritten
        // it: the k-th inline image is still the k-th).
        let k = cs.ops[..index]
            .iter()
            .filter(|o| matches!(o.kind, OpKind::InlineImage { .. }))
            .count();
        let span = match written.iter().find(|(id, _)| *id == sid) {
            Some((_, bytes)) => parse(bytes)
                .into_iter()
                .filter(|o| matches!(o.kind, OpKind::InlineImage { .. }))
                .nth(k)
                .map(|o| o.operator_span)
                .ok_or_else(|| unsupported("the inline image moved".into()))?,
            None => op.operator_span.clone(),
        };
        let mut draw = b"/".to_vec();
        draw.extend_from_slice(&name);
        draw.extend_from_slice(b" Do");
        patches.entry(sid).or_default().push((span, draw));
        out.push(Masked {
            location: format!(
                "inline image (now /{}, object {} {}): {w}x{h} px, pixels {}",
                String::from_utf8_lossy(&name),
                new_id.0,
                new_id.1,
                describe(&rects)
            ),
            areas_user: areas,
        });
    }
    for (sid, edits) in patches {
        let current = match written.iter().find(|(id, _)| *id == sid) {
            Some((_, bytes)) => bytes.clone(),
            None => model
                .glyphs
                .stream(sid)
                .map(|cs| cs.bytes.clone())
                .unwrap_or_default(),
        };
        let bytes = pdf_content::write::patch(&current, &edits)
            .map_err(|e| unsupported(format!("an inline image: {e}")))?;
        write_stream(doc, model, sid, &bytes).map_err(unsupported)?;
    }
    Ok(out)
}

/// An inline image as an image XObject stream: abbreviated keys and names expanded, a
/// named colour space resolved from the page's resources.
fn inline_stream(
    doc: &Document,
    page_id: ObjectId,
    op: &Op,
    data: &[u8],
) -> Result<Stream, String> {
    let Some(Value::Dict(entries)) = op.operands.first().map(|o| &o.value) else {
        return Err("no image dictionary".into());
    };
    let mut dict = Dictionary::new();
    dict.set("Type", Object::Name(b"XObject".to_vec()));
    dict.set("Subtype", Object::Name(b"Image".to_vec()));
    for (k, v) in entries {
        let key: &[u8] = match k.as_slice() {
            b"W" => b"Width",
            b"H" => b"Height",
            b"BPC" => b"BitsPerComponent",
            b"CS" => b"ColorSpace",
            b"F" => b"Filter",
            b"DP" => b"DecodeParms",
            b"D" => b"Decode",
            b"IM" => b"ImageMask",
            b"I" => b"Interpolate",
            other => other,
        };
        let mut value = to_object(&v.value, 0);
        if key == b"Filter" || key == b"ColorSpace" {
            value = expand_names(value);
        }
        if key == b"ColorSpace" {
            if let Object::Name(n) = &value {
                if !n.starts_with(b"Device") && n.as_slice() != b"Indexed" {
                    value = resources(doc, page_id)
                        .and_then(|r| r.get(b"ColorSpace").ok())
                        .and_then(|c| doc.dereference(c).ok())
                        .and_then(|(_, c)| c.as_dict().ok())
                        .and_then(|c| c.get(n).ok())
                        .cloned()
                        .ok_or("its named colour space is not in the page's resources")?;
                }
            }
        }
        dict.set(key.to_vec(), value);
    }
    Ok(Stream::new(dict, data.to_vec()))
}

/// Abbreviated filter and colour-space names in full (inside arrays too).
fn expand_names(o: Object) -> Object {
    match o {
        Object::Name(n) => {
            let full: &[u8] = match n.as_slice() {
                b"AHx" => b"ASCIIHexDecode",
                b"A85" => b"ASCII85Decode",
                b"LZW" => b"LZWDecode",
                b"Fl" => b"FlateDecode",
                b"RL" => b"RunLengthDecode",
                b"CCF" => b"CCITTFaxDecode",
                b"DCT" => b"DCTDecode",
                b"G" => b"DeviceGray",
                b"RGB" => b"DeviceRGB",
                b"CMYK" => b"DeviceCMYK",
                b"I" => b"Indexed",
                other => other,
            };
            Object::Name(full.to_vec())
        }
        Object::Array(a) => Object::Array(a.into_iter().map(expand_names).collect()),
        other => other,
    }
}

/// A content-stream value as a PDF object (nesting bounded).
fn to_object(v: &Value, depth: usize) -> Object {
    if depth > 16 {
        return Object::Null;
    }
    match v {
        Value::Integer(i) => Object::Integer(*i),
        Value::Real(r) => Object::Real(*r as f32),
        Value::Bool(b) => Object::Boolean(*b),
        Value::Null => Object::Null,
        Value::Name(n) => Object::Name(n.clone()),
        Value::String(s) => Object::String(s.bytes.clone(), lopdf::StringFormat::Literal),
        Value::Array(a) => {
            Object::Array(a.iter().map(|o| to_object(&o.value, depth + 1)).collect())
        }
        Value::Dict(d) => {
            let mut out = Dictionary::new();
            for (k, o) in d {
                out.set(k.clone(), to_object(&o.value, depth + 1));
            }
            Object::Dictionary(out)
        }
    }
}
