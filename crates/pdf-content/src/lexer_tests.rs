use super::*;

fn kinds(input: &[u8]) -> Vec<TokenKind> {
    tokenize(input).into_iter().map(|t| t.kind).collect()
}

fn spans(input: &[u8]) -> Vec<Range<usize>> {
    tokenize(input).into_iter().map(|t| t.span).collect()
}

fn op(s: &str) -> TokenKind {
    TokenKind::Operator(s.as_bytes().to_vec())
}

#[test]
fn numbers_in_all_spellings() {
    assert_eq!(
        kinds(b"1 -2 +3 .5 -.5 4. 0.25 -0"),
        vec![
            TokenKind::Integer(1),
            TokenKind::Integer(-2),
            TokenKind::Integer(3),
            TokenKind::Real(0.5),
            TokenKind::Real(-0.5),
            TokenKind::Real(4.0),
            TokenKind::Real(0.25),
            TokenKind::Integer(0),
        ]
    );
}

#[test]
fn malformed_numbers_read_like_pdfium() {
    // One sign only, then digits: `--3` has no digits after its sign.
    assert_eq!(
        kinds(b"--3 4.5.6 - 12abc 99999999999999999999"),
        vec![
            TokenKind::Integer(0),
            TokenKind::Real(4.5),
            TokenKind::Integer(0),
            TokenKind::Integer(12),
            TokenKind::Integer(0),
        ]
    );
}

#[test]
fn names_decode_hex_escapes() {
    assert_eq!(
        kinds(b"/F1 /A#20B /Bad#zz /#41/"),
        vec![
            TokenKind::Name(b"F1".to_vec()),
            TokenKind::Name(b"A B".to_vec()),
            TokenKind::Name(b"Bad#zz".to_vec()),
            TokenKind::Name(b"A".to_vec()),
            TokenKind::Name(Vec::new()),
        ]
    );
    assert_eq!(spans(b"/F1 /A#20B"), vec![0..3, 4..10]);
}

#[test]
fn literal_strings_nest_and_unescape() {
    let input = b"(a(b)c\\)d\\\\e\\n\\r\\t\\b\\f\\(\\053\\0539\\7777\\q)";
    let tokens = tokenize(input);
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0].span, 0..input.len());
    assert_eq!(
        tokens[0].kind,
        TokenKind::LiteralString(b"a(b)c)d\\e\n\r\t\x08\x0c(++9\xff7q".to_vec())
    );
}

#[test]
fn literal_string_line_continuations_and_eols() {
    assert_eq!(
        kinds(b"(ab\\\ncd\\\r\nef\\\rgh\r\nij\rk)"),
        vec![TokenKind::LiteralString(b"abcdefgh\nij\nk".to_vec())]
    );
}

#[test]
fn unterminated_strings_run_to_the_end() {
    assert_eq!(spans(b"(abc"), vec![0..4]);
    assert_eq!(spans(b"(abc\\"), vec![0..5]);
    assert_eq!(spans(b"<41 4"), vec![0..5]);
    assert_eq!(kinds(b"<41 4"), vec![TokenKind::HexString(b"A@".to_vec())]);
}

#[test]
fn hex_strings_with_whitespace_and_odd_digits() {
    assert_eq!(
        kinds(b"<48 65\n6C6c 6> <> <4>"),
        vec![
            TokenKind::HexString(b"Hell`".to_vec()),
            TokenKind::HexString(Vec::new()),
            TokenKind::HexString(vec![0x40]),
        ]
    );
}

#[test]
fn arrays_dicts_keywords_and_comments() {
    let input = b"[(a) -20 (b)] TJ % comment TJ\n<</MCID 3>> BDC true false null T* '";
    assert_eq!(
        kinds(input),
        vec![
            TokenKind::ArrayOpen,
            TokenKind::LiteralString(b"a".to_vec()),
            TokenKind::Integer(-20),
            TokenKind::LiteralString(b"b".to_vec()),
            TokenKind::ArrayClose,
            op("TJ"),
            TokenKind::DictOpen,
            TokenKind::Name(b"MCID".to_vec()),
            TokenKind::Integer(3),
            TokenKind::DictClose,
            op("BDC"),
            TokenKind::Bool(true),
            TokenKind::Bool(false),
            TokenKind::Null,
            op("T*"),
            op("'"),
        ]
    );
    assert_eq!(
        &spans(input)[..6],
        &[0..1, 1..4, 5..8, 9..12, 12..13, 14..16]
    );
}

#[test]
fn stray_delimiters_are_junk_not_lost() {
    assert_eq!(
        kinds(b") > { } q"),
        vec![
            TokenKind::Junk,
            TokenKind::Junk,
            TokenKind::Junk,
            TokenKind::Junk,
            op("q")
        ]
    );
}

#[test]
fn inline_image_is_one_token() {
    let input = b"q BI /W 2 /H 1 /BPC 8 /CS /G ID \x00\xffEI\x01 EI Q";
    let tokens = tokenize(input);
    assert_eq!(tokens.len(), 3, "{tokens:?}");
    let TokenKind::InlineImage { dict, data } = &tokens[1].kind else {
        panic!("not an image: {:?}", tokens[1]);
    };
    assert_eq!(&input[dict.clone()], b" /W 2 /H 1 /BPC 8 /CS /G ");
    // The `EI` inside the data is not preceded by white space, so it is data.
    assert_eq!(&input[data.clone()], b"\x00\xffEI\x01");
    assert_eq!(&input[tokens[1].span.clone()], &input[2..input.len() - 2]);
    assert_eq!(tokens[2].kind, op("Q"));
}

#[test]
fn inline_image_with_length_and_ei_lookalike_in_data() {
    // The data holds " EI " itself; /L says where it really ends.
    let input = b"BI /L 7 ID ab EI c EI Q";
    let tokens = tokenize(input);
    let TokenKind::InlineImage { data, .. } = &tokens[0].kind else {
        panic!("not an image");
    };
    assert_eq!(&input[data.clone()], b"ab EI c");
    assert_eq!(tokens[0].span, 0..21);
    assert_eq!(tokens[1].kind, op("Q"));
}

#[test]
fn inline_image_skips_ei_followed_by_binary() {
    let input = b"BI /W 1 ID \x10 EI \x00\x01\x02 EI Q";
    let tokens = tokenize(input);
    let TokenKind::InlineImage { data, .. } = &tokens[0].kind else {
        panic!("not an image");
    };
    assert_eq!(&input[data.clone()], b"\x10 EI \x00\x01\x02");
    assert_eq!(tokens[1].kind, op("Q"));
}

#[test]
fn inline_image_without_end_runs_to_eof() {
    let input = b"BI /W 1 ID \x01\x02";
    let tokens = tokenize(input);
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0].span, 0..input.len());
    let unterminated = b"BI /W 1";
    assert_eq!(tokenize(unterminated)[0].span, 0..unterminated.len());
}

#[test]
fn source_ranges_of_string_bytes() {
    let stream = b"(a\\(b\\101) <41 42>";
    let ranges = string_source_ranges(stream, 0..10).unwrap();
    assert_eq!(ranges, vec![1..2, 2..4, 4..5, 5..9]);
    let ranges = string_source_ranges(stream, 11..18).unwrap();
    assert_eq!(ranges, vec![12..15, 15..17]);
    assert_eq!(string_source_ranges(stream, 4..5), None);
}

/// A small xorshift generator: deterministic random bytes without a dependency.
pub(crate) fn random_bytes(seed: &mut u64, len: usize) -> Vec<u8> {
    const ALPHABET: &[u8] = b"()<>[]{}/%\\#BIDEI Tj TJ 0123456789.-+\n\r\t\x00\xff'\"abcfq";
    (0..len)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            let r = *seed;
            if r.is_multiple_of(3) {
                (r >> 8) as u8
            } else {
                ALPHABET[(r >> 8) as usize % ALPHABET.len()]
            }
        })
        .collect()
}

#[test]
fn random_input_never_panics_and_spans_stay_ordered() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..3000 {
        let input = random_bytes(&mut seed, round % 300);
        let mut last_end = 0;
        for token in tokenize(&input) {
            assert!(token.span.start >= last_end, "overlap in {input:?}");
            assert!(
                token.span.start < token.span.end,
                "empty token in {input:?}"
            );
            assert!(token.span.end <= input.len());
            // Only white space and comments lie between tokens.
            let gap = &input[last_end..token.span.start];
            assert!(
                gap.iter().all(|&b| is_whitespace(b)) || gap.contains(&b'%'),
                "lost bytes {gap:?} in {input:?}"
            );
            last_end = token.span.end;
        }
    }
}
