//! Annotation and widget appearances that show a redacted string: the string is cut from
//! the literal text they draw, or, when they draw it split over several strings or by
//! glyph ids, the appearance is removed.

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use lopdf::{dictionary, Document, Object, ObjectId};

use super::strings::{Finder, MAX_SCAN_BYTES};

/// The appearance streams of an annotation (every state of N, R and D), as objects.
pub(super) fn appearance_streams(doc: &Document, annot: ObjectId) -> Vec<ObjectId> {
    let Some(ap) = doc
        .get_dictionary(annot)
        .ok()
        .and_then(|d| d.get(b"AP").ok())
        .and_then(|o| doc.dereference(o).ok())
        .and_then(|(_, o)| o.as_dict().ok())
    else {
        return Vec::new();
    };
    ap.iter()
        .flat_map(|(_, v)| crate::open::appearance_entry_streams(doc, v))
        .collect()
}

/// Cuts the string out of every string an appearance shows (`Tj`, `TJ`, `'`, `"`),
/// read byte for byte as the literal text it is; the number of strings changed.
pub(super) fn cut_appearance(doc: &mut Document, annot: ObjectId, find: Finder) -> usize {
    use pdf_content::{parse, PdfString, Value};
    let mut changed = 0;
    for id in appearance_streams(doc, annot) {
        let Ok(s) = doc.get_object(id).and_then(Object::as_stream) else {
            continue;
        };
        let Ok(bytes) = s.decompressed_content_with_limit(MAX_SCAN_BYTES) else {
            continue;
        };
        let mut edits = Vec::new();
        let mut cut_string = |p: &PdfString, span: std::ops::Range<usize>| {
            // Byte i of the string is char i of `text`; `starts` maps UTF-8 offsets back.
            let text: String = p.bytes.iter().map(|&b| char::from(b)).collect();
            let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
            let ranges = find(&text);
            if ranges.is_empty() {
                return;
            }
            let keep: Vec<u8> = p
                .bytes
                .iter()
                .enumerate()
                .filter(|(i, _)| !ranges.iter().any(|&(a, b)| (a..b).contains(&starts[*i])))
                .map(|(_, &b)| b)
                .collect();
            let mut out = Vec::new();
            pdf_content::write::write_string(
                &mut out,
                &PdfString {
                    bytes: keep,
                    hex: p.hex,
                },
            );
            edits.push((span, out));
        };
        for op in parse(&bytes) {
            let Some(operand) = op.shown_operand() else {
                continue;
            };
            match &operand.value {
                Value::String(p) => cut_string(p, operand.span.clone()),
                Value::Array(items) => {
                    for item in items {
                        if let Value::String(p) = &item.value {
                            cut_string(p, item.span.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        if edits.is_empty() {
            continue;
        }
        let Ok(new) = pdf_content::write::patch(&bytes, &edits) else {
            continue;
        };
        let mut enc = ZlibEncoder::new(Vec::new(), Compression::default());
        if enc.write_all(&new).is_err() {
            continue;
        }
        let Ok(compressed) = enc.finish() else {
            continue;
        };
        if let Ok(s) = doc.get_object_mut(id).and_then(Object::as_stream_mut) {
            s.dict.remove(b"DecodeParms");
            s.dict.set("Filter", Object::Name(b"FlateDecode".to_vec()));
            s.set_content(compressed);
            changed += edits.len();
        }
    }
    changed
}

/// Whether the annotation's normal appearance draws the string as literal text.
pub(super) fn appearance_shows(doc: &Document, annot: ObjectId, find: Finder) -> bool {
    let Ok(d) = doc.get_dictionary(annot) else {
        return false;
    };
    let Ok(ap) = d
        .get(b"AP")
        .and_then(|o| doc.dereference(o))
        .and_then(|(_, o)| o.as_dict())
    else {
        return false;
    };
    let mut streams = Vec::new();
    for (_, v) in ap.iter() {
        match doc.dereference(v).map(|(_, o)| o) {
            Ok(Object::Stream(s)) => streams.push(s),
            Ok(Object::Dictionary(states)) => {
                for (_, s) in states.iter() {
                    if let Ok((_, Object::Stream(s))) = doc.dereference(s) {
                        streams.push(s);
                    }
                }
            }
            _ => {}
        }
    }
    streams.iter().any(|s| {
        s.decompressed_content_with_limit(MAX_SCAN_BYTES)
            .is_ok_and(|b| !find(&String::from_utf8_lossy(&b)).is_empty())
    })
}

/// Gives an annotation that is not a widget an empty normal appearance (a form XObject
/// the size of its /Rect that draws nothing) in place of every appearance it had: what
/// it showed is gone, and no viewer draws it anew from its /Contents. False for a widget
/// or an annotation without a usable /Rect (left as it was).
pub(super) fn blank_appearance(doc: &mut Document, annot: ObjectId) -> bool {
    let Ok(d) = doc.get_dictionary(annot) else {
        return false;
    };
    let widget = d.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Widget".as_slice())
        || d.has(b"FT");
    let rect: Option<Vec<f32>> = d
        .get(b"Rect")
        .and_then(Object::as_array)
        .ok()
        .map(|a| a.iter().filter_map(|v| v.as_float().ok()).collect());
    let Some([x0, y0, x1, y1]) = rect.and_then(|r| <[f32; 4]>::try_from(r).ok()) else {
        return false;
    };
    if widget || !(x1 - x0).is_finite() || !(y1 - y0).is_finite() {
        return false;
    }
    let (w, h) = ((x1 - x0).abs(), (y1 - y0).abs());
    let empty = doc.add_object(lopdf::Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), w.into(), h.into()],
        },
        Vec::new(),
    ));
    let Ok(d) = doc.get_object_mut(annot).and_then(Object::as_dict_mut) else {
        return false;
    };
    d.set("AP", dictionary! { "N" => empty });
    d.remove(b"AS");
    true
}

/// Removes the appearance streams of annotations and widgets that showed the string; a
/// widget's field is then drawn by the viewer from its (redacted) value.
pub(super) fn drop_appearances(doc: &mut Document, ids: &[ObjectId]) {
    let mut widget = false;
    for id in ids {
        if let Ok(d) = doc.get_object_mut(*id).and_then(Object::as_dict_mut) {
            widget |= d.get(b"Subtype").and_then(Object::as_name).ok()
                == Some(b"Widget".as_slice())
                || d.has(b"FT");
            d.remove(b"AP");
            // A field's widgets hang below it: their appearances show the value too.
            let kids: Vec<ObjectId> = d
                .get(b"Kids")
                .and_then(Object::as_array)
                .map(|a| a.iter().filter_map(|k| k.as_reference().ok()).collect())
                .unwrap_or_default();
            for kid in kids {
                if let Ok(k) = doc.get_object_mut(kid).and_then(Object::as_dict_mut) {
                    k.remove(b"AP");
                }
            }
        }
    }
    if !widget {
        return;
    }
    let acro = doc
        .catalog()
        .ok()
        .and_then(|c| c.get(b"AcroForm").ok().cloned());
    match acro {
        Some(Object::Reference(id)) => {
            if let Ok(d) = doc.get_object_mut(id).and_then(Object::as_dict_mut) {
                d.set("NeedAppearances", true);
            }
        }
        Some(Object::Dictionary(_)) => {
            if let Ok(c) = doc.catalog_mut() {
                if let Ok(Object::Dictionary(d)) = c.get_mut(b"AcroForm") {
                    d.set("NeedAppearances", true);
                }
            }
        }
        _ => {}
    }
}

/// An annotation whose normal appearance shows a redaction's text.
pub(super) struct Shown {
    pub annot: ObjectId,
    pub page: u32,
    /// Its /Rect as a top-left display box.
    pub rect: [f64; 4],
    /// Drawn as literal text (which can be cut from the strings it is drawn by); else by
    /// glyph ids, read by the page interpreter.
    pub literal: bool,
}

/// Annotations on the pages of `edit`'s scope whose normal appearance draws the text, as
/// literal strings or by glyph ids of a CID font (as in a signature's appearance). With
/// `region` or `span_ids`, only annotations inside the region or over one of those spans.
pub(super) fn drawn_text(
    run: &mut crate::run::Run,
    edit: &crate::types::Edit,
    matcher: &crate::find::Matcher,
    spans: Option<&[crate::read::PageText]>,
) -> Vec<Shown> {
    use crate::find::{inside, line_matches, mostly_overlaps, span_boxes};
    use crate::model::{drawn, text::page_geom_box};
    let scope = &edit.scope;
    let ids = run.page_ids();
    let mut out = Vec::new();
    for page in super::scope_pages(run, edit) {
        let Some(&page_id) = ids.get(&page) else {
            continue;
        };
        for (annot, stream) in drawn::page_appearances(&run.doc, page_id) {
            let Some(rect) = page_geom_box(&run.doc, page_id, annot) else {
                continue;
            };
            let in_region = scope
                .region
                .as_ref()
                .is_none_or(|r| r.page == page && inside(rect, r.bbox));
            let on_span = match (&scope.span_ids, spans) {
                (Some(ids), Some(spans)) => span_boxes(spans, page, ids)
                    .iter()
                    .any(|b| mostly_overlaps(rect, *b)),
                _ => true,
            };
            if !in_region || !on_span {
                continue;
            }
            let literal = |t: &str| -> Vec<(usize, usize)> {
                line_matches(matcher, t, "")
                    .into_iter()
                    .map(|(s, e, _)| (s, e))
                    .collect()
            };
            if appearance_shows(&run.doc, annot, &literal) {
                out.push(Shown {
                    annot,
                    page,
                    rect,
                    literal: true,
                });
                continue;
            }
            let lines = drawn::appearance_lines(&mut run.doc, &mut run.fonts, stream);
            if lines
                .iter()
                .any(|l| !line_matches(matcher, l, "").is_empty())
            {
                out.push(Shown {
                    annot,
                    page,
                    rect,
                    literal: false,
                });
            }
        }
    }
    out
}
