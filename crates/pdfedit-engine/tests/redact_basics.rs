//! Redaction on documents built here with lopdf: glyphs gone with neighbours intact,
//! image pixels under the box zeroed (the rest unchanged; images drawn by a shared form
//! and inline images too), the string removed from
//! metadata, XMP, annotations and outlines and each removal reported, an invisible OCR
//! word redacted with the image pixels under it, images we cannot re-encode refused (fail
//! closed).

mod common;

use std::io::Write;
use std::process::Command;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use lopdf::{dictionary, Document, Object, ObjectId, Stream, StringFormat};
use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, EditResult, MatchMode, Scope};

const IMG_W: u32 = 100;
const IMG_H: u32 = 15;
/// The image is drawn 200 × 30 pt at (72, 690): 2 pt per pixel.
const IMG_CTM: [f64; 6] = [200.0, 0.0, 0.0, 30.0, 72.0, 690.0];

fn image_pixels() -> Vec<u8> {
    (0..IMG_W * IMG_H)
        .flat_map(|i| {
            let (x, y) = (i % IMG_W, i / IMG_W);
            [(x * 2 + 40) as u8, (y * 10 + 60) as u8, 200]
        })
        .collect()
}

fn flate(data: &[u8]) -> Vec<u8> {
    let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

struct Built {
    pdf: Vec<u8>,
}

/// One page: an image under the line "Alpha SecretBeta gamma" (Helvetica 12 at 72, 700),
/// "Secret" also in Info, XMP, a text annotation, an outline title. `image_filter`
/// replaces the image's filter (to test refusals); `ocr` draws the text invisibly.
fn build(image_filter: Option<&str>, ocr: bool) -> Built {
    build_with(image_filter, ocr, None)
}

/// As [`build`], with `image` (a ready image XObject) drawn instead of the gradient.
fn build_with(image_filter: Option<&str>, ocr: bool, image: Option<Stream>) -> Built {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let mut img_dict = dictionary! {
        "Type" => "XObject", "Subtype" => "Image", "Width" => IMG_W as i64,
        "Height" => IMG_H as i64, "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8,
        "Filter" => "FlateDecode",
    };
    let mut img_data = flate(&image_pixels());
    if let Some(f) = image_filter {
        img_dict.set("Filter", Object::Name(f.as_bytes().to_vec()));
        img_dict.set("ImageMask", true);
        img_dict.remove(b"ColorSpace");
        img_dict.set("BitsPerComponent", 1);
        img_data = vec![0; 16];
    }
    let image = doc.add_object(image.unwrap_or_else(|| Stream::new(img_dict, img_data)));
    let mode = if ocr { "3 Tr " } else { "" };
    let content = format!(
        "q 200 0 0 30 72 690 cm /Im1 Do Q\n\
         BT /F1 12 Tf {mode}72 700 Td (Alpha SecretBeta gamma) Tj ET\n\
         BT /F1 12 Tf 72 600 Td (Another line stays) Tj ET\n"
    );
    let contents = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
    let annot = doc.add_object(dictionary! {
        "Type" => "Annot", "Subtype" => "Text",
        "Rect" => vec![400.into(), 400.into(), 420.into(), 420.into()],
        "Contents" => Object::string_literal("Note: Secret stuff"),
    });
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        "Resources" => dictionary! {
            "Font" => dictionary! { "F1" => font },
            "XObject" => dictionary! { "Im1" => image },
        },
        "Contents" => contents,
        "Annots" => vec![Object::Reference(annot)],
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![Object::Reference(page)], "Count" => 1,
        }),
    );
    let outlines = doc.new_object_id();
    let item = doc.add_object(dictionary! {
        "Title" => Object::String(b"The Secret chapter".to_vec(), StringFormat::Literal),
        "Parent" => outlines, "Dest" => vec![Object::Reference(page), "Fit".into()],
    });
    doc.objects.insert(
        outlines,
        Object::Dictionary(dictionary! {
            "Type" => "Outlines", "First" => item, "Last" => item, "Count" => 1,
        }),
    );
    let xmp = doc.add_object(Stream::new(
        dictionary! { "Type" => "Metadata", "Subtype" => "XML" },
        b"<x:xmpmeta><dc:title>Secret report</dc:title></x:xmpmeta>".to_vec(),
    ));
    let catalog = doc.add_object(dictionary! {
        "Type" => "Catalog", "Pages" => pages_id, "Outlines" => outlines, "Metadata" => xmp,
    });
    let info = doc.add_object(dictionary! {
        "Title" => Object::string_literal("Secret title"),
        "Author" => Object::string_literal("Someone"),
    });
    doc.trailer.set("Root", catalog);
    doc.trailer.set("Info", info);
    let mut pdf = Vec::new();
    doc.save_to(&mut pdf).unwrap();
    Built { pdf }
}

fn redact(pdf: &[u8], find: &str) -> EditResult {
    let request = EditRequest {
        edits: vec![Edit {
            index: 0,
            op: EditOp::Redact,
            find: find.into(),
            replace: String::new(),
            match_mode: MatchMode::Exact,
            scope: Scope::default(),
            fit: Default::default(),
            style: Default::default(),
            ..Edit::default()
        }],
        ..EditRequest::default()
    };
    edit(pdf, &request).expect("edit runs")
}

fn pdftotext(pdf: &[u8]) -> Option<String> {
    // Tests run in parallel threads of one process: one file each call.
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("pdfedit-redact-{}-{n}.pdf", std::process::id()));
    std::fs::write(&path, pdf).ok()?;
    let out = Command::new("pdftotext").arg(&path).arg("-").output().ok();
    let _ = std::fs::remove_file(&path);
    out.filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Every decoded stream and every object's bytes, as text (a raw byte search).
fn all_decoded(pdf: &[u8]) -> String {
    let doc = Document::load_mem(pdf).unwrap();
    let mut out = String::new();
    for obj in doc.objects.values() {
        match obj {
            Object::Stream(s) => {
                let bytes = s
                    .decompressed_content()
                    .unwrap_or_else(|_| s.content.clone());
                out.push_str(&String::from_utf8_lossy(&bytes));
                out.push_str(&format!("{:?}", s.dict));
            }
            other => out.push_str(&format!("{other:?}")),
        }
        out.push('\n');
    }
    out.push_str(&String::from_utf8_lossy(pdf));
    out
}

fn page_image(pdf: &[u8]) -> (ObjectId, Vec<u8>) {
    let doc = Document::load_mem(pdf).unwrap();
    let page = *doc.get_pages().get(&1).unwrap();
    let res = doc.get_dictionary(page).unwrap().get(b"Resources").unwrap();
    let res = doc.dereference(res).unwrap().1.as_dict().unwrap();
    let x = doc.dereference(res.get(b"XObject").unwrap()).unwrap().1;
    let id = x
        .as_dict()
        .unwrap()
        .get(b"Im1")
        .unwrap()
        .as_reference()
        .unwrap();
    let s = doc.get_object(id).unwrap().as_stream().unwrap();
    (id, s.decompressed_content().unwrap())
}

#[test]
fn text_image_and_document_strings_are_removed() {
    if !common::init_pdfium() {
        return;
    }
    let built = build(None, false);
    let r = redact(&built.pdf, "Secret");
    assert_eq!(r.changes.len(), 1, "failed: {:?}", r.failed);
    let c = &r.changes[0];
    assert!(c.verified);
    assert_eq!(c.op, EditOp::Redact);
    assert_eq!(c.collateral_pixels, 0);
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    // Every kind of place was cleaned and reported.
    let kinds: Vec<&str> = r.removed.iter().map(|x| x.kind).collect();
    for k in ["image", "metadata", "xmp", "annotation", "outline"] {
        assert!(kinds.contains(&k), "{k} not reported: {:?}", r.removed);
    }
    assert!(r.residual.is_empty(), "{:?}", r.residual);
    // Gone from the raw bytes of every object, decoded.
    assert!(!all_decoded(&r.pdf).contains("Secret"));
    // Neighbours intact, in the text layer as pdftotext reads it.
    if let Some(text) = pdftotext(&r.pdf) {
        assert!(!text.contains("Secret"), "{text}");
        for w in ["Alpha", "Beta", "gamma", "Another line stays"] {
            assert!(text.contains(w), "{w} lost: {text}");
        }
    }
    image_zeroed_under(&r.pdf, c.bbox);
}

/// The page image of `pdf`: a copy zeroed under `bbox` (the change's box, top-left
/// display points on the 792 pt page), every other pixel unchanged.
fn image_zeroed_under(pdf: &[u8], bbox: [f64; 4]) {
    let (_, after) = page_image(pdf);
    let before = image_pixels();
    assert_eq!(after.len(), before.len());
    // The box in user space.
    let ub = [bbox[0], 792.0 - bbox[3], bbox[2], 792.0 - bbox[1]];
    let (mut zeroed, mut inside_total) = (0, 0);
    for y in 0..IMG_H {
        for x in 0..IMG_W {
            let i = ((y * IMG_W + x) * 3) as usize;
            // Pixel extent in user space.
            let px0 = IMG_CTM[4] + f64::from(x) * 2.0;
            let py1 = IMG_CTM[5] + IMG_CTM[3] - f64::from(y) * 2.0;
            let (px1, py0) = (px0 + 2.0, py1 - 2.0);
            let touches = px1 > ub[0] && px0 < ub[2] && py1 > ub[1] && py0 < ub[3];
            let within = px0 >= ub[0] + 2.0
                && px1 <= ub[2] - 2.0
                && py0 >= ub[1] + 2.0
                && py1 <= ub[3] - 2.0;
            if after[i..i + 3] != before[i..i + 3] {
                assert!(touches, "pixel {x},{y} changed outside the box");
                assert_eq!(&after[i..i + 3], &[0, 0, 0]);
                zeroed += 1;
            }
            if within {
                inside_total += 1;
                assert_eq!(
                    &after[i..i + 3],
                    &[0, 0, 0],
                    "pixel {x},{y} under the box kept"
                );
            }
        }
    }
    assert!(zeroed > 0 && inside_total > 0, "{zeroed} {inside_total}");
}

#[test]
fn a_redaction_is_a_full_rewrite_without_the_old_revision() {
    if !common::init_pdfium() {
        return;
    }
    let built = build(None, false);
    // An incremental update: a new Info dictionary; the old one (with the string) stays
    // in the first revision's bytes.
    let prev = Document::load_mem(&built.pdf).unwrap();
    let info = prev.trailer.get(b"Info").unwrap().as_reference().unwrap();
    let mut inc = lopdf::IncrementalDocument::create_from(built.pdf.clone(), prev);
    inc.opt_clone_object_to_new_document(info).unwrap();
    inc.new_document
        .get_object_mut(info)
        .unwrap()
        .as_dict_mut()
        .unwrap()
        .set("Subject", Object::string_literal("updated"));
    let mut pdf = Vec::new();
    inc.save_to(&mut pdf).unwrap();
    assert_eq!(pdf.windows(5).filter(|w| w == b"%%EOF").count(), 2);
    let r = redact(&pdf, "Secret");
    assert_eq!(r.changes.len(), 1, "{:?}", r.failed);
    assert_eq!(
        r.pdf.windows(5).filter(|w| w == b"%%EOF").count(),
        1,
        "one revision only"
    );
    assert!(!all_decoded(&r.pdf).contains("Secret"));
}

#[test]
fn invisible_ocr_text_over_an_image_is_redacted_with_the_pixels_under_it() {
    if !common::init_pdfium() {
        return;
    }
    // The word is an invisible OCR layer (3 Tr) over the image: the visible word is the
    // image's pixels there. Glyphs and pixels both go.
    let built = build(None, true);
    let r = redact(&built.pdf, "Secret");
    assert_eq!(r.changes.len(), 1, "failed: {:?}", r.failed);
    let c = &r.changes[0];
    assert!(c.verified);
    assert_eq!(c.collateral_pixels, 0);
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert!(r.residual.is_empty(), "{:?}", r.residual);
    assert!(
        r.removed.iter().any(|x| x.kind == "image"),
        "{:?}",
        r.removed
    );
    if let Some(text) = pdftotext(&r.pdf) {
        assert!(!text.contains("Secret"), "{text}");
        for w in ["Alpha", "Beta", "gamma", "Another line stays"] {
            assert!(text.contains(w), "{w} lost: {text}");
        }
    }
    image_zeroed_under(&r.pdf, c.bbox);
}

#[test]
fn an_image_that_cannot_be_re_encoded_fails_closed() {
    if !common::init_pdfium() {
        return;
    }
    // 16 zero bytes are no JBIG2 data the decoder can read.
    let built = build(Some("JBIG2Decode"), false);
    let r = redact(&built.pdf, "Secret");
    assert!(r.changes.is_empty());
    assert_eq!(r.failed.len(), 1);
    assert_eq!(
        r.failed[0].reason, "image_unsupported",
        "{}",
        r.failed[0].message
    );
    assert!(
        r.failed[0].message.contains("JBIG2"),
        "{}",
        r.failed[0].message
    );
    // The page text was left alone (rolled back) and is reported as residual.
    assert!(
        r.residual.iter().any(|x| x.kind == "page_text"),
        "{:?}",
        r.residual
    );
}

#[test]
fn text_not_found_is_unmatched_unless_the_page_is_a_scan() {
    if !common::init_pdfium() {
        return;
    }
    let built = build(None, false);
    let r = redact(&built.pdf, "Nowhere");
    assert_eq!(r.unmatched.len(), 1);
    assert_eq!(r.pdf, built.pdf, "nothing to do: the input comes back");
}

#[test]
fn a_string_only_in_an_annotation_is_removed_and_not_unmatched() {
    if !common::init_pdfium() {
        return;
    }
    let built = build(None, false);
    let r = redact(&built.pdf, "stuff");
    assert!(r.changes.is_empty());
    assert!(r.unmatched.is_empty(), "{:?}", r.unmatched);
    assert_eq!(r.removed.len(), 1, "{:?}", r.removed);
    assert_eq!(r.removed[0].kind, "annotation");
    assert_eq!(r.removed[0].page, Some(1));
    assert!(r.residual.is_empty(), "{:?}", r.residual);
    assert!(!all_decoded(&r.pdf).contains("stuff"));
}

/// The first DCT (JPEG) image of a corpus scan, as a stream to embed.
fn corpus_jpeg() -> Option<Stream> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/scan-purchase-order-lexmark-pt.pdf");
    let Ok(doc) = Document::load(&path) else {
        eprintln!("SKIP: corpus scan with a JPEG not found");
        return None;
    };
    doc.objects.values().find_map(|o| {
        let s = o.as_stream().ok()?;
        (s.dict.get(b"Filter").ok()?.as_name().ok()? == b"DCTDecode").then(|| s.clone())
    })
}

#[test]
fn jpeg_pixels_under_the_box_are_zeroed_and_the_rest_kept() {
    if !common::init_pdfium() {
        return;
    }
    let Some(jpeg) = corpus_jpeg() else { return };
    let w = jpeg.dict.get(b"Width").unwrap().as_i64().unwrap() as usize;
    let h = jpeg.dict.get(b"Height").unwrap().as_i64().unwrap() as usize;
    let mut dec = jpeg_decoder::Decoder::new(jpeg.content.as_slice());
    let before = dec.decode().unwrap();
    let comps = before.len() / (w * h);
    let built = build_with(None, false, Some(jpeg));
    let r = redact(&built.pdf, "Secret");
    assert_eq!(r.changes.len(), 1, "{:?}", r.failed);
    assert!(
        r.removed.iter().any(|x| x.kind == "image"),
        "{:?}",
        r.removed
    );
    let (_, after) = page_image(&r.pdf);
    assert_eq!(after.len(), before.len());
    let c = &r.changes[0];
    let ub = [c.bbox[0], 792.0 - c.bbox[3], c.bbox[2], 792.0 - c.bbox[1]];
    // Pixel size in user space: the image is drawn 200 x 30 pt.
    let (sx, sy) = (200.0 / w as f64, 30.0 / h as f64);
    let (mut changed, mut zero_inside) = (0usize, 0usize);
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) * comps;
            let px0 = 72.0 + x as f64 * sx;
            let py1 = 720.0 - y as f64 * sy;
            let touches = px0 + sx > ub[0] && px0 < ub[2] && py1 > ub[1] && py1 - sy < ub[3];
            if after[i..i + comps] != before[i..i + comps] {
                assert!(touches, "pixel {x},{y} changed outside the box");
                assert!(after[i..i + comps].iter().all(|&v| v == 0));
                changed += 1;
            }
            if touches && after[i..i + comps].iter().all(|&v| v == 0) {
                zero_inside += 1;
            }
        }
    }
    assert!(changed > 0 && zero_inside > 0);
}

/// The image drawn by form `/Fm1` of page `n`, decoded.
fn form_image(pdf: &[u8], n: u32) -> Vec<u8> {
    let doc = Document::load_mem(pdf).unwrap();
    let page = *doc.get_pages().get(&n).unwrap();
    let xobject = |dict: &lopdf::Dictionary, name: &[u8]| -> ObjectId {
        let res = doc.dereference(dict.get(b"Resources").unwrap()).unwrap().1;
        let x = doc
            .dereference(res.as_dict().unwrap().get(b"XObject").unwrap())
            .unwrap()
            .1;
        x.as_dict()
            .unwrap()
            .get(name)
            .unwrap()
            .as_reference()
            .unwrap()
    };
    let form = xobject(doc.get_dictionary(page).unwrap(), b"Fm1");
    let form = doc.get_object(form).unwrap().as_stream().unwrap();
    let image = xobject(&form.dict, b"Im1");
    let s = doc.get_object(image).unwrap().as_stream().unwrap();
    s.decompressed_content().unwrap()
}

#[test]
fn an_image_inside_a_shared_form_is_masked_in_a_copy_for_the_page() {
    if !common::init_pdfium() {
        return;
    }
    // Two pages draw the same form, which draws the image; "Secret" is on page 1 only.
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let image = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image", "Width" => IMG_W as i64,
            "Height" => IMG_H as i64, "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8,
            "Filter" => "FlateDecode",
        },
        flate(&image_pixels()),
    ));
    let form = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Matrix" => vec![1.into(), 0.into(), 0.into(), 1.into(), 0.into(), (-100).into()],
            "Resources" => dictionary! { "XObject" => dictionary! { "Im1" => image } },
        },
        b"q 200 0 0 30 72 790 cm /Im1 Do Q".to_vec(),
    ));
    let mut kids = Vec::new();
    for text in ["Alpha SecretBeta gamma", "Nothing to hide here"] {
        let content = format!(
            "q /Fm1 Do Q\nBT /F1 12 Tf 72 700 Td ({text}) Tj ET\n\
             BT /F1 12 Tf 72 600 Td (Another line stays) Tj ET\n"
        );
        let contents = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
        kids.push(Object::Reference(doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Resources" => dictionary! {
                "Font" => dictionary! { "F1" => font },
                "XObject" => dictionary! { "Fm1" => form },
            },
            "Contents" => contents,
        })));
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => 2 }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut pdf = Vec::new();
    doc.save_to(&mut pdf).unwrap();

    let r = redact(&pdf, "Secret");
    assert_eq!(r.changes.len(), 1, "{:?}", r.failed);
    assert!(r.changes[0].verified);
    let removed: Vec<&str> = r
        .removed
        .iter()
        .filter(|x| x.kind == "image")
        .map(|x| x.location.as_str())
        .collect();
    assert!(
        removed.len() == 1 && removed[0].starts_with("form /Fm1"),
        "{removed:?}"
    );
    let before = image_pixels();
    // Page 2 still draws the untouched original.
    assert_eq!(form_image(&r.pdf, 2), before);
    // Page 1's copy: pixels under "Secret" zeroed, the rest kept. The image is drawn
    // 200 × 30 pt at (72, 690): 2 pt per pixel; the box is the change's bbox.
    let after = form_image(&r.pdf, 1);
    let c = &r.changes[0];
    let ub = [c.bbox[0], 792.0 - c.bbox[3], c.bbox[2], 792.0 - c.bbox[1]];
    let mut zeroed = 0;
    for y in 0..IMG_H as usize {
        for x in 0..IMG_W as usize {
            let i = (y * IMG_W as usize + x) * 3;
            let (px0, py1) = (72.0 + 2.0 * x as f64, 720.0 - 2.0 * y as f64);
            let touches = px0 + 2.0 > ub[0] && px0 < ub[2] && py1 > ub[1] && py1 - 2.0 < ub[3];
            if touches {
                assert_eq!(&after[i..i + 3], &[0, 0, 0], "pixel {x},{y} under the box");
                zeroed += 1;
            } else {
                assert_eq!(&after[i..i + 3], &before[i..i + 3], "pixel {x},{y} changed");
            }
        }
    }
    assert!(zeroed > 0);
    assert!(!pdftotext(&r.pdf).unwrap_or_default().contains("Secret"));
}

#[test]
fn an_inline_image_under_the_box_becomes_a_masked_image_xobject() {
    if !common::init_pdfium() {
        return;
    }
    let before = image_pixels();
    let hex: String = before.iter().map(|b| format!("{b:02x}")).collect();
    let content = format!(
        "q 200 0 0 30 72 690 cm\nBI /W {IMG_W} /H {IMG_H} /CS /RGB /BPC 8 /F /AHx ID\n{hex}>\nEI Q\n\
         BT /F1 12 Tf 72 700 Td (Alpha SecretBeta gamma) Tj ET\n\
         BT /F1 12 Tf 72 600 Td (Another line stays) Tj ET\n"
    );
    let pdf = common::helvetica_page(content.as_bytes(), 612, 792);

    let r = redact(&pdf, "Secret");
    assert_eq!(r.changes.len(), 1, "{:?}", r.failed);
    assert!(r.changes[0].verified);
    assert!(
        r.removed
            .iter()
            .any(|x| x.kind == "image" && x.location.starts_with("inline image")),
        "{:?}",
        r.removed
    );
    let out = Document::load_mem(&r.pdf).unwrap();
    let page = *out.get_pages().get(&1).unwrap();
    let content = out.get_page_content(page);
    let content = String::from_utf8_lossy(&content);
    assert!(
        content.contains("/RdIm1 Do") && !content.contains("BI"),
        "the inline image is drawn as an XObject instead: {content}"
    );
    let res = out
        .dereference(out.get_dictionary(page).unwrap().get(b"Resources").unwrap())
        .unwrap()
        .1
        .as_dict()
        .unwrap();
    let xobjects = out
        .dereference(res.get(b"XObject").unwrap())
        .unwrap()
        .1
        .as_dict()
        .unwrap();
    let id = xobjects.get(b"RdIm1").unwrap().as_reference().unwrap();
    let after = out
        .get_object(id)
        .unwrap()
        .as_stream()
        .unwrap()
        .decompressed_content()
        .unwrap();
    let c = &r.changes[0];
    let ub = [c.bbox[0], 792.0 - c.bbox[3], c.bbox[2], 792.0 - c.bbox[1]];
    let mut zeroed = 0;
    for y in 0..IMG_H as usize {
        for x in 0..IMG_W as usize {
            let i = (y * IMG_W as usize + x) * 3;
            let (px0, py1) = (72.0 + 2.0 * x as f64, 720.0 - 2.0 * y as f64);
            let touches = px0 + 2.0 > ub[0] && px0 < ub[2] && py1 > ub[1] && py1 - 2.0 < ub[3];
            if touches {
                assert_eq!(&after[i..i + 3], &[0, 0, 0], "pixel {x},{y} under the box");
                zeroed += 1;
            } else {
                assert_eq!(&after[i..i + 3], &before[i..i + 3], "pixel {x},{y} changed");
            }
        }
    }
    assert!(zeroed > 0);
    let text = pdftotext(&r.pdf).unwrap_or_default();
    assert!(!text.contains("Secret") && text.contains("Another line stays"));
}

#[test]
fn an_annotation_appearance_keeps_its_other_text() {
    if !common::init_pdfium() {
        return;
    }
    // A FreeText box whose appearance draws two lines, one with the string.
    let built = build(None, false);
    let mut doc = Document::load_mem(&built.pdf).unwrap();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let ap = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), 200.into(), 40.into()],
            "Resources" => dictionary! { "Font" => dictionary! { "Helv" => font } },
        },
        b"BT /Helv 10 Tf 2 25 Td (Reviewer: Secret agent) Tj 0 -14 Td [(Keep) -250 (this)] TJ ET"
            .to_vec(),
    ));
    let annot = doc.add_object(dictionary! {
        "Type" => "Annot", "Subtype" => "FreeText",
        "Rect" => vec![300.into(), 300.into(), 500.into(), 340.into()],
        "Contents" => Object::string_literal("Reviewer: Secret agent\rKeep this"),
        "DA" => Object::string_literal("/Helv 10 Tf 0 g"),
        "AP" => dictionary! { "N" => ap },
    });
    let page = *doc.get_pages().get(&1).unwrap();
    let d = doc.get_object_mut(page).unwrap().as_dict_mut().unwrap();
    let mut annots = d.get(b"Annots").unwrap().as_array().unwrap().clone();
    annots.push(Object::Reference(annot));
    d.set("Annots", annots);
    let mut pdf = Vec::new();
    doc.save_to(&mut pdf).unwrap();

    let r = redact(&pdf, "Secret");
    assert!(
        r.removed
            .iter()
            .any(|x| x.kind == "annotation" && x.location.contains("/AP: cut from 1 string")),
        "{:?}",
        r.removed
    );
    assert!(!all_decoded(&r.pdf).contains("Secret"));
    let text = pdftotext(&r.pdf).unwrap_or_default();
    assert!(
        text.contains("Reviewer:") && text.contains("agent") && text.contains("Keep"),
        "the appearance's other text is still drawn: {text}"
    );
}
