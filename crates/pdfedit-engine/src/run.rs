//! The state of one edit run (the document, its current saved bytes, page models, fonts
//! and renders) and the steps every operation shares: reading a page's model, timing the
//! stages, rolling an edit back, recording a failure.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use lopdf::{Document, ObjectId};
use pdf_render::raster::Raster;

use crate::find::{self, anchor_end, inside, mostly_overlaps, page_matches, select, Match};
use crate::model::fonts::{DocFonts, Source};
use crate::model::reading::{Needs, ReadChar};
use crate::model::text::{build_lines, PageGeom};
use crate::model::PageModel;
use crate::ocr::{OcrOptions, OcrPage};
use crate::types::FailReason;
use crate::types::{Edit, EditOp, EditResult, Failed, MatchMode, Timings};
use crate::Error;

/// Lays the reading every page still waits for onto its model (see `Run::read_pending`).
pub(crate) fn lay_pending_reading(
    models: &mut HashMap<u32, PageModel>,
    pending: &mut HashMap<u32, (Vec<ReadChar>, Vec<char>)>,
) {
    for (number, (chars, _)) in pending.drain() {
        if let Some(model) = models.get_mut(&number) {
            crate::model::reading::take_reading(model, &chars);
        }
    }
}

/// Milliseconds since `start`.
pub(crate) fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// Runs `f`, adding its wall time to `acc` (milliseconds).
pub(crate) fn timed<T>(acc: &mut f64, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    *acc += ms_since(start);
    out
}

pub(crate) struct Run {
    pub(crate) doc: Document,
    pub(crate) current: Vec<u8>,
    pub(crate) fonts: DocFonts,
    pub(crate) models: HashMap<u32, PageModel>,
    /// Pages whose model took PDFium's reading of its glyphs' text (reset with the model).
    pub(crate) read_taken: BTreeSet<u32>,
    /// Pages of `read_taken` whose reading is not laid onto their model yet, with
    /// PDFium's characters and the characters the page can hold
    /// ([`crate::model::reading::Needs`]): laid when the model is next used.
    pub(crate) read_pending: HashMap<u32, (Vec<ReadChar>, Vec<char>)>,
    pub(crate) renders: HashMap<u32, Raster>,
    pub(crate) result: EditResult,
    /// OCR of scanned pages, when the request asked for it.
    pub(crate) ocr: Option<OcrRun>,
    /// Whether changes carry their before/after preview crops (`options.lazy_previews`
    /// turns them off).
    pub(crate) previews: bool,
    /// The tolerances every edit of the run is verified with.
    pub(crate) verify: crate::verify::Policy,
    /// Whether renders of the unedited document come from and go to the template cache
    /// (`options.template_cache`, [`crate::template`]).
    pub(crate) template: bool,
    /// Annotations whose appearance a redaction already cut or removed, verified (see
    /// `ops::redact`): the document-wide string scan after the edits leaves their
    /// appearance alone and cuts only their /Contents and rich text.
    pub(crate) redacted_appearances: Vec<lopdf::ObjectId>,
}

/// The OCR state of one edit run.
pub(crate) struct OcrRun {
    pub(crate) options: OcrOptions,
    /// Tesseract's `-l` argument (`eng+deu`).
    pub(crate) languages: String,
    /// Per page read so far: its OCR words when it is scanned, `None` when it has text.
    pub(crate) pages: HashMap<u32, Option<OcrPage>>,
}

impl Run {
    /// The OCR words of 1-based page `number` when OCR is on and the page is scanned
    /// (classified and read once per run; the service's cache is used first).
    pub(crate) fn scanned(&mut self, number: u32) -> Result<Option<OcrPage>, Error> {
        let Some(ocr) = self.ocr.as_mut() else {
            return Ok(None);
        };
        if let Some(known) = ocr.pages.get(&number) {
            return Ok(known.clone());
        }
        let start = Instant::now();
        let doc = pdf_render::Document::open(&self.current, None)?;
        let mut read = Vec::new();
        let page =
            crate::read::scanned_words(&doc, number, &ocr.options, &ocr.languages, &mut read)?;
        self.result.ocr_read.extend(read);
        self.result.timings.ocr_ms += ms_since(start);
        ocr.pages.insert(number, page.clone());
        Ok(page)
    }
}

impl Run {
    /// Runs `f` and counts its time as editing, less what it spent in the other stages
    /// (which time themselves).
    pub(crate) fn timed_edit<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
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
            self.read_taken.remove(&number);
            self.read_pending.remove(&number);
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
        } else if let Some((chars, _)) = self.read_pending.remove(&number) {
            let start = Instant::now();
            if let Some(model) = self.models.get_mut(&number) {
                crate::model::reading::take_reading(model, &chars);
            }
            self.result.timings.parse_ms += ms_since(start);
        }
        self.models
            .get(&number)
            .ok_or_else(|| Error::Engine("page model missing".into()))
    }

    /// Restores the document; cached fonts go too, because object ids of a rolled-back
    /// embedded font may be reused.
    pub(crate) fn rollback(&mut self, snapshot: Document) {
        self.doc = snapshot;
        self.fonts = DocFonts::default();
        self.models.clear();
        self.read_taken.clear();
        self.read_pending.clear();
    }

    /// Rolls the edit back to `snapshot` and records why it failed.
    pub(crate) fn refuse(
        &mut self,
        snapshot: Document,
        edit: &Edit,
        (reason, message): crate::types::Refusal,
    ) {
        self.rollback(snapshot);
        self.fail(edit, reason, message);
    }

    pub(crate) fn fail(&mut self, edit: &Edit, reason: FailReason, message: String) {
        self.result.failed.push(Failed {
            edit_index: edit.index,
            op: edit.op,
            reason,
            message,
            field: None,
        });
    }

    /// The matches of `edit` on the pages its scope names, filtered by region, span ids
    /// and anchor, and selected by occurrence.
    ///
    /// When nothing is found in our glyphs' text, the pages take reading's text for their
    /// glyphs ([`crate::model::reading`]) and are looked at again, so a word `/v1/text`
    /// gave is found where it is drawn. Only an edit that would otherwise go unmatched
    /// pays for reading the pages, and reading is laid onto a page only where the text
    /// can be found then ([`Needs`]); elsewhere it waits until the page's model is used.
    pub(crate) fn find(
        &mut self,
        edit: &Edit,
        matcher: &find::Matcher,
        spans: Option<&[crate::read::PageText]>,
    ) -> Result<Vec<Match>, Error> {
        let needs = Needs::of(matcher, edit.scope.anchor.is_some());
        let found = self.find_in_models(edit, matcher, spans, &needs)?;
        if !found.is_empty() {
            return Ok(found);
        }
        let pages: Vec<u32> = self
            .wanted_pages(edit)
            .into_iter()
            .filter(|n| {
                let scanned = self
                    .ocr
                    .as_ref()
                    .is_some_and(|o| o.pages.get(n).is_some_and(Option::is_some));
                !scanned && !self.read_taken.contains(n)
            })
            .collect();
        let changed = self.take_reading(&pages, &needs)?;
        if changed == 0 {
            return Ok(found);
        }
        self.find_in_models(edit, matcher, spans, &needs)
    }

    /// For a replace or delete that found nothing: the first place its text is drawn only
    /// by glyphs that also draw text around it (a ligature, or a shaped cluster whose
    /// `/ToUnicode` entry holds a whole word), where a redaction would find it; a replace
    /// cannot change part of a glyph.
    pub(crate) fn cut_match(
        &mut self,
        edit: &Edit,
        matcher: &find::Matcher,
        spans: Option<&[crate::read::PageText]>,
    ) -> Result<Option<Match>, Error> {
        if !matches!(edit.op, EditOp::Replace | EditOp::Delete) {
            return Ok(None);
        }
        let as_redact = Edit {
            op: EditOp::Redact,
            ..edit.clone()
        };
        let found = self.find(&as_redact, matcher, spans)?;
        Ok(found.into_iter().find(|m| !m.ocr && self.cuts_a_glyph(m)))
    }

    /// Whether match `m` begins or ends inside a glyph's text, or takes text from the
    /// `/ToUnicode` entry of a glyph that stays.
    fn cuts_a_glyph(&self, m: &Match) -> bool {
        let Some(line) = self.models.get(&m.page).and_then(|p| p.lines.get(m.line)) else {
            return false;
        };
        let at = |i: usize| line.byte_glyph.get(i).copied().flatten();
        let first = at(m.start);
        let last = m.end.checked_sub(1).and_then(at);
        let cut_before = m.start > 0 && first.is_some() && at(m.start - 1) == first;
        let cut_after = last.is_some() && at(m.end) == last;
        !m.unicode_cuts.is_empty() || cut_before || cut_after
    }

    /// The pages `edit`'s scope names, in order.
    fn wanted_pages(&self, edit: &Edit) -> Vec<u32> {
        let scope = &edit.scope;
        let all = self.page_ids();
        match (&scope.pages, &scope.region) {
            (_, Some(r)) => vec![r.page],
            (Some(p), None) => p.clone(),
            (None, None) => all.keys().copied().collect(),
        }
        .into_iter()
        .filter(|n| all.contains_key(n))
        .collect()
    }

    /// [`Run::find`] in the page models as they are (a page whose reading waits and
    /// lacks a character the text `needs` is passed over: it holds no match).
    fn find_in_models(
        &mut self,
        edit: &Edit,
        matcher: &find::Matcher,
        spans: Option<&[crate::read::PageText]>,
        needs: &Needs,
    ) -> Result<Vec<Match>, Error> {
        let pages = self.page_ids();
        let scope = &edit.scope;
        let wanted: BTreeSet<u32> = match (&scope.pages, &scope.region) {
            (_, Some(r)) => [r.page].into(),
            (Some(p), None) => p.iter().copied().collect(),
            (None, None) => pages.keys().copied().collect(),
        };
        let icase = edit.match_mode == MatchMode::Icase;
        let by_text = matches!(edit.op, EditOp::Redact | EditOp::Replace | EditOp::Delete);
        // Right-to-left text typed in visual order (as pdftotext and some viewers copy
        // it) is looked for that way too when the logical order is not on any of the
        // pages. A replacement then comes in that order too, and is put in logical order
        // (plan/arabic.rs), so that pdftotext's text edited and given back round-trips.
        let visual = match by_text.then(|| find::visual_order(matcher)).flatten() {
            Some(v) if !self.any_match(&pages, &wanted, matcher, edit, needs)? => Some(v),
            _ => None,
        };
        let matcher = visual.as_ref().unwrap_or(matcher);
        // A replace or delete also takes occurrences over a line break: their pattern is
        // compiled once for every page.
        let wrap = match edit.op {
            EditOp::Replace | EditOp::Delete => find::wrap::pattern(matcher),
            _ => None,
        };
        let mut all = Vec::new();
        let mut anchors = Vec::new();
        // The first or n-th occurrence without an anchor is known once that many matches
        // were found in page order: the later pages are not read (nor their models built).
        let needed = match (scope.anchor.is_some(), scope.occurrence) {
            (false, Some(crate::types::Occurrence::First)) => Some(1),
            (false, Some(crate::types::Occurrence::Nth(n))) => Some(n.max(1) as usize),
            _ => None,
        };
        for (&number, &page_id) in pages.iter().filter(|(n, _)| wanted.contains(n)) {
            // A wrapped occurrence's later parts do not count (find/wrap.rs).
            if needed.is_some_and(|n| all.iter().filter(|m: &&Match| !m.wrapped).count() >= n) {
                break;
            }
            if !self.may_match(number, needs) {
                continue;
            }
            if let Some(scan) = self.scanned(number)? {
                let geom = PageGeom::read(&self.doc, page_id);
                let mut found = find::ocr::ocr_matches(&scan, &geom, matcher, edit);
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
                    if let Some(pos) = find::ocr::ocr_anchor_end(&scan, a, icase) {
                        anchors.push((number, pos));
                    }
                }
                all.extend(found);
                continue;
            }
            let found =
                self.text_matches(number, page_id, (matcher, wrap.as_ref()), edit, spans)?;
            if let Some(a) = &scope.anchor {
                if let Some(pos) = anchor_end(&self.models[&number], a, icase) {
                    anchors.push((number, pos));
                }
            }
            all.extend(found);
        }
        if visual.is_some() {
            for m in &mut all {
                m.replacement = crate::plan::arabic::logical_from_visual(&m.replacement);
            }
        }
        Ok(select(
            all,
            &anchors,
            scope.anchor.is_some(),
            scope.occurrence,
        ))
    }

    /// The matches of `edit` on page `number`'s lines (its model built if need be), with
    /// what each glyph draws by its font program's cmap (a shaped cluster matches by it).
    fn drawn_matches(
        &mut self,
        number: u32,
        page_id: ObjectId,
        matcher: &find::Matcher,
        edit: &Edit,
    ) -> Result<Vec<Match>, Error> {
        self.model(number, page_id)?;
        let model = &self.models[&number];
        let (fonts, doc) = (&mut self.fonts, &self.doc);
        let glyphs = &model.glyphs.glyphs;
        let mut drawn = |g: usize| {
            let f = fonts.get(doc, &glyphs[g].font)?;
            f.font.program_chars(glyphs[g].code)
        };
        Ok(page_matches(model, matcher, edit, Some(&mut drawn)))
    }

    /// The matches of `edit` in the text of page `number`, filtered by region and span ids;
    /// `wrap` is the matcher's pattern over line breaks ([`find::wrap::pattern`]).
    fn text_matches(
        &mut self,
        number: u32,
        page_id: ObjectId,
        (matcher, wrap): (&find::Matcher, Option<&regex::Regex>),
        edit: &Edit,
        spans: Option<&[crate::read::PageText]>,
    ) -> Result<Vec<Match>, Error> {
        let mut found = self.drawn_matches(number, page_id, matcher, edit)?;
        let model = &self.models[&number];
        // A redaction looks for wrapped occurrences its own way (every one, over any
        // break: ops/redact); a replace or delete takes those within a column.
        match (edit.op, wrap) {
            (EditOp::Replace, Some(re)) => {
                find::wrap::add_wrapped_by(model, matcher, re, &edit.replace, &mut found)
            }
            (EditOp::Delete, Some(re)) => {
                find::wrap::add_wrapped_by(model, matcher, re, "", &mut found)
            }
            _ => {}
        }
        let scope = &edit.scope;
        if let Some(r) = &scope.region {
            find::retain_whole(&mut found, |m| inside(m.bbox, r.bbox));
        }
        if let (Some(ids), Some(spans)) = (&scope.span_ids, spans) {
            let boxes = find::span_boxes(spans, number, ids);
            find::retain_whole(&mut found, |m| {
                boxes.iter().any(|b| mostly_overlaps(m.bbox, *b))
            });
        }
        Ok(found)
    }

    /// Lays PDFium's reading of `pages` onto their models' glyphs
    /// ([`crate::model::reading`]); how many glyphs or lines took a different text.
    fn take_reading(&mut self, pages: &[u32], needs: &Needs) -> Result<usize, Error> {
        if pages.is_empty() {
            return Ok(0);
        }
        let ids = self.page_ids();
        for &number in pages {
            if let Some(&page_id) = ids.get(&number) {
                self.model(number, page_id)?;
            }
        }
        let start = Instant::now();
        let reader = pdf_render::Document::open(&self.current, None)?;
        let mut changed = 0;
        for &number in pages {
            if !self.models.contains_key(&number) {
                continue;
            }
            self.read_taken.insert(number);
            let chars = reader.page_chars(number.saturating_sub(1))?;
            let chars = crate::read::bidi::glyph_text_order(&chars);
            let chars: Vec<ReadChar> = chars.iter().map(ReadChar::from).collect();
            let Some(model) = self.models.get_mut(&number) else {
                continue;
            };
            if matches!(needs, Needs::Any) {
                changed += crate::model::reading::take_reading(model, &chars);
                continue;
            }
            let set = crate::model::reading::page_chars(&model.glyphs.glyphs, &chars);
            if needs.met_by(&set) {
                changed += crate::model::reading::take_reading(model, &chars);
            } else {
                self.read_pending.insert(number, (chars, set));
            }
        }
        self.result.timings.parse_ms += ms_since(start);
        Ok(changed)
    }

    /// Whether page `number` may hold a match of a text that `needs` these characters:
    /// not when its reading waits and it lacks one of them.
    fn may_match(&self, number: u32, needs: &Needs) -> bool {
        self.read_pending
            .get(&number)
            .is_none_or(|(_, chars)| needs.met_by(chars))
    }

    /// Whether `matcher` finds anything on the `wanted` pages (cut glyphs included).
    fn any_match(
        &mut self,
        pages: &BTreeMap<u32, ObjectId>,
        wanted: &BTreeSet<u32>,
        matcher: &find::Matcher,
        edit: &Edit,
        needs: &Needs,
    ) -> Result<bool, Error> {
        for (&number, &page_id) in pages.iter().filter(|(n, _)| wanted.contains(n)) {
            if !self.may_match(number, needs) {
                continue;
            }
            if !self
                .drawn_matches(number, page_id, matcher, edit)?
                .is_empty()
            {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
