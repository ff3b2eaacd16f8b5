//! Profiling helper: `edit_timing IN FIND REPLACE [RUNS]` runs a one-phrase replace RUNS
//! times and prints the engine's stage timings (medians; `unstaged` is the part of the
//! total no stage counts), the floor (two bare renders of
//! the touched page) and the ratio, plus the cost of opening the document alone (PDFium
//! facts, lopdf parse). `OCC=all` replaces every occurrence instead of the first;
//! `TEMPLATE=1` turns `options.template_cache` on (a stored document edited again).
//! The last line gives CPU means (this thread's run time from
//! `/proc/thread-self/schedstat`): on a busy machine they move far less than wall times.
//! Time it with the engine processes' malloc settings (`GLIBC_TUNABLES` as
//! `src/engine/pool.ts` sets it): without them each render's raster is mapped afresh,
//! faulted in and unmapped again (stored invoice: 13.1 ms of CPU per edit against 8.6).
use std::time::Instant;

use pdfedit_engine::edit::*;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// This thread's CPU time so far (ms), 0 where `/proc/thread-self/schedstat` is absent.
fn cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e6)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let lib = std::env::var("PDFIUM_LIB_PATH").expect("PDFIUM_LIB_PATH");
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("init");
    let bytes = std::fs::read(&a[1]).expect("read");
    let runs: usize = a.get(4).and_then(|s| s.parse().ok()).unwrap_or(5);
    let req = EditRequest {
        edits: vec![Edit {
            index: 0,
            op: EditOp::Replace,
            find: a[2].clone(),
            replace: a[3].clone(),
            scope: Scope {
                occurrence: match std::env::var("OCC").as_deref() {
                    Ok("all") => None,
                    _ => Some(Occurrence::First),
                },
                ..Scope::default()
            },
            ..Edit::default()
        }],
        options: EditOptions {
            template_cache: std::env::var("TEMPLATE").is_ok_and(|v| v == "1"),
            ..EditOptions::default()
        },
        ..EditRequest::default()
    };
    let first = edit(&bytes, &req).expect("edit");
    let page = first.changes.first().map(|c| c.page).expect("no change");
    let (mut wall, mut floor, mut stages) = (Vec::new(), Vec::new(), Vec::new());
    let (mut info, mut parse) = (Vec::new(), Vec::new());
    let (mut edit_cpu, mut floor_cpu) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (t, c) = (Instant::now(), cpu_ms());
        let r = edit(&bytes, &req).expect("edit");
        wall.push(t.elapsed().as_secs_f64() * 1e3);
        edit_cpu.push(cpu_ms() - c);
        stages.push(r.timings);
        let (t, c) = (Instant::now(), cpu_ms());
        bare_render(&bytes, None, page).expect("render");
        bare_render(&bytes, None, page).expect("render");
        floor.push(t.elapsed().as_secs_f64() * 1e3);
        floor_cpu.push(cpu_ms() - c);
        let t = Instant::now();
        pdfedit_engine::open_info(&bytes, None).expect("info");
        info.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        lopdf::Document::load_mem(&bytes).expect("parse");
        parse.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let m = |f: &dyn Fn(&Timings) -> f64| median(stages.iter().map(f).collect());
    let (w, fl) = (median(wall), median(floor));
    println!(
        "wall {w:.1} floor {fl:.1} ratio {:.2} | parse {:.1} edit {:.1} render {:.1} diff {:.1} save {:.1} mark {:.1} unstaged {:.2} total {:.1} | open_info {:.1} lopdf {:.1} | out {} bytes",
        w / fl,
        m(&|t| t.parse_ms),
        m(&|t| t.edit_ms),
        m(&|t| t.render_ms),
        m(&|t| t.diff_ms),
        m(&|t| t.save_ms),
        m(&|t| t.mark_ms),
        m(&|t| t.total_ms
            - t.parse_ms
            - t.edit_ms
            - t.render_ms
            - t.diff_ms
            - t.save_ms
            - t.mark_ms
            - t.ocr_ms),
        m(&|t| t.total_ms),
        median(info),
        median(parse),
        first.pdf.len()
    );
    println!(
        "cpu: edit {:.2} floor {:.2} ms (means: the run time is updated at scheduler events)",
        edit_cpu.iter().sum::<f64>() / edit_cpu.len() as f64,
        floor_cpu.iter().sum::<f64>() / floor_cpu.len() as f64
    );
}
