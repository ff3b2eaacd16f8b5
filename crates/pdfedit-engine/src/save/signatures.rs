//! Signed documents (SPEC rule 13): the DocMDP permission of a certification signature,
//! and taking the signatures out of a document that is rewritten whole (a redaction).

use lopdf::{Document, Object, ObjectId};

/// What a certification signature allows after it (ISO 32000-1, 12.8.2.2, /P):
/// 1 no change, 2 form filling and signing, 3 also annotations.
pub(crate) fn docmdp_permission(doc: &Document) -> Option<i64> {
    let root = doc.catalog().ok()?;
    let perms = resolve(doc, root.get(b"Perms").ok()?)?.as_dict().ok()?;
    let sig = resolve(doc, perms.get(b"DocMDP").ok()?)?.as_dict().ok()?;
    let refs = resolve(doc, sig.get(b"Reference").ok()?)?.as_array().ok()?;
    for r in refs {
        let Some(Ok(r)) = resolve(doc, r).map(Object::as_dict) else {
            continue;
        };
        let method = r.get(b"TransformMethod").and_then(Object::as_name).ok();
        if method != Some(b"DocMDP".as_slice()) {
            continue;
        }
        let p = r
            .get(b"TransformParams")
            .ok()
            .and_then(|t| resolve(doc, t))
            .and_then(|t| t.as_dict().ok())
            .and_then(|t| t.get(b"P").and_then(Object::as_i64).ok());
        // An absent /P means 2.
        return Some(p.unwrap_or(2));
    }
    None
}

/// Whether an edit breaks a certification signature's permission `p`: any change at all
/// under 1; under 2 and 3, anything but form filling (page content changed by a replace,
/// delete or insert, or a stamped mark). Annotation changes that 3 would allow are not
/// told apart from content changes, so they count as violations.
pub(crate) fn violates(p: i64, changed: bool, content_changed: bool) -> bool {
    match p {
        1 => changed,
        _ => content_changed,
    }
}

fn resolve<'a>(doc: &'a Document, obj: &'a Object) -> Option<&'a Object> {
    match obj {
        Object::Reference(id) => doc.get_object(*id).ok(),
        other => Some(other),
    }
}

/// Takes every signature out of `doc`: signature dictionaries lose /Contents and
/// /ByteRange, signature fields lose their value (/V), and the catalog its /Perms
/// (DocMDP, UR3). Returns how many signature dictionaries were emptied.
pub(crate) fn remove(doc: &mut Document) -> usize {
    let mut emptied = 0;
    let ids: Vec<ObjectId> = doc.objects.keys().copied().collect();
    for id in ids {
        let Some(Object::Dictionary(dict)) = doc.objects.get_mut(&id) else {
            continue;
        };
        let kind = dict.get(b"Type").and_then(Object::as_name).ok();
        let is_sig = matches!(kind, Some(b"Sig" | b"DocTimeStamp"))
            || (dict.has(b"ByteRange") && dict.has(b"Contents") && dict.has(b"Filter"));
        if is_sig {
            dict.remove(b"Contents");
            dict.remove(b"ByteRange");
            emptied += 1;
        }
        if dict.get(b"FT").and_then(Object::as_name).ok() == Some(b"Sig".as_slice()) {
            dict.remove(b"V");
            dict.remove(b"Lock");
            dict.remove(b"SV");
        }
    }
    if let Ok(root) = doc.catalog_mut() {
        root.remove(b"Perms");
    }
    emptied
}
