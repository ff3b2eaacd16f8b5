//! Replace and delete text in the document's own fonts, every change verified by rendering
//! (SPEC behaviour rules 1–7).
//!
//! Each edit in turn: find its matches on the current document, plan the new bytes of the
//! touched content streams, write them, render the touched pages and compare them with the
//! renders before the edit outside the changes' own areas. Anything else that moved rolls
//! the edit back (`failed[]`, reason `collateral_change`).
//!
//! The output is a full rewrite by lopdf (object streams off). Encrypted documents are
//! decrypted with the given password, edited and verified in the clear, and written out
//! encrypted again with the same security handler, permissions and keys.

pub(crate) mod actual;
mod annot;
mod choose;
mod close_up;
mod crypt;
pub(crate) mod exports;
pub(crate) mod find;
pub(crate) mod fit;
pub(crate) mod fonts;
mod form_insert;
mod mark;
mod reflow;
mod replace;
pub(crate) mod rewrite;
mod room;
pub(crate) mod streams;
pub(crate) mod style;
pub(crate) mod text;
mod types;
pub(crate) mod verify;
mod vertical;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use lopdf::{Document, ObjectId};
use pdf_render::raster::Raster;

pub(crate) use exports::*;
pub use style::{list_fonts, FontEntry};
pub use types::*;
pub use verify::bare_render;

use crate::Error;
use find::{anchor_end, compile, inside, mostly_overlaps, page_matches, select, Match, PageModel};
use fonts::{DocFonts, Source};
use text::{build_lines, PageGeom};

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
}

/// Milliseconds since `start`.
fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// Runs `f`, adding its wall time to `acc` (milliseconds).
fn timed<T>(acc: &mut f64, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    *acc += ms_since(start);
    out
}

/// Applies `request` to the PDF in `bytes`.
pub fn edit(bytes: &[u8], request: &EditRequest) -> Result<EditResult, EditError> {
    let started = Instant::now();
    let mut result = edit_inner(bytes, request, started)?;
    result.timings.total_ms = ms_since(started);
    Ok(result)
}

fn edit_inner(
    bytes: &[u8],
    request: &EditRequest,
    started: Instant,
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
    let info = crate::open_info(bytes, password)?;
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
            return Ok(refuse_all(bytes, request, "encryption_unsupported"));
        };
        (doc, Some(state))
    } else {
        let doc = Document::load_mem(bytes).map_err(|e| Error::Unsupported(e.to_string()))?;
        (doc, None)
    };
    let span_boxes = if request.edits.iter().any(|e| e.scope.span_ids.is_some()) {
        Some(crate::read_text(bytes, password, None, true, false)?.pages)
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
        renders: HashMap::new(),
        result: EditResult {
            timings,
            ..EditResult::default()
        },
    };
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
        if edit.op == EditOp::Redact {
            run.timed_edit(|run| crate::redact::apply(run, edit, matcher, matches))?;
            continue;
        }
        if matches.is_empty() {
            let policy = request.options.font_policy;
            if run.timed_edit(|run| annot::apply(run, edit, matcher, policy))? {
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
    if request.edits.iter().any(|e| e.op == EditOp::Redact) {
        crate::redact::finish(&mut run, request, &matchers)?;
    }
    let mut result = run.result;
    // A redaction that removed strings only outside the page text (metadata, annotations)
    // still changed the document.
    let applied = !result.changes.is_empty() || !result.removed.is_empty();
    let marked = request.options.mark.is_some() && applied;
    result.pdf = if marked || (applied && run.current != baseline) {
        // After a redaction `run.doc` is the pruned document that was saved and searched.
        let mut out = run.doc;
        if let Some(text) = request.options.mark.as_deref().filter(|_| marked) {
            // After verification, before encryption: the mark is never part of an
            // edit's pixel check, and it is encrypted like the rest of the output.
            // Pages whose models are still cached are unchanged since they were read.
            let known = run
                .models
                .values()
                .map(|m| (m.page_id, &m.glyphs))
                .collect();
            timed(&mut result.timings.mark_ms, || {
                mark::stamp(&mut out, text, &known)
            })?;
            result.warnings.push("sample_mark".into());
        }
        match protection {
            Some(state) => timed(&mut result.timings.save_ms, || {
                out.encrypt(&state)
                    .map_err(|e| Error::Engine(format!("re-encrypting the output: {e}")))?;
                save(&out)
            })?,
            None if marked => timed(&mut result.timings.save_ms, || save(&out))?,
            None => run.current,
        }
    } else {
        bytes.to_vec()
    };
    result.warnings.dedup();
    Ok(result)
}

/// Every edit in `failed[]` with `reason`, the document unchanged.
fn refuse_all(bytes: &[u8], request: &EditRequest, reason: &'static str) -> EditResult {
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

/// The moved glyphs of planned changes as display boxes and moves (top-left points).
fn moved_display(geom: &PageGeom, changes: &[replace::Planned]) -> Vec<([f64; 4], [f64; 2])> {
    changes
        .iter()
        .filter_map(|c| c.moved)
        .map(|(b, [dx, dy])| {
            let from = geom.display_box(b);
            let to = geom.display_box([b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy]);
            (from, [to[0] - from[0], to[1] - from[1]])
        })
        .collect()
}

pub(crate) fn save(doc: &Document) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    let mut doc = doc.clone();
    // The trailer's /Size is written from max_id; a loaded file may claim more objects
    // than it holds, which qpdf reports.
    // lopdf keeps the input's xref and object streams as objects but never writes them.
    doc.objects.retain(|_, o| {
        !o.as_stream().is_ok_and(|s| {
            s.dict
                .get(b"Type")
                .and_then(lopdf::Object::as_name)
                .is_ok_and(|t| t == b"XRef" || t == b"ObjStm")
        })
    });
    doc.max_id = doc.objects.keys().map(|id| id.0).max().unwrap_or(0);
    doc.trailer.set("Size", i64::from(doc.max_id) + 1);
    doc.save_to(&mut out)
        .map_err(|e| Error::Engine(format!("saving the document: {e}")))?;
    Ok(out)
}

pub(crate) struct Run {
    pub(crate) doc: Document,
    pub(crate) current: Vec<u8>,
    pub(crate) fonts: DocFonts,
    pub(crate) models: HashMap<u32, PageModel>,
    pub(crate) renders: HashMap<u32, Raster>,
    pub(crate) result: EditResult,
}

impl Run {
    /// Runs `f` and counts its time as editing, less what it spent in the other stages
    /// (which time themselves).
    fn timed_edit<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let staged = |t: &Timings| t.parse_ms + t.render_ms + t.diff_ms + t.save_ms;
        let before = staged(&self.result.timings);
        let start = Instant::now();
        let out = f(self);
        let other = staged(&self.result.timings) - before;
        self.result.timings.edit_ms += (ms_since(start) - other).max(0.0);
        out
    }

    pub(crate) fn page_ids(&self) -> BTreeMap<u32, ObjectId> {
        self.doc.get_pages()
    }

    pub(crate) fn model(&mut self, number: u32, page_id: ObjectId) -> Result<&PageModel, Error> {
        if !self.models.contains_key(&number) {
            let start = Instant::now();
            let mut source = Source {
                doc: &self.doc,
                fonts: &mut self.fonts,
            };
            let glyphs = pdf_content::interpret_page(&self.doc, page_id, &mut source)
                .map_err(|e| Error::Engine(e.to_string()))?;
            let lines = build_lines(&glyphs.glyphs);
            let geom = PageGeom::read(&self.doc, page_id);
            self.models.insert(
                number,
                PageModel {
                    number,
                    page_id,
                    glyphs,
                    lines,
                    geom,
                },
            );
            self.result.timings.parse_ms += ms_since(start);
        }
        self.models
            .get(&number)
            .ok_or_else(|| Error::Engine("page model missing".into()))
    }

    fn find(
        &mut self,
        edit: &Edit,
        matcher: &find::Matcher,
        spans: Option<&[crate::PageText]>,
    ) -> Result<Vec<Match>, Error> {
        let pages = self.page_ids();
        let scope = &edit.scope;
        let wanted: BTreeSet<u32> = match (&scope.pages, &scope.region) {
            (_, Some(r)) => [r.page].into(),
            (Some(p), None) => p.iter().copied().collect(),
            (None, None) => pages.keys().copied().collect(),
        };
        let icase = edit.match_mode == MatchMode::Icase;
        let redact = edit.op == EditOp::Redact;
        // A redaction of right-to-left text typed in visual order (as pdftotext and some
        // viewers copy it) is looked for that way too when the logical order is not on
        // any of the pages.
        let visual = match redact.then(|| find::visual_order(matcher)).flatten() {
            Some(v) if !self.any_match(&pages, &wanted, matcher, edit)? => Some(v),
            _ => None,
        };
        let matcher = visual.as_ref().unwrap_or(matcher);
        let mut all = Vec::new();
        let mut anchors = Vec::new();
        for (&number, &page_id) in pages.iter().filter(|(n, _)| wanted.contains(n)) {
            self.model(number, page_id)?;
            let model = &self.models[&number];
            let (fonts, doc) = (&mut self.fonts, &self.doc);
            let glyphs = &model.glyphs.glyphs;
            let mut drawn = |g: usize| {
                let f = fonts.get(doc, &glyphs[g].font)?;
                f.font.program_chars(glyphs[g].code)
            };
            let mut found = page_matches(model, matcher, edit, redact.then_some(&mut drawn));
            if let Some(r) = &scope.region {
                found.retain(|m| inside(m.bbox, r.bbox));
            }
            if let (Some(ids), Some(spans)) = (&scope.span_ids, spans) {
                let boxes: Vec<[f64; 4]> = spans
                    .iter()
                    .filter(|p| p.page == number)
                    .flat_map(|p| p.spans.iter())
                    .filter(|s| ids.contains(&s.span_id))
                    .map(|s| s.bbox.map(f64::from))
                    .collect();
                found.retain(|m| boxes.iter().any(|b| mostly_overlaps(m.bbox, *b)));
            }
            if let Some(a) = &scope.anchor {
                if let Some(pos) = anchor_end(model, a, icase) {
                    anchors.push((number, pos));
                }
            }
            all.extend(found);
        }
        Ok(select(
            all,
            &anchors,
            scope.anchor.is_some(),
            scope.occurrence,
        ))
    }

    /// Whether `matcher` finds anything on the `wanted` pages (cut glyphs included).
    fn any_match(
        &mut self,
        pages: &BTreeMap<u32, ObjectId>,
        wanted: &BTreeSet<u32>,
        matcher: &find::Matcher,
        edit: &Edit,
    ) -> Result<bool, Error> {
        for (&number, &page_id) in pages.iter().filter(|(n, _)| wanted.contains(n)) {
            let model = self.model(number, page_id)?;
            if !page_matches(model, matcher, edit, Some(&mut |_| None)).is_empty() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Restores the document; cached fonts go too, because object ids of a rolled-back
    /// embedded font may be reused.
    pub(crate) fn rollback(&mut self, snapshot: Document) {
        self.doc = snapshot;
        self.fonts = DocFonts::default();
        self.models.clear();
    }

    pub(crate) fn fail(&mut self, edit: &Edit, reason: &'static str, message: String) {
        self.result.failed.push(Failed {
            edit_index: edit.index,
            op: edit.op,
            reason,
            message,
            field: None,
        });
    }

    /// Plans, writes and verifies every match of a replace or delete. `keep_prefix` bytes of
    /// each replacement are drawn in the line's own style even when the edit has a `style`
    /// (an inline insert's anchor).
    fn apply(
        &mut self,
        edit: &Edit,
        matches: Vec<Match>,
        policy: FontPolicy,
        keep_prefix: usize,
    ) -> Result<(), Error> {
        let snapshot = self.doc.clone();
        let mut by_page: BTreeMap<u32, Vec<Match>> = BTreeMap::new();
        for m in matches {
            by_page.entry(m.page).or_default().push(m);
        }
        let pages = self.page_ids();
        let mut planned = Vec::new();
        for (&page, ms) in &by_page {
            let page_id = pages[&page];
            self.model(page, page_id)?;
            let model = &self.models[&page];
            let page_snapshot = (edit.fit == Fit::Reflow).then(|| self.doc.clone());
            let planned_page = replace::plan_page(
                &mut self.doc,
                &mut self.fonts,
                model,
                ms,
                edit,
                policy,
                keep_prefix,
            );
            let planned_page = match (planned_page, page_snapshot) {
                (Err((replace::REFLOW_NEEDED, _)), Some(page_doc)) => {
                    // Fonts the in-place attempt embedded go again.
                    self.doc = page_doc;
                    self.fonts = DocFonts::default();
                    reflow::plan_page(&mut self.doc, &mut self.fonts, model, ms, edit, policy)
                }
                (other, _) => other,
            };
            let outcome = planned_page.and_then(|plan| {
                for (sid, bytes) in &plan.streams {
                    streams::write_stream(&mut self.doc, model, *sid, bytes)
                        .map_err(|e| ("unsupported_layout", e))?;
                }
                if let Some(ops) = &plan.append {
                    streams::append_page_stream(&mut self.doc, model.page_id, ops.clone())
                        .map_err(|e| ("unsupported_layout", e))?;
                }
                Ok(plan)
            });
            match outcome {
                Ok(plan) => planned.push((page, model.geom, plan)),
                Err((reason, message)) => {
                    self.rollback(snapshot);
                    self.fail(edit, reason, message);
                    return Ok(());
                }
            }
        }
        let new_bytes = timed(&mut self.result.timings.save_ms, || save(&self.doc))?;
        let mut changes = Vec::new();
        let mut warnings = Vec::new();
        let mut collateral = 0;
        let mut misdrawn = 0;
        let mut after_renders = Vec::new();
        for (page, geom, plan) in &planned {
            let t = &mut self.result.timings;
            let before = match self.renders.remove(page) {
                Some(r) => r,
                None => timed(&mut t.render_ms, || verify::render(&self.current, *page))?,
            };
            if !plan.blank_user.is_empty() {
                let boxes: Vec<[f64; 4]> = plan
                    .blank_user
                    .iter()
                    .map(|b| geom.display_box(*b))
                    .collect();
                if !reflow::is_blank(&before, &boxes) {
                    self.rollback(snapshot);
                    self.renders.insert(*page, before);
                    for (p, b, _) in after_renders {
                        self.renders.insert(p, b);
                    }
                    self.fail(
                        edit,
                        "overflow",
                        "the paragraph needs more lines and the room below it is not empty".into(),
                    );
                    return Ok(());
                }
            }
            let after = timed(&mut t.render_ms, || verify::render(&new_bytes, *page))?;
            let areas: Vec<[f64; 4]> = plan
                .changes
                .iter()
                .map(|c| geom.display_box(c.area_user))
                .collect();
            let report = timed(&mut t.diff_ms, || verify::compare(&before, &after, &areas))?;
            collateral += report.changed_pixels_outside;
            let moved = moved_display(geom, &plan.changes);
            misdrawn += timed(&mut t.diff_ms, || {
                verify::moved_mismatch(&before, &after, &moved)
            });
            for (c, area) in plan.changes.iter().zip(&areas) {
                if let Some(w) = c.warning {
                    warnings.push(w.to_string());
                }
                let m = &by_page[page][c.match_index];
                let (before_png, after_png) =
                    timed(&mut t.diff_ms, || verify::previews(&before, &after, *area));
                changes.push(Change {
                    edit_index: edit.index,
                    page: *page,
                    op: edit.op,
                    find: m.found.clone(),
                    replace: m.replacement.clone(),
                    font_source: c.font_source,
                    font_used: c.font_used.clone(),
                    verified: true,
                    collateral_pixels: report.changed_pixels_outside,
                    bbox: *area,
                    before_png,
                    after_png,
                    field: None,
                    value: None,
                });
            }
            after_renders.push((*page, before, after));
        }
        if collateral > 0 || misdrawn > 0 {
            self.rollback(snapshot);
            for (page, before, _) in after_renders {
                self.renders.insert(page, before);
            }
            let message = if collateral > 0 {
                format!("{collateral} pixels changed outside the edited text; rolled back")
            } else {
                format!("{misdrawn} pixels of the moved rest of the line differ; rolled back")
            };
            self.fail(edit, "collateral_change", message);
            return Ok(());
        }
        for (page, _, after) in after_renders {
            self.renders.insert(page, after);
            self.models.remove(&page);
            self.result.touch_page(page);
        }
        self.current = new_bytes;
        self.result.changes.extend(changes);
        self.result.warnings.extend(warnings);
        Ok(())
    }
}
