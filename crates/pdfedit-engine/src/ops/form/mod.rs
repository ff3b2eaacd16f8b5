//! Filling AcroForms (SPEC rule 10): each named field gets its value written to /V and an
//! appearance stream we generate ourselves (viewers that ignore NeedAppearances still show
//! it), every value is read back from the output with PDFium, and `flatten` burns the
//! appearances into the pages.
//!
//! A value that did not land is listed in `failed[]` with a reason (`field_not_found`,
//! `field_ambiguous`, `value_not_accepted`, `missing_glyphs`, `no_metric_font`,
//! `readback_mismatch`); the other fields of the same edit still apply.

pub(crate) mod appearance;
mod flatten;
pub(crate) mod font;
pub(crate) mod readback;
pub(crate) mod text;
mod value;

use std::collections::{BTreeMap, HashMap};

use lopdf::{Document, ObjectId};

use crate::commit::{change, commit, PageCheck, Plain, Rules, Verdict, Verifier};
use crate::model::form::{self as tree, ff, Field, Kind};
use crate::model::text::page_geom_box;
use crate::save::save;
use crate::types::{Change, Edit, EditResult, Failed, FieldInput, FontPolicy, FormSpec};
use crate::types::{FailReason, Refusal};
use crate::Error;
use appearance::{parse_da, write_button_appearance, write_text_appearance, Layout, TextStyle};
use font::FormFonts;
use value::Planned;

/// The engine state a form edit works on (owned by the edit run).
pub(crate) struct FormRun<'a> {
    /// The document being edited (decrypted).
    pub doc: &'a mut Document,
    /// Current bytes, renders and result (changes, failures, warnings), as the commit
    /// step works on them.
    pub verifier: Verifier<'a>,
    /// Font fallback policy.
    pub policy: FontPolicy,
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

/// A kept page's preview crops (before, after), taken in the order of its shown boxes.
type Crops = std::vec::IntoIter<(Vec<u8>, Vec<u8>)>;

/// What one form edit has done so far, carried through its phases.
struct FormEdit<'e> {
    edit: &'e Edit,
    fonts: FormFonts,
    written: Vec<Written>,
    failed: Vec<Failed>,
    warnings: Vec<String>,
}

/// Applies one `form` edit. The document is left unchanged when no field could be written.
///
/// The phases: write each named field (value and appearances), find the widget each
/// button shows its state on, read the values back from the saved document, and with
/// `flatten` draw what still needs an appearance and burn the form into the pages; then
/// the commit step verifies the pages outside the fields and the changes are reported.
pub(crate) fn apply(mut run: FormRun<'_>, edit: &Edit, spec: &FormSpec) -> Result<(), Error> {
    let snapshot = run.doc.clone();
    let mut form = FormEdit {
        edit,
        fonts: FormFonts::default(),
        written: Vec::new(),
        failed: Vec::new(),
        warnings: Vec::new(),
    };
    form.write_fields(run.doc, spec, run.policy);
    if form.written.is_empty() {
        *run.doc = snapshot;
        run.verifier.result.failed.extend(form.failed);
        return Ok(());
    }
    if drop_xfa(run.doc) {
        form.warnings.push("xfa_removed".into());
    }
    form.find_on_widgets(run.doc);
    let filled = save(run.doc)?;
    form.read_back(&filled)?;
    let all_fields = tree::fields(run.doc);
    let output = if spec.flatten {
        form.draw_missing_appearances(run.doc, &all_fields, run.policy);
        form.flatten(run.doc, &all_fields, run.verifier.result)?
    } else {
        filled
    };
    form.verify_and_report(&mut run, &snapshot, &all_fields, spec.flatten, output)
}

impl FormEdit<'_> {
    /// A field's failure: the message names the field.
    fn fail(&mut self, name: &str, reason: crate::types::FailReason, message: String) {
        self.failed.push(Failed {
            edit_index: self.edit.index,
            op: self.edit.op,
            reason,
            message: format!("{name}: {message}"),
            field: Some(name.to_string()),
        });
    }

    /// Writes every field the spec names (a later entry for the same field wins); a field
    /// that cannot be resolved or written fails alone.
    fn write_fields(&mut self, doc: &mut Document, spec: &FormSpec, policy: FontPolicy) {
        let fields = tree::fields(doc);
        for (name, input) in &spec.fields {
            let field = match resolve(&fields, name) {
                Ok(f) => f.clone(),
                Err((reason, m)) => {
                    self.fail(name, reason, m);
                    continue;
                }
            };
            match fill(doc, &mut self.fonts, &field, input, policy) {
                Ok((planned, source, used, warning)) => {
                    self.warnings.extend(warning.map(String::from));
                    self.written.retain(|w| w.field.id != field.id);
                    self.written.push(Written {
                        field,
                        planned,
                        font_source: source,
                        font_used: used,
                        lost: false,
                        on_widget: None,
                    });
                }
                Err((reason, m)) => self.fail(name, reason, m),
            }
        }
    }

    /// The widget each written button shows its chosen state on.
    fn find_on_widgets(&mut self, doc: &Document) {
        for w in &mut self.written {
            if let Planned::State(s) = &w.planned {
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
    }

    /// Reads every written value back from the saved document; one that did not land is
    /// lost (`readback_mismatch`).
    fn read_back(&mut self, filled: &[u8]) -> Result<(), Error> {
        let got = readback::read(filled)?;
        let mut lost = Vec::new();
        for w in &mut self.written {
            if let Err(m) = readback::check(&w.field, &w.planned, got.get(&w.field.name)) {
                w.lost = true;
                lost.push((w.field.name.clone(), m));
            }
        }
        for (name, m) in lost {
            self.fail(&name, FailReason::ReadbackMismatch, m);
        }
        Ok(())
    }

    /// Before flattening: values set earlier without an appearance get one, so flattening
    /// shows them; with NeedAppearances the producer's appearances are stale (often empty:
    /// LibreOffice) and are all drawn again. A field that still has none stays live
    /// (flatten_skipped).
    fn draw_missing_appearances(
        &mut self,
        doc: &mut Document,
        all_fields: &[Field],
        policy: FontPolicy,
    ) {
        let stale = tree::acroform(doc)
            .and_then(|af| af.get(b"NeedAppearances").ok())
            .and_then(|n| n.as_bool().ok())
            .unwrap_or(false);
        for f in all_fields {
            let ours = self.written.iter().any(|w| w.field.id == f.id);
            let drawn = !stale
                && f.widgets
                    .iter()
                    .all(|w| tree::normal_appearance(doc, *w).is_some());
            // A checkbox checked earlier whose widgets have no "on" look gets one.
            let unmarked = f.kind == Kind::Checkbox
                && tree::has_value(doc, f)
                && f.widgets
                    .iter()
                    .all(|w| tree::on_states(doc, *w).is_empty());
            if unmarked && !ours {
                let _ = fill(doc, &mut self.fonts, f, &FieldInput::Bool(true), policy);
                continue;
            }
            if ours || drawn || !matches!(f.kind, Kind::Text | Kind::Combo | Kind::List) {
                continue;
            }
            if let Some(v) = tree::current_value(doc, f) {
                if let Ok((.., Some(w))) = fill(doc, &mut self.fonts, f, &v, policy) {
                    self.warnings.push(w.into());
                }
            }
        }
    }

    /// Burns the appearances into the pages and checks every written value is visible in
    /// the flat document's text; returns the flat document's bytes.
    fn flatten(
        &mut self,
        doc: &mut Document,
        all_fields: &[Field],
        result: &mut EditResult,
    ) -> Result<Vec<u8>, Error> {
        let skipped = flatten::flatten(doc, all_fields).map_err(Error::Engine)?;
        if !skipped.is_empty() {
            self.warnings.push("flatten_skipped".into());
        }
        for name in &skipped {
            if !result.flatten_skipped.contains(name) {
                result.flatten_skipped.push(name.clone());
            }
        }
        let flat = save(doc)?;
        let text = readback::all_text(&flat)?;
        let mut lost = Vec::new();
        for w in self.written.iter_mut().filter(|w| !w.lost) {
            if skipped.contains(&w.field.name) {
                continue;
            }
            if let Err(m) = readback::visible(&text, &w.field, &w.planned) {
                w.lost = true;
                lost.push((w.field.name.clone(), m));
            }
        }
        for (name, m) in lost {
            self.fail(&name, FailReason::ReadbackMismatch, m);
        }
        Ok(flat)
    }

    /// Verifies the output through the commit step (the pages of the written widgets, or
    /// of every widget when the whole form is flattened, compared outside the widgets) and
    /// reports each written field. Collateral does not undo a fill: the field is reported
    /// with `verified: false`.
    fn verify_and_report(
        self,
        run: &mut FormRun<'_>,
        snapshot: &Document,
        all_fields: &[Field],
        flatten: bool,
        output: Vec<u8>,
    ) -> Result<(), Error> {
        let pages = tree::widget_pages(snapshot);
        let shown: Vec<&Field> = if flatten {
            all_fields.iter().collect()
        } else {
            self.written.iter().map(|w| &w.field).collect()
        };
        let mut areas: BTreeMap<u32, Vec<[f64; 4]>> = BTreeMap::new();
        let mut boxes: HashMap<ObjectId, (u32, [f64; 4])> = HashMap::new();
        for f in &shown {
            for w in &f.widgets {
                if let Some(&(page, page_id)) = pages.get(w) {
                    if let Some(b) = page_geom_box(snapshot, page_id, *w) {
                        areas.entry(page).or_default().push(b);
                        boxes.insert(*w, (page, b));
                    }
                }
            }
        }
        // The box shown for a field is the widget that is on (a radio group's chosen
        // button), else the field's first widget.
        let kept_fields: Vec<(&Written, (u32, [f64; 4]))> = self
            .written
            .iter()
            .filter(|w| !w.lost)
            .map(|w| {
                let on = w.on_widget.and_then(|id| boxes.get(&id));
                let first = on.or_else(|| w.field.widgets.iter().find_map(|id| boxes.get(id)));
                (w, first.copied().unwrap_or((0, [0.0; 4])))
            })
            .collect();
        let checks: Vec<PageCheck> = areas
            .into_iter()
            .map(|(page, areas)| PageCheck {
                page,
                areas,
                moved: Vec::new(),
                shown: kept_fields
                    .iter()
                    .filter(|(_, (p, _))| *p == page)
                    .map(|(_, (_, b))| *b)
                    .collect(),
            })
            .collect();
        let rules = Rules {
            roll_back: false,
            ..Rules::new(self.edit, "the form's fields")
        };
        let verdict = commit(&mut run.verifier, &rules, output, &checks, &mut Plain)?;
        let Verdict::Kept(kept) = verdict else {
            *run.doc = snapshot.clone();
            return Ok(());
        };
        let mut by_page: HashMap<u32, (u64, Crops)> = kept
            .into_iter()
            .map(|k| (k.page, (k.collateral, k.previews.into_iter())))
            .collect();
        let result = &mut *run.verifier.result;
        for (w, (page, bbox)) in kept_fields {
            let (collateral, previews) = match by_page.get_mut(&page) {
                Some((c, crops)) => (*c, crops.next().unwrap_or_default()),
                None => (0, (Vec::new(), Vec::new())),
            };
            result.changes.push(Change {
                font_source: w.font_source,
                font_used: w.font_used.clone(),
                field: Some(w.field.name.clone()),
                value: Some(reported(snapshot, &w.field, &w.planned)),
                ..change(self.edit, page, collateral, bbox, previews)
            });
        }
        result.failed.extend(self.failed);
        for w in self.warnings {
            if !result.warnings.contains(&w) {
                result.warnings.push(w);
            }
        }
        Ok(())
    }
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
