//! Replace and delete on the real-world corpus, checked with independent tools
//! (pdftotext, pdffonts, qpdf). Prints the success rate per corpus category.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::Command;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, Fit, MatchMode, Occurrence, Scope};

/// Password arguments for a tool: qpdf wants `--password=`, poppler `-upw`/`-opw`.
fn pw_args(cmd: &str, pw: &Password) -> Vec<String> {
    match (cmd, pw) {
        (_, Password::None) => vec![],
        ("qpdf", Password::User(p) | Password::Owner(p)) => vec![format!("--password={p}")],
        (_, Password::User(p)) => vec!["-upw".into(), p.clone()],
        (_, Password::Owner(p)) => vec!["-opw".into(), p.clone()],
    }
}

#[derive(Clone)]
enum Password {
    None,
    User(String),
    Owner(String),
}

thread_local! {
    static PASSWORD: std::cell::RefCell<Password> = const { std::cell::RefCell::new(Password::None) };
}

fn tool(cmd: &str, args: &[&str], pdf: &[u8]) -> Option<(bool, String)> {
    let pw = PASSWORD.with(|p| pw_args(cmd, &p.borrow()));
    let mut f = tempfile();
    f.1.write_all(pdf).ok()?;
    let path = f.0.to_string_lossy().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(pw.iter().map(String::as_str));
    all.push(&path);
    if cmd == "pdftotext" {
        all.push("-");
    }
    let out = Command::new(cmd).args(&all).output().ok()?;
    let _ = std::fs::remove_file(&f.0);
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

fn tempfile() -> (std::path::PathBuf, std::fs::File) {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let p = std::env::temp_dir().join(format!(
        "pdfedit-edit-{}-{}.pdf",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let f = std::fs::File::create(&p).expect("temp file");
    (p, f)
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn one(find: &str, replace: &str, fit: Fit) -> EditRequest {
    EditRequest {
        edits: vec![Edit {
            index: 0,
            op: EditOp::Replace,
            find: find.into(),
            replace: replace.into(),
            match_mode: MatchMode::Exact,
            scope: Scope {
                occurrence: Some(Occurrence::First),
                ..Scope::default()
            },
            fit,
            style: Default::default(),
            ..Edit::default()
        }],
        // The rate measures the edit: no 'Edited' mark (SPEC rule 12) on the flagged
        // documents, whose Helvetica would count as a new font in pdffonts.
        options: pdfedit_engine::edit::EditOptions {
            watermark: pdfedit_engine::edit::Watermark::Off,
            watermark_off_allowed: true,
            ..Default::default()
        },
        ..EditRequest::default()
    }
}

/// Text the engine reads from annotation appearances (`read_text` spans whose source is
/// `annotation`), squashed.
fn annotation_text(pdf: &[u8]) -> String {
    let password = PASSWORD.with(|p| match &*p.borrow() {
        Password::User(p) | Password::Owner(p) => Some(p.clone()),
        Password::None => None,
    });
    let Ok(r) = pdfedit_engine::read_text(pdf, password.as_deref(), None, true, false) else {
        return String::new();
    };
    let text: Vec<&str> = r
        .pages
        .iter()
        .flat_map(|p| p.spans.iter())
        .filter(|s| s.source == "annotation" || s.source == "form-field")
        .map(|s| s.text.as_str())
        .collect();
    squash(&text.join(" "))
}

fn font_count(pdf: &[u8]) -> usize {
    tool("pdffonts", &[], pdf).map_or(0, |(_, o)| o.lines().count())
}

#[test]
fn corpus_replace_success_rate() {
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
    let mut table: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    let only = std::env::var("EDIT_CORPUS_ONLY").unwrap_or_default();
    for entry in &manifest {
        let name = entry["file"].as_str().unwrap_or_default();
        if !only.is_empty() && !name.contains(&only) {
            continue;
        }
        let signed = entry["sig"]["signed"].as_u64().unwrap_or(0) > 0;
        if signed {
            continue;
        }
        let user = entry["user_password"].as_str().map(str::to_string);
        let owner = entry["owner_password"].as_str().map(str::to_string);
        let password = match (user, owner) {
            (Some(u), _) => Password::User(u),
            (None, Some(o)) => Password::Owner(o),
            _ => Password::None,
        };
        let request_password = match &password {
            Password::User(p) | Password::Owner(p) => Some(p.clone()),
            Password::None => None,
        };
        PASSWORD.with(|p| *p.borrow_mut() = password.clone());
        let category = name.split('-').next().unwrap_or("misc").to_string();
        let Ok(bytes) = std::fs::read(files[0].path.with_file_name(name)) else {
            continue;
        };
        let before_text = tool("pdftotext", &[], &bytes).map(|t| squash(&t.1));
        let phrases = entry["phrases"].as_array().cloned().unwrap_or_default();
        for phrase in phrases.iter().filter_map(|p| p.as_str()) {
            if phrase.starts_with("OCR:") || phrase.chars().count() < 3 {
                continue;
            }
            let same = common::rotate_words(phrase);
            // 30 % longer, from the phrase's own letters (the subsets hold those glyphs).
            // A trailing hyphen would read as a hyphenated line end, which pdftotext joins.
            let extra: String = common::rotate_words(phrase)
                .chars()
                .filter(|c| !c.is_whitespace())
                .take(phrase.chars().count().div_ceil(10) * 3)
                .collect::<String>()
                .trim_end_matches('-')
                .to_string();
            let longer = format!("{phrase} {extra}");
            for (kind, new) in [("same", same), ("longer", longer)] {
                let cell = table.entry(format!("{category}/{kind}")).or_default();
                cell.1 += 1;
                let mut req = one(phrase, &new, Fit::Auto);
                req.password = request_password.clone();
                let res = edit(&bytes, &req);
                let verdict = match &res {
                    Err(e) => format!("error {e}"),
                    Ok(r) if !r.unmatched.is_empty() => "unmatched".into(),
                    Ok(r) if !r.failed.is_empty() => {
                        format!("failed {} {}", r.failed[0].reason, r.failed[0].message)
                    }
                    Ok(r) => check_output(&bytes, r, phrase, &new, kind, before_text.as_deref()),
                };
                if verdict == "ok" {
                    cell.0 += 1;
                } else {
                    eprintln!("{name} [{kind}] {phrase:?}: {verdict}");
                }
                // EDIT_CORPUS_SAVE=dir keeps every output, to look at by hand.
                if let (Ok(dir), Ok(r)) = (std::env::var("EDIT_CORPUS_SAVE"), &res) {
                    let out = std::path::Path::new(&dir).join(format!("{kind}-{name}"));
                    let _ = std::fs::write(out, &r.pdf);
                }
            }
        }
    }
    let (mut ok, mut total) = (0, 0);
    eprintln!("category/case            success");
    for (k, (o, t)) in &table {
        eprintln!("{k:<24} {o}/{t}");
        ok += o;
        total += t;
    }
    eprintln!("overall                  {ok}/{total}");
    // Measured 181/188 (96.3 %) with vertical columns, CID collections, phrases in
    // several Type 3 fonts and text shown only by FreeText annotations; 183/188 (97.3 %)
    // once a replace may take whole a glyph whose /ToUnicode entry holds text it does not
    // draw (WeasyPrint maps the "h" of "habibi" to the Arabic word before it plus "h").
    // 185/188 (98.4 %) once the Arabic word is found in pdftotext's visual order (its
    // replacement taken in that order too) and new Arabic text is shaped, drawn right to
    // left (DejaVu Sans: the subset lacks forms the new word needs) in an /ActualText span
    // that pdftotext reads back (plan/arabic.rs, tests/edit_arabic.rs).
    // Left: longer text with no room before the next text (3: a CJK label in a table cell
    // at 209 %, a heading at 180 % with the next word right after it, a vertical column at
    // 139 % of the room down to the margin).
    if only.is_empty() && total > 0 {
        assert!(
            ok * 100 >= total * 98,
            "replace success rate fell to {ok}/{total} (bar: 98 %)"
        );
    }
}

fn check_output(
    original: &[u8],
    r: &pdfedit_engine::edit::EditResult,
    phrase: &str,
    new: &str,
    kind: &str,
    before_text: Option<&str>,
) -> String {
    let c = &r.changes[0];
    if !c.verified {
        return "not verified".into();
    }
    if let Some((ok, _)) = tool("qpdf", &["--check"], &r.pdf) {
        if !ok {
            return "qpdf --check failed".into();
        }
    }
    let phrase_s = squash(phrase);
    if before_text.is_some_and(|b| !b.contains(&phrase_s))
        && annotation_text(original).contains(&phrase_s)
    {
        // Text shown only by an annotation: pdftotext does not read it, the engine does.
        let (before, after) = (annotation_text(original), annotation_text(&r.pdf));
        if !after.contains(&squash(new)) {
            return "the annotation does not show the new text".into();
        }
        if after.matches(&phrase_s).count() >= before.matches(&phrase_s).count()
            && !squash(new).contains(&phrase_s)
        {
            return "the annotation still shows the old text".into();
        }
        return "ok".into();
    }
    if let (Some((_, text)), Some(before)) = (tool("pdftotext", &[], &r.pdf), before_text) {
        let text = squash(&text);
        let (new_s, phrase_s) = (squash(new), squash(phrase));
        if !text.contains(&new_s) && !text.replace(' ', "").contains(&new_s.replace(' ', "")) {
            return format!("pdftotext lacks the new text ({})", c.font_source);
        }
        if text.matches(&phrase_s).count() >= before.matches(&phrase_s).count()
            && before.contains(&phrase_s)
            && !new_s.contains(&phrase_s)
        {
            return "pdftotext still shows the old text".into();
        }
    }
    if kind == "same"
        && c.font_source == "exact-embedded"
        && font_count(&r.pdf) > font_count(original)
    {
        return "pdffonts lists a new font".into();
    }
    "ok".into()
}

/// Spaces before punctuation and double spaces, counted in pdftotext's raw output.
fn untidy(text: &str) -> usize {
    [" ,", " .", " ;", " :", "  "]
        .iter()
        .map(|p| text.matches(p).count())
        .sum()
}

#[test]
fn corpus_delete_is_tidy() {
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
    let (mut ok, mut total) = (0, 0);
    for entry in &manifest {
        let name = entry["file"].as_str().unwrap_or_default();
        let encrypted = entry["user_password"].is_string() || entry["owner_password"].is_string();
        if entry["sig"]["signed"].as_u64().unwrap_or(0) > 0 || encrypted {
            continue;
        }
        let Ok(bytes) = std::fs::read(files[0].path.with_file_name(name)) else {
            continue;
        };
        let Some((_, before)) = tool("pdftotext", &["-raw"], &bytes) else {
            continue;
        };
        let annot_before = annotation_text(&bytes);
        for phrase in entry["phrases"].as_array().into_iter().flatten() {
            let Some(phrase) = phrase.as_str().filter(|p| !p.starts_with("OCR:")) else {
                continue;
            };
            if phrase.chars().count() < 3 {
                continue;
            }
            let mut req = one(phrase, "", Fit::Auto);
            req.edits[0].op = EditOp::Delete;
            let res = edit(&bytes, &req);
            if let (Ok(dir), Ok(r)) = (std::env::var("EDIT_CORPUS_SAVE"), &res) {
                let out = std::path::Path::new(&dir).join(format!("delete-{total}-{name}"));
                let _ = std::fs::write(out, &r.pdf);
            }
            let verdict = match res {
                Err(e) => format!("error {e}"),
                Ok(r) if !r.unmatched.is_empty() => "unmatched".into(),
                Ok(r) if !r.failed.is_empty() => format!("failed {}", r.failed[0].reason),
                Ok(r) if !r.changes[0].verified => "not verified".into(),
                Ok(r)
                    if annot_before.contains(&squash(phrase))
                        && annotation_text(&r.pdf).matches(&squash(phrase)).count()
                            >= annot_before.matches(&squash(phrase)).count() =>
                {
                    "an annotation still shows the phrase".into()
                }
                Ok(r) => match tool("pdftotext", &["-raw"], &r.pdf) {
                    None => "pdftotext failed".into(),
                    Some((_, after)) if untidy(&after) > untidy(&before) => {
                        "double space or orphan punctuation left".into()
                    }
                    Some((_, after))
                        if squash(&after).matches(&squash(phrase)).count()
                            >= squash(&before).matches(&squash(phrase)).count()
                            && squash(&before).contains(&squash(phrase)) =>
                    {
                        "pdftotext still shows the phrase".into()
                    }
                    Some(_) => "ok".into(),
                },
            };
            total += 1;
            if verdict == "ok" {
                ok += 1;
            } else {
                eprintln!("delete {name} {phrase:?}: {verdict}");
            }
        }
    }
    eprintln!("delete overall {ok}/{total}");
    // Measured 85/87, then 86/87 with "habibi" deleted whole (its "h" glyph's /ToUnicode
    // entry also holds the Arabic word before it), 87/87 with the Arabic word found in
    // visual order and taken with the silent glyphs of its shaped cluster.
    if total > 0 {
        assert!(
            ok * 100 >= total * 97,
            "tidy deletes fell to {ok}/{total} (bar: 97 %)"
        );
    }
}
