//! Profiling helper: `batch_timing IN FIND REPLACE [RECORDS]` runs RECORDS edits of one
//! template as a batch's engine process does (`options.template_cache`, lazy previews),
//! each record's replace text with `{i}` replaced by the record's number, and prints the
//! median stage timings (MARK=TEXT adds a sample mark; CACHE=0 turns the cache off)
//! of the records after the first and their wall time.
use std::time::Instant;

use pdfedit_engine::edit::*;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let lib = std::env::var("PDFIUM_LIB_PATH").expect("PDFIUM_LIB_PATH");
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("init");
    let bytes = std::fs::read(&a[1]).expect("read");
    let records: usize = a.get(4).and_then(|s| s.parse().ok()).unwrap_or(50);
    let cached = std::env::var("CACHE").map_or(true, |v| v != "0");
    let request = |i: usize| EditRequest {
        edits: vec![Edit {
            index: 0,
            op: EditOp::Replace,
            find: a[2].clone(),
            replace: a[3].replace("{i}", &i.to_string()),
            ..Edit::default()
        }],
        options: EditOptions {
            template_cache: cached,
            lazy_previews: true,
            mark: std::env::var("MARK").ok(),
            ..EditOptions::default()
        },
        ..EditRequest::default()
    };
    let (mut wall, mut stages) = (Vec::new(), Vec::new());
    for i in 0..records {
        let t = Instant::now();
        let r = edit(&bytes, &request(i)).expect("edit");
        assert!(!r.changes.is_empty(), "record {i} changed nothing");
        if i > 0 {
            wall.push(t.elapsed().as_secs_f64() * 1e3);
            stages.push(r.timings);
        }
    }
    let m = |f: &dyn Fn(&Timings) -> f64| median(stages.iter().map(f).collect());
    println!(
        "wall {:.2} | parse {:.2} edit {:.2} render {:.2} diff {:.2} save {:.2} mark {:.2} total {:.2}",
        median(wall),
        m(&|t| t.parse_ms),
        m(&|t| t.edit_ms),
        m(&|t| t.render_ms),
        m(&|t| t.diff_ms),
        m(&|t| t.save_ms),
        m(&|t| t.mark_ms),
        m(&|t| t.total_ms),
    );
}
