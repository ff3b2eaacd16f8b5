//! The closed word lists of an edit as JS string enums (the generated `index.d.ts` gives
//! each as a union of its strings), converted to and from the engine's enums.

use napi_derive::napi;
use pdfedit_engine::edit as engine;

/// What an edit does.
#[napi(string_enum = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditOp {
    /// Replace the found text.
    Replace,
    /// Remove the found text and tidy the spacing around it.
    Delete,
    /// Remove the found text for real and cover its place with a filled box.
    Redact,
    /// Add text at a point or after an anchor phrase.
    Insert,
    /// Fill AcroForm fields.
    Form,
}

/// How `find` is matched.
#[napi(string_enum = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchMode {
    /// Exact text (default).
    Exact,
    /// Case-insensitive.
    Icase,
    /// Whole words, case-sensitive.
    Word,
    /// A regular expression (`replace` may use `$1`…).
    Regex,
}

/// How a replacement of another width is fitted.
#[napi(string_enum = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Keep the size; condense, then shrink a little when there is no room (default).
    Auto,
    /// Never alter size or spacing; the rest of the line shifts.
    None,
    /// Always scale to the old width.
    Shrink,
    /// Re-break the paragraph when the text does not fit its line.
    Reflow,
}

/// Which fonts new text may be drawn in.
#[napi(string_enum = "snake_case")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FontPolicy {
    /// The document's own font, then a metric twin, then a look-alike (default).
    PreferExact,
    /// Refuse look-alikes (reason `no_metric_font`).
    MetricOnly,
}

/// The 'Edited' mark of a flagged document.
#[napi(string_enum = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watermark {
    /// Marked when the document is flagged (default).
    Auto,
    /// Always marked.
    On,
    /// Never marked (on a flagged document only when allowed).
    Off,
}

/// `scope.occurrence` as a word (a number picks the nth).
#[napi(string_enum = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OccurrenceEnd {
    /// The first match in reading order.
    First,
    /// The last match in reading order.
    Last,
}

/// The alignment of a replaced line, kept.
#[napi(string_enum = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alignment {
    /// The line keeps its start.
    Left,
    /// The line keeps its centre.
    Centre,
    /// The line keeps its end.
    Right,
    /// The line keeps both ends; its word gaps take up the change.
    Justified,
}

impl From<EditOp> for engine::EditOp {
    fn from(op: EditOp) -> Self {
        match op {
            EditOp::Replace => engine::EditOp::Replace,
            EditOp::Delete => engine::EditOp::Delete,
            EditOp::Redact => engine::EditOp::Redact,
            EditOp::Insert => engine::EditOp::Insert,
            EditOp::Form => engine::EditOp::Form,
        }
    }
}

impl From<engine::EditOp> for EditOp {
    fn from(op: engine::EditOp) -> Self {
        match op {
            engine::EditOp::Replace => EditOp::Replace,
            engine::EditOp::Delete => EditOp::Delete,
            engine::EditOp::Redact => EditOp::Redact,
            engine::EditOp::Insert => EditOp::Insert,
            engine::EditOp::Form => EditOp::Form,
        }
    }
}

impl From<MatchMode> for engine::MatchMode {
    fn from(m: MatchMode) -> Self {
        match m {
            MatchMode::Exact => engine::MatchMode::Exact,
            MatchMode::Icase => engine::MatchMode::Icase,
            MatchMode::Word => engine::MatchMode::Word,
            MatchMode::Regex => engine::MatchMode::Regex,
        }
    }
}

impl From<Fit> for engine::Fit {
    fn from(f: Fit) -> Self {
        match f {
            Fit::Auto => engine::Fit::Auto,
            Fit::None => engine::Fit::None,
            Fit::Shrink => engine::Fit::Shrink,
            Fit::Reflow => engine::Fit::Reflow,
        }
    }
}

impl From<FontPolicy> for engine::FontPolicy {
    fn from(p: FontPolicy) -> Self {
        match p {
            FontPolicy::PreferExact => engine::FontPolicy::PreferExact,
            FontPolicy::MetricOnly => engine::FontPolicy::MetricOnly,
        }
    }
}

impl From<Watermark> for engine::Watermark {
    fn from(w: Watermark) -> Self {
        match w {
            Watermark::Auto => engine::Watermark::Auto,
            Watermark::On => engine::Watermark::On,
            Watermark::Off => engine::Watermark::Off,
        }
    }
}

impl From<engine::Alignment> for Alignment {
    fn from(a: engine::Alignment) -> Self {
        match a {
            engine::Alignment::Left => Alignment::Left,
            engine::Alignment::Centre => Alignment::Centre,
            engine::Alignment::Right => Alignment::Right,
            engine::Alignment::Justified => Alignment::Justified,
        }
    }
}

/// Why an edit that was found was not applied (`failed[].reason`).
#[napi(string_enum = "snake_case")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailReason {
    /// Pixels changed outside the edit's own area; rolled back.
    CollateralChange,
    /// The new text does not fit its room.
    Overflow,
    /// No usable font has the new text's glyphs.
    MissingGlyphs,
    /// `font_policy: metric_only` and no metric-compatible font exists.
    NoMetricFont,
    /// Text in a Type 3 font needs a glyph the font does not draw.
    #[napi(value = "type3_font")]
    Type3Font,
    /// `fit: reflow` on a paragraph that is not simple, or with a style override.
    ReflowUnsupported,
    /// The text is drawn in a way the engine cannot rewrite.
    UnsupportedLayout,
    /// An image the change must rewrite cannot be decoded or written back.
    ImageUnsupported,
    /// A redaction aimed at a word read by OCR on a scanned page.
    ScannedText,
    /// A word drawn into a scanned page is not read back by OCR as the new text.
    OcrReadbackMismatch,
    /// An annotation's text cannot be rewritten.
    AnnotationText,
    /// Form: no field has that name.
    FieldNotFound,
    /// Form: a partial name matches several fields.
    FieldAmbiguous,
    /// Form: the field does not take that value.
    ValueNotAccepted,
    /// Form: the value read back from the output is not the value written.
    ReadbackMismatch,
    /// Insert: the anchor phrase is not on the page.
    AnchorNotFound,
    /// Insert: the page does not exist.
    PageNotFound,
    /// Insert: no text near the point to take a style from, and none given.
    NoTextStyle,
    /// The document's encryption cannot be written again.
    EncryptionUnsupported,
    /// Something failed inside the engine while planning this edit.
    EngineError,
}

impl From<engine::FailReason> for FailReason {
    fn from(r: engine::FailReason) -> Self {
        use engine::FailReason as R;
        match r {
            R::CollateralChange => FailReason::CollateralChange,
            // The engine's signal to reflow never leaves it; were it to, the text did not fit.
            R::Overflow | R::ReflowNeeded => FailReason::Overflow,
            R::MissingGlyphs => FailReason::MissingGlyphs,
            R::NoMetricFont => FailReason::NoMetricFont,
            R::Type3Font => FailReason::Type3Font,
            R::ReflowUnsupported => FailReason::ReflowUnsupported,
            R::UnsupportedLayout => FailReason::UnsupportedLayout,
            R::ImageUnsupported => FailReason::ImageUnsupported,
            R::ScannedText => FailReason::ScannedText,
            R::OcrReadbackMismatch => FailReason::OcrReadbackMismatch,
            R::AnnotationText => FailReason::AnnotationText,
            R::FieldNotFound => FailReason::FieldNotFound,
            R::FieldAmbiguous => FailReason::FieldAmbiguous,
            R::ValueNotAccepted => FailReason::ValueNotAccepted,
            R::ReadbackMismatch => FailReason::ReadbackMismatch,
            R::AnchorNotFound => FailReason::AnchorNotFound,
            R::PageNotFound => FailReason::PageNotFound,
            R::NoTextStyle => FailReason::NoTextStyle,
            R::EncryptionUnsupported => FailReason::EncryptionUnsupported,
            R::EngineError => FailReason::EngineError,
        }
    }
}
