//! The SAMPLE mark (`EditOptions::mark`): on every page of an edited output, upright in a
//! corner as displayed (rotated pages too), clear of the page's text, extractable, encrypted
//! with an encrypted output, and the output still passes `qpdf --check`.

mod common;

use std::process::Command;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditOptions, EditRequest, EditResult};

fn replace(find: &str, by: &str, mark: Option<&str>, password: Option<&str>) -> EditRequest {
    EditRequest {
        password: password.map(str::to_string),
        edits: vec![Edit {
            index: 0,
            op: EditOp::Replace,
            find: find.into(),
            replace: by.into(),
            match_mode: Default::default(),
            scope: Default::default(),
            fit: Default::default(),
            style: Default::default(),
            ..Edit::default()
        }],
        options: EditOptions {
            mark: mark.map(str::to_string),
            ..EditOptions::default()
        },
    }
}

/// pdftotext's text, or `None` when poppler is not installed.
fn pdftotext(pdf: &[u8], password: Option<&str>) -> Option<String> {
    let args = password.map_or(Vec::new(), |p| vec!["-upw", p]);
    let out = common::run_tool("pdftotext", &args, pdf, &["-"])?;
    assert!(out.status.success(), "pdftotext failed");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Asserts `qpdf --check` passes without warnings (skips when qpdf is not installed).
fn qpdf_clean(pdf: &[u8], password: Option<&str>) {
    let file = common::Scratch::new(pdf);
    let mut cmd = Command::new("qpdf");
    if let Some(p) = password {
        cmd.arg(format!("--password={p}"));
    }
    let Ok(out) = cmd.arg("--check").arg(&file.0).output() else {
        eprintln!("SKIP qpdf check: qpdf not installed");
        return;
    };
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "qpdf --check failed: {text}");
    assert!(!text.contains("WARNING"), "qpdf warns: {text}");
}

fn applied(r: &EditResult) {
    assert!(!r.changes.is_empty(), "{:?}", r.failed);
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(r.changes.iter().all(|c| c.verified));
}

#[test]
fn marked_output_extracts_sample_and_checks_clean() {
    let Some(pdf) = common::load("font-tt-subset-libreoffice-trivial.pdf") else {
        return;
    };
    let plain = edit(&pdf, &replace("Lorem", "Loerm", None, None)).expect("edit runs");
    applied(&plain);
    assert!(!plain.warnings.iter().any(|w| w == "sample_mark"));
    let marked = edit(&pdf, &replace("Lorem", "Loerm", Some("SAMPLE"), None)).expect("edit runs");
    applied(&marked);
    assert!(marked.warnings.iter().any(|w| w == "sample_mark"));
    assert!(marked.timings.mark_ms > 0.0);
    if let Some(text) = pdftotext(&marked.pdf, None) {
        assert!(text.contains("SAMPLE"), "{text}");
        assert!(text.contains("Loerm ipsum"), "{text}");
    }
    if let Some(text) = pdftotext(&plain.pdf, None) {
        assert!(!text.contains("SAMPLE"), "{text}");
    }
    qpdf_clean(&marked.pdf, None);
    // The page's own content streams are kept byte for byte: the mark only adds streams.
    let a = lopdf::Document::load_mem(&plain.pdf).expect("parses");
    let b = lopdf::Document::load_mem(&marked.pdf).expect("parses");
    let streams = |d: &lopdf::Document| -> Vec<Vec<u8>> {
        let page = d.get_pages()[&1];
        d.get_page_contents(page)
            .iter()
            .map(|id| {
                d.get_object(*id)
                    .unwrap()
                    .as_stream()
                    .unwrap()
                    .content
                    .clone()
            })
            .collect()
    };
    let (sa, sb) = (streams(&a), streams(&b));
    assert_eq!(sb.len(), sa.len() + 2, "one stream before, one after");
    assert_eq!(&sb[1..sb.len() - 1], &sa[..]);
}

#[test]
fn nothing_applied_means_no_mark() {
    let Some(pdf) = common::load("font-tt-subset-libreoffice-trivial.pdf") else {
        return;
    };
    let r = edit(&pdf, &replace("no such words", "x", Some("SAMPLE"), None)).expect("edit runs");
    assert!(r.changes.is_empty());
    assert_eq!(r.pdf, pdf, "the input comes back as it was");
    assert!(!r.warnings.iter().any(|w| w == "sample_mark"));
}

#[test]
fn rotated_pages_get_an_upright_mark_in_a_corner_clear_of_text() {
    let Some(pdf) = common::load("rot-0-90-180-270-pages.pdf") else {
        return;
    };
    let r = edit(
        &pdf,
        &replace("cell[0][0]", "cell[0][9]", Some("SAMPLE"), None),
    )
    .expect("edit runs");
    assert!(!r.changes.is_empty(), "{:?}", r.failed);
    let text = pdfedit_engine::read_text(&r.pdf, None, None, true, false).expect("reads");
    assert_eq!(text.pages.len(), 4);
    for page in &text.pages {
        let marks: Vec<_> = page.spans.iter().filter(|s| s.text == "SAMPLE").collect();
        assert_eq!(marks.len(), 1, "page {}: one mark", page.page);
        let m = marks[0];
        assert!(
            m.rotation.abs() < 0.5,
            "page {} (rotation {}): the mark reads upright, got {}°",
            page.page,
            page.rotation,
            m.rotation
        );
        let [x0, y0, x1, y1] = m.bbox;
        let (w, h) = (page.width, page.height);
        assert!(
            x0 >= 0.0 && y0 >= 0.0 && x1 <= w && y1 <= h,
            "inside the page"
        );
        assert!(y1 - y0 < 12.0, "small: {:?}", m.bbox);
        let near_edge = |a: f32, b: f32, size: f32| a < 20.0 || size - b < 20.0;
        assert!(
            near_edge(x0, x1, w) && near_edge(y0, y1, h),
            "page {}: in a corner of {w}x{h}, got {:?}",
            page.page,
            m.bbox
        );
        for s in page.spans.iter().filter(|s| s.text != "SAMPLE") {
            let b = s.bbox;
            let overlaps = b[0] < x1 && x0 < b[2] && b[1] < y1 && y0 < b[3];
            assert!(
                !overlaps,
                "page {}: the mark covers {:?}",
                page.page, s.text
            );
        }
    }
    qpdf_clean(&r.pdf, None);
}

#[test]
fn encrypted_output_carries_the_mark_encrypted() {
    let Some(pdf) = common::load("enc-rc4-128-libreoffice-userpw.pdf") else {
        return;
    };
    let pw = "openpassword";
    let r = edit(&pdf, &replace("Lorem", "Loerm", Some("SAMPLE"), Some(pw))).expect("edit runs");
    applied(&r);
    assert!(r.warnings.iter().any(|w| w == "sample_mark"));
    assert!(
        !r.pdf.windows(6).any(|w| w == b"SAMPLE"),
        "the mark's stream is encrypted like the rest"
    );
    let info = pdfedit_engine::open_info(&r.pdf, None);
    assert!(info.is_err(), "the output still needs the password");
    if let Some(text) = pdftotext(&r.pdf, Some(pw)) {
        assert!(text.contains("SAMPLE"), "{text}");
        assert!(text.contains("Loerm"), "{text}");
    }
    qpdf_clean(&r.pdf, Some(pw));
}

#[test]
fn a_mark_that_is_not_printable_ascii_is_refused() {
    let Some(pdf) = common::load("font-tt-subset-libreoffice-trivial.pdf") else {
        return;
    };
    match edit(&pdf, &replace("Lorem", "Loerm", Some("ÉCHANTILLON"), None)) {
        Err(err) => assert!(err.to_string().contains("printable ASCII"), "{err}"),
        Ok(r) => panic!("accepted: {:?} {:?}", r.changes.len(), r.failed),
    }
}
