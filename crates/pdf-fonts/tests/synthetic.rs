//! Hand-built font dictionaries: Differences, CID widths, ToUnicode and re-encoding.

use lopdf::{dictionary, Document, Object, Stream};
use pdf_fonts::{Error, Font, FontKind};

fn names(list: &[&str]) -> Vec<Object> {
    list.iter()
        .map(|n| Object::Name(n.as_bytes().to_vec()))
        .collect()
}

#[test]
fn differences_over_winansi_non_embedded() {
    let doc = Document::with_version("1.7");
    let mut diffs = vec![Object::Integer(128)];
    diffs.extend(names(&["Euro", "fi"]));
    diffs.push(Object::Integer(200));
    diffs.extend(names(&["uni0041", "a.sc", "f_f_i", "nosuchglyph"]));
    let font = dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => dictionary! { "BaseEncoding" => "WinAnsiEncoding", "Differences" => diffs },
    };
    let f = Font::load(&doc, &font).expect("loads");
    assert_eq!(f.kind(), FontKind::Type1);
    assert!(!f.is_embedded());
    assert_eq!(f.unicode(128).as_deref(), Some("€"));
    assert_eq!(f.unicode(129).as_deref(), Some("fi"));
    assert_eq!(f.unicode(200).as_deref(), Some("A"));
    assert_eq!(f.unicode(201).as_deref(), Some("a"));
    assert_eq!(f.unicode(202).as_deref(), Some("ffi"));
    assert_eq!(f.unicode(203), None);
    assert_eq!(
        f.unicode(0xE9).as_deref(),
        Some("é"),
        "base encoding shows through"
    );
    assert_eq!(f.next_code(&[0x41, 0x42]), (0x41, 1));
    if std::path::Path::new("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf")
        .exists()
    {
        assert_eq!(f.width(0x41), 667.0, "Helvetica AFM width of A");
    }
    // Non-embedded: anything the encoding expresses is fine, the lowest code wins.
    assert_eq!(f.encode("A€é").expect("encodable"), vec![0x41, 128, 0xE9]);
    match f.encode("ΩxΩ") {
        Err(Error::Missing { chars }) => assert_eq!(chars, vec!['Ω']),
        other => panic!("expected Missing, got {other:?}"),
    }
    assert!(f.has_glyph_for('é') && !f.has_glyph_for('Ω'));
}

#[test]
fn type0_identity_with_tounicode_and_w() {
    let mut doc = Document::with_version("1.7");
    let cmap = b"1 begincodespacerange <0000> <FFFF> endcodespacerange
2 beginbfchar <0003> <0020> <0024> <0041> endbfchar
1 beginbfrange <0044> <0046> <0061> endbfrange"
        .to_vec();
    let tu = doc.add_object(Stream::new(dictionary! {}, cmap));
    let cid_font = dictionary! {
        "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "ABCDEF+Calibri-Bold",
        "CIDSystemInfo" => dictionary! { "Registry" => Object::string_literal("Adobe"), "Ordering" => Object::string_literal("Identity"), "Supplement" => 0 },
        "DW" => 1000,
        "W" => vec![Object::Integer(3), Object::Array(vec![226.into()]), 68.into(), 70.into(), 500.into()],
        "FontDescriptor" => dictionary! { "Type" => "FontDescriptor", "FontName" => "ABCDEF+Calibri-Bold", "Flags" => 32, "Ascent" => 750, "Descent" => -250, "CapHeight" => 644, "ItalicAngle" => 0, "FontBBox" => vec![(-500).into(), (-300).into(), 1200.into(), 900.into()] },
    };
    let font = dictionary! {
        "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "ABCDEF+Calibri-Bold",
        "Encoding" => "Identity-H", "DescendantFonts" => vec![Object::Dictionary(cid_font)], "ToUnicode" => tu,
    };
    let f = Font::load(&doc, &font).expect("loads");
    assert_eq!(f.kind(), FontKind::CidType2);
    assert_eq!(f.next_code(&[0, 0x24, 0, 0x44]), (0x24, 2));
    assert_eq!(f.unicode(0x45).as_deref(), Some("b"));
    assert_eq!(f.width(3), 226.0);
    assert_eq!(f.width(0x45), 500.0);
    assert_eq!(f.width(0x99), 1000.0);
    assert_eq!(f.subset_tag(), Some("ABCDEF"));
    assert_eq!(f.family(), "Calibri");
    assert!(f.style().bold && !f.style().italic);
    assert_eq!(f.descriptor().bbox, [-500.0, -300.0, 1200.0, 900.0]);
    assert!(!f.is_vertical());
    // Not embedded: ToUnicode codes are enough; 2-byte codes come out big-endian.
    assert_eq!(
        f.encode("A ab").expect("encodable"),
        vec![0, 0x24, 0, 3, 0, 0x44, 0, 0x45]
    );
    assert!(matches!(f.encode("Z"), Err(Error::Missing { .. })));
}

#[test]
fn type3_widths_go_through_the_font_matrix() {
    let doc = Document::with_version("1.7");
    let mut diffs = vec![Object::Integer(65)];
    diffs.extend(names(&["A"]));
    let font = dictionary! {
        "Type" => "Font", "Subtype" => "Type3", "FontMatrix" => vec![0.01.into(), 0.into(), 0.into(), 0.01.into(), 0.into(), 0.into()],
        "FontBBox" => vec![0.into(), 0.into(), 100.into(), 100.into()], "FirstChar" => 65, "LastChar" => 65, "Widths" => vec![60.into()],
        "Encoding" => dictionary! { "Differences" => diffs }, "CharProcs" => dictionary! { "A" => Object::Null },
    };
    let f = Font::load(&doc, &font).expect("loads");
    assert!(
        (f.width(65) - 600.0).abs() < 1e-3,
        "f32 reals in the matrix"
    );
    assert!((f.font_matrix()[0] - 0.01).abs() < 1e-6);
    assert_eq!(f.encode("A").expect("glyph A has a CharProc"), vec![65]);
    assert!(f.encode("B").is_err(), "no CharProc for B");
}
