//! A replace or delete whose text lies in a form field's value (issue 15 item 2): what the
//! user sees in a filled text field, and what `read_text` gives as a `form-field` span, is
//! edited where it is. The field gets the value with the match replaced, through the form
//! operation itself (value, regenerated appearance, read back, verified), and the change is
//! reported with its `field`, as a form fill is.
//!
//! Scope: `pages`, `region` (the widget's box inside it), `span_ids` (the widget's box
//! overlaps one of those spans by half), and `occurrence` over the matches of every field in
//! page and field order. An `anchor` is for text on a line, so an edit with one is not
//! looked for in fields.

use lopdf::Document;

use crate::find::{inside, line_matches, mostly_overlaps, pick_occurrence, span_boxes, Matcher};
use crate::model::form::{self as tree, Kind};
use crate::model::text::page_geom_box;
use crate::read::PageText;
use crate::types::{Edit, EditOp, FieldInput, FormSpec};

/// One field whose value holds matches of the edit.
#[derive(Debug, Clone)]
pub(crate) struct FieldEdit {
    /// Fully qualified field name.
    pub name: String,
    /// The value after the edit.
    pub value: String,
    /// The text found, each match.
    pub found: Vec<String>,
    /// What replaces each match.
    pub replacement: Vec<String>,
}

/// A match in a field's value, before the occurrence is chosen.
struct Hit {
    field: usize,
    start: usize,
    end: usize,
    replacement: String,
}

/// The text fields whose value holds the edit's text, in scope, with their new values.
pub(crate) fn field_edits(
    doc: &Document,
    edit: &Edit,
    matcher: &Matcher,
    spans: Option<&[PageText]>,
) -> Vec<FieldEdit> {
    if !matches!(edit.op, EditOp::Replace | EditOp::Delete) || edit.scope.anchor.is_some() {
        return Vec::new();
    }
    let scope = &edit.scope;
    let replace = if edit.op == EditOp::Delete {
        ""
    } else {
        edit.replace.as_str()
    };
    let pages = tree::widget_pages(doc);
    // (page of the first widget in scope, field, value) of every text field with a value.
    let mut candidates: Vec<(u32, String, String)> = Vec::new();
    for field in tree::fields(doc) {
        if field.kind != Kind::Text {
            continue;
        }
        let Some(FieldInput::Text(value)) = tree::current_value(doc, &field) else {
            continue;
        };
        if value.is_empty() {
            continue;
        }
        let shown = field.widgets.iter().find_map(|w| {
            let &(page, page_id) = pages.get(w)?;
            let bbox = page_geom_box(doc, page_id, *w)?;
            let in_scope = scope.pages.as_ref().is_none_or(|p| p.contains(&page))
                && scope
                    .region
                    .as_ref()
                    .is_none_or(|r| r.page == page && inside(bbox, r.bbox))
                && scope.span_ids.as_ref().is_none_or(|ids| {
                    spans.is_some_and(|s| {
                        span_boxes(s, page, ids)
                            .iter()
                            .any(|b| mostly_overlaps(bbox, *b))
                    })
                });
            in_scope.then_some(page)
        });
        if let Some(page) = shown {
            candidates.push((page, field.name.clone(), value));
        }
    }
    // Page order, then the form's own field order (a stable sort keeps it).
    candidates.sort_by_key(|c| c.0);
    let mut hits: Vec<Hit> = Vec::new();
    for (i, (_, _, value)) in candidates.iter().enumerate() {
        for (start, end, replacement) in line_matches(matcher, value, replace) {
            hits.push(Hit {
                field: i,
                start,
                end,
                replacement,
            });
        }
    }
    let hits = pick_occurrence(hits, scope.occurrence);
    let mut out: Vec<FieldEdit> = Vec::new();
    for (i, (_, name, value)) in candidates.iter().enumerate() {
        let mine: Vec<&Hit> = hits.iter().filter(|h| h.field == i).collect();
        if mine.is_empty() {
            continue;
        }
        let mut new = String::with_capacity(value.len());
        let mut at = 0;
        for h in &mine {
            new.push_str(&value[at..h.start]);
            new.push_str(&h.replacement);
            at = h.end;
        }
        new.push_str(&value[at..]);
        out.push(FieldEdit {
            name: name.clone(),
            value: new,
            found: mine
                .iter()
                .map(|h| value[h.start..h.end].to_string())
                .collect(),
            replacement: mine.iter().map(|h| h.replacement.clone()).collect(),
        });
    }
    out
}

/// The form edit that writes `edits` (each field's whole new value).
pub(crate) fn spec_of(edits: &[FieldEdit]) -> FormSpec {
    FormSpec {
        fields: edits
            .iter()
            .map(|e| (e.name.clone(), FieldInput::Text(e.value.clone())))
            .collect(),
        flatten: false,
    }
}
