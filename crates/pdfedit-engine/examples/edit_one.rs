//! Debug helper: `edit_one IN OUT FIND REPLACE [fit]` prints the result summary.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let lib = std::env::var("PDFIUM_LIB_PATH").expect("PDFIUM_LIB_PATH");
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("init");
    let bytes = std::fs::read(&a[1]).expect("read");
    use pdfedit_engine::edit::*;
    let fit = match a.get(5).map(String::as_str) {
        Some("none") => Fit::None,
        Some("shrink") => Fit::Shrink,
        _ => Fit::Auto,
    };
    let op = if a[4].is_empty() {
        EditOp::Delete
    } else {
        EditOp::Replace
    };
    let req = EditRequest {
        edits: vec![Edit {
            index: 0,
            op,
            find: a[3].clone(),
            replace: a[4].clone(),
            match_mode: MatchMode::Exact,
            scope: Scope {
                // EDIT_PAGES=4,5 limits to pages; EDIT_ALL=1 edits every occurrence.
                occurrence: if std::env::var("EDIT_ALL").is_ok() {
                    None
                } else {
                    Some(Occurrence::First)
                },
                pages: std::env::var("EDIT_PAGES")
                    .ok()
                    .map(|v| v.split(',').filter_map(|p| p.parse().ok()).collect()),
                ..Scope::default()
            },
            fit,
            style: Style::default(),
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
    println!(
        "failed {:?}",
        r.failed
            .iter()
            .map(|f| (f.reason, f.message.clone()))
            .collect::<Vec<_>>()
    );
    println!("unmatched {}", r.unmatched.len());
    std::fs::write(&a[2], &r.pdf).expect("write");
}
