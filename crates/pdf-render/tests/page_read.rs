//! Reading loads each page once (`Document::read_page`): what that one load gives must be
//! what the three separate calls it replaces give, page by page.

use std::path::PathBuf;

use pdf_render::Document;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bind() -> bool {
    let path = std::env::var_os("PDFIUM_LIB_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("vendor/pdfium/lib/libpdfium.so"));
    if !path.exists() {
        eprintln!("SKIP: libpdfium.so not found");
        return false;
    }
    pdf_render::init(Some(&path)).expect("PDFium binds");
    true
}

#[test]
fn one_load_of_a_page_gives_its_size_characters_and_annotations() {
    if !bind() {
        return;
    }
    let dir = root().join("../shared/corpus");
    // Rotated pages, a form with widgets, free text and stamps, vertical CJK, hidden text.
    let names = [
        "rot-0-90-180-270-pages.pdf",
        "form-irs-w9-livecycle.pdf",
        "annot-many-types.pdf",
        "font-cid-cff-identityv-japanese-adobe.pdf",
        "scan-ocr-layer-vicksburg-luradoc.pdf",
    ];
    let mut pages = 0;
    let mut with_annotations = 0;
    for name in names {
        let Ok(bytes) = std::fs::read(dir.join(name)) else {
            continue;
        };
        let doc = Document::open(&bytes, None).expect("opens");
        let info = doc.info().expect("info");
        assert_eq!(info.has_acro_form, doc.has_acro_form(), "{name}");
        for i in 0..doc.page_count() {
            let read = doc.read_page(i).expect("reads");
            assert_eq!(read.info, info.pages[i as usize], "{name} page {i}");
            assert_eq!(
                read.info,
                doc.page_info(i).expect("page info"),
                "{name} page {i}"
            );
            assert_eq!(
                read.chars,
                doc.page_chars(i).expect("chars"),
                "{name} page {i}"
            );
            assert_eq!(
                read.text_annotations,
                doc.has_text_annotations(i).expect("annotations"),
                "{name} page {i}"
            );
            pages += 1;
            with_annotations += usize::from(read.text_annotations);
        }
    }
    if pages > 0 {
        assert!(
            with_annotations > 0,
            "the corpus pages with annotations were read"
        );
    }
}

/// Reading flattens each annotated page in the document it reads (no second copy of the
/// document): the annotations' characters and the form fields gathered along the way must
/// be what a fresh copy gives for each, page after page, with the earlier pages already
/// flattened.
#[test]
fn flattening_in_the_read_document_changes_neither_annotation_text_nor_fields() {
    if !bind() {
        return;
    }
    let dir = root().join("../shared/corpus");
    // Widgets (filled and not), free text and stamps, signature appearances on several
    // pages, a hyperref form whose captions are drawn in the content too.
    let names = [
        "form-irs-w9-livecycle.pdf",
        "form-cms1490s-medicare-18p-partly-filled.pdf",
        "annot-many-types.pdf",
        "sig-federal-register-gpo-15p.pdf",
        "sig-libreoffice-okular-visible.pdf",
        "form-pdflatex-hyperref.pdf",
    ];
    let mut flattened = 0;
    for name in names {
        let Ok(bytes) = std::fs::read(dir.join(name)) else {
            continue;
        };
        let doc = Document::open(&bytes, None).expect("opens");
        let fresh = Document::open(&bytes, None).expect("opens");
        let mut fields = pdf_render::FieldCollector::new(&doc);
        for i in 0..doc.page_count() {
            let page = doc.load_for_reading(i).expect("loads");
            page.add_fields(i, &mut fields);
            let chars = page.chars().expect("chars");
            assert_eq!(
                chars,
                fresh.page_chars(i).expect("chars"),
                "{name} page {i}"
            );
            if !page.has_text_annotations() {
                continue;
            }
            let scratch = Document::open(&bytes, None).expect("opens");
            let want = scratch
                .flattened_annotation_chars(i, &chars)
                .expect("flattens");
            let got = page.flattened_annotation_chars(&chars).expect("flattens");
            assert_eq!(got, want, "{name} page {i}");
            flattened += 1;
        }
        assert_eq!(
            fields.finish(),
            fresh.form_fields().expect("fields"),
            "{name}"
        );
    }
    assert!(flattened > 0 || !dir.exists(), "annotated pages were read");
}
