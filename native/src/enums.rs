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
