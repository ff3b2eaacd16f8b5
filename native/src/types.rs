//! The JavaScript shapes of the engine's results: conversion only, no logic.
//!
//! Document facts use camelCase (internal to the service); text spans and form fields are
//! already in the public API's snake_case shape so the service can return them as is.

use napi::bindgen_prelude::{Either, Either4, Null};
use napi_derive::napi;

/// One page as displayed.
#[napi(object)]
pub struct PageInfo {
    /// Width in points, rotation applied.
    pub width: f64,
    /// Height in points, rotation applied.
    pub height: f64,
    /// Clockwise display rotation: 0, 90, 180 or 270.
    pub rotation: u32,
}

/// One digital signature.
#[napi(object)]
pub struct SignatureInfo {
    /// Signature field name (not known yet: PDFium does not link signatures to fields).
    pub field: Option<String>,
    /// `/SubFilter`, e.g. `adbe.pkcs7.detached`.
    pub sub_filter: Option<String>,
    /// The signer's reason.
    pub reason: Option<String>,
    /// The signing time as written in the PDF (`D:…`).
    pub signing_time: Option<String>,
}

/// What a document is.
#[napi(object)]
pub struct DocInfo {
    /// Number of pages.
    pub page_count: u32,
    /// Whether the file uses a security handler.
    pub encrypted: bool,
    /// Pages in order.
    pub pages: Vec<PageInfo>,
    /// Signatures that carry a value.
    pub signatures: Vec<SignatureInfo>,
    /// AcroForm present (also for XFA hybrids).
    pub has_acro_form: bool,
    /// XFA present.
    pub has_xfa: bool,
}

/// What a document may cost, checked before PDFium opens it (absent: the engine's
/// defaults, the paid plans' budgets).
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// Decoded bytes of one stream.
    pub stream_bytes: Option<f64>,
    /// Decoded bytes of all streams together.
    pub document_bytes: Option<f64>,
    /// Operators one page executes (forms counted as often as drawn).
    pub page_operators: Option<f64>,
    /// How deep Form XObjects may nest.
    pub form_depth: Option<u32>,
    /// Form XObjects one page draws, nested draws included.
    pub form_draws: Option<f64>,
}

impl Limits {
    /// The engine's limits: each given one (a positive finite number), the default else.
    pub fn to_engine(limits: Option<&Limits>) -> pdfedit_engine::Limits {
        let d = pdfedit_engine::Limits::default();
        let Some(l) = limits else {
            return d;
        };
        let n = |v: Option<f64>, default: u64| {
            v.filter(|v| v.is_finite() && *v >= 0.0)
                .map_or(default, |v| v as u64)
        };
        pdfedit_engine::Limits {
            stream_bytes: n(l.stream_bytes, d.stream_bytes),
            document_bytes: n(l.document_bytes, d.document_bytes),
            page_operators: n(l.page_operators, d.page_operators),
            form_depth: l.form_depth.unwrap_or(d.form_depth),
            form_draws: n(l.form_draws, d.form_draws),
            page_side: d.page_side,
        }
    }
}

/// Options of `readText`.
#[napi(object)]
pub struct ReadTextOptions {
    /// Password (user or owner).
    pub password: Option<String>,
    /// Budgets of this call.
    pub limits: Option<Limits>,
    /// 1-based pages; all when absent.
    pub pages: Option<Vec<u32>>,
    /// Read the text layer (default true).
    pub text: Option<bool>,
    /// Read form fields (default true).
    pub forms: Option<bool>,
    /// With forms: list the fields whose first widget is on these 1-based pages instead of
    /// those of `pages` (a read split over engine processes lists them all in one part).
    pub field_pages: Option<Vec<u32>>,
    /// Read scanned pages by OCR.
    pub ocr: Option<OcrOptions>,
}

/// OCR of scanned pages (`readText` and `edit`).
#[napi(object)]
pub struct OcrOptions {
    /// Tesseract language codes; `eng` when empty.
    pub languages: Option<Vec<String>>,
    /// Budget of one page's OCR run in milliseconds (default 60000).
    pub page_budget_ms: Option<u32>,
    /// Pages already read with the same languages (the service's cache).
    pub cached: Option<Vec<OcrPage>>,
}

/// One word read by OCR.
#[napi(object)]
pub struct OcrWord {
    /// The word.
    pub text: String,
    /// `[x0, y0, x1, y1]`, points, top-left origin.
    #[napi(js_name = "box")]
    pub bbox: Vec<f64>,
    /// 0…100.
    pub confidence: f64,
    /// Block number.
    pub block: u32,
    /// Line number, 1-based, unique within the page.
    pub line: u32,
}

/// The OCR of one page.
#[napi(object)]
pub struct OcrPage {
    /// 1-based page.
    pub page: u32,
    /// Languages it was read with (`eng+deu`).
    pub languages: String,
    /// Skew undone before reading, degrees.
    pub skew: f64,
    /// Words in reading order.
    pub words: Vec<OcrWord>,
}

/// The answer of `readTextOcr`: the text, and the pages OCR'd by this call.
#[napi(object)]
pub struct OcrTextResult {
    /// Requested pages.
    pub pages: Vec<PageText>,
    /// Form fields on the requested pages.
    pub fields: Vec<FormField>,
    /// Pages read by OCR in this call (for the service's cache).
    pub ocr: Vec<OcrPage>,
}

impl From<OcrOptions> for pdfedit_engine::ocr::OcrOptions {
    fn from(o: OcrOptions) -> Self {
        pdfedit_engine::ocr::OcrOptions {
            languages: o.languages.unwrap_or_default(),
            page_budget_ms: u64::from(o.page_budget_ms.unwrap_or(0)),
            cached: o
                .cached
                .unwrap_or_default()
                .into_iter()
                .map(ocr_page_in)
                .collect(),
        }
    }
}

fn ocr_page_in(p: OcrPage) -> pdfedit_engine::ocr::OcrPage {
    pdfedit_engine::ocr::OcrPage {
        page: p.page,
        languages: p.languages,
        skew: p.skew as f32,
        words: p
            .words
            .into_iter()
            .filter_map(|w| {
                let b: [f64; 4] = w.bbox.try_into().ok()?;
                Some(pdfedit_engine::ocr::OcrWord {
                    text: w.text,
                    bbox: b.map(|v| v as f32),
                    confidence: w.confidence as f32,
                    block: w.block,
                    line: w.line,
                })
            })
            .collect(),
    }
}

/// An engine OCR page in the addon's shape.
pub fn ocr_page_out(p: pdfedit_engine::ocr::OcrPage) -> OcrPage {
    OcrPage {
        page: p.page,
        languages: p.languages,
        skew: round2(p.skew),
        words: p
            .words
            .into_iter()
            .map(|w| OcrWord {
                text: w.text,
                bbox: w.bbox.iter().map(|&v| round2(v)).collect(),
                confidence: round2(w.confidence),
                block: w.block,
                line: w.line,
            })
            .collect(),
    }
}

impl
    From<(
        pdfedit_engine::TextResult,
        Vec<pdfedit_engine::ocr::OcrPage>,
    )> for OcrTextResult
{
    fn from(
        (t, ocr): (
            pdfedit_engine::TextResult,
            Vec<pdfedit_engine::ocr::OcrPage>,
        ),
    ) -> Self {
        let t = TextResult::from(t);
        OcrTextResult {
            pages: t.pages,
            fields: t.fields,
            ocr: ocr.into_iter().map(ocr_page_out).collect(),
        }
    }
}

/// One text span in the API's shape.
#[napi(object)]
pub struct Span {
    /// Stable span id.
    #[napi(js_name = "span_id")]
    pub span_id: String,
    /// 1-based page.
    pub page: u32,
    /// Text of the span.
    pub text: String,
    /// `[x0, y0, x1, y1]`, points, top-left origin.
    #[napi(js_name = "box")]
    pub bbox: Vec<f64>,
    /// Font name without subset tag.
    pub font: String,
    /// Font size in points.
    pub size: f64,
    /// `#rrggbb`.
    pub color: String,
    /// Style flags.
    #[napi(ts_type = "Array<'bold' | 'italic' | 'monospace' | 'serif'>")]
    pub flags: Vec<String>,
    /// Line id, unique within the page.
    pub line: u32,
    /// Block id, unique within the page.
    pub block: u32,
    /// Baseline angle, degrees counter-clockwise as displayed.
    pub rotation: f64,
    /// Where the text comes from: `text-layer` (the page's content), `annotation` (drawn
    /// by an annotation's appearance: free text, stamps, signature appearances),
    /// `form-field` (drawn by a form widget's appearance: a filled value, a button's
    /// caption; these two are listed after the content's spans, with lines and blocks of
    /// their own) or `ocr` (recognised on a scanned page).
    #[napi(ts_type = "'text-layer' | 'annotation' | 'form-field' | 'ocr'")]
    pub source: String,
    /// A word space separates this span from the previous span of the same line; `false`
    /// means it continues that span's word (a superscript, a colour change mid-word).
    #[napi(js_name = "space_before")]
    pub space_before: bool,
    /// OCR spans: the recogniser's confidence in the word, 0…100.
    pub confidence: Option<f64>,
}

/// The text of one page.
#[napi(object)]
pub struct PageText {
    /// 1-based page.
    pub page: u32,
    /// Displayed width in points.
    pub width: f64,
    /// Displayed height in points.
    pub height: f64,
    /// Clockwise rotation.
    pub rotation: u32,
    /// Spans in reading order: the page content's, then the annotations'.
    pub spans: Vec<Span>,
    /// The page as plain text in reading order: spans joined by a space when
    /// `space_before` says so, lines by a newline, a word hyphenated at a line end joined
    /// (hyphen dropped); the annotations' text follows the content's.
    pub text: String,
}

/// One AcroForm field in the API's shape.
#[napi(object)]
pub struct FormField {
    /// Fully qualified name.
    pub name: String,
    /// Field kind.
    #[napi(
        js_name = "type",
        ts_type = "'text' | 'checkbox' | 'radio' | 'combo' | 'list' | 'signature' | 'button'"
    )]
    pub kind: String,
    /// text/combo: string; checkbox: checked; radio: export value or null; list: selection;
    /// signature: signed; button: null.
    pub value: Either4<String, bool, Vec<String>, Null>,
    /// Options of combo and list boxes.
    pub options: Option<Vec<String>>,
    /// 1-based page of the first widget.
    pub page: u32,
    /// Box of the first widget.
    #[napi(js_name = "box")]
    pub bbox: Vec<f64>,
    /// A viewer does not let the user change the value (/Ff ReadOnly).
    #[napi(js_name = "read_only")]
    pub read_only: bool,
    /// The value must be set when the form is submitted (/Ff Required).
    pub required: bool,
    /// Text fields: the value may hold line breaks (/Ff Multiline).
    pub multiline: bool,
    /// Text fields: one character per cell, `max_len` cells (/Ff Comb).
    pub comb: bool,
    /// Text fields: the most characters the value may hold (/MaxLen); null when unset.
    #[napi(js_name = "max_len")]
    pub max_len: Either<u32, Null>,
}

/// The answer of `readText`.
#[napi(object)]
pub struct TextResult {
    /// Requested pages.
    pub pages: Vec<PageText>,
    /// Form fields on the requested pages.
    pub fields: Vec<FormField>,
}

/// Options of `render`.
#[napi(object)]
pub struct RenderOptions {
    /// Password (user or owner).
    pub password: Option<String>,
    /// Budgets of this call.
    pub limits: Option<Limits>,
    /// 1-based page.
    pub page: u32,
    /// `[x0, y0, x1, y1]` region of the page.
    pub region: Option<Vec<f64>>,
    /// Boxes to highlight.
    pub highlights: Option<Vec<Vec<f64>>>,
    /// Output width in pixels (default 1000, max 2000).
    pub width: Option<u32>,
    /// Byte budget (default 200000).
    pub max_bytes: Option<u32>,
}

impl From<pdfedit_engine::DocInfo> for DocInfo {
    fn from(d: pdfedit_engine::DocInfo) -> Self {
        DocInfo {
            page_count: d.page_count,
            encrypted: d.encrypted,
            pages: d
                .pages
                .into_iter()
                .map(|p| PageInfo {
                    width: f64::from(p.width),
                    height: f64::from(p.height),
                    rotation: u32::from(p.rotation),
                })
                .collect(),
            signatures: d
                .signatures
                .into_iter()
                .map(|s| SignatureInfo {
                    field: None,
                    sub_filter: s.sub_filter,
                    reason: s.reason,
                    signing_time: s.signing_time,
                })
                .collect(),
            has_acro_form: d.has_acro_form,
            has_xfa: d.has_xfa,
        }
    }
}

fn rect(r: pdfedit_engine::Rect) -> Vec<f64> {
    r.to_array().iter().map(|&v| round2(v)).collect()
}

/// f32 → f64 keeps binary noise (12.3 becomes 12.300000190734863); round to what we mean.
fn round2(v: f32) -> f64 {
    (f64::from(v) * 100.0).round() / 100.0 + 0.0
}

impl From<pdfedit_engine::TextResult> for TextResult {
    fn from(t: pdfedit_engine::TextResult) -> Self {
        TextResult {
            pages: t.pages.into_iter().map(page_text).collect(),
            fields: t.fields.into_iter().map(form_field).collect(),
        }
    }
}

fn page_text(p: pdfedit_engine::PageText) -> PageText {
    let text = p.plain_text();
    PageText {
        text,
        page: p.page,
        width: round2(p.width),
        height: round2(p.height),
        rotation: u32::from(p.rotation),
        spans: p
            .spans
            .into_iter()
            .map(|s| Span {
                span_id: s.span_id,
                page: s.page,
                text: s.text,
                bbox: s.bbox.iter().map(|&v| round2(v)).collect(),
                font: s.font,
                size: round2(s.size),
                color: s.color,
                flags: s.flags.into_iter().map(str::to_string).collect(),
                line: s.line,
                block: s.block,
                rotation: round2(s.rotation),
                source: s.source.to_string(),
                space_before: s.space_before,
                confidence: s.confidence.map(round2),
            })
            .collect(),
    }
}

fn form_field(f: pdfedit_engine::FormField) -> FormField {
    use pdfedit_engine::FieldValue as V;
    FormField {
        name: f.name,
        kind: f.kind.as_str().to_string(),
        value: match f.value {
            V::Text(s) => Either4::A(s),
            V::Bool(b) => Either4::B(b),
            V::List(l) => Either4::C(l),
            V::Null => Either4::D(Null),
        },
        options: f.options,
        page: f.page,
        bbox: rect(f.bbox),
        read_only: f.read_only,
        required: f.required,
        multiline: f.multiline,
        comb: f.comb,
        max_len: f.max_len.map_or(Either::B(Null), Either::A),
    }
}
