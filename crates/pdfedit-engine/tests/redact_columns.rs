//! A phrase wrapped in a narrow column beside another column: the page's lines sorted top
//! to bottom put the other column's line between the two parts, and the redaction must
//! still find and remove both parts (verified, the rest of both columns intact).

mod common;

use lopdf::{dictionary, Document, Object, Stream};
use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest};

/// Left column (x 40): "Filing status: Married filing" / "jointly or widowed"; right
/// column (x 200): a line whose baseline lies between the two left lines, and another.
fn two_columns() -> Vec<u8> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let content = "BT /F1 8 Tf 40 700 Td (Filing status: Married filing) Tj \
                   0 -10 Td (jointly or widowed) Tj ET\n\
                   BT /F1 8 Tf 200 704 Td (Capital gains go on line six) Tj \
                   0 -10 Td (Other income on line seven) Tj ET\n";
    let contents = doc.add_object(Stream::new(dictionary! {}, content.as_bytes().to_vec()));
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), 400.into(), 792.into()],
        "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
        "Contents" => contents,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![Object::Reference(page)], "Count" => 1,
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut pdf = Vec::new();
    doc.save_to(&mut pdf).expect("saves");
    pdf
}

#[test]
fn a_phrase_wrapped_in_a_narrow_column_is_redacted() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = two_columns();
    let before = common::pdftotext(&pdf, &[]).expect("pdftotext reads");
    assert!(before.contains("jointly"), "{before}");
    let request = EditRequest {
        edits: vec![Edit {
            index: 0,
            op: EditOp::Redact,
            find: "Married filing jointly".into(),
            ..Edit::default()
        }],
        ..EditRequest::default()
    };
    let r = edit(&pdf, &request).expect("edit runs");
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(r.unmatched.is_empty());
    // One part per line, both verified.
    assert_eq!(r.changes.len(), 2, "{:?}", r.changes);
    assert!(r
        .changes
        .iter()
        .all(|c| c.verified && c.collateral_pixels == 0));
    assert!(r.residual.is_empty(), "{:?}", r.residual);
    let after = common::pdftotext(&r.pdf, &[]).expect("pdftotext reads");
    for gone in ["Married", "jointly"] {
        assert!(!after.contains(gone), "{gone:?} still in {after}");
    }
    for kept in [
        "Filing status:",
        "or widowed",
        "Capital gains",
        "line seven",
    ] {
        assert!(after.contains(kept), "{kept:?} lost from {after}");
    }
}
