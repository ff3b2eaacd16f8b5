//! Gathers the classifier's [`Facts`] from an opened document: the text lines of the first
//! pages (the run's page models, which the edits reuse), the signatures PDFium found, the
//! signature fields, stamp annotations and square pictures of the AcroForm and pages.

use std::collections::BTreeSet;

use lopdf::{Dictionary, Document, Object, ObjectId};

use super::Facts;
use crate::run::Run;
use crate::SignatureInfo;

/// Pages whose text is read: a statement, an invoice or an identity document shows what
/// it is on its first pages.
const TEXT_PAGES: u32 = 3;
/// Pages whose annotations and pictures are looked at.
const OBJECT_PAGES: u32 = 50;
/// Fields walked in the AcroForm tree at most (hostile documents nest deeply).
const MAX_FIELDS: usize = 10_000;

thread_local! {
    /// Facts gathered on this thread (for tests: a kept template is not classified again).
    static GATHERED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many times this thread gathered a document's facts.
pub fn gathered() -> u64 {
    GATHERED.with(std::cell::Cell::get)
}

/// The facts of the run's document; `signatures` as PDFium reported them.
pub(crate) fn gather(run: &mut Run, signatures: &[SignatureInfo]) -> Facts {
    GATHERED.with(|g| g.set(g.get() + 1));
    let pages = run.page_ids();
    let mut facts = Facts {
        page_count: u32::try_from(pages.len()).unwrap_or(u32::MAX),
        ..Facts::default()
    };
    for (&number, &page_id) in pages.iter().take(TEXT_PAGES as usize) {
        // An unreadable page gives no text evidence; the others still count.
        if let Ok(model) = run.model(number, page_id) {
            facts
                .lines
                .extend(model.lines.iter().map(|l| (number, l.text.clone())));
        }
    }
    facts.signatures = signatures
        .iter()
        .map(|s| {
            let filter = s.sub_filter.as_deref().unwrap_or("no /SubFilter");
            match &s.signing_time {
                Some(t) => format!("signature dictionary ({filter}, signed {t})"),
                None => format!("signature dictionary ({filter})"),
            }
        })
        .collect();
    let doc = &run.doc;
    facts.signature_fields = signature_fields(doc);
    for (&number, &page_id) in pages.iter().take(OBJECT_PAGES as usize) {
        let Ok(page) = doc.get_dictionary(page_id) else {
            continue;
        };
        facts
            .stamps
            .extend(stamps(doc, page).into_iter().map(|n| (number, n)));
        if has_square_image(doc, page) {
            facts.square_images.push(number);
        }
    }
    facts
}

fn resolve<'a>(doc: &'a Document, o: &'a Object) -> &'a Object {
    match o {
        Object::Reference(id) => doc.get_object(*id).unwrap_or(o),
        _ => o,
    }
}

fn name_of(doc: &Document, d: &Dictionary, key: &[u8]) -> Option<String> {
    match d.get(key).map(|o| resolve(doc, o)) {
        Ok(Object::Name(n)) => Some(String::from_utf8_lossy(n).into_owned()),
        _ => None,
    }
}

/// Names of the unsigned signature fields (`/FT /Sig`, inherited, without `/V`).
fn signature_fields(doc: &Document) -> Vec<String> {
    let Some(form) = doc
        .catalog()
        .ok()
        .and_then(|c| c.get(b"AcroForm").ok())
        .and_then(|o| resolve(doc, o).as_dict().ok())
    else {
        return Vec::new();
    };
    let Ok(Object::Array(fields)) = form.get(b"Fields").map(|o| resolve(doc, o)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut seen: BTreeSet<ObjectId> = BTreeSet::new();
    let mut stack: Vec<(&Object, Option<String>, bool)> =
        fields.iter().map(|f| (f, None, false)).collect();
    while let Some((obj, parent, parent_sig)) = stack.pop() {
        if seen.len() >= MAX_FIELDS {
            break;
        }
        if let Object::Reference(id) = obj {
            if !seen.insert(*id) {
                continue;
            }
        }
        let Ok(d) = resolve(doc, obj).as_dict() else {
            continue;
        };
        let part = match d.get(b"T").map(|o| resolve(doc, o)) {
            Ok(Object::String(s, _)) => Some(String::from_utf8_lossy(s).into_owned()),
            _ => None,
        };
        let name = match (&parent, part) {
            (Some(p), Some(t)) => Some(format!("{p}.{t}")),
            (None, Some(t)) => Some(t),
            (p, None) => p.clone(),
        };
        let is_sig = name_of(doc, d, b"FT").map_or(parent_sig, |ft| ft == "Sig");
        if let Ok(Object::Array(kids)) = d.get(b"Kids").map(|o| resolve(doc, o)) {
            stack.extend(kids.iter().map(|k| (k, name.clone(), is_sig)));
        } else if is_sig && !d.has(b"V") {
            out.push(name.unwrap_or_else(|| "(unnamed)".into()));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `/Name`s of the page's stamp annotations (`stamp` when unnamed).
fn stamps(doc: &Document, page: &Dictionary) -> Vec<String> {
    let Ok(Object::Array(annots)) = page.get(b"Annots").map(|o| resolve(doc, o)) else {
        return Vec::new();
    };
    annots
        .iter()
        .filter_map(|a| resolve(doc, a).as_dict().ok())
        .filter(|a| name_of(doc, a, b"Subtype").as_deref() == Some("Stamp"))
        .map(|a| name_of(doc, a, b"Name").unwrap_or_else(|| "stamp".into()))
        .collect()
}

/// Whether the page's resources hold a picture about as wide as high (a seal, a stamp),
/// of at least 48 pixels a side.
fn has_square_image(doc: &Document, page: &Dictionary) -> bool {
    let Ok(resources) = page
        .get(b"Resources")
        .map(|o| resolve(doc, o))
        .and_then(Object::as_dict)
    else {
        return false;
    };
    let Ok(xobjects) = resources
        .get(b"XObject")
        .map(|o| resolve(doc, o))
        .and_then(Object::as_dict)
    else {
        return false;
    };
    xobjects.iter().any(|(_, o)| {
        let Ok(stream) = resolve(doc, o).as_stream() else {
            return false;
        };
        let d = &stream.dict;
        if name_of(doc, d, b"Subtype").as_deref() != Some("Image") {
            return false;
        }
        let dim = |k: &[u8]| match d.get(k).map(|o| resolve(doc, o)) {
            Ok(Object::Integer(n)) => *n as f64,
            Ok(Object::Real(r)) => f64::from(*r),
            _ => 0.0,
        };
        let (w, h) = (dim(b"Width"), dim(b"Height"));
        w >= 48.0 && h >= 48.0 && (0.8..=1.25).contains(&(w / h))
    })
}
