//! The operations an edit request names, one module each: `replace` (replace and delete),
//! `redact`, `insert`, `form`, `annot` (text drawn by annotations), `mark` (the sample
//! mark) and `edited_mark` (when and where the 'Edited' mark of rule 12 goes; the pipeline
//! draws it with `mark`). Each plans its pages with `find` and `plan` and commits them through `commit`;
//! none imports another. Below, the glue of the `form` and `insert` operations to the run.

pub(crate) mod annot;
pub(crate) mod edited_mark;
pub(crate) mod form;
pub(crate) mod insert;
pub(crate) mod mark;
pub(crate) mod ocr_layer;
pub(crate) mod raster;
pub(crate) mod redact;
pub(crate) mod replace;

use crate::find::{anchor_end, compile, Matcher};
use crate::model::fonts::DocFonts;
use crate::read::PageText;
use crate::run::Run;
use crate::types::FailReason;
use crate::types::{At, Edit, EditOp, Fit, FontPolicy, FormSpec, Occurrence, Scope, Unmatched};
use crate::Error;

impl Run {
    /// A `form` edit (see [`form`]); page models and fonts are read afresh after it.
    pub(crate) fn form(
        &mut self,
        edit: &Edit,
        spec: &FormSpec,
        policy: FontPolicy,
    ) -> Result<(), Error> {
        let (doc, _, verifier) = self.split();
        let run = form::FormRun {
            doc,
            verifier,
            policy,
        };
        form::apply(run, edit, spec)?;
        self.fonts = DocFonts::default();
        self.models.clear();
        Ok(())
    }

    /// A replace or delete that found nothing on the pages, applied to the text fields whose
    /// value holds its text (see [`form::text`]). Returns whether a field held it (written,
    /// or failed with the form operation's reason); false means the edit is unmatched.
    pub(crate) fn form_text(
        &mut self,
        edit: &Edit,
        matcher: &Matcher,
        spans: Option<&[PageText]>,
        policy: FontPolicy,
    ) -> Result<bool, Error> {
        let edits = form::text::field_edits(&self.doc, edit, matcher, spans);
        if edits.is_empty() {
            return Ok(false);
        }
        let before = self.result.changes.len();
        self.form(edit, &form::text::spec_of(&edits), policy)?;
        // A change says what was found and what replaced it, as on a page; `value` holds
        // the field's whole new value.
        for c in &mut self.result.changes[before..] {
            if let Some(e) = edits.iter().find(|e| c.field.as_ref() == Some(&e.name)) {
                c.find = e.found.first().cloned().unwrap_or_default();
                c.replace = e.replacement.first().cloned().unwrap_or_default();
            }
        }
        Ok(true)
    }

    /// An `insert` edit. Inline after an anchor it is a replace of the anchor by anchor +
    /// text (the rest of the line moves along); at a point or on a new line it is drawn by
    /// [`insert`].
    pub(crate) fn insert(&mut self, edit: &Edit, policy: FontPolicy) -> Result<(), Error> {
        let Some(spec) = &edit.insert else {
            return Ok(());
        };
        let page = match &spec.at {
            At::After {
                phrase,
                newline: false,
                page,
            } => return self.insert_inline(edit, phrase, *page, &spec.text, policy),
            At::After { phrase, page, .. } => {
                let pages = self.page_ids();
                let found = pages
                    .iter()
                    .filter(|(n, _)| page.is_none_or(|p| p == **n))
                    .map(|(&n, &id)| (n, id))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .find_map(|(n, id)| {
                        let m = self.model(n, id).ok()?;
                        anchor_end(m, phrase, false).map(|_| n)
                    });
                let Some(n) = found else {
                    self.result.unmatched.push(Unmatched {
                        edit_index: edit.index,
                        op: edit.op,
                        find: phrase.clone(),
                    });
                    return Ok(());
                };
                n
            }
            At::Point { page, .. } => *page,
        };
        let Some(&page_id) = self.page_ids().get(&page) else {
            self.fail(
                edit,
                FailReason::PageNotFound,
                format!("the document has no page {page}"),
            );
            return Ok(());
        };
        self.model(page, page_id)?;
        let Some(model) = self.models.remove(&page) else {
            return Ok(());
        };
        let (doc, fonts, verifier) = self.split();
        let run = insert::InsertRun {
            doc,
            fonts,
            verifier,
            policy,
        };
        let applied = insert::apply(run, &model, edit, spec)?;
        if !applied {
            // Object ids of a rolled-back embedded font may be reused.
            self.fonts = DocFonts::default();
            self.models.insert(page, model);
        }
        Ok(())
    }

    /// Inline insert: the anchor (first occurrence) is replaced by anchor + text.
    fn insert_inline(
        &mut self,
        edit: &Edit,
        phrase: &str,
        page: Option<u32>,
        text: &str,
        policy: FontPolicy,
    ) -> Result<(), Error> {
        // A word space between the anchor and a text that starts a new word.
        let joins = phrase.ends_with(char::is_whitespace)
            || text.starts_with(|c: char| c.is_whitespace() || ",.;:!?)".contains(c));
        let sep = if joins { "" } else { " " };
        let as_replace = Edit {
            op: EditOp::Replace,
            find: phrase.to_string(),
            replace: format!("{phrase}{sep}{text}"),
            scope: Scope {
                pages: page.map(|p| vec![p]),
                occurrence: Some(Occurrence::First),
                ..Scope::default()
            },
            fit: Fit::None,
            ..edit.clone()
        };
        let matcher = compile(&as_replace).map_err(Error::InvalidRequest)?;
        let matches = self.find(&as_replace, &matcher, None)?;
        if matches.is_empty() {
            self.result.unmatched.push(Unmatched {
                edit_index: edit.index,
                op: edit.op,
                find: phrase.to_string(),
            });
            return Ok(());
        }
        let (changes, failed) = (self.result.changes.len(), self.result.failed.len());
        // The anchor and the space after it keep the line's style; `style` applies to the text.
        let keep = phrase.len() + sep.len();
        self.apply(&as_replace, matches, policy, keep)?;
        for c in &mut self.result.changes[changes..] {
            c.op = EditOp::Insert;
            c.replace = text.to_string();
        }
        for f in &mut self.result.failed[failed..] {
            f.op = EditOp::Insert;
        }
        Ok(())
    }
}
