//! Replace and delete of text shown by annotations rather than the page content: FreeText
//! annotations (their /Contents, /RC and appearance stream), and the widgets whose
//! appearance shows text that is not a field's value (a push button's caption, a list
//! box's options, a combo box's option, a signature's appearance: see [`widgets`]). Used
//! only when the page content does not hold the match (the page-content path runs first).
//!
//! The appearance is edited in place in its own content stream (see [`appearance`]): the
//! same planning as a page replace, so the new text is drawn in the appearance's own font
//! when its subset has the glyphs, else a metric twin or a look-alike, at the same size,
//! colour and place; border, fill and callout line stay as they are. Text that does not
//! fit follows `fit` (auto: condense and shrink within the page floors, then let the rest
//! of the line move when it still ends inside the annotation's text box; otherwise
//! `overflow`).
//!
//! A FreeText without a normal appearance stream gets one drawn from its /Contents and
//! /DA ([`regen`]: font, size or auto size, colour, /DS where simple, /Q, /RD, border,
//! /C fill, wrapped in the box); the text is found in that appearance, /Contents and /RC
//! are updated and the appearance is drawn again from the new /Contents. A FreeText whose
//! stored appearance cannot be edited in place because its font cannot draw the new text
//! is drawn anew the same way when its /DA font (from the form's /DR or the appearance's
//! resources) can. Otherwise an appearance that cannot be read or edited fails with
//! `annotation_text`, as does a FreeText without appearance that has a callout line or a
//! cloudy border (not drawn by the generator).
//!
//! Verified like a page edit: the page is rendered with its annotations before and after,
//! and no pixel outside the annotation's /Rect may change. (PDFium renders a FreeText
//! without appearance with one it generates, but its flattening, which text reading uses,
//! does not show it: reading returns such an annotation's text only once it is edited.)

mod appearance;
mod contents;
mod holds;
mod regen;
mod widgets;

use std::collections::BTreeMap;

use lopdf::{Document, Object};
use pdf_content::interp::matrix::transform_rect;

use crate::commit::{change, Rules};
use crate::find::wrap::add_wrapped;
use crate::find::{
    anchor_end, inside, mostly_overlaps, page_matches, select, span_boxes, Match, Matcher,
};
use crate::model::fonts::DocFonts;
use crate::model::form::Kind;
use crate::model::text::display_box;
use crate::ops::form::font::FormFonts;
use crate::plan::line::plan_page;
use crate::plan::{streams, Planned, REFLOW_NEEDED};
use crate::read::PageText;
use crate::run::{timed, Run};
use crate::save::save_in_place;
use crate::types::{Change, Edit, EditOp, Fit, FontPolicy, MatchMode, Scope};
use crate::types::{FailReason, Refusal};
use crate::Error;
use appearance::{Candidate, View};

/// Annotations looked at per page; a page with more is not searched further.
const MAX_ANNOTS_PER_PAGE: usize = 10_000;

/// FreeText annotations (indirect ones) on the pages in `scope`, and the widgets of push
/// buttons, signatures and choice fields ([`widgets`]).
fn candidates(doc: &Document, scope: &Scope) -> Vec<Candidate> {
    let mut out = Vec::new();
    let fields = widgets::widget_fields(doc);
    for (page, page_id) in doc.get_pages() {
        if scope.pages.as_ref().is_some_and(|p| !p.contains(&page)) {
            continue;
        }
        if scope.region.as_ref().is_some_and(|r| r.page != page) {
            continue;
        }
        let Ok(dict) = doc.get_dictionary(page_id) else {
            continue;
        };
        let annots = match dict.get(b"Annots").map(|o| doc.dereference(o)) {
            Ok(Ok((_, Object::Array(a)))) => a,
            _ => continue,
        };
        for a in annots.iter().take(MAX_ANNOTS_PER_PAGE) {
            let Ok(annot_id) = a.as_reference() else {
                continue;
            };
            let Ok(d) = doc.get_dictionary(annot_id) else {
                continue;
            };
            let field = fields.get(&annot_id);
            let freetext =
                d.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"FreeText".as_slice());
            if freetext || field.is_some() {
                out.push(Candidate {
                    page,
                    page_id,
                    annot_id,
                    field: field.cloned(),
                });
            }
        }
    }
    out
}

/// One annotation's planned edit.
struct Done {
    view: View,
    matches: Vec<Match>,
    changes: Vec<Planned>,
    /// Its appearance is drawn anew from /DA ([`regen`]) rather than edited in place.
    regenerate: bool,
}

/// Refusals of the in-place edit that a FreeText's appearance drawn anew from /DA may
/// overcome (the appearance's font cannot draw the new text).
const FONT_REFUSALS: [FailReason; 5] = [
    FailReason::MissingGlyphs,
    FailReason::NoMetricFont,
    FailReason::Type3Font,
    FailReason::UnsupportedLayout,
    FailReason::AnnotationText,
];

/// Applies a replace or delete that found nothing in the page content to the FreeText
/// annotations in scope. Returns whether the edit was dealt with (applied, or failed with a
/// reason); false means nothing holds the text and the edit is unmatched.
pub(crate) fn apply(
    run: &mut Run,
    edit: &Edit,
    matcher: &Matcher,
    policy: FontPolicy,
    spans: Option<&[PageText]>,
) -> Result<bool, Error> {
    let cands = candidates(&run.doc, &edit.scope);
    if cands.is_empty() {
        return Ok(false);
    }
    let snapshot = run.doc.clone();
    let views = open_views(run, cands);
    let selected = find(run, &views, edit, matcher, spans);
    let selected = with_siblings(&views, edit, matcher, selected);
    if selected.iter().all(Vec::is_empty) {
        run.rollback(snapshot);
        if holds::freetext_holds(&run.doc, &edit.scope, matcher, spans) {
            run.fail(
                edit,
                FailReason::AnnotationText,
                "the text is only in a FreeText annotation whose appearance cannot be edited"
                    .into(),
            );
            return Ok(true);
        }
        return Ok(false);
    }
    let mut done = Vec::new();
    for (view, ms) in views.into_iter().zip(selected) {
        if ms.is_empty() {
            regen::discard(&mut run.doc, view);
            continue;
        }
        if view.generated.is_some() {
            done.push(Done {
                view,
                matches: ms,
                changes: Vec::new(),
                regenerate: true,
            });
            continue;
        }
        let mark = run.doc.max_id;
        match plan(&mut run.doc, &mut run.fonts, &view, &ms, edit, policy) {
            Ok(changes) => done.push(Done {
                view,
                matches: ms,
                changes,
                regenerate: false,
            }),
            Err((reason, _))
                if view.cand.field.is_none()
                    && FONT_REFUSALS.contains(&reason)
                    && regen::da_font_draws(&mut run.doc, &view, &ms) =>
            {
                // What the planner added goes; the appearance is drawn anew instead.
                run.doc.objects.retain(|id, _| id.0 <= mark);
                run.fonts = DocFonts::default();
                done.push(Done {
                    view,
                    matches: ms,
                    changes: Vec::new(),
                    regenerate: true,
                });
            }
            Err((reason, message)) => {
                run.rollback(snapshot);
                run.fail(edit, reason, message);
                return Ok(true);
            }
        }
    }
    if let Err((reason, message)) = write(&mut run.doc, &mut done, policy) {
        run.rollback(snapshot);
        run.fail(edit, reason, message);
        return Ok(true);
    }
    verify_and_keep(run, edit, snapshot, done)?;
    Ok(true)
}

/// Writes each planned annotation: its own text (/Contents and /RC, or the field's value)
/// and its appearance (the edited copy, or one drawn anew).
fn write(doc: &mut Document, done: &mut [Done], policy: FontPolicy) -> Result<(), Refusal> {
    let mut form_fonts = FormFonts::default();
    for d in done {
        let pairs: Vec<(String, String)> = d
            .matches
            .iter()
            .map(|m| (m.found.clone(), m.replacement.clone()))
            .collect();
        let own_text = match &d.view.cand.field {
            Some(f) => {
                let edits: Vec<(usize, usize, usize, String)> = d
                    .matches
                    .iter()
                    .map(|m| (m.line, m.start, m.end, m.replacement.clone()))
                    .collect();
                let widget = d.view.cand.annot_id;
                widgets::update_field(doc, f, widget, &d.view.model, &edits)
            }
            None => contents::update(doc, d.view.cand.annot_id, &pairs),
        };
        own_text.map_err(|m| (FailReason::AnnotationText, m))?;
        if d.regenerate {
            let n = d.matches.len();
            d.changes = regen::commit(doc, &mut form_fonts, &mut d.view, n, policy)?;
        } else {
            appearance::commit(doc, &d.view).map_err(|m| (FailReason::AnnotationText, m))?;
        }
    }
    Ok(())
}

/// Whether [`apply`] would deal with a replace or delete that found nothing in the page
/// content (a FreeText appearance holds the text, or its /Contents does). Changes nothing.
pub(crate) fn locate(
    run: &mut Run,
    edit: &Edit,
    matcher: &Matcher,
    spans: Option<&[PageText]>,
) -> Result<bool, Error> {
    let cands = candidates(&run.doc, &edit.scope);
    if cands.is_empty() {
        return Ok(false);
    }
    let snapshot = run.doc.clone();
    let views = open_views(run, cands);
    let found = !find(run, &views, edit, matcher, spans)
        .iter()
        .all(Vec::is_empty);
    run.rollback(snapshot);
    Ok(found || holds::freetext_holds(&run.doc, &edit.scope, matcher, spans))
}

/// The editable appearance of each candidate annotation (scratch copies in the document:
/// the caller rolls back or closes them).
fn open_views(run: &mut Run, cands: Vec<Candidate>) -> Vec<View> {
    cands
        .into_iter()
        .filter_map(|cand| {
            appearance::open(&mut run.doc, &mut run.fonts, cand.clone())
                .or_else(|| regen::open(&mut run.doc, &mut run.fonts, cand))
        })
        .collect()
}

/// The matches in each view, filtered by region and span ids (the spans `read_text`
/// reads from annotation appearances) and selected by anchor and occurrence.
fn find(
    run: &Run,
    views: &[View],
    edit: &Edit,
    matcher: &Matcher,
    spans: Option<&[PageText]>,
) -> Vec<Vec<Match>> {
    let scope = &edit.scope;
    let icase = edit.match_mode == MatchMode::Icase;
    let mut all = Vec::new();
    let mut anchors = Vec::new();
    for (vi, view) in views.iter().enumerate() {
        // select() works per page: each annotation counts as its own page here.
        let key = u32::try_from(vi).unwrap_or(u32::MAX);
        let mut found = page_matches(&view.model, matcher, edit, None);
        // A phrase the box wraps from one line to the next, as on a page.
        match edit.op {
            EditOp::Replace => add_wrapped(&view.model, matcher, &edit.replace, &mut found),
            EditOp::Delete => add_wrapped(&view.model, matcher, "", &mut found),
            _ => {}
        }
        for mut m in found {
            let on_page = transform_rect(&view.to_page, m.bbox_user);
            m.bbox = display_box(&run.doc, view.cand.page_id, on_page);
            if scope
                .region
                .as_ref()
                .is_some_and(|r| !inside(m.bbox, r.bbox))
            {
                continue;
            }
            if let (Some(ids), Some(spans)) = (&scope.span_ids, spans) {
                let boxes = span_boxes(spans, view.cand.page, ids);
                if !boxes.iter().any(|b| mostly_overlaps(m.bbox, *b)) {
                    continue;
                }
            }
            m.page = key;
            all.push(m);
        }
        if let Some(a) = &scope.anchor {
            if let Some(pos) = anchor_end(&view.model, a, icase) {
                anchors.push((key, pos));
            }
        }
    }
    let mut out: Vec<Vec<Match>> = views.iter().map(|_| Vec::new()).collect();
    for mut m in select(all, &anchors, scope.anchor.is_some(), scope.occurrence) {
        let vi = m.page as usize;
        m.page = views[vi].cand.page;
        out[vi].push(m);
    }
    out
}

/// A choice field shows its options (a combo box its value) on each of its widgets, and
/// the field's /Opt and /V are edited once for all of them: a line edited on one widget
/// is edited on the widgets of the same field that show the same line too.
fn with_siblings(
    views: &[View],
    edit: &Edit,
    matcher: &Matcher,
    mut selected: Vec<Vec<Match>>,
) -> Vec<Vec<Match>> {
    let choice = |v: &View| {
        v.cand
            .field
            .as_ref()
            .filter(|f| matches!(f.kind, Kind::List | Kind::Combo))
            .map(|f| f.id)
    };
    let mut added: Vec<(usize, Match)> = Vec::new();
    for (vi, ms) in selected.iter().enumerate() {
        let Some(field) = choice(&views[vi]) else {
            continue;
        };
        for m in ms {
            let Some(line) = views[vi].model.lines.get(m.line) else {
                continue;
            };
            for (vj, other) in views.iter().enumerate() {
                if vj == vi || choice(other) != Some(field) {
                    continue;
                }
                let same = page_matches(&other.model, matcher, edit, None)
                    .into_iter()
                    .find(|o| {
                        (o.start, o.end) == (m.start, m.end)
                            && other.model.lines.get(o.line).map(|l| &l.text) == Some(&line.text)
                    });
                let taken = |o: &Match| {
                    selected[vj]
                        .iter()
                        .chain(added.iter().filter(|a| a.0 == vj).map(|a| &a.1))
                        .any(|t| (t.line, t.start) == (o.line, o.start))
                };
                if let Some(mut o) = same.filter(|o| !taken(o)) {
                    o.page = other.cand.page;
                    o.replacement.clone_from(&m.replacement);
                    added.push((vj, o));
                }
            }
        }
    }
    for (vj, o) in added {
        selected[vj].push(o);
    }
    selected
}

/// Plans and writes one annotation's matches into its appearance copy.
///
/// `fit: auto` first keeps the rest of the line in place (condensing and shrinking within
/// the page floors); when that overflows, and `fit: none` always, the rest of the line is
/// taken into the replacement so it moves along, and the line must then end inside the
/// annotation's text box (`overflow` otherwise). `reflow` fits like auto here.
fn plan(
    doc: &mut Document,
    fonts: &mut DocFonts,
    view: &View,
    ms: &[Match],
    edit: &Edit,
    policy: FontPolicy,
) -> Result<Vec<Planned>, Refusal> {
    let mut first = edit.clone();
    if first.fit == Fit::Reflow {
        first.fit = Fit::Auto;
    }
    let before = doc.clone();
    let outcome = match first.fit {
        Fit::None if edit.op != EditOp::Delete => Err((FailReason::Overflow, String::new())),
        _ => plan_once(doc, fonts, view, ms, &first, policy),
    };
    let outcome = match outcome {
        Err((reason, message)) if reason == FailReason::Overflow && first.fit != Fit::Shrink => {
            match with_rest_of_line(view, ms) {
                Some(extended) => {
                    *doc = before;
                    *fonts = DocFonts::default();
                    plan_once(doc, fonts, view, &extended, &first, policy)
                }
                None => Err((reason, message)),
            }
        }
        other => other,
    };
    let changes = outcome?;
    if !appearance::text_stays_inside(doc, fonts, view) {
        return Err((
            FailReason::Overflow,
            "the new text does not fit the annotation's box".into(),
        ));
    }
    Ok(changes)
}

/// The matches with the rest of their line taken in (found and replacement both), so the
/// rest moves along with the new text; None when a line holds more than one match.
fn with_rest_of_line(view: &View, ms: &[Match]) -> Option<Vec<Match>> {
    let mut lines: Vec<usize> = ms.iter().map(|m| m.line).collect();
    lines.sort_unstable();
    lines.dedup();
    if lines.len() != ms.len() {
        return None;
    }
    let model = &view.model;
    ms.iter()
        .map(|m| {
            let line = model.lines.get(m.line)?;
            let rest = line.text.get(m.end..)?;
            let mut glyphs = m.glyphs.clone();
            for g in line.byte_glyph.get(m.end..)?.iter().flatten() {
                if !glyphs.contains(g) {
                    glyphs.push(*g);
                }
            }
            glyphs.sort_unstable();
            let mut e = m.clone();
            e.end = line.text.len();
            e.found = format!("{}{rest}", m.found);
            e.replacement = format!("{}{rest}", m.replacement);
            e.glyphs = glyphs;
            Some(e)
        })
        .collect()
}

fn plan_once(
    doc: &mut Document,
    fonts: &mut DocFonts,
    view: &View,
    ms: &[Match],
    edit: &Edit,
    policy: FontPolicy,
) -> Result<Vec<Planned>, Refusal> {
    let plan = plan_page(doc, fonts, &view.model, ms, edit, policy, 0).map_err(|(r, m)| {
        if r == REFLOW_NEEDED {
            (FailReason::Overflow, m)
        } else {
            (r, m)
        }
    })?;
    for (sid, bytes) in &plan.streams {
        streams::write_stream(doc, &view.model, *sid, bytes)
            .map_err(|e| (FailReason::AnnotationText, e))?;
    }
    Ok(plan.changes)
}

/// Renders every touched page before and after, compares outside the annotations' rects,
/// and keeps the edit or rolls it back (`collateral_change`).
fn verify_and_keep(
    run: &mut Run,
    edit: &Edit,
    snapshot: Document,
    done: Vec<Done>,
) -> Result<(), Error> {
    let new_bytes = timed(&mut run.result.timings.save_ms, || {
        save_in_place(&mut run.doc)
    })?;
    let mut by_page: BTreeMap<u32, Vec<&Done>> = BTreeMap::new();
    for d in &done {
        by_page.entry(d.view.cand.page).or_default().push(d);
    }
    let boxes: Vec<(u32, Vec<[f64; 4]>)> = by_page
        .iter()
        .map(|(&page, list)| {
            let page_id = list[0].view.cand.page_id;
            let areas = list
                .iter()
                .map(|d| display_box(&run.doc, page_id, d.view.rect))
                .collect();
            (page, areas)
        })
        .collect();
    let rules = Rules::new(edit, "the annotation");
    let Some(kept) = run.commit_boxes(&rules, new_bytes, boxes.clone(), snapshot)? else {
        return Ok(());
    };
    for ((list, (page, areas)), k) in by_page.values().zip(&boxes).zip(kept) {
        for ((d, area), (before_png, after_png)) in list.iter().zip(areas).zip(k.previews) {
            for c in &d.changes {
                if let Some(w) = c.warning {
                    run.result.warnings.push(w.to_string());
                }
                let m = &d.matches[c.match_index];
                let crops = (before_png.clone(), after_png.clone());
                run.result.changes.push(Change {
                    find: m.found.clone(),
                    replace: if edit.op == EditOp::Delete {
                        String::new()
                    } else {
                        m.replacement.clone()
                    },
                    font_source: c.font_source,
                    font_used: c.font_used.clone(),
                    field: d.view.cand.field.as_ref().map(|f| f.name.clone()),
                    ..change(edit, *page, k.collateral, *area, crops)
                });
            }
        }
    }
    Ok(())
}
