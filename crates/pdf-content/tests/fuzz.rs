//! Property and mutation tests of the lexer, the operation parser, patching and the
//! interpreter (issue 21 item 3), seeded from the content streams of ../shared/corpus
//! (built-in seeds when it is absent). `PROPTEST_CASES` raises the case count
//! (`npm run fuzz`); a failing case is kept in proptest-regressions/ beside this file.

mod common;

use std::sync::OnceLock;

use pdf_content::{interpret_page, parse, patch, tokenize};
use proptest::prelude::*;
use proptest::sample::Index;

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn corpus_dir() -> std::path::PathBuf {
    std::env::var_os("PDFEDIT_CORPUS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
        })
}

/// Content streams to mutate: the first pages of every corpus document (at most 16 KiB of
/// each), after a few hand-made ones that reach the lexer's odd corners.
fn seeds() -> &'static Vec<Vec<u8>> {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut out: Vec<Vec<u8>> = [
            &b"BT /F1 12 Tf 72 700 Td (Hello \\(world\\)) Tj [(A) -120 (B)] TJ ET"[..],
            b"q 1 0 0 1 0 0 cm BI /W 2 /H 2 /BPC 8 /CS /G ID \x00\x01\x02\x03 EI Q",
            b"/P <</MCID 0>> BDC BT /F2 10 Tf <00410042> Tj ET EMC",
            b"BT /F3 1 Tf 0 0 Td (x) ' 1 2 (y) \" ET % comment\n/X#20Y Do",
            b"[1 [2 [3 <</A [<</B 1>>]>>]]] pop { } ) > 1.5e3 -.5 +3 true false null",
        ]
        .iter()
        .map(|s| s.to_vec())
        .collect();
        let Ok(dir) = std::fs::read_dir(corpus_dir()) else {
            eprintln!("fuzz: ../shared/corpus not found; built-in seeds only");
            return out;
        };
        let mut paths: Vec<_> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "pdf"))
            .collect();
        paths.sort();
        for path in paths {
            let Ok(doc) = lopdf::Document::load(&path) else {
                continue;
            };
            for (_, id) in doc.get_pages().into_iter().take(2) {
                if let Ok(mut c) = doc.get_page_content_with_limit(id, 8 << 20) {
                    c.truncate(16 << 10);
                    if !c.is_empty() {
                        out.push(c);
                    }
                }
            }
        }
        out
    })
}

/// Bytes that change how a content stream lexes.
const PIECES: &[&[u8]] = &[
    b"(",
    b")",
    b"\\",
    b"<",
    b">",
    b"<<",
    b">>",
    b"[",
    b"]",
    b"{",
    b"}",
    b"/",
    b"%",
    b"\n",
    b"\r",
    b" ",
    b"BI",
    b"ID ",
    b" EI",
    b"Tj",
    b"TJ",
    b"'",
    b"\"",
    b"Do",
    b"q",
    b"Q",
    b"cm",
    b"BT",
    b"ET",
    b"Tf",
    b"Td",
    b"TD",
    b"Tm",
    b"BDC",
    b"EMC",
    b"1e308",
    b"-",
    b".",
    b"#",
    b"#zz",
    b"99999999999999999999",
    b"\x00",
    b"\xff",
    b"\\0",
    b"\\777",
];

#[derive(Debug, Clone)]
enum Mutation {
    Flip(Index, u8),
    Insert(Index, Index),
    Delete(Index, u8),
    Truncate(Index),
    /// Bytes of another seed spliced in.
    Splice(Index, Index, Index, u16),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<Index>(), any::<Index>()).prop_map(|(i, p)| Mutation::Insert(i, p)),
        (any::<Index>(), any::<u8>()).prop_map(|(i, n)| Mutation::Delete(i, n)),
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), any::<Index>(), any::<Index>(), any::<u16>())
            .prop_map(|(a, b, c, n)| Mutation::Splice(a, b, c, n)),
    ]
}

fn apply(seed: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let seeds = seeds();
    let mut s = seed.to_vec();
    for m in mutations {
        let at = |i: &Index, s: &Vec<u8>| i.index(s.len() + 1);
        match m {
            Mutation::Flip(i, b) if !s.is_empty() => {
                let k = i.index(s.len());
                s[k] = *b;
            }
            Mutation::Insert(i, p) => {
                let k = at(i, &s);
                let piece = PIECES[p.index(PIECES.len())];
                s.splice(k..k, piece.iter().copied());
            }
            Mutation::Delete(i, n) => {
                let k = at(i, &s);
                let end = (k + *n as usize).min(s.len());
                s.drain(k..end);
            }
            Mutation::Truncate(i) => {
                let k = at(i, &s);
                s.truncate(k);
            }
            Mutation::Splice(i, other, from, n) => {
                let k = at(i, &s);
                let o = &seeds[other.index(seeds.len())];
                let f = from.index(o.len() + 1);
                let end = (f + *n as usize % 512).min(o.len());
                s.splice(k..k, o[f..end].iter().copied());
            }
            Mutation::Flip(..) => {}
        }
    }
    s
}

fn mutated() -> impl Strategy<Value = Vec<u8>> {
    (any::<Index>(), prop::collection::vec(mutation(), 0..12))
        .prop_map(|(seed, muts)| apply(&seeds()[seed.index(seeds().len())], &muts))
}

/// Tokens lie inside the stream, in order, never overlapping; parsing and an empty patch
/// never fail.
fn check_lexing(stream: &[u8]) {
    let mut last = 0;
    for t in tokenize(stream) {
        assert!(t.span.start >= last, "token {t:?} starts before {last}");
        assert!(
            t.span.start < t.span.end || stream.is_empty(),
            "empty token {t:?}"
        );
        assert!(t.span.end <= stream.len(), "token {t:?} past the end");
        last = t.span.end;
    }
    let ops = parse(stream);
    for op in &ops {
        assert!(op.span.end <= stream.len());
    }
    assert_eq!(patch(stream, &[]).unwrap(), stream);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn arbitrary_bytes_lex_and_parse(stream in prop::collection::vec(any::<u8>(), 0..2048)) {
        check_lexing(&stream);
    }

    #[test]
    fn mutated_corpus_streams_lex_and_parse(stream in mutated()) {
        check_lexing(&stream);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(128)))]

    /// The interpreter ends on any stream, with or without fonts, and never panics.
    #[test]
    fn mutated_corpus_streams_interpret(stream in mutated()) {
        let (doc, page) = common::build(&[stream.as_slice()], |_, _| {});
        let _ = interpret_page(&doc, page, &mut common::Fonts::default());
    }
}
