//! Debug helper: `insert_one IN OUT PHRASE TEXT` inserts TEXT inline after the first
//! PHRASE and prints the result summary.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 5 {
        eprintln!("usage: insert_one IN OUT PHRASE TEXT");
        std::process::exit(2);
    }
    let lib = std::env::var("PDFIUM_LIB_PATH").expect("PDFIUM_LIB_PATH");
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("init");
    let bytes = std::fs::read(&a[1]).expect("read");
    use pdfedit_engine::edit::*;
    let req = EditRequest {
        edits: vec![Edit {
            op: EditOp::Insert,
            insert: Some(InsertSpec {
                text: a[4].clone(),
                at: At::After {
                    phrase: a[3].clone(),
                    newline: false,
                    page: None,
                },
            }),
            ..Edit::default()
        }],
        password: std::env::var("PDF_PASSWORD").ok(),
        ..EditRequest::default()
    };
    let r = edit(&bytes, &req).expect("edit");
    for c in &r.changes {
        println!(
            "change p{} {:?} {} {} collateral={} box={:?}",
            c.page, c.font_source, c.font_used, c.verified, c.collateral_pixels, c.bbox
        );
    }
    for f in &r.failed {
        println!("failed {:?} {}", f.reason, f.message);
    }
    println!("unmatched {}", r.unmatched.len());
    std::fs::write(&a[2], &r.pdf).expect("write");
}
