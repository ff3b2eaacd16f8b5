//! A phrase wrapped in a narrow column beside another column: the page's lines sorted top
//! to bottom put the other column's line between the two parts, and the redaction must
//! still find and remove both parts (verified, the rest of both columns intact).

mod common;

/// Left column (x 40): "Filing status: Married filing" / "jointly or widowed"; right
/// column (x 200): a line whose baseline lies between the two left lines, and another.
fn two_columns() -> Vec<u8> {
    let content = "BT /F1 8 Tf 40 700 Td (Filing status: Married filing) Tj \
                   0 -10 Td (jointly or widowed) Tj ET\n\
                   BT /F1 8 Tf 200 704 Td (Capital gains go on line six) Tj \
                   0 -10 Td (Other income on line seven) Tj ET\n";
    common::helvetica_page(content.as_bytes(), 400, 792)
}

#[test]
fn a_phrase_wrapped_in_a_narrow_column_is_redacted() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = two_columns();
    let before = common::pdftotext(&pdf, &[]).expect("pdftotext reads");
    assert!(before.contains("jointly"), "{before}");
    let r = common::redact(&pdf, "Married filing jointly");
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
