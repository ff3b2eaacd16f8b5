//! The edit pipeline: the request is checked, the document opened (decrypted when it is
//! encrypted), each edit found and handed to its operation in `ops`, then the sample mark
//! stamped and the output saved (encrypted again when the input was).
//!
//! The output is a full rewrite by lopdf (object streams off). Encrypted documents are
//! decrypted with the given password, edited and verified in the clear, and written out
//! encrypted again with the same security handler, permissions and keys.

use std::collections::HashMap;
use std::time::Instant;

use lopdf::Document;

use crate::find::compile;
use crate::flags;
use crate::model::fonts::DocFonts;
use crate::open::crypt;
use crate::ops::{annot, edited_mark, form, mark, redact};
use crate::plan::style;
use crate::run::{ms_since, timed, OcrRun, Run};
use crate::save::{incremental, save, signatures};
use crate::types::FailReason;
use crate::types::*;
use crate::Error;

/// Why an edit request failed as a whole.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// Opening, rendering or the request itself failed (see [`crate::Error`]).
    #[error(transparent)]
    Engine(#[from] Error),
    /// The document carries a digital signature and `break_signature` was not set
    /// (API code `signed_document`).
    #[error("the document is digitally signed; pass options.break_signature to edit it")]
    SignedDocument,
    /// `options.watermark` `off` on a flagged document by a caller who may not turn the
    /// 'Edited' mark off (API code `forbidden_watermark_off`).
    #[error("the document is flagged ({0}); the 'Edited' mark cannot be turned off on this plan")]
    WatermarkOffForbidden(String),
}

/// Applies `request` to the PDF in `bytes`.
pub fn edit(bytes: &[u8], request: &EditRequest) -> Result<EditResult, EditError> {
    let started = Instant::now();
    let mut result = edit_inner(bytes, request, started, false)?;
    result.timings.total_ms = ms_since(started);
    Ok(result)
}

/// Finds the text of every replace, delete and redact edit of `request` as [`edit`]
/// would (page content, FreeText appearances, text across lines, other strings of the
/// document) and stops there: nothing is planned, written or verified. The result lists
/// the edits not found in `unmatched`; its `pdf` is the input.
pub fn locate(bytes: &[u8], request: &EditRequest) -> Result<EditResult, EditError> {
    let started = Instant::now();
    let mut result = edit_inner(bytes, request, started, true)?;
    result.timings.total_ms = ms_since(started);
    Ok(result)
}

fn edit_inner(
    bytes: &[u8],
    request: &EditRequest,
    started: Instant,
    locate_only: bool,
) -> Result<EditResult, EditError> {
    let matchers = request
        .edits
        .iter()
        .map(|e| {
            match (e.op, &e.form) {
                (EditOp::Form, Some(_)) => return Ok(None),
                (EditOp::Form, None) => {
                    return Err(format!("edit {}: form needs fields", e.index));
                }
                (EditOp::Insert, _) => {
                    return style::check(&e.style)
                        .map(|()| None)
                        .map_err(|m| format!("edit {}: {m}", e.index));
                }
                _ => {}
            }
            if e.op == EditOp::Replace && e.replace.is_empty() {
                return Err(format!("edit {}: replace needs a replace text", e.index));
            }
            style::check(&e.style).map_err(|m| format!("edit {}: {m}", e.index))?;
            compile(e)
                .map(Some)
                .map_err(|m| format!("edit {}: {m}", e.index))
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|m| EditError::Engine(Error::InvalidRequest(m)))?;
    if let Some(text) = &request.options.mark {
        mark::check(text)?;
    }
    let password = request.password.as_deref();
    let ocr = match &request.options.ocr {
        Some(o) => Some(OcrRun {
            languages: o.language_arg()?,
            options: o.clone(),
            pages: HashMap::new(),
        }),
        None => None,
    };
    let info = crate::open::open_info_within(bytes, password, &request.options.limits)?;
    if !info.signatures.is_empty() && !request.options.break_signature {
        return Err(EditError::SignedDocument);
    }
    // Encrypted input: decrypt with the given password, edit and verify the plain
    // document, and encrypt the output again with the same security handler and keys.
    let (doc, protection) = if info.encrypted {
        let loaded = crypt::open_encrypted(bytes, password.unwrap_or(""));
        // PDFium opened it with this password, so the password is right: what is missing
        // is our writer's support for this security handler. Refuse per edit, as data.
        let Some((doc, state)) = loaded else {
            return Ok(refuse_all(
                bytes,
                request,
                FailReason::EncryptionUnsupported,
            ));
        };
        (doc, Some(state))
    } else {
        let doc = Document::load_mem(bytes).map_err(|e| Error::Unsupported(e.to_string()))?;
        (doc, None)
    };
    crate::open::check_pages(&doc, info.page_count)?;
    // SPEC rule 13: a signed document is saved as an incremental update after its own
    // bytes (the signed revision kept byte for byte), except when it is redacted: a
    // redaction rewrites the whole file (an update would keep the removed text) and takes
    // the signatures out.
    let signed = !info.signatures.is_empty();
    let redacting = request.edits.iter().any(|e| e.op == EditOp::Redact);
    let loaded = (signed && !redacting).then(|| doc.clone());
    let docmdp = if signed {
        signatures::docmdp_permission(&doc)
    } else {
        None
    };
    let span_boxes = if request.edits.iter().any(|e| e.scope.span_ids.is_some()) {
        let o = request.options.ocr.as_ref();
        Some(
            crate::read::read_text_checked(bytes, password, None, true, false, o)?
                .0
                .pages,
        )
    } else {
        None
    };
    let mut timings = Timings {
        parse_ms: ms_since(started),
        ..Timings::default()
    };
    let current = timed(&mut timings.save_ms, || save(&doc))?;
    let mut run = Run {
        current,
        doc,
        fonts: DocFonts::default(),
        models: HashMap::new(),
        read_taken: Default::default(),
        renders: HashMap::new(),
        result: EditResult {
            timings,
            ..EditResult::default()
        },
        ocr,
        previews: !request.options.lazy_previews,
    };
    // SPEC rule 12: classify the document, and refuse `watermark: off` before any work.
    let facts = flags::gather(&mut run, &info.signatures);
    run.result.flags = flags::classify(&facts);
    let mark_edited = edited_mark::decide(
        request.options.watermark,
        !run.result.flags.is_empty(),
        request.options.watermark_off_allowed,
    )
    .map_err(|_| {
        let kinds: Vec<&str> = run.result.flags.iter().map(|f| f.kind).collect();
        EditError::WatermarkOffForbidden(kinds.join(", "))
    })?;
    let baseline = run.current.clone();
    for (edit, matcher) in request.edits.iter().zip(&matchers) {
        let Some(matcher) = matcher else {
            if let Some(spec) = &edit.form {
                run.timed_edit(|run| run.form(edit, spec, request.options.font_policy))?;
            } else if edit.op == EditOp::Insert {
                run.timed_edit(|run| run.insert(edit, request.options.font_policy))?;
            }
            continue;
        };
        let matches = run.timed_edit(|run| run.find(edit, matcher, span_boxes.as_deref()))?;
        if locate_only {
            let found = !matches.is_empty()
                || match edit.op {
                    EditOp::Redact => redact::locate(&mut run, edit, matcher)?,
                    _ => {
                        annot::locate(&mut run, edit, matcher, span_boxes.as_deref())?
                            || !form::text::field_edits(
                                &run.doc,
                                edit,
                                matcher,
                                span_boxes.as_deref(),
                            )
                            .is_empty()
                    }
                };
            if !found {
                run.result.unmatched.push(Unmatched {
                    edit_index: edit.index,
                    op: edit.op,
                    find: edit.find.clone(),
                });
            }
            continue;
        }
        // Matches among the OCR words of scanned pages: the text is the image.
        let (scanned, matches): (Vec<_>, Vec<_>) = matches.into_iter().partition(|m| m.ocr);
        if !scanned.is_empty() {
            if edit.op == EditOp::Redact {
                run.fail(
                    edit,
                    FailReason::ScannedText,
                    format!(
                        "\"{}\" is part of a scanned image on page {}; a redaction cannot \
                         remove text that is only pixels",
                        scanned[0].found, scanned[0].page
                    ),
                );
            } else {
                run.timed_edit(|run| run.raster(edit, scanned))?;
            }
            if matches.is_empty() {
                continue;
            }
        }
        if edit.op == EditOp::Redact {
            run.timed_edit(|run| redact::apply(run, edit, matcher, matches))?;
            continue;
        }
        if matches.is_empty() {
            let policy = request.options.font_policy;
            let spans = span_boxes.as_deref();
            if run.timed_edit(|run| annot::apply(run, edit, matcher, policy, spans))? {
                continue;
            }
            if run.timed_edit(|run| run.form_text(edit, matcher, spans, policy))? {
                continue;
            }
            run.result.unmatched.push(Unmatched {
                edit_index: edit.index,
                op: edit.op,
                find: edit.find.clone(),
            });
            continue;
        }
        run.timed_edit(|run| run.apply(edit, matches, request.options.font_policy, 0))?;
    }
    if locate_only {
        let mut result = run.result;
        result.pdf = bytes.to_vec();
        return Ok(result);
    }
    if request.edits.iter().any(|e| e.op == EditOp::Redact) {
        redact::finish(&mut run, request, &matchers)?;
    }
    // options.ocr_text_layer: the words of every OCR'd page as invisible text (no pixel
    // changes, so after verification).
    let mut layered = false;
    if request.options.ocr_text_layer {
        let scanned: Vec<crate::ocr::OcrPage> = run
            .ocr
            .as_ref()
            .map(|o| o.pages.values().flatten().cloned().collect())
            .unwrap_or_default();
        for page in &scanned {
            let n = crate::ops::ocr_layer::add(&mut run.doc, page).map_err(Error::Engine)?;
            layered |= n > 0;
        }
        if layered {
            run.current = timed(&mut run.result.timings.save_ms, || save(&run.doc))?;
            run.result.warnings.push("ocr_text_layer".into());
        }
    }
    let mut result = run.result;
    // A redaction that removed strings only outside the page text (metadata, annotations)
    // still changed the document.
    let applied = !result.changes.is_empty() || !result.removed.is_empty();
    let sampled = request.options.mark.is_some() && applied;
    let edited_pages = if mark_edited {
        edited_mark::pages(&result)
    } else {
        Vec::new()
    };
    let marked = sampled || !edited_pages.is_empty();
    let changed = marked || layered || (applied && run.current != baseline);
    if let Some(p) = docmdp.filter(|_| changed) {
        let content = marked || result.changes.iter().any(|c| c.op != EditOp::Form);
        if signatures::violates(p, changed, content) {
            result.warnings.push("docmdp_violation".into());
        }
    }
    result.pdf = if changed {
        // After a redaction `run.doc` is the pruned document that was saved and searched.
        let mut out = run.doc;
        // Pages whose models are still cached are unchanged since they were read.
        let mut known: HashMap<_, _> = run
            .models
            .values()
            .map(|m| (m.page_id, &m.glyphs))
            .collect();
        if !edited_pages.is_empty() {
            // After verification, before encryption, like the SAMPLE mark; placed where the
            // render of the output shows nothing.
            let ids = out.get_pages();
            let targets: Vec<_> = edited_pages
                .iter()
                .filter_map(|p| ids.get(p))
                .copied()
                .collect();
            // Every edited page normally has the render its verification made of it as it
            // is now; the output is saved and rendered again only for a page without one.
            let renders: HashMap<u32, _> = run
                .renders
                .into_iter()
                .filter(|(n, _)| edited_pages.contains(n))
                .collect();
            let plain = if edited_pages.iter().all(|p| renders.contains_key(p)) {
                None
            } else {
                Some(timed(&mut result.timings.save_ms, || save(&out))?)
            };
            let numbers = ids.iter().map(|(n, id)| (*id, *n)).collect();
            let mut check = edited_mark::BlankCheck::new(plain.as_deref(), numbers, renders);
            let clear = timed(&mut result.timings.mark_ms, || {
                // Bottom left first: the SAMPLE mark, when there is one, takes bottom right.
                mark::stamp_pages(
                    &mut out,
                    edited_mark::TEXT,
                    &known,
                    &targets,
                    true,
                    &mut |id, b| check.is_blank(id, b),
                )
            })?;
            result.marked_pages = edited_pages;
            result.warnings.push("edited_mark".into());
            if clear.contains(&false) {
                result.warnings.push("edited_mark_overlaps".into());
            }
            // The SAMPLE mark reads these pages again, so it sees and avoids the new mark.
            known.retain(|id, _| !targets.contains(id));
        }
        if let Some(text) = request.options.mark.as_deref().filter(|_| sampled) {
            // After verification, before encryption: the mark is never part of an
            // edit's pixel check, and it is encrypted like the rest of the output.
            timed(&mut result.timings.mark_ms, || {
                mark::stamp(&mut out, text, &known)
            })?;
            result.warnings.push("sample_mark".into());
        }
        let unsigned = signed && redacting && signatures::remove(&mut out) > 0;
        if unsigned {
            result.warnings.push("signature_removed".into());
        }
        match (protection, loaded) {
            (protection, Some(loaded)) => timed(&mut result.timings.save_ms, || {
                incremental::append(bytes, &loaded, &out, protection.as_ref())
            })?,
            (Some(state), None) => timed(&mut result.timings.save_ms, || {
                out.encrypt(&state)
                    .map_err(|e| Error::Engine(format!("re-encrypting the output: {e}")))?;
                save(&out)
            })?,
            (None, None) if marked || unsigned => {
                timed(&mut result.timings.save_ms, || save(&out))?
            }
            (None, None) => run.current,
        }
    } else {
        bytes.to_vec()
    };
    result.warnings.dedup();
    Ok(result)
}

/// Every edit in `failed[]` with `reason`, the document unchanged.
fn refuse_all(bytes: &[u8], request: &EditRequest, reason: FailReason) -> EditResult {
    let failed = request
        .edits
        .iter()
        .map(|e| Failed {
            edit_index: e.index,
            op: e.op,
            reason,
            message: "this document's encryption cannot be written back yet".into(),
            field: None,
        })
        .collect();
    EditResult {
        pdf: bytes.to_vec(),
        failed,
        ..EditResult::default()
    }
}
