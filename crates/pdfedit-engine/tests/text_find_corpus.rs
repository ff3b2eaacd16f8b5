//! One text model: whatever `read_text` returns, an edit finds. For every document of the
//! real-world corpus, up to 60 words are sampled from its spans (every source, a fixed
//! stride through the document's words) and each must be matched, inside its own span
//! (`scope.span_ids`), by a replace and by a redaction. The words are looked for with
//! `locate`, the edit's own find stage without planning and verifying (a full dry run
//! of 7 000 edits would take many minutes); one word per document also goes through a
//! full `edit`, which must agree. Only `unmatched` (and for `edit`, `scanned_text`) counts
//! as not found. Prints a table per document. Run one file with TEXT_FIND_ONLY=name-part.

mod common;

use std::collections::BTreeSet;

use pdfedit_engine::edit::{
    edit, locate, Edit, EditOp, EditOptions, EditRequest, EditResult, Occurrence, Scope, Watermark,
};

/// Words sampled per document.
const SAMPLE: usize = 60;
/// Found words over sampled words, in per cent, that the corpus must reach (replace,
/// redact). The target is 100 %. Measured before any fix: replace 2171 of 2364 (91.8 %),
/// redact 2257 of 2364 (95.5 %); with spans matched by their ink and annotation spans
/// selectable: replace 2255 (95.4 %), redact 2294 (97.0 %); with reading's text taken by
/// an edit that found nothing, vertical-font punctuation in stacked columns and no word
/// break at a space inside a ligature: replace 2309 (97.7 %), redact 2346 (99.2 %); with
/// push-button captions, list and combo options and signature appearances edited in their
/// widget appearance, a match whose font box is far taller than its ink kept in its span,
/// and a redaction removing an appearance that draws the text by glyph ids: replace 2357
/// (99.7 %), redact 2360 (99.8 %); with a replace of text that only part of a glyph draws
/// (a WeasyPrint cluster mapped to a whole word) failing with its reason: replace 2360
/// (99.8 %). Then the last four: the Medicare form's diagonal "DO NOT SEND THIS PAGE WITH
/// YOUR CLAIM" (a 45° watermark whose glyphs each opened a line, their upright boxes
/// measured along the baseline), a Kampo gazette column begun by "る。" (an upright
/// character and a vertical-font full stop were two lines), and WeasyPrint's Arabic page,
/// whose reading held PDFium's codes for glyphs the font maps to no text ("ϲΒϴΒ"; reading
/// now gives them no text, so the page has one word fewer to sample): replace 2363 of
/// 2363, redact 2363 (100 %).
const BAR_PERCENT: [usize; 2] = [100, 100];

/// One sampled word: the span it came from and its text.
#[derive(Clone, Debug)]
struct Word {
    page: u32,
    span_id: String,
    source: &'static str,
    text: String,
}

/// Every distinct (span, word) of the document in reading order, then a fixed stride
/// through them: up to `SAMPLE`, spread over the whole document.
fn sample(pages: &[pdfedit_engine::PageText]) -> Vec<Word> {
    let mut seen = BTreeSet::new();
    let mut all = Vec::new();
    for p in pages {
        for s in &p.spans {
            for w in s.text.split_whitespace() {
                // A word the user could type: at least one letter or digit.
                if !w.chars().any(char::is_alphanumeric) {
                    continue;
                }
                if seen.insert((s.span_id.clone(), w.to_string())) {
                    all.push(Word {
                        page: p.page,
                        span_id: s.span_id.clone(),
                        source: s.source,
                        text: w.to_string(),
                    });
                }
            }
        }
    }
    if all.len() <= SAMPLE {
        return all;
    }
    (0..SAMPLE)
        .map(|i| all[i * all.len() / SAMPLE].clone())
        .collect()
}

/// Same letters, rotated left by one ("Amount" → "mountA"): the replacement keeps the
/// word's glyphs, so a missing glyph is never why it fails.
fn rotate(w: &str) -> String {
    let mut c: Vec<char> = w.chars().collect();
    if c.len() > 1 {
        c.rotate_left(1);
    }
    c.into_iter().collect()
}

/// TEXT_FIND_NO_SPANS=1 looks for the words on their page without `span_ids`.
fn one_edit(index: u32, word: &Word, op: EditOp) -> Edit {
    let spans = std::env::var_os("TEXT_FIND_NO_SPANS").is_none();
    scoped(index, word, op, spans)
}

/// The edit of `word`, inside its span when `in_span`, else anywhere on its page.
fn scoped(index: u32, word: &Word, op: EditOp, in_span: bool) -> Edit {
    let spans = in_span;
    Edit {
        index,
        op,
        find: word.text.clone(),
        replace: if op == EditOp::Replace {
            rotate(&word.text)
        } else {
            String::new()
        },
        scope: Scope {
            pages: Some(vec![word.page]),
            span_ids: spans.then(|| vec![word.span_id.clone()]),
            occurrence: Some(Occurrence::First),
            ..Scope::default()
        },
        ..Edit::default()
    }
}

fn request(edits: Vec<Edit>, password: Option<String>) -> EditRequest {
    EditRequest {
        password,
        edits,
        options: EditOptions {
            watermark: Watermark::Off,
            watermark_off_allowed: true,
            break_signature: true,
            ..EditOptions::default()
        },
    }
}

/// Whether edit `i` found its word: not in `unmatched`, and not refused as text that is
/// only in a page image.
fn found(r: &EditResult, i: u32) -> bool {
    !r.unmatched.iter().any(|u| u.edit_index == i)
        && !r
            .failed
            .iter()
            .any(|f| f.edit_index == i && f.reason == "scanned_text")
}

const OPS: [(EditOp, &str); 2] = [(EditOp::Replace, "replace"), (EditOp::Redact, "redact")];

#[test]
fn every_word_read_is_found() {
    if !common::init_pdfium() {
        return;
    }
    let Some(files) = common::corpus() else {
        return;
    };
    let only = std::env::var("TEXT_FIND_ONLY").unwrap_or_default();
    let started = std::time::Instant::now();
    let mut rows = Vec::new();
    let mut disagree = Vec::new();
    let (mut total, mut rep_ok, mut red_ok) = (0usize, 0usize, 0usize);
    for f in files.iter().filter(|f| f.name.contains(&only)) {
        let bytes = std::fs::read(&f.path).expect("corpus file");
        let pw = f.password.as_deref();
        let text = pdfedit_engine::read_text(&bytes, pw, None, true, false).expect("read_text");
        let words = sample(&text.pages);
        let mut counts = [0usize; 2];
        let mut missed: Vec<Vec<String>> = vec![Vec::new(); words.len()];
        for (k, (op, label)) in OPS.iter().enumerate() {
            let edits = (0..)
                .zip(&words)
                .map(|(i, w)| one_edit(i, w, *op))
                .collect::<Vec<_>>();
            if edits.is_empty() {
                continue;
            }
            let r = locate(&bytes, &request(edits, f.password.clone())).expect("locate");
            for (i, miss) in (0..).zip(missed.iter_mut()) {
                if found(&r, i) {
                    counts[k] += 1;
                    continue;
                }
                // Why: the page's lines hold the word but not inside the span's box, or
                // the lines do not hold it at all (their text differs from reading's).
                let w = &words[i as usize];
                let anywhere = request(vec![scoped(0, w, *op, false)], f.password.clone());
                let on_page = locate(&bytes, &anywhere).is_ok_and(|r| found(&r, 0));
                miss.push(if on_page {
                    format!("{label}: outside its span")
                } else {
                    format!("{label}: not in the lines")
                });
            }
        }
        // The full edit agrees with its find stage (one word per document, the op
        // alternating from one document to the next).
        if let Some(w) = words.first() {
            let (op, label) = OPS[rows.len() % 2];
            let req = request(vec![one_edit(0, w, op)], f.password.clone());
            let by_edit = edit(&bytes, &req).is_ok_and(|r| found(&r, 0));
            let by_locate = !missed[0].iter().any(|m| m.starts_with(label));
            if by_edit != by_locate {
                disagree.push(format!("{} {label} {:?}", f.name, w.text));
            }
        }
        let misses: Vec<String> = words
            .iter()
            .zip(&missed)
            .filter(|(_, m)| !m.is_empty())
            .map(|(w, m)| format!("p{} {} {:?} ({})", w.page, w.source, w.text, m.join("; ")))
            .collect();
        let (rep, red) = (counts[0], counts[1]);
        total += words.len();
        rep_ok += rep;
        red_ok += red;
        rows.push((f.name.clone(), words.len(), rep, red, misses));
    }
    eprintln!(
        "{:<56} {:>5} {:>7} {:>7}",
        "document", "words", "replace", "redact"
    );
    for (name, n, rep, red, misses) in &rows {
        eprintln!("{name:<56} {n:>5} {rep:>7} {red:>7}");
        for m in misses {
            eprintln!("    not found: {m}");
        }
    }
    eprintln!(
        "{:<56} {total:>5} {rep_ok:>7} {red_ok:>7}   ({:.1} s)",
        "all",
        started.elapsed().as_secs_f64()
    );
    assert!(
        disagree.is_empty(),
        "locate and edit disagree on whether the word is found: {disagree:?}"
    );
    if only.is_empty() && total > 0 && std::env::var_os("TEXT_FIND_NO_SPANS").is_none() {
        for ((op, ok), bar) in [("replace", rep_ok), ("redact", red_ok)]
            .into_iter()
            .zip(BAR_PERCENT)
        {
            assert!(
                ok * 100 >= total * bar,
                "{op} found {ok} of {total} words read (bar: {bar} %)"
            );
        }
    }
}
