//! Embedding a substitute font into a real PDF, checked with independent tools
//! (poppler's pdffonts / pdftotext, qpdf --check). Tests skip with a message when a tool or
//! a font file is absent.

use lopdf::{dictionary, Document, Object, ObjectId, Stream};
use pdf_fonts::embed::{embed_font_file, EmbedError, EmbeddedFont};
use std::path::{Path, PathBuf};
use std::process::Command;

const SANS: &str = "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf";
const C059: &str = "/usr/share/fonts/opentype/urw-base35/C059-Roman.otf";

/// A temporary file removed when dropped.
struct TempPdf(PathBuf);

impl TempPdf {
    fn new(tag: &str) -> TempPdf {
        TempPdf(
            std::env::temp_dir().join(format!("pdfedit-embed-{tag}-{}.pdf", std::process::id())),
        )
    }
}

impl Drop for TempPdf {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn have_tool(tool: &str) -> bool {
    let found = Command::new(tool).arg("-v").output().is_ok();
    if !found {
        eprintln!("skipped: {tool} not installed");
    }
    found
}

fn have_font(path: &str) -> bool {
    let found = Path::new(path).exists();
    if !found {
        eprintln!("skipped: {path} not installed");
    }
    found
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// A one-page document whose page shows `lines` (already encoded) in font /F1.
fn one_page(doc: &mut Document, font: ObjectId, lines: &[Vec<u8>]) {
    let mut content = String::from("BT /F1 24 Tf 72 720 Td 30 TL\n");
    for line in lines {
        content.push_str(&format!("<{}> Tj T*\n", hex(line)));
    }
    content.push_str("ET\n");
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
    let pages_id = doc.new_object_id();
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page",
        "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        "Contents" => content_id,
        "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(
            dictionary! { "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1 },
        ),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
}

fn run(tool: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn extracted_text(pdf: &Path) -> String {
    let path = pdf.to_string_lossy();
    let (ok, text) = run("pdftotext", &["-enc", "UTF-8", &path, "-"]);
    assert!(ok, "pdftotext failed: {text}");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_qpdf_clean(pdf: &Path) {
    let (ok, out) = run("qpdf", &["--check", &pdf.to_string_lossy()]);
    assert!(ok, "qpdf --check failed:\n{out}");
    assert!(
        out.contains("No syntax or stream encoding errors found"),
        "{out}"
    );
    assert!(!out.to_lowercase().contains("warning"), "{out}");
}

/// The pdffonts row of the one font: (name, type, embedded, subset, unicode).
fn pdffonts_row(pdf: &Path) -> String {
    let (ok, out) = run("pdffonts", &[&pdf.to_string_lossy()]);
    assert!(ok, "pdffonts failed: {out}");
    let rows: Vec<&str> = out.lines().skip(2).collect();
    assert_eq!(rows.len(), 1, "{out}");
    rows[0].to_string()
}

#[test]
fn liberation_sans_subset_extracts_accented_latin_and_greek() {
    if !(have_font(SANS) && have_tool("pdffonts") && have_tool("pdftotext") && have_tool("qpdf")) {
        return;
    }
    let text = "Ñandú Αθήνα";
    let mut doc = Document::with_version("1.7");
    let font = embed_font_file(&mut doc, Path::new(SANS), text).expect("embed");
    let encoded = font.encode(text).expect("encode");
    assert_eq!(encoded.len(), 2 * text.chars().count());
    // Distinct glyphs plus .notdef: Ñ a n d ú space Α θ ή ν α.
    assert_eq!(font.glyph_count(), 11);
    one_page(&mut doc, font.font_id, &[encoded]);
    let pdf = TempPdf::new("sans");
    doc.save(&pdf.0).expect("save");

    let row = pdffonts_row(&pdf.0);
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert!(
        cols[0].ends_with("+LiberationSans") && cols[0].len() == "ABCDEF+LiberationSans".len(),
        "{row}"
    );
    assert!(row.contains("CID TrueType"), "{row}");
    assert!(row.contains("Identity-H"), "{row}");
    // emb, sub, uni columns.
    assert!(row.contains("yes yes yes"), "{row}");
    assert_eq!(extracted_text(&pdf.0), text);
    assert_qpdf_clean(&pdf.0);

    // The subset is small: the full file is ~400 KB.
    let program = doc
        .get_object(font.objects.program)
        .and_then(Object::as_stream)
        .expect("program");
    assert!(
        program.content.len() < 20_000,
        "subset is {} bytes",
        program.content.len()
    );
}

#[test]
fn widths_are_the_fonts_advances_in_thousandths() {
    if !have_font(SANS) {
        return;
    }
    let mut doc = Document::with_version("1.7");
    let font = embed_font_file(&mut doc, Path::new(SANS), "aW ").expect("embed");
    let cid = |c: &str| {
        u16::from_be_bytes(
            font.encode(c).expect("encode")[..2]
                .try_into()
                .expect("2 bytes"),
        )
    };
    assert_eq!(font.width(cid("a")), 556.0);
    assert_eq!(font.width(cid("W")), 944.0);
    assert_eq!(font.width(cid(" ")), 278.0);
    assert_eq!(font.text_width("aW a"), 556.0 + 944.0 + 278.0 + 556.0);
    // /W in the descendant carries the same numbers, CID 0 first.
    let descendant = doc
        .get_dictionary(font.objects.descendant)
        .expect("descendant");
    let w = descendant.get(b"W").and_then(Object::as_array).expect("W");
    let run = w[1].as_array().expect("run");
    let widths: Vec<i64> = run
        .iter()
        .map(|o| o.as_i64().expect("integer width"))
        .collect();
    assert_eq!(widths[1..], [556, 944, 278]);
}

#[test]
fn characters_the_font_lacks_are_listed() {
    if !have_font(SANS) {
        return;
    }
    let mut doc = Document::with_version("1.7");
    match embed_font_file(&mut doc, Path::new(SANS), "a中b文中") {
        Err(EmbedError::MissingGlyphs { chars }) => assert_eq!(chars, vec!['中', '文']),
        other => panic!("expected MissingGlyphs, got {other:?}"),
    }
    assert!(
        doc.objects.is_empty(),
        "a failed embed leaves nothing behind"
    );
    let mut font = embed_font_file(&mut doc, Path::new(SANS), "ab").expect("embed");
    match font.encode("abc") {
        Err(EmbedError::MissingGlyphs { chars }) => assert_eq!(chars, vec!['c']),
        other => panic!("expected MissingGlyphs, got {other:?}"),
    }
    // A refused addition changes nothing: 'c' was not half-added.
    let before = font.base_font.clone();
    assert!(matches!(
        font.add_text(&mut doc, "c中"),
        Err(EmbedError::MissingGlyphs { .. })
    ));
    assert!(font.encode("c").is_err());
    assert_eq!(font.base_font, before);
    assert_eq!(font.glyph_count(), 2);
}

#[test]
fn a_second_edit_adds_glyphs_and_keeps_earlier_cids() {
    if !(have_font(SANS) && have_tool("pdftotext") && have_tool("qpdf") && have_tool("pdffonts")) {
        return;
    }
    // First request: embed, draw, save.
    let mut doc = Document::with_version("1.7");
    let first = embed_font_file(&mut doc, Path::new(SANS), "Hello").expect("embed");
    let hello = first.encode("Hello").expect("encode");
    one_page(&mut doc, first.font_id, std::slice::from_ref(&hello));
    let pdf = TempPdf::new("extend");
    doc.save(&pdf.0).expect("save");

    // Second request: reload, reopen the font, add new characters, draw a second line.
    let mut doc = Document::load(&pdf.0).expect("load");
    let data = std::fs::read(SANS).expect("font");
    let mut font = EmbeddedFont::open(&doc, first.font_id, data).expect("open");
    assert_eq!(font.encode("Hello").expect("encode"), hello);
    font.add_text(&mut doc, "Ñandú Αθήνα").expect("add");
    assert_eq!(
        font.encode("Hello").expect("encode"),
        hello,
        "earlier CIDs must not move"
    );
    assert_ne!(
        font.base_font, first.base_font,
        "a new glyph set gets a new subset tag"
    );
    let second = font.encode("Ñandú Αθήνα").expect("encode");
    let page = doc.page_iter().next().expect("page");
    let content = doc.get_page_content(page);
    let mut content = String::from_utf8(content).expect("ascii content");
    content = content.replace("ET\n", &format!("<{}> Tj T*\nET\n", hex(&second)));
    let content_id = doc
        .get_dictionary(page)
        .and_then(|p| p.get(b"Contents"))
        .and_then(Object::as_reference)
        .expect("contents");
    doc.set_object(
        content_id,
        Stream::new(dictionary! {}, content.into_bytes()),
    );
    doc.save(&pdf.0).expect("save");

    assert_eq!(extracted_text(&pdf.0), "Hello\nÑandú Αθήνα");
    assert_qpdf_clean(&pdf.0);
    let row = pdffonts_row(&pdf.0);
    assert!(row.starts_with(&font.base_font), "{row}");
}

#[test]
fn cff_otf_embeds_as_cid_type0() {
    if !(have_font(C059) && have_tool("pdffonts") && have_tool("pdftotext") && have_tool("qpdf")) {
        return;
    }
    let text = "Schoolbook naïve café";
    let mut doc = Document::with_version("1.7");
    let font = embed_font_file(&mut doc, Path::new(C059), text).expect("embed");
    let descendant = doc
        .get_dictionary(font.objects.descendant)
        .expect("descendant");
    assert_eq!(
        descendant
            .get(b"Subtype")
            .and_then(Object::as_name)
            .expect("subtype"),
        b"CIDFontType0"
    );
    one_page(
        &mut doc,
        font.font_id,
        &[font.encode(text).expect("encode")],
    );
    let pdf = TempPdf::new("cff");
    doc.save(&pdf.0).expect("save");
    let row = pdffonts_row(&pdf.0);
    assert!(row.contains("CID Type 0C"), "{row}");
    assert!(row.contains("yes yes yes"), "{row}");
    assert_eq!(extracted_text(&pdf.0), text);
    assert_qpdf_clean(&pdf.0);
}
