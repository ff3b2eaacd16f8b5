//! Keeping /ActualText in step with an edit: a phrase inside a marked-content sequence
//! with /ActualText is extracted from that text (by PDFium, pdftotext and screen readers),
//! not from the glyphs, so the sequence's text is edited too.

use std::collections::BTreeMap;
use std::ops::Range;

use pdf_content::{OpKind, StreamId, Value};

use crate::find::Match;
use crate::model::PageModel;

/// Pending /ActualText rewrites: (stream, string operand span) → new text.
#[derive(Default)]
pub(crate) struct ActualTexts {
    edits: BTreeMap<(StreamId, usize), (Range<usize>, String)>,
}

impl ActualTexts {
    /// Records the edit of `m` when all its glyphs lie in one sequence whose text holds
    /// the found phrase. Sequences opened by a named property list are left alone.
    pub fn record(&mut self, model: &PageModel, m: &Match) {
        let glyphs = &model.glyphs.glyphs;
        let first = &glyphs[m.glyphs[0]];
        let Some(at) = &first.actual_text else {
            return;
        };
        let same = m.glyphs.iter().all(|&g| {
            glyphs[g]
                .actual_text
                .as_ref()
                .is_some_and(|a| a.sequence == at.sequence)
        });
        if !same {
            return;
        }
        let Some(span) = enclosing_actual_text(model, first.stream, first.op_index) else {
            return;
        };
        let entry = self
            .edits
            .entry((first.stream, span.start))
            .or_insert_with(|| (span, at.text.clone()));
        if let Some(pos) = entry.1.find(&m.found) {
            entry
                .1
                .replace_range(pos..pos + m.found.len(), &m.replacement);
        }
    }

    /// Byte edits for `stream`: each /ActualText string rewritten as UTF-16BE hex.
    pub fn edits_for(&self, stream: StreamId) -> Vec<(Range<usize>, Vec<u8>)> {
        self.edits
            .iter()
            .filter(|((s, _), _)| *s == stream)
            .map(|(_, (span, text))| (span.clone(), text_string(text)))
            .collect()
    }

    /// Streams with a pending rewrite.
    pub fn streams(&self) -> Vec<StreamId> {
        let mut v: Vec<StreamId> = self.edits.keys().map(|(s, _)| *s).collect();
        v.dedup();
        v
    }
}

/// The span of the /ActualText string of the innermost `BDC` with an inline /ActualText
/// that is open at op `op_index`.
fn enclosing_actual_text(
    model: &PageModel,
    stream: StreamId,
    op_index: usize,
) -> Option<Range<usize>> {
    let ops = &model.glyphs.stream(stream)?.ops;
    let mut depth = 0usize;
    for op in ops[..op_index.min(ops.len())].iter().rev() {
        match &op.kind {
            OpKind::EndMarked => depth += 1,
            OpKind::BeginMarked(_) | OpKind::BeginMarkedProps(_) if depth > 0 => depth -= 1,
            OpKind::BeginMarked(_) => {}
            OpKind::BeginMarkedProps(_) => {
                let props = op.properties()?;
                if let Some(text) = props.dict_get(b"ActualText") {
                    return matches!(text.value, Value::String(_)).then(|| text.span.clone());
                }
                if matches!(props.value, Value::Name(_)) {
                    return None;
                }
            }
            _ => {}
        }
    }
    None
}

/// A PDF text string: UTF-16BE with a byte order mark, written as hex.
pub(crate) fn text_string(text: &str) -> Vec<u8> {
    let mut out = b"<FEFF".to_vec();
    for unit in text.encode_utf16() {
        out.extend_from_slice(format!("{unit:04X}").as_bytes());
    }
    out.push(b'>');
    out
}
