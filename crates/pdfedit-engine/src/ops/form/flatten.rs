//! Flattening: each widget's current appearance is drawn into its page as a Form XObject
//! placed on the widget's /Rect (PDF 32000 12.5.5's appearance mapping), then the widget
//! and its field are removed. A widget that has no appearance to draw keeps its field live.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use lopdf::{Dictionary, Document, Object, ObjectId};

use super::appearance::fmt;
use crate::model::form::{acroform, has_value, normal_appearance, widget_pages, Field, Kind};
use crate::plan::streams::append_page_stream;

/// Annotation flags (PDF 32000 table 165): Hidden (bit 2) and NoView (bit 6). A widget
/// with either is not displayed, so, as in Acrobat, flattening does not burn it in: it
/// goes with its field and its value is left in nothing visible.
const HIDDEN: i64 = 1 << 1;
const NO_VIEW: i64 = 1 << 5;

/// Flattens every field of `fields`; returns the names of the fields left live.
pub(crate) fn flatten(doc: &mut Document, fields: &[Field]) -> Result<Vec<String>, String> {
    let pages = widget_pages(doc);
    let mut draws: BTreeMap<ObjectId, String> = BTreeMap::new(); // page → content to add
    let mut removed: HashSet<ObjectId> = HashSet::new();
    let mut skipped = Vec::new();
    let mut counter = 0usize;
    for field in fields {
        // A signed signature stays a live signature; flattening it would void it.
        if field.kind == Kind::Signature && has_value(doc, field) {
            continue;
        }
        let mut plans = Vec::new();
        let mut ok = true;
        for &w in &field.widgets {
            match placement(doc, w) {
                Placement::Hidden => plans.push((w, None)),
                Placement::Draw(stream_id, matrix) => plans.push((w, Some((stream_id, matrix)))),
                // Without an appearance an empty field shows nothing: it just goes.
                Placement::Missing if !has_value(doc, field) => plans.push((w, None)),
                Placement::Missing => ok = false,
            }
        }
        if !ok {
            skipped.push(field.name.clone());
            continue;
        }
        for (w, draw) in plans {
            if let (Some((stream_id, m)), Some(&(_, page_id))) = (draw, pages.get(&w)) {
                counter += 1;
                let name = format!("PEFlat{counter}");
                prepare_form(doc, stream_id);
                add_xobject(doc, page_id, &name, stream_id)?;
                let cm: Vec<String> = m.iter().map(|v| fmt(*v)).collect();
                let entry = draws.entry(page_id).or_default();
                *entry += &format!("q {} cm /{name} Do Q\n", cm.join(" "));
            }
            removed.insert(w);
        }
        removed.insert(field.id);
    }
    for (page_id, ops) in draws {
        append_page_stream(doc, page_id, ops.into_bytes())?;
    }
    remove_annotations(doc, &removed);
    prune_fields(doc, &removed);
    for id in &removed {
        doc.objects.remove(id);
    }
    Ok(skipped)
}

enum Placement {
    /// Nothing to draw (hidden widget, or an empty appearance state).
    Hidden,
    /// The appearance stream and the matrix placing it on the page.
    Draw(ObjectId, [f64; 6]),
    /// No appearance: the field cannot be flattened.
    Missing,
}

fn placement(doc: &Document, widget: ObjectId) -> Placement {
    let Ok(w) = doc.get_dictionary(widget) else {
        return Placement::Missing;
    };
    let flags = w
        .get(b"F")
        .ok()
        .and_then(|f| doc.dereference(f).ok())
        .and_then(|(_, f)| f.as_i64().ok())
        .unwrap_or(0);
    if flags & (HIDDEN | NO_VIEW) != 0 {
        return Placement::Hidden;
    }
    let stream_ref = match w
        .get(b"AP")
        .ok()
        .and_then(|ap| doc.dereference(ap).ok())
        .and_then(|(_, ap)| ap.as_dict().ok())
        .and_then(|ap| ap.get(b"N").ok())
    {
        Some(Object::Reference(id)) => match doc.get_object(*id) {
            Ok(Object::Stream(_)) => Some(*id),
            Ok(Object::Dictionary(states)) => state_stream(states, w),
            _ => None,
        },
        Some(Object::Dictionary(states)) => state_stream(states, w),
        _ => None,
    };
    let Some(stream_id) = stream_ref else {
        // A state dictionary whose current state (usually /Off) has no stream draws nothing.
        return if normal_appearance(doc, widget).is_some_and(|n| n.as_dict().is_ok()) {
            Placement::Hidden
        } else {
            Placement::Missing
        };
    };
    let Ok(stream) = doc.get_object(stream_id).and_then(Object::as_stream) else {
        return Placement::Missing;
    };
    let rect = numbers(doc, w.get(b"Rect").ok());
    let bbox = numbers(doc, stream.dict.get(b"BBox").ok());
    let (Some(r), Some(b)) = (rect, bbox) else {
        return Placement::Missing;
    };
    let m = numbers(doc, stream.dict.get(b"Matrix").ok())
        .and_then(|m| <[f64; 6]>::try_from(m).ok())
        .unwrap_or([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
    let (Ok(r), Ok(b)) = (<[f64; 4]>::try_from(r), <[f64; 4]>::try_from(b)) else {
        return Placement::Missing;
    };
    // The transformed BBox's bounding box is mapped onto the Rect (12.5.5, algorithm 8.1).
    let corners = [(b[0], b[1]), (b[2], b[1]), (b[0], b[3]), (b[2], b[3])]
        .map(|(x, y)| (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]));
    let xs = corners.map(|c| c.0);
    let ys = corners.map(|c| c.1);
    let (bx0, bx1) = (min(&xs), max(&xs));
    let (by0, by1) = (min(&ys), max(&ys));
    let (rx0, rx1) = (r[0].min(r[2]), r[0].max(r[2]));
    let (ry0, ry1) = (r[1].min(r[3]), r[1].max(r[3]));
    if bx1 - bx0 <= 0.0 || by1 - by0 <= 0.0 {
        return Placement::Hidden;
    }
    let sx = (rx1 - rx0) / (bx1 - bx0);
    let sy = (ry1 - ry0) / (by1 - by0);
    // The form's own /Matrix is applied by Do; the cm maps its result onto the Rect.
    Placement::Draw(
        stream_id,
        [sx, 0.0, 0.0, sy, rx0 - sx * bx0, ry0 - sy * by0],
    )
}

fn state_stream(states: &Dictionary, widget: &Dictionary) -> Option<ObjectId> {
    let state = widget.get(b"AS").ok()?.as_name().ok()?;
    states.get(state).ok()?.as_reference().ok()
}

fn numbers(doc: &Document, o: Option<&Object>) -> Option<Vec<f64>> {
    let a = doc.dereference(o?).ok()?.1.as_array().ok()?;
    a.iter().map(|v| pdf_fonts::obj::num_of(doc, v)).collect()
}

fn min(v: &[f64; 4]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(v: &[f64; 4]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// An appearance stream drawn with Do must be a Form XObject.
fn prepare_form(doc: &mut Document, id: ObjectId) {
    if let Ok(s) = doc.get_object_mut(id).and_then(Object::as_stream_mut) {
        s.dict.set("Type", Object::Name(b"XObject".to_vec()));
        s.dict.set("Subtype", Object::Name(b"Form".to_vec()));
    }
}

fn add_xobject(
    doc: &mut Document,
    page_id: ObjectId,
    name: &str,
    id: ObjectId,
) -> Result<(), String> {
    let x = crate::plan::streams::page_subdict_mut(doc, page_id, b"XObject")?;
    x.set(name.as_bytes().to_vec(), Object::Reference(id));
    Ok(())
}

/// Removes `removed` from every page's /Annots.
fn remove_annotations(doc: &mut Document, removed: &HashSet<ObjectId>) {
    let pages: Vec<ObjectId> = doc.get_pages().values().copied().collect();
    for page_id in pages {
        let annots = doc
            .get_dictionary(page_id)
            .ok()
            .and_then(|p| p.get(b"Annots").ok())
            .cloned();
        let (holder, list) = match annots {
            Some(Object::Reference(id)) => match doc.get_object(id) {
                Ok(Object::Array(a)) => (Some(id), a.clone()),
                _ => continue,
            },
            Some(Object::Array(a)) => (None, a),
            _ => continue,
        };
        let kept: Vec<Object> = list
            .into_iter()
            .filter(|a| a.as_reference().map_or(true, |id| !removed.contains(&id)))
            .collect();
        match holder {
            Some(id) => {
                doc.objects.insert(id, Object::Array(kept));
            }
            None => {
                if let Ok(p) = doc.get_dictionary_mut(page_id) {
                    if kept.is_empty() {
                        p.remove(b"Annots");
                    } else {
                        p.set("Annots", Object::Array(kept));
                    }
                }
            }
        }
    }
}

/// Drops removed fields from the field tree (and parents left without kids). With no
/// field left, the AcroForm goes too (its XFA and NeedAppearances mean nothing then).
fn prune_fields(doc: &mut Document, removed: &HashSet<ObjectId>) {
    let Some(af) = acroform(doc) else { return };
    let roots: Vec<Object> = af
        .get(b"Fields")
        .ok()
        .and_then(|f| doc.dereference(f).ok())
        .and_then(|(_, f)| f.as_array().ok().cloned())
        .unwrap_or_default();
    let mut seen = BTreeSet::new();
    let kept: Vec<Object> = roots
        .into_iter()
        .filter(|o| {
            o.as_reference()
                .is_ok_and(|id| keep(doc, id, removed, &mut seen, 0))
        })
        .collect();
    if kept.is_empty() {
        if let Ok(c) = doc.catalog_mut() {
            c.remove(b"AcroForm");
        }
        return;
    }
    let af_ref = doc
        .catalog()
        .ok()
        .and_then(|c| c.get(b"AcroForm").ok())
        .cloned();
    let af = match af_ref {
        Some(Object::Reference(id)) => doc.get_dictionary_mut(id).ok(),
        _ => doc
            .catalog_mut()
            .ok()
            .and_then(|c| c.get_mut(b"AcroForm").ok())
            .and_then(|a| a.as_dict_mut().ok()),
    };
    if let Some(af) = af {
        af.set("Fields", Object::Array(kept));
    }
}

/// Whether node `id` stays; prunes its /Kids of removed fields on the way.
fn keep(
    doc: &mut Document,
    id: ObjectId,
    removed: &HashSet<ObjectId>,
    seen: &mut BTreeSet<ObjectId>,
    depth: usize,
) -> bool {
    if removed.contains(&id) {
        return false;
    }
    if depth > 32 || !seen.insert(id) {
        return true;
    }
    let kids: Option<Vec<Object>> = doc
        .get_dictionary(id)
        .ok()
        .and_then(|d| d.get(b"Kids").ok())
        .and_then(|k| k.as_array().ok().cloned());
    let Some(kids) = kids else { return true };
    let had = !kids.is_empty();
    let kept: Vec<Object> = kids
        .into_iter()
        .filter(|k| {
            k.as_reference()
                .map_or(true, |kid| keep(doc, kid, removed, seen, depth + 1))
        })
        .collect();
    let empty = kept.is_empty();
    if let Ok(d) = doc.get_dictionary_mut(id) {
        d.set("Kids", Object::Array(kept));
    }
    !(had && empty)
}
