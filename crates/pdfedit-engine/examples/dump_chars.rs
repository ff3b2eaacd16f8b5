//! Debug helper: `dump_chars FILE PAGE` prints PDFium's characters of a page in its order
//! (index, character, generated, origin, tight box).
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let lib = std::env::var("PDFIUM_LIB_PATH")
        .unwrap_or_else(|_| "vendor/pdfium/lib/libpdfium.so".to_string());
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("PDFium binds");
    let page: u32 = a.get(2).map_or(1, |p| p.parse().expect("page"));
    let bytes = std::fs::read(&a[1]).expect("file reads");
    let doc = pdf_render::Document::open(&bytes, None).expect("opens");
    for c in doc.page_chars(page - 1).expect("chars") {
        println!(
            "{:>4} {:?} U+{:04X} gen={} origin=({:.2},{:.2}) box=[{:.2} {:.2} {:.2} {:.2}] font={}",
            c.index,
            c.ch,
            c.ch.map_or(0, u32::from),
            c.generated,
            c.origin.0,
            c.origin.1,
            c.bbox.x0,
            c.bbox.y0,
            c.bbox.x1,
            c.bbox.y1,
            c.font
        );
    }
}
