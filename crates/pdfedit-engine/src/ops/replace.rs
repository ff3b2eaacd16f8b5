//! Replace and delete text in the document's own fonts, every change verified by rendering
//! (SPEC behaviour rules 1–7).
//!
//! Each edit in turn: find its matches on the current document, plan the new bytes of the
//! touched content streams, write them, render the touched pages and compare them with the
//! renders before the edit outside the changes' own areas. Anything else that moved rolls
//! the edit back (`failed[]`, reason `collateral_change`).

use std::collections::BTreeMap;

use pdf_render::raster::Raster;

use crate::commit::{change, commit, Checks, PageCheck, Pair, Refusal, Rules, Verdict};
use crate::find::Match;
use crate::model::fonts::DocFonts;
use crate::model::text::PageGeom;
use crate::plan::{line, reflow, streams, PagePlan, Planned, REFLOW_NEEDED};
use crate::run::{timed, Run};
use crate::save::save_in_place;
use crate::types::FailReason;
use crate::types::{Change, Edit, Fit, FontPolicy};
use crate::verify::{self, Policy};
use crate::Error;

/// The moved glyphs of planned changes as display boxes and moves (top-left points).
fn moved_display(geom: &PageGeom, changes: &[Planned]) -> Vec<([f64; 4], [f64; 2])> {
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

/// A planned page: its number, geometry and plan.
type PlannedPage = (u32, PageGeom, PagePlan);

/// Replace's and delete's checks: before the page is rendered after, a paragraph that grows
/// into more lines needs the room below it blank on the page as it was; and one noise round,
/// glyphs after the edit in its text object that PDFium now places an `f32` rounding away
/// and renders one placement step over ([`verify::settle`]).
struct BlankRoom(BTreeMap<u32, Vec<[f64; 4]>>);

impl Checks for BlankRoom {
    fn settle(&mut self, round: usize, pair: &Pair<'_>) -> Result<Vec<[f64; 4]>, Error> {
        if round > 0 {
            return Ok(Vec::new());
        }
        verify::settle::settled_areas(
            pair.policy,
            pair.before_pdf,
            pair.after_pdf,
            pair.page.page,
            pair.before,
            pair.after,
        )
    }

    fn before(&mut self, page: &PageCheck, before: &Raster, policy: &Policy) -> Option<Refusal> {
        let boxes = self.0.get(&page.page).filter(|b| !b.is_empty())?;
        (!reflow::is_blank(before, boxes, policy.channel_tolerance)).then(|| {
            (
                FailReason::Overflow,
                "the paragraph needs more lines and the room below it is not empty".into(),
            )
        })
    }
}

impl Run {
    /// Plans, writes and verifies every match of a replace or delete. `keep_prefix` bytes of
    /// each replacement are drawn in the line's own style even when the edit has a `style`
    /// (an inline insert's anchor).
    pub(crate) fn apply(
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
        let planned = match self.plan_pages(edit, &by_page, policy, keep_prefix)? {
            Ok(planned) => planned,
            Err(refusal) => {
                self.refuse(snapshot, edit, refusal);
                return Ok(());
            }
        };
        let new_bytes = timed(&mut self.result.timings.save_ms, || {
            save_in_place(&mut self.doc)
        })?;
        let checks: Vec<PageCheck> = planned
            .iter()
            .map(|(page, geom, plan)| {
                let areas: Vec<[f64; 4]> = plan
                    .changes
                    .iter()
                    .map(|c| geom.display_box(c.area_user))
                    .collect();
                PageCheck {
                    page: *page,
                    moved: moved_display(geom, &plan.changes),
                    shown: areas.clone(),
                    areas,
                }
            })
            .collect();
        let mut blank = BlankRoom(
            planned
                .iter()
                .map(|(page, geom, plan)| {
                    let boxes = plan.blank_user.iter().map(|b| geom.display_box(*b));
                    (*page, boxes.collect())
                })
                .collect(),
        );
        let rules = Rules::new(edit, "the edited text");
        let verdict = commit(&mut self.verifier(), &rules, new_bytes, &checks, &mut blank)?;
        let Verdict::Kept(kept) = verdict else {
            self.rollback(snapshot);
            return Ok(());
        };
        for ((page, _, plan), (check, k)) in planned.iter().zip(checks.iter().zip(kept)) {
            self.models.remove(page);
            for ((c, area), crops) in plan.changes.iter().zip(&check.shown).zip(k.previews) {
                if let Some(w) = c.warning {
                    self.result.warnings.push(w.to_string());
                }
                let m = &by_page[page][c.match_index];
                self.result.changes.push(Change {
                    find: m.found.clone(),
                    replace: m.replacement.clone(),
                    font_source: c.font_source,
                    font_used: c.font_used.clone(),
                    alignment: c.alignment,
                    ..change(edit, *page, k.collateral, *area, crops)
                });
            }
        }
        Ok(())
    }

    /// Plans each page's matches (in its line, or by reflow when the line cannot hold
    /// them and the edit allows it) and writes the new streams into the document; the
    /// first page that cannot be planned refuses the edit.
    fn plan_pages(
        &mut self,
        edit: &Edit,
        by_page: &BTreeMap<u32, Vec<Match>>,
        policy: FontPolicy,
        keep_prefix: usize,
    ) -> Result<Result<Vec<PlannedPage>, Refusal>, Error> {
        let pages = self.page_ids();
        let mut planned = Vec::new();
        for (&page, ms) in by_page {
            let page_id = pages[&page];
            self.model(page, page_id)?;
            let model = &self.models[&page];
            let page_snapshot = (edit.fit == Fit::Reflow).then(|| self.doc.clone());
            let planned_page = line::plan_page(
                &mut self.doc,
                &mut self.fonts,
                model,
                ms,
                edit,
                policy,
                keep_prefix,
            );
            let planned_page = match (planned_page, page_snapshot) {
                (Err((REFLOW_NEEDED, _)), Some(page_doc)) => {
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
                        .map_err(|e| (FailReason::UnsupportedLayout, e))?;
                }
                if let Some(ops) = &plan.append {
                    streams::append_page_stream(&mut self.doc, model.page_id, ops.clone())
                        .map_err(|e| (FailReason::UnsupportedLayout, e))?;
                }
                Ok(plan)
            });
            match outcome {
                Ok(plan) => planned.push((page, model.geom, plan)),
                Err(refusal) => return Ok(Err(refusal)),
            }
        }
        Ok(Ok(planned))
    }
}
