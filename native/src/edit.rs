//! The `edit` export: replace and delete, converted to and from the engine's types.

use napi::bindgen_prelude::{Buffer, Either, Either3};
use napi_derive::napi;
use pdfedit_engine::edit as engine;

use crate::enums::{
    Alignment, EditOp, FailReason, Fit, FontPolicy, MatchMode, OccurrenceEnd, Watermark,
};
use crate::error::{guarded, invalid, Result};

/// A region of one page.
#[napi(object)]
pub struct EditRegion {
    /// 1-based page.
    pub page: u32,
    /// `[x0, y0, x1, y1]` in top-left points.
    #[napi(js_name = "box")]
    pub bbox: Vec<f64>,
}

/// Where an edit applies.
#[napi(object)]
pub struct EditScope {
    /// 1-based pages.
    pub pages: Option<Vec<u32>>,
    /// A region; a match counts when its box lies inside.
    pub region: Option<EditRegion>,
    /// Only the match nearest after this phrase on the same page.
    pub anchor: Option<String>,
    /// n ≥ 1, `'first'` or `'last'`.
    pub occurrence: Option<Either<u32, OccurrenceEnd>>,
    /// Span ids from `readText` of the same document.
    #[napi(js_name = "span_ids")]
    pub span_ids: Option<Vec<String>>,
}

/// Style overrides of the new text (replace and insert): a font of the font list, a size in
/// points, a `#RRGGBB` colour.
#[napi(object)]
pub struct EditStyle {
    /// Font name from the font list.
    pub font: Option<String>,
    /// Size in points.
    pub size: Option<f64>,
    /// `#RRGGBB`.
    pub color: Option<String>,
}

/// Where an insert goes: `{page, x, y}` (baseline start, top-left points) or
/// `{after, newline?, page?}`.
#[napi(object)]
pub struct EditAt {
    /// 1-based page (required with x and y; limits the anchor search with `after`).
    pub page: Option<u32>,
    /// x from the left edge, points.
    pub x: Option<f64>,
    /// Baseline y from the top edge, points.
    pub y: Option<f64>,
    /// Anchor phrase.
    pub after: Option<String>,
    /// A new line below the anchor's line.
    pub newline: Option<bool>,
}

/// One form field's value: text (numbers arrive as text), a checkbox boolean, or a
/// multi-select list's options.
#[napi(object)]
pub struct EditFieldValue {
    /// Fully qualified or unique partial field name.
    pub name: String,
    /// The value.
    pub value: Either3<String, bool, Vec<String>>,
}

/// One edit.
#[napi(object)]
pub struct EditSpec {
    /// Position in the request, reported back as `edit_index`; default: its position in
    /// `edits`.
    pub index: Option<u32>,
    /// What the edit does (default `replace`).
    pub op: Option<EditOp>,
    /// Text to find (replace, delete).
    pub find: Option<String>,
    /// New text (replace).
    pub replace: Option<String>,
    /// How `find` is matched (default `exact`).
    #[napi(js_name = "match")]
    pub match_mode: Option<MatchMode>,
    /// Scope.
    pub scope: Option<EditScope>,
    /// How a replacement of another width is fitted (default `auto`).
    pub fit: Option<Fit>,
    /// Style overrides.
    pub style: Option<EditStyle>,
    /// Text to add (insert).
    pub text: Option<String>,
    /// Insert position.
    pub at: Option<EditAt>,
    /// Form values, in request order.
    pub fields: Option<Vec<EditFieldValue>>,
    /// Form: burn the values into the pages.
    pub flatten: Option<bool>,
}

/// The API's `options.font`.
#[napi(object)]
pub struct EditFontOptions {
    /// Which fonts new text may use (default `prefer_exact`).
    pub policy: Option<FontPolicy>,
}

/// Request-wide options: the API's (`font`, `break_signature`, `watermark`, `ocr`,
/// `ocr_languages`, `ocr_text_layer`), then those the service decides for its caller.
#[napi(object)]
pub struct EditOptions {
    /// Fonts new text may use.
    pub font: Option<EditFontOptions>,
    /// Allow editing a signed document.
    #[napi(js_name = "break_signature")]
    pub break_signature: Option<bool>,
    /// Text of the mark drawn on every page of an output with changes (the SAMPLE mark of
    /// test-mode and keyless callers; set by the service, never by API clients). Printable
    /// ASCII; the result then warns `sample_mark`.
    pub mark: Option<String>,
    /// The 'Edited' mark (default `auto`: marked when the document is flagged).
    pub watermark: Option<Watermark>,
    /// Whether `'off'` is allowed on a flagged document (decided by the service from the
    /// plan and the accepted terms).
    #[napi(js_name = "watermark_off_allowed")]
    pub watermark_off_allowed: Option<bool>,
    /// Find text on scanned pages by OCR; replace and delete there are drawn as pixels.
    pub ocr: Option<bool>,
    /// Tesseract language codes for OCR (default `["eng"]`); needs `ocr`.
    #[napi(js_name = "ocr_languages")]
    pub ocr_languages: Option<Vec<String>>,
    /// Give pages read by OCR an invisible text layer in the output.
    #[napi(js_name = "ocr_text_layer")]
    pub ocr_text_layer: Option<bool>,
    /// Budget of one page's OCR run in milliseconds (default 60000).
    #[napi(js_name = "ocr_page_budget_ms")]
    pub ocr_page_budget_ms: Option<u32>,
    /// Pages of this document already read with the same languages (the service's cache).
    #[napi(js_name = "ocr_cached")]
    pub ocr_cached: Option<Vec<crate::types::OcrPage>>,
    /// Leave the changes' preview crops empty (the service renders them on first fetch).
    #[napi(js_name = "lazy_previews")]
    pub lazy_previews: Option<bool>,
    /// Reuse what is the same for every record of a batch (renders of the template's
    /// unedited pages) from this process's template cache; the result is the same.
    #[napi(js_name = "template_cache")]
    pub template_cache: Option<bool>,
    /// Budgets of this call (set by the service from the caller's plan).
    pub limits: Option<crate::Limits>,
}

/// The edit request.
#[napi(object)]
pub struct EditRequest {
    /// Open password.
    pub password: Option<String>,
    /// Edits in order.
    pub edits: Vec<EditSpec>,
    /// Options.
    pub options: Option<EditOptions>,
}

/// One applied, verified change.
#[napi(object)]
pub struct EditChange {
    /// The edit's index.
    #[napi(js_name = "edit_index")]
    pub edit_index: u32,
    /// 1-based page.
    pub page: u32,
    /// The edit's op.
    pub op: EditOp,
    /// Replace, delete, redact: the text found.
    pub find: Option<String>,
    /// Replace: the text drawn instead.
    pub replace: Option<String>,
    /// Insert: the text added.
    pub text: Option<String>,
    /// `exact-embedded`, `exact-declared`, `metric-twin`, `look-alike` or `none`.
    #[napi(js_name = "font_source")]
    pub font_source: String,
    /// Font name.
    #[napi(js_name = "font_used")]
    pub font_used: String,
    /// The pixel check ran and passed.
    pub verified: bool,
    /// Pixels changed outside the change's area.
    #[napi(js_name = "collateral_pixels")]
    pub collateral_pixels: f64,
    /// `[x0, y0, x1, y1]` top-left points.
    #[napi(js_name = "box")]
    pub bbox: Vec<f64>,
    /// PNG of the region before (≤ 200 KB).
    #[napi(js_name = "before_png")]
    pub before_png: Buffer,
    /// PNG of the region after (≤ 200 KB).
    #[napi(js_name = "after_png")]
    pub after_png: Buffer,
    /// Form: the field's fully qualified name.
    pub field: Option<String>,
    /// Form: the value as read back.
    pub value: Option<Either3<String, bool, Vec<String>>>,
    /// Replace: the line's alignment, kept.
    pub alignment: Option<Alignment>,
}

/// An edit whose text was not found.
#[napi(object)]
pub struct EditUnmatched {
    /// The edit's index.
    pub index: u32,
    /// Its op.
    pub op: EditOp,
    /// What was looked for.
    pub find: String,
}

/// An edit found but not applied.
#[napi(object)]
pub struct EditFailed {
    /// The edit's index.
    pub index: u32,
    /// Its op.
    pub op: EditOp,
    /// Why (a stable snake_case word).
    pub reason: FailReason,
    /// Explanation.
    pub message: String,
    /// Form: the field the reason is about.
    pub field: Option<String>,
}

/// Where the time of an edit went, in milliseconds (each stage summed over edits and pages).
#[napi(object)]
pub struct EditTimings {
    /// Opening the document and interpreting page content.
    #[napi(js_name = "parse_ms")]
    pub parse_ms: f64,
    /// Finding matches, planning and writing the new content.
    #[napi(js_name = "edit_ms")]
    pub edit_ms: f64,
    /// Rendering pages for verification.
    #[napi(js_name = "render_ms")]
    pub render_ms: f64,
    /// Comparing renders and cropping previews.
    #[napi(js_name = "diff_ms")]
    pub diff_ms: f64,
    /// Serialising (and re-encrypting) the document.
    #[napi(js_name = "save_ms")]
    pub save_ms: f64,
    /// Adding the SAMPLE mark.
    #[napi(js_name = "mark_ms")]
    pub mark_ms: f64,
    /// Classifying pages and reading scanned ones by OCR.
    #[napi(js_name = "ocr_ms")]
    pub ocr_ms: f64,
    /// The whole engine call.
    #[napi(js_name = "total_ms")]
    pub total_ms: f64,
}

/// Something a redaction removed besides the page text.
#[napi(object)]
pub struct EditRemoval {
    /// The redact edit's index.
    pub index: u32,
    /// `image`, `annotation`, `form_field`, `metadata`, `xmp`, `outline`, `structure`,
    /// `page_label`, `embedded_file`, `javascript`, `xfa`, `name_tree` or `other`.
    pub kind: String,
    /// 1-based page, when the place belongs to one.
    pub page: Option<u32>,
    /// Where exactly (object and key, or image and pixels).
    #[napi(js_name = "where")]
    pub location: String,
}

/// A place in the redacted output where the string still occurs.
#[napi(object)]
pub struct EditResidual {
    /// The redact edit's index.
    pub index: u32,
    /// `page_text`, `stream` or one of the removal kinds.
    pub kind: String,
    /// 1-based page, when known.
    pub page: Option<u32>,
    /// Where exactly.
    #[napi(js_name = "where")]
    pub location: String,
    /// The text found there.
    pub text: String,
}

/// The edit result.
#[napi(object)]
pub struct EditResult {
    /// The output PDF.
    pub pdf: Buffer,
    /// Applied changes.
    pub changes: Vec<EditChange>,
    /// Edits not found.
    pub unmatched: Vec<EditUnmatched>,
    /// Edits rolled back or refused.
    pub failed: Vec<EditFailed>,
    /// Warnings such as `approx_font_used`.
    pub warnings: Vec<String>,
    /// Form flattening: the fields left live (what `flatten_skipped` is about).
    #[napi(js_name = "flatten_skipped")]
    pub flatten_skipped: Vec<String>,
    /// 1-based pages touched by applied edits.
    #[napi(js_name = "pages_touched")]
    pub pages_touched: Vec<u32>,
    /// Where the time went (milliseconds).
    pub timings: EditTimings,
    /// Redaction: what was removed besides the page text.
    pub removed: Vec<EditRemoval>,
    /// Redaction: places where a redacted string still occurs in the output.
    pub residual: Vec<EditResidual>,
    /// What the document was classified as (SPEC rule 12); empty for an ordinary one.
    pub flags: Vec<EditFlag>,
    /// 1-based pages that carry the 'Edited' mark.
    #[napi(js_name = "marked_pages")]
    pub marked_pages: Vec<u32>,
    /// 1-based pages touched by applied edits that were read by OCR (billed five each).
    #[napi(js_name = "ocr_pages")]
    pub ocr_pages: Vec<u32>,
    /// Pages this call read by OCR, for the service's cache.
    #[napi(js_name = "ocr_read")]
    pub ocr_read: Vec<crate::types::OcrPage>,
}

/// One flag of the document and its evidence.
#[napi(object)]
pub struct EditFlag {
    /// `bank_statement`, `identity_document`, `signed_contract`, `invoice` or `sealed_paper`.
    pub kind: String,
    /// What in the document shows it.
    pub evidence: String,
}

fn convert_edit(position: usize, e: EditSpec) -> Result<engine::Edit> {
    let index = e
        .index
        .unwrap_or_else(|| u32::try_from(position).unwrap_or(u32::MAX));
    let op = engine::EditOp::from(e.op.unwrap_or(EditOp::Replace));
    let match_mode = e.match_mode.unwrap_or(MatchMode::Exact).into();
    let fit = e.fit.unwrap_or(Fit::Auto).into();
    let scope = match e.scope {
        None => engine::Scope::default(),
        Some(s) => engine::Scope {
            pages: s.pages,
            region: s
                .region
                .map(|r| match r.bbox.as_slice() {
                    [a, b, c, d] if [a, b, c, d].iter().all(|v| v.is_finite()) => {
                        Ok(engine::Region {
                            page: r.page,
                            bbox: [*a, *b, *c, *d],
                        })
                    }
                    _ => Err(invalid("scope.region.box must be [x0, y0, x1, y1]")),
                })
                .transpose()?,
            anchor: s.anchor,
            occurrence: match s.occurrence {
                None => None,
                Some(Either::A(0)) => return Err(invalid("scope.occurrence must be ≥ 1")),
                Some(Either::A(n)) => Some(engine::Occurrence::Nth(n)),
                Some(Either::B(OccurrenceEnd::First)) => Some(engine::Occurrence::First),
                Some(Either::B(OccurrenceEnd::Last)) => Some(engine::Occurrence::Last),
            },
            span_ids: s.span_ids,
        },
    };
    let style = e
        .style
        .map_or_else(engine::Style::default, |s| engine::Style {
            font: s.font,
            size: s.size,
            color: s.color,
        });
    let form = match (op, e.fields) {
        (engine::EditOp::Form, Some(fields)) => Some(engine::FormSpec {
            fields: fields
                .into_iter()
                .map(|f| (f.name, field_input(f.value)))
                .collect(),
            flatten: e.flatten.unwrap_or(false),
        }),
        (engine::EditOp::Form, None) => {
            return Err(invalid(format!("edit {index}: form needs fields")))
        }
        _ => None,
    };
    let insert = match op {
        engine::EditOp::Insert => Some(convert_insert(index, e.text, e.at)?),
        _ => None,
    };
    Ok(engine::Edit {
        index,
        op,
        find: e.find.unwrap_or_default(),
        replace: e.replace.unwrap_or_default(),
        match_mode,
        scope,
        fit,
        style,
        insert,
        form,
    })
}

fn field_input(v: Either3<String, bool, Vec<String>>) -> engine::FieldInput {
    match v {
        Either3::A(t) => engine::FieldInput::Text(t),
        Either3::B(b) => engine::FieldInput::Bool(b),
        Either3::C(list) => engine::FieldInput::Many(list),
    }
}

fn field_output(v: engine::FieldInput) -> Either3<String, bool, Vec<String>> {
    match v {
        engine::FieldInput::Text(t) => Either3::A(t),
        engine::FieldInput::Bool(b) => Either3::B(b),
        engine::FieldInput::Many(list) => Either3::C(list),
    }
}

fn convert_insert(
    index: u32,
    text: Option<String>,
    at: Option<EditAt>,
) -> Result<engine::InsertSpec> {
    let text = text
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid(format!("edit {index}: insert needs a text")))?;
    let at = at.ok_or_else(|| invalid(format!("edit {index}: insert needs at")))?;
    let at = match at {
        EditAt {
            after: Some(phrase),
            newline,
            page,
            ..
        } => engine::At::After {
            phrase,
            newline: newline.unwrap_or(false),
            page,
        },
        EditAt {
            page: Some(page),
            x: Some(x),
            y: Some(y),
            ..
        } if x.is_finite() && y.is_finite() => engine::At::Point { page, x, y },
        _ => {
            return Err(invalid(format!(
                "edit {index}: at is {{page, x, y}} or {{after}}"
            )))
        }
    };
    Ok(engine::InsertSpec { text, at })
}

fn convert_request(r: EditRequest) -> Result<engine::EditRequest> {
    if let Some(o) = r.options.as_ref().filter(|o| o.ocr != Some(true)) {
        // As the API answers: OCR's settings without OCR are a mistake, not ignored.
        let named = [
            ("ocr_languages", o.ocr_languages.is_some()),
            ("ocr_text_layer", o.ocr_text_layer.is_some()),
        ];
        if let Some((name, _)) = named.iter().find(|(_, set)| *set) {
            return Err(invalid(format!(
                "options.{name}: applies only with options.ocr true."
            )));
        }
    }
    let options = r
        .options
        .map_or_else(engine::EditOptions::default, |o| engine::EditOptions {
            font_policy: o
                .font
                .and_then(|f| f.policy)
                .unwrap_or(FontPolicy::PreferExact)
                .into(),
            break_signature: o.break_signature.unwrap_or(false),
            mark: o.mark,
            watermark: o.watermark.unwrap_or(Watermark::Auto).into(),
            watermark_off_allowed: o.watermark_off_allowed.unwrap_or(false),
            ocr: o.ocr.unwrap_or(false).then(|| {
                pdfedit_engine::ocr::OcrOptions::from(crate::types::OcrOptions {
                    languages: o.ocr_languages,
                    page_budget_ms: o.ocr_page_budget_ms,
                    cached: o.ocr_cached,
                })
            }),
            ocr_text_layer: o.ocr_text_layer.unwrap_or(false),
            lazy_previews: o.lazy_previews.unwrap_or(false),
            template_cache: o.template_cache.unwrap_or(false),
            limits: crate::Limits::to_engine(o.limits.as_ref()),
        });
    Ok(engine::EditRequest {
        password: r.password,
        edits: r
            .edits
            .into_iter()
            .enumerate()
            .map(|(i, e)| convert_edit(i, e))
            .collect::<Result<_>>()?,
        options,
    })
}

fn convert_result(r: engine::EditResult) -> EditResult {
    EditResult {
        pdf: Buffer::from(r.pdf),
        changes: r
            .changes
            .into_iter()
            .map(|c| EditChange {
                edit_index: c.edit_index,
                page: c.page,
                op: c.op.into(),
                find: matches!(
                    c.op,
                    engine::EditOp::Replace | engine::EditOp::Delete | engine::EditOp::Redact
                )
                .then(|| c.find.clone()),
                replace: (c.op == engine::EditOp::Replace).then(|| c.replace.clone()),
                text: (c.op == engine::EditOp::Insert).then_some(c.replace),
                font_source: c.font_source.into(),
                font_used: c.font_used,
                verified: c.verified,
                collateral_pixels: c.collateral_pixels as f64,
                bbox: c.bbox.to_vec(),
                before_png: Buffer::from(c.before_png),
                after_png: Buffer::from(c.after_png),
                field: c.field,
                value: c.value.map(field_output),
                alignment: c.alignment.map(Alignment::from),
            })
            .collect(),
        unmatched: r
            .unmatched
            .into_iter()
            .map(|u| EditUnmatched {
                index: u.edit_index,
                op: u.op.into(),
                find: u.find,
            })
            .collect(),
        failed: r
            .failed
            .into_iter()
            .map(|f| EditFailed {
                index: f.edit_index,
                op: f.op.into(),
                reason: f.reason.into(),
                message: f.message,
                field: f.field,
            })
            .collect(),
        warnings: r.warnings,
        flatten_skipped: r.flatten_skipped,
        pages_touched: r.pages_touched,
        timings: EditTimings {
            parse_ms: r.timings.parse_ms,
            edit_ms: r.timings.edit_ms,
            render_ms: r.timings.render_ms,
            diff_ms: r.timings.diff_ms,
            save_ms: r.timings.save_ms,
            mark_ms: r.timings.mark_ms,
            ocr_ms: r.timings.ocr_ms,
            total_ms: r.timings.total_ms,
        },
        removed: r
            .removed
            .into_iter()
            .map(|x| EditRemoval {
                index: x.edit_index,
                kind: x.kind.into(),
                page: x.page,
                location: x.location,
            })
            .collect(),
        residual: r
            .residual
            .into_iter()
            .map(|x| EditResidual {
                index: x.edit_index,
                kind: x.kind.into(),
                page: x.page,
                location: x.location,
                text: x.text,
            })
            .collect(),
        flags: r
            .flags
            .into_iter()
            .map(|f| EditFlag {
                kind: f.kind.into(),
                evidence: f.evidence,
            })
            .collect(),
        marked_pages: r.marked_pages,
        ocr_pages: r.ocr_pages,
        ocr_read: r
            .ocr_read
            .into_iter()
            .map(crate::types::ocr_page_out)
            .collect(),
    }
}

/// Replaces, deletes and redacts text in the document's own fonts; every change is
/// verified by rendering and rolled back (into `failed`) when anything else on the page
/// moved. A redaction also reports what it removed elsewhere and what remains.
#[napi]
pub fn edit(pdf: Buffer, request: EditRequest) -> Result<EditResult> {
    let request = convert_request(request)?;
    guarded(|| engine::edit(&pdf, &request)).map(convert_result)
}

/// Size of a verification raster.
#[napi(object)]
pub struct RasterSize {
    /// Pixels.
    pub width: u32,
    /// Pixels.
    pub height: u32,
}

/// Renders 1-based `page` exactly as edit verification does and returns the raster's size:
/// one bare PDFium render, the floor an edit's before/after check compares with (bench).
#[napi]
pub fn bare_render(pdf: Buffer, page: u32, password: Option<String>) -> Result<RasterSize> {
    guarded(|| engine::bare_render(&pdf, password.as_deref(), page))
        .map(|(width, height)| RasterSize { width, height })
}
