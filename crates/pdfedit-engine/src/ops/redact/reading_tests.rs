//! An unmatched redaction on a long document: the reading its find took and left waiting
//! on pages that cannot hold the phrase stays waiting (`wrapped` and `scanned_pages` pass
//! those pages over, as the line search does), while the answer stays `unmatched`.

use std::path::PathBuf;

use crate::find::compile;
use crate::model::fonts::DocFonts;
use crate::run::Run;
use crate::types::{Edit, EditOp, EditResult};

/// 19 pages of text in one CID font; no page holds a "ü".
const LONG: &str = "font-cid-cff-identityh-us-constitution.pdf";

/// A run over `bytes` as the pipeline starts one (nothing read yet).
fn run_of(bytes: &[u8]) -> Run {
    let doc = lopdf::Document::load_mem(bytes).expect("lopdf loads");
    let current = crate::save::save(&doc).expect("saves");
    Run {
        doc,
        current,
        fonts: DocFonts::default(),
        models: Default::default(),
        read_taken: Default::default(),
        read_pending: Default::default(),
        renders: Default::default(),
        result: EditResult::default(),
        ocr: None,
        previews: false,
        verify: crate::verify::Policy::default(),
        template: false,
        redacted_appearances: Vec::new(),
    }
}

/// The corpus document, or `None` (with a message) without PDFium or the corpus.
fn long_document() -> Option<Vec<u8>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let lib = std::env::var_os("PDFIUM_LIB_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("vendor/pdfium/lib/libpdfium.so"));
    let corpus = std::env::var_os("PDFEDIT_CORPUS_DIR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/corpus"));
    let path = corpus.join(LONG);
    if !lib.exists() || !path.exists() {
        eprintln!("SKIP: PDFium or {LONG} not found");
        return None;
    }
    crate::init(&lib).expect("PDFium binds");
    Some(std::fs::read(path).expect("reads"))
}

#[test]
fn an_unmatched_redaction_leaves_reading_waiting_where_its_phrase_cannot_be() {
    let Some(bytes) = long_document() else { return };
    // Two words, so the search across line breaks runs too.
    let edit = Edit {
        op: EditOp::Redact,
        find: "Zürich domestic".into(),
        ..Edit::default()
    };
    let matcher = compile(&edit).expect("compiles");
    let mut run = run_of(&bytes);
    let found = run.find(&edit, &matcher, None).expect("finds");
    assert!(found.is_empty());
    let waiting = run.read_pending.len();
    assert!(waiting >= 19, "reading waits on {waiting} pages");
    super::apply(&mut run, &edit, &matcher, found, None).expect("applies");
    assert_eq!(run.result.unmatched.len(), 1, "{:?}", run.result.failed);
    assert!(run.result.changes.is_empty());
    assert_eq!(run.read_pending.len(), waiting, "reading was laid");
}
