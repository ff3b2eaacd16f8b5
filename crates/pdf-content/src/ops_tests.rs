use super::*;

fn kinds(input: &[u8]) -> Vec<OpKind> {
    parse(input).into_iter().map(|op| op.kind).collect()
}

#[test]
fn text_ops_are_typed() {
    let input = b"BT /F1 12 Tf 1 0 0 1 72 700 Tm 2 Tc .5 Tw 90 Tz 14 TL 3 Ts 1 Tr 10 20 Td 0 -14 TD T* (a) Tj [(b) -20 (c)] TJ (d) ' 1 2 (e) \" ET";
    assert_eq!(
        kinds(input),
        vec![
            OpKind::BeginText,
            OpKind::Font {
                name: b"F1".to_vec(),
                size: 12.0
            },
            OpKind::TextMatrix([1.0, 0.0, 0.0, 1.0, 72.0, 700.0]),
            OpKind::CharSpacing(2.0),
            OpKind::WordSpacing(0.5),
            OpKind::HorizontalScaling(90.0),
            OpKind::Leading(14.0),
            OpKind::Rise(3.0),
            OpKind::RenderMode(1),
            OpKind::MoveText([10.0, 20.0]),
            OpKind::MoveTextSetLeading([0.0, -14.0]),
            OpKind::NextLine,
            OpKind::ShowText,
            OpKind::ShowTextArray,
            OpKind::NextLineShowText,
            OpKind::NextLineShowTextSpacing {
                word_spacing: 1.0,
                char_spacing: 2.0
            },
            OpKind::EndText,
        ]
    );
}

#[test]
fn graphics_colour_path_and_marked_ops() {
    let input = b"q 1 0 0 1 5 5 cm /GS0 gs 2 w [3 1] 0 d 0.5 g 1 0 0 rg 0 0 0 1 k /CS0 cs 1 sc /P0 scn 0.2 0.3 /P1 scn 0 0 m 1 1 l 0 0 10 10 re f* W n /Im1 Do /Span <</ActualText (x)>> BDC /P BMC EMC EMC /X /Y DP BX foo EX Q";
    let got = kinds(input);
    assert_eq!(got[0], OpKind::Save);
    assert_eq!(got[1], OpKind::Transform([1.0, 0.0, 0.0, 1.0, 5.0, 5.0]));
    assert_eq!(got[2], OpKind::ExtGState(b"GS0".to_vec()));
    assert_eq!(got[3], OpKind::LineWidth(2.0));
    assert_eq!(
        got[4],
        OpKind::Dash {
            array: vec![3.0, 1.0],
            phase: 0.0
        }
    );
    assert_eq!(got[5], OpKind::FillGray(0.5));
    assert_eq!(got[6], OpKind::FillRgb([1.0, 0.0, 0.0]));
    assert_eq!(got[7], OpKind::FillCmyk([0.0, 0.0, 0.0, 1.0]));
    assert_eq!(got[8], OpKind::FillColorSpace(b"CS0".to_vec()));
    assert_eq!(got[9], OpKind::FillColor(vec![1.0]));
    assert_eq!(
        got[10],
        OpKind::FillColorN {
            components: vec![],
            pattern: Some(b"P0".to_vec())
        }
    );
    assert_eq!(
        got[11],
        OpKind::FillColorN {
            components: vec![0.2, 0.3],
            pattern: Some(b"P1".to_vec())
        }
    );
    assert_eq!(
        &got[12..18],
        &[
            OpKind::MoveTo([0.0, 0.0]),
            OpKind::LineTo([1.0, 1.0]),
            OpKind::Rectangle([0.0, 0.0, 10.0, 10.0]),
            OpKind::FillEvenOdd,
            OpKind::Clip,
            OpKind::EndPath,
        ]
    );
    assert_eq!(got[18], OpKind::XObject(b"Im1".to_vec()));
    assert_eq!(got[19], OpKind::BeginMarkedProps(b"Span".to_vec()));
    assert_eq!(got[20], OpKind::BeginMarked(b"P".to_vec()));
    assert_eq!(got[21], OpKind::EndMarked);
    assert_eq!(got[23], OpKind::MarkedPointProps(b"X".to_vec()));
    assert_eq!(got[24], OpKind::BeginCompat);
    assert_eq!(got[25], OpKind::Other(b"foo".to_vec()));
    assert_eq!(got[26], OpKind::EndCompat);
    assert_eq!(got[27], OpKind::Restore);
}

#[test]
fn op_and_operand_spans() {
    let input = b"  BT\n/F1 9.5 Tf [(ab) -250 <0041>] TJ ET";
    let ops = parse(input);
    assert_eq!(ops[1].span, 5..15);
    assert_eq!(&input[ops[1].span.clone()], b"/F1 9.5 Tf");
    assert_eq!(ops[1].operator_span, 13..15);
    let tj = &ops[2];
    assert_eq!(&input[tj.span.clone()], b"[(ab) -250 <0041>] TJ");
    let Value::Array(items) = &tj.operands[0].value else {
        panic!("no array");
    };
    assert_eq!(&input[items[0].span.clone()], b"(ab)");
    assert_eq!(&input[items[1].span.clone()], b"-250");
    assert_eq!(&input[items[2].span.clone()], b"<0041>");
    assert_eq!(
        items[2].value,
        Value::String(PdfString {
            bytes: vec![0, 0x41],
            hex: true
        })
    );
    assert!(std::ptr::eq(tj.shown_operand().unwrap(), &tj.operands[0]));
}

#[test]
fn wrong_operands_make_malformed_ops_extra_ones_are_ignored() {
    assert_eq!(
        kinds(b"12 Tf (x) TJ 1 Td /F1 Tf 1 2 3 Td 5 5 (s) Tj"),
        vec![
            OpKind::Malformed(b"Tf".to_vec()),
            OpKind::Malformed(b"TJ".to_vec()),
            OpKind::Malformed(b"Td".to_vec()),
            OpKind::Malformed(b"Tf".to_vec()),
            OpKind::MoveText([2.0, 3.0]),
            OpKind::ShowText,
        ]
    );
}

#[test]
fn inline_image_op_has_its_dictionary() {
    let input = b"q BI /W 4 /H 2 /F [/AHx] ID 00ff> EI Q";
    let ops = parse(input);
    assert_eq!(ops.len(), 3);
    let OpKind::InlineImage { data } = &ops[1].kind else {
        panic!("{:?}", ops[1].kind);
    };
    assert_eq!(&input[data.clone()], b"00ff>");
    assert_eq!(
        &input[ops[1].span.clone()],
        b"BI /W 4 /H 2 /F [/AHx] ID 00ff> EI"
    );
    let dict = &ops[1].operands[0];
    assert_eq!(dict.dict_get(b"W").and_then(Operand::as_f64), Some(4.0));
    let filter = dict.dict_get(b"F").unwrap();
    assert_eq!(&input[filter.span.clone()], b"[/AHx]");
}

#[test]
fn trailing_operands_and_stray_closers_keep_their_bytes() {
    let input = b"] 1 0 0 RG >> q 5 [1";
    let ops = parse(input);
    assert_eq!(ops.len(), 3);
    assert_eq!(&input[ops[0].span.clone()], b"] 1 0 0 RG");
    assert_eq!(ops[0].kind, OpKind::StrokeRgb([1.0, 0.0, 0.0]));
    assert_eq!(&input[ops[1].span.clone()], b">> q");
    assert_eq!(ops[2].kind, OpKind::Trailing);
    assert_eq!(&input[ops[2].span.clone()], b"5 [1");
    assert_eq!(ops[2].operands.len(), 2);
}

#[test]
fn operator_names_round_trip() {
    for text in [
        "w", "J", "j", "M", "ri", "i", "gs", "q", "Q", "cm", "m", "l", "c", "v", "y", "h", "re",
        "S", "s", "f", "F", "f*", "B", "B*", "b", "b*", "n", "W", "W*", "BT", "ET", "Tc", "Tw",
        "Tz", "TL", "Tr", "Ts", "Td", "TD", "Tm", "T*", "d0", "d1", "CS", "cs", "SC", "sc", "G",
        "g", "RG", "rg", "K", "k", "sh", "Do", "MP", "BMC", "EMC", "BX", "EX",
    ] {
        let ops = parse(text.as_bytes());
        assert_eq!(ops[0].kind.operator(), text.as_bytes(), "{text}");
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    let mut input = vec![b'['; 100_000];
    input.extend_from_slice(b" TJ");
    let ops = parse(&input);
    assert_eq!(ops.len(), 1);
    assert_eq!(ops[0].span, 0..input.len());
}

#[test]
fn random_input_ops_cover_every_token() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for round in 0..3000 {
        let input = crate::lexer::tests::random_bytes(&mut seed, round % 400);
        let ops = parse(&input);
        let mut last = 0;
        for op in &ops {
            assert!(
                op.span.start >= last && op.span.end <= input.len(),
                "{input:?}"
            );
            assert!(op.operator_span.start >= op.span.start && op.operator_span.end == op.span.end);
            last = op.span.end;
        }
        let covered: usize = ops.iter().map(|o| o.span.len()).sum();
        let tokens: usize = crate::lexer::tokenize(&input)
            .iter()
            .map(|t| t.span.len())
            .sum();
        assert!(covered >= tokens, "{input:?}");
    }
}
