use super::*;

fn number(v: f64) -> String {
    format_number(v)
}

#[test]
fn numbers_are_short_without_exponent() {
    assert_eq!(number(0.0), "0");
    assert_eq!(number(-0.0), "0");
    assert_eq!(number(-0.0000001), "0");
    assert_eq!(number(12.0), "12");
    assert_eq!(number(-12.5), "-12.5");
    assert_eq!(number(0.1 + 0.2), "0.3");
    assert_eq!(number(1e21), "1000000000000000000000");
    assert_eq!(number(1.5e-5), "0.000015");
    assert_eq!(number(f64::NAN), "0");
    assert_eq!(number(f64::INFINITY), "0");
}

fn literal(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_literal_string(&mut out, bytes);
    out
}

#[test]
fn literal_strings_escape_minimally() {
    assert_eq!(literal(b"Hello"), b"(Hello)");
    assert_eq!(literal(b"a(b)c"), b"(a(b)c)");
    assert_eq!(literal(b"a)b(c"), b"(a\\)b\\(c)");
    assert_eq!(literal(b"(()"), b"(\\(())");
    assert_eq!(literal(b"x\\y\rz\n\x00\xff"), b"(x\\\\y\\rz\n\x00\xff)");
}

#[test]
fn written_strings_read_back_identically() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    for round in 0..500 {
        let bytes = crate::lexer::tests::random_bytes(&mut seed, round % 40);
        let written = literal(&bytes);
        let tokens = crate::lexer::tokenize(&written);
        assert_eq!(tokens.len(), 1, "{written:?}");
        assert_eq!(
            tokens[0].kind,
            crate::lexer::TokenKind::LiteralString(bytes.clone())
        );
        let mut hex = Vec::new();
        write_hex_string(&mut hex, &bytes);
        assert_eq!(
            crate::lexer::tokenize(&hex)[0].kind,
            crate::lexer::TokenKind::HexString(bytes)
        );
    }
}

#[test]
fn names_and_values() {
    let mut out = Vec::new();
    write_name(&mut out, b"A B#(c)");
    assert_eq!(out, b"/A#20B#23#28c#29");
    let value = Value::Array(vec![
        Operand {
            value: Value::Name(b"F1".to_vec()),
            span: 0..0,
        },
        Operand {
            value: Value::Integer(3),
            span: 0..0,
        },
        Operand {
            value: Value::Real(-0.5),
            span: 0..0,
        },
        Operand {
            value: Value::Dict(vec![(
                b"MCID".to_vec(),
                Operand {
                    value: Value::Integer(0),
                    span: 0..0,
                },
            )]),
            span: 0..0,
        },
    ]);
    let mut out = Vec::new();
    write_value(&mut out, &value);
    assert_eq!(out, b"[/F1 3 -0.5<</MCID 0>>]");
}

#[test]
fn ops_serialise() {
    assert_eq!(
        write_op(&[Value::Real(72.0), Value::Real(-14.25)], b"Td"),
        b"72 -14.25 Td"
    );
    assert_eq!(write_op(&[], b"ET"), b"ET");
    let ops = crate::ops::parse(b"/F1   12.0 Tf\n[ (a)  -20 ] TJ");
    assert_eq!(write_parsed_op(&ops[0]), b"/F1 12 Tf");
    assert_eq!(write_parsed_op(&ops[1]), b"[(a)-20] TJ");
}

#[test]
fn tj_arrays() {
    let items = [
        TjItem::Text(b"Hel".to_vec()),
        TjItem::Kern(20.0),
        TjItem::Text(b"lo".to_vec()),
        TjItem::Kern(0.0),
        TjItem::Kern(-3.5),
    ];
    assert_eq!(tj_array(&items, false), b"[(Hel)20(lo)-3.5]");
    assert_eq!(tj_array(&items[..3], true), b"[<48656C>20<6C6F>]");
    assert_eq!(
        tj_array_from_pairs(&[(b"a".to_vec(), -250.0), (b"b".to_vec(), 0.0)], false),
        b"[(a)-250(b)]"
    );
    assert_eq!(
        tj_array(&[TjItem::Kern(5.0), TjItem::Kern(6.0)], false),
        b"[5 6]"
    );
}

#[test]
fn patch_without_edits_is_identity() {
    let original = b"BT /F1 12 Tf (Hello) Tj ET".to_vec();
    assert_eq!(patch(&original, &[]).unwrap(), original);
}

#[test]
fn patch_replaces_only_the_named_ranges() {
    let original = b"BT (Hello) Tj 10 0 Td (World) Tj ET";
    let edits = vec![
        (22..29, b"(Earth)".to_vec()),
        (3..10, b"(Howdy)".to_vec()),
        (35..35, b"\n".to_vec()),
    ];
    assert_eq!(
        patch(original, &edits).unwrap(),
        b"BT (Howdy) Tj 10 0 Td (Earth) Tj ET\n"
    );
}

#[test]
fn patch_rejects_overlaps_and_out_of_bounds() {
    let original = b"0123456789";
    assert!(matches!(
        patch(original, &[(2..5, vec![]), (4..6, vec![])]),
        Err(Error::OverlappingEdits { .. })
    ));
    assert!(matches!(
        patch(original, &[(8..11, vec![])]),
        Err(Error::EditOutOfBounds { .. })
    ));
    // Adjacent edits and insertions at the same point are fine.
    let out = patch(
        original,
        &[
            (2..4, b"x".to_vec()),
            (4..4, b"y".to_vec()),
            (4..4, b"z".to_vec()),
        ],
    )
    .unwrap();
    assert_eq!(out, b"01xyz456789");
}
