//! Writing the document out: a full rewrite by lopdf, object streams dropped (an
//! encrypted input is encrypted again with the state `open::crypt` kept); for a signed
//! document, an incremental update after the original bytes (`incremental`).

pub(crate) mod incremental;
pub(crate) mod signatures;

use lopdf::{Document, Object};

use crate::Error;

/// The document saved as the edit run saves it (full rewrite, object streams dropped),
/// for a caller holding it only borrowed: [`save_in_place`] of a copy.
pub(crate) fn save(doc: &Document) -> Result<Vec<u8>, Error> {
    save_in_place(&mut doc.clone())
}

/// [`save`] without copying the document: what the write needs changed (`max_id`, the
/// trailer's `/Size`, and the version lopdf raises for a cross-reference stream) is changed
/// for the write and put back after it, so the document is left as it was and the bytes
/// are those of a save of a copy. A copy cost as much as the write itself (every object,
/// every stream's data).
pub(crate) fn save_in_place(doc: &mut Document) -> Result<Vec<u8>, Error> {
    // lopdf keeps the input's xref and object streams as objects but never writes them.
    // The trailer's /Size is written from max_id; a loaded file may claim more objects
    // than it holds (or count the streams not written), which qpdf reports.
    let max_id = doc
        .objects
        .iter()
        .filter(|(_, o)| !is_xref_or_object_stream(o))
        .map(|(id, _)| id.0)
        .max()
        .unwrap_or(0);
    let kept_max_id = std::mem::replace(&mut doc.max_id, max_id);
    let kept_size = doc.trailer.get(b"Size").ok().cloned();
    let kept_version = doc.version.clone();
    doc.trailer.set("Size", i64::from(max_id) + 1);
    let mut out = Vec::new();
    let written = doc.save_to(&mut out);
    doc.max_id = kept_max_id;
    doc.version = kept_version;
    match kept_size {
        Some(size) => doc.trailer.set("Size", size),
        // Set last, so taking it out again leaves the other entries in their order.
        None => {
            doc.trailer.remove(b"Size");
        }
    }
    written.map_err(|e| Error::Engine(format!("saving the document: {e}")))?;
    Ok(out)
}

/// A cross-reference or object stream of the input.
fn is_xref_or_object_stream(o: &Object) -> bool {
    o.as_stream().is_ok_and(|s| {
        s.dict
            .get(b"Type")
            .and_then(Object::as_name)
            .is_ok_and(|t| t == b"XRef" || t == b"ObjStm")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The save as it was written before [`save_in_place`]: a copy of the whole document,
    /// its xref and object streams taken out, then saved.
    fn save_of_copy(doc: &Document) -> Vec<u8> {
        let mut out = Vec::new();
        let mut doc = doc.clone();
        doc.objects.retain(|_, o| !is_xref_or_object_stream(o));
        doc.max_id = doc.objects.keys().map(|id| id.0).max().unwrap_or(0);
        doc.trailer.set("Size", i64::from(doc.max_id) + 1);
        doc.save_to(&mut out).unwrap();
        out
    }

    /// What a save must leave as it was (the objects are only read).
    fn outline(doc: &Document) -> String {
        format!(
            "{} {} {:?} {}",
            doc.max_id,
            doc.version,
            doc.trailer,
            doc.objects.len()
        )
    }

    /// Saves `doc` in place twice: both are the bytes of the save of a copy, and the
    /// document is left as it was.
    fn check(name: &str, doc: &mut Document) {
        let before = outline(doc);
        let want = save_of_copy(doc);
        assert_eq!(save_in_place(doc).unwrap(), want, "{name}: first save");
        assert_eq!(
            outline(doc),
            before,
            "{name}: the save changed the document"
        );
        assert_eq!(save_in_place(doc).unwrap(), want, "{name}: second save");
    }

    /// Every corpus file lopdf loads, as loaded; written with a cross-reference stream
    /// under version 1.4 (lopdf raises the version to write it); and each encrypted one
    /// that opens without a password, encrypted again as the edit run writes it.
    #[test]
    fn saving_in_place_writes_the_bytes_of_a_saved_copy() {
        let dir = std::env::var_os("PDFEDIT_CORPUS_DIR").map_or_else(
            || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
            std::path::PathBuf::from,
        );
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("SKIP: corpus not found at {}", dir.display());
            return;
        };
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "pdf"))
            .collect();
        paths.sort();
        let (mut plain, mut encrypted, mut raised) = (0, 0, 0);
        for path in &paths {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(path).unwrap();
            if let Some((mut doc, state)) = crate::open::crypt::open_encrypted(&bytes, "") {
                doc.encrypt(&state).unwrap();
                check(&name, &mut doc);
                encrypted += 1;
                continue;
            }
            let Ok(mut doc) = Document::load_mem(&bytes) else {
                continue;
            };
            check(&name, &mut doc);
            plain += 1;
            doc.version = "1.4".into();
            doc.reference_table.cross_reference_type = lopdf::xref::XrefType::CrossReferenceStream;
            check(&format!("{name} (xref stream, 1.4)"), &mut doc);
            assert_eq!(doc.version, "1.4", "{name}: the raised version was kept");
            raised += 1;
        }
        eprintln!("{plain} plain, {encrypted} encrypted, {raised} raised");
        assert!(
            plain >= 40 && encrypted >= 3,
            "{plain} plain, {encrypted} encrypted"
        );
    }
}
