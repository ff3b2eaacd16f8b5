//! Replacing Arabic text (issue #15) in the corpus's WeasyPrint file: a CID TrueType
//! subset whose `/ToUnicode` puts the whole shaped word "حَبيبي" on one glyph and nothing
//! on the others. The word is found in logical order (as `/v1/text` and a user give it),
//! in pdftotext's visual order, and typed in presentation forms; new Arabic text is
//! shaped, drawn right to left, and read back by pdftotext.

mod common;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, EditResult, Fit, MatchMode};
use pdfedit_engine::edit::{EditOptions, Occurrence, Scope, Watermark};

const FILE: &str = "font-cid-tt-arabic-weasyprint.pdf";
/// The word in logical order, and as pdftotext prints it (visual order).
const LOGICAL: &str = "حَبيبي";
const VISUAL: &str = "يبيبَح";

fn replace(pdf: &[u8], find: &str, new: &str) -> EditResult {
    let req = EditRequest {
        edits: vec![Edit {
            index: 0,
            op: EditOp::Replace,
            find: find.into(),
            replace: new.into(),
            match_mode: MatchMode::Exact,
            scope: Scope {
                occurrence: Some(Occurrence::First),
                ..Scope::default()
            },
            fit: Fit::Auto,
            ..Edit::default()
        }],
        options: EditOptions {
            watermark: Watermark::Off,
            watermark_off_allowed: true,
            ..Default::default()
        },
        ..EditRequest::default()
    };
    edit(pdf, &req).expect("edit runs")
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The visual order pdftotext prints a right-to-left word in: its characters reversed.
fn reversed(s: &str) -> String {
    s.chars().rev().collect()
}

/// Checks a replace went through and pdftotext reads `expect` where the word was, with
/// one occurrence of the old word fewer.
fn check(pdf: &[u8], r: &EditResult, expect: &str) {
    assert!(r.unmatched.is_empty(), "unmatched");
    assert!(
        r.failed.is_empty(),
        "failed: {:?}",
        r.failed.iter().map(|f| &f.message).collect::<Vec<_>>()
    );
    assert!(r.changes[0].verified, "not verified");
    assert!(common::qpdf_ok(&r.pdf), "qpdf --check fails");
    let (Some(before), Some(after)) = (common::pdftotext(pdf, &[]), common::pdftotext(&r.pdf, &[]))
    else {
        eprintln!("SKIP the read-back: pdftotext not installed");
        return;
    };
    let (before, after) = (squash(&before), squash(&after));
    assert!(
        after.contains(expect),
        "pdftotext lacks {expect:?}: {after:?}"
    );
    // The new text may hold the old word itself.
    assert_eq!(
        after.matches(VISUAL).count() + 1,
        before.matches(VISUAL).count() + expect.matches(VISUAL).count(),
        "the old word is still read: {after:?}"
    );
}

#[test]
fn logical_order_find_and_same_length_replacement() {
    let Some(pdf) = common::load(FILE) else {
        return;
    };
    // "حَيببي": hah initial, yeh medial, beh medial twice, yeh final.
    let new = "حَيببي";
    let r = replace(&pdf, LOGICAL, new);
    check(&pdf, &r, &reversed(new));
    // Reported as the document reads it.
    assert_eq!(r.changes[0].find, LOGICAL);
}

#[test]
fn visual_order_find_takes_a_visual_replacement() {
    let Some(pdf) = common::load(FILE) else {
        return;
    };
    // pdftotext's text edited and given back: the replacement is in visual order too.
    let new = common::rotate_words(VISUAL);
    let r = replace(&pdf, VISUAL, &new);
    check(&pdf, &r, &new);
    // Found as the document reads the word, and drawn in logical order from it.
    assert_eq!(r.changes[0].find, LOGICAL);
    assert_eq!(r.changes[0].replace, reversed(&new));
}

#[test]
fn longer_replacement_with_lam_alef() {
    let Some(pdf) = common::load(FILE) else {
        return;
    };
    let new = "سلام حَبيبي";
    let r = replace(&pdf, LOGICAL, new);
    // pdftotext prints the two words right to left, each reversed.
    check(&pdf, &r, &reversed(new));
}

#[test]
fn presentation_forms_find_the_letters() {
    let Some(pdf) = common::load(FILE) else {
        return;
    };
    // The word as the glyphs draw it: hah initial, fatha, beh medial, yeh medial, beh
    // medial, yeh final.
    let forms = "\u{FEA3}\u{064E}\u{FE92}\u{FEF4}\u{FE92}\u{FEF2}";
    let r = replace(&pdf, forms, "حَيببي");
    check(&pdf, &r, &reversed("حَيببي"));
}
