//! Prints what pdf-fonts reads from every font of a PDF: `cargo run --example dump_fonts -- file.pdf [font-name-substring]`.

use lopdf::{Document, Object};
use pdf_fonts::Font;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: dump_fonts FILE.pdf [NAME]");
        return;
    };
    let doc = match Document::load(path) {
        Ok(d) => d,
        Err(e) => return eprintln!("cannot open {path}: {e}"),
    };
    for (id, obj) in &doc.objects {
        let Object::Dictionary(d) = obj else { continue };
        if !d
            .get(b"Type")
            .and_then(Object::as_name)
            .is_ok_and(|t| t == b"Font")
        {
            continue;
        }
        let Ok(f) = Font::load_id(&doc, *id) else {
            continue;
        };
        if args
            .get(2)
            .is_some_and(|n| !f.base_font().contains(n.as_str()))
        {
            continue;
        }
        println!(
            "{id:?} {} {:?} program={:?} symbolic={} vertical={}",
            f.base_font(),
            f.kind(),
            f.program_kind(),
            f.is_symbolic(),
            f.is_vertical()
        );
        let max = if f.is_composite() { 0x1_0000 } else { 256 };
        let rows: Vec<String> = (0..max)
            .filter(|c| f.unicode_str(*c).is_some())
            .take(60)
            .map(|c| {
                format!(
                    "{c:#x}:{:?}/{:?}/{:?}/{}",
                    f.unicode_str(c).unwrap_or("-"),
                    f.glyph_name(c),
                    f.code_has_glyph(c),
                    f.width(c)
                )
            })
            .collect();
        println!("  {}", rows.join(" "));
    }
}
