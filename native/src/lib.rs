//! Node addon for pdfedit: converts types and maps errors, nothing else.
//!
//! Every export is synchronous (the service calls them from its engine processes; an
//! embedding program may call them from `worker_threads`) and runs through
//! [`error::guarded`], so a panic on one document becomes an `engine_error` instead of
//! taking the process down.
// The #[napi] macros expand to unsafe FFI glue; this crate writes no unsafe code itself.
#![allow(unsafe_code)]
#![deny(missing_docs)]

pub mod edit;
pub mod enums;
pub mod error;
mod json;
mod types;

use std::path::Path;

use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

pub use types::*;

use error::{guarded, invalid, Result};

/// Binds PDFium from the given shared library (idempotent).
#[napi]
pub fn init(pdfium_lib_path: String) -> Result<()> {
    guarded(|| pdfedit_engine::init(Path::new(&pdfium_lib_path)))
}

/// One font new text can be written in (`GET /v1/fonts`).
#[napi(object)]
pub struct FontEntry {
    /// The name `style.font` takes.
    pub name: String,
    /// The promised family it serves.
    pub family: String,
    /// `regular`, `bold`, `italic` or `bold-italic`.
    pub style: String,
    /// `metric-twin` or `look-alike`.
    pub kind: String,
    /// Families whose widths it reproduces.
    #[napi(js_name = "metric_compatible_with")]
    pub metric_compatible_with: Vec<String>,
}

/// The installed fonts `style.font` may name (no PDFium needed).
#[napi]
pub fn list_fonts() -> Vec<FontEntry> {
    pdfedit_engine::edit::list_fonts()
        .into_iter()
        .map(|f| FontEntry {
            name: f.name,
            family: f.family,
            style: f.style.to_string(),
            kind: f.kind.to_string(),
            metric_compatible_with: f.metric_compatible_with,
        })
        .collect()
}

/// Pages, encryption, signatures and form facts of a document.
#[napi]
pub fn open_info(pdf: Buffer, password: Option<String>, limits: Option<Limits>) -> Result<DocInfo> {
    let limits = Limits::to_engine(limits.as_ref());
    guarded(|| pdfedit_engine::open_info_within(&pdf, password.as_deref(), &limits))
        .map(DocInfo::from)
}

/// [`open_info`] without the pages' sizes (`pages` empty; `pageCount` is the document's own
/// count): encryption, signatures and form facts at the cost of opening the document, not
/// of loading every page (what the service checks before each call).
#[napi]
pub fn open_facts(
    pdf: Buffer,
    password: Option<String>,
    limits: Option<Limits>,
) -> Result<DocInfo> {
    let limits = Limits::to_engine(limits.as_ref());
    guarded(|| pdfedit_engine::open_facts_within(&pdf, password.as_deref(), &limits))
        .map(DocInfo::from)
}

/// Text spans and form fields, already in the API's shape.
#[napi]
pub fn read_text(pdf: Buffer, options: Option<ReadTextOptions>) -> Result<TextResult> {
    let o = options.unwrap_or(ReadTextOptions {
        password: None,
        limits: None,
        pages: None,
        text: None,
        forms: None,
        field_pages: None,
        ocr: None,
    });
    let limits = Limits::to_engine(o.limits.as_ref());
    guarded(|| {
        pdfedit_engine::read_text_within(
            &pdf,
            o.password.as_deref(),
            o.pages,
            o.text.unwrap_or(true),
            fields_of(o.forms, o.field_pages),
            &limits,
            None,
        )
    })
    .map(|(text, _)| TextResult::from(text))
}

/// [`read_text`]'s answer as one UTF-8 JSON document (`JSON.parse` of it equals
/// `readText`'s answer): far cheaper to hand across a process boundary than thousands of
/// span objects, and cheaper for napi to make. What the service's engine processes call.
#[napi]
pub fn read_text_json(pdf: Buffer, options: Option<ReadTextOptions>) -> Result<Buffer> {
    read_text(pdf, options).map(|t| Buffer::from(json::text_result_json(&t)))
}

/// The form fields a read lists: none without `forms`, else those of `field_pages` when
/// given, else those of the pages read.
fn fields_of(forms: Option<bool>, field_pages: Option<Vec<u32>>) -> pdfedit_engine::Fields {
    match (forms.unwrap_or(true), field_pages) {
        (false, _) => pdfedit_engine::Fields::None,
        (true, Some(pages)) => pdfedit_engine::Fields::Of(pages),
        (true, None) => pdfedit_engine::Fields::OfPages,
    }
}

/// Text spans and form fields with scanned pages read by OCR (`options.ocr`), and the
/// pages this call OCR'd (for the service's cache).
#[napi]
pub fn read_text_ocr(pdf: Buffer, options: ReadTextOptions) -> Result<OcrTextResult> {
    let ocr = options.ocr.map(pdfedit_engine::ocr::OcrOptions::from);
    let limits = Limits::to_engine(options.limits.as_ref());
    guarded(|| {
        pdfedit_engine::read_text_within(
            &pdf,
            options.password.as_deref(),
            options.pages,
            options.text.unwrap_or(true),
            fields_of(options.forms, options.field_pages),
            &limits,
            Some(&ocr.unwrap_or_default()),
        )
    })
    .map(OcrTextResult::from)
}

/// A PNG preview of a page or region, never larger than `maxBytes`.
#[napi]
pub fn render(pdf: Buffer, options: RenderOptions) -> Result<Buffer> {
    let to_box = |v: &Vec<f64>, what: &str| -> Result<[f32; 4]> {
        match v.as_slice() {
            [a, b, c, d] if [a, b, c, d].iter().all(|x| x.is_finite()) => {
                Ok([*a as f32, *b as f32, *c as f32, *d as f32])
            }
            _ => Err(invalid(format!("{what} must be [x0, y0, x1, y1]"))),
        }
    };
    let region = options
        .region
        .as_ref()
        .map(|r| to_box(r, "region"))
        .transpose()?;
    let highlights = options
        .highlights
        .unwrap_or_default()
        .iter()
        .map(|h| to_box(h, "a highlight"))
        .collect::<Result<Vec<_>>>()?;
    let request = pdfedit_engine::RenderRequest {
        page: options.page,
        region,
        highlights,
        width: options.width,
        max_bytes: options.max_bytes.map(|b| b as usize),
        limits: Limits::to_engine(options.limits.as_ref()),
    };
    guarded(|| pdfedit_engine::render(&pdf, options.password.as_deref(), &request))
        .map(Buffer::from)
}
