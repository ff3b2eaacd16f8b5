//! Checkboxes and radio buttons whose widgets have no "on" appearance state (no /AP, or an
//! /AP with only /Off) get one drawn, so the value renders checked without and with
//! flattening, and radio groups without states take their /Opt export values.

mod common;

use lopdf::{dictionary, Document, Object, ObjectId, Stream};
use pdf_render::raster::{rasterize_page, Raster, VERIFY_PX_PER_PT};
use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, EditResult, FieldInput, FormSpec};
use pdfedit_engine::FieldValue;

fn widget(
    doc: &mut Document,
    page: ObjectId,
    rect: [i64; 4],
    extra: lopdf::Dictionary,
) -> ObjectId {
    let mut d = dictionary! {
        "Type" => "Annot",
        "Subtype" => "Widget",
        "Rect" => rect.iter().map(|&v| Object::Integer(v)).collect::<Vec<_>>(),
        "F" => 4,
        "P" => page,
        "MK" => dictionary! { "BC" => vec![Object::Integer(0)] },
    };
    d.extend(&extra);
    doc.add_object(d)
}

/// One page with: `agree` (checkbox, no /AP), `cross` (checkbox styled `8`, an /AP with only
/// /Off), `size` (radio group with /Opt [S M L], no /AP) and `color` (radio group, no /Opt,
/// no /AP).
fn build() -> Vec<u8> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let page_id = doc.new_object_id();
    let content = doc.add_object(Stream::new(
        dictionary! {},
        b"0 0 1 rg 72 740 20 20 re f".to_vec(),
    ));
    let agree = widget(
        &mut doc,
        page_id,
        [100, 600, 118, 618],
        dictionary! {"FT" => "Btn", "T" => Object::string_literal("agree"), "DA" => Object::string_literal("/ZaDb 0 Tf 0 g")},
    );
    let off = doc.add_object(Stream::new(
        dictionary! {"Type" => "XObject", "Subtype" => "Form", "BBox" => vec![0.into(), 0.into(), 18.into(), 18.into()]},
        b"0 G 1 w 0.5 0.5 17 17 re S".to_vec(),
    ));
    let cross = widget(
        &mut doc,
        page_id,
        [140, 600, 158, 618],
        dictionary! {
            "FT" => "Btn", "T" => Object::string_literal("cross"),
            "DA" => Object::string_literal("/ZaDb 0 Tf 1 0 0 rg"),
            "MK" => dictionary! { "CA" => Object::string_literal("8") },
            "AP" => dictionary! { "N" => dictionary! { "Off" => off } },
            "AS" => "Off",
        },
    );
    let size_id = doc.new_object_id();
    let size_kids: Vec<Object> = (0..3)
        .map(|i| {
            let x = 100 + 40 * i;
            widget(
                &mut doc,
                page_id,
                [x, 500, x + 16, 516],
                dictionary! {"Parent" => size_id},
            )
            .into()
        })
        .collect();
    doc.objects.insert(
        size_id,
        dictionary! {
            "FT" => "Btn", "Ff" => 49152, "T" => Object::string_literal("size"),
            "Opt" => vec![Object::string_literal("S"), Object::string_literal("M"), Object::string_literal("L")],
            "Kids" => size_kids.clone(),
        }
        .into(),
    );
    let color_id = doc.new_object_id();
    let color_kids: Vec<Object> = (0..2)
        .map(|i| {
            let x = 100 + 40 * i;
            widget(
                &mut doc,
                page_id,
                [x, 400, x + 16, 416],
                dictionary! {"Parent" => color_id},
            )
            .into()
        })
        .collect();
    doc.objects.insert(
        color_id,
        dictionary! {
            "FT" => "Btn", "Ff" => 49152, "T" => Object::string_literal("color"),
            "Kids" => color_kids.clone(),
        }
        .into(),
    );
    let mut annots = vec![agree.into(), cross.into()];
    annots.extend(size_kids);
    annots.extend(color_kids);
    doc.objects.insert(
        page_id,
        dictionary! {
            "Type" => "Page", "Parent" => pages_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Contents" => content, "Annots" => annots,
        }
        .into(),
    );
    doc.objects.insert(
        pages_id,
        dictionary! {"Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1}.into(),
    );
    let af = doc.add_object(dictionary! {
        "Fields" => vec![agree.into(), cross.into(), size_id.into(), color_id.into()],
        "DA" => Object::string_literal("/Helv 0 Tf 0 g"),
    });
    let catalog =
        doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id, "AcroForm" => af});
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save");
    out
}

fn fill(pdf: &[u8], fields: &[(&str, FieldInput)], flatten: bool) -> EditResult {
    let request = EditRequest {
        edits: vec![Edit {
            op: EditOp::Form,
            form: Some(FormSpec {
                fields: fields
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.clone()))
                    .collect(),
                flatten,
            }),
            ..Edit::default()
        }],
        ..EditRequest::default()
    };
    edit(pdf, &request).expect("form edit runs")
}

/// Dark pixels (any channel below 160) inside `bbox` (top-left points), and pixels that
/// differ from `other` there.
fn ink(r: &Raster, other: &Raster, bbox: [f64; 4]) -> (usize, usize) {
    let [x0, y0, x1, y1] = pdf_render::diff::pixel_boxes(r, &[bbox], 0)[0];
    let stride = r.width as usize * 3;
    let (mut dark, mut changed) = (0, 0);
    for y in y0..y1 {
        for x in x0..x1 {
            let i = y * stride + x * 3;
            let (p, q) = (&r.pixels[i..i + 3], &other.pixels[i..i + 3]);
            dark += usize::from(p.iter().any(|&c| c < 160));
            changed += usize::from(p.iter().zip(q).any(|(a, b)| a.abs_diff(*b) > 48));
        }
    }
    (dark, changed)
}

/// Top-left box of a widget rect on the 792 pt page.
fn top_left(rect: [f64; 4]) -> [f64; 4] {
    [rect[0], 792.0 - rect[3], rect[2], 792.0 - rect[1]]
}

#[test]
fn buttons_without_an_on_state_render_checked_and_flatten() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build();
    let before = pdfedit_engine::read_text(&pdf, None, None, false, true).expect("fields");
    assert_eq!(before.fields.len(), 4, "{:?}", before.fields);
    let values = [
        ("agree", FieldInput::Bool(true)),
        ("cross", FieldInput::Bool(true)),
        ("size", FieldInput::Text("M".into())),
        ("color", FieldInput::Text("1".into())),
    ];
    let r = fill(&pdf, &values, false);
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert_eq!(r.changes.len(), 4);
    let after = pdfedit_engine::read_text(&r.pdf, None, None, false, true).expect("fields");
    let value = |name: &str| {
        after
            .fields
            .iter()
            .find(|f| f.name == name)
            .map(|f| (f.value.clone(), f.options.clone()))
    };
    assert_eq!(value("agree").map(|v| v.0), Some(FieldValue::Bool(true)));
    assert_eq!(value("cross").map(|v| v.0), Some(FieldValue::Bool(true)));
    // The group's /Opt entries are its export values.
    assert_eq!(
        value("size"),
        Some((
            FieldValue::Text("M".into()),
            Some(vec!["S".into(), "M".into(), "L".into()])
        ))
    );
    assert_eq!(
        value("color").map(|v| v.0),
        Some(FieldValue::Text("1".into()))
    );
    let original = rasterize_page(&pdf, None, 0, VERIFY_PX_PER_PT).expect("render");
    let filled = rasterize_page(&r.pdf, None, 0, VERIFY_PX_PER_PT).expect("render");
    // Each value shows where its change says: the chosen radio button, the checkbox.
    let expected = [
        ("agree", [100.0, 600.0, 118.0, 618.0]),
        ("cross", [140.0, 600.0, 158.0, 618.0]),
        ("size", [140.0, 500.0, 156.0, 516.0]),
        ("color", [140.0, 400.0, 156.0, 416.0]),
    ];
    for (name, rect) in expected {
        let c = r
            .changes
            .iter()
            .find(|c| c.field.as_deref() == Some(name))
            .expect("change");
        let b = top_left(rect);
        assert!(
            c.bbox.iter().zip(b).all(|(x, y)| (x - y).abs() < 0.01),
            "{name}: change box {:?}, widget {b:?}",
            c.bbox
        );
        let (dark, changed) = ink(&filled, &original, b);
        assert!(
            changed >= 20 && dark >= 20,
            "{name}: {changed} px changed, {dark} dark"
        );
    }
    // The buttons not chosen stay off: no mark inside their border.
    for x in [100.0, 180.0] {
        let inner = top_left([x + 3.0, 503.0, x + 13.0, 513.0]);
        assert_eq!(ink(&filled, &original, inner).0, 0, "size button at {x}");
    }
    // Flattened, the marks are in the page and nothing is skipped.
    let flat = fill(&pdf, &values, true);
    assert!(flat.failed.is_empty(), "{:?}", flat.failed);
    assert!(
        !flat.warnings.iter().any(|w| w == "flatten_skipped"),
        "{:?}",
        flat.warnings
    );
    let left = pdfedit_engine::read_text(&flat.pdf, None, None, false, true).expect("fields");
    assert!(left.fields.is_empty(), "{:?}", left.fields);
    let flat_render = rasterize_page(&flat.pdf, None, 0, VERIFY_PX_PER_PT).expect("render");
    for (name, rect) in expected {
        let (dark, changed) = ink(&flat_render, &original, top_left(rect));
        assert!(
            changed >= 20 && dark >= 20,
            "{name} flattened: {changed} px changed"
        );
    }
}

/// `build()` plus a text field `note` holding a value no font can draw (Phoenician), with no
/// appearance, and a checkbox `seen` checked earlier (/V /Yes) without any appearance.
fn build_with_note() -> Vec<u8> {
    let mut doc = Document::load_mem(&build()).expect("load");
    let page_id = doc.get_pages()[&1];
    let note = widget(
        &mut doc,
        page_id,
        [100, 300, 300, 320],
        dictionary! {
            "FT" => "Tx", "T" => Object::string_literal("note"),
            "V" => lopdf::text_string("\u{10900}\u{10901}"),
            "DA" => Object::string_literal("/Helv 10 Tf 0 g"),
        },
    );
    let seen = widget(
        &mut doc,
        page_id,
        [100, 250, 118, 268],
        dictionary! {"FT" => "Btn", "T" => Object::string_literal("seen"), "V" => "Yes", "AS" => "Yes"},
    );
    let page = doc.get_dictionary_mut(page_id).expect("page");
    let annots = page
        .get_mut(b"Annots")
        .and_then(Object::as_array_mut)
        .expect("annots");
    annots.push(note.into());
    annots.push(seen.into());
    let af_id = doc
        .catalog()
        .and_then(|c| c.get(b"AcroForm"))
        .and_then(Object::as_reference)
        .expect("acroform");
    let af = doc.get_dictionary_mut(af_id).expect("acroform");
    let fields = af
        .get_mut(b"Fields")
        .and_then(Object::as_array_mut)
        .expect("fields");
    fields.push(note.into());
    fields.push(seen.into());
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save");
    out
}

#[test]
fn flatten_skipped_names_the_fields_left_live() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build_with_note();
    let original = rasterize_page(&pdf, None, 0, VERIFY_PX_PER_PT).expect("render");
    let r = fill(&pdf, &[("agree", FieldInput::Bool(true))], true);
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(
        r.warnings.iter().any(|w| w == "flatten_skipped"),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.flatten_skipped, vec!["note".to_string()]);
    // The skipped field is still a live field with its value; the others are flattened,
    // the checkbox checked earlier with a mark drawn for it.
    let left = pdfedit_engine::read_text(&r.pdf, None, None, false, true).expect("fields");
    let names: Vec<&str> = left.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["note"]);
    assert_eq!(
        left.fields[0].value,
        FieldValue::Text("\u{10900}\u{10901}".into())
    );
    let flat = rasterize_page(&r.pdf, None, 0, VERIFY_PX_PER_PT).expect("render");
    let (dark, changed) = ink(&flat, &original, top_left([100.0, 250.0, 118.0, 268.0]));
    assert!(changed >= 20 && dark >= 20, "seen: {changed} px changed");
    // Without flattening nothing is skipped.
    let live = fill(&pdf, &[("agree", FieldInput::Bool(true))], false);
    assert!(live.flatten_skipped.is_empty());
}

#[test]
fn a_refused_radio_value_leaves_the_group_without_drawn_states() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build();
    let r = fill(
        &pdf,
        &[
            ("agree", FieldInput::Bool(true)),
            ("color", FieldInput::Text("purple".into())),
        ],
        false,
    );
    assert_eq!(r.failed.len(), 1, "{:?}", r.failed);
    assert_eq!(r.failed[0].reason, "value_not_accepted");
    assert_eq!(r.changes.len(), 1);
    let doc = Document::load_mem(&r.pdf).expect("load");
    let page = doc.get_pages()[&1];
    let with_ap = doc
        .get_page_annotations(page)
        .expect("annots")
        .iter()
        .filter(|a| a.has(b"AP"))
        .count();
    // Only the checkbox got an appearance.
    assert_eq!(with_ap, 2, "agree, and cross's own /Off");
}
