//! The 'Edited' mark of SPEC rule 12 (`EditOptions::watermark`): on every edited page of a
//! flagged document, never on an ordinary one unless asked, refused off on a flagged
//! document unless allowed, never on a redaction; it extracts as text and sits where the
//! render of the page showed nothing.

mod common;

use pdf_render::raster::{rasterize_page, Raster};
use pdfedit_engine::edit::{
    edit, Edit, EditError, EditOp, EditOptions, EditRequest, EditResult, Watermark,
};

const INVOICE: &[&str] = &[
    "ACME Tools Ltd",
    "INVOICE No. 2026-0117",
    "Item              Qty    Price",
    "Hammer            2      24.00",
    "Total due: EUR 48.00",
];
const LETTER: &[&str] = &[
    "Dear Ms Smith,",
    "Thank you for your letter of 3 March.",
    "Yours sincerely, John",
];

/// A Letter page drawing `lines` in Helvetica 11 from the top, and `extra` content after.
fn page(lines: &[&str], extra: &str) -> Vec<u8> {
    let mut c = String::from("BT /F1 11 Tf 14 TL 56 740 Td\n");
    for l in lines {
        c.push_str(&format!("({l}) Tj T*\n"));
    }
    c.push_str("ET\n");
    c.push_str(extra);
    common::helvetica_page(c.as_bytes(), 612, 792)
}

fn request(op: EditOp, find: &str, by: &str, watermark: Watermark, allowed: bool) -> EditRequest {
    EditRequest {
        password: None,
        edits: vec![Edit {
            index: 0,
            op,
            find: find.into(),
            replace: by.into(),
            ..Edit::default()
        }],
        options: EditOptions {
            watermark,
            watermark_off_allowed: allowed,
            ..EditOptions::default()
        },
    }
}

fn run(pdf: &[u8], req: &EditRequest) -> EditResult {
    let r = edit(pdf, req).expect("edit runs");
    assert!(!r.changes.is_empty(), "the edit applied: {:?}", r.failed);
    r
}

fn text(pdf: &[u8]) -> Option<String> {
    common::pdftotext(pdf, &[])
}

fn render(pdf: &[u8]) -> Raster {
    rasterize_page(pdf, None, 0, 2.0).expect("renders")
}

/// The box (pixels) of what differs between two renders of one page.
fn diff_box(a: &Raster, b: &Raster) -> Option<[usize; 4]> {
    assert_eq!((a.width, a.height), (b.width, b.height));
    let w = a.width as usize;
    let mut out: Option<[usize; 4]> = None;
    for (i, (p, q)) in a.pixels.chunks(3).zip(b.pixels.chunks(3)).enumerate() {
        if p != q {
            let (x, y) = (i % w, i / w);
            let o = out.get_or_insert([x, y, x, y]);
            *o = [o[0].min(x), o[1].min(y), o[2].max(x), o[3].max(y)];
        }
    }
    out
}

/// Whether every pixel of `r` inside `b` (pixels, inclusive) is white.
fn white(r: &Raster, b: [usize; 4]) -> bool {
    let w = r.width as usize;
    (b[1]..=b[3]).all(|y| (b[0]..=b[2]).all(|x| r.pixels[(y * w + x) * 3..][..3] == [255; 3]))
}

#[test]
fn a_flagged_document_is_marked_by_default_where_nothing_was() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = page(INVOICE, "");
    let marked = run(
        &pdf,
        &request(EditOp::Replace, "Hammer", "Wrench", Watermark::Auto, false),
    );
    assert_eq!(marked.flags.len(), 1, "{:?}", marked.flags);
    assert_eq!(marked.flags[0].kind, "invoice");
    assert_eq!(marked.marked_pages, vec![1]);
    assert!(
        marked.warnings.contains(&"edited_mark".to_string()),
        "{:?}",
        marked.warnings
    );
    assert!(!marked
        .warnings
        .contains(&"edited_mark_overlaps".to_string()));
    // The same edit, allowed off: the only difference between the two outputs is the mark,
    // and where it is the unmarked output showed nothing.
    let plain = run(
        &pdf,
        &request(EditOp::Replace, "Hammer", "Wrench", Watermark::Off, true),
    );
    assert!(plain.marked_pages.is_empty());
    assert!(!plain.warnings.iter().any(|w| w.starts_with("edited_mark")));
    let (with, without) = (render(&marked.pdf), render(&plain.pdf));
    let b = diff_box(&with, &without).expect("the mark is drawn");
    assert!(white(&without, b), "the mark covers content at {b:?}");
    // Small: under 60 × 12 points, and inside the bottom tenth of the page.
    assert!(b[2] - b[0] < 120 && b[3] - b[1] < 24, "{b:?}");
    assert!(b[1] > (with.height as usize) * 9 / 10, "{b:?}");
    if let Some(t) = text(&marked.pdf) {
        assert!(t.contains("Edited"), "{t}");
        assert!(t.contains("Wrench"), "{t}");
    }
    if let Some(t) = text(&plain.pdf) {
        assert!(!t.contains("Edited"), "{t}");
    }
}

#[test]
fn the_mark_moves_away_from_drawn_content_the_text_layer_does_not_show() {
    if !common::init_pdfium() {
        return;
    }
    // Black bars along the whole bottom edge: no glyph there, only paths. The mark must
    // leave the bottom edge for a clear place at the top.
    let bars = "0 g 0 0 612 40 re f\n";
    let pdf = page(INVOICE, bars);
    let marked = run(
        &pdf,
        &request(EditOp::Replace, "Hammer", "Wrench", Watermark::Auto, false),
    );
    let plain = run(
        &pdf,
        &request(EditOp::Replace, "Hammer", "Wrench", Watermark::Off, true),
    );
    assert!(!marked
        .warnings
        .contains(&"edited_mark_overlaps".to_string()));
    let (with, without) = (render(&marked.pdf), render(&plain.pdf));
    let b = diff_box(&with, &without).expect("the mark is drawn");
    assert!(white(&without, b), "the mark covers content at {b:?}");
    assert!(b[3] < (with.height as usize) / 10, "at the top: {b:?}");
}

#[test]
fn an_ordinary_document_is_marked_only_when_asked() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = page(LETTER, "");
    for (w, expect) in [
        (Watermark::Auto, false),
        (Watermark::Off, false),
        (Watermark::On, true),
    ] {
        let r = run(&pdf, &request(EditOp::Replace, "March", "April", w, false));
        assert!(r.flags.is_empty(), "{:?}", r.flags);
        assert_eq!(!r.marked_pages.is_empty(), expect, "{w:?}");
        assert_eq!(
            r.warnings.contains(&"edited_mark".to_string()),
            expect,
            "{w:?}"
        );
        if let Some(t) = text(&r.pdf) {
            assert_eq!(t.contains("Edited"), expect, "{w:?}: {t}");
        }
    }
}

#[test]
fn off_on_a_flagged_document_needs_the_allowance() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = page(INVOICE, "");
    let refused = edit(
        &pdf,
        &request(EditOp::Replace, "Hammer", "Wrench", Watermark::Off, false),
    );
    match refused {
        Err(EditError::WatermarkOffForbidden(kinds)) => assert_eq!(kinds, "invoice"),
        other => panic!(
            "expected WatermarkOffForbidden, got {:?}",
            other.map(|r| r.warnings)
        ),
    }
}

#[test]
fn a_redaction_is_never_marked() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = page(INVOICE, "");
    for w in [Watermark::Auto, Watermark::On] {
        let r = run(&pdf, &request(EditOp::Redact, "Hammer", "", w, false));
        assert_eq!(r.flags.len(), 1);
        assert!(r.marked_pages.is_empty(), "{w:?}");
        assert!(
            !r.warnings.iter().any(|x| x.starts_with("edited_mark")),
            "{w:?}"
        );
        if let Some(t) = text(&r.pdf) {
            assert!(!t.contains("Edited") && !t.contains("Hammer"), "{t}");
        }
    }
}

#[test]
fn only_edited_pages_of_a_corpus_statement_are_marked() {
    let Some(pdf) = common::load("doc-ledger-statement-opening-balance.pdf") else {
        return;
    };
    let t = text(&pdf);
    // A word of page 1 only (pdftotext pages are split by form feeds).
    let Some(first) = t
        .as_ref()
        .and_then(|t| t.split('\u{c}').next().map(str::to_string))
    else {
        return;
    };
    assert!(first.contains("Opening"), "{first}");
    let r = run(
        &pdf,
        &EditRequest {
            edits: vec![Edit {
                index: 0,
                op: EditOp::Replace,
                find: "Opening".into(),
                replace: "Starting".into(),
                scope: pdfedit_engine::edit::Scope {
                    pages: Some(vec![1]),
                    ..Default::default()
                },
                ..Edit::default()
            }],
            ..EditRequest::default()
        },
    );
    assert_eq!(r.flags[0].kind, "bank_statement", "{:?}", r.flags);
    assert_eq!(r.marked_pages, vec![1]);
    let out = text(&r.pdf).expect("pdftotext");
    let pages: Vec<&str> = out.split('\u{c}').collect();
    assert!(pages[0].contains("Edited"), "{}", pages[0]);
    assert!(!pages[1].contains("Edited"), "{}", pages[1]);
}

#[test]
fn on_flagged_corpus_documents_the_mark_covers_nothing_the_page_drew() {
    let cases = [
        ("doc-invoice-itextsharp-demo.pdf", "INV-0046", "INV-0064"),
        (
            "doc-ledger-statement-opening-balance.pdf",
            "Opening",
            "Starting",
        ),
    ];
    for (name, find, by) in cases {
        let Some(pdf) = common::load(name) else {
            return;
        };
        let marked = run(
            &pdf,
            &request(EditOp::Replace, find, by, Watermark::Auto, false),
        );
        let plain = run(
            &pdf,
            &request(EditOp::Replace, find, by, Watermark::Off, true),
        );
        assert!(!marked.flags.is_empty(), "{name}");
        assert!(
            !marked
                .warnings
                .contains(&"edited_mark_overlaps".to_string()),
            "{name}: {:?}",
            marked.warnings
        );
        for (i, &page) in marked.marked_pages.iter().enumerate() {
            let with = rasterize_page(&marked.pdf, None, page - 1, 2.0).expect("renders");
            let without = rasterize_page(&plain.pdf, None, page - 1, 2.0).expect("renders");
            let b = diff_box(&with, &without).expect("the mark is drawn");
            assert!(
                white(&without, b),
                "{name} page {page}: covers content at {b:?}"
            );
            assert!(b[2] - b[0] < 120 && b[3] - b[1] < 24, "{name}: {b:?}");
            println!("{name}: mark {i} on page {page} at pixels {b:?}");
        }
    }
}
