//! Debug helper: `char_origins A.pdf B.pdf PAGE` prints characters whose PDFium origin
//! differs between the two files (matched by order after the first difference in text).
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let lib = std::env::var("PDFIUM_LIB_PATH").expect("PDFIUM_LIB_PATH");
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("init");
    let page: u32 = a[3].parse().expect("page");
    let ba = std::fs::read(&a[1]).expect("a");
    let bb = std::fs::read(&a[2]).expect("b");
    let da = pdf_render::Document::open(&ba, None).expect("open a");
    let db = pdf_render::Document::open(&bb, None).expect("open b");
    let ca = da.page_chars(page - 1).expect("chars a");
    let cb = db.page_chars(page - 1).expect("chars b");
    let key = |c: &pdf_render::RawChar| (c.ch, (c.origin.1 * 10.0).round() as i64);
    let mut jb = 0;
    for c in ca.iter().filter(|c| !c.generated) {
        // The same character on the same baseline, nearest in x.
        let best = cb
            .iter()
            .filter(|d| !d.generated && key(d) == key(c))
            .min_by(|p, q| {
                (p.origin.0 - c.origin.0)
                    .abs()
                    .total_cmp(&(q.origin.0 - c.origin.0).abs())
            });
        if let Some(d) = best {
            let dx = d.origin.0 - c.origin.0;
            if dx != 0.0 && dx.abs() < 0.5 {
                jb += 1;
                println!("{:?} at {:?}: dx {dx:e}", c.ch, c.origin);
            }
        }
    }
    println!("{jb} characters moved by less than half a point");
}
