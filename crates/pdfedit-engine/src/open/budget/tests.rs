use std::io::{Read, Write};

use super::*;

/// A classic-xref PDF of objects 1..n (object 1 the catalog), each `(dict, stream)`.
fn pdf(objects: &[(String, Option<Vec<u8>>)]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, (dict, stream)) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{dict}", i + 1).as_bytes());
        if let Some(s) = stream {
            out.extend_from_slice(b"\nstream\n");
            out.extend_from_slice(s);
            out.extend_from_slice(b"\nendstream");
        }
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn stream(dict: &str, data: Vec<u8>) -> (String, Option<Vec<u8>>) {
    let d = format!("<< /Length {} {dict} >>", data.len());
    (d, Some(data))
}

fn obj(dict: &str) -> (String, Option<Vec<u8>>) {
    (dict.to_string(), None)
}

/// One page whose content is object 4, with `extra` objects from 5 on.
fn one_page(
    content: (String, Option<Vec<u8>>),
    resources: &str,
    extra: Vec<(String, Option<Vec<u8>>)>,
) -> Vec<u8> {
    let mut objects = vec![
        obj("<< /Type /Catalog /Pages 2 0 R >>"),
        obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
        obj(&format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << {resources} >> >>"
        )),
        content,
    ];
    objects.extend(extra);
    pdf(&objects)
}

fn limit_of(r: Result<Scan>) -> Option<String> {
    match r {
        Err(Error::Unsupported(m)) => m
            .strip_prefix("limit ")
            .and_then(|m| m.split(':').next())
            .map(str::to_string),
        _ => None,
    }
}

#[test]
fn an_ordinary_page_passes_and_counts_its_pages() {
    let doc = one_page(
        stream("", b"BT /F1 12 Tf 10 10 Td (Hi) Tj ET".to_vec()),
        "",
        vec![],
    );
    let scan = scan(&doc, None, &Limits::default()).unwrap();
    assert_eq!(scan.lopdf_pages, Some(1));
    assert!(check_page_count(&scan, 1).is_ok());
    assert_eq!(
        limit_of(check_page_count(&scan, 2).map(|()| scan)),
        Some("page_tree".into())
    );
}

#[test]
fn a_twice_flated_bomb_is_refused_without_inflating_it() {
    // 64 MiB of zeros, flated twice: a few hundred bytes.
    let inner = zlib(&vec![0u8; 64 << 20]);
    let outer = zlib(&inner);
    assert!(outer.len() < 4096);
    let doc = one_page(
        stream("", b"q Q".to_vec()),
        "",
        vec![stream("/Filter [/FlateDecode /FlateDecode]", outer)],
    );
    let tight = Limits {
        stream_bytes: 8 << 20,
        ..Limits::default()
    };
    assert_eq!(
        limit_of(scan(&doc, None, &tight)),
        Some("stream_bytes".into())
    );
    assert!(scan(&doc, None, &Limits::default()).is_ok());
}

#[test]
fn many_streams_under_the_stream_limit_add_up_to_the_document_limit() {
    let part = zlib(&vec![b' '; 4 << 20]);
    let extra = (0..8)
        .map(|_| stream("/Filter /FlateDecode", part.clone()))
        .collect();
    let doc = one_page(stream("", b"q Q".to_vec()), "", extra);
    let limits = Limits {
        stream_bytes: 8 << 20,
        document_bytes: 16 << 20,
        ..Limits::default()
    };
    assert_eq!(
        limit_of(scan(&doc, None, &limits)),
        Some("document_bytes".into())
    );
    let roomy = Limits {
        document_bytes: 64 << 20,
        ..limits
    };
    assert!(scan(&doc, None, &roomy).is_ok());
}

#[test]
fn a_bomb_in_the_page_content_is_refused() {
    let doc = one_page(
        stream("/Filter /FlateDecode", zlib(&vec![b' '; 32 << 20])),
        "",
        vec![],
    );
    let limits = Limits {
        stream_bytes: 16 << 20,
        ..Limits::default()
    };
    assert_eq!(
        limit_of(scan(&doc, None, &limits)),
        Some("stream_bytes".into())
    );
}

#[test]
fn operators_are_counted_per_page_through_forms() {
    // The page draws form 5 ten times; the form has 1,000 operators.
    let form_ops = "0 0 m\n".repeat(1000).into_bytes();
    let page_ops = "/X Do\n".repeat(10).into_bytes();
    let doc = one_page(
        stream("", page_ops),
        "/XObject << /X 5 0 R >>",
        vec![stream(
            "/Type /XObject /Subtype /Form /BBox [0 0 1 1]",
            form_ops,
        )],
    );
    let limits = |page_operators| Limits {
        page_operators,
        ..Limits::default()
    };
    assert!(scan(&doc, None, &limits(10_010)).is_ok());
    assert_eq!(
        limit_of(scan(&doc, None, &limits(10_009))),
        Some("page_operators".into())
    );
}

/// Forms 5.. each drawing the next `fan` times, `levels` deep.
fn nested_forms(levels: usize, fan: usize) -> Vec<u8> {
    let mut extra = Vec::new();
    for level in 0..levels {
        let id = 5 + level;
        let (res, ops) = if level + 1 < levels {
            (
                format!("/Resources << /XObject << /N {} 0 R >> >>", id + 1),
                "/N Do\n".repeat(fan),
            )
        } else {
            (String::new(), "0 0 1 1 re f\n".to_string())
        };
        extra.push(stream(
            &format!("/Type /XObject /Subtype /Form /BBox [0 0 1 1] {res}"),
            ops.into_bytes(),
        ));
    }
    one_page(
        stream("", b"/N Do".to_vec()),
        "/XObject << /N 5 0 R >>",
        extra,
    )
}

#[test]
fn form_depth_and_draws_are_limited() {
    // 20 levels drawing the next twice: 2^20 draws, costed in 20 steps.
    let doc = nested_forms(20, 2);
    let started = std::time::Instant::now();
    let r = scan(&doc, None, &Limits::default());
    assert!(started.elapsed().as_millis() < 500);
    assert!(matches!(
        limit_of(r).as_deref(),
        Some("form_depth" | "form_draws")
    ));
    let wide = Limits {
        form_depth: 64,
        ..Limits::default()
    };
    assert_eq!(limit_of(scan(&doc, None, &wide)), Some("form_draws".into()));
    // Six levels drawn once each: fine by default, too deep for a depth of 5.
    let doc = nested_forms(6, 1);
    assert!(scan(&doc, None, &Limits::default()).is_ok());
    let shallow = Limits {
        form_depth: 5,
        ..Limits::default()
    };
    assert_eq!(
        limit_of(scan(&doc, None, &shallow)),
        Some("form_depth".into())
    );
}

#[test]
fn a_form_drawing_itself_ends() {
    let doc = one_page(
        stream("", b"/X Do".to_vec()),
        "/XObject << /X 5 0 R >>",
        vec![stream(
            "/Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << /X 5 0 R >> >>",
            b"/X Do /X Do".to_vec(),
        )],
    );
    assert!(scan(&doc, None, &Limits::default()).is_ok());
}

#[test]
fn a_page_listed_twice_is_refused() {
    let doc = pdf(&[
        obj("<< /Type /Catalog /Pages 2 0 R >>"),
        obj("<< /Type /Pages /Kids [3 0 R 3 0 R] /Count 2 >>"),
        obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>"),
        stream("", b"q Q".to_vec()),
    ]);
    assert_eq!(
        limit_of(scan(&doc, None, &Limits::default())),
        Some("page_tree".into())
    );
}

#[test]
fn run_length_and_lzw_decode_as_the_spec_says() {
    // RunLength: 3 literal bytes, then 'z' repeated 100 times, then end of data.
    let rl = [2u8, b'a', b'b', b'c', 157, b'z', 128];
    let mut out = Vec::new();
    RunLengthReader::new(&rl[..]).read_to_end(&mut out).unwrap();
    assert_eq!(out.len(), 103);
    assert_eq!(&out[..4], b"abcz");
    // LZW, the example of ISO 32000-1 §7.4.4.2: 45 45 45 45 45 65 45 45 45 66.
    let lzw = [0x80u8, 0x0B, 0x60, 0x50, 0x22, 0x0C, 0x0C, 0x85, 0x01];
    let mut out = Vec::new();
    LzwReader::new(&lzw[..]).read_to_end(&mut out).unwrap();
    assert_eq!(out, [45, 45, 45, 45, 45, 65, 45, 45, 45, 66]);
}

#[test]
fn an_image_of_one_filter_is_bounded_by_its_samples() {
    let dict = b"<</BitsPerComponent 8/ColorSpace/DeviceRGB/Filter/FlateDecode/Height 9000/Length 450317/Subtype/Image/Type/XObject/Width 9000>>";
    assert_eq!(image_samples(dict), Some(9000 * 9000 * 3));
    let gray =
        b"<< /Subtype /Image /Width 10 /Height 3 /BitsPerComponent 1 /ColorSpace /DeviceGray >>";
    assert_eq!(image_samples(gray), Some(2 * 3));
    // Indirect sizes, or not an image: no bound from the samples.
    assert_eq!(
        image_samples(b"<< /Subtype /Image /Width 5 0 R /Height 3 /BitsPerComponent 8 >>"),
        None
    );
    assert_eq!(
        image_samples(b"<< /Subtype /Form /Width 5 /Height 3 /BitsPerComponent 8 >>"),
        None
    );
    // A Flate image bomb whose samples are small is not decoded; two filters are.
    let s = RawStream {
        data: 0..1_000_000,
        filters: vec![Filter::Flate],
        samples: Some(300),
    };
    assert_eq!(bound(&s), 300);
    let s = RawStream {
        filters: vec![Filter::Flate, Filter::Flate],
        ..s
    };
    assert_eq!(bound(&s), 1_000_000 * 1032 * 1032);
}

#[test]
fn a_filter_array_behind_a_reference_counts_every_layer() {
    let outer = zlib(&zlib(&vec![0u8; 64 << 20]));
    let doc = one_page(
        stream("", b"q Q".to_vec()),
        "",
        vec![
            stream("/Filter 6 0 R", outer),
            obj("[/FlateDecode /FlateDecode]"),
        ],
    );
    let tight = Limits {
        stream_bytes: 8 << 20,
        ..Limits::default()
    };
    assert_eq!(
        limit_of(scan(&doc, None, &tight)),
        Some("stream_bytes".into())
    );
}

#[test]
fn filters_are_read_from_the_dictionary_text() {
    assert_eq!(
        filters_of(b"<< /Length 5 /Filter [/FlateDecode /DCTDecode] >>"),
        vec![Filter::Flate, Filter::Image]
    );
    assert_eq!(filters_of(b"<</Filter/Fl/Length 5>>"), vec![Filter::Flate]);
    assert_eq!(filters_of(b"<< /Length 5 >>"), Vec::<Filter>::new());
    assert_eq!(filters_of(b"<< /Filter 7 0 R >>"), vec![Filter::Other]);
}

/// A page of `extra` keys (its own boxes) under a tree node of `parent` keys.
fn page_with(parent: &str, extra: &str) -> Vec<u8> {
    pdf(&[
        obj("<< /Type /Catalog /Pages 2 0 R >>"),
        obj(&format!(
            "<< /Type /Pages /Kids [3 0 R] /Count 1 {parent} >>"
        )),
        obj(&format!(
            "<< /Type /Page /Parent 2 0 R /Contents 4 0 R {extra} >>"
        )),
        stream("", b"q Q".to_vec()),
    ])
}

#[test]
fn a_page_larger_than_the_page_side_is_refused() {
    let d = Limits::default();
    let ok = |doc: Vec<u8>| scan(&doc, None, &d).is_ok();
    let refused = |doc: Vec<u8>| limit_of(scan(&doc, None, &d));
    // The corpus's largest kind of page, an A0 drawing, and a 10 m banner pass.
    assert!(ok(page_with("", "/MediaBox [0 0 2384 3370]")));
    assert!(ok(page_with("", "/MediaBox [0 0 28346 1000]")));
    // At the bound passes, past it is refused; negative corners count by their distance.
    assert!(ok(page_with("", "/MediaBox [0 0 144000 10]")));
    assert_eq!(
        refused(page_with("", "/MediaBox [0 0 1000000000 1000000000]")),
        Some("page_size".into())
    );
    assert_eq!(
        refused(page_with("", "/MediaBox [-72001 0 72000 10]")),
        Some("page_size".into())
    );
    // Inherited from the tree node, and through the CropBox.
    assert_eq!(
        refused(page_with("/MediaBox [0 0 200000 10]", "")),
        Some("page_size".into())
    );
    assert_eq!(
        refused(page_with(
            "",
            "/MediaBox [0 0 612 792] /CropBox [0 0 1e9 10]"
        )),
        None,
        "an exponent is no PDF number: the box is not four numbers, PDFium uses Letter"
    );
    assert_eq!(
        refused(page_with(
            "",
            "/MediaBox [0 0 612 792] /CropBox [0 0 900000 10]"
        )),
        Some("page_size".into())
    );
    // /UserUnit multiplies: 2,000 units of 100 are 200,000.
    assert!(ok(page_with("", "/MediaBox [0 0 2000 2000]")));
    assert_eq!(
        refused(page_with("", "/MediaBox [0 0 2000 2000] /UserUnit 100")),
        Some("page_size".into())
    );
    // Not finite: a number too long for a float.
    let huge = format!("/MediaBox [0 0 1{}.0 10]", "0".repeat(60));
    assert_eq!(refused(page_with("", &huge)), Some("page_size".into()));
    // The message names the limit.
    let doc = page_with("", "/MediaBox [0 0 1000000000 1000000000]");
    let Err(Error::Unsupported(m)) = scan(&doc, None, &d) else {
        panic!("refused");
    };
    assert!(m.contains("144000 units"), "{m}");
}

/// A page showing `shown` (a literal string) `times` times in Type 3 font /T3 (object 5)
/// whose glyph `a` (code 97) runs `glyph_ops` operators; the procedure is object 6.
fn type3_page(
    glyph_ops: usize,
    shown: &str,
    times: usize,
    proc_filter: &str,
    proc: Vec<u8>,
) -> Vec<u8> {
    let proc = if proc.is_empty() {
        format!("0 0 d0\n{}", "0 0 m\n".repeat(glyph_ops)).into_bytes()
    } else {
        proc
    };
    one_page(
        stream("", format!("BT /T3 1 Tf {}ET", format!("({shown}) Tj\n").repeat(times)).into_bytes()),
        "/Font << /T3 5 0 R >>",
        vec![
            obj("<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1 1] /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << /a 6 0 R >> /Encoding << /Type /Encoding /Differences [97 /a] >> /FirstChar 97 /LastChar 97 /Widths [1000] >>"),
            stream(proc_filter, proc),
        ],
    )
}

#[test]
fn type3_glyph_procedures_are_counted_per_draw() {
    let limits = |page_operators| Limits {
        page_operators,
        ..Limits::default()
    };
    // 1,001 operators a glyph, "aab" shown 10 times: 20 glyphs of `a` drawn (b has no
    // procedure), 20,020 operators, plus 13 of the page (BT, Tf, ten Tj, ET).
    let doc = type3_page(1000, "aab", 10, "", Vec::new());
    let s = scan(&doc, None, &limits(30_000)).unwrap();
    assert_eq!(s.page_operators, 20 * 1001 + 13);
    assert_eq!(
        limit_of(scan(&doc, None, &limits(20 * 1001 + 12))),
        Some("page_operators".into())
    );
    // A font never selected costs nothing: the same page with /T3 selected as another name.
    let unselected = type3_page(1000, "aab", 10, "", Vec::new());
    let unselected = String::from_utf8_lossy(&unselected).replace("/T3 1 Tf", "/T9 1 Tf");
    let s = scan(unselected.as_bytes(), None, &limits(30_000)).unwrap();
    assert_eq!(s.page_operators, 13);
}

#[test]
fn a_type3_glyph_procedure_bomb_is_refused() {
    // The glyph procedure inflates to 32 MiB of spaces. The structure pass decodes it as
    // the glyph's content: its real size is counted (the bytes pass alone would count the
    // bound of its filter, 1032 times its length), and past the stream limit it is refused.
    let doc = type3_page(
        0,
        "a",
        1,
        "/Filter /FlateDecode",
        zlib(&vec![b' '; 32 << 20]),
    );
    let s = scan(&doc, None, &Limits::default()).unwrap();
    let content = "BT /T3 1 Tf (a) Tj\nET".len() as u64;
    assert_eq!(s.decoded_bytes, (32 << 20) + content);
    let tight = Limits {
        stream_bytes: 16 << 20,
        ..Limits::default()
    };
    let r = scan(&doc, None, &tight);
    let Err(Error::Unsupported(m)) = &r else {
        panic!("refused: {r:?}");
    };
    assert!(m.starts_with("limit stream_bytes:"), "{m}");
}

/// `plain` encrypted with RC4 128 bits (V2, R3), an empty user password.
fn encrypted(plain: &[u8]) -> Vec<u8> {
    use lopdf::encryption::{EncryptionState, EncryptionVersion, Permissions};
    let mut doc = Document::load_mem(plain).unwrap();
    let id = lopdf::Object::String(
        b"0123456789abcdef".to_vec(),
        lopdf::StringFormat::Hexadecimal,
    );
    doc.trailer
        .set("ID", lopdf::Object::Array(vec![id.clone(), id]));
    let state = EncryptionState::try_from(EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password: "",
        key_length: 128,
        permissions: Permissions::all(),
    })
    .unwrap();
    doc.encrypt(&state).unwrap();
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

#[test]
fn an_encrypted_files_streams_are_counted_decrypted() {
    // A twice-Flated 64 MiB image drawn by the page, then the whole file encrypted: its
    // ciphertext inflates to nothing, its plaintext to 64 MiB.
    let bomb = zlib(&zlib(&vec![0u8; 64 << 20]));
    let plain = one_page(
        stream("", b"q 10 0 0 10 0 0 cm /Im Do Q".to_vec()),
        "/XObject << /Im 5 0 R >>",
        vec![stream(
            "/Type /XObject /Subtype /Image /Width 8192 /Height 8192 /BitsPerComponent 8 /ColorSpace /DeviceGray /Filter [/FlateDecode /FlateDecode]",
            bomb,
        )],
    );
    let tight = Limits {
        stream_bytes: 8 << 20,
        ..Limits::default()
    };
    assert_eq!(
        limit_of(scan(&plain, None, &tight)),
        Some("stream_bytes".into())
    );
    let doc = encrypted(&plain);
    assert!(find(&doc, b"/Encrypt").is_some());
    let s = scan(&doc, None, &Limits::default()).unwrap();
    assert_eq!(s.lopdf_pages, Some(1));
    assert!(s.decoded_bytes >= 64 << 20, "counted {}", s.decoded_bytes);
    assert_eq!(
        limit_of(scan(&doc, None, &tight)),
        Some("stream_bytes".into())
    );
    // Many streams under the stream limit add up past the document limit, decrypted too.
    let part = zlib(&vec![b' '; 4 << 20]);
    let extra = (0..8)
        .map(|_| stream("/Filter /FlateDecode", part.clone()))
        .collect();
    let doc = encrypted(&one_page(stream("", b"q Q".to_vec()), "", extra));
    let limits = Limits {
        stream_bytes: 8 << 20,
        document_bytes: 16 << 20,
        ..Limits::default()
    };
    assert_eq!(
        limit_of(scan(&doc, None, &limits)),
        Some("document_bytes".into())
    );
}

/// Objects 5.. of a page using Type 3 font /T3 (5, glyph `a` = 6 running 1,001 operators),
/// Helvetica /F1 (7) and form /X (8) whose content is `form`.
fn type3_objects(form: &str) -> Vec<(String, Option<Vec<u8>>)> {
    vec![
        obj("<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1 1] /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << /a 6 0 R >> /Encoding << /Type /Encoding /Differences [97 /a] >> /FirstChar 97 /LastChar 97 /Widths [1000] >>"),
        stream("", format!("0 0 d0\n{}", "0 0 m\n".repeat(1000)).into_bytes()),
        obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"),
        stream("/Type /XObject /Subtype /Form /BBox [0 0 1 1]", form.as_bytes().to_vec()),
    ]
}

const TYPE3_RESOURCES: &str = "/Font << /T3 5 0 R /F1 7 0 R >> /XObject << /X 8 0 R >>";

#[test]
fn type3_glyphs_follow_the_font_through_q_forms_and_content_streams() {
    let ops = |doc: &[u8]| scan(doc, None, &Limits::default()).unwrap().page_operators;
    // The font restored by Q is the Type 3 one: 3 glyphs of 1,001.
    let doc = one_page(
        stream("", b"BT /T3 1 Tf q /F1 1 Tf Q (aaa) Tj ET".to_vec()),
        TYPE3_RESOURCES,
        type3_objects("q Q"),
    );
    assert_eq!(ops(&doc), 3 * 1001 + 7);
    // Helvetica selected inside q and shown there: nothing from the Type 3 glyphs.
    let doc = one_page(
        stream("", b"BT /T3 1 Tf q /F1 1 Tf (aaa) Tj Q ET".to_vec()),
        TYPE3_RESOURCES,
        type3_objects("q Q"),
    );
    assert_eq!(ops(&doc), 7);
    // A form drawn ten times shows "aa" in the font it inherits: 20 glyphs.
    let doc = one_page(
        stream(
            "",
            format!("BT /T3 1 Tf {}ET", "/X Do ".repeat(10)).into_bytes(),
        ),
        TYPE3_RESOURCES,
        type3_objects("(aa) Tj"),
    );
    assert_eq!(ops(&doc), 20 * 1001 + 10 + 13);
    // The same form drawn with Helvetica: its glyphs run nothing.
    let doc = one_page(
        stream(
            "",
            format!("BT /F1 1 Tf {}ET", "/X Do ".repeat(10)).into_bytes(),
        ),
        TYPE3_RESOURCES,
        type3_objects("(aa) Tj"),
    );
    assert_eq!(ops(&doc), 10 + 13);
    // A font selected in one content stream of a page shows in the next.
    let mut objects = vec![
        obj("<< /Type /Catalog /Pages 2 0 R >>"),
        obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
        obj(&format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents [4 0 R 9 0 R] /Resources << {TYPE3_RESOURCES} >> >>"
        )),
        stream("", b"BT /T3 1 Tf".to_vec()),
    ];
    objects.extend(type3_objects("q Q"));
    objects.push(stream("", b"(aaaa) Tj ET".to_vec()));
    assert_eq!(ops(&pdf(&objects)), 4 * 1001 + 4);
}

#[test]
fn a_passed_scan_is_kept_for_the_same_bytes_password_and_limits_only() {
    // Content no other test uses: the kept scans are shared by the whole process.
    let doc = one_page(
        stream("", b"BT /F1 12 Tf 10 10 Td (kept scans) Tj ET".to_vec()),
        "",
        vec![],
    );
    let d = Limits::default();
    let (first, was_kept) = kept::scan_or_kept(&doc, None, &d).unwrap();
    assert!(!was_kept);
    assert_eq!(first.lopdf_pages, Some(1));
    let (again, was_kept) = kept::scan_or_kept(&doc, None, &d).unwrap();
    assert!(was_kept);
    assert_eq!(again, first);
    // Other limits, a password, or one byte more: scanned again.
    let tighter = Limits {
        page_operators: 1_000,
        ..d
    };
    assert!(!kept::scan_or_kept(&doc, None, &tighter).unwrap().1);
    assert!(!kept::scan_or_kept(&doc, Some("pw"), &d).unwrap().1);
    let mut longer = doc.clone();
    longer.push(b'\n');
    assert!(!kept::scan_or_kept(&longer, None, &d).unwrap().1);
}

#[test]
fn a_refused_scan_is_not_kept() {
    let doc = one_page(
        stream("", b"BT (refused, not kept) Tj ET q Q q Q q Q".to_vec()),
        "",
        vec![],
    );
    let tight = Limits {
        page_operators: 3,
        ..Limits::default()
    };
    for _ in 0..2 {
        assert_eq!(
            limit_of(kept::scan_or_kept(&doc, None, &tight).map(|(s, _)| s)),
            Some("page_operators".into())
        );
    }
    // Under limits it fits, it passes and is kept from then on.
    let d = Limits::default();
    assert!(!kept::scan_or_kept(&doc, None, &d).unwrap().1);
    assert!(kept::scan_or_kept(&doc, None, &d).unwrap().1);
}
