//! Replace and delete text in the document's own fonts, every change verified by rendering
//! (SPEC behaviour rules 1–7).
//!
//! Each edit in turn: find its matches on the current document, plan the new bytes of the
//! touched content streams, write them, render the touched pages and compare them with the
//! renders before the edit outside the changes' own areas. Anything else that moved rolls
//! the edit back (`failed[]`, reason `collateral_change`).

use std::collections::BTreeMap;

use crate::find::Match;
use crate::model::fonts::DocFonts;
use crate::model::text::PageGeom;
use crate::plan::{line, reflow, streams, Planned, REFLOW_NEEDED};
use crate::run::{timed, Run};
use crate::save::save;
use crate::types::FailReason;
use crate::types::{Change, Edit, Fit, FontPolicy};
use crate::verify;
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
        let pages = self.page_ids();
        let mut planned = Vec::new();
        for (&page, ms) in &by_page {
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
        let want = self.previews;
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
                        FailReason::Overflow,
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
                let (before_png, after_png) = timed(&mut t.diff_ms, || {
                    verify::previews(&before, &after, *area, want)
                });
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
                    alignment: c.alignment,
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
            self.fail(edit, FailReason::CollateralChange, message);
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
