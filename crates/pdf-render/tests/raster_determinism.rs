//! Verification relies on two renders of identical bytes being identical.

use std::path::PathBuf;

use pdf_render::diff::{diff, CHANNEL_TOLERANCE};
use pdf_render::raster::{crop_png, rasterize_page, VERIFY_PX_PER_PT};

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
fn two_renders_of_the_same_bytes_are_identical() {
    if !bind() {
        return;
    }
    let dir = root().join("../shared/corpus");
    let names = [
        "font-tt-subset-word2016-4p.pdf",
        "font-type1-pdftex-tracemonkey-2col.pdf",
        "doc-invoice-itextsharp-demo.pdf",
    ];
    let mut seen = 0;
    for name in names {
        let Ok(bytes) = std::fs::read(dir.join(name)) else {
            continue;
        };
        seen += 1;
        let a = rasterize_page(&bytes, None, 0, VERIFY_PX_PER_PT).expect("renders");
        let b = rasterize_page(&bytes, None, 0, VERIFY_PX_PER_PT).expect("renders");
        assert_eq!(a.width, b.width);
        assert!(a.pixels == b.pixels, "{name}: renders differ");
        let rep = diff(&a, &b, &[], 0, CHANNEL_TOLERANCE).expect("same size");
        assert_eq!(rep.changed_pixels_total, 0);
        let png = crop_png(&a, [50.0, 50.0, 300.0, 120.0], 200_000).expect("png");
        assert!(png.len() <= 200_000 && png.starts_with(b"\x89PNG"));
    }
    if seen == 0 {
        eprintln!("SKIP: corpus not found");
    }
}
