//! Filling AcroForms (SPEC rule 10): each named field gets its value written to /V and an
//! appearance stream we generate ourselves (viewers that ignore NeedAppearances still show
//! it), every value is read back from the output with PDFium, and `flatten` burns the
//! appearances into the pages.
//!
//! A value that did not land is listed in `failed[]` with a reason (`field_not_found`,
//! `field_ambiguous`, `value_not_accepted`, `missing_glyphs`, `no_metric_font`,
//! `readback_mismatch`); the other fields of the same edit still apply.

mod appearance;
mod flatten;
mod font;
pub(crate) mod readback;
pub(crate) mod text;
mod value;

use std::collections::{BTreeMap, HashMap};

use lopdf::{Document, ObjectId};
use pdf_render::raster::Raster;

use crate::model::form::{self as tree, ff, Field, Kind};
use crate::model::text::page_geom_box;
use crate::save::save;
use crate::types::{Change, Edit, EditResult, Failed, FieldInput, FontPolicy, FormSpec};
use crate::types::{FailReason, Refusal};
use crate::verify;
use crate::Error;
use appearance::{parse_da, write_button_appearance, write_text_appearance, Layout, TextStyle};
use font::FormFonts;
use value::Planned;

/// The engine state a form edit works on (owned by the edit run).
pub(crate) struct FormRun<'a> {
    /// The document being edited (decrypted).
    pub doc: &'a mut Document,
    /// Its current saved bytes (what the previous edits produced).
    pub current: &'a mut Vec<u8>,
    /// Renders of the current bytes, by 1-based page.
    pub renders: &'a mut HashMap<u32, Raster>,
    /// Where changes, failures and warnings go.
    pub result: &'a mut EditResult,
    /// Font fallback policy.
    pub policy: FontPolicy,
    /// Whether changes carry their preview crops.
    pub previews: bool,
}

/// A field written by this edit.
struct Written {
    field: Field,
    planned: Planned,
    font_source: &'static str,
    font_used: String,
    /// Lost on read-back or not visible after flattening.
    lost: bool,
    /// The widget showing the chosen state of a button (a radio group's chosen button).
    on_widget: Option<ObjectId>,
}

/// Applies one `form` edit. The document is left unchanged when no field could be written.
pub(crate) fn apply(run: FormRun<'_>, edit: &Edit, spec: &FormSpec) -> Result<(), Error> {
    let snapshot = run.doc.clone();
    let fields = tree::fields(run.doc);
    let mut fonts = FormFonts::default();
    let mut written: Vec<Written> = Vec::new();
    let mut failed: Vec<Failed> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let fail = |failed: &mut Vec<Failed>, name: &str, reason: FailReason, message: String| {
        failed.push(Failed {
            edit_index: edit.index,
            op: edit.op,
            reason,
            message: format!("{name}: {message}"),
            field: Some(name.to_string()),
        });
    };
    for (name, input) in &spec.fields {
        let field = match resolve(&fields, name) {
            Ok(f) => f.clone(),
            Err((reason, m)) => {
                fail(&mut failed, name, reason, m);
                continue;
            }
        };
        match fill(run.doc, &mut fonts, &field, input, run.policy) {
            Ok((planned, source, used, warning)) => {
                warnings.extend(warning.map(String::from));
                written.retain(|w| w.field.id != field.id);
                written.push(Written {
                    field,
                    planned,
                    font_source: source,
                    font_used: used,
                    lost: false,
                    on_widget: None,
                });
            }
            Err((reason, m)) => fail(&mut failed, name, reason, m),
        }
    }
    if written.is_empty() {
        *run.doc = snapshot;
        run.result.failed.extend(failed);
        return Ok(());
    }
    if drop_xfa(run.doc) {
        warnings.push("xfa_removed".into());
    }
    for w in &mut written {
        if let Planned::State(s) = &w.planned {
            let doc = &*run.doc;
            w.on_widget = (s != b"Off")
                .then(|| {
                    w.field
                        .widgets
                        .iter()
                        .find(|id| tree::on_states(doc, **id).contains(s))
                })
                .flatten()
                .copied();
        }
    }
    let filled = save(run.doc)?;
    let got = readback::read(&filled)?;
    for w in &mut written {
        if let Err(m) = readback::check(&w.field, &w.planned, got.get(&w.field.name)) {
            w.lost = true;
            fail(&mut failed, &w.field.name, FailReason::ReadbackMismatch, m);
        }
    }
    let all_fields = tree::fields(run.doc);
    if spec.flatten {
        // Values set earlier without an appearance get one, so flattening shows them; with
        // NeedAppearances the producer's appearances are stale (often empty: LibreOffice)
        // and are all drawn again. A field that still has none stays live (flatten_skipped).
        let stale = tree::acroform(run.doc)
            .and_then(|af| af.get(b"NeedAppearances").ok())
            .and_then(|n| n.as_bool().ok())
            .unwrap_or(false);
        for f in &all_fields {
            let ours = written.iter().any(|w| w.field.id == f.id);
            let drawn = !stale
                && f.widgets
                    .iter()
                    .all(|w| tree::normal_appearance(run.doc, *w).is_some());
            // A checkbox checked earlier whose widgets have no "on" look gets one.
            let unmarked = f.kind == Kind::Checkbox
                && tree::has_value(run.doc, f)
                && f.widgets
                    .iter()
                    .all(|w| tree::on_states(run.doc, *w).is_empty());
            if unmarked && !ours {
                let _ = fill(run.doc, &mut fonts, f, &FieldInput::Bool(true), run.policy);
                continue;
            }
            if ours || drawn || !matches!(f.kind, Kind::Text | Kind::Combo | Kind::List) {
                continue;
            }
            if let Some(v) = tree::current_value(run.doc, f) {
                if let Ok((.., Some(w))) = fill(run.doc, &mut fonts, f, &v, run.policy) {
                    warnings.push(w.into());
                }
            }
        }
    }
    let output = if spec.flatten {
        let skipped = flatten::flatten(run.doc, &all_fields).map_err(Error::Engine)?;
        if !skipped.is_empty() {
            warnings.push("flatten_skipped".into());
        }
        for name in &skipped {
            if !run.result.flatten_skipped.contains(name) {
                run.result.flatten_skipped.push(name.clone());
            }
        }
        let flat = save(run.doc)?;
        let text = readback::all_text(&flat)?;
        for w in written.iter_mut().filter(|w| !w.lost) {
            if skipped.contains(&w.field.name) {
                continue;
            }
            if let Err(m) = readback::visible(&text, &w.field, &w.planned) {
                w.lost = true;
                fail(&mut failed, &w.field.name, FailReason::ReadbackMismatch, m);
            }
        }
        flat
    } else {
        filled
    };
    // The pages and areas that may change: the written widgets, or every widget when the
    // whole form is flattened.
    let pages = tree::widget_pages(&snapshot);
    let shown: Vec<&Field> = if spec.flatten {
        all_fields.iter().collect()
    } else {
        written.iter().map(|w| &w.field).collect()
    };
    let mut areas: BTreeMap<u32, Vec<[f64; 4]>> = BTreeMap::new();
    let mut boxes: HashMap<ObjectId, (u32, [f64; 4])> = HashMap::new();
    for f in &shown {
        for w in &f.widgets {
            if let Some(&(page, page_id)) = pages.get(w) {
                if let Some(b) = page_geom_box(&snapshot, page_id, *w) {
                    areas.entry(page).or_default().push(b);
                    boxes.insert(*w, (page, b));
                }
            }
        }
    }
    let mut renders = BTreeMap::new();
    for (&page, page_areas) in &areas {
        let before = match run.renders.remove(&page) {
            Some(r) => r,
            None => verify::render(run.current, page)?,
        };
        let after = verify::render(&output, page)?;
        let collateral = verify::compare(&before, &after, page_areas)?.changed_pixels_outside;
        renders.insert(page, (before, after, collateral));
    }
    for w in written.iter().filter(|w| !w.lost) {
        // The box shown is the widget that is on (a radio group's chosen button), else the
        // field's first widget.
        let on = w.on_widget.and_then(|id| boxes.get(&id));
        let first = on.or_else(|| w.field.widgets.iter().find_map(|id| boxes.get(id)));
        let (page, bbox) = first.copied().unwrap_or((0, [0.0; 4]));
        let (collateral, previews) = match renders.get(&page) {
            Some((b, a, c)) => (*c, crate::verify::previews(b, a, bbox, run.previews)),
            None => (0, (Vec::new(), Vec::new())),
        };
        run.result.changes.push(Change {
            edit_index: edit.index,
            page,
            op: edit.op,
            find: String::new(),
            replace: String::new(),
            font_source: w.font_source,
            font_used: w.font_used.clone(),
            verified: collateral == 0,
            collateral_pixels: collateral,
            bbox,
            before_png: previews.0,
            after_png: previews.1,
            field: Some(w.field.name.clone()),
            value: Some(reported(&snapshot, &w.field, &w.planned)),
            alignment: None,
        });
    }
    for (page, (_, after, _)) in renders {
        run.renders.insert(page, after);
        run.result.touch_page(page);
    }
    *run.current = output;
    run.result.failed.extend(failed);
    for w in warnings {
        if !run.result.warnings.contains(&w) {
            run.result.warnings.push(w);
        }
    }
    Ok(())
}

/// The field a request name means: the fully qualified name, else a unique partial name.
fn resolve<'a>(fields: &'a [Field], name: &str) -> Result<&'a Field, Refusal> {
    if let Some(f) = fields.iter().find(|f| f.name == name) {
        return Ok(f);
    }
    let partial: Vec<&Field> = fields.iter().filter(|f| f.partial == name).collect();
    match partial.as_slice() {
        [one] => Ok(one),
        [] => Err((
            FailReason::FieldNotFound,
            "no field of the form has this name".into(),
        )),
        many => Err((
            FailReason::FieldAmbiguous,
            format!(
                "several fields end in this name; use the full name: {}",
                many.iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

type Filled = (Planned, &'static str, String, Option<&'static str>);

/// Writes `input` into `field`: value and appearances.
fn fill(
    doc: &mut Document,
    fonts: &mut FormFonts,
    field: &Field,
    input: &FieldInput,
    policy: FontPolicy,
) -> Result<Filled, Refusal> {
    let da = parse_da(field.da.as_deref());
    let mut undo: Option<Undo> = None;
    if matches!(field.kind, Kind::Checkbox | Kind::Radio)
        && field
            .widgets
            .iter()
            .all(|w| tree::on_states(doc, *w).is_empty())
    {
        // Undone when the value is refused.
        let saved = field
            .widgets
            .iter()
            .filter_map(|w| Some((*w, doc.get_object(*w).ok()?.clone())))
            .collect();
        undo = Some((doc.max_id, saved));
        // No widget has an "on" look: each gets one (a checkbox's state is `Yes`; radio
        // button i's is `i`, its export value the group's /Opt entry i when there is one).
        let radio = field.kind == Kind::Radio;
        let drawn = field.widgets.iter().enumerate().try_for_each(|(i, w)| {
            let state = if radio { i.to_string() } else { "Yes".into() };
            write_button_appearance(doc, *w, state.as_bytes(), radio, &da)
        });
        if let Err(m) = drawn {
            restore(doc, undo);
            return Err((FailReason::UnsupportedLayout, m));
        }
    }
    let planned = match value::plan(doc, field, input) {
        Ok(p) => p,
        Err(refusal) => {
            restore(doc, undo);
            return Err(refusal);
        }
    };
    let (shown, layout) = match &planned {
        Planned::State(_) => {
            value::write(doc, field, &planned).map_err(|m| (FailReason::EngineError, m))?;
            return Ok((planned, "none", String::new(), None));
        }
        Planned::Text(t) => {
            let multiline = field.flags & ff::MULTILINE != 0;
            let shown = if field.flags & ff::PASSWORD != 0 {
                "*".repeat(t.chars().count())
            } else {
                t.clone()
            };
            let layout = match field.max_len {
                Some(n) if field.flags & ff::COMB != 0 && !multiline && n > 0 => Layout::Comb(n),
                _ if multiline => Layout::Multiline,
                _ => Layout::Line,
            };
            (shown, layout)
        }
        Planned::Choice { shown, indices, .. } if field.kind == Kind::List => {
            let options: Vec<String> = field.options.iter().map(|(_, d)| d.clone()).collect();
            let top = doc
                .get_dictionary(field.id)
                .ok()
                .and_then(|d| d.get(b"TI").ok())
                .and_then(|t| t.as_i64().ok())
                .and_then(|t| usize::try_from(t).ok())
                .unwrap_or(0);
            let top = if indices.first().is_some_and(|&i| i < top) {
                indices[0]
            } else {
                top
            };
            let all = if options.is_empty() {
                shown.join("\n")
            } else {
                options.join("\n")
            };
            (
                all,
                Layout::List {
                    options,
                    selected: indices.clone(),
                    top,
                },
            )
        }
        Planned::Choice { shown, .. } => (shown.first().cloned().unwrap_or_default(), Layout::Line),
    };
    let glyphs: String = shown.chars().filter(|c| !c.is_control()).collect();
    let picked = fonts.pick(doc, da.font.as_deref(), &glyphs, policy)?;
    value::write(doc, field, &planned).map_err(|m| (FailReason::EngineError, m))?;
    let style = TextStyle {
        picked: &picked,
        da: &da,
        quadding: field.quadding,
    };
    for w in &field.widgets {
        write_text_appearance(doc, fonts, *w, &style, &shown, &layout)
            .map_err(|m| (FailReason::UnsupportedLayout, m))?;
    }
    Ok((planned, picked.source, picked.name.clone(), picked.warning))
}

/// What drawing button states changed: the highest object id before, and the widgets as
/// they were.
type Undo = (u32, Vec<(ObjectId, lopdf::Object)>);

/// Puts the widgets back and drops the objects added since (a refused value leaves no
/// trace).
fn restore(doc: &mut Document, undo: Option<Undo>) {
    if let Some((max_id, saved)) = undo {
        doc.objects.retain(|id, _| id.0 <= max_id);
        doc.max_id = max_id;
        doc.objects.extend(saved);
    }
}

/// An XFA form would be shown instead of the AcroForm by XFA viewers, with the old values:
/// once the AcroForm is filled, the XFA packet is removed.
fn drop_xfa(doc: &mut Document) -> bool {
    let af = doc
        .catalog()
        .ok()
        .and_then(|c| c.get(b"AcroForm").ok())
        .cloned();
    let dict = match af {
        Some(lopdf::Object::Reference(id)) => doc.get_dictionary_mut(id).ok(),
        Some(_) => doc
            .catalog_mut()
            .ok()
            .and_then(|c| c.get_mut(b"AcroForm").ok())
            .and_then(|a| a.as_dict_mut().ok()),
        None => None,
    };
    dict.is_some_and(|d| d.remove(b"XFA").is_some())
}

/// The value as the API reports it.
fn reported(doc: &Document, field: &Field, planned: &Planned) -> FieldInput {
    match planned {
        Planned::Text(t) => FieldInput::Text(t.clone()),
        Planned::State(s) if field.kind == Kind::Checkbox => FieldInput::Bool(s != b"Off"),
        Planned::State(s) if s == b"Off" => FieldInput::Text("Off".into()),
        Planned::State(s) => {
            let state = tree::state_text(s);
            let i = field
                .widgets
                .iter()
                .position(|w| tree::on_states(doc, *w).iter().any(|x| x == s));
            let export = i.and_then(|i| field.options.get(i)).map(|(e, _)| e.clone());
            FieldInput::Text(export.unwrap_or(state))
        }
        Planned::Choice { exports, .. } if field.flags & ff::MULTI_SELECT != 0 => {
            FieldInput::Many(exports.clone())
        }
        Planned::Choice { exports, .. } => {
            FieldInput::Text(exports.first().cloned().unwrap_or_default())
        }
    }
}
