//! An edit that finds nothing in our glyphs' text takes reading's (PDFium's) text for the
//! pages it looks at, but lays it only onto a page that holds every character of its
//! phrase; elsewhere the reading waits until the page's model is used. These tests check
//! the answers stay those of reading every page, on a long document: the corpus's US
//! Constitution, then Chrome's two-page Type 3 page (whose "14,918,000" only reading
//! gives), then the Constitution again (40 pages, the number on page 21).

mod common;

use pdfedit_engine::edit::{edit, locate, Edit, EditOp, EditRequest, EditResult, Scope};

const LONG: &str = "font-cid-cff-identityh-us-constitution.pdf";
const TYPE3: &str = "font-type3-skia-chrome-2p.pdf";
/// On page 2 of [`TYPE3`] only in reading's text (the glyphs' own text differs).
const READ_ONLY: &str = "14,918,000";
/// The page of [`READ_ONLY`] in the joined document.
const READ_ONLY_PAGE: u32 = 21;

/// The joined document, or `None` (with a message) without PDFium, the corpus or qpdf.
fn joined() -> Option<Vec<u8>> {
    if !common::init_pdfium() {
        return None;
    }
    let dir = common::corpus_dir();
    let (long, type3) = (dir.join(LONG), dir.join(TYPE3));
    if !long.exists() || !type3.exists() {
        eprintln!("SKIP: {LONG} or {TYPE3} not in the corpus");
        return None;
    }
    common::qpdf_pages([&long, &type3, &long])
}

fn one(index: u32, op: EditOp, find: &str) -> Edit {
    Edit {
        index,
        op,
        find: find.into(),
        replace: if op == EditOp::Replace {
            "40,400,000".into()
        } else {
            String::new()
        },
        scope: Scope::default(),
        ..Edit::default()
    }
}

fn request(edits: Vec<Edit>) -> EditRequest {
    EditRequest {
        edits,
        ..EditRequest::default()
    }
}

fn unmatched(r: &EditResult) -> Vec<u32> {
    r.unmatched.iter().map(|u| u.edit_index).collect()
}

#[test]
fn a_phrase_on_no_page_stays_unmatched() {
    let Some(pdf) = joined() else { return };
    // "Zürich": a letter on no page, so no page takes reading; "zebra quantum": letters
    // most pages hold, so those do.
    for find in ["Zürich", "zebra quantum"] {
        for op in [EditOp::Replace, EditOp::Redact] {
            let r = locate(&pdf, &request(vec![one(0, op, find)])).expect("locate runs");
            assert_eq!(unmatched(&r), [0], "{find} ({op:?})");
            let r = edit(&pdf, &request(vec![one(0, op, find)])).expect("edit runs");
            assert_eq!(unmatched(&r), [0], "{find} ({op:?})");
            assert!(r.changes.is_empty(), "{find} ({op:?})");
        }
    }
}

#[test]
fn a_phrase_only_reading_gives_is_found_among_pages_it_cannot_be_on() {
    let Some(pdf) = joined() else { return };
    for op in [EditOp::Replace, EditOp::Redact] {
        let r = locate(&pdf, &request(vec![one(0, op, READ_ONLY)])).expect("locate runs");
        assert!(unmatched(&r).is_empty(), "{op:?}");
    }
    let r = edit(&pdf, &request(vec![one(0, EditOp::Replace, READ_ONLY)])).expect("edit runs");
    assert!(unmatched(&r).is_empty(), "{:?}", r.failed);
    assert!(
        r.changes.iter().any(|c| c.page == READ_ONLY_PAGE),
        "changes {:?}, failed {:?}",
        r.changes.iter().map(|c| c.page).collect::<Vec<_>>(),
        r.failed
    );
}

/// The first edit reads every page but lays reading onto none (no page holds a "ü"); the
/// second, whose number only reading gives, must still find it on the page where
/// reading waited.
#[test]
fn reading_left_waiting_by_one_edit_is_laid_for_the_next() {
    let Some(pdf) = joined() else { return };
    for op in [EditOp::Replace, EditOp::Redact] {
        let edits = vec![one(0, op, "Zürich"), one(1, op, READ_ONLY)];
        let r = locate(&pdf, &request(edits.clone())).expect("locate runs");
        assert_eq!(unmatched(&r), [0], "locate ({op:?})");
        let r = edit(&pdf, &request(edits)).expect("edit runs");
        assert_eq!(unmatched(&r), [0], "edit ({op:?}): failed {:?}", r.failed);
    }
}
