//! Inline insert on the real-world corpus: " NEW" after every manifest test phrase of
//! every unencrypted, unsigned document with a text layer. Prints the success rate per
//! corpus category and the failure reasons; every applied insert must read back in order
//! with pdftotext, with no other word lost.

mod common;

use std::collections::BTreeMap;

use pdfedit_engine::edit::{edit, At, Edit, EditOp, EditRequest, InsertSpec};

const NEW: &str = "NEW";

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn word_counts(s: &str) -> BTreeMap<&str, usize> {
    let mut m = BTreeMap::new();
    for w in s.split_whitespace() {
        *m.entry(w).or_default() += 1;
    }
    m
}

/// "ok", or what is wrong with an applied insert's output: pdftotext must read the phrase
/// and the new word in order, and every other word of the page text (the phrase's first
/// occurrence followed by the new word) must still be there.
fn check(before: &str, after: &str, phrase: &str, word: &str) -> String {
    let (before, after) = (squash(before), squash(after));
    let phrase = squash(phrase);
    let want = format!("{phrase} {word}");
    if !after.contains(&want) {
        return format!("pdftotext does not read {want:?}");
    }
    // "… phrase, more": the comma now follows the new word.
    let expected = before.replacen(&phrase, &want, 1);
    let (b, a) = (word_counts(&expected), word_counts(&after));
    let lost: Vec<&&str> = b
        .iter()
        .filter(|(w, n)| a.get(*w).copied().unwrap_or(0) < **n)
        .map(|(w, _)| w)
        .take(3)
        .collect();
    if !lost.is_empty() {
        return format!("words lost or merged: {lost:?}");
    }
    "ok".into()
}

#[test]
fn corpus_inline_insert_success_rate() {
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
    let only = std::env::var("INSERT_CORPUS_ONLY").unwrap_or_default();
    let mut table: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    let mut reasons: BTreeMap<String, u32> = BTreeMap::new();
    for entry in &manifest {
        let name = entry["file"].as_str().unwrap_or_default();
        let encrypted = entry["enc"]["encrypted"].as_bool().unwrap_or(false);
        let signed = entry["sig"]["signed"].as_u64().unwrap_or(0) > 0;
        let text_layer = entry["text_chars"].as_u64().unwrap_or(0) > 0;
        if encrypted || signed || !text_layer || (!only.is_empty() && !name.contains(&only)) {
            continue;
        }
        let Ok(bytes) = std::fs::read(files[0].path.with_file_name(name)) else {
            continue;
        };
        let Some(before) = common::pdftotext(&bytes, &[]) else {
            eprintln!("SKIP: pdftotext not available");
            return;
        };
        let category = name.split('-').next().unwrap_or("misc").to_string();
        for phrase in entry["phrases"].as_array().into_iter().flatten() {
            let Some(phrase) = phrase.as_str().filter(|p| !p.starts_with("OCR:")) else {
                continue;
            };
            if phrase.chars().count() < 3 {
                continue;
            }
            // " NEW" (whose letters a subset often lacks: then another font is needed) and
            // the phrase's first word again (letters the phrase's own font holds).
            let own = phrase.split_whitespace().next().unwrap_or(phrase);
            for (kind, word) in [("NEW", NEW), ("own", own)] {
                let request = EditRequest {
                    edits: vec![Edit {
                        op: EditOp::Insert,
                        insert: Some(InsertSpec {
                            text: word.into(),
                            at: At::After {
                                phrase: phrase.into(),
                                newline: false,
                                page: None,
                            },
                        }),
                        ..Edit::default()
                    }],
                    ..EditRequest::default()
                };
                let verdict = match edit(&bytes, &request) {
                    Err(e) => format!("error {e}"),
                    Ok(r) if !r.unmatched.is_empty() => "unmatched".into(),
                    Ok(r) if !r.failed.is_empty() => {
                        format!("failed {}: {}", r.failed[0].reason, r.failed[0].message)
                    }
                    Ok(r) if !r.changes.iter().all(|c| c.verified) => "not verified".into(),
                    Ok(r) => match common::pdftotext(&r.pdf, &[]) {
                        None => "pdftotext failed on the output".into(),
                        Some(after) => check(&before, &after, phrase, word),
                    },
                };
                let cell = table.entry(format!("{kind}/{category}")).or_default();
                cell.1 += 1;
                if verdict == "ok" {
                    cell.0 += 1;
                } else {
                    eprintln!("{name} {phrase:?} + {word:?}: {verdict}");
                    let key = verdict.split(':').next().unwrap_or_default().to_string();
                    *reasons.entry(format!("{kind}: {key}")).or_default() += 1;
                }
            }
        }
    }
    let (mut ok, mut total) = (0, 0);
    eprintln!("category            inserted");
    for (k, (o, t)) in &table {
        eprintln!("{k:<20} {o}/{t}");
        ok += o;
        total += t;
    }
    eprintln!("overall              {ok}/{total}");
    for (reason, count) in &reasons {
        eprintln!("  {count:>3}  {reason}");
    }
    if only.is_empty() && total > 0 {
        assert!(
            ok * 100 >= total * BAR_PERCENT,
            "inline insert success fell to {ok}/{total} (bar: {BAR_PERCENT} %)"
        );
    }
}

/// The floor of the measured rate: 126/166 (75.9 %) overall, up from 122/166 when an anchor
/// whose own font cannot draw the inserted word kept its own codes and only the word went to
/// the font chain (two CJK subsets without Latin letters, where before no one font drew
/// both; a pdfLaTeX CMR10 subset without N, E, W, whose whole anchor was redrawn in the
/// look-alike and the moved rest of its line differed), and when an insert before a column
/// gap pushed on the rest up to the gap only (a heading row). " NEW" 65/83 (left:
/// 5 collateral_change, 4 overflow, 3 type3_font, 1 missing_glyphs in a vertical font,
/// 1 unsupported_layout, 4 unmatched), the phrase's own first word 61/83 (12 overflow,
/// 3 unsupported_layout, 3 collateral_change, 4 unmatched Arabic and FreeText-only phrases).
const BAR_PERCENT: u32 = 75;
