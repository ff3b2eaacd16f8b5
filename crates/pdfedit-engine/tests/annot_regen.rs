//! Replace and delete in FreeText annotations that have no appearance stream: /Contents
//! is updated and a new appearance is drawn from /DA (font, size, colour), /Q, /C and the
//! border, wrapped in the box; verified by rendering (new ink only inside the /Rect) and
//! read back through the engine's own text extraction (which reads what PDFium draws of
//! the annotations: nothing for a FreeText without an appearance, which PDFium does not
//! generate).

mod common;

use lopdf::{dictionary, Dictionary, Document, Object, Stream};
use pdf_render::raster::rasterize_page;
use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, EditResult, Fit, Occurrence, Scope};

/// The annotation's /Rect, page user space (the page is 612 x 792).
const RECT: [f64; 4] = [100.0, 480.0, 300.0, 560.0];

/// The FreeText's text: an explicit line break, and a first paragraph longer than the box
/// is wide at 12 pt, so it wraps.
const TEXT: &str = "Please review the attached figures before the meeting\rsecond line here";

struct Fixture {
    /// /DA of the annotation.
    da: &'static str,
    /// Whether the AcroForm /DR holds /Helv (else the /DA font is in no resources).
    dr: bool,
    /// /Q.
    quadding: i64,
}

const BLUE_HELV: Fixture = Fixture {
    da: "/Helv 12 Tf 0 0 1 rg",
    dr: false,
    quadding: 0,
};

/// One page with "Hello page content." in its content and a FreeText annotation without
/// /AP (yellow /C fill, 1 pt border), /Contents [`TEXT`].
fn build(f: &Fixture) -> Vec<u8> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let helv = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let page_content = b"BT /F1 12 Tf 72 700 Td (Hello page content.) Tj ET\n".to_vec();
    let contents = doc.add_object(Stream::new(dictionary! {}, page_content));
    let rect: Vec<Object> = RECT.iter().map(|v| Object::Real(*v as f32)).collect();
    let page_id = doc.new_object_id();
    let annot = doc.add_object(dictionary! {
        "Type" => "Annot", "Subtype" => "FreeText", "Rect" => rect,
        "Contents" => Object::string_literal(TEXT),
        "DA" => Object::string_literal(f.da),
        "Q" => f.quadding,
        "C" => vec![Object::Real(1.0), Object::Real(1.0), Object::Real(0.8)],
        "BS" => dictionary! { "W" => 1 },
        "P" => page_id,
        "F" => 4,
    });
    doc.objects.insert(
        page_id,
        Object::Dictionary(dictionary! {
            "Type" => "Page", "Parent" => pages_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => helv } },
            "Contents" => contents,
            "Annots" => vec![annot.into()],
        }),
    );
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
        }),
    );
    let mut catalog = dictionary! { "Type" => "Catalog", "Pages" => pages_id };
    if f.dr {
        catalog.set(
            "AcroForm",
            dictionary! {
                "Fields" => Vec::<Object>::new(),
                "DR" => dictionary! { "Font" => dictionary! { "Helv" => helv } },
            },
        );
    }
    let catalog = doc.add_object(catalog);
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save");
    out
}

fn request(op: EditOp, find: &str, replace: &str) -> EditRequest {
    EditRequest {
        edits: vec![Edit {
            index: 0,
            op,
            find: find.into(),
            replace: replace.into(),
            scope: Scope {
                occurrence: Some(Occurrence::First),
                ..Scope::default()
            },
            fit: Fit::Auto,
            ..Edit::default()
        }],
        ..EditRequest::default()
    }
}

fn annot_dict(pdf: &[u8]) -> (Document, Dictionary) {
    let doc = Document::load_mem(pdf).expect("load");
    let page = doc.get_pages()[&1];
    let annots = doc
        .get_dictionary(page)
        .unwrap()
        .get(b"Annots")
        .unwrap()
        .clone();
    let first = doc.dereference(&annots).unwrap().1.as_array().unwrap()[0]
        .as_reference()
        .unwrap();
    let d = doc.get_dictionary(first).unwrap().clone();
    (doc, d)
}

fn contents(pdf: &[u8]) -> String {
    let (_, d) = annot_dict(pdf);
    match d.get(b"Contents").unwrap() {
        Object::String(s, _) => String::from_utf8_lossy(s).into_owned(),
        o => panic!("{o:?}"),
    }
}

/// The decoded normal appearance stream of the first annotation.
fn appearance(pdf: &[u8]) -> Option<String> {
    let (doc, d) = annot_dict(pdf);
    let ap = doc.dereference(d.get(b"AP").ok()?).ok()?.1.as_dict().ok()?;
    let n = ap.get(b"N").ok()?.as_reference().ok()?;
    let s = doc.get_object(n).ok()?.as_stream().ok()?;
    Some(String::from_utf8_lossy(&s.decompressed_content().unwrap_or(s.content.clone())).into())
}

fn done(r: &EditResult) -> bool {
    r.failed.is_empty() && r.unmatched.is_empty() && r.changes.len() == 1
}

/// Checks shared by every kept edit: verified, boxed at the rect, nothing outside the
/// rect changed in the render, the page's own text untouched, qpdf happy; returns the
/// annotation text the engine reads back.
fn check_kept(pdf: &[u8], r: &EditResult) -> String {
    assert!(done(r), "{:?} {:?} {:?}", r.failed, r.unmatched, r.changes);
    let c = &r.changes[0];
    assert!(c.verified);
    assert_eq!(c.collateral_pixels, 0);
    assert_eq!((c.page, &r.pages_touched), (1, &vec![1]));
    let want = [RECT[0], 792.0 - RECT[3], RECT[2], 792.0 - RECT[1]];
    for (a, b) in c.bbox.iter().zip(want) {
        assert!((a - b).abs() < 0.01, "{:?}", c.bbox);
    }
    assert!(common::qpdf_ok(&r.pdf));
    let before = rasterize_page(pdf, None, 0, 2.0).expect("render");
    let after = rasterize_page(&r.pdf, None, 0, 2.0).expect("render");
    let (inside, outside) = common::ink_moved(&before, &after, RECT, 792.0);
    assert!(
        inside > 200,
        "the new appearance draws inside the rect: {inside}"
    );
    assert_eq!(outside, 0, "nothing changes outside the rect");
    let (annot, layer) = common::engine_text(&r.pdf);
    assert_eq!(layer, "Hello page content.");
    annot
}

/// PDFium draws a FreeText without an appearance (it generates one when rendering: the
/// /C fill, the border, the text on one line, the line break dropped); the engine's text
/// reading has it generate that appearance before flattening, so reading returns what is
/// drawn, and the edit finds the same words.
#[test]
fn pdfium_draws_freetext_without_appearance_and_reading_returns_it() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build(&BLUE_HELV);
    let (annot, layer) = common::engine_text(&pdf);
    assert!(
        annot.starts_with("Please review the attached figures before the meeting"),
        "{annot}"
    );
    assert!(annot.ends_with("second line here"), "{annot}");
    assert_eq!(layer, "Hello page content.");
    let img = rasterize_page(&pdf, None, 0, 2.0).expect("render");
    let blank = rasterize_page(&build_blank(), None, 0, 2.0).expect("render");
    let (inside, outside) = common::ink_moved(&img, &blank, RECT, 792.0);
    assert!(inside > 1000, "{inside}");
    assert_eq!(outside, 0);
    // The line break PDFium's appearance drops still separates the words in reading, as it
    // does in the edit's own appearance; every word read is found by the edit.
    assert!(!annot.contains("meetingsecond"), "{annot}");
    let words: Vec<&str> = annot.split_whitespace().collect();
    assert!(
        words.contains(&"meeting") && words.contains(&"second"),
        "{annot}"
    );
    for word in words {
        let r = edit(&pdf, &request(EditOp::Delete, word, "")).expect("edit");
        assert!(done(&r), "{word}: {:?} {:?}", r.failed, r.unmatched);
    }
}

/// The fixture's page without the annotation.
fn build_blank() -> Vec<u8> {
    let pdf = build(&BLUE_HELV);
    let mut doc = Document::load_mem(&pdf).unwrap();
    let page = doc.get_pages()[&1];
    doc.get_dictionary_mut(page).unwrap().remove(b"Annots");
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

#[test]
fn replace_regenerates_the_appearance_from_da() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build(&BLUE_HELV);
    assert_eq!(appearance(&pdf), None);
    let r = edit(&pdf, &request(EditOp::Replace, "second line", "final row")).expect("edit");
    let annot = check_kept(&pdf, &r);
    let c = &r.changes[0];
    assert_eq!(
        (c.find.as_str(), c.replace.as_str()),
        ("second line", "final row")
    );
    // No /DR: /Helv names Helvetica, whose metric twin is embedded.
    assert_eq!(c.font_source, "metric-twin", "{}", c.font_used);
    assert_eq!(
        contents(&r.pdf),
        "Please review the attached figures before the meeting\rfinal row here"
    );
    assert_eq!(
        annot,
        "Please review the attached figures before the meeting final row here"
    );
    let ap = appearance(&r.pdf).expect("a normal appearance");
    // The /DA colour and size, the /C fill, the 1 pt border.
    assert!(ap.contains("0 0 1 rg"), "{ap}");
    assert!(ap.contains("/PEF0 12 Tf"), "{ap}");
    assert!(ap.contains("1 1 0.8 rg"), "{ap}");
    assert!(ap.contains("0 0 1 RG\n1 w"), "{ap}");
    // The first paragraph is wider than the box at 12 pt: it wraps, 3 lines in all.
    assert_eq!(ap.matches(" Tm\n").count(), 3, "{ap}");
}

#[test]
fn delete_regenerates_the_appearance() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build(&BLUE_HELV);
    let r = edit(&pdf, &request(EditOp::Delete, "attached ", "")).expect("edit");
    let annot = check_kept(&pdf, &r);
    assert_eq!(
        contents(&r.pdf),
        "Please review the figures before the meeting\rsecond line here"
    );
    assert_eq!(
        annot,
        "Please review the figures before the meeting second line here"
    );
}

#[test]
fn dr_font_centred_and_auto_size() {
    if !common::init_pdfium() {
        return;
    }
    let f = Fixture {
        da: "/Helv 0 Tf 1 0 0 rg",
        dr: true,
        quadding: 1,
    };
    let pdf = build(&f);
    let long = "a much longer closing text that needs a smaller size to fit in the box, \
                as it wraps to more lines than twelve points leave room for";
    let r = edit(&pdf, &request(EditOp::Replace, "second line here", long)).expect("edit");
    let annot = check_kept(&pdf, &r);
    // The /DR font has every glyph: drawn in it.
    assert_eq!(r.changes[0].font_source, "exact-declared");
    assert_eq!(r.changes[0].font_used, "Helvetica");
    assert!(annot.ends_with(long), "{annot}");
    let ap = appearance(&r.pdf).unwrap();
    assert!(ap.contains("1 0 0 rg"), "{ap}");
    // Size 0: the largest size at most 12 pt at which the wrapped text fits.
    let size: f64 = ap
        .split("/PEF0 ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .expect("a Tf");
    assert!((4.0..12.0).contains(&size), "{size}");
}

#[test]
fn text_that_cannot_fit_a_fixed_size_overflows() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build(&BLUE_HELV);
    let long = "lorem ipsum dolor sit amet ".repeat(8);
    let r = edit(&pdf, &request(EditOp::Replace, "second line", long.trim())).expect("edit");
    assert!(r.changes.is_empty(), "{:?}", r.changes);
    assert_eq!(r.failed.len(), 1);
    assert_eq!(r.failed[0].reason, "overflow", "{}", r.failed[0].message);
    assert_eq!(r.pdf, pdf, "a failed edit leaves the document as it was");
}

#[test]
fn unmatched_text_leaves_the_annotation_alone() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build(&BLUE_HELV);
    // The page content holds it: the annotation keeps no appearance.
    let r = edit(&pdf, &request(EditOp::Replace, "Hello", "Howdy")).expect("edit");
    assert!(done(&r), "{:?}", r.failed);
    assert_eq!(appearance(&r.pdf), None);
    // Nothing holds it: the appearance generated to search the annotation is not kept,
    // nor anything it embedded.
    let r = edit(&pdf, &request(EditOp::Replace, "nowhere", "x")).expect("edit");
    assert_eq!(r.unmatched.len(), 1);
    assert_eq!(appearance(&r.pdf), None);
    let before = Document::load_mem(&pdf).unwrap().objects.len();
    let after = Document::load_mem(&r.pdf).unwrap().objects.len();
    assert_eq!(before, after);
}

/// A FreeText whose stored appearance draws "abc def" in a Type 3 font that has only those
/// letters, with /DA naming /Helv in the form's /DR.
fn build_type3() -> Vec<u8> {
    let pdf = build(&Fixture {
        da: "/Helv 12 Tf 0 g",
        dr: true,
        quadding: 0,
    });
    let mut doc = Document::load_mem(&pdf).unwrap();
    let mut procs = Dictionary::new();
    let mut widths = Vec::new();
    // Bars of different heights, so that each letter draws differently.
    for (i, name) in ["a", "b", "c", "d", "e", "f", "space"].iter().enumerate() {
        let ink = if *name == "space" {
            "500 0 d0\n".to_string()
        } else {
            format!("500 0 0 0 450 700 d1\n50 0 400 {} re f\n", 200 + 100 * i)
        };
        let id = doc.add_object(Stream::new(dictionary! {}, ink.into_bytes()));
        procs.set(*name, id);
    }
    for _ in 97..=102 {
        widths.push(Object::Integer(500));
    }
    let mut diffs: Vec<Object> = vec![32.into(), Object::Name(b"space".to_vec()), 97.into()];
    for n in ["a", "b", "c", "d", "e", "f"] {
        diffs.push(Object::Name(n.as_bytes().to_vec()));
    }
    let mut all_widths = vec![Object::Integer(500)];
    all_widths.extend(std::iter::repeat_n(Object::Integer(0), 64));
    all_widths.extend(widths);
    let t3 = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type3",
        "FontBBox" => vec![0.into(), 0.into(), 500.into(), 700.into()],
        "FontMatrix" => vec![Object::Real(0.001), 0.into(), 0.into(), Object::Real(0.001), 0.into(), 0.into()],
        "CharProcs" => procs,
        "Encoding" => dictionary! { "Type" => "Encoding", "Differences" => diffs },
        "FirstChar" => 32, "LastChar" => 102, "Widths" => all_widths,
        "Resources" => dictionary! {},
    });
    let ap = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), 200.into(), 80.into()],
            "Resources" => dictionary! { "Font" => dictionary! { "T3" => t3 } },
        },
        b"BT 0 g /T3 12 Tf 4 60 Td (abc def) Tj ET\n".to_vec(),
    ));
    let page = doc.get_pages()[&1];
    let annot = doc
        .get_dictionary(page)
        .unwrap()
        .get(b"Annots")
        .unwrap()
        .as_array()
        .unwrap()[0]
        .as_reference()
        .unwrap();
    let d = doc.get_dictionary_mut(annot).unwrap();
    d.set("Contents", Object::string_literal("abc def"));
    d.set("AP", dictionary! { "N" => ap });
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

#[test]
fn appearance_whose_font_cannot_draw_the_text_is_drawn_anew_in_the_da_font() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build_type3();
    let (before, _) = common::engine_text(&pdf);
    assert_eq!(before, "abc def");
    // The Type 3 font has these letters: edited in place.
    let r = edit(&pdf, &request(EditOp::Replace, "abc", "fed")).expect("edit");
    check_kept(&pdf, &r);
    assert!(appearance(&r.pdf).unwrap().contains("/T3"));
    // It has no x, y, z: the appearance is drawn anew in the /DA font, /Helv from /DR.
    let r = edit(&pdf, &request(EditOp::Replace, "abc", "xyz")).expect("edit");
    let annot = check_kept(&pdf, &r);
    assert_eq!(annot, "xyz def");
    assert_eq!(contents(&r.pdf), "xyz def");
    assert_eq!(r.changes[0].font_source, "exact-declared");
    assert_eq!(r.changes[0].font_used, "Helvetica");
    let ap = appearance(&r.pdf).unwrap();
    assert!(ap.contains("/PEF0 12 Tf"), "{ap}");
}

/// Keys whose value is null are absent (PDF 32000 7.3.7): a FreeText whose /AP and /CL are
/// null (as PyMuPDF writes them when told to drop them) is drawn anew like one without.
#[test]
fn null_keys_are_absent() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build(&BLUE_HELV);
    let mut doc = Document::load_mem(&pdf).unwrap();
    let page = doc.get_pages()[&1];
    let annot = doc
        .get_dictionary(page)
        .unwrap()
        .get(b"Annots")
        .unwrap()
        .as_array()
        .unwrap()[0]
        .as_reference()
        .unwrap();
    let d = doc.get_dictionary_mut(annot).unwrap();
    d.set("AP", Object::Null);
    d.set("CL", Object::Null);
    let mut nulls = Vec::new();
    doc.save_to(&mut nulls).unwrap();
    let r = edit(
        &nulls,
        &request(EditOp::Replace, "second line", "final row"),
    )
    .expect("edit");
    check_kept(&nulls, &r);
    assert_eq!(
        contents(&r.pdf),
        "Please review the attached figures before the meeting\rfinal row here"
    );
}

/// A phrase that the box wraps from one line to the next is replaced like one on a line:
/// every pair of neighbouring words of the first paragraph (one pair crosses the wrap).
#[test]
fn a_phrase_wrapped_in_the_box_is_replaced() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build(&BLUE_HELV);
    let first = TEXT.split('\r').next().unwrap();
    let words: Vec<&str> = first.split(' ').collect();
    for pair in words.windows(2) {
        let find = pair.join(" ");
        let new = format!("{} {}", pair[1], pair[0]);
        let r = edit(&pdf, &request(EditOp::Replace, &find, &new)).expect("edit");
        assert!(
            r.failed.is_empty() && r.unmatched.is_empty(),
            "{find}: {:?} {:?}",
            r.failed,
            r.unmatched
        );
        assert!(r.changes.iter().all(|c| c.verified), "{find}");
        assert_eq!(contents(&r.pdf), TEXT.replacen(&find, &new, 1), "{find}");
    }
}

/// `scope.span_ids` targets a span of a FreeText without appearance: the span reading
/// returns for its second line is edited, and only there.
#[test]
fn a_span_of_a_freetext_without_appearance_is_targeted_by_its_id() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build(&BLUE_HELV);
    let r = pdfedit_engine::read_text(&pdf, None, None, true, false).expect("read_text");
    let span = r
        .pages
        .iter()
        .flat_map(|p| p.spans.iter())
        .find(|s| s.source == "annotation" && s.text.contains("second"))
        .expect("an annotation span with the second line");
    let mut req = request(EditOp::Replace, "second", "final");
    req.edits[0].scope = Scope {
        span_ids: Some(vec![span.span_id.clone()]),
        ..Scope::default()
    };
    let out = edit(&pdf, &req).expect("edit");
    assert!(done(&out), "{:?} {:?}", out.failed, out.unmatched);
    assert_eq!(
        contents(&out.pdf),
        "Please review the attached figures before the meeting\rfinal line here"
    );
    // A span id that is not this annotation's: nothing changes, and the edit is unmatched
    // (it was refused with annotation_text, as if the annotation could not be edited).
    req.edits[0].scope.span_ids = Some(vec!["p1-0000000000000000".into()]);
    let out = edit(&pdf, &req).expect("edit");
    assert!(out.changes.is_empty(), "{:?}", out.changes);
    assert_eq!(out.pdf, pdf);
    assert!(out.failed.is_empty(), "{:?}", out.failed);
    assert_eq!(out.unmatched.len(), 1);
}
