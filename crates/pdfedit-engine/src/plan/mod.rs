//! Planning a change: the new bytes of a page's content streams and what each match
//! becomes, before anything is written. `line` plans a replace or delete inside its line
//! (font choice in `choose`, fitting in `fit`, room around it in `room`, the rest of the
//! line closing up in `close_up`, the operators rewritten in `rewrite`); `reflow` re-sets
//! a paragraph when `fit: reflow` text does not fit its line; `streams` writes the plan
//! into the document.

pub(crate) mod actual;
pub(crate) mod align;
pub(crate) mod arabic;
pub(crate) mod choose;
pub(crate) mod close_up;
pub(crate) mod fit;
pub(crate) mod line;
pub(crate) mod reflow;
pub(crate) mod rewrite;
pub(crate) mod room;
pub(crate) mod streams;
pub(crate) mod style;
pub(crate) mod vertical;

use crate::types::FailReason;
use pdf_content::StreamId;

/// The reason `plan_page` gives when `fit: reflow` text does not fit its line: the page is
/// then planned by [`reflow`].
pub(crate) const REFLOW_NEEDED: FailReason = FailReason::ReflowNeeded;

/// Why a planned edit cannot be applied: a stable reason and a message.
pub(crate) use crate::types::Refusal;

/// One planned change.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    /// Index into the page's matches.
    pub match_index: usize,
    /// `font_source` of the result.
    pub font_source: &'static str,
    /// The font's name.
    pub font_used: String,
    /// Old and new glyph boxes united, user space.
    pub area_user: [f64; 4],
    /// A warning such as `approx_font_used`.
    pub warning: Option<&'static str>,
    /// Glyphs the change moves along their line (a delete's close-up, the rest of the line
    /// an inline insert pushes on): their box before the move and the move, user space.
    pub moved: Option<([f64; 4], [f64; 2])>,
    /// A replace's line alignment, kept (see [`align`]).
    pub alignment: Option<crate::types::Alignment>,
}

/// New bytes for the page's streams and what each match became.
pub(crate) struct PagePlan {
    /// Decoded new content of every stream that changed.
    pub streams: Vec<(StreamId, Vec<u8>)>,
    /// One per match.
    pub changes: Vec<Planned>,
    /// Content appended to the page after the streams are written (reflowed lines).
    pub append: Option<Vec<u8>>,
    /// User-space boxes that must be blank in the render before the edit (room a
    /// reflowed paragraph grows into).
    pub blank_user: Vec<[f64; 4]>,
}
