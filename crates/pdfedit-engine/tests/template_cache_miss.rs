//! `options.template_cache` for a stored document edited again and again (the sync route
//! sets it for a `source.file_id` edit): the second edit of the same page of the same bytes
//! takes its render before from the cache; another page of the same document, and another
//! document, miss; every cached result equals the uncached one. One test in its own binary:
//! the hit counter is per process, and tests of one binary run at once.

mod common;

use pdfedit_engine::edit::{
    edit, template_cache_hits, template_facts_kept, template_saves_skipped, EditRequest,
    Occurrence, Scope,
};

fn request(find: &str, replace: &str, page: u32, cached: bool) -> EditRequest {
    let scope = Scope {
        pages: Some(vec![page]),
        occurrence: Some(Occurrence::First),
        ..Scope::default()
    };
    common::replace_request(find, replace, scope, None, cached)
}

/// Runs the edit with the cache, then without, checks both are the same, and returns how
/// many renders the cached one took from the cache.
fn hits_of(pdf: &[u8], find: &str, replace: &str, page: u32) -> u64 {
    let before = template_cache_hits();
    let cached = edit(pdf, &request(find, replace, page, true)).expect("cached edit runs");
    let hits = template_cache_hits() - before;
    let plain = edit(pdf, &request(find, replace, page, false)).expect("uncached edit runs");
    assert_eq!(
        cached.changes.len(),
        1,
        "{find} on page {page} applied: {:?} {:?}",
        cached.failed,
        cached.unmatched
    );
    assert_eq!(cached.changes[0].page, page);
    assert_eq!(
        common::untimed(cached),
        common::untimed(plain),
        "{find} on page {page}"
    );
    hits
}

/// [`hits_of`], how many times the cached run took its unedited saved bytes from the
/// cache instead of saving the parsed input, and its document facts instead of opening
/// it in PDFium.
fn hits_and_saves_skipped(pdf: &[u8], find: &str, replace: &str, page: u32) -> (u64, u64) {
    let (saves, facts) = (template_saves_skipped(), template_facts_kept());
    let hits = hits_of(pdf, find, replace, page);
    let saves = template_saves_skipped() - saves;
    assert_eq!(
        template_facts_kept() - facts,
        saves,
        "facts kept as saves skipped"
    );
    (hits, saves)
}

#[test]
fn stored_document_edited_again_hits_and_others_miss() {
    let (Some(constitution), Some(invoice)) = (
        common::load("font-cid-cff-identityh-us-constitution.pdf"),
        common::load("doc-invoice-itextsharp-demo.pdf"),
    ) else {
        return;
    };
    // First edit of page 2: nothing cached yet.
    assert_eq!(
        hits_of(&constitution, "insure domestic", "ensure domestic", 2),
        0
    );
    // The same page of the same bytes again: its render before comes from the cache.
    assert_eq!(
        hits_of(&constitution, "insure domestic", "ensure internal", 2),
        1
    );
    // Another page of the same document: not rendered yet, a miss.
    let vp = "Vice President of the United States shall be";
    assert_eq!(
        hits_of(&constitution, vp, "Vice President of the Union shall be", 3),
        0
    );
    assert_eq!(
        hits_of(&constitution, vp, "Vice President of the Union shall be", 3),
        1
    );
    // Another document: its own bytes, a miss on its first edit.
    // Its second edit also takes the saved bytes of its parse from the cache (the same
    // input bytes), instead of saving the parsed input again.
    assert_eq!(
        hits_and_saves_skipped(&invoice, "INV-0046", "INV-0064", 1),
        (0, 0)
    );
    assert_eq!(
        hits_and_saves_skipped(&invoice, "INV-0046", "INV-0065", 1),
        (1, 1)
    );
    // Other input bytes that parse to the same document: the saved bytes are made again
    // (the input is not the one they were made from), and the renders of those equal saved
    // bytes are still found by them.
    let mut trailing = invoice.clone();
    trailing.extend_from_slice(b"\n% a comment after the end\n");
    assert_eq!(
        hits_and_saves_skipped(&trailing, "INV-0046", "INV-0066", 1),
        (1, 0)
    );
    // The same input once more still takes its saved bytes (the entry kept its source).
    assert_eq!(
        hits_and_saves_skipped(&invoice, "INV-0046", "INV-0067", 1),
        (1, 1)
    );
    // Kept facts do not skip the budget: the same bytes under a smaller document budget
    // are refused.
    let mut small = request("INV-0046", "INV-0068", 1, true);
    small.options.limits.document_bytes = 1000;
    assert!(edit(&invoice, &small).is_err(), "over the document budget");
}
