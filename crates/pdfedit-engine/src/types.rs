//! The edit request and result, in the API's shape (see API-DECISIONS.md).

use crate::words::api_words;

api_words! {
    $
    #[doc = "What an edit does."]
    pub enum EditOp (export edit_ops, default Replace) {
    /// Replace the found text.
    Replace = "replace",
    /// Remove the found text and tidy the spacing around it.
    Delete = "delete",
    /// Remove the found text for real (glyphs, image pixels, document strings) and cover
    /// its place with a filled box.
    Redact = "redact",
    /// Add text at a point or after an anchor phrase.
    Insert = "insert",
    /// Fill AcroForm fields.
    Form = "form",
    }
}

api_words! {
    $
    #[doc = "How `find` is matched."]
    pub enum MatchMode (export match_modes, default Exact) {
    /// Exact text (default).
    Exact = "exact",
    /// Case-insensitive.
    Icase = "icase",
    /// Whole words, case-sensitive.
    Word = "word",
    /// A regular expression (`replace` may use `$1`…).
    Regex = "regex",
    }
}

/// Which match of several.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occurrence {
    /// The nth (1-based) in reading order.
    Nth(u32),
    /// The first.
    First,
    /// The last.
    Last,
}

/// A region of one page.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    /// 1-based page.
    pub page: u32,
    /// `[x0, y0, x1, y1]` in top-left points; a match counts when its box lies inside.
    pub bbox: [f64; 4],
}

/// Limits on where an edit applies.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scope {
    /// 1-based pages.
    pub pages: Option<Vec<u32>>,
    /// A region of a page.
    pub region: Option<Region>,
    /// Only the match nearest after this phrase (same page, reading order).
    pub anchor: Option<String>,
    /// Which match; default every match.
    pub occurrence: Option<Occurrence>,
    /// Only matches inside these spans of `read_text`.
    pub span_ids: Option<Vec<String>>,
}

api_words! {
    $
    #[doc = "How a longer or shorter text is fitted."]
    pub enum Fit (export fits, default Auto) {
    /// Keep the size; condense to 85 %, then shrink to 80 % when there is no room.
    Auto = "auto",
    /// Never alter size or spacing; the rest of the line shifts.
    None = "none",
    /// Always scale to the old width.
    Shrink = "shrink",
    /// Replace in place when the text fits its line; otherwise re-break the paragraph from
    /// the match's line on (simple paragraphs only: reason `reflow_unsupported` otherwise,
    /// `overflow` when it would need more room than is empty below it).
    Reflow = "reflow",
    }
}

/// Style overrides for the new text (replace and insert).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Style {
    /// A font name from the font list (`LiberationSerif-Bold`), or a listed family
    /// (`Times New Roman`, then in the style of the text it replaces); embedded as a new
    /// subset, `font_source` is its kind in the list.
    pub font: Option<String>,
    /// Size in points.
    pub size: Option<f64>,
    /// `#RRGGBB`.
    pub color: Option<String>,
}

/// A value for one form field.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldInput {
    /// Text, combo, radio (export value), list (one option), or a checkbox's export value.
    Text(String),
    /// A checkbox: checked or not.
    Bool(bool),
    /// A multi-select list's options.
    Many(Vec<String>),
}

/// What a `form` edit does.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FormSpec {
    /// Field name (fully qualified, or a unique partial name) to value, in request order.
    pub fields: Vec<(String, FieldInput)>,
    /// Burn the appearances into the pages and remove the fields.
    pub flatten: bool,
}

/// Where an `insert` edit puts its text.
#[derive(Debug, Clone, PartialEq)]
pub enum At {
    /// The baseline start point, top-left points of a 1-based page.
    Point {
        /// 1-based page.
        page: u32,
        /// x from the left edge.
        x: f64,
        /// y of the baseline from the top edge.
        y: f64,
    },
    /// Right after an anchor phrase (same line), or on a new line below it.
    After {
        /// The anchor phrase.
        phrase: String,
        /// A new line below the anchor's line, same left edge and leading.
        newline: bool,
        /// Only look for the anchor on this page.
        page: Option<u32>,
    },
}

/// What an `insert` edit adds.
#[derive(Debug, Clone, PartialEq)]
pub struct InsertSpec {
    /// The text to add.
    pub text: String,
    /// Where.
    pub at: At,
}

/// One edit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Edit {
    /// Position in the request.
    pub index: u32,
    /// Replace or delete.
    pub op: EditOp,
    /// The text to find.
    pub find: String,
    /// The new text (replace).
    pub replace: String,
    /// Match mode.
    pub match_mode: MatchMode,
    /// Scope.
    pub scope: Scope,
    /// Fitting.
    pub fit: Fit,
    /// Style overrides.
    pub style: Style,
    /// The text and place of an `insert`.
    pub insert: Option<InsertSpec>,
    /// The fields of a `form` edit.
    pub form: Option<FormSpec>,
}

api_words! {
    $
    #[doc = "Font fallback policy (SPEC rule 5)."]
    pub enum FontPolicy (export font_policies, default PreferExact) {
    /// Own font, then metric twin, then look-alike.
    PreferExact = "prefer_exact",
    /// Refuse look-alikes (`no_metric_font`).
    MetricOnly = "metric_only",
    }
}

/// Request-wide options.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EditOptions {
    /// Font fallback policy.
    pub font_policy: FontPolicy,
    /// Allow editing a signed document.
    pub break_signature: bool,
    /// Text of a mark added to every page of an output that carries changes (the SAMPLE
    /// mark of test-mode and keyless use; set by the service, not by API clients). It must
    /// be printable ASCII; the result then carries the warning `sample_mark`.
    pub mark: Option<String>,
    /// The 'Edited' mark of SPEC rule 12 (`auto` by default).
    pub watermark: Watermark,
    /// Whether the caller may send [`Watermark::Off`] on a flagged document (a Growth or
    /// Scale account that accepted the document-integrity terms; decided by the service).
    pub watermark_off_allowed: bool,
    /// Find text on scanned pages by OCR (`options.ocr`); replace and delete there are
    /// drawn as pixels.
    pub ocr: Option<crate::ocr::OcrOptions>,
    /// Give every page read by OCR an invisible text layer of its words in the output
    /// (`options.ocr_text_layer`).
    pub ocr_text_layer: bool,
    /// Leave the changes' `before_png` and `after_png` empty: the caller renders previews
    /// from the stored documents when they are first fetched.
    pub lazy_previews: bool,
    /// Keep the renders of the unedited pages in this process's template cache and use
    /// the ones kept (a batch's records, which all edit one template; see
    /// `crate::template`). The result is the same with or without it.
    pub template_cache: bool,
    /// What the document may cost (checked before PDFium opens it).
    pub limits: crate::Limits,
}

api_words! {
    $
    #[doc = "`options.watermark`: whether edited pages get the 'Edited' mark."]
    pub enum Watermark (export watermarks, default Auto) {
    /// Marked when the document is flagged (see [`Flag`]), never otherwise.
    Auto = "auto",
    /// Always marked.
    On = "on",
    /// Never marked; on a flagged document only when `watermark_off_allowed`.
    Off = "off",
    }
}

/// Why a document counts as one whose edits must show (SPEC rule 12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    /// `bank_statement`, `identity_document`, `signed_contract`, `invoice` or
    /// `sealed_paper`.
    pub kind: &'static str,
    /// What in the document shows it (pages, lines, objects).
    pub evidence: String,
}

/// A whole edit request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EditRequest {
    /// The open password.
    pub password: Option<String>,
    /// Edits, applied in order.
    pub edits: Vec<Edit>,
    /// Options.
    pub options: EditOptions,
}

api_words! {
    $
    #[doc = "How a replaced line is aligned, as the planner read it from the line's block, its neighbours and the page: kept when the replacement changes the line's width."]
    pub enum Alignment (export alignments) {
    /// The line keeps its start.
    Left = "left",
    /// The line keeps its centre.
    Centre = "centre",
    /// The line keeps its end.
    Right = "right",
    /// The line keeps both ends; its word gaps take up the change.
    Justified = "justified",
    }
}

/// One applied and verified change (one per match).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The edit's index in the request.
    pub edit_index: u32,
    /// 1-based page.
    pub page: u32,
    /// `replace` or `delete`.
    pub op: EditOp,
    /// The text that was found.
    pub find: String,
    /// The text drawn instead (empty for delete).
    pub replace: String,
    /// `exact-embedded`, `exact-declared`, `metric-twin`, `look-alike` or `none`.
    pub font_source: &'static str,
    /// The font's name (no subset tag).
    pub font_used: String,
    /// The pixel check ran and passed.
    pub verified: bool,
    /// Pixels that changed outside the change's own area.
    pub collateral_pixels: u64,
    /// Box of the change, top-left points.
    pub bbox: [f64; 4],
    /// PNG of the region before.
    pub before_png: Vec<u8>,
    /// PNG of the region after.
    pub after_png: Vec<u8>,
    /// Form: the field's fully qualified name.
    pub field: Option<String>,
    /// Form: the value written (as read back).
    pub value: Option<FieldInput>,
    /// Replace: the line's alignment, kept (`None` when the line was not aligned: a
    /// delete, an insert, vertical text, `fit: none`, or a line whose parts are drawn by
    /// several operators).
    pub alignment: Option<Alignment>,
}

api_words! {
    $
    #[doc = "Why an edit that was found was not applied: `failed[].reason` of the API, one stable snake_case word each (SPEC \"Edit result\", API-DECISIONS)."]
    pub enum FailReason (export fail_reasons) {
    /// Verification saw pixels change outside the edit's own area; rolled back.
    CollateralChange = "collateral_change",
    /// The new text does not fit its room (also: a reflowed paragraph needs more room than
    /// is blank below it).
    Overflow = "overflow",
    /// No usable font has the new text's glyphs.
    MissingGlyphs = "missing_glyphs",
    /// `font_policy: metric_only` and no metric-compatible font exists.
    NoMetricFont = "no_metric_font",
    /// Text in a Type 3 font needs a glyph the font does not draw.
    Type3Font = "type3_font",
    /// `fit: reflow` on a paragraph that is not simple, or with a style override.
    ReflowUnsupported = "reflow_unsupported",
    /// The text is drawn in a way the engine cannot rewrite.
    UnsupportedLayout = "unsupported_layout",
    /// An image the change must rewrite cannot be decoded or written back.
    ImageUnsupported = "image_unsupported",
    /// A redaction aimed at a word read by OCR on a scanned page.
    ScannedText = "scanned_text",
    /// A word drawn into a scanned page is not read back by OCR as the new text.
    OcrReadbackMismatch = "ocr_readback_mismatch",
    /// An annotation's text cannot be rewritten.
    AnnotationText = "annotation_text",
    /// Form: no field has that name.
    FieldNotFound = "field_not_found",
    /// Form: a partial name matches several fields.
    FieldAmbiguous = "field_ambiguous",
    /// Form: the field does not take that value.
    ValueNotAccepted = "value_not_accepted",
    /// Form: the value read back from the output is not the value written.
    ReadbackMismatch = "readback_mismatch",
    /// Insert: the anchor phrase is not on the page.
    AnchorNotFound = "anchor_not_found",
    /// Insert: the page does not exist.
    PageNotFound = "page_not_found",
    /// Insert: no text near the point to take a style from, and none given.
    NoTextStyle = "no_text_style",
    /// The document's encryption cannot be written again.
    EncryptionUnsupported = "encryption_unsupported",
    /// Something failed inside the engine while planning this edit.
    EngineError = "engine_error",
    }
    internal {
    /// Internal: the text does not fit its line under `fit: reflow`, so the paragraph is
    /// planned again by the reflow. Never in a result.
        ReflowNeeded = "reflow_needed" => Overflow,
    }
}

impl std::fmt::Display for FailReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A reason compares equal to its API word.
impl PartialEq<&str> for FailReason {
    fn eq(&self, word: &&str) -> bool {
        self.as_str() == *word
    }
}

/// Why a planned edit cannot be applied: its reason and a message.
pub(crate) type Refusal = (FailReason, String);

/// An edit that was found but not applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    /// The edit's index.
    pub edit_index: u32,
    /// Its op.
    pub op: EditOp,
    /// Why (the API's snake_case word).
    pub reason: FailReason,
    /// Human explanation.
    pub message: String,
    /// Form: the field the reason is about, as the request named it.
    pub field: Option<String>,
}

/// An edit whose text was not found.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmatched {
    /// The edit's index.
    pub edit_index: u32,
    /// Its op.
    pub op: EditOp,
    /// What was looked for.
    pub find: String,
}

/// The result of [`crate::edit::edit`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EditResult {
    /// The output document.
    pub pdf: Vec<u8>,
    /// Applied changes.
    pub changes: Vec<Change>,
    /// Edits not found.
    pub unmatched: Vec<Unmatched>,
    /// Edits rolled back or refused.
    pub failed: Vec<Failed>,
    /// Warnings such as `approx_font_used`.
    pub warnings: Vec<String>,
    /// Form flattening: the fields left live because their value has no appearance to
    /// draw (the names the `flatten_skipped` warning is about).
    pub flatten_skipped: Vec<String>,
    /// 1-based pages touched by applied edits.
    pub pages_touched: Vec<u32>,
    /// Where the time went.
    pub timings: Timings,
    /// Redaction: what was removed besides the page text (image pixels, annotations,
    /// form values, metadata, outlines, …).
    pub removed: Vec<Removal>,
    /// Redaction: places in the output where a redacted string still occurs.
    pub residual: Vec<Residual>,
    /// What the document was classified as (empty for an ordinary document).
    pub flags: Vec<Flag>,
    /// 1-based pages that carry the 'Edited' mark (warning `edited_mark`).
    pub marked_pages: Vec<u32>,
    /// 1-based pages touched by applied edits that were read by OCR (billed five each).
    pub ocr_pages: Vec<u32>,
    /// Pages this call read by OCR (not those from the service's cache), for the cache.
    pub ocr_read: Vec<crate::ocr::OcrPage>,
}

impl EditResult {
    /// Records that `page` was changed (`pages_touched` stays sorted, each page once).
    pub(crate) fn touch_page(&mut self, page: u32) {
        if let Err(at) = self.pages_touched.binary_search(&page) {
            self.pages_touched.insert(at, page);
        }
    }
}

/// One thing a redaction removed besides the glyphs of a change.
#[derive(Debug, Clone, PartialEq)]
pub struct Removal {
    /// The redact edit's index.
    pub edit_index: u32,
    /// What kind of place: `image`, `annotation`, `form_field`, `metadata`, `xmp`,
    /// `outline`, `structure`, `page_label`, `embedded_file`, `javascript`, `xfa`,
    /// `name_tree`, `other`.
    pub kind: &'static str,
    /// 1-based page, when the place belongs to one.
    pub page: Option<u32>,
    /// Where exactly (object number and key, or image and pixel rectangle).
    pub location: String,
}

/// A place in the output where a redacted string still occurs.
#[derive(Debug, Clone, PartialEq)]
pub struct Residual {
    /// The redact edit's index.
    pub edit_index: u32,
    /// What kind of place: `page_text` or one of [`Removal::kind`]'s kinds, or
    /// `stream` for raw bytes of a decoded stream.
    pub kind: &'static str,
    /// 1-based page, when known.
    pub page: Option<u32>,
    /// Where exactly.
    pub location: String,
    /// The text found there.
    pub text: String,
}

/// Where the time of one [`crate::edit::edit`] call went, in milliseconds (server-side
/// wall time; each stage summed over every edit and page).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Timings {
    /// Opening the document (PDFium's check and lopdf's load) and interpreting page
    /// content into text models.
    pub parse_ms: f64,
    /// Finding matches and planning and writing the new content.
    pub edit_ms: f64,
    /// Rendering pages before and after each edit for verification.
    pub render_ms: f64,
    /// Comparing the renders and cropping the preview images.
    pub diff_ms: f64,
    /// Serialising the document (the baseline, each edit's candidate, the output) and
    /// encrypting the output again.
    pub save_ms: f64,
    /// Adding the SAMPLE mark (zero without one).
    pub mark_ms: f64,
    /// Classifying pages and reading scanned ones by OCR (read-backs included).
    pub ocr_ms: f64,
    /// The whole call.
    pub total_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::FailReason;

    #[test]
    fn fail_reasons_are_distinct_snake_case_words() {
        let words: Vec<&str> = FailReason::ALL.iter().map(|r| r.as_str()).collect();
        let mut unique = words.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), words.len(), "{words:?}");
        for (r, w) in FailReason::ALL.iter().zip(&words) {
            assert!(
                !w.is_empty()
                    && w.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{w}"
            );
            assert_eq!(r.to_string(), *w);
            assert!(*r == *w);
        }
    }
}
