//! Redaction on the real-world corpus, checked with independent tools: after redacting
//! each manifest phrase, `pdftotext` and a raw search of `qpdf --qdf` output (streams
//! decoded) must not hold it unless the engine listed a residual place; no other word of
//! the document may be lost; every change is verified. Words that exist only in a page
//! image (the manifest's OCR phrases, no text layer) must be refused as `scanned_text`;
//! words of an OCR text layer over a scan are redacted like any other. Prints the
//! success rate per category. Run one file with REDACT_CORPUS_ONLY=part-of-name.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::process::Command;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditOptions, EditRequest, EditResult, Scope};

fn tempfile() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    std::env::temp_dir().join(format!(
        "pdfedit-redact-corpus-{}-{}.pdf",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Runs `cmd args… file [extra…]` on `pdf`; stdout (or the output file's bytes for qpdf).
fn tool(cmd: &str, args: &[String], pdf: &[u8]) -> Option<Vec<u8>> {
    let input = tempfile();
    std::fs::File::create(&input).ok()?.write_all(pdf).ok()?;
    let output = tempfile();
    let mut c = Command::new(cmd);
    c.args(args).arg(&input);
    if cmd == "pdftotext" {
        c.arg("-");
    } else {
        c.arg(&output);
    }
    let out = c.output().ok();
    let result = match (cmd, out) {
        ("pdftotext", Some(o)) if o.status.success() => Some(o.stdout),
        // qpdf exits 3 for warnings and still writes the file.
        ("qpdf", Some(o)) if o.status.code().is_some_and(|c| c == 0 || c == 3) => {
            std::fs::read(&output).ok()
        }
        _ => None,
    };
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&output);
    result
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect()
}

/// Words of 5 to 12 ASCII letters, counted (the corpus-eval tool's measure).
fn words(text: &str) -> HashMap<String, i64> {
    let mut out = HashMap::new();
    for w in text.split(|c: char| !c.is_ascii_alphabetic()) {
        if (5..=12).contains(&w.len()) {
            *out.entry(w.to_string()).or_default() += 1;
        }
    }
    out
}

fn request(phrase: &str, password: Option<String>) -> EditRequest {
    EditRequest {
        password,
        edits: vec![Edit {
            index: 0,
            op: EditOp::Redact,
            find: phrase.into(),
            replace: String::new(),
            match_mode: Default::default(),
            scope: Scope::default(),
            fit: Default::default(),
            style: Default::default(),
            ..Edit::default()
        }],
        options: EditOptions {
            break_signature: true,
            ..EditOptions::default()
        },
    }
}

/// "ok", or why not. Invariant violations (a claimed redaction whose text is still
/// there unreported) panic instead: those are bugs, not misses.
fn judge(
    original: &[u8],
    r: &EditResult,
    phrase: &str,
    pw: &[String],
    qpdf_pw: &[String],
) -> String {
    if r.changes.is_empty() && r.removed.is_empty() {
        return match (r.failed.first(), r.unmatched.first()) {
            (Some(f), _) => format!("failed {}: {}", f.reason, f.message),
            (None, Some(_)) => "unmatched".into(),
            _ => "nothing applied".into(),
        };
    }
    assert!(r.changes.iter().all(|c| c.verified), "unverified change");
    let Some(after) = tool("pdftotext", pw, &r.pdf) else {
        return "pdftotext cannot read the output".into();
    };
    let after = String::from_utf8_lossy(&after).into_owned();
    let before =
        String::from_utf8_lossy(&tool("pdftotext", pw, original).unwrap_or_default()).into_owned();
    let reported_text = r.residual.iter().any(|x| x.kind == "page_text");
    let in_text = squash(&after).contains(&squash(phrase));
    assert!(
        !in_text || reported_text || !r.residual.is_empty(),
        "{phrase:?} still extracted but no residual reported"
    );
    let qpdf_args: Vec<String> = [
        "--qdf".to_string(),
        "--object-streams=disable".into(),
        "--decode-level=all".into(),
    ]
    .into_iter()
    .chain(qpdf_pw.iter().cloned())
    .chain(["--decrypt".to_string()])
    .collect();
    let raw = tool("qpdf", &qpdf_args, &r.pdf).map(|b| String::from_utf8_lossy(&b).into_owned());
    let Some(raw) = raw else {
        return "qpdf cannot read the output".into();
    };
    let in_raw = raw.contains(phrase);
    assert!(
        !in_raw || !r.residual.is_empty(),
        "{phrase:?} in the decoded objects but no residual reported"
    );
    if in_text {
        return format!(
            "still extractable (residual reported: {:?})",
            r.residual.first()
        );
    }
    // Left in raw bytes that are not page text (a font program's `/FontName`, digits in
    // a content stream's numbers) and listed in `residual[]` with the object: the
    // acceptance allows that ("unless reported as residual"). Said, and counted apart.
    let raw_reported = in_raw && r.residual.iter().any(|x| x.kind == "stream");
    if in_raw && !raw_reported {
        return format!(
            "still in the raw objects (residual reported: {:?})",
            r.residual.first()
        );
    }
    let mut lost = words(&before);
    // Each redacted occurrence takes its words: the page-text changes, or every
    // occurrence the text held before (some live in annotations and are in removed[]).
    let occurrences = squash(&before).matches(&squash(phrase)).count() as i64;
    for w in words(phrase).keys() {
        let n = (r.changes.len() as i64).max(occurrences);
        if let Some(c) = lost.get_mut(w) {
            *c -= n;
        }
    }
    for (w, n) in words(&after) {
        *lost.entry(w).or_default() -= n;
    }
    let lost: Vec<_> = lost.into_iter().filter(|(_, n)| *n > 0).collect();
    if !lost.is_empty() {
        return format!("neighbours lost: {:?}", &lost[..lost.len().min(4)]);
    }
    if raw_reported {
        let places: Vec<&str> = r
            .residual
            .iter()
            .filter(|x| x.kind == "stream")
            .map(|x| x.location.as_str())
            .collect();
        return format!("ok, raw bytes reported as residual in {places:?}");
    }
    "ok".into()
}

#[test]
fn corpus_redact_success_rate() {
    if !common::init_pdfium() {
        return;
    }
    let Some(files) = common::corpus() else {
        return;
    };
    let manifest: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(files[0].path.with_file_name("manifest.json")).expect("read"),
    )
    .expect("json");
    let only = std::env::var("REDACT_CORPUS_ONLY").unwrap_or_default();
    let mut table: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for entry in &manifest {
        let name = entry["file"].as_str().unwrap_or_default();
        if !only.is_empty() && !name.contains(&only) {
            continue;
        }
        let user = entry["user_password"].as_str().map(str::to_string);
        let owner = entry["owner_password"].as_str().map(str::to_string);
        let password = user.clone().or(owner.clone());
        let (poppler, qpdf): (Vec<String>, Vec<String>) = match (&user, &owner) {
            (Some(u), _) => (
                vec!["-upw".into(), u.clone()],
                vec![format!("--password={u}")],
            ),
            (None, Some(o)) => (
                vec!["-opw".into(), o.clone()],
                vec![format!("--password={o}")],
            ),
            _ => (vec![], vec![]),
        };
        let Ok(bytes) = std::fs::read(files[0].path.with_file_name(name)) else {
            continue;
        };
        let category = name.split('-').next().unwrap_or("misc").to_string();
        let phrases = entry["phrases"].as_array().cloned().unwrap_or_default();
        for phrase in phrases.iter().filter_map(|p| p.as_str()).take(3) {
            if phrase.contains("visible only") {
                continue;
            }
            // Words only in the page image (read by OCR for the manifest): the redaction
            // must be refused as scanned_text, never reported done nor unmatched.
            if let Some(word) = phrase.strip_prefix("OCR:") {
                let cell = table.entry(format!("{category}/ocr")).or_default();
                cell.1 += 1;
                let r = edit(&bytes, &request(word, password.clone())).expect("edit runs");
                assert!(
                    r.changes.is_empty(),
                    "{name}: {word:?} in an image was reported done"
                );
                match r.failed.first() {
                    Some(f) if f.reason == "scanned_text" => cell.0 += 1,
                    other => eprintln!("{name} {word:?}: not refused as scanned_text: {other:?}"),
                }
                continue;
            }
            let cell = table.entry(category.clone()).or_default();
            cell.1 += 1;
            let verdict = match edit(&bytes, &request(phrase, password.clone())) {
                Err(e) => format!("error {e}"),
                Ok(r) => judge(&bytes, &r, phrase, &poppler, &qpdf),
            };
            if verdict == "ok" {
                cell.0 += 1;
            } else if verdict.starts_with("ok,") {
                cell.0 += 1;
                eprintln!("{name} {phrase:?}: {verdict}");
            } else {
                eprintln!("{name} {phrase:?}: {verdict}");
            }
        }
    }
    let (mut ok, mut total) = (0, 0);
    eprintln!("category   redacted");
    for (k, (o, t)) in &table {
        eprintln!("{k:<10} {o}/{t}");
        ok += o;
        total += t;
    }
    eprintln!("overall    {ok}/{total}");
    // Measured 116/116 (113 at the start of session 6, 100 at the start of session 5).
    // Two of them leave raw bytes that are not page text (a font program's /FontName,
    // digits of content-stream numbers), reported as residual. The words of OCR layers
    // over scans (4) are redacted with the image pixels under them. The acceptance asks
    // for every phrase, so every phrase must pass.
    if only.is_empty() && total > 0 {
        assert_eq!(ok, total, "redaction success rate fell to {ok}/{total}");
    }
}
