//! Open, classify errors, stable span ids and previews on real-world files.

mod common;

use pdfedit_engine::{open_info, read_text, render, Error, RenderRequest};

fn corpus_file(name: &str) -> Option<Vec<u8>> {
    let files = common::corpus()?;
    let file = files.into_iter().find(|f| f.name == name)?;
    std::fs::read(file.path).ok()
}

#[test]
fn span_ids_are_identical_across_calls() {
    if !common::init_pdfium() {
        return;
    }
    let Some(bytes) = corpus_file("font-type1-pdflatex-4p.pdf") else {
        return;
    };
    let ids = |bytes: &[u8]| -> Vec<String> {
        read_text(bytes, None, None, true, false)
            .expect("reads")
            .pages
            .iter()
            .flat_map(|p| p.spans.iter().map(|s| s.span_id.clone()))
            .collect()
    };
    let first = ids(&bytes);
    assert!(!first.is_empty());
    assert_eq!(first, ids(&bytes));
    let mut unique = first.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), first.len(), "span ids are unique");
}

#[test]
fn encrypted_files_need_their_password() {
    if !common::init_pdfium() {
        return;
    }
    let Some(corpus) = common::corpus() else {
        return;
    };
    for file in corpus.iter().filter(|f| f.encrypted) {
        let bytes = std::fs::read(&file.path).expect("reads");
        match &file.user_password {
            Some(pw) => {
                let info =
                    open_info(&bytes, Some(pw)).unwrap_or_else(|e| panic!("{}: {e}", file.name));
                assert!(info.encrypted, "{}", file.name);
                assert!(
                    matches!(open_info(&bytes, None), Err(Error::Encrypted)),
                    "{} opens without its password",
                    file.name
                );
                assert!(matches!(
                    open_info(&bytes, Some("definitely-wrong")),
                    Err(Error::Encrypted)
                ));
                assert!(matches!(
                    open_info(&bytes, Some("nul\0inside")),
                    Err(Error::Encrypted)
                ));
            }
            // Owner-password-only files open with the empty user password.
            None => {
                let info = open_info(&bytes, None).unwrap_or_else(|e| panic!("{}: {e}", file.name));
                assert!(info.encrypted, "{}", file.name);
            }
        }
        if let Some(owner) = &file.owner_password {
            open_info(&bytes, Some(owner)).unwrap_or_else(|e| panic!("{} owner: {e}", file.name));
        }
    }
}

#[test]
fn non_pdfs_and_damaged_pdfs_are_unsupported() {
    if !common::init_pdfium() {
        return;
    }
    let not_pdf = b"PK\x03\x04 this is a zip, not a PDF".repeat(10);
    assert!(matches!(
        open_info(&not_pdf, None),
        Err(Error::Unsupported(_))
    ));
    assert!(matches!(open_info(b"", None), Err(Error::Unsupported(_))));
    let garbage = b"%PDF-1.7\n\x00\x01\x02 garbage garbage \xff\xfe".repeat(50);
    assert!(matches!(
        open_info(&garbage, None),
        Err(Error::Unsupported(_))
    ));
    if let Some(bytes) = corpus_file("font-type1-pdflatex-4p.pdf") {
        // A truncated file either still opens (PDFium rebuilds the xref) or is Unsupported,
        // but never panics or returns an engine error.
        for cut in [10, 200, bytes.len() / 3, bytes.len() / 2] {
            match read_text(&bytes[..cut], None, None, true, true) {
                Ok(_) | Err(Error::Unsupported(_)) => {}
                Err(e) => panic!("truncated at {cut}: {e}"),
            }
        }
    }
}

fn png_size(png: &[u8]) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png decodes");
    (info.width, info.height)
}

#[test]
fn previews_fit_the_budget_and_keep_the_aspect_ratio() {
    if !common::init_pdfium() {
        return;
    }
    let Some(corpus) = common::corpus() else {
        return;
    };
    for name in [
        "rot-0-90-180-270-pages.pdf",
        "scan-linn-brochure-2col-tiff2pdf.pdf",
        "font-type3-skia-chrome-2p.pdf",
    ] {
        let Some(file) = corpus.iter().find(|f| f.name == name) else {
            continue;
        };
        let bytes = std::fs::read(&file.path).expect("reads");
        let info = open_info(&bytes, None).expect("opens");
        for (i, page) in info.pages.iter().enumerate().take(2) {
            let req = RenderRequest {
                page: i as u32 + 1,
                width: Some(2000),
                highlights: vec![[10.0, 10.0, 200.0, 40.0]],
                ..RenderRequest::default()
            };
            let png = render(&bytes, None, &req).expect("renders");
            assert!(
                png.len() <= 200_000,
                "{name} p{}: {} bytes",
                i + 1,
                png.len()
            );
            let (w, h) = png_size(&png);
            let expected = page.height / page.width;
            let got = h as f32 / w as f32;
            assert!((got - expected).abs() < 0.01, "{name}: {got} vs {expected}");
        }
    }
}

#[test]
fn regions_render_with_their_own_aspect_ratio() {
    if !common::init_pdfium() {
        return;
    }
    let Some(bytes) = corpus_file("font-type1-pdflatex-4p.pdf") else {
        return;
    };
    let req = RenderRequest {
        page: 1,
        region: Some([100.0, 100.0, 300.0, 150.0]),
        width: Some(800),
        max_bytes: Some(50_000),
        ..RenderRequest::default()
    };
    let png = render(&bytes, None, &req).expect("renders");
    assert!(png.len() <= 50_000);
    let (w, h) = png_size(&png);
    assert!((h as f32 / w as f32 - 0.25).abs() < 0.01, "{w}x{h}");
    let bad = RenderRequest {
        page: 99,
        ..RenderRequest::default()
    };
    assert!(matches!(
        render(&bytes, None, &bad),
        Err(Error::InvalidRequest(_))
    ));
}

#[test]
fn signatures_and_forms_are_reported() {
    if !common::init_pdfium() {
        return;
    }
    let Some(corpus) = common::corpus() else {
        return;
    };
    let info_of = |name: &str| {
        let file = corpus.iter().find(|f| f.name == name)?;
        let bytes = std::fs::read(&file.path).ok()?;
        Some((open_info(&bytes, None).expect("opens"), bytes))
    };
    if let Some((info, _)) = info_of("sig-certified-docmdp.pdf") {
        assert_eq!(info.signatures.len(), 1);
        assert_eq!(
            info.signatures[0].sub_filter.as_deref(),
            Some("adbe.pkcs7.detached")
        );
    }
    if let Some((info, _)) = info_of("sig-pades-lta-3sigs-dss-timestamp.pdf") {
        assert_eq!(info.signatures.len(), 3);
    }
    if let Some((info, _)) = info_of("sig-field-unsigned-acrobat.pdf") {
        assert!(info.signatures.is_empty());
    }
    if let Some((info, bytes)) = info_of("form-irs-1040-2019-xfa-hybrid.pdf") {
        assert!(info.has_acro_form && info.has_xfa);
        let fields = read_text(&bytes, None, None, false, true)
            .expect("reads")
            .fields;
        assert!(fields.len() > 50, "{} fields", fields.len());
        let mut names: Vec<_> = fields.iter().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), fields.len(), "one entry per field name");
    }
}
