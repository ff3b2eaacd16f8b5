//! Small typed readers over lopdf objects, resolving references on the way. Fonts in the wild
//! put references anywhere (even inside `/Widths` arrays), so every read dereferences.

use lopdf::{Dictionary, Document, Object};

/// Decoded streams larger than this are refused: a font program or CMap never needs more,
/// and a bomb must not exhaust memory.
pub const MAX_STREAM: usize = 64 << 20;

/// `obj` with a reference followed (itself when it is no reference or a dangling one).
pub fn deref<'a>(doc: &'a Document, obj: &'a Object) -> &'a Object {
    doc.dereference(obj).map_or(obj, |(_, o)| o)
}

/// The value of `key`, resolved; a key whose value is null is absent (PDF 32000 7.3.7).
pub fn get<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    dict.get(key)
        .ok()
        .map(|o| deref(doc, o))
        .filter(|o| !matches!(o, Object::Null))
}

/// A number, resolved; not a number, or not finite, is `None`.
pub fn num_of(doc: &Document, obj: &Object) -> Option<f64> {
    match deref(doc, obj) {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)).filter(|v| v.is_finite()),
        _ => None,
    }
}

/// The number at `key`.
pub fn num(doc: &Document, dict: &Dictionary, key: &[u8]) -> Option<f64> {
    get(doc, dict, key).and_then(|o| num_of(doc, o))
}

/// The name at `key`.
pub fn name<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a [u8]> {
    match get(doc, dict, key)? {
        Object::Name(n) => Some(n.as_slice()),
        _ => None,
    }
}

/// The dictionary at `key` (a stream's dictionary too).
pub fn dict<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
    match get(doc, dict, key)? {
        Object::Dictionary(d) => Some(d),
        Object::Stream(s) => Some(&s.dict),
        _ => None,
    }
}

/// The array at `key`.
pub fn array<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a [Object]> {
    match get(doc, dict, key)? {
        Object::Array(a) => Some(a.as_slice()),
        _ => None,
    }
}

/// The array at `key` as numbers, an element that is no number read as 0.
pub fn nums(doc: &Document, dict: &Dictionary, key: &[u8]) -> Option<Vec<f64>> {
    array(doc, dict, key).map(|a| a.iter().map(|o| num_of(doc, o).unwrap_or(0.0)).collect())
}

/// The decoded bytes of a stream, refused past [`MAX_STREAM`].
pub fn stream_bytes(doc: &Document, obj: &Object) -> Option<Vec<u8>> {
    match deref(doc, obj) {
        Object::Stream(s) => s.get_plain_content_with_limit(MAX_STREAM).ok(),
        _ => None,
    }
}

/// The string or name at `key` as text (bytes read as UTF-8, lossily).
pub fn text(doc: &Document, dict: &Dictionary, key: &[u8]) -> Option<String> {
    match get(doc, dict, key)? {
        Object::String(s, _) => Some(String::from_utf8_lossy(s).into_owned()),
        Object::Name(n) => Some(String::from_utf8_lossy(n).into_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::dictionary;

    #[test]
    fn null_is_absent_and_a_number_is_finite() {
        let mut doc = Document::with_version("1.7");
        let null_ref = doc.add_object(Object::Null);
        let d = dictionary! {
            "A" => Object::Null,
            "B" => null_ref,
            "C" => 3,
            "D" => Object::Real(f32::INFINITY),
            "E" => vec![1.into(), Object::Real(f32::NAN), 2.into()],
        };
        assert!(get(&doc, &d, b"A").is_none());
        assert!(get(&doc, &d, b"B").is_none());
        assert_eq!(num(&doc, &d, b"C"), Some(3.0));
        assert_eq!(num(&doc, &d, b"D"), None);
        assert_eq!(nums(&doc, &d, b"E"), Some(vec![1.0, 0.0, 2.0]));
    }
}
