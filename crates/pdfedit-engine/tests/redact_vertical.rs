//! Redaction keeps every other glyph where PDFium drew it: down a vertical (Identity-V)
//! column, where the removed glyphs' `TJ` numbers move the pen along y, and on pdfTeX
//! lines whose Type 1 `/Widths` carry decimals that PDFium cuts to whole units; a line
//! whose rest PDFium places an `f32` rounding away (not collateral); and a column set
//! character by character in a horizontal font (the kanpō gazette). Checked with PDFium's
//! own character positions before and after, outside the redacted boxes. Also glyphs whose
//! text and drawing differ (an Arabic word shaped into glyphs that carry no text but the
//! last; a `/ToUnicode` entry repeating that word on a Latin "h") and a Type 3 bitmap line
//! that PDFium rasterises a row taller once its first glyphs are gone.

mod common;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditOptions, EditRequest, EditResult, Scope};

fn run(pdf: &[u8], op: EditOp, find: &str, replace: &str) -> EditResult {
    let request = EditRequest {
        edits: vec![Edit {
            index: 0,
            op,
            find: find.into(),
            replace: replace.into(),
            scope: Scope::default(),
            ..Edit::default()
        }],
        options: EditOptions {
            break_signature: true,
            ..EditOptions::default()
        },
        ..EditRequest::default()
    };
    edit(pdf, &request).expect("edit runs")
}

fn redact(pdf: &[u8], find: &str) -> EditResult {
    run(pdf, EditOp::Redact, find, "")
}

/// (char, origin) of every glyph PDFium extracts on 0-based `page`.
fn chars(pdf: &[u8], page: u32) -> Vec<(char, (f32, f32))> {
    let doc = pdf_render::Document::open(pdf, None).expect("opens");
    doc.page_chars(page)
        .expect("chars")
        .into_iter()
        .filter(|c| !c.generated)
        .filter_map(|c| Some((c.ch?, c.origin)))
        .collect()
}

fn inside(p: (f32, f32), b: [f64; 4]) -> bool {
    let (x, y) = (f64::from(p.0), f64::from(p.1));
    x >= b[0] - 0.5 && x <= b[2] + 0.5 && y >= b[1] - 0.5 && y <= b[3] + 0.5
}

/// Every character of `before` outside the changes' boxes is still there after, at the
/// same origin within `tol` points; the number of such characters checked.
fn kept_in_place(before: &[u8], r: &EditResult, page: u32, tol: f32) -> usize {
    let boxes: Vec<[f64; 4]> = r
        .changes
        .iter()
        .filter(|c| c.page == page + 1)
        .map(|c| c.bbox)
        .collect();
    let after = chars(&r.pdf, page);
    let mut checked = 0;
    for (ch, o) in chars(before, page) {
        if ch.is_whitespace() || boxes.iter().any(|b| inside(o, *b)) {
            continue;
        }
        let best = after
            .iter()
            .filter(|(c, _)| *c == ch)
            .map(|(_, p)| (p.0 - o.0).abs().max((p.1 - o.1).abs()))
            .fold(f32::INFINITY, f32::min);
        assert!(
            best <= tol,
            "{ch:?} at {o:?} moved by {best} pt (page {})",
            page + 1
        );
        checked += 1;
    }
    checked
}

#[test]
fn a_redacted_column_keeps_the_next_glyphs_in_place() {
    let name = "font-cid-cff-identityv-japanese-adobe.pdf";
    let Some(pdf) = common::load(name) else {
        return;
    };
    // The middle of each column: the glyphs below it must not move up or down.
    let find = "イーハトーヴォ";
    let r = redact(&pdf, find);
    eprintln!(
        "{name}: {} changes, failed {:?}, residual {:?}",
        r.changes.len(),
        r.failed,
        r.residual
    );
    assert!(!r.changes.is_empty(), "{:?}", r.failed);
    assert!(r.changes.iter().all(|c| c.verified));
    // Some changes are columns (taller than wide).
    assert!(r
        .changes
        .iter()
        .any(|c| c.bbox[3] - c.bbox[1] > 3.0 * (c.bbox[2] - c.bbox[0])));
    let checked = kept_in_place(&pdf, &r, 0, 0.05);
    assert!(checked > 10, "only {checked} characters left to check");
}

#[test]
fn a_pdftex_line_keeps_its_rest_where_pdfium_drew_it() {
    // cmr fonts' /Widths carry decimals (e.g. 525.3): PDFium draws with whole widths.
    let Some(pdf) = common::load("font-type1-pdflatex-4p.pdf") else {
        return;
    };
    let r = redact(&pdf, "Huardest gefburn");
    assert!(!r.changes.is_empty(), "{:?}", r.failed);
    assert!(r.changes.iter().all(|c| c.verified));
    let checked = kept_in_place(&pdf, &r, 0, 0.01);
    assert!(checked > 100, "only {checked} characters left to check");
}

#[test]
fn a_column_of_upright_characters_in_a_horizontal_font_is_redacted() {
    // The gazette sets its vertical Japanese one Identity-H character per line (`0 -1 TD`,
    // `T*`), in non-embedded Ryumin: the phrase reads down such a column.
    let name = "sig-kampo-japanese-gazette-encrypted.pdf";
    let Some(pdf) = common::load(name) else {
        return;
    };
    let find = "横断歩道";
    let r = redact(&pdf, find);
    assert!(!r.changes.is_empty(), "{:?} {:?}", r.failed, r.unmatched);
    assert!(r.changes.iter().all(|c| c.verified));
    // The boxes are columns: taller than wide.
    assert!(r
        .changes
        .iter()
        .all(|c| c.bbox[3] - c.bbox[1] > 3.0 * (c.bbox[2] - c.bbox[0])));
    // PDFium reads such columns in order (pdftotext does not).
    let text = |pdf: &[u8]| -> String {
        let t = pdfedit_engine::read_text(pdf, None, None, true, false).expect("text reads");
        t.pages
            .iter()
            .flat_map(|p| &p.spans)
            .map(|s| s.text.as_str())
            .collect()
    };
    assert!(text(&pdf).contains(find));
    let after = text(&r.pdf);
    assert!(!after.contains(find));
    assert!(after.contains("歩行者"), "the other words are still there");
    let checked = kept_in_place(&pdf, &r, 0, 0.05);
    assert!(checked > 100, "only {checked} characters left to check");
    // Replacing inside such a column is refused rather than drawn across it.
    let r = run(&pdf, EditOp::Replace, find, "横断步道");
    assert!(r.changes.is_empty());
    assert_eq!(
        r.failed.first().map(|f| f.reason.as_str()),
        Some("unsupported_layout"),
        "{:?}",
        r.failed
    );
}

#[test]
fn rounding_of_the_rest_of_a_line_is_not_collateral() {
    // The CMS form draws the phrase at the start of a long CID string on page 3; after the
    // removal PDFium sums the rest of the line in another order and a glyph lands 3e-5 pt
    // over, on the other side of a third-of-a-pixel step. Every page must be redacted.
    let Some(pdf) = common::load("form-cms1490s-medicare-18p-partly-filled.pdf") else {
        return;
    };
    let r = redact(&pdf, "Medicare Administrative Contractor");
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    let pages: std::collections::BTreeSet<u32> = r.changes.iter().map(|c| c.page).collect();
    assert_eq!(pages.into_iter().collect::<Vec<_>>(), vec![1, 3, 4]);
    assert!(r.changes.iter().all(|c| c.verified));
    assert!(r.residual.is_empty(), "{:?}", r.residual);
    let checked = kept_in_place(&pdf, &r, 2, 0.001);
    assert!(checked > 100, "only {checked} characters left to check");
}

/// Arabic letters (the basic block and the presentation forms) in `t`.
fn arabic(t: &str) -> usize {
    t.chars()
        .filter(|c| matches!(*c as u32, 0x0600..=0x06FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF))
        .count()
}

#[test]
fn an_arabic_word_goes_with_its_silent_glyphs_and_leaves_the_text_map_of_h() {
    // WeasyPrint draws "habibi" and then the Arabic word: six glyphs with no text and one
    // carrying the whole word; its ToUnicode also maps the "h" glyph to that word + "h".
    let name = "font-cid-tt-arabic-weasyprint.pdf";
    let Some(pdf) = common::load(name) else {
        return;
    };
    let before = common::pdftotext(&pdf, &[]).unwrap_or_default();
    // Logical order, and visual order as pdftotext prints it.
    for find in ["حَبيبي", "يبيبَح"] {
        let r = redact(&pdf, find);
        assert_eq!(
            r.changes.len(),
            1,
            "{find}: {:?} {:?}",
            r.failed,
            r.unmatched
        );
        assert!(r.changes[0].verified && r.changes[0].collateral_pixels == 0);
        assert!(r.residual.is_empty(), "{find}: {:?}", r.residual);
        // The "h" glyph stays drawn; only its text map loses the word.
        assert!(
            r.removed.iter().any(|x| x.kind == "font_text_map"),
            "{:?}",
            r.removed
        );
        let Some(after) = common::pdftotext(&r.pdf, &[]) else {
            return;
        };
        assert!(arabic(&before) > 0);
        assert_eq!(arabic(&after), 0, "{find}: Arabic left in {after:?}");
        assert!(after.contains("habibi"), "{after:?}");
        // The five silent letters and the mark went with the glyph carrying the word: the box
        // spans them all (that glyph alone is 6 pt wide).
        let b = r.changes[0].bbox;
        assert!(b[2] - b[0] > 15.0, "box {b:?} too narrow for the word");
        // "habibi" stays where it was (PDFium also reads the old text map's Arabic at the
        // "h", which is the point of the change, so only Latin letters are compared).
        let after_chars = chars(&r.pdf, 0);
        let latin: Vec<(char, (f32, f32))> = chars(&pdf, 0)
            .into_iter()
            .filter(|(c, _)| c.is_ascii_alphabetic())
            .collect();
        assert_eq!(latin.len(), 6);
        for (c, o) in latin {
            assert!(
                after_chars
                    .iter()
                    .any(|(d, p)| *d == c && (p.0 - o.0).abs() < 0.01 && (p.1 - o.1).abs() < 0.01),
                "{c:?} at {o:?} moved or lost"
            );
        }
    }
}

#[test]
fn a_match_on_the_drawn_part_of_a_glyph_takes_the_whole_glyph() {
    let Some(pdf) = common::load("font-cid-tt-arabic-weasyprint.pdf") else {
        return;
    };
    // "h" is drawn by the glyph whose text is the Arabic word + "h": that glyph goes; the
    // Arabic word is still drawn (and extracted) after it.
    let r = redact(&pdf, "habibi");
    assert_eq!(r.changes.len(), 1, "{:?} {:?}", r.failed, r.unmatched);
    assert!(r.changes[0].verified && r.changes[0].collateral_pixels == 0);
    let Some(after) = common::pdftotext(&r.pdf, &[]) else {
        return;
    };
    assert!(
        !after.contains("habibi") && !after.contains("abibi"),
        "{after:?}"
    );
    assert!(arabic(&after) >= 5, "the Arabic word went too: {after:?}");
}

#[test]
fn a_type3_bitmap_line_that_pdfium_snaps_anew_is_verified() {
    // pdfTeX PK fonts: once "Václav Havel's greengrocer" is gone, PDFium's Type 3 glyph
    // cache snaps the tops of later 'i' and 't' bitmaps a row higher. Not collateral; a
    // glyph that moved would still be.
    let Some(pdf) = common::load("font-type3-pdftex-bitmap.pdf") else {
        return;
    };
    let r = redact(&pdf, "Václav Havel's greengrocer");
    assert_eq!(r.changes.len(), 1, "{:?}", r.failed);
    assert!(r.changes[0].verified && r.changes[0].collateral_pixels == 0);
    let Some(after) = common::pdftotext(&r.pdf, &[]) else {
        return;
    };
    assert!(!after.contains("greengrocer displays"), "{after:?}");
    assert!(after.contains("displays a sign in his shop"), "{after:?}");
}
