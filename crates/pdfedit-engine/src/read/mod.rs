//! Reading a document's text for `/v1/text`: PDFium's characters grouped into spans
//! (`spans`), lines and blocks (`layout`, with lines split by a producer joined again in
//! `joins`), in reading order (`order`); then the text drawn by annotations.

pub(crate) mod bidi;
mod joins;
mod layout;
mod order;
mod page_text;
mod silent;
mod spans;

pub use page_text::{PageText, Span, TextResult};

use crate::model::form;
use crate::ocr::{self, OcrOptions, OcrPage, PageKind};
use pdf_render::{FieldKind, FieldValue, FormField};

use crate::{Error, Result};

/// Which form fields a read lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fields {
    /// None.
    None,
    /// Those whose first widget is on a page read.
    OfPages,
    /// Those whose first widget is on one of these 1-based pages, whichever pages' text is
    /// read: a long read split over two engine processes has one part list every field and
    /// the other read text only (neither visits the other's pages for the fields twice).
    Of(Vec<u32>),
}

impl Fields {
    /// [`Fields::OfPages`] when `forms`, else [`Fields::None`].
    pub fn of_pages(forms: bool) -> Self {
        if forms {
            Fields::OfPages
        } else {
            Fields::None
        }
    }
}

/// Reads the text layer and/or form fields of the given 1-based pages (all when `None`),
/// under the default [`crate::Limits`], without OCR.
pub fn read_text(
    bytes: &[u8],
    password: Option<&str>,
    pages: Option<Vec<u32>>,
    text: bool,
    forms: bool,
) -> Result<TextResult> {
    let limits = crate::Limits::default();
    let fields = Fields::of_pages(forms);
    Ok(read_text_within(bytes, password, pages, text, fields, &limits, None)?.0)
}

/// [`read_text`] once the document passed the budget scan of `limits`, with scanned pages
/// read by OCR when `ocr` is given (see [`crate::ocr`]): their spans are OCR words
/// (`source: "ocr"`, with a confidence). Also returns the pages OCR'd by this call (not
/// those taken from `ocr.cached`), for the caller's cache.
pub fn read_text_within(
    bytes: &[u8],
    password: Option<&str>,
    pages: Option<Vec<u32>>,
    text: bool,
    forms: Fields,
    limits: &crate::Limits,
    ocr: Option<&OcrOptions>,
) -> Result<(TextResult, Vec<OcrPage>)> {
    let doc = crate::open::open_checked(bytes, password, limits)?;
    read_opened(&doc, bytes, password, pages, text, forms, ocr)
}

/// [`read_text_within`] of a document the caller already checked (the edit pipeline).
pub(crate) fn read_text_checked(
    bytes: &[u8],
    password: Option<&str>,
    pages: Option<Vec<u32>>,
    text: bool,
    forms: bool,
    ocr: Option<&OcrOptions>,
) -> Result<(TextResult, Vec<OcrPage>)> {
    let doc = pdf_render::Document::open(bytes, password)?;
    let forms = Fields::of_pages(forms);
    read_opened(&doc, bytes, password, pages, text, forms, ocr)
}

fn read_opened(
    doc: &pdf_render::Document,
    bytes: &[u8],
    password: Option<&str>,
    pages: Option<Vec<u32>>,
    text: bool,
    forms: Fields,
    ocr: Option<&OcrOptions>,
) -> Result<(TextResult, Vec<OcrPage>)> {
    let languages = ocr.map(OcrOptions::language_arg).transpose()?;
    let wanted = resolve_pages(pages, doc.page_count())?;
    let field_pages = match forms {
        Fields::None => None,
        Fields::OfPages => Some(wanted.clone()),
        Fields::Of(list) => Some(resolve_pages(Some(list), doc.page_count())?),
    };
    let mut out_pages = Vec::with_capacity(wanted.len());
    let mut read = Vec::new();
    // The parsed document, for the widgets' boxes and the field tree (opened once, on
    // first need).
    let mut parsed: Option<Option<lopdf::Document>> = None;
    // Form fields come from the same page loads as the text. A field is listed by its
    // first widget and merges all its widgets, so every page is visited for them, in order.
    let mut collector = (field_pages.is_some() && doc.has_acro_form())
        .then(|| pdf_render::FieldCollector::new(doc));
    let visit: Vec<u32> = match collector {
        Some(_) => (1..=doc.page_count()).collect(),
        None => wanted.clone(),
    };
    let mut next_wanted = wanted.iter().peekable();
    for p in visit {
        // Each page is loaded (and so parsed) once: its size, characters, widgets and
        // annotations come from that one load.
        let page = doc.load_for_reading(p - 1)?;
        if let Some(c) = collector.as_mut() {
            page.add_fields(p - 1, c);
        }
        if next_wanted.next_if_eq(&&p).is_none() {
            continue;
        }
        let info = page.info();
        let spans = if text {
            let chars = page.chars()?;
            let scan = match (ocr, &languages) {
                (Some(o), Some(l)) => scanned_words_of(doc, p, &chars, o, l, &mut read)?,
                _ => None,
            };
            let silent_maps = silent::has_carrier(&chars)
                .then(|| parsed_once(&mut parsed, bytes, password))
                .flatten();
            let mut spans = page_spans(
                p,
                page,
                &chars,
                (info.width, info.height),
                (scan, silent_maps),
            )?;
            if spans.iter().any(|s| s.source == ANNOTATION) {
                if let Some(d) = parsed_once(&mut parsed, bytes, password) {
                    mark_form_fields(d, p, &mut spans);
                }
            }
            spans
        } else {
            Vec::new()
        };
        out_pages.push(PageText {
            page: p,
            width: info.width,
            height: info.height,
            rotation: info.rotation,
            spans,
        });
    }
    let fields = match collector {
        Some(c) => {
            let mut fields: Vec<FormField> = c
                .finish()
                .into_iter()
                .filter(|f| field_pages.as_ref().is_some_and(|p| p.contains(&f.page)))
                .collect();
            if !fields.is_empty() {
                // The field tree as lopdf reads it: radio export values, /MaxLen and the
                // inherited /Ff flags (PDFium's API gives no /MaxLen, and its comb flag
                // misses fields whose flags are inherited).
                if let Some(tree) = parsed_once(&mut parsed, bytes, password) {
                    if fields.iter().any(|f| f.kind == FieldKind::Radio) {
                        name_radio_options(tree, &mut fields);
                    }
                    fill_attributes(tree, &mut fields);
                }
            }
            fields
        }
        None => Vec::new(),
    };
    Ok((
        TextResult {
            pages: out_pages,
            fields,
        },
        read,
    ))
}

/// The OCR words of 1-based page `p` when it is a scanned page (see
/// [`ocr::classify`]), from the cache or read now (then also pushed to `read`).
pub(crate) fn scanned_words(
    doc: &pdf_render::Document,
    p: u32,
    options: &OcrOptions,
    languages: &str,
    read: &mut Vec<OcrPage>,
) -> Result<Option<OcrPage>> {
    let chars = doc.page_chars(p - 1)?;
    scanned_words_of(doc, p, &chars, options, languages, read)
}

/// [`scanned_words`] of a page whose characters were already read.
fn scanned_words_of(
    doc: &pdf_render::Document,
    p: u32,
    chars: &[pdf_render::RawChar],
    options: &OcrOptions,
    languages: &str,
    read: &mut Vec<OcrPage>,
) -> Result<Option<OcrPage>> {
    let ink = |c: &&pdf_render::RawChar| !c.generated && c.ch.is_none_or(|ch| !ch.is_whitespace());
    let visible = chars.iter().filter(ink).filter(|c| !c.invisible).count();
    if visible > 0 {
        return Ok(None);
    }
    if let Some(hit) = options.cached_page(p, languages) {
        return Ok(Some(hit.clone()));
    }
    let invisible: Vec<[f32; 4]> = chars
        .iter()
        .filter(ink)
        .filter(|c| c.invisible)
        .map(|c| c.bbox.to_array())
        .collect();
    let raster = doc.rasterize(p - 1, ocr::OCR_PX_PER_PT)?;
    let gray = ocr::gray_of(&raster);
    match ocr::classify(0, &invisible, &gray, &raster) {
        PageKind::Text | PageKind::MatchingLayer => Ok(None),
        PageKind::Blank => Ok(Some(OcrPage {
            page: p,
            languages: languages.to_string(),
            skew: 0.0,
            words: Vec::new(),
        })),
        PageKind::Scanned => {
            let page = ocr::read_page(
                p,
                &gray,
                raster.width,
                raster.height,
                raster.px_per_pt,
                languages,
                options,
            )?;
            read.push(page.clone());
            Ok(Some(page))
        }
    }
}

/// The spans of an OCR'd page: one per word, lines and blocks as Tesseract found them.
fn ocr_spans(page: &OcrPage) -> Vec<Span> {
    page.words
        .iter()
        .enumerate()
        .map(|(i, w)| Span {
            span_id: layout::span_id(page.page, OCR_INDEX_BASE + i as u32, &w.text, OCR),
            page: page.page,
            text: w.text.clone(),
            bbox: w.bbox,
            font: String::new(),
            size: ((w.bbox[3] - w.bbox[1]) * 0.8).max(1.0),
            color: "#000000".into(),
            flags: Vec::new(),
            line: w.line.saturating_sub(1),
            block: w.block.saturating_sub(1),
            rotation: page.skew,
            source: OCR,
            space_before: true,
            soft_hyphen_end: false,
            confidence: Some(w.confidence),
        })
        .collect()
}

/// Radio groups get their export values as `options`, and their value as the export value
/// (PDFium reports the appearance state name, which is only an index when /Opt is used).
fn name_radio_options(doc: &lopdf::Document, fields: &mut [FormField]) {
    let radios = form::radio_options(doc);
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

/// The document as lopdf reads it, loaded into `slot` on the first call (`None` when lopdf
/// cannot read it).
fn parsed_once<'a>(
    slot: &'a mut Option<Option<lopdf::Document>>,
    bytes: &[u8],
    password: Option<&str>,
) -> Option<&'a lopdf::Document> {
    slot.get_or_insert_with(|| {
        let options = lopdf::LoadOptions::with_password(password.unwrap_or(""));
        lopdf::Document::load_mem_with_options(bytes, options).ok()
    })
    .as_ref()
}

/// Each field's inherited /Ff flags, and /MaxLen for text fields, from the field tree.
fn fill_attributes(doc: &lopdf::Document, fields: &mut [FormField]) {
    let tree: std::collections::HashMap<String, form::Field> = form::fields(doc)
        .into_iter()
        .map(|f| (f.name.clone(), f))
        .collect();
    for f in fields.iter_mut() {
        let Some(t) = tree.get(&f.name) else {
            continue;
        };
        let has = |bit: u32| t.flags & bit != 0;
        f.read_only = has(form::ff::READ_ONLY);
        f.required = has(form::ff::REQUIRED);
        if f.kind == FieldKind::Text {
            f.multiline = has(form::ff::MULTILINE);
            // Comb applies only to a single-line, non-password field with a /MaxLen.
            f.comb = has(form::ff::COMB)
                && !f.multiline
                && !has(form::ff::PASSWORD)
                && t.max_len.is_some();
            f.max_len = t.max_len.and_then(|m| u32::try_from(m).ok());
        }
    }
}

const TEXT_LAYER: &str = "text-layer";
const OCR: &str = "ocr";
/// OCR span ids count their words from here, apart from PDFium's character indices.
const OCR_INDEX_BASE: u32 = 1 << 30;
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

/// The spans of 1-based page `p`, loaded as `page` with the characters `chars`: its
/// content in reading order, then the text of its annotations' appearances (read by
/// flattening the page in the document it was loaded from: the last use of the page).
/// `parsed`, when given, is the document as lopdf reads it, for the glyphs its fonts map
/// to no text ([`silent`]).
fn page_spans(
    p: u32,
    page: pdf_render::ReadingPage,
    chars: &[pdf_render::RawChar],
    size: (f32, f32),
    (scan, parsed): (Option<OcrPage>, Option<&lopdf::Document>),
) -> Result<Vec<Span>> {
    let (mut spans, next_line, next_block) = match &scan {
        Some(scan) => {
            let spans = ocr_spans(scan);
            let next_line = spans.iter().map(|s| s.line + 1).max().unwrap_or(0);
            let next_block = spans.iter().map(|s| s.block + 1).max().unwrap_or(0);
            (spans, next_line, next_block)
        }
        None => {
            let mut shown = on_page(chars, size);
            let page_id = parsed.and_then(|d| Some((d, *d.get_pages().get(&p)?)));
            if let Some((doc, page_id)) = page_id {
                shown = silent::fold_silent(shown, doc, page_id);
            }
            let mut spans = layout::layout_page(p, spans::build_spans(&shown), TEXT_LAYER);
            let (next_line, next_block) = order::reading_order(&mut spans, 0, 0);
            (spans, next_line, next_block)
        }
    };
    if !page.has_text_annotations() {
        return Ok(spans);
    }
    let extra = page.flattened_annotation_chars(chars)?;
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
    Ok(spans)
}

/// The characters drawn inside the displayed page of `size` (width, height): glyphs set
/// beyond its edges are clipped away and no reader sees them (pdftotext drops them too).
/// Borrowed when every character is inside, as on most pages.
fn on_page(
    chars: &[pdf_render::RawChar],
    size: (f32, f32),
) -> std::borrow::Cow<'_, [pdf_render::RawChar]> {
    let inside = |c: &pdf_render::RawChar| {
        let b = &c.advance_box;
        b.x1 > 0.0 && b.y1 > 0.0 && b.x0 < size.0 && b.y0 < size.1
    };
    if chars.iter().all(inside) {
        return std::borrow::Cow::Borrowed(chars);
    }
    chars.iter().filter(|c| inside(c)).cloned().collect()
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
