//! The one step every operation ends with: render each touched page before (the cached
//! render when there is one) and after, compare the two outside the change areas with the
//! run's [`Policy`], run the operation's own checks ([`Checks`]), and keep the new bytes
//! or roll back. Renders are timed into `render_ms`, comparisons, noise rounds and preview
//! crops into `diff_ms`, the same way for every operation; previews are cropped only from
//! pages that are kept.
//!
//! An operation plans and writes its change, saves the candidate bytes, describes each
//! touched page ([`PageCheck`]) and calls [`commit`]. On [`Verdict::Kept`] the current bytes
//! are the candidate's and the after-renders are cached for the next edit; on
//! [`Verdict::RolledBack`] the failure is recorded and the before-renders are cached again,
//! and the operation restores its document.

use crate::types::FailReason;
use std::collections::HashMap;

use lopdf::Document;
use pdf_render::diff::DiffReport;
use pdf_render::raster::Raster;

use crate::model::fonts::DocFonts;
use crate::run::{timed, Run};
use crate::types::{Change, Edit, EditResult, Failed, Timings};
use crate::verify::{self, Policy};
use crate::Error;

/// Why a candidate is refused: a stable reason and a message.
pub(crate) use crate::types::Refusal;

/// The state a commit works on, borrowed from the edit run.
pub(crate) struct Verifier<'a> {
    /// The document's current saved bytes (what the previous edits produced).
    pub current: &'a mut Vec<u8>,
    /// Renders of the current bytes at the verification resolution, by 1-based page.
    pub renders: &'a mut HashMap<u32, Raster>,
    /// Where failures, touched pages and timings go.
    pub result: &'a mut EditResult,
    /// The tolerances of the comparison.
    pub policy: &'a Policy,
    /// Whether kept changes carry their before/after preview crops.
    pub previews: bool,
    /// Whether renders before may come from (and go to) the template cache.
    pub template: bool,
}

impl Run {
    /// Commits `new_bytes` (the run's document as edited) with the plain comparison, each
    /// page allowed to change only inside its boxes, which are also its preview crops (the
    /// rects of edited annotations); on a roll-back the document goes back to `snapshot`
    /// and `None` is returned (the failure is recorded).
    pub(crate) fn commit_boxes(
        &mut self,
        rules: &Rules<'_>,
        new_bytes: Vec<u8>,
        boxes: Vec<(u32, Vec<[f64; 4]>)>,
        snapshot: Document,
    ) -> Result<Option<Vec<Kept>>, Error> {
        let pages: Vec<PageCheck> = boxes
            .into_iter()
            .map(|(page, areas)| PageCheck {
                page,
                shown: areas.clone(),
                areas,
                moved: Vec::new(),
            })
            .collect();
        match commit(&mut self.verifier(), rules, new_bytes, &pages, &mut Plain)? {
            Verdict::Kept(kept) => Ok(Some(kept)),
            Verdict::RolledBack => {
                self.rollback(snapshot);
                Ok(None)
            }
        }
    }

    /// The run's state as the commit step sees it.
    pub(crate) fn verifier(&mut self) -> Verifier<'_> {
        self.split().2
    }

    /// The document and its fonts beside the state the commit step works on (for an
    /// operation that edits the one and commits through the other).
    pub(crate) fn split(&mut self) -> (&mut Document, &mut DocFonts, Verifier<'_>) {
        let verifier = Verifier {
            current: &mut self.current,
            renders: &mut self.renders,
            result: &mut self.result,
            policy: &self.verify,
            previews: self.previews,
            template: self.template,
        };
        (&mut self.doc, &mut self.fonts, verifier)
    }
}

/// One page a candidate touches.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageCheck {
    /// 1-based page.
    pub page: u32,
    /// Areas (top-left points) allowed to change; everything else must render as before.
    pub areas: Vec<[f64; 4]>,
    /// Glyphs the change moved along their line: box before (top-left points) and move
    /// (points). They must render as before, moved (see [`verify::moved_mismatch`]).
    pub moved: Vec<([f64; 4], [f64; 2])>,
    /// Boxes (top-left points) of the preview crops, one per change shown.
    pub shown: Vec<[f64; 4]>,
}

/// One page's renders and the bytes they came from, as an operation's check sees them.
pub(crate) struct Pair<'a> {
    pub page: &'a PageCheck,
    pub policy: &'a Policy,
    /// The bytes before (the current bytes) and after (the candidate).
    pub before_pdf: &'a [u8],
    pub after_pdf: &'a [u8],
    pub before: &'a Raster,
    pub after: &'a Raster,
}

/// What an operation adds to the comparison; every method has a default that adds nothing.
pub(crate) trait Checks {
    /// With the render before, ahead of the render after: a refusal that needs only the
    /// page as it was (a growing paragraph needs blank room below it).
    fn before(&mut self, _page: &PageCheck, _before: &Raster, _policy: &Policy) -> Option<Refusal> {
        None
    }

    /// Noise round `round` (below the policy's `noise_rounds`), run while pixels outside
    /// the areas still differ: more areas whose change is rendering noise, not a change.
    fn settle(&mut self, _round: usize, _pair: &Pair<'_>) -> Result<Vec<[f64; 4]>, Error> {
        Ok(Vec::new())
    }

    /// After every page compared clean: a last check of one page (a redrawn scanned
    /// word is read back by OCR). Its own time goes into `timings`.
    fn after(
        &mut self,
        _pair: &Pair<'_>,
        _timings: &mut Timings,
    ) -> Result<Option<Refusal>, Error> {
        Ok(None)
    }
}

/// No checks beyond the comparison.
pub(crate) struct Plain;

impl Checks for Plain {}

/// How a candidate is judged and a roll-back reported.
pub(crate) struct Rules<'a> {
    /// The edit, for the failure entry.
    pub edit: &'a Edit,
    /// What the change areas hold, for the message ("the edited text").
    pub outside: &'static str,
    /// Whether the message names where the collateral is (page and box).
    pub locate: bool,
    /// Whether collateral rolls the edit back. A form fill keeps its values and reports
    /// them unverified instead (`verified: false`).
    pub roll_back: bool,
}

impl<'a> Rules<'a> {
    /// Collateral rolls `edit` back; the message says it lies outside `outside`, and
    /// where (page and box), so a user can see what is in the way.
    pub(crate) fn new(edit: &'a Edit, outside: &'static str) -> Self {
        Self {
            edit,
            outside,
            locate: true,
            roll_back: true,
        }
    }
}

/// A kept page.
pub(crate) struct Kept {
    pub page: u32,
    /// Pixels changed outside the areas (zero unless the rules keep collateral).
    pub collateral: u64,
    /// Before and after PNG crops, one per `shown` box (empty PNGs without previews).
    pub previews: Vec<(Vec<u8>, Vec<u8>)>,
}

/// A change of `edit` kept on `page`, shown at `bbox` with its preview crops, verified
/// when nothing changed outside the areas; what was found and replaced, the font and the
/// field are the operation's to fill in.
pub(crate) fn change(
    edit: &Edit,
    page: u32,
    collateral: u64,
    bbox: [f64; 4],
    (before_png, after_png): (Vec<u8>, Vec<u8>),
) -> Change {
    Change {
        edit_index: edit.index,
        page,
        op: edit.op,
        find: String::new(),
        replace: String::new(),
        font_source: "none",
        font_used: String::new(),
        verified: collateral == 0,
        collateral_pixels: collateral,
        bbox,
        before_png,
        after_png,
        field: None,
        value: None,
        alignment: None,
    }
}

/// The outcome of [`commit`].
pub(crate) enum Verdict {
    /// The candidate is now the current document; one entry per page, in order.
    Kept(Vec<Kept>),
    /// The failure is recorded; the operation restores its document.
    RolledBack,
}

/// One compared page: its check, the renders and what differs.
struct Compared<'p> {
    page: &'p PageCheck,
    before: Raster,
    /// Whether `before` is exactly the render of the current bytes (rendered for this
    /// commit or taken from the template cache), so it may go back to the template cache.
    exact: bool,
    after: Raster,
    collateral: u64,
}

/// Renders, compares and keeps or rolls back `new_bytes` (see the module's text).
pub(crate) fn commit(
    v: &mut Verifier<'_>,
    rules: &Rules<'_>,
    new_bytes: Vec<u8>,
    pages: &[PageCheck],
    checks: &mut dyn Checks,
) -> Result<Verdict, Error> {
    let mut compared: Vec<Compared<'_>> = Vec::new();
    let mut befores: Vec<(u32, Raster)> = Vec::new();
    let (mut collateral, mut misdrawn) = (0, 0);
    let mut where_changed = Vec::new();
    for page in pages {
        let (before, exact) = render_before(v, page.page)?;
        if let Some(refusal) = checks.before(page, &before, v.policy) {
            befores.push((page.page, before));
            befores.extend(compared.into_iter().map(|c| (c.page.page, c.before)));
            return Ok(roll_back(v, rules, befores, refusal));
        }
        let t = &mut v.result.timings;
        let after = timed(&mut t.render_ms, || {
            verify::render(v.policy, &new_bytes, page.page)
        })?;
        let pair = Pair {
            page,
            policy: v.policy,
            before_pdf: v.current.as_slice(),
            after_pdf: &new_bytes,
            before: &before,
            after: &after,
        };
        let report = timed(&mut t.diff_ms, || compare_page(&pair, checks))?;
        collateral += report.changed_pixels_outside;
        if let Some(b) = report
            .bbox_of_changes
            .filter(|_| report.changed_pixels_outside > 0)
        {
            where_changed.push(format!(
                "page {} around [{:.0}, {:.0}, {:.0}, {:.0}]",
                page.page, b[0], b[1], b[2], b[3]
            ));
        }
        if !page.moved.is_empty() {
            misdrawn += timed(&mut t.diff_ms, || {
                verify::moved_mismatch(v.policy, &before, &after, &page.moved)
            });
        }
        compared.push(Compared {
            page,
            before,
            exact,
            after,
            collateral: report.changed_pixels_outside,
        });
    }
    let refusal = if rules.roll_back && collateral > 0 {
        let at = if rules.locate {
            format!(" ({})", where_changed.join(", "))
        } else {
            String::new()
        };
        let outside = rules.outside;
        let m = format!("{collateral} pixels changed outside {outside}{at}; rolled back");
        Some((FailReason::CollateralChange, m))
    } else if rules.roll_back && misdrawn > 0 {
        let m = format!("{misdrawn} pixels of the moved rest of the line differ; rolled back");
        Some((FailReason::CollateralChange, m))
    } else {
        last_checks(v, &new_bytes, &compared, checks)?
    };
    if let Some(refusal) = refusal {
        let befores = compared.into_iter().map(|c| (c.page.page, c.before));
        return Ok(roll_back(v, rules, befores.collect(), refusal));
    }
    Ok(Verdict::Kept(keep(v, new_bytes, compared)))
}

/// The render before of `page`: the run's cached one (taken out of the cache), else the
/// template cache's render of these exact bytes (taken out of it), else rendered; and
/// whether it is exactly the render of the current bytes (not one the run kept).
fn render_before(v: &mut Verifier<'_>, page: u32) -> Result<(Raster, bool), Error> {
    if let Some(r) = v.renders.remove(&page) {
        return Ok((r, false));
    }
    let ppp = v.policy.px_per_pt;
    if let Some(r) = v
        .template
        .then(|| crate::template::take(v.current, page, ppp))
        .flatten()
    {
        return Ok((r, true));
    }
    let r = timed(&mut v.result.timings.render_ms, || {
        verify::render(v.policy, v.current, page)
    })?;
    Ok((r, true))
}

/// Compares one page outside its areas; while pixels outside still differ, the
/// operation's noise rounds may leave more areas out, and the page is compared again.
fn compare_page(pair: &Pair<'_>, checks: &mut dyn Checks) -> Result<DiffReport, Error> {
    let (before, after) = (pair.before, pair.after);
    let mut areas = pair.page.areas.clone();
    let mut report = verify::compare(pair.policy, before, after, &areas)?;
    for round in 0..pair.policy.noise_rounds {
        if report.changed_pixels_outside == 0 {
            break;
        }
        let settled = checks.settle(round, pair)?;
        if !settled.is_empty() {
            areas.extend(settled);
            report = verify::compare(pair.policy, before, after, &areas)?;
        }
    }
    Ok(report)
}

/// The operation's checks after every page compared clean; the first refusal, if any.
fn last_checks(
    v: &mut Verifier<'_>,
    new_bytes: &[u8],
    compared: &[Compared<'_>],
    checks: &mut dyn Checks,
) -> Result<Option<Refusal>, Error> {
    for c in compared {
        let pair = Pair {
            page: c.page,
            policy: v.policy,
            before_pdf: v.current.as_slice(),
            after_pdf: new_bytes,
            before: &c.before,
            after: &c.after,
        };
        if let Some(refusal) = checks.after(&pair, &mut v.result.timings)? {
            return Ok(Some(refusal));
        }
    }
    Ok(None)
}

/// Records the failure and puts the renders before back in the cache.
fn roll_back(
    v: &mut Verifier<'_>,
    rules: &Rules<'_>,
    befores: Vec<(u32, Raster)>,
    (reason, message): Refusal,
) -> Verdict {
    for (page, before) in befores {
        v.renders.insert(page, before);
    }
    v.result.failed.push(Failed {
        edit_index: rules.edit.index,
        op: rules.edit.op,
        reason,
        message,
        field: None,
    });
    Verdict::RolledBack
}

/// Makes the candidate current: previews cropped, renders after cached, pages touched.
fn keep(v: &mut Verifier<'_>, new_bytes: Vec<u8>, compared: Vec<Compared<'_>>) -> Vec<Kept> {
    let mut kept = Vec::with_capacity(compared.len());
    for c in compared {
        let want = v.previews;
        let previews = timed(&mut v.result.timings.diff_ms, || {
            c.page
                .shown
                .iter()
                .map(|area| verify::previews(&c.before, &c.after, *area, want))
                .collect()
        });
        v.renders.insert(c.page.page, c.after);
        if v.template && c.exact {
            // The bytes before are still `v.current` here: the next record of the same
            // template takes this render instead of rendering it again.
            crate::template::give_back(v.current, c.page.page, v.policy.px_per_pt, c.before);
        }
        v.result.touch_page(c.page.page);
        kept.push(Kept {
            page: c.page.page,
            collateral: c.collateral,
            previews,
        });
    }
    *v.current = new_bytes;
    kept
}
