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
    // Some writers (cpdf) put the encryption dictionary in the trailer itself rather than
    // in an object, and lopdf looks for it only through a reference (and then loads no
    // object at all). Append an update that moves it into an object of its own (the same
    // dictionary; its strings written as hex) and load that.
    let patched = with_indirect_encrypt(bytes)?;
    let options = LoadOptions::with_password(password);
    let doc = Document::load_mem_with_options(&patched, options).ok()?;
    let state = doc.encryption_state.clone()?;
    Some((doc, state))
}

/// `bytes` plus an incremental update whose trailer refers to the trailer's direct
/// `/Encrypt` dictionary as a new object; `None` when the trailer has no such dictionary.
fn with_indirect_encrypt(bytes: &[u8]) -> Option<Vec<u8>> {
    let probe = Document::load_mem(bytes).ok()?;
    let Ok(Object::Dictionary(encrypt)) = probe.trailer.get(b"Encrypt") else {
        return None;
    };
    let prev = last_startxref(bytes)?;
    let size = probe
        .trailer
        .get(b"Size")
        .and_then(Object::as_i64)
        .ok()
        .filter(|&n| n > 0 && n < 10_000_000)?;
    let mut out = bytes.to_vec();
    out.extend_from_slice(b"\n");
    let obj_at = out.len();
    out.extend_from_slice(format!("{size} 0 obj\n").as_bytes());
    write_object(&mut out, &Object::Dictionary(encrypt.clone()));
    out.extend_from_slice(b"\nendobj\n");
    let xref_at = out.len();
    out.extend_from_slice(format!("xref\n{size} 1\n{obj_at:010} 00000 n \ntrailer\n").as_bytes());
    let mut trailer = probe.trailer.clone();
    trailer.set("Encrypt", Object::Reference((u32::try_from(size).ok()?, 0)));
    trailer.set("Size", size + 1);
    trailer.set("Prev", i64::try_from(prev).ok()?);
    write_object(&mut out, &Object::Dictionary(trailer));
    out.extend_from_slice(format!("\nstartxref\n{xref_at}\n%%EOF\n").as_bytes());
    Some(out)
}

/// The offset after the file's last `startxref`.
fn last_startxref(bytes: &[u8]) -> Option<usize> {
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
    fn a_direct_encrypt_dictionary_becomes_an_object() {
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
        assert!(with_indirect_encrypt(&bytes).is_none());
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
