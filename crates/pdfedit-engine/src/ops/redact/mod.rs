//! Redaction (SPEC rule 8): the text is removed for real, never only covered.
//!
//! Per edit, on each page with a match: the glyphs leave the content stream (kerns keep
//! every other glyph in place), a black box is painted over their area, and the pixels
//! of any image under the box are zeroed in a copy of the image. The page is verified by
//! rendering like every edit: outside the redacted areas (the boxes, the removed glyphs'
//! ink as PDFium drew it, the masked image pixels) nothing may move, or the edit is rolled
//! back into `failed[]`. A part that cannot be done (an image no decoder reads, an inline
//! image inside a form) refuses the redaction on that page: it fails closed.
//!
//! After all edits ([`finish`]): the string is cut from the document's other strings
//! (annotations, form values, metadata, outlines, structure tree, …), objects no longer
//! referenced are dropped, the document is written as a full rewrite, and the saved bytes
//! are searched again; every place the string still occurs is listed in `residual[]`.

mod appearances;
mod content;
mod images;
mod inline;
mod noise;
#[cfg(test)]
mod reading_tests;
mod residual;
mod strings;
mod widths;

use crate::types::FailReason;
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::commit::{change, commit, Checks, PageCheck, Pair, Rules, Verdict};
use crate::find::{line_matches, Match, Matcher};
use crate::model::reading::Needs;
use crate::plan::streams;
use crate::run::{timed, Run};
use crate::save::save_in_place;
use crate::types::{Change, Edit, EditOp, EditRequest, Removal, Unmatched};
use crate::Error;

/// Why a part of a redaction cannot be done: a stable reason and a message.
pub(crate) use crate::types::Refusal;

/// One page's planned redaction, before verification.
struct PagePlan {
    page: u32,
    matches: Vec<Match>,
    /// (index into `matches`, box in user space).
    boxes: Vec<(usize, [f64; 4])>,
    images: Vec<images::Masked>,
    geom: crate::model::text::PageGeom,
    /// Per match: how far glyph ink may reach beyond the boxes (user space).
    ink_margins: Vec<f64>,
    /// Fonts whose text map lost the matched text of glyphs that stay drawn.
    text_maps: Vec<String>,
}

fn pad(b: [f64; 4], m: f64) -> [f64; 4] {
    [b[0] - m, b[1] - m, b[2] + m, b[3] + m]
}

/// Applies one redact edit: its matches on every page, verified; or `unmatched[]` /
/// `failed[]` (`scanned_text` when the only place the text can be is a page image).
pub(crate) fn apply(
    run: &mut Run,
    edit: &Edit,
    matcher: &Matcher,
    mut matches: Vec<Match>,
    spans: Option<&[crate::read::PageText]>,
) -> Result<(), Error> {
    let pages = run.page_ids();
    matches.extend(wrapped(run, edit, matcher)?);
    if matches.is_empty() {
        if drop_drawn(run, edit, matcher, spans)? {
            return Ok(());
        }
        return not_found(run, edit);
    }
    let snapshot = run.doc.clone();
    let mut by_page: BTreeMap<u32, Vec<Match>> = BTreeMap::new();
    for m in matches {
        by_page.entry(m.page).or_default().push(m);
    }
    let mut plans = Vec::new();
    for (page, ms) in by_page {
        match plan_page(run, page, pages[&page], ms)? {
            Ok(plan) => plans.push(plan),
            Err((reason, message)) => {
                run.rollback(snapshot);
                run.fail(edit, reason, format!("page {page}: {message}"));
                return Ok(());
            }
        }
    }
    if plans.is_empty() {
        return Ok(());
    }
    verify_and_commit(run, edit, snapshot, plans)
}

/// A redaction found nowhere in the page text but drawn by annotation appearances: the
/// text is cut from the strings an appearance draws it by (the rest of the appearance
/// kept); an annotation whose appearance draws it otherwise (glyph ids) or still shows it
/// after the cut gets an empty appearance (a viewer would otherwise draw one anew from
/// the rest of its /Contents, text that was not shown), and a widget loses its appearance
/// (the viewer draws the field again from its values);
/// each is listed in `removed[]`. The pages are verified like any redaction: nothing
/// outside the annotations' rects may change, and each annotation is a change (its box,
/// its preview); collateral rolls the edit back. [`finish`] then cuts the string from the
/// annotations' /Contents and rich text. Returns whether there were any.
fn drop_drawn(
    run: &mut Run,
    edit: &Edit,
    matcher: &Matcher,
    spans: Option<&[crate::read::PageText]>,
) -> Result<bool, Error> {
    let shown = appearances::drawn_text(run, edit, matcher, spans);
    if shown.is_empty() {
        return Ok(false);
    }
    let snapshot = run.doc.clone();
    let find = |t: &str| -> Vec<(usize, usize)> {
        line_matches(matcher, t, "")
            .into_iter()
            .map(|(s, e, _)| (s, e))
            .collect()
    };
    let mut by_page: BTreeMap<u32, Vec<(&appearances::Shown, String)>> = BTreeMap::new();
    for a in &shown {
        let (id, cut) = (
            a.annot,
            if a.literal {
                appearances::cut_appearance(&mut run.doc, a.annot, &find)
            } else {
                0
            },
        );
        let location = if cut > 0 && !appearances::appearance_shows(&run.doc, id, &find) {
            format!(
                "object {} {} /AP: cut from {cut} string(s) the appearance draws",
                id.0, id.1
            )
        } else if appearances::blank_appearance(&mut run.doc, id) {
            format!(
                "object {} {} /AP (appearance emptied: it draws \"{}\")",
                id.0, id.1, edit.find
            )
        } else {
            appearances::drop_appearances(&mut run.doc, &[id]);
            format!(
                "object {} {} /AP (appearance removed: it draws \"{}\")",
                id.0, id.1, edit.find
            )
        };
        by_page.entry(a.page).or_default().push((a, location));
    }
    let new_bytes = timed(&mut run.result.timings.save_ms, || {
        save_in_place(&mut run.doc)
    })?;
    let boxes = by_page
        .iter()
        .map(|(&page, list)| (page, list.iter().map(|a| a.0.rect).collect()))
        .collect();
    let rules = Rules::new(edit, "the annotation");
    let Some(kept) = run.commit_boxes(&rules, new_bytes, boxes, snapshot)? else {
        return Ok(true);
    };
    for ((page, list), k) in by_page.into_iter().zip(kept) {
        for ((a, location), crops) in list.into_iter().zip(k.previews) {
            run.redacted_appearances.push(a.annot);
            run.result.changes.push(Change {
                find: edit.find.clone(),
                ..change(edit, page, k.collateral, a.rect, crops)
            });
            run.result.removed.push(Removal {
                edit_index: edit.index,
                kind: "annotation",
                page: Some(page),
                location,
            });
        }
    }
    Ok(true)
}

/// A redaction that found nothing: `unmatched[]`, or `scanned_text` when pages in its
/// scope are scanned images without a text layer.
fn not_found(run: &mut Run, edit: &Edit) -> Result<(), Error> {
    let scanned = scanned_pages(run, edit)?;
    if scanned.is_empty() {
        run.result.unmatched.push(Unmatched {
            edit_index: edit.index,
            op: edit.op,
            find: edit.find.clone(),
        });
    } else {
        run.fail(
            edit,
            FailReason::ScannedText,
            format!(
                "the text was not found in any text layer, and page(s) {} are scanned \
                 images without one: text inside an image cannot be redacted as text",
                join(&scanned)
            ),
        );
    }
    Ok(())
}

/// Plans and writes one page's redaction: the glyphs leave their streams, the images
/// under the boxes are masked, the black boxes drawn, and the font text maps that held
/// the text cut.
fn plan_page(
    run: &mut Run,
    page: u32,
    page_id: lopdf::ObjectId,
    ms: Vec<Match>,
) -> Result<Result<PagePlan, Refusal>, Error> {
    run.model(page, page_id)?;
    let model = &run.models[&page];
    // Glyphs that stay drawn but lose the matched text from their font's text map;
    // matches made only of such glyphs change no drawing.
    let cuts: Vec<(usize, String)> = ms
        .iter()
        .flat_map(|m| m.unicode_cuts.iter().cloned())
        .collect();
    let ms: Vec<Match> = ms.into_iter().filter(|m| !m.glyphs.is_empty()).collect();
    // A word of an invisible OCR layer over a scan is redacted like any other: its
    // glyphs go, and the image pixels under its box (the word as seen) are zeroed.
    let placements = crate::image::placements::placements(&run.doc, model);
    let glyphs = &model.glyphs.glyphs;
    let vertical: HashSet<usize> = ms
        .iter()
        .flat_map(|m| m.glyphs.iter().copied())
        .filter(|&g| {
            run.fonts
                .get(&run.doc, &glyphs[g].font)
                .is_some_and(|f| f.font.is_vertical())
        })
        .collect();
    let dropped: HashMap<usize, widths::Dropped> = ms
        .iter()
        .flat_map(|m| m.glyphs.iter().copied())
        .map(|g| (g, widths::dropped(&run.doc, &mut run.fonts, &glyphs[g])))
        .collect();
    // Only matches with glyphs to remove change the drawing.
    let drawn = if ms.is_empty() {
        Ok((Vec::new(), Vec::new()))
    } else {
        content::plan(model, &ms, &|g| vertical.contains(&g), &|g| {
            dropped.get(&g).copied().unwrap_or_default()
        })
        .map_err(|e| (FailReason::UnsupportedLayout, e))
        .and_then(|plan| {
            for (sid, bytes) in &plan.streams {
                streams::write_stream(&mut run.doc, model, *sid, bytes)
                    .map_err(|e| (FailReason::UnsupportedLayout, e))?;
            }
            let boxes: Vec<[f64; 4]> = plan.boxes.iter().map(|b| b.1).collect();
            let masked =
                images::mask_under(&mut run.doc, model, &placements, &boxes, &plan.streams)?;
            content::draw_boxes(&mut run.doc, page_id, &boxes)
                .map_err(|e| (FailReason::EngineError, e))?;
            Ok((plan.boxes, masked))
        })
    };
    let outcome = drawn.and_then(|(boxes, masked)| {
        let maps = crate::find::clusters::rewrite_text_maps(&mut run.doc, model, &cuts)
            .map_err(|e| (FailReason::UnsupportedLayout, e))?;
        Ok((boxes, masked, maps))
    });
    Ok(outcome.map(|(boxes, images, text_maps)| PagePlan {
        text_maps,
        ink_margins: ms
            .iter()
            .map(|m| {
                // A third of the em: descenders of fonts whose descriptor claims no
                // descent reach that far below the box.
                let t = glyphs[m.glyphs[0]].trm;
                0.3 * (t[2] * t[2] + t[3] * t[3]).sqrt()
            })
            .collect(),
        page,
        matches: ms,
        boxes,
        images,
        geom: model.geom,
    }))
}

/// A redaction's noise rounds (see [`noise`]): glyphs PDFium now places an `f32` rounding
/// away, one placement step over; then Type 3 bitmap glyphs it now snaps a row higher or
/// lower (`type3`: the boxes of the Type 3 glyphs kept on each page).
struct Noise {
    type3: HashMap<u32, Vec<[f64; 4]>>,
}

impl Checks for Noise {
    fn settle(&mut self, round: usize, pair: &Pair<'_>) -> Result<Vec<[f64; 4]>, Error> {
        let page = pair.page.page;
        Ok(match round {
            0 => crate::verify::settle::settled_areas(
                pair.policy,
                pair.before_pdf,
                pair.after_pdf,
                page,
                pair.before,
                pair.after,
            )?,
            1 => self.type3.get(&page).map_or_else(Vec::new, |boxes| {
                noise::snapped_bitmap_glyphs(boxes, pair.before, pair.after)
            }),
            _ => Vec::new(),
        })
    }
}

/// Renders the redacted pages, compares them outside the redacted areas, and keeps the
/// edit or rolls it back.
fn verify_and_commit(
    run: &mut Run,
    edit: &Edit,
    snapshot: lopdf::Document,
    plans: Vec<PagePlan>,
) -> Result<(), Error> {
    let new_bytes = timed(&mut run.result.timings.save_ms, || {
        save_in_place(&mut run.doc)
    })?;
    let mut pages = Vec::new();
    let mut type3 = HashMap::new();
    for plan in &plans {
        // The removed glyphs' ink may reach past their advance boxes (overhangs,
        // accents, descenders): the redacted area reaches a bit further (`ink_margins`).
        let mut areas: Vec<[f64; 4]> = plan
            .boxes
            .iter()
            .map(|(mi, b)| plan.geom.display_box(pad(*b, plan.ink_margins[*mi])))
            .collect();
        for img in &plan.images {
            areas.extend(img.areas_user.iter().map(|a| plan.geom.display_box(*a)));
        }
        areas.extend(removed_ink(&run.current, plan, &run.models)?);
        pages.push(PageCheck {
            page: plan.page,
            areas,
            moved: Vec::new(),
            shown: plan
                .boxes
                .iter()
                .map(|(_, b)| plan.geom.display_box(*b))
                .collect(),
        });
        type3.insert(plan.page, type3_boxes(run, plan));
    }
    let rules = Rules {
        locate: true,
        ..Rules::new(edit, "the redacted areas")
    };
    let verdict = commit(
        &mut run.verifier(),
        &rules,
        new_bytes,
        &pages,
        &mut Noise { type3 },
    )?;
    let Verdict::Kept(kept) = verdict else {
        run.rollback(snapshot);
        return Ok(());
    };
    let mut removals = Vec::new();
    for ((plan, page), k) in plans.iter().zip(&pages).zip(kept) {
        run.models.remove(&plan.page);
        for (((mi, _), area), crops) in plan.boxes.iter().zip(&page.shown).zip(k.previews) {
            run.result.changes.push(Change {
                find: plan.matches[*mi].found.clone(),
                ..change(edit, plan.page, k.collateral, *area, crops)
            });
        }
        for map in &plan.text_maps {
            removals.push(Removal {
                edit_index: edit.index,
                kind: "font_text_map",
                page: Some(plan.page),
                location: map.clone(),
            });
        }
        for img in &plan.images {
            removals.push(Removal {
                edit_index: edit.index,
                kind: "image",
                page: Some(plan.page),
                location: img.location.clone(),
            });
        }
    }
    if removals.iter().any(|r| r.kind == "font_text_map") {
        // Cached fonts hold the text maps as they were.
        run.fonts = crate::model::fonts::DocFonts::default();
    }
    run.result.removed.extend(removals);
    Ok(())
}

/// Boxes (top-left points) of the glyphs of Type 3 fonts on the plan's page that the
/// redaction keeps.
fn type3_boxes(run: &mut Run, plan: &PagePlan) -> Vec<[f64; 4]> {
    let Some(model) = run.models.get(&plan.page) else {
        return Vec::new();
    };
    let removed: HashSet<usize> = plan
        .matches
        .iter()
        .flat_map(|m| m.glyphs.iter().copied())
        .collect();
    let (fonts, doc) = (&mut run.fonts, &run.doc);
    model
        .glyphs
        .glyphs
        .iter()
        .enumerate()
        .filter(|(i, g)| {
            !removed.contains(i)
                && fonts
                    .get(doc, &g.font)
                    .is_some_and(|f| f.font.kind() == pdf_fonts::FontKind::Type3)
        })
        .map(|(_, g)| plan.geom.display_box(g.bbox))
        .collect()
}

/// The ink of the removed glyphs as PDFium drew it before (tight glyph boxes, top-left
/// points): a descender or accent may reach past the font's ascent/descent box, and the
/// ink that vanished with its glyph is not collateral. Each removed glyph is paired with
/// the PDFium character drawn from the same origin.
fn removed_ink(
    before: &[u8],
    plan: &PagePlan,
    models: &std::collections::HashMap<u32, crate::model::PageModel>,
) -> Result<Vec<[f64; 4]>, Error> {
    let Some(model) = models.get(&plan.page) else {
        return Ok(Vec::new());
    };
    let doc = pdf_render::Document::open(before, None)?;
    let chars = doc.page_chars(plan.page - 1)?;
    let mut out = Vec::new();
    for (mi, _) in &plan.boxes {
        for &g in &plan.matches[*mi].glyphs {
            let gl = &model.glyphs.glyphs[g];
            let o = plan
                .geom
                .display_box([gl.trm[4], gl.trm[5], gl.trm[4], gl.trm[5]]);
            let tol = (0.1 * gl.font_size.abs()).clamp(0.3, 2.0);
            let found = chars.iter().find(|c| {
                !c.generated
                    && (f64::from(c.origin.0) - o[0]).abs() < tol
                    && (f64::from(c.origin.1) - o[1]).abs() < tol
            });
            if let Some(c) = found {
                let b = c.bbox;
                if b.x1 > b.x0 && b.y1 > b.y0 {
                    out.push([
                        f64::from(b.x0),
                        f64::from(b.y0),
                        f64::from(b.x1),
                        f64::from(b.y1),
                    ]);
                }
            }
        }
    }
    Ok(out)
}

/// Whether a redaction whose line search found nothing still finds its text, as
/// [`apply`] and [`finish`] would: broken over lines, in the document's other strings
/// (annotations, metadata), or drawn by an annotation's appearance. Changes nothing.
pub(crate) fn locate(
    run: &mut Run,
    edit: &Edit,
    matcher: &Matcher,
    spans: Option<&[crate::read::PageText]>,
) -> Result<bool, Error> {
    if !wrapped(run, edit, matcher)?.is_empty() {
        return Ok(true);
    }
    let find = |t: &str| -> Vec<(usize, usize)> {
        line_matches(matcher, t, "")
            .into_iter()
            .map(|(s, e, _)| (s, e))
            .collect()
    };
    let mut copy = run.doc.clone();
    Ok(!strings::scan(&mut copy, &find, false, &[]).is_empty()
        || !appearances::drawn_text(run, edit, matcher, spans).is_empty())
}

/// Occurrences broken over lines, on the pages in scope. Scopes that pick single
/// occurrences (nth, anchor, spans) keep to what the line search found.
///
/// A page whose reading waits and lacks a character of the phrase is passed over, as
/// the line search passes it ([`Needs`]): its lines cannot hold the phrase, across a
/// break or not, and using its model would lay the reading onto it for nothing.
fn wrapped(run: &mut Run, edit: &Edit, matcher: &Matcher) -> Result<Vec<Match>, Error> {
    let scope = &edit.scope;
    let Some(re) = crate::find::wrap::pattern(matcher) else {
        return Ok(Vec::new());
    };
    if scope.occurrence.is_some() || scope.anchor.is_some() || scope.span_ids.is_some() {
        return Ok(Vec::new());
    }
    let needs = Needs::of(matcher, false);
    let ids = run.page_ids();
    let mut out = Vec::new();
    for n in scope_pages(run, edit) {
        let Some(&page_id) = ids.get(&n) else {
            continue;
        };
        let waits_in_vain = run
            .read_pending
            .get(&n)
            .is_some_and(|(_, chars)| !needs.met_by(chars));
        if waits_in_vain {
            continue;
        }
        let model = run.model(n, page_id)?;
        let mut found = crate::find::wrap::cross_line(model, &re);
        if let Some(r) = &scope.region {
            found.retain(|m| crate::find::inside(m.bbox, r.bbox));
        }
        out.extend(found);
    }
    Ok(out)
}

fn scope_pages(run: &Run, edit: &Edit) -> Vec<u32> {
    match (&edit.scope.pages, &edit.scope.region) {
        (_, Some(r)) => vec![r.page],
        (Some(p), None) => p.clone(),
        (None, None) => run.page_ids().keys().copied().collect(),
    }
}

/// Pages in the edit's scope that have no text at all but draw an image: scanned pages.
///
/// Reading only gives text to glyphs (never takes it away), so a page whose model already
/// has text is not scanned whatever its waiting reading holds; reading is laid onto a
/// page (by using its model) only when its own glyphs have none.
fn scanned_pages(run: &mut Run, edit: &Edit) -> Result<Vec<u32>, Error> {
    let pages = run.page_ids();
    let no_text = |model: &crate::model::PageModel| {
        model
            .glyphs
            .glyphs
            .iter()
            .all(|g| g.unicode.as_deref().is_none_or(|u| u.trim().is_empty()))
    };
    let mut out = Vec::new();
    for n in scope_pages(run, edit) {
        let Some(&page_id) = pages.get(&n) else {
            continue;
        };
        let has_text =
            run.read_pending.contains_key(&n) && run.models.get(&n).is_some_and(|m| !no_text(m));
        if has_text {
            continue;
        }
        run.model(n, page_id)?;
        let model = &run.models[&n];
        if no_text(model) && !crate::image::placements::placements(&run.doc, model).is_empty() {
            out.push(n);
        }
    }
    Ok(out)
}

fn join(pages: &[u32]) -> String {
    pages
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// After every edit: cut the redacted strings from the rest of the document, drop
/// unreferenced objects (old copies of images and forms), write the full rewrite and
/// search it again.
pub(crate) fn finish(
    run: &mut Run,
    request: &EditRequest,
    matchers: &[Option<Matcher>],
) -> Result<(), Error> {
    let redacts: Vec<(&Edit, &Matcher)> = request
        .edits
        .iter()
        .zip(matchers)
        .filter(|(e, _)| e.op == EditOp::Redact)
        .filter_map(|(e, m)| m.as_ref().map(|m| (e, m)))
        .collect();
    for (edit, matcher) in &redacts {
        let find = |t: &str| -> Vec<(usize, usize)> {
            line_matches(matcher, t, "")
                .into_iter()
                .map(|(s, e, _)| (s, e))
                .collect()
        };
        let hits = strings::scan(&mut run.doc, &find, true, &run.redacted_appearances);
        if !hits.is_empty() {
            // Found and removed outside the page text (an annotation, metadata): the
            // edit did something, so it is not "not found".
            run.result.unmatched.retain(|u| u.edit_index != edit.index);
        }
        for hit in hits {
            run.result.removed.push(Removal {
                edit_index: edit.index,
                kind: hit.kind,
                page: hit.page,
                location: format!("{}: \"{}\"", hit.location, hit.text),
            });
        }
    }
    if run.result.changes.iter().all(|c| c.op != EditOp::Redact) && run.result.removed.is_empty() {
        return Ok(());
    }
    run.doc.prune_objects();
    run.current = save_in_place(&mut run.doc)?;
    // Right-to-left phrases are searched in visual order as well (see Run::find).
    let visual: Vec<(&Edit, Matcher)> = redacts
        .iter()
        .filter_map(|(e, m)| crate::find::visual_order(m).map(|v| (*e, v)))
        .collect();
    let mut searched = redacts.clone();
    searched.extend(visual.iter().map(|(e, m)| (*e, m)));
    run.result.residual = residual::search(&run.current, &searched)?;
    Ok(())
}
