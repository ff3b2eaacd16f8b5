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
