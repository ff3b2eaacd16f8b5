//! The redacted string outside the page text: every text string of every object (Info,
//! annotations and their popups, form field values, outline titles, structure-tree
//! /Alt and /ActualText, page labels, file specifications and name trees, JavaScript),
//! the XMP metadata and JavaScript streams, and annotation appearances that show it.
//!
//! The same walk runs twice: on the document being redacted (removing what it finds)
//! and on the saved output (only reporting, for the residual list).

use std::collections::{BTreeSet, HashMap};
use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use lopdf::{Dictionary, Document, Object, ObjectId, StringFormat};
use pdf_content::{decode_text_string, encode_text_string};

use super::appearances::{appearance_shows, appearance_streams, cut_appearance, drop_appearances};

/// Largest stream decoded when looking for the string (decompression-bomb guard).
pub(crate) const MAX_SCAN_BYTES: usize = 64 << 20;

/// Byte ranges of the redacted string in a text.
pub(crate) type Finder<'a> = &'a dyn Fn(&str) -> Vec<(usize, usize)>;

/// One place where the string occurs.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    /// `metadata`, `xmp`, `annotation`, `form_field`, `outline`, `structure`,
    /// `page_label`, `embedded_file`, `javascript`, `xfa`, `name_tree` or `other`.
    pub kind: &'static str,
    /// 1-based page, for annotations and widgets.
    pub page: Option<u32>,
    /// Object and key.
    pub location: String,
    /// The text found.
    pub text: String,
}

/// Keys whose strings are binary or security data, never text to redact.
const SKIP_KEYS: &[&[u8]] = &[
    b"ID",
    b"ByteRange",
    b"Cert",
    b"O",
    b"U",
    b"OE",
    b"UE",
    b"Perms",
    b"Contents_Sig",
];

/// What kind of object a dictionary is, for reporting.
#[derive(Default)]
struct Ctx {
    info: bool,
    annot: bool,
    field: bool,
    outline: bool,
    filespec: bool,
    page_label: bool,
    structure: bool,
    name_tree: bool,
    signature: bool,
}

impl Ctx {
    fn of(d: &Dictionary, info: bool) -> Ctx {
        let name = |k: &[u8]| d.get(k).and_then(Object::as_name).ok();
        let has = |k: &[u8]| d.has(k);
        let ty = name(b"Type");
        let subtype = name(b"Subtype");
        let annot = ty == Some(b"Annot") || (subtype.is_some() && has(b"Rect"));
        Ctx {
            info,
            annot,
            field: has(b"FT") || subtype == Some(b"Widget") || (has(b"T") && has(b"Kids")),
            outline: !info
                && has(b"Title")
                && (has(b"Parent") || has(b"Next") || has(b"Prev") || has(b"Dest") || has(b"A")),
            filespec: ty == Some(b"Filespec") || has(b"EF"),
            page_label: ty == Some(b"PageLabel")
                || (has(b"P")
                    && d.iter()
                        .all(|(k, _)| matches!(k.as_slice(), b"Type" | b"S" | b"P" | b"St"))),
            structure: ty == Some(b"StructElem") || (has(b"S") && has(b"P") && has(b"K")),
            name_tree: has(b"Names") || has(b"Limits"),
            signature: ty == Some(b"Sig") || ty == Some(b"DocTimeStamp") || has(b"ByteRange"),
        }
    }

    fn kind(&self, key: &[u8]) -> &'static str {
        if self.info {
            "metadata"
        } else if key == b"JS" {
            "javascript"
        } else if self.field {
            "form_field"
        } else if self.annot {
            "annotation"
        } else if self.outline {
            "outline"
        } else if self.filespec {
            "embedded_file"
        } else if self.page_label {
            "page_label"
        } else if self.structure || matches!(key, b"Alt" | b"ActualText" | b"E") {
            "structure"
        } else if self.name_tree {
            "name_tree"
        } else {
            "other"
        }
    }
}

/// Which page each annotation sits on.
fn annotation_pages(doc: &Document) -> HashMap<ObjectId, u32> {
    let mut out = HashMap::new();
    for (n, pid) in doc.get_pages() {
        let Ok(page) = doc.get_dictionary(pid) else {
            continue;
        };
        let annots = page
            .get(b"Annots")
            .ok()
            .and_then(|a| doc.dereference(a).ok())
            .and_then(|(_, a)| a.as_array().ok());
        for a in annots.into_iter().flatten() {
            if let Ok(id) = a.as_reference() {
                out.entry(id).or_insert(n);
            }
        }
    }
    out
}

/// `text` without the ranges.
fn cut(text: &str, ranges: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for &(s, e) in ranges {
        if s >= pos {
            out.push_str(&text[pos..s]);
            pos = e;
        }
    }
    out.push_str(&text[pos.min(text.len())..]);
    out
}

struct Walk<'f> {
    find: Finder<'f>,
    remove: bool,
    hits: Vec<Hit>,
    /// Streams referenced by a /JS key.
    js_streams: BTreeSet<ObjectId>,
}

impl Walk<'_> {
    /// The text streams: XMP metadata, text attachments, JavaScript and XFA.
    fn text_streams(&mut self, doc: &mut Document) {
        let xfa = xfa_streams(doc);
        for id in doc.objects.keys().copied().collect::<Vec<_>>() {
            let ty = doc
                .get_object(id)
                .and_then(Object::as_stream)
                .ok()
                .and_then(|s| s.dict.get(b"Type").and_then(Object::as_name).ok())
                .map(<[u8]>::to_vec);
            let kind = match ty.as_deref() {
                Some(b"Metadata") => "xmp",
                // An attached file is cut only when it is text: a binary one is reported.
                Some(b"EmbeddedFile") if is_text(doc, id) => "embedded_file",
                _ if self.js_streams.contains(&id) => "javascript",
                _ if xfa.contains(&id) => "xfa",
                _ => continue,
            };
            if let Some(hit) = stream_text(doc, id, self.find, self.remove, kind) {
                self.hits.push(hit);
            }
        }
    }

    fn object(&mut self, o: &mut Object, ctx: &Ctx, key: &[u8], at: &str, page: Option<u32>) {
        match o {
            Object::String(bytes, format) => {
                let text = decode_text_string(bytes);
                let ranges = (self.find)(&text);
                if ranges.is_empty() {
                    return;
                }
                let found = ranges.iter().map(|&(s, e)| &text[s..e]).collect::<Vec<_>>();
                self.hits.push(Hit {
                    kind: ctx.kind(key),
                    page,
                    location: format!("{at} /{}", String::from_utf8_lossy(key)),
                    text: found.join(" | "),
                });
                if self.remove {
                    let utf16 = bytes.starts_with(&[0xFE, 0xFF]);
                    *bytes = encode_text_string(&cut(&text, &ranges), utf16);
                    if utf16 {
                        *format = StringFormat::Hexadecimal;
                    }
                }
            }
            Object::Array(items) => {
                for item in items {
                    self.object(item, ctx, key, at, page);
                }
            }
            Object::Dictionary(d) => self.dict(d, ctx, at, page),
            Object::Reference(id) if key == b"JS" => {
                self.js_streams.insert(*id);
            }
            _ => {}
        }
    }

    fn dict(&mut self, d: &mut Dictionary, ctx: &Ctx, at: &str, page: Option<u32>) {
        if ctx.signature {
            return;
        }
        for (k, v) in d.iter_mut() {
            if SKIP_KEYS.contains(&k.as_slice()) {
                continue;
            }
            let key = k.clone();
            self.object(v, ctx, &key, at, page);
        }
    }
}

/// Finds (and with `remove`, cuts out) the string in every object's text strings and in
/// XMP and JavaScript streams; with `remove`, an annotation or widget that showed it loses
/// its appearance streams (the viewer draws it again from the redacted values), except the
/// annotations in `done`, whose appearance was already redacted and verified.
pub(crate) fn scan(doc: &mut Document, find: Finder, remove: bool, done: &[ObjectId]) -> Vec<Hit> {
    let info = doc.trailer.get(b"Info").and_then(Object::as_reference).ok();
    let encrypt = doc
        .trailer
        .get(b"Encrypt")
        .and_then(Object::as_reference)
        .ok();
    let pages = annotation_pages(doc);
    let mut walk = Walk {
        find,
        remove,
        hits: Vec::new(),
        js_streams: BTreeSet::new(),
    };
    let mut lost_appearance = Vec::new();
    let ids: Vec<ObjectId> = doc.objects.keys().copied().collect();
    for id in ids {
        if Some(id) == encrypt {
            continue;
        }
        let Some(obj) = doc.objects.get_mut(&id) else {
            continue;
        };
        let before = walk.hits.len();
        let at = format!("object {} {}", id.0, id.1);
        let page = pages.get(&id).copied();
        match obj {
            Object::Dictionary(d) => {
                let ctx = Ctx::of(d, Some(id) == info);
                walk.dict(d, &ctx, &at, page);
                if walk.hits.len() > before && (ctx.annot || ctx.field) {
                    lost_appearance.push(id);
                }
            }
            Object::Stream(s) => {
                let ctx = Ctx::of(&s.dict, false);
                walk.dict(&mut s.dict, &ctx, &at, page);
            }
            other => walk.object(other, &Ctx::default(), b"", &at, page),
        }
    }
    // Appearances that draw the string literally (a FreeText box, a field's value).
    for (&annot, &page) in &pages {
        if !lost_appearance.contains(&annot) && appearance_shows(doc, annot, find) {
            if !remove {
                walk.hits.push(Hit {
                    kind: "annotation",
                    page: Some(page),
                    location: format!("object {} {} /AP", annot.0, annot.1),
                    text: String::new(),
                });
            }
            lost_appearance.push(annot);
        }
    }
    walk.text_streams(doc);
    if remove {
        // The string is cut from the text the appearance draws, the rest of it kept (a
        // FreeText box, a field's value, a signature's lines); an appearance that still
        // shows it after that (split over several strings), or where it was not found as
        // literal text, is dropped.
        let mut lost = Vec::new();
        for id in lost_appearance.into_iter().filter(|id| !done.contains(id)) {
            let had_appearance = !appearance_streams(doc, id).is_empty();
            let cut_from = cut_appearance(doc, id, find);
            let page = pages.get(&id).copied();
            // Nothing cut although the annotation held the string: its appearance may
            // draw it in a form not read here (glyph ids), so it goes.
            if cut_from == 0 || appearance_shows(doc, id, find) {
                lost.push(id);
                if !had_appearance {
                    continue;
                }
                walk.hits.push(Hit {
                    kind: "annotation",
                    page,
                    location: format!("object {} {} /AP (appearance removed)", id.0, id.1),
                    text: String::new(),
                });
            } else if cut_from > 0 {
                walk.hits.push(Hit {
                    kind: "annotation",
                    page,
                    location: format!(
                        "object {} {} /AP: cut from {cut_from} string(s) the appearance draws",
                        id.0, id.1
                    ),
                    text: String::new(),
                });
            }
        }
        drop_appearances(doc, &lost);
    }
    walk.hits
}

/// The streams of the AcroForm's XFA packets (XML: template, datasets, …).
fn xfa_streams(doc: &Document) -> Vec<ObjectId> {
    let Some(acro) = doc
        .catalog()
        .ok()
        .and_then(|c| c.get(b"AcroForm").ok())
        .and_then(|a| doc.dereference(a).ok())
        .and_then(|(_, a)| a.as_dict().ok())
    else {
        return Vec::new();
    };
    match acro.get(b"XFA") {
        Ok(Object::Reference(id)) => vec![*id],
        Ok(Object::Array(parts)) => parts.iter().filter_map(|p| p.as_reference().ok()).collect(),
        _ => Vec::new(),
    }
}

fn is_text(doc: &Document, id: ObjectId) -> bool {
    doc.get_object(id)
        .and_then(Object::as_stream)
        .ok()
        .and_then(|s| s.decompressed_content_with_limit(MAX_SCAN_BYTES).ok())
        .is_some_and(|b| std::str::from_utf8(&b).is_ok())
}

/// Finds the string in a text stream (XMP, JavaScript) and cuts it out with `remove`.
fn stream_text(
    doc: &mut Document,
    id: ObjectId,
    find: Finder,
    remove: bool,
    kind: &'static str,
) -> Option<Hit> {
    let s = doc
        .get_object_mut(id)
        .and_then(Object::as_stream_mut)
        .ok()?;
    let bytes = s.decompressed_content_with_limit(MAX_SCAN_BYTES).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let ranges = find(&text);
    if ranges.is_empty() {
        return None;
    }
    let found = ranges
        .iter()
        .map(|&(a, b)| &text[a..b])
        .collect::<Vec<_>>()
        .join(" | ");
    if remove {
        let mut enc = ZlibEncoder::new(Vec::new(), Compression::default());
        enc.write_all(cut(&text, &ranges).as_bytes()).ok()?;
        s.dict.remove(b"DecodeParms");
        s.dict.set("Filter", Object::Name(b"FlateDecode".to_vec()));
        // An attached file's checksum and size described the old bytes.
        if let Ok(Object::Dictionary(params)) = s.dict.get_mut(b"Params") {
            params.remove(b"CheckSum");
            params.remove(b"Size");
        }
        s.set_content(enc.finish().ok()?);
    }
    Some(Hit {
        kind,
        page: None,
        location: format!("object {} {} (stream)", id.0, id.1),
        text: found,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::dictionary;

    fn finder(needle: &'static str) -> impl Fn(&str) -> Vec<(usize, usize)> {
        move |t: &str| {
            t.match_indices(needle)
                .map(|(s, m)| (s, s + m.len()))
                .collect()
        }
    }

    #[test]
    fn info_outline_and_annotation_strings_are_cut() {
        let mut doc = Document::with_version("1.7");
        let info = doc.add_object(dictionary! { "Title" => Object::string_literal("Secret plan") });
        doc.trailer.set("Info", info);
        let item = doc.add_object(dictionary! {
            "Title" => Object::String(encode_text_string("Das Secret", true), StringFormat::Hexadecimal),
            "Parent" => Object::Reference((99, 0)),
        });
        let annot = doc.add_object(dictionary! {
            "Type" => "Annot", "Subtype" => "Text", "Rect" => vec![0.into(), 0.into(), 1.into(), 1.into()],
            "Contents" => Object::string_literal("a Secret note"),
        });
        let f = finder("Secret");
        let hits = scan(&mut doc, &f, true, &[]);
        let kinds: BTreeSet<&str> = hits.iter().map(|h| h.kind).collect();
        assert_eq!(kinds, ["annotation", "metadata", "outline"].into());
        let text = |id: ObjectId, k: &[u8]| {
            decode_text_string(
                doc.get_dictionary(id)
                    .unwrap()
                    .get(k)
                    .unwrap()
                    .as_str()
                    .unwrap(),
            )
        };
        assert_eq!(text(info, b"Title"), " plan");
        assert_eq!(text(item, b"Title"), "Das ");
        assert_eq!(text(annot, b"Contents"), "a  note");
        assert!(scan(&mut doc, &f, false, &[]).is_empty());
    }

    #[test]
    fn signature_values_are_left_alone() {
        let mut doc = Document::with_version("1.7");
        doc.add_object(dictionary! {
            "Type" => "Sig", "Name" => Object::string_literal("Secret"),
        });
        let f = finder("Secret");
        assert!(scan(&mut doc, &f, false, &[]).is_empty());
    }

    #[test]
    fn cut_skips_overlaps() {
        assert_eq!(cut("abcdef", &[(1, 3), (2, 4), (4, 5)]), "adf");
    }
}
