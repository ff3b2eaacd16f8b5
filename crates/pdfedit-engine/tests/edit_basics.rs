//! Replace and delete behaviour on small corpus documents: match modes, scope, rollback of
//! a collision, delete tidying, byte-identical untouched streams, signed documents.

mod common;

use pdfedit_engine::edit::{
    edit, Edit, EditError, EditOp, EditOptions, EditRequest, Fit, MatchMode, Occurrence, Scope,
};

const TRIVIAL: &str = "font-tt-subset-libreoffice-trivial.pdf";

fn request(op: EditOp, find: &str, replace: &str, mode: MatchMode, fit: Fit) -> EditRequest {
    EditRequest {
        edits: vec![Edit {
            index: 0,
            op,
            find: find.into(),
            replace: replace.into(),
            match_mode: mode,
            scope: Scope {
                occurrence: Some(Occurrence::First),
                ..Scope::default()
            },
            fit,
            style: Default::default(),
            ..Edit::default()
        }],
        ..EditRequest::default()
    }
}

#[test]
fn collision_with_fit_none_is_rolled_back() {
    let Some(pdf) = common::load(TRIVIAL) else {
        return;
    };
    let long = "Lorem ipsum ipsum ipsum ipsum ipsum ipsum";
    let r = edit(
        &pdf,
        &request(EditOp::Replace, "Lorem", long, MatchMode::Exact, Fit::None),
    )
    .expect("edit runs");
    assert!(r.changes.is_empty(), "{:?}", r.changes.len());
    assert_eq!(r.failed.len(), 1);
    assert_eq!(
        r.failed[0].reason, "collateral_change",
        "{}",
        r.failed[0].message
    );
    assert_eq!(
        r.pdf, pdf,
        "a rolled-back request returns the input unchanged"
    );
}

#[test]
fn delete_leaves_no_double_space() {
    let Some(pdf) = common::load(TRIVIAL) else {
        return;
    };
    let r = edit(
        &pdf,
        &request(EditOp::Delete, "ipsum", "", MatchMode::Exact, Fit::Auto),
    )
    .expect("edit runs");
    assert_eq!(r.changes.len(), 1, "{:?}", r.failed);
    assert!(r.changes[0].verified);
    assert_eq!(r.changes[0].font_source, "none");
    if let Some(text) = common::pdftotext(&r.pdf, &[]) {
        let line = text
            .lines()
            .find(|l| l.contains("Lorem"))
            .expect("line kept");
        assert!(
            !line.contains("  ") && !line.contains("ipsum dolor"),
            "{line:?}"
        );
    }
}

#[test]
fn match_modes_and_untouched_streams() {
    let Some(pdf) = common::load(TRIVIAL) else {
        return;
    };
    let r = edit(
        &pdf,
        &request(
            EditOp::Replace,
            "LOREM IPSUM",
            "oremL psumi",
            MatchMode::Icase,
            Fit::Auto,
        ),
    )
    .expect("edit runs");
    assert_eq!(r.changes.len(), 1, "{:?}", r.failed);
    assert_eq!(r.changes[0].font_source, "exact-embedded");
    assert_eq!(r.changes[0].collateral_pixels, 0);
    assert!(r.changes[0].before_png.starts_with(b"\x89PNG"));
    assert!(r.changes[0].after_png.len() <= 200_000);
    let r = edit(
        &pdf,
        &request(EditOp::Replace, "Lor", "X", MatchMode::Word, Fit::Auto),
    )
    .expect("edit runs");
    assert_eq!(r.unmatched.len(), 1, "a word match needs whole words");
    let r = edit(
        &pdf,
        &request(
            EditOp::Replace,
            r"(\w+) ipsum",
            "$1 muspi",
            MatchMode::Regex,
            Fit::Auto,
        ),
    )
    .expect("edit runs");
    assert_eq!(r.changes.len(), 1, "{:?}", r.failed);
    assert_eq!(r.changes[0].replace, "Lorem muspi");
    // Every stream the edit did not touch keeps its exact bytes.
    let before = lopdf::Document::load_mem(&pdf).expect("input parses");
    let after = lopdf::Document::load_mem(&r.pdf).expect("output parses");
    let mut same = 0;
    for (id, obj) in &before.objects {
        let (Ok(a), Ok(b)) = (
            obj.as_stream(),
            after.get_object(*id).and_then(|o| o.as_stream()),
        ) else {
            continue;
        };
        if a.content == b.content {
            same += 1;
        }
    }
    assert!(same > 0);
}

#[test]
fn invalid_regex_is_an_invalid_request() {
    let Some(pdf) = common::load(TRIVIAL) else {
        return;
    };
    let err = edit(
        &pdf,
        &request(EditOp::Replace, "(", "x", MatchMode::Regex, Fit::Auto),
    )
    .expect_err("refused");
    assert!(matches!(
        err,
        EditError::Engine(pdfedit_engine::Error::InvalidRequest(_))
    ));
}

#[test]
fn signed_document_needs_break_signature() {
    let Some(pdf) = common::load("sig-pades-lta-3sigs-dss-timestamp.pdf") else {
        return;
    };
    let mut req = request(
        EditOp::Replace,
        "Hello",
        "Howdy",
        MatchMode::Exact,
        Fit::Auto,
    );
    let err = edit(&pdf, &req).expect_err("refused");
    assert!(matches!(err, EditError::SignedDocument));
    req.options = EditOptions {
        break_signature: true,
        ..EditOptions::default()
    };
    assert!(edit(&pdf, &req).is_ok());
}

/// Issue 15 item 7: a same-length anagram of a word of a form's printed label was refused
/// as "would overlap other text": the new text's box (the font's ascent and descent)
/// touched the lines above and below, as the old text's box drawn the same way did.
#[test]
fn same_length_anagram_on_a_tight_form_label_is_not_an_overlap() {
    let Some(pdf) = common::load("misc-incremental-update-irs-1040v-form.pdf") else {
        return;
    };
    for (find, new) in [("payable", "elbayap"), ("United", "detinU")] {
        let request = EditRequest {
            edits: vec![Edit {
                index: 0,
                op: EditOp::Replace,
                find: find.into(),
                replace: new.into(),
                scope: Scope {
                    occurrence: Some(Occurrence::First),
                    pages: Some(vec![1]),
                    ..Scope::default()
                },
                ..Edit::default()
            }],
            ..EditRequest::default()
        };
        let r = edit(&pdf, &request).expect("edit runs");
        assert!(r.failed.is_empty(), "{find}: {:?}", r.failed);
        assert_eq!(r.changes.len(), 1, "{find}");
        assert!(r.changes[0].verified && r.changes[0].collateral_pixels == 0);
    }
}
