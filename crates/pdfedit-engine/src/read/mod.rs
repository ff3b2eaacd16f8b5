//! Reading a document's text for `/v1/text`: PDFium's characters grouped into spans
//! (`spans`), lines and blocks (`layout`, with lines split by a producer joined again in
//! `joins`), in reading order (`order`); then the text drawn by annotations.

mod joins;
mod layout;
mod order;
mod page_text;
mod spans;

pub use page_text::{PageText, Span, TextResult};

use crate::model::form;
use pdf_render::{FieldKind, FieldValue, FormField};

use crate::{Error, Result};

/// Reads the text layer and/or form fields of the given 1-based pages (all when `None`).
pub fn read_text(
    bytes: &[u8],
    password: Option<&str>,
    pages: Option<Vec<u32>>,
    text: bool,
    forms: bool,
) -> Result<TextResult> {
    let doc = pdf_render::Document::open(bytes, password)?;
    let info = doc.info()?;
    let wanted = resolve_pages(pages, info.page_count)?;
    let mut out_pages = Vec::with_capacity(wanted.len());
    // The scratch copy whose pages get their annotations flattened, opened on first need.
    let mut scratch: Option<pdf_render::Document> = None;
    // The parsed document, for the widgets' boxes (opened on first need).
    let mut parsed: Option<Option<lopdf::Document>> = None;
    for &p in &wanted {
        let meta = &info.pages[(p - 1) as usize];
        let spans = if text {
            let size = (meta.width, meta.height);
            let (mut spans, flat) = page_spans(&doc, bytes, password, p, size, scratch.take())?;
            scratch = flat;
            if spans.iter().any(|s| s.source == ANNOTATION) {
                let parsed = parsed.get_or_insert_with(|| {
                    let options = lopdf::LoadOptions::with_password(password.unwrap_or(""));
                    lopdf::Document::load_mem_with_options(bytes, options).ok()
                });
                if let Some(d) = parsed.as_ref() {
                    mark_form_fields(d, p, &mut spans);
                }
            }
            spans
        } else {
            Vec::new()
        };
        out_pages.push(PageText {
            page: p,
            width: meta.width,
            height: meta.height,
            rotation: meta.rotation,
            spans,
        });
    }
    let fields = if forms && info.has_acro_form {
        let mut fields: Vec<FormField> = doc
            .form_fields()?
            .into_iter()
            .filter(|f| wanted.contains(&f.page))
            .collect();
        if fields.iter().any(|f| f.kind == FieldKind::Radio) {
            name_radio_options(bytes, password, &mut fields);
        }
        fields
    } else {
        Vec::new()
    };
    Ok(TextResult {
        pages: out_pages,
        fields,
    })
}

/// Radio groups get their export values as `options`, and their value as the export value
/// (PDFium reports the appearance state name, which is only an index when /Opt is used).
fn name_radio_options(bytes: &[u8], password: Option<&str>, fields: &mut [FormField]) {
    let options = lopdf::LoadOptions::with_password(password.unwrap_or(""));
    let Ok(doc) = lopdf::Document::load_mem_with_options(bytes, options) else {
        return;
    };
    let radios = form::radio_options(&doc);
    for f in fields.iter_mut().filter(|f| f.kind == FieldKind::Radio) {
        let Some(opts) = radios.get(&f.name) else {
            continue;
        };
        if let FieldValue::Text(state) = &f.value {
            let same = |s: &String| form::same_state(state, s);
            if let Some((_, export)) = opts.iter().find(|(s, _)| same(s)) {
                f.value = FieldValue::Text(export.clone());
            }
        }
        f.options = Some(opts.iter().map(|(_, e)| e.clone()).collect());
    }
}

const TEXT_LAYER: &str = "text-layer";
const ANNOTATION: &str = "annotation";
const FORM_FIELD: &str = "form-field";

/// Annotation spans drawn inside a widget's box (a form field's value or caption, as its
/// appearance shows it) get the source `form-field`.
fn mark_form_fields(doc: &lopdf::Document, p: u32, spans: &mut [Span]) {
    use lopdf::Object;
    let Some(&page_id) = doc.get_pages().get(&p) else {
        return;
    };
    let Ok(page) = doc.get_dictionary(page_id) else {
        return;
    };
    let annots = match page.get(b"Annots").map(|o| doc.dereference(o)) {
        Ok(Ok((_, Object::Array(a)))) => a.clone(),
        _ => return,
    };
    let widgets: Vec<[f64; 4]> = annots
        .iter()
        .filter_map(|a| a.as_reference().ok())
        .filter(|&id| {
            doc.get_dictionary(id)
                .and_then(|d| d.get(b"Subtype"))
                .and_then(Object::as_name)
                .is_ok_and(|n| n == b"Widget")
        })
        .filter_map(|id| crate::model::text::page_geom_box(doc, page_id, id))
        .collect();
    for s in spans.iter_mut().filter(|s| s.source == ANNOTATION) {
        let c = [
            f64::from(s.bbox[0] + s.bbox[2]) / 2.0,
            f64::from(s.bbox[1] + s.bbox[3]) / 2.0,
        ];
        if widgets
            .iter()
            .any(|w| (w[0]..=w[2]).contains(&c[0]) && (w[1]..=w[3]).contains(&c[1]))
        {
            s.source = FORM_FIELD;
        }
    }
}

/// The spans of 1-based page `p`: its content in reading order, then the text of its
/// annotations' appearances (read from `scratch`, a copy of the document that is opened
/// when first needed and handed back for the next page).
fn page_spans<'a>(
    doc: &pdf_render::Document,
    bytes: &'a [u8],
    password: Option<&str>,
    p: u32,
    size: (f32, f32),
    scratch: Option<pdf_render::Document<'a>>,
) -> Result<(Vec<Span>, Option<pdf_render::Document<'a>>)> {
    let chars = doc.page_chars(p - 1)?;
    let shown = on_page(&chars, size);
    let mut spans = layout::layout_page(p, spans::build_spans(&shown), TEXT_LAYER);
    let (next_line, next_block) = order::reading_order(&mut spans, 0, 0);
    if !doc.has_text_annotations(p - 1)? {
        return Ok((spans, scratch));
    }
    let flat = match scratch {
        Some(d) => d,
        None => pdf_render::Document::open(bytes, password)?,
    };
    let extra = flat.flattened_annotation_chars(p - 1, &chars)?;
    let extra = on_page(&extra, size);
    let mut annots = layout::layout_page(p, spans::build_spans(&extra), ANNOTATION);
    // Some producers draw a widget's caption in the page content too, right under the
    // widget (hyperref's buttons): the reader sees one word there, not two.
    annots.retain(|a| {
        !spans
            .iter()
            .any(|s| s.text == a.text && mostly_same_box(&s.bbox, &a.bbox))
    });
    order::reading_order(&mut annots, next_line, next_block);
    spans.extend(annots);
    Ok((spans, Some(flat)))
}

/// The characters drawn inside the displayed page of `size` (width, height): glyphs set
/// beyond its edges are clipped away and no reader sees them (pdftotext drops them too).
fn on_page(chars: &[pdf_render::RawChar], size: (f32, f32)) -> Vec<pdf_render::RawChar> {
    chars
        .iter()
        .filter(|c| {
            let b = &c.advance_box;
            b.x1 > 0.0 && b.y1 > 0.0 && b.x0 < size.0 && b.y0 < size.1
        })
        .cloned()
        .collect()
}

/// Whether two boxes overlap by more than half of the smaller one's area.
fn mostly_same_box(a: &[f32; 4], b: &[f32; 4]) -> bool {
    let w = a[2].min(b[2]) - a[0].max(b[0]);
    let h = a[3].min(b[3]) - a[1].max(b[1]);
    if w <= 0.0 || h <= 0.0 {
        return false;
    }
    let area = |r: &[f32; 4]| (r[2] - r[0]) * (r[3] - r[1]);
    w * h > 0.5 * area(a).min(area(b))
}

/// Validated, de-duplicated, ascending 1-based pages.
fn resolve_pages(pages: Option<Vec<u32>>, count: u32) -> Result<Vec<u32>> {
    let Some(mut pages) = pages else {
        return Ok((1..=count).collect());
    };
    if let Some(bad) = pages.iter().find(|&&p| p == 0 || p > count) {
        return Err(Error::InvalidRequest(format!(
            "page {bad} does not exist (the document has {count})"
        )));
    }
    pages.sort_unstable();
    pages.dedup();
    Ok(pages)
}
