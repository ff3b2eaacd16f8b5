//! Debug helper: `redact_one IN OUT FIND` redacts every occurrence and prints the result
//! (changes, failed, removed, residual); the output is written to OUT.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let lib = std::env::var("PDFIUM_LIB_PATH").expect("PDFIUM_LIB_PATH");
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("init");
    let bytes = std::fs::read(&a[1]).expect("read");
    use pdfedit_engine::edit::*;
    let req = EditRequest {
        edits: vec![Edit {
            index: 0,
            op: EditOp::Redact,
            find: a[3].clone(),
            ..Edit::default()
        }],
        password: std::env::var("PDF_PASSWORD").ok(),
        options: EditOptions {
            break_signature: true,
            ..EditOptions::default()
        },
    };
    let r = edit(&bytes, &req).expect("edit");
    for c in &r.changes {
        println!(
            "change p{} verified={} collateral={} box={:?}",
            c.page, c.verified, c.collateral_pixels, c.bbox
        );
    }
    for f in &r.failed {
        println!("failed {} {}", f.reason, f.message);
    }
    for x in &r.removed {
        println!("removed {} p{:?} {}", x.kind, x.page, x.location);
    }
    for x in &r.residual {
        println!(
            "residual {} p{:?} {} {:?}",
            x.kind, x.page, x.location, x.text
        );
    }
    println!("unmatched {}", r.unmatched.len());
    std::fs::write(&a[2], &r.pdf).expect("write");
}
