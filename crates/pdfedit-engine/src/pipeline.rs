//! The edit pipeline: the request is checked, the document opened (decrypted when it is
//! encrypted), each edit found and handed to its operation in `ops`, then the sample mark
//! stamped and the output saved (encrypted again when the input was).
//!
//! The output is a full rewrite by lopdf (object streams off). Encrypted documents are
//! decrypted with the given password, edited and verified in the clear, and written out
//! encrypted again with the same security handler, permissions and keys.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use lopdf::encryption::EncryptionState;
use lopdf::Document;

use crate::find::{compile, Matcher};
use crate::flags;
use crate::model::fonts::DocFonts;
use crate::open::crypt;
use crate::ops::{annot, edited_mark, form, mark, redact};
use crate::plan::style;
use crate::run::{ms_since, timed, OcrRun, Run};
use crate::save::{incremental, save_in_place, signatures};
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

/// The pipeline's stages: check the request, open the document, classify it, run each
/// edit through its operation, finish (redactions, OCR text layer), and write the output.
fn edit_inner(
    bytes: &[u8],
    request: &EditRequest,
    started: Instant,
    locate_only: bool,
) -> Result<EditResult, EditError> {
    let matchers = checked_edits(request)?;
    if let Some(text) = &request.options.mark {
        mark::check(text)?;
    }
    let ocr = match &request.options.ocr {
        Some(o) => Some(OcrRun {
            languages: o.language_arg()?,
            options: o.clone(),
            pages: HashMap::new(),
        }),
        None => None,
    };
    let Some((mut doc, opened)) = open(bytes, request)? else {
        // PDFium opened it with this password, so the password is right: what is missing
        // is our writer's support for this security handler. Refuse per edit, as data.
        return Ok(refuse_all(
            bytes,
            request,
            FailReason::EncryptionUnsupported,
        ));
    };
    let span_boxes = if request.edits.iter().any(|e| e.scope.span_ids.is_some()) {
        let o = request.options.ocr.as_ref();
        let password = request.password.as_deref();
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
    // The unedited saved bytes: from the template cache when this exact (unencrypted)
    // input was parsed and saved before, else saved now (see `crate::template`).
    let source = (request.options.template_cache && opened.protection.is_none()).then_some(bytes);
    let known = source.and_then(crate::template::saved_from);
    let kept_id = known.as_ref().map(|k| k.id);
    let current = match known {
        Some(k) => k.saved,
        None => timed(&mut timings.save_ms, || save_in_place(&mut doc))?,
    };
    let mut run = Run {
        current,
        doc,
        fonts: DocFonts::default(),
        models: HashMap::new(),
        read_taken: Default::default(),
        read_pending: Default::default(),
        renders: HashMap::new(),
        result: EditResult {
            timings,
            ..EditResult::default()
        },
        ocr,
        previews: !request.options.lazy_previews,
        verify: crate::verify::Policy::default(),
        template: request.options.template_cache,
        redacted_appearances: Vec::new(),
    };
    let kept_flags = start_from_kept(&mut run, kept_id);
    let mark_edited = classify(&mut run, &opened, request, kept_flags)?;
    let baseline = run.current.clone();
    if run.template {
        // Nothing between the save above and here changes `current`: the baseline is
        // still the save of the parsed input. Facts are kept of an input opened without
        // a password (`crate::open::facts_kept`).
        let facts = request.password.is_none().then_some(&opened.info);
        // On a hit `current` is the cached save of this very input, so `source` still
        // saves to exactly `baseline`.
        if let Some(id) = crate::template::register(&baseline, source, facts) {
            // Nothing is edited yet: these are the models of the parsed input.
            let flags = &run.result.flags;
            crate::template_models::keep(id, &run.models, &run.fonts, &run.read_taken, flags);
        }
    }
    for (edit, matcher) in request.edits.iter().zip(&matchers) {
        let spans = span_boxes.as_deref();
        match matcher {
            None => run_textless_edit(&mut run, edit, request)?,
            Some(m) if locate_only => locate_edit(&mut run, edit, m, spans)?,
            Some(m) => run_edit(&mut run, edit, m, request, spans)?,
        }
    }
    if locate_only {
        let mut result = run.result;
        result.pdf = bytes.to_vec();
        return Ok(result);
    }
    if request.edits.iter().any(|e| e.op == EditOp::Redact) {
        redact::finish(&mut run, request, &matchers)?;
    }
    let layered = ocr_text_layer(&mut run, request)?;
    write_output(
        run,
        bytes,
        request,
        &opened,
        Outcome {
            mark_edited,
            baseline,
            layered,
        },
    )
}

/// Each edit checked and its text compiled (`None` for form and insert edits, which find
/// no text); the first bad edit refuses the request.
fn checked_edits(request: &EditRequest) -> Result<Vec<Option<Matcher>>, EditError> {
    request
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
        .map_err(|m| EditError::Engine(Error::InvalidRequest(m)))
}

/// What writing an opened document back depends on.
struct Opened {
    info: crate::DocInfo,
    /// The security handler and keys of an encrypted input, to encrypt the output again.
    protection: Option<EncryptionState>,
    signed: bool,
    redacting: bool,
    /// A signed document as loaded, for an incremental update after its bytes.
    loaded: Option<Document>,
    /// A certification signature's DocMDP permission.
    docmdp: Option<i64>,
}

/// Edits of this process that edited the document the budget scan parsed (for tests).
static SCAN_PARSES_TAKEN: AtomicU64 = AtomicU64::new(0);

/// How many of this process's edits took the document the budget scan had just parsed
/// instead of parsing the bytes again.
pub fn scan_parses_taken() -> u64 {
    SCAN_PARSES_TAKEN.load(Ordering::Relaxed)
}

/// Opens the document (decrypted) under the request's limits: refused when it is signed
/// and `break_signature` is not set; `None` when it is encrypted with a handler the writer
/// cannot write back.
fn open(bytes: &[u8], request: &EditRequest) -> Result<Option<(Document, Opened)>, EditError> {
    let password = request.password.as_deref();
    // The facts without every page loaded: an edit reads only the pages it touches.
    // With them, the document the budget scan parsed when the scan ran now.
    let (info, scanned) = if request.options.template_cache {
        // A stored document edited again: its facts as this process found them before.
        crate::open::facts_kept::open_facts_kept(bytes, password, &request.options.limits)?
    } else {
        crate::open::open_facts_loading(bytes, password, &request.options.limits)?
    };
    if !info.signatures.is_empty() && !request.options.break_signature {
        return Err(EditError::SignedDocument);
    }
    // Encrypted input: decrypt with the given password, edit and verify the plain
    // document, and encrypt the output again with the same security handler and keys.
    // The budget scan loads as these loads do (the same password; for an encrypted file
    // that lopdf reads only once its trailer is patched, `crypt::open_encrypted` itself),
    // so its parse is taken when it decrypted exactly when PDFium found encryption;
    // otherwise the document is loaded here as before.
    let scanned = scanned.filter(|d| d.encryption_state.is_some() == info.encrypted);
    if scanned.is_some() {
        SCAN_PARSES_TAKEN.fetch_add(1, Ordering::Relaxed);
    }
    let (doc, protection) = if info.encrypted {
        let opened = match scanned {
            Some(doc) => doc.encryption_state.clone().map(|state| (doc, state)),
            None => crypt::open_encrypted(bytes, password.unwrap_or("")),
        };
        let Some((doc, state)) = opened else {
            return Ok(None);
        };
        (doc, Some(state))
    } else {
        let doc = match scanned {
            Some(doc) => doc,
            None => Document::load_mem(bytes).map_err(|e| Error::Unsupported(e.to_string()))?,
        };
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
    let opened = Opened {
        info,
        protection,
        signed,
        redacting,
        loaded,
        docmdp,
    };
    Ok(Some((doc, opened)))
}

/// SPEC rule 12: classifies the document, and refuses `watermark: off` before any work.
/// Returns whether edited pages get the 'Edited' mark.
/// The template's unedited page models and fonts: from the template cache when this exact
/// (unencrypted) input was read before, else kept once classification read them (see
/// `crate::template_models`). Returns its classification too, kept with them: the flags
/// are a pure function of the input.
fn start_from_kept(run: &mut Run, kept_id: Option<u64>) -> Option<Vec<crate::types::Flag>> {
    let kept = kept_id.and_then(crate::template_models::models_of)?;
    run.models = kept.models;
    run.fonts = kept.fonts;
    Some(kept.flags)
}

/// `kept`: the flags a kept template was classified with (`crate::template_models`), used
/// instead of gathering the facts again.
fn classify(
    run: &mut Run,
    opened: &Opened,
    request: &EditRequest,
    kept: Option<Vec<crate::types::Flag>>,
) -> Result<bool, EditError> {
    run.result.flags = match kept {
        Some(flags) => flags,
        None => flags::classify(&flags::gather(run, &opened.info.signatures)),
    };
    edited_mark::decide(
        request.options.watermark,
        !run.result.flags.is_empty(),
        request.options.watermark_off_allowed,
    )
    .map_err(|_| {
        let kinds: Vec<&str> = run.result.flags.iter().map(|f| f.kind).collect();
        EditError::WatermarkOffForbidden(kinds.join(", "))
    })
}

/// A form or insert edit (no text to find).
fn run_textless_edit(run: &mut Run, edit: &Edit, request: &EditRequest) -> Result<(), Error> {
    let policy = request.options.font_policy;
    if let Some(spec) = &edit.form {
        run.timed_edit(|run| run.form(edit, spec, policy))?;
    } else if edit.op == EditOp::Insert {
        run.timed_edit(|run| run.insert(edit, policy))?;
    }
    Ok(())
}

/// [`locate`]: whether the edit's text is found anywhere an edit would find it;
/// `unmatched` when not.
fn locate_edit(
    run: &mut Run,
    edit: &Edit,
    matcher: &Matcher,
    spans: Option<&[crate::read::PageText]>,
) -> Result<(), Error> {
    let matches = run.timed_edit(|run| run.find(edit, matcher, spans))?;
    let found = !matches.is_empty()
        || match edit.op {
            EditOp::Redact => redact::locate(run, edit, matcher, spans)?,
            _ => {
                annot::locate(run, edit, matcher, spans)?
                    || !form::text::field_edits(&run.doc, edit, matcher, spans).is_empty()
                    || run.cut_match(edit, matcher, spans)?.is_some()
            }
        };
    if !found {
        run.result.unmatched.push(Unmatched {
            edit_index: edit.index,
            op: edit.op,
            find: edit.find.clone(),
        });
    }
    Ok(())
}

/// A replace, delete or redact: its matches found and handed to the operation that
/// edits where they are (scanned pages, page content, annotations, form fields).
fn run_edit(
    run: &mut Run,
    edit: &Edit,
    matcher: &Matcher,
    request: &EditRequest,
    spans: Option<&[crate::read::PageText]>,
) -> Result<(), Error> {
    let policy = request.options.font_policy;
    let matches = run.timed_edit(|run| run.find(edit, matcher, spans))?;
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
            return Ok(());
        }
    }
    if edit.op == EditOp::Redact {
        return run.timed_edit(|run| redact::apply(run, edit, matcher, matches, spans));
    }
    if !matches.is_empty() {
        return run.timed_edit(|run| run.apply(edit, matches, policy, 0));
    }
    if run.timed_edit(|run| annot::apply(run, edit, matcher, policy, spans))? {
        return Ok(());
    }
    if run.timed_edit(|run| run.form_text(edit, matcher, spans, policy))? {
        return Ok(());
    }
    if let Some(m) = run.timed_edit(|run| run.cut_match(edit, matcher, spans))? {
        run.fail(
            edit,
            FailReason::UnsupportedLayout,
            format!(
                "\"{}\" on page {} is drawn by glyphs that also draw the text around it (a \
                 ligature, or a shaped cluster mapped to a whole word); a replace or delete \
                 cannot change part of a glyph (a redaction can)",
                m.found, m.page
            ),
        );
        return Ok(());
    }
    run.result.unmatched.push(Unmatched {
        edit_index: edit.index,
        op: edit.op,
        find: edit.find.clone(),
    });
    Ok(())
}

/// options.ocr_text_layer: the words of every OCR'd page as invisible text (no pixel
/// changes, so after verification). Returns whether any were added.
fn ocr_text_layer(run: &mut Run, request: &EditRequest) -> Result<bool, Error> {
    if !request.options.ocr_text_layer {
        return Ok(false);
    }
    let scanned: Vec<crate::ocr::OcrPage> = run
        .ocr
        .as_ref()
        .map(|o| o.pages.values().flatten().cloned().collect())
        .unwrap_or_default();
    let mut layered = false;
    for page in &scanned {
        let n = crate::ops::ocr_layer::add(&mut run.doc, page).map_err(Error::Engine)?;
        layered |= n > 0;
    }
    if layered {
        run.current = timed(&mut run.result.timings.save_ms, || {
            save_in_place(&mut run.doc)
        })?;
        run.result.warnings.push("ocr_text_layer".into());
    }
    Ok(layered)
}

/// What the edits did, as writing the output needs it.
struct Outcome {
    /// Whether edited pages get the 'Edited' mark.
    mark_edited: bool,
    /// The bytes before any edit.
    baseline: Vec<u8>,
    /// Whether an OCR text layer was added.
    layered: bool,
}

/// The output: the input itself when nothing changed; else the marks stamped (after
/// verification, before encryption), the signatures of a redacted document removed, and
/// the document written as an incremental update, encrypted again, or saved.
fn write_output(
    mut run: Run,
    bytes: &[u8],
    request: &EditRequest,
    opened: &Opened,
    outcome: Outcome,
) -> Result<EditResult, EditError> {
    let mut result = run.result;
    // A redaction that removed strings only outside the page text (metadata, annotations)
    // still changed the document.
    let applied = !result.changes.is_empty() || !result.removed.is_empty();
    let sampled = request.options.mark.is_some() && applied;
    let edited_pages = if outcome.mark_edited {
        edited_mark::pages(&result)
    } else {
        Vec::new()
    };
    let marked = sampled || !edited_pages.is_empty();
    let changed = marked || outcome.layered || (applied && run.current != outcome.baseline);
    if let Some(p) = opened.docmdp.filter(|_| changed) {
        let content = marked || result.changes.iter().any(|c| c.op != EditOp::Form);
        if signatures::violates(p, changed, content) {
            result.warnings.push("docmdp_violation".into());
        }
    }
    if !changed {
        result.pdf = bytes.to_vec();
        result.warnings.dedup();
        return Ok(result);
    }
    // The marks below read the cached models' glyphs as the edits left them.
    crate::run::lay_pending_reading(&mut run.models, &mut run.read_pending);
    // After a redaction `run.doc` is the pruned document that was saved and searched.
    let mut out = run.doc;
    // Pages whose models are still cached are unchanged since they were read.
    let mut known: HashMap<_, _> = run
        .models
        .values()
        .map(|m| (m.page_id, &m.glyphs))
        .collect();
    if !edited_pages.is_empty() {
        let renders = run.renders;
        let fonts = &mut run.fonts;
        let targets = stamp_edited(&mut out, &mut result, &known, fonts, edited_pages, renders)?;
        // The SAMPLE mark reads these pages again, so it sees and avoids the new mark.
        known.retain(|id, _| !targets.contains(id));
    }
    if let Some(text) = request.options.mark.as_deref().filter(|_| sampled) {
        // After verification, before encryption: the mark is never part of an
        // edit's pixel check, and it is encrypted like the rest of the output.
        timed(&mut result.timings.mark_ms, || {
            mark::stamp(&mut out, text, &known, &mut run.fonts)
        })?;
        result.warnings.push("sample_mark".into());
    }
    let unsigned = opened.signed && opened.redacting && signatures::remove(&mut out) > 0;
    if unsigned {
        result.warnings.push("signature_removed".into());
    }
    let t = &mut result.timings;
    result.pdf = match (&opened.protection, &opened.loaded) {
        (protection, Some(loaded)) => timed(&mut t.save_ms, || {
            incremental::append(bytes, loaded, &out, protection.as_ref())
        })?,
        (Some(state), None) => timed(&mut t.save_ms, || {
            out.encrypt(state)
                .map_err(|e| Error::Engine(format!("re-encrypting the output: {e}")))?;
            save_in_place(&mut out)
        })?,
        (None, None) if marked || unsigned => timed(&mut t.save_ms, || save_in_place(&mut out))?,
        (None, None) => run.current,
    };
    result.warnings.dedup();
    Ok(result)
}

/// The 'Edited' mark on `edited_pages`, placed where the render of the output shows
/// nothing. Returns the marked pages' object ids.
fn stamp_edited(
    out: &mut Document,
    result: &mut EditResult,
    known: &HashMap<lopdf::ObjectId, &pdf_content::PageGlyphs>,
    fonts: &mut DocFonts,
    edited_pages: Vec<u32>,
    renders: HashMap<u32, pdf_render::raster::Raster>,
) -> Result<Vec<lopdf::ObjectId>, Error> {
    let ids = out.get_pages();
    let targets: Vec<_> = edited_pages
        .iter()
        .filter_map(|p| ids.get(p))
        .copied()
        .collect();
    // Every edited page normally has the render its verification made of it as it is
    // now; the output is saved and rendered again only for a page without one.
    let renders: HashMap<u32, _> = renders
        .into_iter()
        .filter(|(n, _)| edited_pages.contains(n))
        .collect();
    let plain = if edited_pages.iter().all(|p| renders.contains_key(p)) {
        None
    } else {
        Some(timed(&mut result.timings.save_ms, || save_in_place(out))?)
    };
    let numbers = ids.iter().map(|(n, id)| (*id, *n)).collect();
    let mut check = edited_mark::BlankCheck::new(plain.as_deref(), numbers, renders);
    let clear = timed(&mut result.timings.mark_ms, || {
        // Bottom left first: the SAMPLE mark, when there is one, takes bottom right.
        mark::stamp_pages(
            out,
            edited_mark::TEXT,
            known,
            fonts,
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
    Ok(targets)
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
