//! Reading right-to-left text (issue #15): `/v1/text` gives an Arabic word in logical
//! order (as a user types it), both in the corpus's WeasyPrint file (one glyph's
//! `/ToUnicode` holds the whole word, which PDFium returns reversed around the haraka)
//! and in the engine's own output after an Arabic replace (shaped glyphs drawn left to
//! right, which PDFium returns scrambled).

mod common;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, MatchMode};
use pdfedit_engine::edit::{EditOptions, Occurrence, Scope, Watermark};

const FILE: &str = "font-cid-tt-arabic-weasyprint.pdf";
const LOGICAL: &str = "حَبيبي";

fn read(pdf: &[u8]) -> String {
    let r = pdfedit_engine::read_text(pdf, None, None, true, false).expect("text reads");
    r.pages
        .iter()
        .map(|p| p.plain_text())
        .collect::<Vec<_>>()
        .join("\n")
}

fn replace(pdf: &[u8], find: &str, new: &str) -> Vec<u8> {
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
            ..Edit::default()
        }],
        options: EditOptions {
            watermark: Watermark::Off,
            watermark_off_allowed: true,
            ..Default::default()
        },
        ..EditRequest::default()
    };
    let r = edit(pdf, &req).expect("edit runs");
    assert!(r.failed.is_empty() && r.unmatched.is_empty(), "edit failed");
    r.pdf
}

/// The text's words.
fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

#[test]
fn corpus_word_reads_in_logical_order() {
    if !common::init_pdfium() {
        return;
    }
    let Some(pdf) = common::load(FILE) else {
        return;
    };
    let text = read(&pdf);
    // The file draws "habibi حَبيبي"; its /ToUnicode also puts the Arabic word on the
    // first Latin glyph, so the word is read twice, each time in logical order.
    assert_eq!(text.matches(LOGICAL).count(), 2, "read {text:?}");
    assert!(words(&text).contains(&LOGICAL), "read {text:?}");
    assert!(text.contains("habibi"), "read {text:?}");
}

#[test]
fn replaced_arabic_reads_in_logical_order() {
    if !common::init_pdfium() {
        return;
    }
    let Some(pdf) = common::load(FILE) else {
        return;
    };
    for new in ["حَيببي", "سلام حَبيبي", "مرحبا"] {
        let out = replace(&pdf, LOGICAL, new);
        let text = read(&out);
        assert!(
            text.split('\n').any(|l| l.contains(new)),
            "after replacing with {new:?}, read {text:?}"
        );
    }
}
