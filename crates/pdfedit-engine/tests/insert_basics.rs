//! Insert: inline after an anchor (same font, size and baseline, read in order), on a new
//! line below it (same left edge), at a point, and refused where it would cover text.

mod common;

use std::process::Command;

use pdfedit_engine::edit::{edit, At, Edit, EditOp, EditRequest, EditResult, InsertSpec};
use pdfedit_engine::Span;

const INVOICE: &str = "doc-invoice-itextsharp-demo.pdf";
const TRIVIAL: &str = "font-tt-subset-libreoffice-trivial.pdf";

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
