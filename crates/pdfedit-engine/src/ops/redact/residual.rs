//! After saving: the output is read again from its bytes and every place where a redacted
//! string still occurs is listed: the text layer of every page (the engine's own text
//! model), every text string and XMP/JavaScript stream, and the raw decoded bytes of every
//! other non-image stream (what a byte search of `qpdf --qdf` output would find).

use std::collections::{BTreeSet, HashMap};

use lopdf::{Document, Object, ObjectId};

use super::strings::{scan, Finder, MAX_SCAN_BYTES};
use crate::find::{page_matches, Matcher};
use crate::model::fonts::{DocFonts, Source};
use crate::model::text::{build_lines, PageGeom};
use crate::model::PageModel;
use crate::types::{Edit, Residual};
use crate::Error;

/// Every residual occurrence of each edit's string in `bytes` (an unencrypted PDF).
pub(crate) fn search(bytes: &[u8], edits: &[(&Edit, &Matcher)]) -> Result<Vec<Residual>, Error> {
    let mut doc = Document::load_mem(bytes).map_err(|e| Error::Engine(e.to_string()))?;
    let pages = doc.get_pages();
    // Page content streams by object, for reporting raw hits with their page.
    let mut content_page: HashMap<ObjectId, u32> = HashMap::new();
    for (&n, &pid) in &pages {
        for id in doc.get_page_contents(pid) {
            content_page.entry(id).or_insert(n);
        }
    }
    let mut out = Vec::new();
    let pdfium_text: Vec<(u32, String)> =
        crate::read::read_text_checked(bytes, None, None, true, false, None)?
            .0
            .pages
            .iter()
            .map(|p| (p.page, p.plain_text()))
            .collect();
    let models = page_models(&doc, &pages);
    for (edit, matcher) in edits {
        let find = |t: &str| -> Vec<(usize, usize)> {
            crate::find::line_matches(matcher, t, "")
                .into_iter()
                .map(|(s, e, _)| (s, e))
                .collect()
        };
        let mut text_pages = BTreeSet::new();
        let wrapped = crate::find::wrap::pattern(matcher);
        for model in &models {
            // An occurrence cutting a glyph's text still counts: no cmap is consulted,
            // every glyph it touches is taken as drawing it.
            let mut found = page_matches(model, matcher, edit, Some(&mut |_| None));
            if let Some(re) = &wrapped {
                found.extend(crate::find::wrap::cross_line(model, re));
            }
            for m in found {
                text_pages.insert(model.number);
                out.push(Residual {
                    edit_index: edit.index,
                    kind: "page_text",
                    page: Some(model.number),
                    location: format!(
                        "page {} text at [{:.1}, {:.1}, {:.1}, {:.1}]",
                        model.number, m.bbox[0], m.bbox[1], m.bbox[2], m.bbox[3]
                    ),
                    text: m.found,
                });
            }
        }
        // A second, independent reader (PDFium, annotation appearances included): text it
        // extracts is what a viewer's copy or search would give.
        for (page, text) in &pdfium_text {
            if text_pages.contains(page) {
                continue;
            }
            let mut found: Vec<String> = find(text)
                .iter()
                .map(|&(s, e)| text[s..e].to_string())
                .collect();
            if let Some(re) = &wrapped {
                found.extend(re.find_iter(text).map(|m| m.as_str().to_string()));
            }
            if let Some(first) = found.into_iter().next() {
                text_pages.insert(*page);
                out.push(Residual {
                    edit_index: edit.index,
                    kind: "page_text",
                    page: Some(*page),
                    location: format!(
                        "page {page} (text extraction, annotations and widgets included)"
                    ),
                    text: first,
                });
            }
        }
        let hits = scan(&mut doc, &find, false, &[]);
        let mut reported: BTreeSet<ObjectId> = BTreeSet::new();
        for h in hits {
            if let Some(id) = object_of(&h.location) {
                reported.insert(id);
            }
            out.push(Residual {
                edit_index: edit.index,
                kind: h.kind,
                page: h.page,
                location: h.location,
                text: h.text,
            });
        }
        out.extend(raw_hits(
            &doc,
            &find,
            &reported,
            &content_page,
            &text_pages,
            edit.index,
        ));
    }
    Ok(out)
}

/// The text model of every page of the output (a page whose content cannot be read is
/// left out).
fn page_models(
    doc: &Document,
    pages: &std::collections::BTreeMap<u32, ObjectId>,
) -> Vec<PageModel> {
    let mut fonts = DocFonts::default();
    let mut models = Vec::new();
    for (&number, &page_id) in pages {
        let mut source = Source {
            doc,
            fonts: &mut fonts,
        };
        let Ok(glyphs) = pdf_content::interpret_page(doc, page_id, &mut source) else {
            continue;
        };
        let lines = build_lines(&glyphs.glyphs);
        models.push(PageModel {
            number,
            page_id,
            glyphs,
            lines,
            geom: PageGeom::read(doc, page_id),
        });
    }
    models
}

/// The object named at the start of a location ("object 12 0 …").
fn object_of(location: &str) -> Option<ObjectId> {
    let mut it = location.strip_prefix("object ")?.split(' ');
    let n = it.next()?.parse().ok()?;
    let g = it.next()?.parse().ok()?;
    Some((n, g))
}

/// Non-image streams whose decoded bytes hold the string, other than those already
/// reported (strings, XMP) and the content of pages whose text layer was reported.
fn raw_hits(
    doc: &Document,
    find: Finder,
    reported: &BTreeSet<ObjectId>,
    content_page: &HashMap<ObjectId, u32>,
    text_pages: &BTreeSet<u32>,
    edit_index: u32,
) -> Vec<Residual> {
    let mut out = Vec::new();
    let roles = stream_roles(doc);
    for (&id, obj) in &doc.objects {
        let Object::Stream(s) = obj else { continue };
        if reported.contains(&id) {
            continue;
        }
        let name = |k: &[u8]| s.dict.get(k).and_then(Object::as_name).ok();
        if name(b"Subtype") == Some(b"Image") {
            continue;
        }
        let page = content_page.get(&id).copied();
        if page.is_some_and(|p| text_pages.contains(&p)) {
            continue;
        }
        let Ok(bytes) = s.decompressed_content_with_limit(MAX_SCAN_BYTES) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let ranges = find(&text);
        if ranges.is_empty() {
            continue;
        }
        let role = roles.get(&id).cloned().unwrap_or_else(|| {
            let kind = name(b"Type").or(name(b"Subtype")).unwrap_or(b"data");
            format!("{} stream", String::from_utf8_lossy(kind))
        });
        out.push(Residual {
            edit_index,
            kind: "stream",
            page,
            location: format!("object {} {} ({role})", id.0, id.1),
            text: text[ranges[0].0..ranges[0].1].to_string(),
        });
    }
    out
}

/// What the streams that are not page text are for, where the document says so: font
/// programs (a glyph name or the font's own name such as `/FontName` can hold the
/// string) and Type 3 glyph procedures, so that a residual names what a user would look
/// at.
fn stream_roles(doc: &Document) -> HashMap<ObjectId, String> {
    let mut out = HashMap::new();
    let name_of = |d: &lopdf::Dictionary, k: &[u8]| {
        d.get(k)
            .and_then(Object::as_name)
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default()
    };
    for obj in doc.objects.values() {
        let Ok(d) = obj.as_dict() else { continue };
        for key in [&b"FontFile"[..], b"FontFile2", b"FontFile3"] {
            if let Ok(id) = d.get(key).and_then(Object::as_reference) {
                out.insert(id, format!("font program of {}", name_of(d, b"FontName")));
            }
        }
        if d.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Type3") {
            continue;
        }
        let Some(procs) = d
            .get(b"CharProcs")
            .ok()
            .and_then(|o| doc.dereference(o).ok())
            .and_then(|(_, o)| o.as_dict().ok())
        else {
            continue;
        };
        let font = match name_of(d, b"BaseFont") {
            n if n.is_empty() => name_of(d, b"Name"),
            n => n,
        };
        for (glyph, proc) in procs.iter() {
            if let Ok(id) = proc.as_reference() {
                out.insert(
                    id,
                    format!(
                        "glyph procedure /{} of Type 3 font {font}",
                        String::from_utf8_lossy(glyph)
                    ),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_numbers_are_read_from_locations() {
        assert_eq!(object_of("object 12 0 /Title"), Some((12, 0)));
        assert_eq!(object_of("page 3"), None);
    }
}
