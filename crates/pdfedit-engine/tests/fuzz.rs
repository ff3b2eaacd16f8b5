//! Property tests of find and the edit planner (issue 21 item 3): edits whose find text is
//! cut from a corpus page's own text and mutated (case, inserted characters, regex
//! metacharacters), with any replacement text, every op and match mode. An edit must end
//! as a change, `unmatched` or `failed`, or as a typed refusal of the request: never a
//! panic or an engine error. `PROPTEST_CASES` raises the case count (`npm run fuzz`; a twentieth of it here).

mod common;

use std::sync::OnceLock;

use pdfedit_engine::edit::{edit, Edit, EditError, EditOp, EditRequest, MatchMode};
use pdfedit_engine::Error;
use proptest::prelude::*;
use proptest::sample::Index;

/// An edit renders pages to verify itself: a twentieth of `PROPTEST_CASES`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .map_or(default, |n| n / 20 + 1)
}

/// The document and the texts of its spans (first page).
fn seed() -> Option<&'static (Vec<u8>, Vec<String>)> {
    static SEED: OnceLock<Option<(Vec<u8>, Vec<String>)>> = OnceLock::new();
    SEED.get_or_init(|| {
        if !common::init_pdfium() {
            return None;
        }
        let pdf = common::load("doc-invoice-itextsharp-demo.pdf")?;
        let text = pdfedit_engine::read_text(&pdf, None, Some(vec![1]), true, false).ok()?;
        let spans = text.pages[0].spans.iter().map(|s| s.text.clone()).collect();
        Some((pdf, spans))
    })
    .as_ref()
}

const INSERTS: &[&str] = &[
    ".", "*", "(", ")", "[", "\\", "$1", "^", "|", "?", "+", "{2}", " ", "\u{a0}", "é", "ß",
    "\u{301}", "ﬁ", "中", "\u{200b}", "\n", "\0", "😀",
];

#[derive(Debug, Clone)]
struct Spec {
    span: Index,
    from: Index,
    len: u8,
    upper: bool,
    insert: Option<(Index, Index)>,
    replace: String,
    op: u8,
    mode: u8,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<Index>(),
        any::<Index>(),
        0u8..40,
        any::<bool>(),
        proptest::option::of((any::<Index>(), any::<Index>())),
        "\\PC{0,12}",
        0u8..3,
        0u8..4,
    )
        .prop_map(|(span, from, len, upper, insert, replace, op, mode)| Spec {
            span,
            from,
            len,
            upper,
            insert,
            replace,
            op,
            mode,
        })
}

fn build(spec: &Spec, spans: &[String]) -> Edit {
    let text: Vec<char> = spans[spec.span.index(spans.len())].chars().collect();
    let from = spec.from.index(text.len() + 1);
    let end = (from + spec.len as usize).min(text.len());
    let mut find: String = text[from..end].iter().collect();
    if spec.upper {
        find = find.to_uppercase();
    }
    if let Some((at, piece)) = &spec.insert {
        let chars: Vec<char> = find.chars().collect();
        let k = at.index(chars.len() + 1);
        find = chars[..k].iter().collect::<String>()
            + INSERTS[piece.index(INSERTS.len())]
            + &chars[k..].iter().collect::<String>();
    }
    let op = [EditOp::Replace, EditOp::Delete, EditOp::Redact][spec.op as usize];
    let replace = if op == EditOp::Replace && spec.replace.is_empty() {
        "x".to_string()
    } else if op == EditOp::Replace {
        spec.replace.clone()
    } else {
        String::new()
    };
    Edit {
        index: 0,
        op,
        find,
        replace,
        match_mode: [
            MatchMode::Exact,
            MatchMode::Icase,
            MatchMode::Word,
            MatchMode::Regex,
        ][spec.mode as usize],
        ..Edit::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(24)))]

    #[test]
    fn edits_cut_from_the_page_end_typed(specs in prop::collection::vec(spec(), 1..3)) {
        let Some((pdf, spans)) = seed().filter(|(_, spans)| !spans.is_empty()) else {
            return Ok(());
        };
        let edits: Vec<Edit> = specs
            .iter()
            .enumerate()
            .map(|(i, s)| Edit { index: i as u32, ..build(s, spans) })
            .collect();
        let request = EditRequest { edits: edits.clone(), ..EditRequest::default() };
        match edit(pdf, &request) {
            Ok(r) => {
                // A redaction may only remove text outside the page's text (`removed`).
                let answered =
                    r.changes.len() + r.unmatched.len() + r.failed.len() + r.removed.len();
                prop_assert!(answered >= edits.len().min(1), "{edits:?}: nothing answered");
            }
            Err(EditError::Engine(Error::InvalidRequest(_))) => {}
            Err(EditError::Engine(e @ (Error::Engine(_) | Error::Unsupported(_)))) => {
                prop_assert!(false, "{edits:?}: {e}");
            }
            Err(other) => prop_assert!(false, "{edits:?}: {other}"),
        }
    }
}
