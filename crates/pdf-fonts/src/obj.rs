//! Small typed readers over lopdf objects, resolving references on the way. Fonts in the wild
//! put references anywhere (even inside `/Widths` arrays), so every read dereferences.

use lopdf::{Dictionary, Document, Object};

/// Decoded streams larger than this are refused: a font program or CMap never needs more,
/// and a bomb must not exhaust memory.
pub const MAX_STREAM: usize = 64 << 20;

pub fn deref<'a>(doc: &'a Document, obj: &'a Object) -> &'a Object {
    doc.dereference(obj).map_or(obj, |(_, o)| o)
}

pub fn get<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    dict.get(key).ok().map(|o| deref(doc, o))
}

pub fn num_of(doc: &Document, obj: &Object) -> Option<f64> {
    match deref(doc, obj) {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)),
        _ => None,
    }
}

pub fn num(doc: &Document, dict: &Dictionary, key: &[u8]) -> Option<f64> {
    get(doc, dict, key).and_then(|o| num_of(doc, o))
}

pub fn name<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a [u8]> {
    match get(doc, dict, key)? {
        Object::Name(n) => Some(n.as_slice()),
        _ => None,
    }
}

pub fn dict<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
    match get(doc, dict, key)? {
        Object::Dictionary(d) => Some(d),
        Object::Stream(s) => Some(&s.dict),
        _ => None,
    }
}

pub fn array<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a [Object]> {
    match get(doc, dict, key)? {
        Object::Array(a) => Some(a.as_slice()),
        _ => None,
    }
}

pub fn nums(doc: &Document, dict: &Dictionary, key: &[u8]) -> Option<Vec<f64>> {
    array(doc, dict, key).map(|a| a.iter().map(|o| num_of(doc, o).unwrap_or(0.0)).collect())
}

pub fn stream_bytes(doc: &Document, obj: &Object) -> Option<Vec<u8>> {
    match deref(doc, obj) {
        Object::Stream(s) => s.get_plain_content_with_limit(MAX_STREAM).ok(),
        _ => None,
    }
}

pub fn text(doc: &Document, dict: &Dictionary, key: &[u8]) -> Option<String> {
    match get(doc, dict, key)? {
        Object::String(s, _) => Some(String::from_utf8_lossy(s).into_owned()),
        Object::Name(n) => Some(String::from_utf8_lossy(n).into_owned()),
        _ => None,
    }
}
