//! The interpreter on small PDFs built here with lopdf, with test fonts of fixed widths.

mod common;

use common::*;
use lopdf::{dictionary, Dictionary, Object, ObjectId, Stream};
use pdf_content::{interpret_page, string_source_ranges, StreamId, Warning};

#[test]
fn tm_positions_and_boxes() {
    let page = run(&[b"BT /F1 10 Tf 1 0 0 1 100 700 Tm (AB) Tj ET"], |_, _| {});
    assert_eq!(text(&page.glyphs), "AB");
    let a = &page.glyphs[0];
    assert_eq!(a.trm, [10.0, 0.0, 0.0, 10.0, 100.0, 700.0]);
    assert!(close(a.advance, 5.0));
    assert_eq!(a.bbox, [100.0, 698.0, 105.0, 707.0]);
    assert_eq!(a.font_size, 10.0);
    assert_eq!(a.fill_rgb, Some([0.0, 0.0, 0.0]));
    assert_at(&page.glyphs[1], 105.0, 700.0);
}

#[test]
fn td_tl_tstar_td_and_quote_move_lines() {
    let page = run(
        &[b"BT /F1 10 Tf 14 TL 100 700 Td (A) Tj T* (B) Tj 5 -2 TD (C) Tj (D) ' 1 2 (E) \" ET"],
        |_, _| {},
    );
    assert_eq!(text(&page.glyphs), "ABCDE");
    assert_at(&page.glyphs[0], 100.0, 700.0);
    assert_at(&page.glyphs[1], 100.0, 686.0);
    // TD sets TL to 2.
    assert_at(&page.glyphs[2], 105.0, 684.0);
    assert_at(&page.glyphs[3], 105.0, 682.0);
    assert_at(&page.glyphs[4], 105.0, 680.0);
    // `"` set Tw 1 and Tc 2: E advances (5 + 2) in text space.
    assert!(close(page.glyphs[4].advance, 7.0));
}

#[test]
fn tc_tw_tz_ts_change_advances() {
    let page = run(
        &[b"BT /F1 10 Tf 2 Tc 3 Tw 50 Tz 4 Ts (A B) Tj ET"],
        |_, _| {},
    );
    let g = &page.glyphs;
    assert_eq!(g[0].trm, [5.0, 0.0, 0.0, 10.0, 0.0, 4.0]);
    assert!(close(g[0].advance, 3.5)); // (5 + 2) × 0.5
    assert!(close(g[1].advance, 3.75)); // (2.5 + 2 + 3) × 0.5
    assert_at(&g[2], 7.25, 4.0);
}

#[test]
fn word_spacing_skips_two_byte_code_32() {
    let page = run(
        &[b"BT /F2 10 Tf 3 Tw <00200041> Tj /F1 10 Tf ( ) Tj ET"],
        |_, _| {},
    );
    let g = &page.glyphs;
    assert_eq!((g[0].code, g[0].code_span.clone()), (32, 0..2));
    assert!(close(g[0].advance, 10.0));
    assert!(close(g[2].advance, 2.5 + 3.0));
}

#[test]
fn cm_and_save_restore() {
    let page = run(
        &[b"q 2 0 0 2 10 10 cm BT /F1 10 Tf 5 5 Td (A) Tj ET Q BT /F1 10 Tf 5 5 Td (B) Tj ET"],
        |_, _| {},
    );
    assert_eq!(page.glyphs[0].trm, [20.0, 0.0, 0.0, 20.0, 20.0, 20.0]);
    assert_eq!(page.glyphs[1].trm, [10.0, 0.0, 0.0, 10.0, 5.0, 5.0]);
}

#[test]
fn text_state_is_saved_by_q() {
    let page = run(&[b"BT /F1 10 Tf q /F1 20 Tf 5 Tc Q (A) Tj ET"], |_, _| {});
    assert_eq!(page.glyphs[0].font_size, 10.0);
    assert!(close(page.glyphs[0].advance, 5.0));
}

#[test]
fn nested_forms_with_matrix_resources_and_cycle_guard() {
    let mut form_ids = (ObjectId::default(), ObjectId::default());
    let page = run(&[b"q 1 0 0 1 100 0 cm /Fm1 Do Q"], |doc, resources| {
        let fm2 = doc.new_object_id();
        let f1 = resources
            .get(b"Font")
            .unwrap()
            .as_dict()
            .unwrap()
            .get(b"F1")
            .unwrap()
            .clone();
        let fm2_stream = Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Form", "Matrix" => vec![2.into(), 0.into(), 0.into(), 2.into(), 0.into(), 0.into()],
                "Resources" => dictionary! { "Font" => dictionary! { "F1" => f1 }, "XObject" => dictionary! { "Fm2" => fm2 } },
            },
            b"BT /F1 10 Tf 1 0 0 1 5 0 Tm (B) Tj ET /Fm2 Do".to_vec(),
        );
        doc.objects.insert(fm2, Object::Stream(fm2_stream));
        // Fm1 has no /Resources: it uses the page's (old files do this, §7.8.3).
        let fm1 = doc.add_object(Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Form", "Matrix" => vec![1.into(), 0.into(), 0.into(), 1.into(), 0.into(), 50.into()] },
            b"BT /F1 10 Tf (A) Tj ET /Fm2 Do".to_vec(),
        ));
        form_ids = (fm1, fm2);
        let mut xobjects = Dictionary::new();
        xobjects.set("Fm1", fm1);
        xobjects.set("Fm2", fm2);
        resources.set("XObject", xobjects);
    });
    let (fm1, fm2) = form_ids;
    assert_eq!(text(&page.glyphs), "AB");
    assert_eq!(page.glyphs[0].stream, StreamId::Form { object_id: fm1 });
    assert_eq!(page.glyphs[0].trm, [10.0, 0.0, 0.0, 10.0, 100.0, 50.0]);
    assert_eq!(page.glyphs[1].stream, StreamId::Form { object_id: fm2 });
    assert_eq!(page.glyphs[1].trm, [20.0, 0.0, 0.0, 20.0, 110.0, 50.0]);
    assert!(
        page.warnings
            .contains(&Warning::FormCycle { object_id: fm2 }),
        "{:?}",
        page.warnings
    );
    assert_eq!(page.streams.len(), 3);
    let form = page.stream(StreamId::Form { object_id: fm1 }).unwrap();
    assert_eq!(form.bytes, b"BT /F1 10 Tf (A) Tj ET /Fm2 Do");
    assert_eq!(form.ops.len(), 5);
}

#[test]
fn tj_kerns_and_code_spans() {
    let content = b"BT /F1 10 Tf [(AB) -500 <4344>] TJ (a\\(b) Tj ET";
    let page = run(&[content], |_, _| {});
    let g = &page.glyphs;
    assert_eq!(text(g), "ABCDa(b");
    assert_at(&g[1], 5.0, 0.0);
    // The kern of -500 moves right by half an em.
    assert_at(&g[2], 15.0, 0.0);
    assert_eq!((g[2].string_index, g[2].code_span.clone()), (2, 0..1));
    assert_eq!(&content[g[2].operand_span.clone()], b"<4344>");
    assert_eq!((g[3].string_index, g[3].code_span.clone()), (2, 1..2));
    assert_eq!(&content[g[0].op_span.clone()], b"[(AB) -500 <4344>] TJ");
    assert_eq!(page.kerns.len(), 1);
    let kern = &page.kerns[0];
    assert_eq!(
        (kern.element_index, kern.value, kern.displacement),
        (1, -500.0, 5.0)
    );
    assert_eq!(&content[kern.span.clone()], b"-500");
    // The escaped `(` is decoded byte 1; its stream bytes are `\(`.
    let paren = &g[5];
    assert_eq!((paren.string_index, paren.code_span.clone()), (0, 1..2));
    let sources = string_source_ranges(content, paren.operand_span.clone()).unwrap();
    assert_eq!(&content[sources[paren.code_span.start].clone()], b"\\(");
}

#[test]
fn two_byte_codes_in_hex_strings() {
    let content = b"BT /F2 12 Tf <0041 0042> Tj ET";
    let page = run(&[content], |_, _| {});
    let g = &page.glyphs;
    assert_eq!((g[0].code, g[0].code_span.clone()), (0x41, 0..2));
    assert_eq!((g[1].code, g[1].code_span.clone()), (0x42, 2..4));
    assert_at(&g[1], 12.0, 0.0);
    let sources = string_source_ranges(content, g[1].operand_span.clone()).unwrap();
    assert_eq!(&content[sources[2].start..sources[3].end], b"0042");
}

#[test]
fn actual_text_and_mcid() {
    let page = run(
        &[b"/Span <</ActualText (fi)>> BDC BT /F1 10 Tf (X) Tj ET EMC /P <</MCID 3>> BDC /Span /Prop1 BDC BT /F1 10 Tf (YZ) Tj ET EMC EMC (W) Tj"],
        |_, resources| {
            let mut props = Dictionary::new();
            props.set(
                "Prop1",
                dictionary! { "ActualText" => Object::String(b"\xfe\xff\x00f\x00f".to_vec(), lopdf::StringFormat::Hexadecimal) },
            );
            resources.set("Properties", props);
        },
    );
    let g = &page.glyphs;
    let x = g[0].actual_text.as_ref().unwrap();
    assert_eq!((x.text.as_str(), x.sequence, x.first), ("fi", 0, true));
    assert_eq!(g[0].mcid, None);
    let y = g[1].actual_text.as_ref().unwrap();
    assert_eq!((y.text.as_str(), y.sequence, y.first), ("ff", 1, true));
    assert_eq!(g[1].mcid, Some(3));
    let z = g[2].actual_text.as_ref().unwrap();
    assert_eq!((z.sequence, z.first), (1, false));
    assert_eq!(g[2].mcid, Some(3));
    assert_eq!((g[3].mcid, g[3].actual_text.as_ref()), (None, None));
}

#[test]
fn fill_colours() {
    let page = run(
        &[b"BT /F1 10 Tf 0 0 1 rg (A) Tj 0 1 1 0 k (B) Tj /CS0 cs 1 0 0 sc (C) Tj /Pattern cs /P1 scn (D) Tj .5 g 3 Tr (E) Tj ET"],
        |doc, resources| {
            let icc = doc.add_object(Stream::new(dictionary! { "N" => 3 }, Vec::new()));
            resources.set(
                "ColorSpace",
                dictionary! { "CS0" => vec![Object::Name(b"ICCBased".to_vec()), icc.into()] },
            );
        },
    );
    let colours: Vec<_> = page.glyphs.iter().map(|g| g.fill_rgb).collect();
    assert_eq!(
        colours,
        vec![
            Some([0.0, 0.0, 1.0]),
            Some([1.0, 0.0, 0.0]),
            Some([1.0, 0.0, 0.0]),
            None,
            Some([0.5, 0.5, 0.5])
        ]
    );
    assert_eq!(page.glyphs[4].render_mode, 3);
}

#[test]
fn state_carries_across_content_streams() {
    let (doc, page_id) = build(&[b"BT /F1 10 Tf 50 60 Td", b"(A) Tj ET"], |_, _| {});
    let ids = doc.get_page_contents(page_id);
    let mut fonts = Fonts::default();
    let page = interpret_page(&doc, page_id, &mut fonts).unwrap();
    assert_eq!(
        page.glyphs[0].stream,
        StreamId::PageContent {
            index: 1,
            object_id: ids[1]
        }
    );
    assert_at(&page.glyphs[0], 50.0, 60.0);
    assert_eq!(page.streams.len(), 2);
    // Page resources are owned by the first content stream; the font is asked once.
    assert_eq!(fonts.asked.len(), 1);
    assert_eq!(
        fonts.asked[0].0,
        StreamId::PageContent {
            index: 0,
            object_id: ids[0]
        }
    );
    let key = &fonts.asked[0].1;
    let dict = key.dictionary(&doc).unwrap();
    assert_eq!(dict.get(b"BaseFont").unwrap().as_name().unwrap(), b"F1");
}

#[test]
fn vertical_and_type3_fonts() {
    let page = run(
        &[b"BT /F4 10 Tf 100 700 Td <00410042> Tj /F3 10 Tf 0 0 Td (ab) Tj ET"],
        |_, _| {},
    );
    let g = &page.glyphs;
    assert_at(&g[0], 100.0, 700.0);
    assert_at(&g[1], 100.0, 690.0);
    assert!(close(g[0].advance, -10.0));
    assert_eq!(g[0].bbox, [95.0, 690.0, 105.0, 700.0]);
    // Type 3: 50 glyph units × 0.01 = half an em.
    assert!(close(g[2].advance, 5.0));
    assert_at(&g[3], 105.0, 700.0);
    assert_eq!(g[2].bbox, [100.0, 698.0, 105.0, 708.0]);
}

#[test]
fn missing_fonts_and_text_without_font_are_warnings() {
    let page = run(
        &[b"BT (A) Tj /F9 10 Tf (B) Tj /F1 10 Tf (C) Tj /Nope Do ET"],
        |_, _| {},
    );
    assert_eq!(text(&page.glyphs), "C");
    assert!(
        matches!(page.warnings[0], Warning::NoFont { op_index: 1, .. }),
        "{:?}",
        page.warnings
    );
    assert!(matches!(&page.warnings[1], Warning::FontUnavailable { name, .. } if name == b"F9"));
    assert!(matches!(&page.warnings[2], Warning::MissingXObject { name, .. } if name == b"Nope"));
}

#[test]
fn not_a_page_is_an_error() {
    let (doc, _) = build(&[b""], |_, _| {});
    let catalog = doc.trailer.get(b"Root").unwrap().as_reference().unwrap();
    assert!(interpret_page(&doc, catalog, &mut Fonts::default()).is_err());
    assert!(interpret_page(&doc, (9999, 0), &mut Fonts::default()).is_err());
}

#[test]
fn ops_split_across_content_streams_are_joined() {
    let second: &[u8] = b"10 Tf 5 5 Td [(AB) -500 (C)]";
    let (doc, page_id) = build(&[b"BT /F1", second, b"TJ ET"], |_, _| {});
    let ids = doc.get_page_contents(page_id);
    let page = interpret_page(&doc, page_id, &mut Fonts::default()).unwrap();
    assert_eq!(text(&page.glyphs), "ABC");
    let a = &page.glyphs[0];
    assert_eq!(
        a.stream,
        StreamId::PageContent {
            index: 1,
            object_id: ids[1]
        }
    );
    assert_eq!(a.font_size, 10.0);
    assert_eq!(&second[a.operand_span.clone()], b"(AB)");
    assert_eq!(&second[a.op_span.clone()], b"[(AB) -500 (C)]");
    assert_at(&page.glyphs[2], 20.0, 5.0);
    assert_eq!(page.kerns[0].stream, a.stream);
}

#[test]
fn random_content_never_panics() {
    const PIECES: &[&[u8]] = &[
        b"BT ",
        b"ET ",
        b"q ",
        b"Q ",
        b"/F1 ",
        b"/F2 ",
        b"/F4 ",
        b"10 ",
        b"-3.5 ",
        b"0 ",
        b"Tf ",
        b"Td ",
        b"TD ",
        b"T* ",
        b"Tm ",
        b"cm ",
        b"Tj ",
        b"TJ ",
        b"' ",
        b"\" ",
        b"(ab) ",
        b"<00410042> ",
        b"[ ",
        b"] ",
        b"<< ",
        b">> ",
        b"/ActualText ",
        b"/MCID ",
        b"BDC ",
        b"EMC ",
        b"/Fm1 ",
        b"Do ",
        b"Tz ",
        b"Tc ",
        b"Tw ",
        b"TL ",
        b"Ts ",
        b"BI /W 1 ID x EI ",
        b"1e9 ",
        b"NaN ",
        b"cs ",
        b"sc ",
        b"scn ",
    ];
    let mut seed = 0x853c_49e6_748f_ea9bu64;
    for round in 0..400 {
        let mut content = Vec::new();
        for _ in 0..(round % 60) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            content.extend_from_slice(PIECES[(seed >> 11) as usize % PIECES.len()]);
        }
        let page = run(&[&content], |doc, resources| {
            let form = doc.add_object(Stream::new(
                dictionary! { "Subtype" => "Form", "Matrix" => vec![0.into(), 1.into(), (-1).into(), 0.into(), 5.into(), 5.into()] },
                content.clone(),
            ));
            resources.set("XObject", dictionary! { "Fm1" => form });
        });
        for g in &page.glyphs {
            assert!(g.code_span.end <= g.operand_span.len());
        }
    }
}

#[test]
fn form_nesting_stops_at_the_depth_limit() {
    let mut ids = Vec::new();
    let page = run(&[b"/X0 Do"], |doc, resources| {
        // X0 draws X1 draws … X14; each shows one glyph.
        let mut xobjects = Dictionary::new();
        for i in 0..15 {
            ids.push(doc.new_object_id());
            xobjects.set(format!("X{i}"), ids[i]);
        }
        for (i, &id) in ids.iter().enumerate() {
            let content = format!("BT /F1 10 Tf (A) Tj ET /X{} Do", i + 1);
            let form = Stream::new(dictionary! { "Subtype" => "Form" }, content.into_bytes());
            doc.objects.insert(id, Object::Stream(form));
        }
        resources.set("XObject", xobjects);
    });
    assert_eq!(page.glyphs.len(), pdf_content::interp::MAX_FORM_DEPTH);
    assert!(
        page.warnings
            .contains(&Warning::FormTooDeep { object_id: ids[12] }),
        "{:?}",
        page.warnings
    );
}
