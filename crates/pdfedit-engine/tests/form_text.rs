//! A replace or delete whose text is a filled form field's value edits the field (issue 15
//! item 2): value, appearance and read-back through the form operation, reported with
//! `field`; pages outside the scope are left alone.

mod common;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditOptions, EditRequest, EditResult, Scope};
use pdfedit_engine::FieldValue;

const FANCY: &str = "form-fancy-fields-acrobat-dc.pdf";
const PREFILLED: &str = "form-irs-1040-prefilled-livecycle.pdf";

fn run(pdf: &[u8], e: Edit) -> EditResult {
    let request = EditRequest {
        password: None,
        edits: vec![e],
        options: EditOptions::default(),
    };
    edit(pdf, &request).expect("edit runs")
}

fn field_value(pdf: &[u8], name: &str) -> Option<FieldValue> {
    let text = pdfedit_engine::read_text(pdf, None, None, false, true).expect("reads");
    text.fields
        .into_iter()
        .find(|f| f.name == name)
        .map(|f| f.value)
}

fn replace(find: &str, with: &str) -> Edit {
    Edit {
        op: EditOp::Replace,
        find: find.into(),
        replace: with.into(),
        ..Edit::default()
    }
}

#[test]
fn a_replace_in_a_filled_text_field_rewrites_the_field() {
    let Some(pdf) = common::load(FANCY) else {
        return;
    };
    let r = run(&pdf, replace("Cedar", "Birch"));
    assert!(r.unmatched.is_empty(), "unmatched: {:?}", r.unmatched);
    assert!(r.failed.is_empty(), "failed: {:?}", r.failed);
    assert_eq!(r.changes.len(), 1, "{:?}", r.changes);
    let c = &r.changes[0];
    assert_eq!(c.op, EditOp::Replace);
    assert_eq!(c.field.as_deref(), Some("First Name 🚀"));
    assert_eq!((c.find.as_str(), c.replace.as_str()), ("Cedar", "Birch"));
    assert_eq!(c.page, 1);
    assert!(c.verified, "collateral pixels: {}", c.collateral_pixels);
    assert_eq!(
        field_value(&r.pdf, "First Name 🚀"),
        Some(FieldValue::Text("Birch".into()))
    );
    // The appearance shows it: the page's text (widget appearances included) has the new
    // value and not the old.
    let text = common::pdftotext(&r.pdf, &[]).unwrap_or_default();
    if !text.is_empty() {
        assert!(text.contains("Birch") && !text.contains("Cedar"), "{text}");
    }
}

#[test]
fn a_delete_takes_part_of_a_value_and_scope_is_kept() {
    let Some(pdf) = common::load(FANCY) else {
        return;
    };
    let r = run(
        &pdf,
        Edit {
            op: EditOp::Delete,
            find: "twirls".into(),
            ..Edit::default()
        },
    );
    assert!(r.failed.is_empty(), "failed: {:?}", r.failed);
    assert_eq!(r.changes.len(), 1, "{:?}", r.changes);
    assert_eq!(
        field_value(&r.pdf, "LastName 🛩"),
        Some(FieldValue::Text("Lightning".into()))
    );
    // A page the field is not on: nothing found, nothing written.
    let mut e = replace("Cedar", "Birch");
    e.scope = Scope {
        pages: Some(vec![2]),
        ..Scope::default()
    };
    let r = run(&pdf, e);
    assert!(r.changes.is_empty());
    assert_eq!(r.unmatched.len(), 1);
    assert_eq!(r.pdf, pdf, "the document is unchanged");
}

#[test]
fn a_field_of_a_prefilled_government_form_is_edited_in_place() {
    let Some(pdf) = common::load(PREFILLED) else {
        return;
    };
    let name = "topmostSubform[0].Page2[0].p2-t124[0]";
    let r = run(&pdf, replace("foobar", "foobaz"));
    assert!(r.failed.is_empty(), "failed: {:?}", r.failed);
    assert_eq!(r.changes.len(), 1, "{:?}", r.changes);
    assert_eq!(r.changes[0].field.as_deref(), Some(name));
    assert_eq!(r.changes[0].page, 2);
    assert_eq!(
        field_value(&r.pdf, name),
        Some(FieldValue::Text("foobaz".into()))
    );
}
