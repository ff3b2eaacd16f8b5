//! Saving an edit of a signed document as an incremental update (ISO 32000-1, 7.5.6):
//! the original bytes unchanged, then the objects the edit changed or added, a new
//! cross-reference section of the original's kind (table or stream) whose /Prev points
//! at the original's last one, and a trailer. The signed revision stays byte-identical,
//! so its signature still verifies for the bytes it covers.

use std::collections::BTreeMap;
use std::io::Write as _;

use lopdf::encryption::{encrypt_object, EncryptionState};
use lopdf::xref::XrefType;
use lopdf::{Dictionary, Document, Object, ObjectId, Stream, Writer};

use crate::open::crypt::last_startxref;
use crate::Error;

/// Objects lopdf keeps from the input's own structure and never writes back.
fn is_structure(obj: &Object) -> bool {
    obj.as_stream().is_ok_and(|s| {
        s.dict
            .get(b"Type")
            .and_then(Object::as_name)
            .is_ok_and(|t| t == b"XRef" || t == b"ObjStm")
    })
}

/// The ids of objects in `after` that are new or differ from `before`, in order.
pub(crate) fn changed_ids(before: &Document, after: &Document) -> Vec<ObjectId> {
    after
        .objects
        .iter()
        .filter(|(id, obj)| !is_structure(obj) && before.objects.get(id) != Some(*obj))
        .map(|(id, _)| *id)
        .collect()
}

/// `original` followed by an update holding what `after` changed against `before` (the
/// document as loaded from `original`, decrypted when it was encrypted). With
/// `protection`, the appended objects are encrypted with the document's own key; the
/// xref stream, when there is one, is not encrypted (ISO 32000-1, 7.6.1). No change at
/// all gives back `original` itself.
pub(crate) fn append(
    original: &[u8],
    before: &Document,
    after: &Document,
    protection: Option<&EncryptionState>,
) -> Result<Vec<u8>, Error> {
    let ids = changed_ids(before, after);
    if ids.is_empty() {
        return Ok(original.to_vec());
    }
    let fail = |m: String| Error::Engine(format!("writing the incremental update: {m}"));
    let prev = last_startxref(original)
        .ok_or_else(|| fail("the original file has no startxref".into()))?;
    let mut out = original.to_vec();
    if out.last() != Some(&b'\n') {
        out.push(b'\n');
    }
    let mut offsets: BTreeMap<u32, (u64, u16)> = BTreeMap::new();
    for id in &ids {
        let mut obj = after.objects[id].clone();
        if let Some(state) = protection {
            encrypt_object(state, *id, &mut obj).map_err(|e| fail(e.to_string()))?;
        }
        offsets.insert(id.0, (out.len() as u64, id.1));
        writeln!(out, "{} {} obj", id.0, id.1).map_err(|e| fail(e.to_string()))?;
        Writer::write_object(&mut out, &obj).map_err(|e| fail(e.to_string()))?;
        out.extend_from_slice(b"\nendobj\n");
    }
    // The new trailer repeats the previous one's entries (7.5.6) but the xref-stream
    // ones and /Prev, which are written fresh.
    let mut trailer = Dictionary::new();
    for key in [b"Root".as_slice(), b"Info", b"ID", b"Encrypt"] {
        if let Ok(v) = before.trailer.get(key) {
            trailer.set(key, v.clone());
        }
    }
    if let Some(id) = protection.and_then(EncryptionState::encrypt_object_id) {
        trailer.set("Encrypt", Object::Reference(id));
    }
    if let Ok(root) = after.trailer.get(b"Root") {
        trailer.set("Root", root.clone());
    }
    let claimed = before
        .trailer
        .get(b"Size")
        .and_then(Object::as_i64)
        .ok()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0);
    let highest = after.objects.keys().map(|id| id.0).max().unwrap_or(0);
    let mut size = claimed.max(highest + 1);
    trailer.set(
        "Prev",
        i64::try_from(prev).map_err(|e| fail(e.to_string()))?,
    );
    let xref_at = out.len() as u64;
    if matches!(
        before.reference_table.cross_reference_type,
        XrefType::CrossReferenceStream
    ) {
        // The original uses xref streams: the update does too, as one more object.
        let own = size;
        size += 1;
        offsets.insert(own, (xref_at, 0));
        let mut index = Vec::new();
        let mut data = Vec::new();
        for (first, run) in runs(&offsets) {
            index.push(Object::Integer(i64::from(first)));
            index.push(Object::Integer(run.len() as i64));
            for (offset, generation) in run {
                data.push(1u8);
                data.extend_from_slice(&u32::try_from(offset).unwrap_or(u32::MAX).to_be_bytes());
                data.extend_from_slice(&generation.to_be_bytes());
            }
        }
        let mut dict = trailer;
        dict.set("Type", Object::Name(b"XRef".to_vec()));
        dict.set("Size", i64::from(size));
        dict.set(
            "W",
            vec![Object::Integer(1), Object::Integer(4), Object::Integer(2)],
        );
        dict.set("Index", Object::Array(index));
        let stream = Object::Stream(Stream::new(dict, data));
        writeln!(out, "{own} 0 obj").map_err(|e| fail(e.to_string()))?;
        Writer::write_object(&mut out, &stream).map_err(|e| fail(e.to_string()))?;
        out.extend_from_slice(b"\nendobj\n");
    } else {
        out.extend_from_slice(b"xref\n");
        for (first, run) in runs(&offsets) {
            out.extend_from_slice(format!("{first} {}\n", run.len()).as_bytes());
            for (offset, generation) in run {
                out.extend_from_slice(format!("{offset:010} {generation:05} n \n").as_bytes());
            }
        }
        trailer.set("Size", i64::from(size));
        out.extend_from_slice(b"trailer\n");
        Writer::write_object(&mut out, &Object::Dictionary(trailer))
            .map_err(|e| fail(e.to_string()))?;
        out.push(b'\n');
    }
    out.extend_from_slice(format!("startxref\n{xref_at}\n%%EOF\n").as_bytes());
    Ok(out)
}

/// Consecutive object numbers grouped into xref subsections.
fn runs(offsets: &BTreeMap<u32, (u64, u16)>) -> Vec<(u32, Vec<(u64, u16)>)> {
    let mut out: Vec<(u32, Vec<(u64, u16)>)> = Vec::new();
    for (&n, &entry) in offsets {
        match out.last_mut() {
            Some((first, run)) if *first + run.len() as u32 == n => run.push(entry),
            _ => out.push((n, vec![entry])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsections_group_consecutive_numbers() {
        let offsets: BTreeMap<u32, (u64, u16)> = [(3, (10, 0)), (4, (20, 0)), (9, (30, 1))]
            .into_iter()
            .collect();
        let r = runs(&offsets);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0], (3, vec![(10, 0), (20, 0)]));
        assert_eq!(r[1], (9, vec![(30, 1)]));
    }
}
