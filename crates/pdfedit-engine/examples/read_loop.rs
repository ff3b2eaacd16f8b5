//! Reads a document's text N times (text and forms, as `/v1/text` asks): `read_loop FILE N`.
//! A profiling aid (`perf record`): prints the median wall time of one read.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().expect("usage: read_loop FILE [N]");
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let lib = std::env::var("PDFIUM_LIB_PATH")
        .unwrap_or_else(|_| "vendor/pdfium/lib/libpdfium.so".to_string());
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("PDFium binds");
    let bytes = std::fs::read(path).expect("file reads");
    let mut times = Vec::with_capacity(n);
    let mut spans = 0;
    for _ in 0..n {
        let t0 = std::time::Instant::now();
        let r = pdfedit_engine::read_text(&bytes, None, None, true, true).expect("text reads");
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
        spans = r.pages.iter().map(|p| p.spans.len()).sum::<usize>();
    }
    times.sort_by(f64::total_cmp);
    println!("{spans} spans, median {:.1} ms", times[n / 2]);
}
