//! The pdfedit engine API used by the Node addon: document facts, the text model (spans,
//! lines, blocks, form fields) and page previews.
//!
//! Every function takes the document's bytes and an optional password and opens the
//! document afresh: the engine keeps no state between calls, so a worker thread can serve
//! any request. PDFium work is serialised process-wide (see `pdf-render`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod edit;
mod error;
mod form;
mod insert;
mod joins;
mod layout;
mod order;
mod redact;
mod spans;

use std::path::Path;

pub use error::{Error, Result};
pub use pdf_render::{DocInfo, FieldKind, FieldValue, FormField, PageInfo, Rect, SignatureInfo};

/// One span of text in the API's shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Stable id: the same bytes always give the same ids.
    pub span_id: String,
    /// 1-based page.
    pub page: u32,
    /// The text; words inside the span keep their single spaces.
    pub text: String,
    /// `[x0, y0, x1, y1]` in points, top-left origin of the displayed page.
    pub bbox: [f32; 4],
    /// Font name without the subset tag.
    pub font: String,
    /// Font size in points (text matrix and CTM applied).
    pub size: f32,
    /// Fill colour `#rrggbb`.
    pub color: String,
    /// Any of `bold`, `italic`, `monospace`, `serif`.
    pub flags: Vec<&'static str>,
    /// Line id, unique within the page.
    pub line: u32,
    /// Block id, unique within the page.
    pub block: u32,
    /// Baseline angle in degrees counter-clockwise as displayed (0 = left to right).
    pub rotation: f32,
    /// `text-layer` (the page's content) or `annotation` (text drawn by an annotation's
    /// appearance: free text, stamps, signature appearances, filled form widgets). `ocr`
    /// spans come from the OCR bridge, not from here.
    pub source: &'static str,
    /// Whether a word separator precedes the span on its line. `false` means the span
    /// continues the previous span's word (a superscript, a colour change mid-word).
    pub space_before: bool,
    /// The span ends in a hyphen that breaks a word across lines (PDFium's judgement);
    /// plain text joins the word and drops the hyphen, as pdftotext does.
    pub soft_hyphen_end: bool,
}

/// The text of one page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageText {
    /// 1-based page number.
    pub page: u32,
    /// Displayed width in points.
    pub width: f32,
    /// Displayed height in points.
    pub height: f32,
    /// Clockwise page rotation (0, 90, 180, 270).
    pub rotation: u16,
    /// Spans in reading order: the page content's, then the annotations'.
    pub spans: Vec<Span>,
}

impl PageText {
    /// The page as plain text: spans of a line joined by a space (none when the span
    /// continues a word), lines by a newline; a soft line-end hyphen joins its word.
    pub fn plain_text(&self) -> String {
        let mut out = String::new();
        let mut last: Option<&Span> = None;
        for s in &self.spans {
            match last {
                None => {}
                Some(prev) if prev.line == s.line && s.space_before => out.push(' '),
                Some(prev) if prev.line == s.line => {}
                Some(prev)
                    if prev.soft_hyphen_end
                        && prev.text.ends_with('-')
                        && prev.source == s.source =>
                {
                    out.pop();
                }
                Some(_) => out.push('\n'),
            }
            out.push_str(&s.text);
            last = Some(s);
        }
        out
    }
}

/// The answer of [`read_text`].
#[derive(Debug, Clone, PartialEq)]
pub struct TextResult {
    /// Requested pages (empty span lists when the text layer was not asked for).
    pub pages: Vec<PageText>,
    /// Form fields whose first widget is on a requested page (empty when the forms layer
    /// was not asked for).
    pub fields: Vec<FormField>,
}

/// What [`render`] should draw.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RenderRequest {
    /// 1-based page.
    pub page: u32,
    /// Region `[x0, y0, x1, y1]` of the page; `None` = the whole page.
    pub region: Option<[f32; 4]>,
    /// Highlight boxes in page coordinates.
    pub highlights: Vec<[f32; 4]>,
    /// Output width in pixels (default 1000, max 2000).
    pub width: Option<u32>,
    /// Byte budget of the PNG (default 200 000).
    pub max_bytes: Option<usize>,
}

/// Binds PDFium from `lib_path` (idempotent). Without a call, the first use binds from
/// the `PDFIUM_LIB_PATH` environment variable.
pub fn init(lib_path: &Path) -> Result<()> {
    Ok(pdf_render::init(Some(lib_path))?)
}

/// Document facts: pages, encryption, signatures, forms.
pub fn open_info(bytes: &[u8], password: Option<&str>) -> Result<DocInfo> {
    let doc = pdf_render::Document::open(bytes, password)?;
    Ok(doc.info()?)
}

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
    for &p in &wanted {
        let meta = &info.pages[(p - 1) as usize];
        let spans = if text {
            let size = (meta.width, meta.height);
            let (spans, flat) = page_spans(&doc, bytes, password, p, size, scratch.take())?;
            scratch = flat;
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
            let same = |s: &String| form::readback::same_state(state, s);
            if let Some((_, export)) = opts.iter().find(|(s, _)| same(s)) {
                f.value = FieldValue::Text(export.clone());
            }
        }
        f.options = Some(opts.iter().map(|(_, e)| e.clone()).collect());
    }
}

const TEXT_LAYER: &str = "text-layer";
const ANNOTATION: &str = "annotation";

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

/// Renders a page (or a region of it) to a PNG that never exceeds the byte budget.
pub fn render(bytes: &[u8], password: Option<&str>, req: &RenderRequest) -> Result<Vec<u8>> {
    let doc = pdf_render::Document::open(bytes, password)?;
    let count = doc.page_count();
    if req.page == 0 || req.page > count {
        return Err(Error::InvalidRequest(format!(
            "page {} does not exist (the document has {count})",
            req.page
        )));
    }
    let to_rect = |b: &[f32; 4]| pdf_render::Rect::from_corners(b[0], b[1], b[2], b[3]);
    if let Some(r) = &req.region {
        if r[2] <= r[0] || r[3] <= r[1] {
            return Err(Error::InvalidRequest(
                "region must be [x0, y0, x1, y1] with x0 < x1 and y0 < y1".into(),
            ));
        }
    }
    let options = pdf_render::RenderOptions {
        region: req.region.as_ref().map(to_rect),
        highlights: req.highlights.iter().map(to_rect).collect(),
        width: req.width.unwrap_or(pdf_render::DEFAULT_WIDTH),
        max_bytes: req.max_bytes.unwrap_or(pdf_render::DEFAULT_MAX_BYTES),
    };
    if options.width == 0 || options.width > pdf_render::MAX_WIDTH {
        return Err(Error::InvalidRequest(format!(
            "width must be between 1 and {} pixels",
            pdf_render::MAX_WIDTH
        )));
    }
    Ok(doc.render_png(req.page - 1, &options)?)
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
