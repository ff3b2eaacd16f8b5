//! Form filling behaviour on small corpus forms: values drawn without flattening (visible in
//! the render), non-Latin text in a real font, radios by export value, refusals by name.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, EditResult, FieldInput, FormSpec};
use pdfedit_engine::FieldValue;

const LIBRE: &str = "form-libreoffice-writer-needappearances.pdf";
const FANCY: &str = "form-fancy-fields-acrobat-dc.pdf";

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

/// Dark pixels (any channel below 128) of a PNG.
fn dark_pixels(png_bytes: &[u8]) -> usize {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().expect("png");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("frame");
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| p.iter().take(3).any(|&c| c < 128))
        .count()
}

fn value(pdf: &[u8], name: &str) -> Option<FieldValue> {
    pdfedit_engine::read_text(pdf, None, None, false, true)
        .expect("fields")
        .fields
        .into_iter()
        .find(|f| f.name == name)
        .map(|f| f.value)
}

#[test]
fn values_are_drawn_without_flattening_and_greek_gets_a_real_font() {
    let Some(pdf) = common::load(LIBRE) else {
        return;
    };
    let r = fill(
        &pdf,
        &[
            ("Last Name", FieldInput::Text("Ελένη Παπαδοπούλου".into())),
            ("gdpr", FieldInput::Bool(true)),
        ],
        false,
    );
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert_eq!(r.changes.len(), 2);
    for c in &r.changes {
        assert!(c.verified, "{c:?}");
        // The value shows in the render of the page (more ink than before).
        assert!(
            dark_pixels(&c.after_png) > dark_pixels(&c.before_png) + 20,
            "{:?} is not visible",
            c.field
        );
    }
    let greek = &r.changes[0];
    assert!(
        ["metric-twin", "look-alike"].contains(&greek.font_source),
        "{greek:?}"
    );
    assert!(!greek.font_used.is_empty());
    assert_eq!(
        value(&r.pdf, "Last Name"),
        Some(FieldValue::Text("Ελένη Παπαδοπούλου".into()))
    );
    assert_eq!(value(&r.pdf, "gdpr"), Some(FieldValue::Bool(true)));
}

#[test]
fn radios_take_an_export_value_and_render_checked() {
    let Some(pdf) = common::load(FANCY) else {
        return;
    };
    let name = "Historical Figures 🐺";
    let before = pdfedit_engine::read_text(&pdf, None, None, false, true).expect("fields");
    let radio = before
        .fields
        .iter()
        .find(|f| f.name == name)
        .expect("radio");
    let options = radio.options.clone().expect("radio options");
    assert_eq!(options.len(), 4);
    let pick = options[3].clone();
    assert_ne!(
        Some(FieldValue::Text(pick.clone())),
        Some(radio.value.clone())
    );
    let r = fill(&pdf, &[(name, FieldInput::Text(pick.clone()))], false);
    assert!(r.failed.is_empty(), "{:?}", r.failed);
    assert_eq!(r.changes[0].value, Some(FieldInput::Text(pick.clone())));
    assert_eq!(value(&r.pdf, name), Some(FieldValue::Text(pick)));
    // A value that is not an option is refused by name.
    let r = fill(&pdf, &[(name, FieldInput::Text("Napoleon".into()))], false);
    assert_eq!(r.failed[0].reason, "value_not_accepted");
    assert_eq!(r.failed[0].field.as_deref(), Some(name));
    assert_eq!(r.pdf, pdf);
}

#[test]
fn lists_combos_and_partial_names() {
    let Some(pdf) = common::load(FANCY) else {
        return;
    };
    let r = fill(
        &pdf,
        &[
            ("Which Are Planets? 🌎", FieldInput::Text("Neptune".into())),
            ("Choose A Gundam 🤖", FieldInput::Text("Virtue".into())),
            ("Prefix ⚽️", FieldInput::Text("Dr.".into())),
            (
                "Which Are Planets? 🌎",
                FieldInput::Many(vec!["Earth".into(), "Mars".into()]),
            ),
        ],
        false,
    );
    // The list is single-select: the second value for it is refused, the first stays.
    assert_eq!(r.failed.len(), 1, "{:?}", r.failed);
    assert_eq!(r.failed[0].reason, "value_not_accepted");
    assert_eq!(
        value(&r.pdf, "Which Are Planets? 🌎"),
        Some(FieldValue::List(vec!["Neptune".into()]))
    );
    assert_eq!(
        value(&r.pdf, "Choose A Gundam 🤖"),
        Some(FieldValue::Text("Virtue".into()))
    );
    assert_eq!(
        value(&r.pdf, "Prefix ⚽️"),
        Some(FieldValue::Text("Dr.".into()))
    );
}

#[test]
fn a_text_longer_than_max_len_is_refused_not_truncated() {
    let Some(pdf) = common::load("form-cra-cannabis-return-combed-13p.pdf") else {
        return;
    };
    let fields = pdfedit_engine::read_text(&pdf, None, None, false, true)
        .expect("fields")
        .fields;
    let r = fill(
        &pdf,
        &fields
            .iter()
            .filter(|f| f.kind == pdfedit_engine::FieldKind::Text)
            .map(|f| {
                (
                    f.name.as_str(),
                    FieldInput::Text("0123456789012345678901234567890123456789".into()),
                )
            })
            .collect::<Vec<_>>(),
        false,
    );
    assert!(!r.failed.is_empty());
    for f in &r.failed {
        assert_eq!(f.reason, "value_not_accepted", "{f:?}");
        // The message names the field's MaxLen.
        assert!(f.message.contains("(MaxLen "), "{}", f.message);
    }
}

/// The dark pixels of `bbox` (top-left points) cut to their own bounding box: what a glyph
/// looks like on the render.
fn glyph_bitmap(r: &pdf_render::raster::Raster, bbox: [f64; 4]) -> Vec<Vec<bool>> {
    let [x0, y0, x1, y1] = pdf_render::diff::pixel_boxes(r, &[bbox], 0)[0];
    let stride = r.width as usize * 3;
    let rows: Vec<Vec<bool>> = (y0..y1)
        .map(|y| {
            (x0..x1)
                .map(|x| r.pixels[y * stride + x * 3..][..3].iter().any(|&c| c < 128))
                .collect()
        })
        .collect();
    let rows: Vec<Vec<bool>> = rows.into_iter().filter(|r| r.iter().any(|&d| d)).collect();
    let Some(first) = (0..rows.first().map_or(0, Vec::len)).find(|&c| rows.iter().any(|r| r[c]))
    else {
        return Vec::new();
    };
    let last = (0..rows[0].len())
        .rev()
        .find(|&c| rows.iter().any(|r| r[c]))
        .unwrap_or(first);
    rows.into_iter().map(|r| r[first..=last].to_vec()).collect()
}

/// Greek and accented values on corpus forms whose /DA font (Helvetica, not embedded) has
/// no Greek: drawn in a real font, not tofu. Checked on the flattened page: PDFium's
/// characters there are the value, each has ink, and no two different characters render
/// as the same bitmap (a missing glyph draws the same .notdef box or nothing at all);
/// pdftotext extracts the value too.
#[test]
#[allow(clippy::too_many_lines)] // a test: one corpus scenario, read top to bottom (tests are exempt, #15 item 9)
fn greek_and_accented_values_render_with_real_glyphs_on_corpus_forms() {
    let cases = [
        (
            "form-lu-160f-2019-french.pdf",
            "Élodie Gâteau-Müller Ørsted",
        ),
        ("form-irs-w9-livecycle.pdf", "Ελένη Παπαδοπούλου"),
        (
            "misc-incremental-update-irs-1040v-form.pdf",
            "Ζωή Αθανασίου Ñandú",
        ),
    ];
    for (name, text) in cases {
        let Some(pdf) = common::load(name) else {
            return;
        };
        // The widest visible single-line text field without a MaxLen that would refuse it.
        let fields = pdfedit_engine::read_text(&pdf, None, None, false, true)
            .expect("fields")
            .fields;
        let mut candidates: Vec<&pdfedit_engine::FormField> = fields
            .iter()
            .filter(|f| f.kind == pdfedit_engine::FieldKind::Text && !f.hidden)
            .collect();
        candidates.sort_by(|a, b| b.bbox.width().total_cmp(&a.bbox.width()));
        let (field, r) = candidates
            .iter()
            .map(|f| {
                (
                    f,
                    fill(
                        &pdf,
                        &[(f.name.as_str(), FieldInput::Text(text.into()))],
                        true,
                    ),
                )
            })
            .find(|(_, r)| r.failed.is_empty() && !r.changes.is_empty())
            .expect("a field takes the value");
        let change = &r.changes[0];
        assert!(change.verified, "{name}: {change:?}");
        assert_ne!(change.font_source, "none");
        let live = fill(
            &pdf,
            &[(field.name.as_str(), FieldInput::Text(text.into()))],
            false,
        );
        assert_eq!(
            value(&live.pdf, &field.name),
            Some(FieldValue::Text(text.into())),
            "{name}"
        );
        // pdftotext finds the value in the flattened page.
        let path = std::env::temp_dir().join(format!("pdfedit-greek-{}.pdf", std::process::id()));
        std::fs::write(&path, &r.pdf).expect("temp");
        let out = std::process::Command::new("pdftotext")
            .arg(&path)
            .arg("-")
            .output();
        let _ = std::fs::remove_file(&path);
        if let Ok(out) = out {
            let squash = |s: &str| s.split_whitespace().collect::<String>();
            assert!(
                squash(&String::from_utf8_lossy(&out.stdout)).contains(&squash(text)),
                "{name}: pdftotext misses {text}"
            );
        }
        // PDFium's characters of the page: the value's run, with its glyph boxes.
        let doc = pdf_render::Document::open(&r.pdf, None).expect("opens");
        let chars: Vec<_> = doc
            .page_chars(change.page - 1)
            .expect("chars")
            .into_iter()
            .filter(|c| !c.generated && c.ch.is_some_and(|ch| !ch.is_whitespace()))
            .collect();
        let wanted: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        let start = chars
            .windows(wanted.len())
            .position(|w| {
                w.iter()
                    .map(|c| c.ch.unwrap_or(' '))
                    .eq(wanted.iter().copied())
            })
            .unwrap_or_else(|| panic!("{name}: PDFium does not extract {text}"));
        let run = &chars[start..start + wanted.len()];
        let raster =
            pdf_render::raster::rasterize_page(&r.pdf, None, change.page - 1, 4.0).expect("render");
        // Every glyph has ink, and the different characters have different shapes (ink
        // size on the render, glyph box in the font): .notdef would give one shape for all.
        let mut shapes: BTreeMap<char, (usize, usize, i32, i32)> = BTreeMap::new();
        for c in run {
            let b = c.advance_box;
            let bitmap = glyph_bitmap(&raster, [b.x0, b.y0, b.x1, b.y1].map(f64::from));
            let ch = c.ch.unwrap_or(' ');
            assert!(!bitmap.is_empty(), "{name}: '{ch}' draws no ink");
            let tight = c.bbox;
            let key = (
                bitmap.len(),
                bitmap[0].len(),
                (tight.width() * 10.0).round() as i32,
                (tight.height() * 10.0).round() as i32,
            );
            shapes.entry(ch).or_insert(key);
        }
        let distinct: BTreeSet<_> = shapes.values().collect();
        assert!(
            distinct.len() * 4 > shapes.len() * 3,
            "{name}: {} characters render in only {} shapes: {shapes:?}",
            shapes.len(),
            distinct.len()
        );
        eprintln!(
            "{name}: {text} in {} ({}), {} characters in {} shapes",
            change.font_used,
            change.font_source,
            shapes.len(),
            distinct.len()
        );
    }
}
