//! Widgets whose appearance shows text that is not a field's value: a push button's
//! caption, a list box's options, a combo box's chosen option, a signature's appearance.
//! `read_text` reads that text (as `form-field` spans), so an edit finds it: the widget's
//! appearance is edited in place like a FreeText appearance, and the field's own copies
//! of the text follow (a button's /MK /CA, /RC and /AC; a choice field's /Opt display text,
//! and its /V when the option is a plain string that is also its export value).
//!
//! A text field's value is edited by the form operation (its value written and its
//! appearance drawn again), not here; checkboxes and radio buttons draw no text.

use std::collections::HashMap;

use lopdf::{text_string, Document, Object, ObjectId};

use crate::model::form::{self as tree, Kind};
use crate::model::PageModel;

/// The field a widget belongs to.
#[derive(Debug, Clone)]
pub(crate) struct WidgetField {
    /// Fully qualified field name.
    pub name: String,
    pub kind: Kind,
    /// The terminal field dictionary.
    pub id: ObjectId,
}

/// The widgets of push buttons, signatures and choice fields, by widget object.
pub(super) fn widget_fields(doc: &Document) -> HashMap<ObjectId, WidgetField> {
    let mut out = HashMap::new();
    for f in tree::fields(doc) {
        if !matches!(
            f.kind,
            Kind::PushButton | Kind::Signature | Kind::List | Kind::Combo
        ) {
            continue;
        }
        for w in &f.widgets {
            out.insert(
                *w,
                WidgetField {
                    name: f.name.clone(),
                    kind: f.kind,
                    id: f.id,
                },
            );
        }
    }
    out
}

/// `s` with its runs of white space made one space, trimmed.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Each edited line of the appearance: (its text before, its text after).
fn edited_lines(
    model: &PageModel,
    edits: &[(usize, usize, usize, String)],
) -> Vec<(String, String)> {
    let mut lines: Vec<usize> = edits.iter().map(|e| e.0).collect();
    lines.sort_unstable();
    lines.dedup();
    let mut out = Vec::new();
    for li in lines {
        let Some(line) = model.lines.get(li) else {
            continue;
        };
        let mut mine: Vec<&(usize, usize, usize, String)> =
            edits.iter().filter(|e| e.0 == li).collect();
        mine.sort_by_key(|e| e.1);
        let (mut new, mut at) = (String::new(), 0);
        for (_, s, e, r) in mine {
            let (Some(before), true) = (line.text.get(at..*s), *e <= line.text.len()) else {
                continue;
            };
            new.push_str(before);
            new.push_str(r);
            at = *e;
        }
        new.push_str(line.text.get(at..).unwrap_or(""));
        out.push((squash(&line.text), squash(&new)));
    }
    out
}

/// Makes the field's own copies of the edited text say what its appearance now shows.
/// `edits` are the appearance's matches as (line, start, end, replacement). A choice
/// field's line that is neither one of its options nor its value is refused: the field
/// would show an option it does not have.
pub(super) fn update_field(
    doc: &mut Document,
    field: &WidgetField,
    widget: ObjectId,
    model: &PageModel,
    edits: &[(usize, usize, usize, String)],
) -> Result<(), String> {
    let lines = edited_lines(model, edits);
    match field.kind {
        Kind::PushButton => update_caption(doc, widget, &lines),
        Kind::List | Kind::Combo => update_choice(doc, field, &lines),
        _ => Ok(()),
    }
}

/// A push button's captions (normal, rollover, down) that read as an edited line.
fn update_caption(
    doc: &mut Document,
    widget: ObjectId,
    lines: &[(String, String)],
) -> Result<(), String> {
    let mk = match doc
        .get_dictionary(widget)
        .map_err(|e| e.to_string())?
        .get(b"MK")
    {
        Ok(Object::Reference(id)) => Some(*id),
        Ok(Object::Dictionary(_)) => None,
        _ => return Ok(()),
    };
    let dict = match mk {
        Some(id) => doc.get_dictionary_mut(id),
        None => doc
            .get_dictionary_mut(widget)
            .and_then(|d| d.get_mut(b"MK"))
            .and_then(Object::as_dict_mut),
    }
    .map_err(|e| e.to_string())?;
    for key in [b"CA".as_slice(), b"RC", b"AC"] {
        let Some(old) = dict.get(key).ok().and_then(tree::text) else {
            continue;
        };
        if let Some((_, new)) = lines.iter().find(|(o, _)| *o == squash(&old)) {
            dict.set(key, text_string(new));
        }
    }
    Ok(())
}

/// A choice field's option whose display text is an edited line gets the new text (the
/// export value of an [export, display] pair is kept; a plain option is its own export
/// value, so /V naming it follows); a combo box's free value that is an edited line too.
fn update_choice(
    doc: &mut Document,
    field: &WidgetField,
    lines: &[(String, String)],
) -> Result<(), String> {
    let f = tree::fields(doc)
        .into_iter()
        .find(|f| f.id == field.id)
        .ok_or("the field is no longer in the form")?;
    let value = tree::current_value(doc, &f);
    let values: Vec<String> = match &value {
        Some(crate::types::FieldInput::Text(t)) => vec![t.clone()],
        Some(crate::types::FieldInput::Many(v)) => v.clone(),
        _ => Vec::new(),
    };
    let mut options = f.options.clone();
    let mut renamed: Vec<(String, String)> = Vec::new();
    let mut opt_changed = false;
    for (old, new) in lines {
        let opt = options.iter().position(|(_, d)| squash(d) == *old);
        if let Some(i) = opt {
            let (export, display) = &mut options[i];
            if export == display {
                renamed.push((export.clone(), new.clone()));
                export.clone_from(new);
            }
            display.clone_from(new);
            opt_changed = true;
        } else if values.iter().any(|v| squash(v) == *old) {
            renamed.push((old.clone(), new.clone()));
        } else if options.iter().any(|(_, d)| squash(d) == *new)
            || values.iter().any(|v| squash(v) == *new)
        {
            // Already renamed for a widget of the same field shown before this one.
            continue;
        } else {
            return Err(format!(
                "the field {} shows \"{old}\", which is neither one of its options nor its \
                 value; its appearance is not edited",
                field.name
            ));
        }
    }
    let opt: Vec<Object> = options
        .iter()
        .map(|(e, d)| {
            if e == d {
                text_string(d)
            } else {
                Object::Array(vec![text_string(e), text_string(d)])
            }
        })
        .collect();
    let new_value = |v: &String| {
        renamed
            .iter()
            .find(|(o, _)| squash(o) == squash(v))
            .map_or_else(|| v.clone(), |(_, n)| n.clone())
    };
    let d = doc
        .get_dictionary_mut(field.id)
        .map_err(|e| e.to_string())?;
    if opt_changed {
        d.set("Opt", Object::Array(opt));
    }
    let renamed_values: Vec<String> = values.iter().map(new_value).collect();
    if renamed_values != values {
        match value {
            Some(crate::types::FieldInput::Many(_)) => d.set(
                "V",
                Object::Array(renamed_values.iter().map(|t| text_string(t)).collect()),
            ),
            _ => {
                if let Some(v) = renamed_values.first() {
                    d.set("V", text_string(v));
                }
            }
        }
    }
    Ok(())
}
