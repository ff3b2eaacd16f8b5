//! Writing the document out: a full rewrite by lopdf, object streams dropped (an
//! encrypted input is encrypted again with the state `open::crypt` kept); for a signed
//! document, an incremental update after the original bytes (`incremental`).

pub(crate) mod incremental;
pub(crate) mod signatures;

use lopdf::Document;

use crate::Error;

/// The document saved as the edit run saves it (full rewrite, object streams dropped).
pub(crate) fn save(doc: &Document) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    let mut doc = doc.clone();
    // The trailer's /Size is written from max_id; a loaded file may claim more objects
    // than it holds, which qpdf reports.
    // lopdf keeps the input's xref and object streams as objects but never writes them.
    doc.objects.retain(|_, o| {
        !o.as_stream().is_ok_and(|s| {
            s.dict
                .get(b"Type")
                .and_then(lopdf::Object::as_name)
                .is_ok_and(|t| t == b"XRef" || t == b"ObjStm")
        })
    });
    doc.max_id = doc.objects.keys().map(|id| id.0).max().unwrap_or(0);
    doc.trailer.set("Size", i64::from(doc.max_id) + 1);
    doc.save_to(&mut out)
        .map_err(|e| Error::Engine(format!("saving the document: {e}")))?;
    Ok(out)
}
