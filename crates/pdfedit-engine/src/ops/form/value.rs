//! What a requested value means for a field (checked against the field's kind, options,
//! MaxLen and states) and writing it: /V, /AS of button widgets, /I of list boxes.

use lopdf::{text_string, Document, Object};

use crate::model::form::{ff, on_states, state_text, Field, Kind};
use crate::types::FailReason;
use crate::types::FieldInput;

/// A value refused: (reason, message).
pub(crate) use crate::types::Refusal;

/// A checked value, ready to write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Planned {
    /// A text field's text.
    Text(String),
    /// A button's appearance state (`Off` for unchecked).
    State(Vec<u8>),
    /// A choice field's options: (export values, display texts, option indices). A combo
    /// box's free text has no index.
    Choice {
        exports: Vec<String>,
        shown: Vec<String>,
        indices: Vec<usize>,
    },
}

/// Checks `input` against `field`.
pub(crate) fn plan(doc: &Document, field: &Field, input: &FieldInput) -> Result<Planned, Refusal> {
    let refuse = |m: String| Err((FailReason::ValueNotAccepted, m));
    match field.kind {
        Kind::Text => {
            let FieldInput::Text(t) = input else {
                return refuse("a text field takes a string or a number".into());
            };
            if let Some(max) = field.max_len.filter(|&m| t.chars().count() > m) {
                return refuse(format!(
                    "{} characters do not fit the field's limit (MaxLen {max}); values are \
                     never truncated",
                    t.chars().count()
                ));
            }
            if field.flags & ff::MULTILINE == 0 && t.contains(['\n', '\r']) {
                return refuse("a single-line field takes no line breaks".into());
            }
            Ok(Planned::Text(t.clone()))
        }
        Kind::Checkbox | Kind::Radio => button(doc, field, input),
        Kind::Combo | Kind::List => choice(field, input),
        Kind::PushButton => refuse("a push button has no value".into()),
        Kind::Signature => refuse("a signature field cannot be filled with a value".into()),
    }
}

fn button(doc: &Document, field: &Field, input: &FieldInput) -> Result<Planned, Refusal> {
    let states: Vec<Vec<Vec<u8>>> = field.widgets.iter().map(|w| on_states(doc, *w)).collect();
    let all: Vec<&Vec<u8>> = states.iter().flatten().collect();
    let names = || {
        all.iter()
            .map(|s| state_text(s))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (field.kind, input) {
        (_, FieldInput::Bool(false)) => Ok(Planned::State(b"Off".to_vec())),
        (Kind::Checkbox, FieldInput::Bool(true)) => Ok(Planned::State(
            all.first().map_or(b"Yes".to_vec(), |s| (*s).clone()),
        )),
        (Kind::Radio, FieldInput::Bool(true)) => Err((
            FailReason::ValueNotAccepted,
            format!("a radio group takes one of its export values: {}", names()),
        )),
        (_, FieldInput::Text(t)) => {
            if t == "Off" || t.is_empty() {
                return Ok(Planned::State(b"Off".to_vec()));
            }
            // State names are bytes; one that is not UTF-8 is offered (and read back)
            // decoded, which is taken too.
            if let Some(s) = all
                .iter()
                .find(|s| s.as_slice() == t.as_bytes())
                .or_else(|| all.iter().find(|s| state_text(s) == *t))
            {
                return Ok(Planned::State((*s).clone()));
            }
            // With /Opt, widget i's export value is Opt[i] and its state name is an index.
            if let Some(i) = field.options.iter().position(|(e, _)| e == t) {
                if let Some(s) = states.get(i).and_then(|s| s.first()) {
                    return Ok(Planned::State(s.clone()));
                }
            }
            Err((
                FailReason::ValueNotAccepted,
                format!("'{t}' is not an export value of this field: {}", names()),
            ))
        }
        (_, FieldInput::Many(_)) => Err((
            FailReason::ValueNotAccepted,
            "a button takes a boolean or one export value".into(),
        )),
        (_, FieldInput::Bool(true)) => Err((FailReason::ValueNotAccepted, "not a checkbox".into())),
    }
}

fn choice(field: &Field, input: &FieldInput) -> Result<Planned, Refusal> {
    let wanted: Vec<&String> = match input {
        FieldInput::Text(t) => vec![t],
        FieldInput::Many(v) => v.iter().collect(),
        FieldInput::Bool(_) => {
            return Err((
                FailReason::ValueNotAccepted,
                "a choice field takes an option's value or text".into(),
            ))
        }
    };
    let multi = field.kind == Kind::List && field.flags & ff::MULTI_SELECT != 0;
    if wanted.len() > 1 && !multi {
        return Err((
            FailReason::ValueNotAccepted,
            "only a multi-select list takes several options".into(),
        ));
    }
    let editable = field.kind == Kind::Combo && field.flags & ff::EDIT != 0;
    let mut out = (Vec::new(), Vec::new(), Vec::new());
    for w in wanted {
        let found = field
            .options
            .iter()
            .position(|(e, _)| e == w)
            .or_else(|| field.options.iter().position(|(_, d)| d == w));
        match found {
            Some(i) => {
                out.0.push(field.options[i].0.clone());
                out.1.push(field.options[i].1.clone());
                out.2.push(i);
            }
            None if editable => {
                out.0.push(w.clone());
                out.1.push(w.clone());
            }
            None => {
                let list: Vec<&str> = field.options.iter().map(|(e, _)| e.as_str()).collect();
                return Err((
                    FailReason::ValueNotAccepted,
                    format!("'{w}' is not an option: {}", list.join(", ")),
                ));
            }
        }
    }
    out.2.sort_unstable();
    Ok(Planned::Choice {
        exports: out.0,
        shown: out.1,
        indices: out.2,
    })
}

/// Writes /V (and /AS, /I) for `planned`.
pub(crate) fn write(doc: &mut Document, field: &Field, planned: &Planned) -> Result<(), String> {
    let states: Vec<Vec<Vec<u8>>> = field.widgets.iter().map(|w| on_states(doc, *w)).collect();
    let d = doc
        .get_dictionary_mut(field.id)
        .map_err(|e| e.to_string())?;
    match planned {
        Planned::Text(t) => {
            d.set("V", text_string(t));
            // A rich-text value would win over /V in viewers that read it.
            d.remove(b"RV");
        }
        Planned::State(s) => {
            d.set("V", Object::Name(s.clone()));
            for (w, st) in field.widgets.iter().zip(&states) {
                let on = st.iter().any(|x| x == s);
                let wd = doc.get_dictionary_mut(*w).map_err(|e| e.to_string())?;
                let as_ = if on { s.clone() } else { b"Off".to_vec() };
                wd.set("AS", Object::Name(as_));
            }
        }
        Planned::Choice {
            exports, indices, ..
        } => {
            let v = match exports.as_slice() {
                [one] => text_string(one),
                many => Object::Array(many.iter().map(|e| text_string(e)).collect()),
            };
            d.set("V", v);
            if indices.is_empty() {
                d.remove(b"I");
            } else {
                let i = indices.iter().map(|&i| Object::Integer(i as i64)).collect();
                d.set("I", Object::Array(i));
            }
        }
    }
    Ok(())
}
