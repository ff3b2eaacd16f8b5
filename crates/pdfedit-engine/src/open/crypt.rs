//! Opening an encrypted document for editing: decrypted objects plus the security
//! handler's state, so the output can be encrypted again with the same keys.

use lopdf::encryption::EncryptionState;
use lopdf::{Document, LoadOptions, Object};
use pdf_content::write::{write_hex_string, write_name, write_number};

/// The decrypted document and its security state, or `None` when lopdf cannot decrypt
/// (and so cannot write back) this security handler.
pub(crate) fn open_encrypted(bytes: &[u8], password: &str) -> Option<(Document, EncryptionState)> {
    let options = LoadOptions::with_password(password);
    if let Some(found) = Document::load_mem_with_options(bytes, options)
        .ok()
        .and_then(|d| d.encryption_state.clone().map(|s| (d, s)))
    {
        return Some(found);
    }
    // Two trailers lopdf cannot open, patched by an appended update that leaves every
    // object as it is: see `with_patched_trailer`.
    let patched = with_patched_trailer(bytes)?;
    let options = LoadOptions::with_password(password);
    let doc = Document::load_mem_with_options(&patched, options).ok()?;
    let state = doc.encryption_state.clone()?;
    Some((doc, state))
}

/// `bytes` plus an incremental update whose trailer lopdf can open; `None` when the
/// trailer needs neither change:
/// - Some writers (cpdf) put the encryption dictionary in the trailer itself rather than
///   in an object, and lopdf looks for it only through a reference (and then loads no
///   object at all): the same dictionary, its strings written as hex, becomes an object.
/// - Without a file identifier (old writers, e.g. an RC4-40 PDF 1.2 scan) the key is
///   derived from an empty first identifier, as Acrobat, PDFium and qpdf read such files;
///   lopdf refuses a missing `/ID`, so the trailer gets `[<> <>]`, which derives the
///   same key and is written back with the output.
fn with_patched_trailer(bytes: &[u8]) -> Option<Vec<u8>> {
    let probe = Document::load_mem(bytes).ok()?;
    let direct = match probe.trailer.get(b"Encrypt") {
        Ok(Object::Dictionary(encrypt)) => Some(encrypt.clone()),
        Ok(Object::Reference(_)) => None,
        _ => return None,
    };
    let has_id = probe
        .trailer
        .get(b"ID")
        .and_then(Object::as_array)
        .is_ok_and(|ids| ids.first().is_some_and(|id| id.as_str().is_ok()));
    if direct.is_none() && has_id {
        return None;
    }
    let prev = last_startxref(bytes)?;
    let size = probe
        .trailer
        .get(b"Size")
        .and_then(Object::as_i64)
        .ok()
        .filter(|&n| n > 0 && n < 10_000_000)?;
    let mut trailer = probe.trailer.clone();
    let mut out = bytes.to_vec();
    out.extend_from_slice(b"\n");
    // Without a new object, the section redefines only the free list's head.
    let mut xref = "xref\n0 1\n0000000000 65535 f \n".to_string();
    if let Some(encrypt) = direct {
        let obj_at = out.len();
        out.extend_from_slice(format!("{size} 0 obj\n").as_bytes());
        write_object(&mut out, &Object::Dictionary(encrypt));
        out.extend_from_slice(b"\nendobj\n");
        xref = format!("xref\n{size} 1\n{obj_at:010} 00000 n \n");
        trailer.set("Encrypt", Object::Reference((u32::try_from(size).ok()?, 0)));
        trailer.set("Size", size + 1);
    }
    if !has_id {
        let empty = || Object::String(Vec::new(), lopdf::StringFormat::Hexadecimal);
        trailer.set("ID", Object::Array(vec![empty(), empty()]));
    }
    let xref_at = out.len();
    out.extend_from_slice(format!("{xref}trailer\n").as_bytes());
    trailer.set("Prev", i64::try_from(prev).ok()?);
    write_object(&mut out, &Object::Dictionary(trailer));
    out.extend_from_slice(format!("\nstartxref\n{xref_at}\n%%EOF\n").as_bytes());
    Some(out)
}

/// The offset after the file's last `startxref` (where its newest xref section starts).
pub(crate) fn last_startxref(bytes: &[u8]) -> Option<usize> {
    let key = b"startxref";
    let tail_from = bytes.len().saturating_sub(4096);
    let pos = bytes[tail_from..]
        .windows(key.len())
        .rposition(|w| w == key)?
        + tail_from
        + key.len();
    let digits: String = bytes[pos..]
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take_while(|b| b.is_ascii_digit())
        .map(|&b| char::from(b))
        .collect();
    digits.parse().ok()
}

/// Writes a direct object (the trailer's entries: no streams).
fn write_object(out: &mut Vec<u8>, obj: &Object) {
    match obj {
        Object::Null => out.extend_from_slice(b"null"),
        Object::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Object::Integer(i) => out.extend_from_slice(i.to_string().as_bytes()),
        Object::Real(r) => write_number(out, f64::from(*r)),
        Object::Name(n) => write_name(out, n),
        Object::String(s, _) => write_hex_string(out, s),
        Object::Reference((n, g)) => out.extend_from_slice(format!("{n} {g} R").as_bytes()),
        Object::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                write_object(out, item);
            }
            out.push(b']');
        }
        Object::Dictionary(d) => {
            out.extend_from_slice(b"<<");
            for (k, v) in d.iter() {
                write_name(out, k);
                out.push(b' ');
                write_object(out, v);
            }
            out.extend_from_slice(b">>");
        }
        Object::Stream(_) => out.extend_from_slice(b"null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_lopdf_cannot_open_get_an_update() {
        let dict = |entries: Vec<(&str, Object)>| {
            let mut d = lopdf::Dictionary::new();
            for (k, v) in entries {
                d.set(k, v);
            }
            Object::Dictionary(d)
        };
        let mut doc = Document::with_version("1.4");
        let pages = doc.new_object_id();
        let root = doc.add_object(dict(vec![
            ("Type", Object::Name(b"Catalog".to_vec())),
            ("Pages", Object::Reference(pages)),
        ]));
        doc.objects.insert(
            pages,
            dict(vec![
                ("Type", Object::Name(b"Pages".to_vec())),
                ("Kids", Object::Array(vec![])),
                ("Count", Object::Integer(0)),
            ]),
        );
        doc.trailer.set("Root", root);
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).expect("save");
        // No /Encrypt at all: nothing to patch.
        assert!(with_patched_trailer(&bytes).is_none());
        // An encryption dictionary by reference but no /ID: the update adds an empty one
        // after the file's own bytes.
        let enc_id = doc.add_object(dict(vec![("Filter", Object::Name(b"Standard".to_vec()))]));
        doc.trailer.set("Encrypt", enc_id);
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).expect("save");
        let patched = with_patched_trailer(&bytes).expect("an /ID is added");
        assert!(patched.starts_with(&bytes));
        let reread = Document::load_mem(&patched).expect("the update reads");
        let ids = reread
            .trailer
            .get(b"ID")
            .and_then(Object::as_array)
            .expect("/ID");
        assert_eq!(ids.len(), 2);
        assert!(ids.iter().all(|id| id.as_str().is_ok_and(<[u8]>::is_empty)));
        assert_eq!(
            reread.trailer.get(b"Encrypt").ok(),
            Some(&Object::Reference(enc_id))
        );
        let mut out = Vec::new();
        let enc = dict(vec![
            ("Filter", Object::Name(b"Standard".to_vec())),
            (
                "O",
                Object::String(vec![0, 255, b'(', b')'], lopdf::StringFormat::Literal),
            ),
            ("P", Object::Integer(-4)),
        ]);
        write_object(&mut out, &enc);
        assert_eq!(out, b"<</Filter /Standard/O <00FF2829>/P -4>>".to_vec());
        assert_eq!(last_startxref(b"x\nstartxref\n 1234\n%%EOF"), Some(1234));
    }
}
