//! Replace and delete of text shown only by FreeText annotations: /Contents and /RC
//! updated, the appearance stream edited in place, verified by rendering (new ink inside the
//! annotation's rect, none outside), checked with the engine's own text extraction (which
//! reads annotation appearances; pdftotext does not) and with `qpdf --check`.

mod common;

use lopdf::{dictionary, Document, Object, Stream};
use pdf_render::raster::rasterize_page;
use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, EditResult, Fit, Occurrence, Scope};

/// The annotation's /Rect, page user space (the page is 612 x 792).
const RECT: [f64; 4] = [100.0, 500.0, 320.0, 540.0];

/// One page with "Hello page content." in its content and a FreeText annotation showing
/// "Hello annotation world" / "second line" in Helvetica 12 (yellow fill, blue border).
fn build() -> Vec<u8> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let helv = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let page_content = b"BT /F1 12 Tf 72 700 Td (Hello page content.) Tj ET\n".to_vec();
    let contents = doc.add_object(Stream::new(dictionary! {}, page_content));
    let ap = "1 1 0.8 rg 0 0 1 RG 1 w 100.5 500.5 219 39 re B\n\
              /Tx BMC q BT 0 0 0 rg /Helv 12 Tf 104 526 Td (Hello annotation world) Tj \
              0 -14 Td (second line) Tj ET Q EMC\n";
    let rect: Vec<Object> = RECT.iter().map(|v| Object::Real(*v as f32)).collect();
    let ap = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Form",
            "BBox" => rect.clone(),
            "Matrix" => vec![1.into(), 0.into(), 0.into(), 1.into(), (-100).into(), (-500).into()],
            "Resources" => dictionary! { "Font" => dictionary! { "Helv" => helv } },
        },
        ap.as_bytes().to_vec(),
    ));
    let page_id = doc.new_object_id();
    let annot = doc.add_object(dictionary! {
        "Type" => "Annot", "Subtype" => "FreeText", "Rect" => rect,
        "Contents" => Object::string_literal("Hello annotation world\rsecond line"),
        "RC" => Object::string_literal(
            "<?xml version=\"1.0\"?><body xmlns=\"http://www.w3.org/1999/xhtml\"><p>Hello \
             annotation world</p><p>second line</p></body>"),
        "DA" => Object::string_literal("0 0 0 rg /Helv 12 Tf"),
        "AP" => dictionary! { "N" => ap },
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
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save");
    out
}

fn request(op: EditOp, find: &str, replace: &str, fit: Fit) -> EditRequest {
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
            fit,
            ..Edit::default()
        }],
        ..EditRequest::default()
    }
}

fn annot_string(pdf: &[u8], key: &[u8]) -> Option<String> {
    let doc = Document::load_mem(pdf).expect("load");
    let page = *doc.get_pages().get(&1)?;
    let annots = doc.get_dictionary(page).ok()?.get(b"Annots").ok()?;
    let first = doc.dereference(annots).ok()?.1.as_array().ok()?[0]
        .as_reference()
        .ok()?;
    let d = doc.get_dictionary(first).ok()?;
    match d.get(key).ok()? {
        Object::String(s, _) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    }
}

fn done(r: &EditResult) -> bool {
    r.failed.is_empty() && r.unmatched.is_empty() && r.changes.len() == 1
}

#[test]
fn replace_in_freetext_edits_contents_rich_text_and_appearance() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build();
    let (annot_before, layer_before) = common::engine_text(&pdf);
    assert!(
        annot_before.contains("Hello annotation world"),
        "{annot_before}"
    );
    let r = edit(
        &pdf,
        &request(EditOp::Replace, "annotation", "note", Fit::Auto),
    )
    .expect("edit");
    assert!(done(&r), "{:?} {:?}", r.failed, r.unmatched);
    let c = &r.changes[0];
    assert!(c.verified);
    assert_eq!(c.collateral_pixels, 0);
    assert_eq!(c.page, 1);
    assert_eq!(r.pages_touched, vec![1]);
    assert_eq!(c.font_used, "Helvetica", "{}", c.font_source);
    // The change's box is the annotation's rect, top-left points.
    let want = [RECT[0], 792.0 - RECT[3], RECT[2], 792.0 - RECT[1]];
    for (a, b) in c.bbox.iter().zip(want) {
        assert!((a - b).abs() < 0.01, "{:?}", c.bbox);
    }
    assert_eq!(
        annot_string(&r.pdf, b"Contents").as_deref(),
        Some("Hello note world\rsecond line")
    );
    let rc = annot_string(&r.pdf, b"RC").expect("RC kept");
    assert!(rc.contains("<p>Hello note world</p>"), "{rc}");
    let (annot_after, layer_after) = common::engine_text(&r.pdf);
    assert!(annot_after.contains("Hello note world"), "{annot_after}");
    assert!(!annot_after.contains("annotation"), "{annot_after}");
    assert!(annot_after.contains("second line"), "{annot_after}");
    assert_eq!(layer_before, layer_after, "the page content is untouched");
    assert!(common::qpdf_ok(&r.pdf));
    let before = rasterize_page(&pdf, None, 0, 2.0).expect("render");
    let after = rasterize_page(&r.pdf, None, 0, 2.0).expect("render");
    let (inside, outside) = common::ink_moved(&before, &after, RECT, 792.0);
    assert!(inside > 20, "new ink inside the rect: {inside}");
    assert_eq!(outside, 0, "nothing changes outside the rect");
}

#[test]
fn delete_in_freetext_leaves_single_spaces() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build();
    let r = edit(&pdf, &request(EditOp::Delete, "annotation", "", Fit::Auto)).expect("edit");
    assert!(done(&r), "{:?} {:?}", r.failed, r.unmatched);
    assert!(r.changes[0].verified);
    assert_eq!(
        annot_string(&r.pdf, b"Contents").as_deref(),
        Some("Hello world\rsecond line")
    );
    let (annot_after, _) = common::engine_text(&r.pdf);
    assert!(annot_after.contains("Hello world"), "{annot_after}");
    assert!(!annot_after.contains("annotation"), "{annot_after}");
    assert!(common::qpdf_ok(&r.pdf));
}

#[test]
fn longer_text_that_cannot_fit_the_box_overflows() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build();
    let long = "a much much longer text than the box can ever hold on one line";
    for fit in [Fit::None, Fit::Auto] {
        let r = edit(&pdf, &request(EditOp::Replace, "annotation", long, fit)).expect("edit");
        assert!(r.changes.is_empty(), "{fit:?}: {:?}", r.changes);
        assert_eq!(r.failed.len(), 1, "{fit:?}");
        assert_eq!(
            r.failed[0].reason, "overflow",
            "{fit:?}: {}",
            r.failed[0].message
        );
        assert_eq!(r.pdf, pdf, "a failed edit leaves the document as it was");
    }
    // A little longer fits: the rest of the line moves along inside the box.
    let r = edit(
        &pdf,
        &request(EditOp::Replace, "world", "wide world", Fit::Auto),
    )
    .expect("edit");
    assert!(done(&r), "{:?}", r.failed);
    let (annot_after, _) = common::engine_text(&r.pdf);
    assert!(
        annot_after.contains("Hello annotation wide world"),
        "{annot_after}"
    );
}

#[test]
fn page_content_is_edited_first() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build();
    let r = edit(&pdf, &request(EditOp::Replace, "Hello", "Howdy", Fit::Auto)).expect("edit");
    assert!(done(&r), "{:?}", r.failed);
    let (annot_after, layer_after) = common::engine_text(&r.pdf);
    assert!(layer_after.contains("Howdy page content."), "{layer_after}");
    assert!(
        annot_after.contains("Hello annotation world"),
        "{annot_after}"
    );
    assert_eq!(
        annot_string(&r.pdf, b"Contents").as_deref(),
        Some("Hello annotation world\rsecond line")
    );
}

#[test]
fn corpus_freetext_phrases_are_replaced() {
    if !common::init_pdfium() {
        return;
    }
    let Some(files) = common::corpus() else {
        return;
    };
    let path = files[0].path.with_file_name("annot-many-types.pdf");
    let Ok(pdf) = std::fs::read(&path) else {
        eprintln!("SKIP: annot-many-types.pdf is not in the corpus");
        return;
    };
    let (before, _) = common::engine_text(&pdf);
    for (find, new) in [
        ("explanation text", "xplanatione extt"),
        ("explanation text", "explanation text xplana"),
        ("modified text", "odifiedm extt"),
        ("modified text", "modified text odifie"),
    ] {
        let r = edit(&pdf, &request(EditOp::Replace, find, new, Fit::Auto)).expect("edit");
        assert!(
            done(&r),
            "{find} → {new}: {:?} {:?} {}",
            r.failed,
            r.unmatched,
            r.changes.len()
        );
        let c = &r.changes[0];
        assert!(c.verified);
        let (after, _) = common::engine_text(&r.pdf);
        assert!(after.contains(new), "{new}: {after}");
        assert!(
            after.matches(find).count() < before.matches(find).count() || new.contains(find),
            "{find}: {after}"
        );
        assert!(common::qpdf_ok(&r.pdf), "{find} → {new}");
        if new.len() == find.len() {
            // The same letters: the appearance's own subset has them.
            assert_eq!(c.font_source, "exact-embedded", "{find}");
        }
    }
    for find in ["explanation text", "modified text"] {
        let r = edit(&pdf, &request(EditOp::Delete, find, "", Fit::Auto)).expect("edit");
        assert!(done(&r), "delete {find}: {:?}", r.failed);
        let (after, _) = common::engine_text(&r.pdf);
        assert!(!after.contains(find), "{find}: {after}");
        assert!(common::qpdf_ok(&r.pdf));
    }
}

/// A redaction whose text only an annotation's appearance draws (here by glyph ids, which
/// the string scan cannot cut) removes that appearance and is a verified change, not a
/// `partial` result without one: corpus-eval's two `partial` redactions.
#[test]
fn redaction_of_annotation_text_is_a_verified_change() {
    if !common::init_pdfium() {
        return;
    }
    let Some(files) = common::corpus() else {
        return;
    };
    let path = files[0].path.with_file_name("annot-many-types.pdf");
    let Ok(pdf) = std::fs::read(&path) else {
        eprintln!("SKIP: annot-many-types.pdf is not in the corpus");
        return;
    };
    for find in ["explanation text", "modified text"] {
        let mut req = request(EditOp::Redact, find, "", Fit::Auto);
        req.edits[0].scope = Scope::default();
        let r = edit(&pdf, &req).expect("edit");
        assert!(done(&r), "redact {find}: {:?} {:?}", r.failed, r.unmatched);
        assert_eq!(r.changes.len(), 1, "{find}: {:?}", r.removed);
        let c = &r.changes[0];
        assert!(c.verified && c.collateral_pixels == 0, "{find}");
        assert_eq!((c.page, c.op, c.find.as_str()), (1, EditOp::Redact, find));
        assert!(
            r.removed
                .iter()
                .any(|m| m.kind == "annotation" && m.location.contains("/AP (appearance emptied")),
            "{find}: {:?}",
            r.removed
        );
        // Nothing of the annotation is drawn any more: no viewer draws the rest of its
        // /Contents ("field", which its appearance did not show) in its place.
        let (after, _) = common::engine_text(&r.pdf);
        let (before, _) = common::engine_text(&pdf);
        assert!(!after.contains(find), "{find}: {after}");
        for word in after.split_whitespace() {
            assert!(before.contains(word), "{find}: '{word}' appeared: {after}");
        }
        assert!(common::qpdf_ok(&r.pdf), "{find}");
    }
}

/// A redaction of text that a FreeText appearance draws as literal strings cuts it from
/// them, keeps the rest of the appearance (box, other words), and is a verified change;
/// the string is cut from /Contents too.
#[test]
fn redaction_in_a_literal_appearance_keeps_the_rest() {
    if !common::init_pdfium() {
        return;
    }
    let pdf = build();
    let mut req = request(EditOp::Redact, "annotation", "", Fit::Auto);
    req.edits[0].scope = Scope::default();
    let r = edit(&pdf, &req).expect("edit");
    assert!(done(&r), "{:?} {:?} {:?}", r.failed, r.unmatched, r.removed);
    let c = &r.changes[0];
    assert!(c.verified && c.page == 1);
    assert!(
        r.removed
            .iter()
            .any(|m| m.location.contains("/AP: cut from")),
        "{:?}",
        r.removed
    );
    let (annot, layer) = common::engine_text(&r.pdf);
    assert!(!annot.contains("annotation"), "{annot}");
    assert!(
        annot.contains("Hello") && annot.contains("second line"),
        "{annot}"
    );
    assert_eq!(layer, "Hello page content.");
    let contents = annot_string(&r.pdf, b"Contents").expect("contents");
    assert!(!contents.contains("annotation"), "{contents}");
    assert!(r.residual.is_empty(), "{:?}", r.residual);
}
