//! A phrase that wraps from the end of one line to the start of the next is one
//! occurrence: a replace or delete of every occurrence changes it too (the new text split
//! over the two lines at a word boundary), and `occurrence` counts it once. Checked on
//! corpus documents whose manifest phrases wrap, with pdftotext as the independent reader
//! (it joins a wrapped line to the next with a space).

mod common;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, EditResult, Occurrence, Scope};

/// Every white-space run as one space.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn count(text: &str, phrase: &str) -> usize {
    squash(text).matches(phrase).count()
}

fn run(
    pdf: &[u8],
    op: EditOp,
    find: &str,
    replace: &str,
    occurrence: Option<Occurrence>,
) -> EditResult {
    let req = EditRequest {
        edits: vec![Edit {
            op,
            find: find.into(),
            replace: replace.into(),
            scope: Scope {
                occurrence,
                ..Scope::default()
            },
            ..Edit::default()
        }],
        ..EditRequest::default()
    };
    edit(pdf, &req).expect("edit runs")
}

/// (document, phrase): each has one occurrence of the phrase broken over two lines of a
/// paragraph, besides others on single lines.
const WRAPPING: [(&str, &str); 2] = [
    (
        "font-tt-subset-libreoffice-trivial.pdf",
        "Lorem ipsum dolor sit amet",
    ),
    (
        "font-type1-pdflatex-4p.pdf",
        "Hello, here is some text without a meaning.",
    ),
];

#[test]
fn every_occurrence_is_replaced_wrapped_ones_too() {
    if !common::init_pdfium() {
        return;
    }
    for (name, phrase) in WRAPPING {
        let Some(pdf) = common::load(name) else {
            return;
        };
        let Some(before) = common::pdftotext(&pdf, &[]) else {
            return;
        };
        let total = count(&before, phrase);
        let on_one_line = before.lines().map(|l| count(l, phrase)).sum::<usize>();
        assert!(
            total > on_one_line,
            "{name}: the phrase no longer wraps in the corpus copy"
        );

        let new = common::rotate_words(phrase);
        let r = run(&pdf, EditOp::Replace, phrase, &new, None);
        assert!(
            r.failed.is_empty() && r.unmatched.is_empty(),
            "{name}: {:?} {:?}",
            r.failed,
            r.unmatched
        );
        assert!(
            r.changes.iter().all(|c| c.verified),
            "{name}: unverified change"
        );
        let after = common::pdftotext(&r.pdf, &[]).expect("pdftotext");
        assert_eq!(count(&after, phrase), 0, "{name}: an occurrence is left");
        assert_eq!(
            count(&after, &new),
            total,
            "{name}: not every occurrence reads as the new text"
        );
        // Nothing else changed: the text is the old one with every occurrence replaced.
        assert_eq!(
            squash(&after),
            squash(&before).replace(phrase, &new),
            "{name}"
        );
    }
}

#[test]
fn a_wrapped_occurrence_counts_once_and_is_deleted_whole() {
    if !common::init_pdfium() {
        return;
    }
    let (name, phrase) = WRAPPING[0];
    let Some(pdf) = common::load(name) else {
        return;
    };
    let Some(before) = common::pdftotext(&pdf, &[]) else {
        return;
    };
    let squashed = squash(&before);
    // Which occurrence wraps, in reading order.
    let lines: Vec<&str> = before.lines().collect();
    let total = count(&before, phrase);
    let mut nth = None;
    let mut seen = 0;
    for (i, l) in lines.iter().enumerate() {
        let here = count(l, phrase);
        let joined = format!("{} {}", l, lines.get(i + 1).copied().unwrap_or(""));
        if count(&joined, phrase) > here + lines.get(i + 1).map_or(0, |n| count(n, phrase)) {
            nth = Some(seen + here + 1);
            break;
        }
        seen += here;
    }
    let nth = u32::try_from(nth.expect("a wrapped occurrence")).unwrap();
    let r = run(
        &pdf,
        EditOp::Replace,
        phrase,
        "Wrapped occurrence here",
        Some(Occurrence::Nth(nth)),
    );
    assert!(
        r.failed.is_empty() && r.unmatched.is_empty(),
        "{:?} {:?}",
        r.failed,
        r.unmatched
    );
    // One occurrence, drawn on its two lines.
    assert_eq!(
        r.changes.len(),
        2,
        "{:?}",
        r.changes.iter().map(|c| &c.find).collect::<Vec<_>>()
    );
    // Each line's part is the phrase's words there, without the white space at the break.
    for c in &r.changes {
        assert_eq!(c.find, c.find.trim(), "{:?}", c.find);
    }
    let after = common::pdftotext(&r.pdf, &[]).expect("pdftotext");
    assert_eq!(count(&after, phrase), total - 1);
    assert_eq!(count(&after, "Wrapped occurrence here"), 1);

    // A delete of every occurrence takes the wrapped one too, and nothing else.
    let r = run(&pdf, EditOp::Delete, phrase, "", None);
    assert!(
        r.failed.is_empty() && r.unmatched.is_empty(),
        "{:?} {:?}",
        r.failed,
        r.unmatched
    );
    let after = common::pdftotext(&r.pdf, &[]).expect("pdftotext");
    assert_eq!(count(&after, phrase), 0);
    // The rest reads as before (a tidy delete also takes the space before a comma, so
    // letters are compared without white space).
    let letters = |t: &str| t.split_whitespace().collect::<String>();
    assert_eq!(letters(&after), letters(&squashed.replace(phrase, "")));
}

#[test]
fn a_wrapped_line_whose_words_stay_is_not_listed_as_a_change() {
    if !common::init_pdfium() {
        return;
    }
    let (name, phrase) = WRAPPING[0];
    let Some(pdf) = common::load(name) else {
        return;
    };
    let Some(before) = common::pdftotext(&pdf, &[]) else {
        return;
    };
    // Only the last words change: the wrapped occurrence's first line keeps its words.
    let new = "Lorem ipsum dolor sat amen";
    let r = run(&pdf, EditOp::Replace, phrase, new, None);
    assert!(
        r.failed.is_empty() && r.unmatched.is_empty(),
        "{:?} {:?}",
        r.failed,
        r.unmatched
    );
    let rows: Vec<(&str, &str)> = r
        .changes
        .iter()
        .map(|c| (c.find.as_str(), c.replace.as_str()))
        .collect();
    assert!(
        rows.iter().all(|(f, n)| f != n),
        "a change that changes nothing is listed: {rows:?}"
    );
    // One row per occurrence: the wrapped one is listed by its changed line only.
    assert_eq!(rows.len(), count(&before, phrase), "{rows:?}");
    let after = common::pdftotext(&r.pdf, &[]).expect("pdftotext");
    assert_eq!(count(&after, phrase), 0);
    assert_eq!(count(&after, new), count(&before, phrase));
}
