//! Insert: inline after an anchor (same font, size and baseline, read in order), on a new
//! line below it (same left edge), at a point, and refused where it would cover text.

mod common;

use std::process::Command;

use pdfedit_engine::edit::{edit, At, Edit, EditOp, EditRequest, EditResult, InsertSpec};
use pdfedit_engine::Span;

const INVOICE: &str = "doc-invoice-itextsharp-demo.pdf";
const TRIVIAL: &str = "font-tt-subset-libreoffice-trivial.pdf";
/// Word 2016: a line is a `TJ` per run, runs placed by relative `Td` moves.
const WORD: &str = "font-tt-subset-word2016-4p.pdf";
/// pdflatex: one justified `TJ` per line.
const LATEX: &str = "font-type1-pdflatex-4p.pdf";

fn load(name: &str) -> Option<Vec<u8>> {
    if !common::init_pdfium() {
        return None;
    }
    common::corpus()?;
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(name);
    std::fs::read(path).ok()
}

fn insert(pdf: &[u8], text: &str, at: At) -> EditResult {
    let request = EditRequest {
        edits: vec![Edit {
            op: EditOp::Insert,
            insert: Some(InsertSpec {
                text: text.into(),
                at,
            }),
            ..Edit::default()
        }],
        ..EditRequest::default()
    };
    edit(pdf, &request).expect("insert runs")
}

fn pdftotext(pdf: &[u8], tag: &str) -> String {
    let path =
        std::env::temp_dir().join(format!("pdfedit-insert-{}-{tag}.pdf", std::process::id()));
    std::fs::write(&path, pdf).expect("temp file");
    let out = Command::new("pdftotext").arg(&path).arg("-").output();
    let _ = std::fs::remove_file(&path);
    out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn spans(pdf: &[u8]) -> Vec<Span> {
    pdfedit_engine::read_text(pdf, None, Some(vec![1]), true, false)
        .expect("text")
        .pages
        .remove(0)
        .spans
}

fn span_with<'a>(spans: &'a [Span], text: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.text.contains(text))
        .unwrap_or_else(|| panic!("no span with {text:?}"))
}

#[test]
fn inline_after_an_anchor_takes_its_font_size_and_baseline() {
    let Some(pdf) = load(INVOICE) else { return };
    let r = insert(
        &pdf,
        "Ltd",
        At::After {
            phrase: "Bayside Wholesale".into(),
            newline: false,
            page: None,
        },
    );
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert_eq!(r.changes.len(), 1);
    let c = &r.changes[0];
    assert_eq!(c.op, EditOp::Insert);
    assert_eq!(c.replace, "Ltd");
    assert!(c.verified);
    assert!(c.font_source.starts_with("exact-"), "{}", c.font_source);
    assert!(collapse(&pdftotext(&r.pdf, "inline")).contains("Bayside Wholesale Ltd"));
    let before = spans(&pdf);
    let after = spans(&r.pdf);
    let old = span_with(&before, "Bayside");
    let new = span_with(&after, "Ltd");
    assert_eq!(new.font, old.font);
    assert!((new.size - old.size).abs() < 0.01);
    assert!(
        (new.bbox[3] - old.bbox[3]).abs() < 0.5,
        "{:?} vs {:?}",
        new.bbox,
        old.bbox
    );
}

#[test]
fn a_new_line_below_the_anchor_starts_at_the_paragraph_edge() {
    let Some(pdf) = load(TRIVIAL) else { return };
    let r = insert(
        &pdf,
        "nova linea addita.",
        At::After {
            phrase: "takimata sanctus est Lorem ipsum dolor sit amet.".into(),
            newline: true,
            page: Some(1),
        },
    );
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    let c = &r.changes[0];
    assert!(c.verified && c.font_source.starts_with("exact-"), "{c:?}");
    let text = collapse(&pdftotext(&r.pdf, "newline"));
    assert!(
        text.contains("Lorem ipsum dolor sit amet. nova linea addita."),
        "{text}"
    );
    let after = spans(&r.pdf);
    let anchor = span_with(&after, "takimata");
    let new = span_with(&after, "nova linea");
    let first = span_with(&after, "Lorem ipsum dolor sit amet, consetetur");
    assert_eq!(new.font, anchor.font);
    assert!((new.size - anchor.size).abs() < 0.01);
    assert!(
        (new.bbox[0] - first.bbox[0]).abs() < 1.0,
        "{:?} vs {:?}",
        new.bbox,
        first.bbox
    );
    assert!(new.bbox[1] > anchor.bbox[1]);
}

#[test]
fn at_a_point_in_the_style_of_the_nearest_text() {
    let Some(pdf) = load(INVOICE) else { return };
    let r = insert(
        &pdf,
        "PAID IN FULL",
        At::Point {
            page: 1,
            x: 60.0,
            y: 770.0,
        },
    );
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(r.changes[0].verified);
    assert!(pdftotext(&r.pdf, "point").contains("PAID IN FULL"));
}

#[test]
fn text_over_other_text_is_refused_and_the_document_unchanged() {
    let Some(pdf) = load(TRIVIAL) else { return };
    let first = span_with(&spans(&pdf), "Lorem").bbox;
    let r = insert(
        &pdf,
        "over",
        At::Point {
            page: 1,
            x: f64::from(first[0]) + 5.0,
            y: f64::from(first[3]) - 1.0,
        },
    );
    assert!(r.changes.is_empty());
    assert_eq!(r.failed[0].reason, "collateral_change");
    assert_eq!(r.pdf, pdf);
}

#[test]
fn an_anchor_that_is_not_there_is_unmatched() {
    let Some(pdf) = load(TRIVIAL) else { return };
    let r = insert(
        &pdf,
        "x",
        At::After {
            phrase: "No such phrase".into(),
            newline: true,
            page: None,
        },
    );
    assert_eq!(r.unmatched.len(), 1);
    assert!(r.changes.is_empty());
}

fn after(phrase: &str) -> At {
    At::After {
        phrase: phrase.into(),
        newline: false,
        page: Some(1),
    }
}

/// The word `word` on the line at `y` (pdftotext's yMin), as `(x, y)`.
fn word_at(words: &[(String, f64, f64)], word: &str, y: f64) -> Option<(f64, f64)> {
    words
        .iter()
        .find(|w| w.0 == word && (w.2 - y).abs() < 2.0)
        .map(|w| (w.1, w.2))
}

/// Inserts `text` after `anchor` in the middle of a line of `pdf` and checks the result:
/// applied and verified, the line reads anchor, text, rest in order, the inserted glyphs
/// share the anchor's span (font, size, baseline), the rest of the line (its word
/// `rest_word`) moved right by about the new text's width, and the next line (`next_word`)
/// stayed.
fn check_mid_line(pdf: &[u8], anchor: &str, text: &str, rest: &str, next_word: &str) {
    let rest_word = rest.split(' ').next_back().expect("rest");
    let Some(before) = common::pdftotext_words(pdf) else {
        return;
    };
    let first_anchor_word = anchor.split(' ').next().expect("anchor");
    let y = before
        .iter()
        .find(|w| w.0 == first_anchor_word)
        .expect("anchor on page 1")
        .2;
    let (old_x, _) = word_at(&before, rest_word, y).expect("rest on the line");
    let next_y = before
        .iter()
        .find(|w| w.0 == next_word && w.2 > y + 1.0)
        .expect("next line")
        .2;
    let r = insert(pdf, text, after(anchor));
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert_eq!(r.changes.len(), 1);
    assert!(r.changes[0].verified);
    let read = collapse(&pdftotext(&r.pdf, "mid"));
    let line = format!("{anchor} {text} {rest}");
    assert!(read.contains(&line), "{line:?} not in {read}");
    let words = common::pdftotext_words(&r.pdf).expect("pdftotext");
    let (new_x, _) = word_at(&words, rest_word, y).expect("rest still on the line");
    let (ins_x, _) = word_at(&words, text, y).expect("inserted word on the line");
    let (anchor_end_x, _) = word_at(&before, anchor.split(' ').next_back().unwrap(), y).unwrap();
    assert!(ins_x > anchor_end_x, "the new word comes after the anchor");
    // The new word and a space: at least its letters' width, at most a few ems.
    let pushed = new_x - old_x;
    assert!(
        pushed > 2.0 * text.len() as f64 && pushed < 12.0 * text.len() as f64,
        "the rest moved by {pushed} pt"
    );
    let (nx, _) = word_at(&words, next_word, next_y).expect("the next line stays");
    let (old_nx, _) = word_at(&before, next_word, next_y).expect("next line");
    assert!(
        (nx - old_nx).abs() < 0.1,
        "the next line moved: {old_nx} → {nx}"
    );
    // The inserted glyphs are in the anchor's span: same font, size and baseline.
    let old = spans(pdf);
    let new = spans(&r.pdf);
    let old_span = span_with(&old, anchor);
    let new_span = span_with(&new, &format!("{anchor} {text}"));
    assert_eq!(new_span.font, old_span.font);
    assert!((new_span.size - old_span.size).abs() < 0.01);
    assert!((new_span.bbox[3] - old_span.bbox[3]).abs() < 0.5);
}

#[test]
fn mid_line_in_one_tj_pushes_the_rest_of_the_line_on() {
    let Some(pdf) = load(WORD) else { return };
    check_mid_line(&pdf, "has the", "now", "following consequences:", "The");
}

#[test]
fn mid_line_in_word_td_runs_pushes_the_rest_and_restores_the_line_matrix() {
    // "In general, the alpha channel should be avoided to benefit from significant |Td|
    // memory savings.": the run after the `Td` moves too, and the next line stays.
    let Some(pdf) = load(WORD) else { return };
    check_mid_line(
        &pdf,
        "In general,",
        "now",
        "the alpha channel should be avoided to benefit from significant memory savings.",
        "The",
    );
}

#[test]
fn mid_line_without_room_for_the_rest_is_refused_with_overflow() {
    // A justified line: pushing its end well past the margin is refused, nothing changes.
    let Some(pdf) = load(LATEX) else { return };
    let r = insert(
        &pdf,
        "informationinformationinformation",
        after("Hello, here is"),
    );
    assert!(r.changes.is_empty());
    assert_eq!(r.failed.len(), 1, "{:?}", r.failed);
    assert_eq!(r.failed[0].reason, "overflow", "{:?}", r.failed);
    assert_eq!(r.pdf, pdf);
}

/// A CJK subset has no Latin letters: the anchor keeps its own codes and font, and only the
/// inserted word goes to the font chain (before, the anchor and the word had to share one
/// font, and none drew both: `missing_glyphs`).
#[test]
fn an_anchor_whose_font_lacks_the_new_letters_keeps_its_own_glyphs() {
    let Some(pdf) = load("font-cid-tt-chinese-tables.pdf") else {
        return;
    };
    let anchor = "企业资信状况";
    let r = insert(&pdf, "NEW", after(anchor));
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert_eq!(r.changes.len(), 1);
    let c = &r.changes[0];
    assert!(c.verified);
    assert!(!c.font_source.starts_with("exact-"), "{}", c.font_source);
    let text = collapse(&pdftotext(&r.pdf, "cjk"));
    assert!(text.contains(&format!("{anchor} NEW")), "{text}");
    let page = |pdf: &[u8]| {
        pdfedit_engine::read_text(pdf, None, None, true, false)
            .expect("text")
            .pages
    };
    let (before, after) = (page(&pdf), page(&r.pdf));
    let find = |pages: &[pdfedit_engine::PageText], t: &str| {
        pages
            .iter()
            .flat_map(|p| p.spans.iter())
            .find(|s| s.text.contains(t))
            .cloned()
            .unwrap_or_else(|| panic!("no span with {t:?}"))
    };
    let (old, kept, new) = (
        find(&before, anchor),
        find(&after, anchor),
        find(&after, "NEW"),
    );
    assert_eq!(kept.font, old.font, "the anchor keeps its own font");
    assert_ne!(new.font, old.font);
    assert!(
        (new.size - old.size).abs() < 0.01,
        "{} vs {}",
        new.size,
        old.size
    );
}

/// A heading row of three columns ("tracking", "文字ツメ (mojitsume)", "kerning"): an insert
/// in the middle one pushes on its own rest up to the column gap, the next column stays, and
/// the gap stays wider than a word gap; a word too long for that is refused.
#[test]
fn mid_line_before_a_column_gap_pushes_only_up_to_the_gap() {
    let Some(pdf) = load("font-cid-cff-identityv-japanese-adobe.pdf") else {
        return;
    };
    let Some(before) = common::pdftotext_words(&pdf) else {
        return;
    };
    let y = before
        .iter()
        .find(|w| w.0 == "(mojitsume)")
        .expect("heading")
        .2;
    let (rest_x, _) = word_at(&before, "(mojitsume)", y).expect("rest");
    let (next_x, _) = word_at(&before, "kerning", y).expect("next column");
    let r = insert(&pdf, "NEW", after("文字ツメ"));
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(r.changes.iter().all(|c| c.verified));
    let words = common::pdftotext_words(&r.pdf).expect("pdftotext");
    assert!(collapse(&pdftotext(&r.pdf, "gap")).contains("文字ツメ NEW (mojitsume)"));
    let (moved_x, _) = word_at(&words, "(mojitsume)", y).expect("rest on the line");
    let (kept_x, _) = word_at(&words, "kerning", y).expect("next column on the line");
    assert!(
        moved_x > rest_x + 20.0,
        "the rest moved {rest_x} → {moved_x}"
    );
    assert!((kept_x - next_x).abs() < 0.1, "the next column moved");
    // The moved rest's right edge (xMax), from pdftotext's word boxes.
    let html = common::pdftotext(&r.pdf, &["-bbox", "-f", "1", "-l", "1"]).expect("pdftotext");
    let end: f64 = html
        .lines()
        .find(|l| l.contains(">(mojitsume)<"))
        .and_then(|l| l.split("xMax=\"").nth(1)?.split('"').next()?.parse().ok())
        .expect("rest's box");
    assert!(
        kept_x - end > 30.0,
        "the column gap closed to {} pt",
        kept_x - end
    );
    let r = insert(&pdf, "文字ツメ", after("文字ツメ"));
    assert_eq!(r.failed.len(), 1, "{:?}", r.changes);
    assert_eq!(r.failed[0].reason, "overflow");
}
