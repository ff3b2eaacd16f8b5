//! The crate's one error type.

use std::ops::Range;

use lopdf::ObjectId;

/// Everything that can fail in this crate. Problems inside a content stream (bad
/// operands, unknown operators, missing fonts) are not errors: they are kept as data
/// (`OpKind::Malformed`, [`crate::Warning`]) so one damaged page never hides the rest.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The object id given as a page is not a page dictionary.
    #[error("object {0:?} is not a page")]
    NotAPage(ObjectId),
    /// An edit passed to [`crate::patch`] reaches past the end of the original bytes.
    #[error("edit {range:?} is outside the {len} bytes of the stream")]
    EditOutOfBounds {
        /// The offending range.
        range: Range<usize>,
        /// Length of the original bytes.
        len: usize,
    },
    /// Two edits passed to [`crate::patch`] overlap (or one is reversed).
    #[error("edit {second:?} overlaps edit {first:?}")]
    OverlappingEdits {
        /// The earlier edit (by start offset).
        first: Range<usize>,
        /// The edit that overlaps it.
        second: Range<usize>,
    },
    /// lopdf failed while reading the object graph.
    #[error("PDF structure: {0}")]
    Pdf(#[from] lopdf::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
