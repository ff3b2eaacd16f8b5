//! Reading the written values back from the output with an independent reader (PDFium),
//! and, after flattening, finding each text value in the page's extracted text.

use std::collections::HashMap;

use pdf_render::{FieldValue, FormField};

use super::value::Planned;
use crate::model::form::{ff, same_state, Field, Kind};
use crate::Error;

/// Every field PDFium sees in `bytes`, by fully qualified name.
pub(crate) fn read(bytes: &[u8]) -> Result<HashMap<String, FormField>, Error> {
    let doc = pdf_render::Document::open(bytes, None)?;
    Ok(doc
        .form_fields()?
        .into_iter()
        .map(|f| (f.name.clone(), f))
        .collect())
}

/// Whether PDFium reads back what was written; the message says what it read instead.
pub(crate) fn check(
    field: &Field,
    planned: &Planned,
    got: Option<&FormField>,
) -> Result<(), String> {
    let Some(got) = got else {
        return Err("the field is missing from the output".into());
    };
    let ok = match (planned, &got.value) {
        (Planned::Text(t), FieldValue::Text(v)) => t == v,
        (Planned::State(s), FieldValue::Bool(on)) if field.kind == Kind::Checkbox => {
            *on == (s != b"Off")
        }
        (Planned::State(s), FieldValue::Null) => s == b"Off",
        (Planned::State(s), FieldValue::Text(v)) => {
            same_state(v, &crate::model::form::state_text(s))
        }
        (Planned::Choice { exports, shown, .. }, FieldValue::Text(v)) => {
            exports.first() == Some(v) || shown.first() == Some(v)
        }
        (Planned::Choice { exports, shown, .. }, FieldValue::List(v)) => {
            let mut v = v.clone();
            v.sort();
            let mut e = exports.clone();
            e.sort();
            let mut s = shown.clone();
            s.sort();
            v == e || v == s
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("written, but PDFium reads back {:?}", got.value))
    }
}

/// The document's extracted text (PDFium's characters in reading order), without spaces.
pub(crate) fn all_text(bytes: &[u8]) -> Result<String, Error> {
    let text = crate::read::read_text_checked(bytes, None, None, true, false, None)?.0;
    Ok(text
        .pages
        .iter()
        .flat_map(|p| p.spans.iter())
        .map(|s| squash(&s.text))
        .collect())
}

/// After flattening: a text value must be in the extracted text (see [`all_text`]).
pub(crate) fn visible(all: &str, field: &Field, planned: &Planned) -> Result<(), String> {
    if field.hidden {
        return Ok(());
    }
    let wanted = match planned {
        Planned::Text(t) if field.flags & ff::PASSWORD == 0 => t.clone(),
        Planned::Choice { shown, .. } if field.kind == Kind::Combo => {
            shown.first().cloned().unwrap_or_default()
        }
        _ => return Ok(()),
    };
    let wanted = squash(&wanted);
    if wanted.is_empty() || all.contains(&wanted) {
        Ok(())
    } else {
        Err("flattened, but the value is not in the document's text".into())
    }
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_state_names_cut_short_by_pdfium_still_match() {
        let long = "x".repeat(80) + " - and more";
        assert!(same_state(&("x".repeat(80) + "#"), &long));
        assert!(same_state(
            &("x".repeat(80) + "#2"),
            &("x".repeat(80) + ", more")
        ));
        assert!(same_state("On", "On"));
        assert!(!same_state("On", "Off"));
        assert!(!same_state("x", "xy"));
    }
}
