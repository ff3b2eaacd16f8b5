//! The budget scan on real documents: none is refused, even under the keyless budgets,
//! and what the scan adds to opening each one (printed; run with `--nocapture`).

mod common;

use std::time::Instant;

use pdfedit_engine::budget::scan;
use pdfedit_engine::Limits;

/// The keyless and free plans' budgets (src/billing/plans.ts).
const TIGHT: Limits = Limits {
    stream_bytes: 256 << 20,
    document_bytes: 512 << 20,
    page_operators: 300_000,
    form_depth: 8,
    form_draws: 5_000,
    page_side: pdfedit_engine::budget::PAGE_SIDE,
};

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn p50(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn no_corpus_document_is_refused_and_the_scan_is_cheap() {
    let Some(files) = common::corpus() else {
        eprintln!("SKIP: ../shared/corpus not found");
        return;
    };
    if !common::init_pdfium() {
        return;
    }
    let (mut scans, mut opens) = (Vec::new(), Vec::new());
    for f in &files {
        let bytes = std::fs::read(&f.path).unwrap();
        let password = f.password.as_deref();
        let t = Instant::now();
        let s = scan(&bytes, password, &TIGHT)
            .unwrap_or_else(|e| panic!("{}: refused under the keyless budgets: {e}", f.name));
        let scan_ms = ms(t);
        assert!(
            scan(&bytes, password, &Limits::default()).is_ok(),
            "{}",
            f.name
        );
        let t = Instant::now();
        let info = pdf_render::Document::open(&bytes, password).and_then(|d| d.info());
        let open_ms = ms(t);
        if let (Ok(info), Some(n)) = (&info, s.lopdf_pages) {
            assert_eq!(
                n, info.page_count as usize,
                "{}: page counts differ",
                f.name
            );
        }
        println!(
            "{:60} scan {scan_ms:7.2} ms  open {open_ms:7.2} ms  ops/page {:7}  depth {:2}  draws {:5}  counted {:10} B  streams decoded {}",
            f.name, s.page_operators, s.form_depth, s.form_draws, s.decoded_bytes, s.streams_decoded
        );
        scans.push(scan_ms);
        opens.push(open_ms);
    }
    let max = scans.iter().copied().fold(0.0, f64::max);
    println!(
        "scan over {} documents: p50 {:.2} ms, max {max:.2} ms (PDFium open + info: p50 {:.2} ms)",
        scans.len(),
        p50(&mut scans),
        p50(&mut opens)
    );
    // Generous for a shared 2-core machine; the real numbers are printed above.
    assert!(max < 2_000.0, "a scan took {max} ms");
}
