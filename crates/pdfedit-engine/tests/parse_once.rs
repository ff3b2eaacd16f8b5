//! An edit parses its document once: when the budget scan runs for it (bytes this process
//! has not scanned), the edit works on the document the scan parsed; when the scan was
//! passed before, the edit parses the bytes itself. Either way the output is the same,
//! for an encrypted input (decrypted, to be encrypted again) as for a plain one. One
//! test in its own binary: the counter is per process, and tests of one binary run at once.

mod common;

use pdfedit_engine::edit::{edit, scan_parses_taken, EditRequest, EditResult, Occurrence, Scope};

/// Runs `req` on `pdf`, returning the result and how many times the edit took the
/// scan's parse.
fn request(find: &str, replace: &str, password: Option<&str>, cached: bool) -> EditRequest {
    let scope = Scope {
        occurrence: Some(Occurrence::First),
        ..Scope::default()
    };
    common::replace_request(find, replace, scope, password, cached)
}

fn taken(pdf: &[u8], req: &EditRequest) -> (EditResult, u64) {
    let before = scan_parses_taken();
    let r = edit(pdf, req).expect("edit runs");
    (r, scan_parses_taken() - before)
}

#[test]
fn an_edit_takes_the_document_its_budget_scan_parsed() {
    if !common::init_pdfium() {
        return;
    }
    let dir = common::corpus_dir();
    let Ok(invoice) = std::fs::read(dir.join("doc-invoice-itextsharp-demo.pdf")) else {
        eprintln!("SKIP: corpus not found at {}", dir.display());
        return;
    };
    let req = request("Central City", "Eastern Town", None, false);
    let (fresh, n) = taken(&invoice, &req);
    assert_eq!(n, 1, "a fresh scan's parse is edited");
    assert_eq!(fresh.changes.len(), 1, "{:?}", fresh.failed);
    // The scan is kept now: the edit parses the bytes itself, to the same output.
    let (again, n) = taken(&invoice, &req);
    assert_eq!(n, 0, "a kept scan parsed nothing");
    assert_eq!(common::untimed(again), common::untimed(fresh));

    // A stored document (template cache) opened for the first time: the same.
    let constitution =
        std::fs::read(dir.join("font-cid-cff-identityh-us-constitution.pdf")).expect("corpus file");
    let (r, n) = taken(&constitution, &request("Congress", "Senate", None, true));
    assert_eq!((n, r.changes.len()), (1, 1), "{:?}", r.failed);

    // An encrypted input: the scan decrypted it as the edit's own open would, to the
    // same output (RC4 encrypts the same bytes the same way every time).
    let locked =
        std::fs::read(dir.join("enc-rc4-128-libreoffice-userpw.pdf")).expect("corpus file");
    let req = request("Lorem", "Dolor", Some("openpassword"), false);
    let (fresh, n) = taken(&locked, &req);
    assert_eq!((n, fresh.changes.len()), (1, 1), "{:?}", fresh.failed);
    let (again, n) = taken(&locked, &req);
    assert_eq!(n, 0, "a kept scan parsed nothing");
    assert_eq!(common::untimed(again), common::untimed(fresh));
    // The wrong password: PDFium refuses it before anything is parsed for the edit.
    assert!(edit(&locked, &request("Lorem", "Dolor", Some("wrong"), false)).is_err());
}
