//! The engine's text agrees with pdftotext, word for word, on the real-world corpus.

mod common;

use std::collections::HashMap;
use std::process::Command;

/// Multiset overlap |A ∩ B| / max(|A|, |B|) of whitespace-separated words.
fn word_overlap(a: &str, b: &str) -> f64 {
    let (ca, cb) = (word_counts(a), word_counts(b));
    let (na, nb): (usize, usize) = (ca.values().sum(), cb.values().sum());
    if na.max(nb) == 0 {
        return 1.0;
    }
    let common: usize = ca
        .iter()
        .map(|(w, n)| (*n).min(cb.get(w).copied().unwrap_or(0)))
        .sum();
    common as f64 / na.max(nb) as f64
}

fn word_counts(s: &str) -> HashMap<&str, usize> {
    let mut m: HashMap<&str, usize> = HashMap::new();
    for w in s.split_whitespace() {
        *m.entry(w).or_default() += 1;
    }
    m
}

fn pdftotext(file: &common::CorpusFile) -> Option<String> {
    let mut cmd = Command::new("pdftotext");
    cmd.args(["-enc", "UTF-8"]);
    if let Some(pw) = &file.user_password {
        cmd.args(["-upw", pw]);
    } else if let Some(pw) = &file.owner_password {
        cmd.args(["-opw", pw]);
    }
    cmd.arg(&file.path).arg("-");
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn text_agrees_with_pdftotext() {
    if !common::init_pdfium() {
        return;
    }
    let Some(corpus) = common::corpus() else {
        return;
    };
    if Command::new("pdftotext").arg("-v").output().is_err() {
        eprintln!("SKIP: pdftotext not installed");
        return;
    }
    let mut scores = Vec::new();
    for file in corpus {
        if file.pages > 0 && file.pages_without_text >= file.pages {
            continue; // scanned only: nothing to compare
        }
        let Some(reference) = pdftotext(&file) else {
            println!("{:<55} pdftotext failed, skipped", file.name);
            continue;
        };
        let bytes = std::fs::read(&file.path).expect("corpus file reads");
        let result = pdfedit_engine::read_text(&bytes, file.password.as_deref(), None, true, false)
            .unwrap_or_else(|e| panic!("{}: {e}", file.name));
        let ours: Vec<String> = result.pages.iter().map(|p| p.plain_text()).collect();
        let score = word_overlap(&ours.join("\n"), &reference);
        println!("{:<55} {:.4}", file.name, score);
        scores.push(score);
    }
    let average = scores.iter().sum::<f64>() / scores.len().max(1) as f64;
    println!("average over {} files: {average:.4}", scores.len());
    assert!(average >= 0.98, "average agreement {average:.4} < 0.98");
}
