//! Every content stream of every corpus PDF: lexing and parsing never panic, spans stay
//! in bounds and in order, only white space and comments fall outside ops, and patching
//! every op with its own bytes gives back the identical stream. Each page is also
//! interpreted with a stand-in font to show the interpreter survives real files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use lopdf::{Document, LoadOptions, Object, ObjectId};
use pdf_content::{
    interpret_page, parse, patch, tokenize, FontKey, FontSource, GlyphFont, OpKind, StreamId,
};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

/// Passwords from the manifest, by file name: user password first, then owner.
fn passwords(dir: &Path) -> Vec<(String, Vec<String>)> {
    let Ok(text) = std::fs::read_to_string(dir.join("manifest.json")) else {
        return Vec::new();
    };
    let Ok(serde_json::Value::Array(entries)) = serde_json::from_str::<serde_json::Value>(&text)
    else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|e| {
            let file = e.get("file")?.as_str()?.to_owned();
            let pws = ["user_password", "owner_password"]
                .iter()
                .filter_map(|k| e.get(*k).and_then(|v| v.as_str()).map(str::to_owned))
                .collect();
            Some((file, pws))
        })
        .collect()
}

fn load(bytes: &[u8], pws: &[String]) -> Result<Document, String> {
    let mut last_error = String::new();
    let attempts = pws
        .iter()
        .map(|p| LoadOptions::with_password(p))
        .chain([LoadOptions::default()]);
    for options in attempts {
        match Document::load_mem_with_options(bytes, options) {
            Ok(doc) => return Ok(doc),
            Err(e) => last_error = e.to_string(),
        }
    }
    Err(last_error)
}

/// Page contents, Form XObjects (annotation appearances included) and Type 3 glyph
/// procedures: every stream that holds content-stream syntax.
fn content_streams(doc: &Document) -> BTreeSet<ObjectId> {
    let mut ids = BTreeSet::new();
    for page in doc.get_pages().into_values() {
        ids.extend(doc.get_page_contents(page));
    }
    for (id, object) in &doc.objects {
        match object {
            Object::Stream(s)
                if s.dict.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Form") =>
            {
                ids.insert(*id);
            }
            Object::Dictionary(d)
                if d.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Type3") =>
            {
                if let Ok(procs) = d.get_deref(b"CharProcs", doc).and_then(Object::as_dict) {
                    ids.extend(procs.iter().filter_map(|(_, v)| v.as_reference().ok()));
                }
            }
            _ => {}
        }
    }
    ids
}

struct AnyFont;

impl GlyphFont for AnyFont {
    fn next_code(&self, bytes: &[u8]) -> (u32, usize) {
        (u32::from(bytes[0]), 1)
    }
    fn unicode(&self, code: u32) -> Option<String> {
        char::from_u32(code).map(String::from)
    }
    fn width(&self, _: u32) -> f64 {
        500.0
    }
    fn is_vertical(&self) -> bool {
        false
    }
    fn vertical_advance(&self, _: u32) -> f64 {
        -1000.0
    }
    fn ascent(&self) -> f64 {
        750.0
    }
    fn descent(&self) -> f64 {
        -250.0
    }
    fn is_type3(&self) -> bool {
        false
    }
    fn font_matrix(&self) -> [f64; 6] {
        [0.001, 0.0, 0.0, 0.001, 0.0, 0.0]
    }
}

struct AnyFonts;

impl FontSource for AnyFonts {
    fn font(&mut self, _: StreamId, _: &FontKey) -> Option<Rc<dyn GlyphFont>> {
        Some(Rc::new(AnyFont))
    }
}

#[derive(Default)]
struct Stats {
    streams: usize,
    bytes: usize,
    ops: usize,
    malformed: usize,
    unknown: usize,
    inline_images: usize,
    glyphs: usize,
    undecodable: usize,
    /// Streams where lopdf's own parser (an independent reader) counts a different
    /// number of text-showing operators than we do.
    lopdf_disagrees: Vec<String>,
    lopdf_compared: usize,
}

const SHOW_OPERATORS: [&str; 4] = ["Tj", "TJ", "'", "\""];

/// Text-showing operators counted by lopdf's content parser; `None` if it gives up
/// (an error, or no operations at all from a non-empty stream: lopdf returns nothing for
/// a stream that starts in the middle of an op split across /Contents, e.g. `>> BDC`).
fn lopdf_show_count(bytes: &[u8]) -> Option<usize> {
    let content = lopdf::content::Content::decode(bytes).ok()?;
    if content.operations.is_empty() && bytes.iter().any(|b| !b.is_ascii_whitespace()) {
        return None;
    }
    Some(
        content
            .operations
            .iter()
            .filter(|o| SHOW_OPERATORS.contains(&o.operator.as_str()))
            .count(),
    )
}

/// Checks one decoded stream; returns a description of the first problem.
fn check_stream(label: &str, bytes: &[u8], stats: &mut Stats) -> Result<(), String> {
    let mut end = 0;
    for token in tokenize(bytes) {
        if token.span.start < end || token.span.end > bytes.len() || token.span.is_empty() {
            return Err(format!("bad token span {:?}", token.span));
        }
        end = token.span.end;
    }
    let ops = parse(bytes);
    let mut end = 0;
    let mut edits = Vec::with_capacity(ops.len());
    for op in &ops {
        if op.span.start < end || op.span.end > bytes.len() {
            return Err(format!("bad op span {:?} after {end}", op.span));
        }
        if !blank(&bytes[end..op.span.start]) {
            return Err(format!("bytes {}..{} outside every op", end, op.span.start));
        }
        for operand in &op.operands {
            if operand.span.start < op.span.start || operand.span.end > op.span.end {
                return Err(format!(
                    "operand {:?} outside op {:?}",
                    operand.span, op.span
                ));
            }
        }
        end = op.span.end;
        edits.push((op.span.clone(), bytes[op.span.clone()].to_vec()));
        match op.kind {
            OpKind::Malformed(_) => stats.malformed += 1,
            OpKind::Other(_) => stats.unknown += 1,
            OpKind::InlineImage { .. } => stats.inline_images += 1,
            _ => {}
        }
    }
    if !blank(&bytes[end..]) {
        return Err(format!("tail {}.. outside every op", end));
    }
    if patch(bytes, &[]).map_err(|e| e.to_string())? != bytes {
        return Err("patch without edits changed bytes".into());
    }
    if patch(bytes, &edits).map_err(|e| e.to_string())? != bytes {
        return Err("patch of every op with its own bytes changed bytes".into());
    }
    if let Some(theirs) = lopdf_show_count(bytes) {
        let ours = ops
            .iter()
            .filter(|o| {
                SHOW_OPERATORS
                    .iter()
                    .any(|s| s.as_bytes() == o.kind.operator())
            })
            .count();
        stats.lopdf_compared += 1;
        if ours != theirs {
            stats
                .lopdf_disagrees
                .push(format!("{label}: ours {ours}, lopdf {theirs}"));
        }
    }
    stats.streams += 1;
    stats.bytes += bytes.len();
    stats.ops += ops.len();
    Ok(())
}

/// White space and comments only.
fn blank(gap: &[u8]) -> bool {
    let mut in_comment = false;
    gap.iter().all(|&b| {
        if b == b'%' {
            in_comment = true;
        } else if b == b'\r' || b == b'\n' {
            in_comment = false;
            return true;
        }
        in_comment || matches!(b, 0 | 9 | 12 | 32)
    })
}

#[test]
fn every_corpus_content_stream_lexes_parses_and_patches_byte_exactly() {
    let dir = corpus_dir();
    if !dir.is_dir() {
        eprintln!(
            "SKIP: no corpus at {} (shared corpus not checked out)",
            dir.display()
        );
        return;
    }
    let passwords = passwords(&dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("pdf")))
        .collect();
    files.sort();
    let mut stats = Stats::default();
    let mut failures = Vec::new();
    let mut unloadable = Vec::new();
    for path in &files {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let pws = passwords
            .iter()
            .find(|(f, _)| *f == name)
            .map(|(_, p)| p.clone())
            .unwrap_or_default();
        let bytes = std::fs::read(path).expect("file readable");
        let doc = match load(&bytes, &pws) {
            Ok(doc) => doc,
            Err(e) => {
                unloadable.push(format!("{name}: {e}"));
                continue;
            }
        };
        for id in content_streams(&doc) {
            let Ok(stream) = doc.get_object(id).and_then(Object::as_stream) else {
                continue;
            };
            let Ok(decoded) =
                stream.get_plain_content_with_limit(pdf_content::interp::MAX_STREAM_BYTES)
            else {
                stats.undecodable += 1;
                continue;
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                check_stream(&format!("{name} {id:?}"), &decoded, &mut stats)
            }));
            match result {
                Ok(Ok(())) => {}
                Ok(Err(problem)) => failures.push(format!("{name} {id:?}: {problem}")),
                Err(_) => failures.push(format!("{name} {id:?}: panicked")),
            }
        }
        for page in doc.get_pages().into_values() {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                interpret_page(&doc, page, &mut AnyFonts).map(|p| p.glyphs.len())
            }));
            match result {
                Ok(Ok(n)) => stats.glyphs += n,
                Ok(Err(e)) => failures.push(format!("{name} page {page:?}: {e}")),
                Err(_) => failures.push(format!("{name} page {page:?}: interpreter panicked")),
            }
        }
    }
    eprintln!(
        "corpus: {} files, {} streams ({} bytes), {} ops ({} malformed, {} unknown operators, {} inline images), {} glyphs, {} undecodable streams",
        files.len(),
        stats.streams,
        stats.bytes,
        stats.ops,
        stats.malformed,
        stats.unknown,
        stats.inline_images,
        stats.glyphs,
        stats.undecodable
    );
    eprintln!(
        "lopdf cross-check: {} streams compared, {} disagree on the number of text-showing ops {:?}",
        stats.lopdf_compared,
        stats.lopdf_disagrees.len(),
        stats.lopdf_disagrees.iter().take(5).collect::<Vec<_>>()
    );
    for u in &unloadable {
        eprintln!("SKIP (lopdf cannot open): {u}");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        stats.lopdf_disagrees.is_empty(),
        "text-showing op counts differ from lopdf's:\n{}",
        stats.lopdf_disagrees.join("\n")
    );
    assert!(stats.streams > 0, "no content streams checked");
}
