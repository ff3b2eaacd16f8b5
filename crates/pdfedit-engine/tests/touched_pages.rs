//! An edit reads the pages it touches, not the whole document: a first or n-th occurrence
//! stops looking once found, and the edit opens the document for its facts without
//! loading every page. These tests check that the pages read that way give the same
//! answer a full read gives, on the corpus's longest document repeated three times with
//! qpdf (57 pages, three copies of every phrase, no object shared between the copies).

mod common;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, EditResult, Occurrence, Scope};

const SOURCE: &str = "font-cid-cff-identityh-us-constitution.pdf";
const FIND: &str = "insure domestic";

/// The source repeated three times, or `None` (with a message) without PDFium, the
/// corpus or qpdf.
fn tripled() -> Option<Vec<u8>> {
    tripled_as(false)
}

/// [`tripled`]; with `shared`, qpdf is given one file three times and the copies of a
/// page draw one content stream.
fn tripled_as(shared: bool) -> Option<Vec<u8>> {
    if !common::init_pdfium() {
        return None;
    }
    let source = common::corpus_dir().join(SOURCE);
    if !source.exists() {
        eprintln!("SKIP: {SOURCE} not in the corpus");
        return None;
    }
    // Three files: qpdf shares the objects of one file named three times, and a content
    // stream drawn by three pages is not what this test is about.
    let bytes = std::fs::read(&source).ok()?;
    let copies = if shared {
        vec![common::Scratch::new(&bytes)]
    } else {
        (0..3).map(|_| common::Scratch::new(&bytes)).collect()
    };
    common::qpdf_pages((0..3).map(|i| &copies[i % copies.len()].0))
}

fn replace(pdf: &[u8], occurrence: Option<Occurrence>) -> EditResult {
    let req = EditRequest {
        edits: vec![Edit {
            index: 0,
            op: EditOp::Replace,
            find: FIND.into(),
            replace: "ensure domestic".into(),
            scope: Scope {
                occurrence,
                ..Scope::default()
            },
            ..Edit::default()
        }],
        ..EditRequest::default()
    };
    edit(pdf, &req).expect("edit runs")
}

/// The 1-based pages whose text (pdftotext, form feeds between pages) holds `needle`
/// with its words joined by single spaces.
fn pages_with(pdf: &[u8], needle: &str) -> Vec<usize> {
    let text = common::pdftotext(pdf, &[]).expect("pdftotext runs");
    text.split('\u{c}')
        .enumerate()
        .filter(|(_, page)| {
            let words: Vec<&str> = page.split_whitespace().collect();
            words.join(" ").contains(needle)
        })
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn nth_occurrence_found_without_reading_later_pages_lands_where_a_full_read_does() {
    let Some(pdf) = tripled() else { return };
    let info = pdfedit_engine::open_info(&pdf, None).expect("opens");
    // The facts the service is given still load every page.
    assert_eq!(info.page_count, 57);
    assert_eq!(info.pages.len(), 57);
    let copies = pages_with(&pdf, FIND);
    assert_eq!(copies.len(), 3, "the phrase is on one page of each copy");
    // Every occurrence: the full read, the reference for the n-th.
    let all = replace(&pdf, None);
    let mut all_pages: Vec<u32> = all.changes.iter().map(|c| c.page).collect();
    all_pages.dedup();
    assert_eq!(all_pages.len(), 3, "{:?} {:?}", all.changes, all.failed);
    for (n, occurrence) in [Occurrence::First, Occurrence::Nth(2), Occurrence::Nth(3)]
        .into_iter()
        .enumerate()
    {
        let r = replace(&pdf, Some(occurrence));
        assert!(r.failed.is_empty(), "{occurrence:?}: {:?}", r.failed);
        assert_eq!(r.changes.len(), 1, "{occurrence:?}");
        let change = &r.changes[0];
        assert!(change.verified, "{occurrence:?}");
        assert_eq!(change.page, all.changes[n].page, "{occurrence:?}");
        assert_eq!(change.bbox, all.changes[n].bbox, "{occurrence:?}");
        // The output: only that page's copy of the phrase was replaced.
        let left: Vec<usize> = copies
            .iter()
            .copied()
            .filter(|&p| p != change.page as usize)
            .collect();
        assert_eq!(pages_with(&r.pdf, FIND), left, "{occurrence:?}");
        assert_eq!(
            pages_with(&r.pdf, "ensure domestic"),
            vec![change.page as usize],
            "{occurrence:?}"
        );
    }
    // A fourth occurrence is not there: every page is read and the edit is unmatched.
    let r = replace(&pdf, Some(Occurrence::Nth(4)));
    assert!(r.changes.is_empty());
    assert_eq!(r.unmatched.len(), 1);
    assert_eq!(r.pdf, pdf, "nothing changed, the input is the output");
}

#[test]
fn a_content_stream_other_pages_draw_too_is_copied_for_the_edited_page() {
    let Some(pdf) = tripled_as(true) else { return };
    let copies = pages_with(&pdf, FIND);
    assert_eq!(copies.len(), 3);
    let r = replace(&pdf, Some(Occurrence::Nth(2)));
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    let page = r.changes[0].page as usize;
    assert_eq!(page, copies[1]);
    // The edited page drew the stream the other two copies draw: only its own copy of
    // the stream is changed, and the pages that were not verified are not touched.
    assert_eq!(pages_with(&r.pdf, FIND), vec![copies[0], copies[2]]);
    assert_eq!(pages_with(&r.pdf, "ensure domestic"), vec![page]);
}
