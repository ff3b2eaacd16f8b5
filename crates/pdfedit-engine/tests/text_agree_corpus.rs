//! Reading and finding agree on the corpus pages where they used to part (issue #15):
//! WeasyPrint's Arabic clusters (glyphs its `/ToUnicode` maps to nothing), the Medicare
//! form's 45° watermark, and a Kampo gazette column that begins with "る。".

mod common;

use pdfedit_engine::edit::{
    edit, locate, Edit, EditOp, EditOptions, EditRequest, EditResult, Occurrence, Scope, Watermark,
};
use pdfedit_engine::PageText;

const ARABIC: &str = "font-cid-tt-arabic-weasyprint.pdf";

fn request(op: EditOp, find: &str, replace: &str, scope: Scope) -> EditRequest {
    EditRequest {
        edits: vec![Edit {
            index: 0,
            op,
            find: find.into(),
            replace: replace.into(),
            scope,
            ..Edit::default()
        }],
        options: EditOptions {
            watermark: Watermark::Off,
            watermark_off_allowed: true,
            break_signature: true,
            ..EditOptions::default()
        },
        ..EditRequest::default()
    }
}

fn first(page: u32) -> Scope {
    Scope {
        pages: Some(vec![page]),
        occurrence: Some(Occurrence::First),
        ..Scope::default()
    }
}

/// Whether `find` is found on `page` inside the span `span_id` by a replace and by a
/// redaction (the edit's find stage).
fn found_in_span(pdf: &[u8], page: u32, span_id: &str, find: &str) -> [bool; 2] {
    [EditOp::Replace, EditOp::Redact].map(|op| {
        let scope = Scope {
            span_ids: Some(vec![span_id.to_string()]),
            ..first(page)
        };
        let r = locate(pdf, &request(op, find, "x", scope)).expect("locate runs");
        r.unmatched.is_empty() && r.failed.iter().all(|f| f.reason != "scanned_text")
    })
}

/// The spans of `page` whose text holds `word` as a word.
fn spans_with<'a>(pages: &'a [PageText], page: u32, word: &str) -> Vec<&'a pdfedit_engine::Span> {
    pages
        .iter()
        .filter(|p| p.page == page)
        .flat_map(|p| p.spans.iter())
        .filter(|s| s.text.split_whitespace().any(|w| w == word))
        .collect()
}

fn reason(r: &EditResult) -> Option<String> {
    r.failed.first().map(|f| f.reason.to_string())
}

#[test]
fn reading_gives_no_text_for_glyphs_mapped_to_nothing() {
    let Some(pdf) = common::load(ARABIC) else {
        return;
    };
    let text = pdfedit_engine::read_text(&pdf, None, None, true, false).expect("reads");
    let plain = text.pages[0].plain_text();
    // PDFium gives those glyphs their codes (U+03F2, U+0392, U+03F4, U+02F4…).
    assert!(
        !plain
            .chars()
            .any(|c| ('\u{0250}'..='\u{03FF}').contains(&c)),
        "reading invents text from glyph codes: {plain:?}"
    );
    // The cluster's silent glyphs give their ink to the span of the carrying glyph: the
    // Arabic word's span covers the whole word (about 25 pt at 16 pt), not one letter.
    let arabic = text.pages[0]
        .spans
        .iter()
        .filter(|s| {
            s.text
                .chars()
                .any(|c| ('\u{0600}'..='\u{06FF}').contains(&c))
        })
        .map(|s| s.bbox[2] - s.bbox[0])
        .fold(0.0f32, f32::max);
    assert!(arabic > 20.0, "the Arabic word's span is {arabic} pt wide");
}

#[test]
fn a_word_after_a_cluster_is_replaced_whole() {
    let Some(pdf) = common::load(ARABIC) else {
        return;
    };
    // WeasyPrint maps the "h" glyph to the Arabic word before it plus "h".
    let r = edit(
        &pdf,
        &request(EditOp::Replace, "habibi", "abibih", first(1)),
    )
    .expect("edit");
    assert!(r.unmatched.is_empty() && r.failed.is_empty(), "{r:?}");
    assert!(r.changes[0].verified);
    let Some(after) = common::pdftotext(&r.pdf, &[]) else {
        return;
    };
    assert!(
        after.contains("abibih") && !after.contains("habibi"),
        "{after:?}"
    );
    // The Arabic word is still read once: from its own glyphs.
    let before = common::pdftotext(&pdf, &[]).expect("pdftotext");
    let word = "\u{64a}\u{628}\u{64a}\u{628}\u{64e}\u{62d}";
    assert_eq!(before.matches(word).count(), 2, "{before:?}");
    assert_eq!(after.matches(word).count(), 1, "{after:?}");
    let read = pdfedit_engine::read_text(&r.pdf, None, None, true, false).expect("reads");
    assert!(read.pages[0].plain_text().contains("abibih"));
}

#[test]
fn part_of_a_cluster_is_not_replaced() {
    let Some(pdf) = common::load(ARABIC) else {
        return;
    };
    // "بيبي": letters drawn by the cluster's silent glyphs, carried by its first glyph.
    let part = "\u{628}\u{64a}\u{628}\u{64a}";
    let r = edit(&pdf, &request(EditOp::Replace, part, "\u{628}", first(1))).expect("edit");
    assert_eq!(reason(&r).as_deref(), Some("unsupported_layout"), "{r:?}");
    assert!(r.failed[0]
        .message
        .contains("cannot change part of a glyph"));
}

#[test]
fn diagonal_watermark_words_are_found_in_their_span() {
    let Some(pdf) = common::load("form-cms1490s-medicare-18p-partly-filled.pdf") else {
        return;
    };
    let text =
        pdfedit_engine::read_text(&pdf, None, Some(vec![15, 16]), true, false).expect("reads");
    for (page, word) in [(15, "WITH"), (16, "DO"), (15, "CLAIM")] {
        let spans = spans_with(&text.pages, page, word);
        let diagonal: Vec<_> = spans
            .iter()
            .filter(|s| (s.rotation - 45.0).abs() < 1.0)
            .collect();
        assert!(!diagonal.is_empty(), "p{page}: no 45° span holds {word:?}");
        for s in diagonal {
            assert_eq!(
                found_in_span(&pdf, page, &s.span_id, word),
                [true, true],
                "p{page} {word:?} in {:?}",
                s.text
            );
        }
    }
}

#[test]
fn a_column_begun_by_a_full_stop_is_found_in_its_span() {
    let Some(files) = common::corpus() else {
        return;
    };
    let Some(f) = files.iter().find(|f| f.name.contains("kampo")) else {
        return;
    };
    if !common::init_pdfium() {
        return;
    }
    let pdf = std::fs::read(&f.path).expect("corpus file");
    let pw = f.password.as_deref();
    let text = pdfedit_engine::read_text(&pdf, pw, Some(vec![1]), true, false).expect("reads");
    let spans = spans_with(&text.pages, 1, "る。");
    assert!(!spans.is_empty(), "page 1 has a span 'る。'");
    for s in spans {
        assert_eq!(
            found_in_span(&pdf, 1, &s.span_id, "る。"),
            [true, true],
            "{s:?}"
        );
    }
}
