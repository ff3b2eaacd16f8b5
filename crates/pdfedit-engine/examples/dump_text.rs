//! Prints a document's text as the engine reads it: `dump_text FILE [PASSWORD] [--spans]`.
//! A debugging aid for comparing with `pdftotext`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: dump_text FILE [PASSWORD] [--spans]");
        std::process::exit(2);
    };
    let spans = args.iter().any(|a| a == "--spans");
    let password = args.get(1).filter(|a| *a != "--spans").map(String::as_str);
    let lib = std::env::var("PDFIUM_LIB_PATH")
        .unwrap_or_else(|_| "vendor/pdfium/lib/libpdfium.so".to_string());
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("PDFium binds");
    let bytes = std::fs::read(path).expect("file reads");
    let result =
        pdfedit_engine::read_text(&bytes, password, None, true, false).expect("text reads");
    for page in &result.pages {
        println!("=== page {}", page.page);
        if spans {
            for s in &page.spans {
                println!(
                    "{:>4} {:>3} {:<10} {:?} {:?} space_before={}",
                    s.line, s.block, s.source, s.bbox, s.text, s.space_before
                );
            }
        } else {
            println!("{}", page.plain_text());
        }
    }
}
