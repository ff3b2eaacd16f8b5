//! Shared set-up for the engine's integration tests: binding PDFium and finding the
//! real-world corpus (never copied into the repository).
#![allow(dead_code)] // each test binary uses a different subset of these helpers

use std::path::PathBuf;
use std::process::{Command, Output};

/// One corpus entry from `manifest.json`.
pub struct CorpusFile {
    pub path: PathBuf,
    pub name: String,
    pub password: Option<String>,
    pub user_password: Option<String>,
    pub owner_password: Option<String>,
    pub encrypted: bool,
    pub pages: u32,
    pub pages_without_text: u32,
    /// Why pdftotext's text holds more than the page's own text layer, if it does:
    /// pdftotext also prints the appearance streams of annotations and widgets.
    pub annotation_text: Option<&'static str>,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The corpus folder: `PDFEDIT_CORPUS_DIR` when set (a worktree that is not beside `shared`),
/// else `../shared/corpus` from the repository.
pub fn corpus_dir() -> PathBuf {
    std::env::var_os("PDFEDIT_CORPUS_DIR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/corpus"))
}

/// Binds PDFium from `PDFIUM_LIB_PATH` or the repository's vendor folder; `false` (with a
/// message) when neither exists.
pub fn init_pdfium() -> bool {
    let path = std::env::var_os("PDFIUM_LIB_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("vendor/pdfium/lib/libpdfium.so"));
    if !path.exists() {
        eprintln!(
            "SKIP: libpdfium.so not found (run scripts/fetch-pdfium.sh or set PDFIUM_LIB_PATH)"
        );
        return false;
    }
    pdfedit_engine::init(&path).expect("PDFium binds");
    true
}

/// The corpus, or `None` (with a message) when `../shared/corpus` is absent.
pub fn corpus() -> Option<Vec<CorpusFile>> {
    let dir = corpus_dir();
    let manifest = dir.join("manifest.json");
    let Ok(text) = std::fs::read_to_string(&manifest) else {
        eprintln!("SKIP: corpus not found at ../shared/corpus");
        return None;
    };
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).expect("manifest parses");
    let str_of = |v: &serde_json::Value| v.as_str().map(str::to_string);
    let num_of = |v: &serde_json::Value| {
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .unwrap_or(0) as u32
    };
    let files = entries
        .iter()
        .map(|e| {
            let user = str_of(&e["user_password"]);
            let owner = str_of(&e["owner_password"]);
            let name = e["file"].as_str().expect("file").to_string();
            CorpusFile {
                path: dir.join(&name),
                name,
                password: user.clone().or_else(|| owner.clone()),
                user_password: user,
                owner_password: owner,
                encrypted: e["enc"]["encrypted"].as_bool().unwrap_or(false),
                pages: num_of(&e["pages"]),
                pages_without_text: num_of(&e["pages_without_text"]),
                annotation_text: annotation_text(e),
            }
        })
        .collect();
    Some(files)
}

fn annotation_text(e: &serde_json::Value) -> Option<&'static str> {
    let other_annots = e["annots"]
        .as_object()
        .is_some_and(|a| a.keys().any(|k| k != "Link" && k != "Widget"));
    if other_annots {
        return Some("annotations with appearance text");
    }
    if e["form"]["with_value"].as_u64().unwrap_or(0) > 0 {
        return Some("filled form fields (widget appearances)");
    }
    if e["sig"]["fields"].as_u64().unwrap_or(0) > 0 && e["sig"]["signed"].as_u64().unwrap_or(0) > 0
    {
        return Some("signature appearances");
    }
    None
}

/// A corpus file's bytes after binding PDFium; `None` (with a message) when PDFium or the
/// corpus is absent.
pub fn load(name: &str) -> Option<Vec<u8>> {
    if !init_pdfium() {
        return None;
    }
    corpus()?;
    std::fs::read(corpus_dir().join(name)).ok()
}

/// The corpus's `manifest.json` entries (test phrases, traits), or `None` when absent.
pub fn manifest() -> Option<Vec<serde_json::Value>> {
    let text = std::fs::read_to_string(corpus_dir().join("manifest.json")).ok()?;
    Some(serde_json::from_str(&text).expect("manifest parses"))
}

/// A PDF written to a file of its own in the temp folder, removed when dropped (tests of
/// one binary run in parallel, so every file gets a new name).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(pdf: &[u8]) -> Scratch {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("pdfedit-test-{}-{n}.pdf", std::process::id()));
        std::fs::write(&path, pdf).expect("temp file written");
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The pages of `files`, in order, as one document made by `qpdf --empty --pages`;
/// `None` (with a SKIP line) when qpdf cannot make it.
pub fn qpdf_pages<P: AsRef<std::path::Path>>(
    files: impl IntoIterator<Item = P>,
) -> Option<Vec<u8>> {
    let out = Scratch::new(b"");
    let status = Command::new("qpdf")
        .args(["--empty", "--pages"])
        .args(files.into_iter().map(|f| f.as_ref().to_path_buf()))
        .arg("--")
        .arg(&out.0)
        .status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!("SKIP: qpdf not available");
        return None;
    }
    std::fs::read(&out.0).ok()
}

/// Runs `cmd args… FILE tail…` on `pdf`; `None` when the tool cannot be started.
pub fn run_tool(cmd: &str, args: &[&str], pdf: &[u8], tail: &[&str]) -> Option<Output> {
    let file = Scratch::new(pdf);
    Command::new(cmd)
        .args(args)
        .arg(&file.0)
        .args(tail)
        .output()
        .ok()
}

/// `pdftotext args… FILE -`: the text, or `None` when poppler is not installed or fails.
pub fn pdftotext(pdf: &[u8], args: &[&str]) -> Option<String> {
    run_tool("pdftotext", args, pdf, &["-"])
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// `(text, xMin, yMin)` of every word on page 1 in `pdftotext -bbox` output, or `None`
/// when pdftotext is not available.
pub fn pdftotext_words(pdf: &[u8]) -> Option<Vec<(String, f64, f64)>> {
    let html = pdftotext(pdf, &["-bbox", "-f", "1", "-l", "1"])?;
    let attr = |line: &str, key: &str| -> Option<f64> {
        let start = line.find(&format!("{key}=\""))? + key.len() + 2;
        line[start..].split('"').next()?.parse().ok()
    };
    Some(
        html.lines()
            .filter(|l| l.trim_start().starts_with("<word"))
            .filter_map(|l| {
                let text = l.split('>').nth(1)?.split('<').next()?.to_string();
                Some((text, attr(l, "xMin")?, attr(l, "yMin")?))
            })
            .collect(),
    )
}

/// Fields whose widgets all carry the NoView flag (bit 6): not shown on screen, so a
/// viewer and a flatten draw none of them. By fully qualified name.
pub fn no_view_fields(pdf: &[u8], password: Option<&str>) -> std::collections::BTreeSet<String> {
    let options = lopdf::LoadOptions::with_password(password.unwrap_or(""));
    let doc = lopdf::Document::load_mem_with_options(pdf, options).expect("lopdf opens");
    let mut shown = std::collections::BTreeSet::new();
    let mut unseen = std::collections::BTreeSet::new();
    for page_id in doc.get_pages().into_values() {
        let Ok(annots) = doc.get_page_annotations(page_id) else {
            continue;
        };
        for a in annots {
            // The fully qualified name: the /T of the widget and its parents.
            let mut parts = Vec::new();
            let mut node = Some(a);
            for _ in 0..32 {
                let Some(d) = node else { break };
                if let Ok(t) = d.get(b"T") {
                    parts.push(lopdf::decode_text_string(t).unwrap_or_default());
                }
                node = d
                    .get(b"Parent")
                    .ok()
                    .and_then(|p| p.as_reference().ok())
                    .and_then(|id| doc.get_dictionary(id).ok());
            }
            parts.reverse();
            let name = parts.join(".");
            let flags = a.get(b"F").ok().and_then(|f| f.as_i64().ok()).unwrap_or(0);
            if flags & 32 != 0 {
                unseen.insert(name);
            } else {
                shown.insert(name);
            }
        }
    }
    unseen.difference(&shown).cloned().collect()
}

/// A one-page PDF of `width` × `height` points drawing `content`, with Helvetica
/// (WinAnsi, not embedded) as font resource `/F1`.
pub fn helvetica_page(content: &[u8], width: i64, height: i64) -> Vec<u8> {
    use lopdf::{dictionary, Document, Object, Stream};
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let contents = doc.add_object(Stream::new(dictionary! {}, content.to_vec()));
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), width.into(), height.into()],
        "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
        "Contents" => contents,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![Object::Reference(page)], "Count" => 1,
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut pdf = Vec::new();
    doc.save_to(&mut pdf).expect("saves");
    pdf
}

/// Redacts every occurrence of `find` with default options.
pub fn redact(pdf: &[u8], find: &str) -> pdfedit_engine::edit::EditResult {
    use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest};
    let request = EditRequest {
        edits: vec![Edit {
            index: 0,
            op: EditOp::Redact,
            find: find.into(),
            ..Edit::default()
        }],
        ..EditRequest::default()
    };
    edit(pdf, &request).expect("edit runs")
}

/// Same letters, rotated left by one inside every word ("Amount Due" → "mountA ueD"): a
/// replacement that keeps the phrase's glyphs (the subset fonts hold them).
pub fn rotate_words(s: &str) -> String {
    s.split(' ')
        .map(|w| {
            let mut c: Vec<char> = w.chars().collect();
            if c.len() > 1 {
                c.rotate_left(1);
            }
            c.into_iter().collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Text of the engine's extraction, annotation spans and text-layer spans apart.
pub fn engine_text(pdf: &[u8]) -> (String, String) {
    let r = pdfedit_engine::read_text(pdf, None, None, true, false).expect("read_text");
    let mut annot = String::new();
    let mut layer = String::new();
    for s in r.pages.iter().flat_map(|p| p.spans.iter()) {
        let out = if s.source != "text-layer" {
            &mut annot
        } else {
            &mut layer
        };
        if s.space_before || out.ends_with('\n') {
            out.push(' ');
        }
        out.push_str(&s.text);
    }
    let squash = |t: String| t.split_whitespace().collect::<Vec<_>>().join(" ");
    (squash(annot), squash(layer))
}

/// Whether qpdf finds the document sound (true when qpdf is not installed).
pub fn qpdf_ok(pdf: &[u8]) -> bool {
    run_tool("qpdf", &["--check"], pdf, &[]).is_none_or(|o| o.status.success())
}

/// Pixels that differ inside and outside `rect` (page user space, bottom-left origin).
pub fn ink_moved(
    before: &pdf_render::raster::Raster,
    after: &pdf_render::raster::Raster,
    rect: [f64; 4],
    page_h: f64,
) -> (u64, u64) {
    let s = f64::from(before.px_per_pt);
    let (x0, x1) = (rect[0] * s, rect[2] * s);
    let (y0, y1) = ((page_h - rect[3]) * s, (page_h - rect[1]) * s);
    let (mut inside, mut outside) = (0, 0);
    for y in 0..before.height as usize {
        for x in 0..before.width as usize {
            let i = (y * before.width as usize + x) * 3;
            if before.pixels[i..i + 3] == after.pixels[i..i + 3] {
                continue;
            }
            let (fx, fy) = (x as f64 + 0.5, y as f64 + 0.5);
            if fx >= x0 && fx <= x1 && fy >= y0 && fy <= y1 {
                inside += 1;
            } else {
                outside += 1;
            }
        }
    }
    (inside, outside)
}

/// A result without its timings, to compare two runs of the same edit.
pub fn untimed(mut r: pdfedit_engine::edit::EditResult) -> pdfedit_engine::edit::EditResult {
    r.timings = pdfedit_engine::edit::Timings::default();
    r
}

/// One replace edit of `find` by `replace` within `scope`, with `password` and
/// `options.template_cache` set to `cached`.
pub fn replace_request(
    find: &str,
    replace: &str,
    scope: pdfedit_engine::edit::Scope,
    password: Option<&str>,
    cached: bool,
) -> pdfedit_engine::edit::EditRequest {
    use pdfedit_engine::edit::{Edit, EditOp, EditOptions, EditRequest};
    EditRequest {
        password: password.map(str::to_string),
        edits: vec![Edit {
            index: 0,
            op: EditOp::Replace,
            find: find.into(),
            replace: replace.into(),
            scope,
            ..Edit::default()
        }],
        options: EditOptions {
            template_cache: cached,
            ..EditOptions::default()
        },
    }
}
