//! Flatten does not burn in widgets that are not displayed (annotation flags Hidden and
//! NoView), as Acrobat does not: their fields go with the rest, their values are drawn
//! nowhere.

mod common;

use lopdf::{dictionary, Document, Object, ObjectId, Stream};
use pdf_render::raster::{rasterize_page, VERIFY_PX_PER_PT};
use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, FieldInput, FormSpec};

/// A text field widget at `rect` with flags `flags` and an appearance showing `shown`.
fn text_field(
    doc: &mut Document,
    page: ObjectId,
    name: &str,
    rect: [i64; 4],
    flags: i64,
    shown: &str,
) -> ObjectId {
    let (w, h) = (rect[2] - rect[0], rect[3] - rect[1]);
    let helv = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let ap = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), w.into(), h.into()],
            "Resources" => dictionary! { "Font" => dictionary! { "Helv" => helv } },
        },
        format!("/Tx BMC BT /Helv 12 Tf 0 g 2 5 Td ({shown}) Tj ET EMC").into_bytes(),
    ));
    doc.add_object(dictionary! {
        "Type" => "Annot", "Subtype" => "Widget", "FT" => "Tx",
        "T" => Object::string_literal(name),
        "V" => Object::string_literal(shown),
        "DA" => Object::string_literal("/Helv 12 Tf 0 g"),
        "Rect" => rect.iter().map(|&v| Object::Integer(v)).collect::<Vec<_>>(),
        "F" => flags,
        "P" => page,
        "AP" => dictionary! { "N" => ap },
    })
}

/// One page with three filled text fields: `shown` (Print), `secret` (Print, NoView) and
/// `gone` (Hidden).
fn build() -> Vec<u8> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let page_id = doc.new_object_id();
    let content = doc.add_object(Stream::new(dictionary! {}, b"".to_vec()));
    let shown = text_field(
        &mut doc,
        page_id,
        "shown",
        [100, 600, 300, 620],
        4,
        "Plainvalue",
    );
    let secret = text_field(
        &mut doc,
        page_id,
        "secret",
        [100, 500, 300, 520],
        4 | 32,
        "Secretvalue",
    );
    let gone = text_field(
        &mut doc,
        page_id,
        "gone",
        [100, 400, 300, 420],
        2,
        "Hiddenvalue",
    );
    let fields: Vec<Object> = vec![shown.into(), secret.into(), gone.into()];
    doc.objects.insert(
        page_id,
        dictionary! {
            "Type" => "Page", "Parent" => pages_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Contents" => content, "Annots" => fields.clone(),
        }
        .into(),
    );
    doc.objects.insert(
        pages_id,
        dictionary! {"Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1}.into(),
    );
    let af = doc.add_object(dictionary! {
        "Fields" => fields,
        "DA" => Object::string_literal("/Helv 0 Tf 0 g"),
    });
    let catalog =
        doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id, "AcroForm" => af});
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save");
    out
}

#[test]
fn hidden_and_noview_widgets_are_not_burnt_in() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build();
    let request = EditRequest {
        edits: vec![Edit {
            op: EditOp::Form,
            form: Some(FormSpec {
                fields: [("shown".to_string(), FieldInput::Text("Newvalue".into()))]
                    .into_iter()
                    .collect(),
                flatten: true,
            }),
            ..Edit::default()
        }],
        ..EditRequest::default()
    };
    let r = edit(&pdf, &request).expect("form edit runs");
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(r.flatten_skipped.is_empty(), "{:?}", r.flatten_skipped);
    // Every field is gone, the hidden ones too.
    let left = pdfedit_engine::read_text(&r.pdf, None, None, false, true).expect("fields");
    assert!(left.fields.is_empty(), "{:?}", left.fields);
    // The visible one is in the page; the others nowhere, not even in the render.
    if let Some(text) = common::pdftotext(&r.pdf, &[]) {
        assert!(text.contains("Newvalue"), "{text}");
        assert!(
            !text.contains("Secretvalue") && !text.contains("Hiddenvalue"),
            "{text}"
        );
    }
    let flat = rasterize_page(&r.pdf, None, 0, VERIFY_PX_PER_PT).expect("render");
    let s = f64::from(flat.px_per_pt);
    let dark_in = |rect: [f64; 4]| {
        let (x0, x1) = ((rect[0] * s) as usize, (rect[2] * s) as usize);
        let (y0, y1) = (
            ((792.0 - rect[3]) * s) as usize,
            ((792.0 - rect[1]) * s) as usize,
        );
        let stride = flat.width as usize * 3;
        (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| y * stride + x * 3))
            .filter(|&i| flat.pixels[i..i + 3].iter().any(|&c| c < 160))
            .count()
    };
    assert!(
        dark_in([100.0, 600.0, 300.0, 620.0]) > 20,
        "the value is drawn"
    );
    assert_eq!(dark_in([100.0, 500.0, 300.0, 520.0]), 0, "NoView burnt in");
    assert_eq!(dark_in([100.0, 400.0, 300.0, 420.0]), 0, "Hidden burnt in");
}
