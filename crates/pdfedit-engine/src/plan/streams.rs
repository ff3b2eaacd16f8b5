//! Writing edited content streams back into the document, and the resource entries
//! (fonts, copied forms) they need.

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use lopdf::{Dictionary, Document, Object, ObjectId, Stream};
use pdf_content::StreamId;

use crate::model::PageModel;

/// Replaces `stream`'s content with `decoded` (Flate-compressed). A Form XObject is copied
/// first and this page's /XObject entry pointed at the copy, so other users of the form
/// keep the original; so is a page content stream that other pages draw too (qpdf shares
/// the streams of a file whose pages it repeats), in this page's /Contents.
pub(crate) fn write_stream(
    doc: &mut Document,
    model: &PageModel,
    stream: StreamId,
    decoded: &[u8],
) -> Result<(), String> {
    let mut enc = ZlibEncoder::new(Vec::new(), Compression::default());
    enc.write_all(decoded).map_err(|e| e.to_string())?;
    let compressed = enc.finish().map_err(|e| e.to_string())?;
    match stream {
        StreamId::PageContent { index, object_id } if shared(doc, model.page_id, object_id) => {
            let copy = flate_copy(doc, object_id, compressed)?;
            let copy_id = doc.add_object(copy);
            point_contents(doc, model.page_id, index, object_id, copy_id)
        }
        StreamId::PageContent { object_id, .. } => {
            let s = doc
                .get_object_mut(object_id)
                .and_then(Object::as_stream_mut)
                .map_err(|e| e.to_string())?;
            set_flate(s, compressed);
            Ok(())
        }
        StreamId::Form { object_id } => {
            let copy = flate_copy(doc, object_id, compressed)?;
            let name = xobject_name(doc, model.page_id, object_id)
                .ok_or_else(|| "the form is not drawn directly by the page".to_string())?;
            let copy_id = doc.add_object(copy);
            let xobjects = page_subdict_mut(doc, model.page_id, b"XObject")?;
            xobjects.set(name, Object::Reference(copy_id));
            Ok(())
        }
    }
}

/// Whether content stream `object_id` of page `page_id` is drawn by another page too, or
/// more than once by this one.
fn shared(doc: &Document, page_id: ObjectId, object_id: ObjectId) -> bool {
    let uses = |page: ObjectId| {
        doc.get_page_contents(page)
            .iter()
            .filter(|&&id| id == object_id)
            .count()
    };
    uses(page_id) > 1 || doc.page_iter().any(|p| p != page_id && uses(p) > 0)
}

/// Points the `index`-th stream of page `page_id`'s /Contents (counted as
/// `Document::get_page_contents` counts them), which is `old`, at `new`; /Contents is
/// written as the page's own array when it was one (shared arrays stay as they were).
fn point_contents(
    doc: &mut Document,
    page_id: ObjectId,
    index: usize,
    old: ObjectId,
    new: ObjectId,
) -> Result<(), String> {
    let contents = doc
        .get_dictionary(page_id)
        .and_then(|d| d.get(b"Contents"))
        .map_err(|e| e.to_string())?;
    let contents = match contents {
        Object::Reference(id) if *id == old => Object::Reference(new),
        other => {
            let mut parts = doc
                .dereference(other)
                .and_then(|(_, o)| o.as_array())
                .map_err(|e| e.to_string())?
                .clone();
            let slot = parts
                .iter_mut()
                .filter(|o| o.as_reference().is_ok())
                .nth(index)
                .filter(|o| o.as_reference().ok() == Some(old))
                .ok_or_else(|| "the page's /Contents changed under the edit".to_string())?;
            *slot = Object::Reference(new);
            Object::Array(parts)
        }
    };
    doc.get_dictionary_mut(page_id)
        .map_err(|e| e.to_string())?
        .set("Contents", contents);
    Ok(())
}

/// A new stream with `object_id`'s dictionary and `compressed` (Flate) as its content.
fn flate_copy(doc: &Document, object_id: ObjectId, compressed: Vec<u8>) -> Result<Stream, String> {
    let original = doc
        .get_object(object_id)
        .and_then(Object::as_stream)
        .map_err(|e| e.to_string())?;
    let mut copy = Stream::new(original.dict.clone(), Vec::new());
    set_flate(&mut copy, compressed);
    Ok(copy)
}

fn set_flate(s: &mut Stream, compressed: Vec<u8>) {
    s.dict.remove(b"DecodeParms");
    s.dict.set("Filter", Object::Name(b"FlateDecode".to_vec()));
    s.set_content(compressed);
}

/// The /XObject name under which the page draws `form`.
fn xobject_name(doc: &Document, page_id: ObjectId, form: ObjectId) -> Option<Vec<u8>> {
    let res = resources(doc, page_id)?;
    let x = res.get(b"XObject").ok()?;
    let x = doc.dereference(x).ok()?.1.as_dict().ok()?;
    x.iter()
        .find(|(_, v)| v.as_reference().ok() == Some(form))
        .map(|(k, _)| k.clone())
}

pub(crate) fn resources(doc: &Document, page_id: ObjectId) -> Option<&Dictionary> {
    let mut id = page_id;
    for _ in 0..32 {
        let d = doc.get_dictionary(id).ok()?;
        if let Ok(r) = d.get(b"Resources") {
            return doc.dereference(r).ok()?.1.as_dict().ok();
        }
        id = d.get(b"Parent").ok()?.as_reference().ok()?;
    }
    None
}

/// The page's own resources sub-dictionary `key` (e.g. /Font), made direct and writable.
/// Inherited or shared resources are copied into the page first, so siblings are untouched.
pub(crate) fn page_subdict_mut<'a>(
    doc: &'a mut Document,
    page_id: ObjectId,
    key: &[u8],
) -> Result<&'a mut Dictionary, String> {
    let mut res = resources(doc, page_id).cloned().unwrap_or_default();
    let mut sub = match res.get(key) {
        Ok(o) => doc
            .dereference(o)
            .ok()
            .and_then(|(_, o)| o.as_dict().ok().cloned())
            .unwrap_or_default(),
        Err(_) => Dictionary::new(),
    };
    // Keep the entries as they are (references stay references).
    for (k, v) in std::mem::take(&mut sub).into_iter() {
        sub.set(k, v);
    }
    res.set(key.to_vec(), Object::Dictionary(sub));
    let page = doc
        .get_object_mut(page_id)
        .and_then(Object::as_dict_mut)
        .map_err(|e| e.to_string())?;
    page.set("Resources", Object::Dictionary(res));
    let res = page
        .get_mut(b"Resources")
        .and_then(Object::as_dict_mut)
        .map_err(|e| e.to_string())?;
    res.get_mut(key)
        .and_then(Object::as_dict_mut)
        .map_err(|e| e.to_string())
}

/// Adds `font_id` to the fonts the stream can use and returns its new resource name.
pub(crate) fn add_font_resource(
    doc: &mut Document,
    model: &PageModel,
    stream: StreamId,
    font_id: ObjectId,
) -> Result<Vec<u8>, String> {
    if let StreamId::Form { .. } = stream {
        return Err("a font switch inside a form is not supported yet".into());
    }
    let fonts = page_subdict_mut(doc, model.page_id, b"Font")?;
    if let Some((k, _)) = fonts
        .iter()
        .find(|(_, v)| v.as_reference().ok() == Some(font_id))
    {
        return Ok(k.clone());
    }
    let name = (1..)
        .map(|n| format!("PEF{n}").into_bytes())
        .find(|n| !fonts.has(n))
        .unwrap_or_else(|| b"PEF".to_vec());
    fonts.set(name.clone(), Object::Reference(font_id));
    Ok(name)
}

/// Wraps the page's content in q/Q (it may leave the graphics state changed) and appends
/// `ops` as a new stream after it; the old streams' bytes stay as they are.
pub(crate) fn append_page_stream(
    doc: &mut Document,
    page_id: ObjectId,
    ops: Vec<u8>,
) -> Result<(), String> {
    let old = doc
        .get_dictionary(page_id)
        .map_err(|e| e.to_string())?
        .get(b"Contents")
        .ok()
        .cloned();
    let mut parts: Vec<Object> = match old {
        Some(Object::Reference(id)) => match doc.get_object(id) {
            Ok(Object::Array(a)) => a.clone(),
            _ => vec![Object::Reference(id)],
        },
        Some(Object::Array(a)) => a,
        _ => Vec::new(),
    };
    let open = doc.add_object(Stream::new(Dictionary::new(), b"q\n".to_vec()));
    let mut tail = b"\nQ\n".to_vec();
    tail.extend(ops);
    let close = doc.add_object(Stream::new(Dictionary::new(), tail));
    parts.insert(0, Object::Reference(open));
    parts.push(Object::Reference(close));
    doc.get_dictionary_mut(page_id)
        .map_err(|e| e.to_string())?
        .set("Contents", Object::Array(parts));
    Ok(())
}

/// Bytes as an uppercase hex string, the body of a `<…>` string in a content stream.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}
