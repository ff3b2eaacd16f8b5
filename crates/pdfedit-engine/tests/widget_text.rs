//! Text that widgets draw but that is not a field's value (issue 15 item 1): a list box's
//! options, a combo box's chosen option, a push button's caption, a signature's
//! appearance. `read_text` reads it, so a replace edits it where it is drawn and the
//! field's own copy follows, and a redaction removes it.

mod common;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditOptions, EditRequest, EditResult, Scope};
use pdfedit_engine::edit::{Occurrence, Watermark};

const FANCY: &str = "form-fancy-fields-acrobat-dc.pdf";
const SIGNED: &str = "sig-libreoffice-okular-visible.pdf";

fn run(bytes: &[u8], op: EditOp, find: &str, replace: &str) -> EditResult {
    let e = Edit {
        index: 0,
        op,
        find: find.into(),
        replace: replace.into(),
        scope: Scope {
            pages: Some(vec![1]),
            occurrence: Some(Occurrence::First),
            ..Scope::default()
        },
        ..Edit::default()
    };
    let request = EditRequest {
        password: None,
        edits: vec![e],
        options: EditOptions {
            watermark: Watermark::Off,
            watermark_off_allowed: true,
            break_signature: true,
            ..EditOptions::default()
        },
    };
    edit(bytes, &request).expect("edit")
}

/// The options PDFium reads for field `name` of `pdf`.
fn options(pdf: &[u8], name: &str) -> Vec<String> {
    let text = pdfedit_engine::read_text(pdf, None, None, false, true).expect("read_text");
    text.fields
        .iter()
        .find(|f| f.name == name)
        .and_then(|f| f.options.clone())
        .unwrap_or_default()
}

/// The words `read_text` reads on page 1.
fn words(pdf: &[u8]) -> Vec<String> {
    let text = pdfedit_engine::read_text(pdf, None, None, true, false).expect("read_text");
    text.pages[0]
        .spans
        .iter()
        .flat_map(|s| {
            s.text
                .split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_list_option_is_renamed_on_every_widget_and_in_opt() {
    let Some(bytes) = common::load(FANCY) else {
        return;
    };
    let name = "Which Are Planets? 🌎";
    assert!(options(&bytes, name).contains(&"Earth".to_string()));
    let r = run(&bytes, EditOp::Replace, "Earth", "Terra");
    assert!(
        r.unmatched.is_empty() && r.failed.is_empty(),
        "{:?}",
        r.failed
    );
    // The field shows its options on four widgets: each is edited and verified.
    assert_eq!(r.changes.len(), 4, "{:?}", r.changes);
    assert!(r
        .changes
        .iter()
        .all(|c| c.verified && c.field.as_deref() == Some(name)));
    let opts = options(&r.pdf, name);
    assert!(opts.contains(&"Terra".to_string()) && !opts.contains(&"Earth".to_string()));
    let after = words(&r.pdf);
    assert!(!after.iter().any(|w| w == "Earth"));
    assert_eq!(after.iter().filter(|w| *w == "Terra").count(), 4);
}

#[test]
fn a_combo_value_and_a_button_caption_follow_their_appearance() {
    let Some(bytes) = common::load(FANCY) else {
        return;
    };
    let r = run(&bytes, EditOp::Replace, "Dynames", "Kyrios II");
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(!r.changes.is_empty() && r.changes.iter().all(|c| c.verified));
    let text = pdfedit_engine::read_text(&r.pdf, None, None, false, true).expect("read_text");
    let combo = text
        .fields
        .iter()
        .find(|f| f.name == "Choose A Gundam 🤖")
        .expect("combo");
    assert!(format!("{:?}", combo.value).contains("Kyrios II"));
    let r = run(&bytes, EditOp::Replace, "Play", "Stop");
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert_eq!(r.changes.len(), 1);
    assert_eq!(r.changes[0].field.as_deref(), Some("Play ▶\u{fe0f}"));
    let after = words(&r.pdf);
    assert!(after.iter().any(|w| w == "Stop") && !after.iter().any(|w| w == "Play"));
}

#[test]
fn a_signature_appearance_is_edited_and_redacted() {
    let Some(bytes) = common::load(SIGNED) else {
        return;
    };
    let r = run(&bytes, EditOp::Replace, "CEST", "CETT");
    assert!(
        r.unmatched.is_empty() && r.failed.is_empty(),
        "{:?}",
        r.failed
    );
    assert!(r.changes.iter().all(|c| c.verified && c.field.is_some()));
    assert!(words(&r.pdf).iter().any(|w| w == "CETT"));
    let r = run(&bytes, EditOp::Redact, "MACHULDA", "");
    assert!(r.unmatched.is_empty(), "{:?}", r.unmatched);
    assert!(
        r.removed.iter().any(|x| x.kind == "annotation"),
        "{:?}",
        r.removed
    );
    assert!(!words(&r.pdf).iter().any(|w| w.contains("MACHULDA")));
}
