//! Prints the spans of a PDF: `cargo run --example dump_text -- file.pdf [password]`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: dump_text FILE [PASSWORD]");
        std::process::exit(2);
    };
    let bytes = std::fs::read(path).expect("file reads");
    let result =
        pdfedit_engine::read_text(&bytes, args.get(2).map(String::as_str), None, true, true);
    match result {
        Ok(r) if std::env::var_os("DUMP_PLAIN").is_some() => {
            for p in &r.pages {
                println!("{}", p.plain_text());
            }
        }
        Ok(r) => {
            for p in &r.pages {
                for s in &p.spans {
                    println!(
                        "p{} l{} b{} {:?} {:?} {} {} {:?} {}",
                        s.page, s.line, s.block, s.bbox, s.font, s.size, s.color, s.flags, s.text
                    );
                }
            }
            for f in &r.fields {
                println!("field {:?}", f);
            }
        }
        Err(e) => eprintln!("error: {e}"),
    }
}
