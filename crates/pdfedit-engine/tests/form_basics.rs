//! Form filling behaviour on small corpus forms: values drawn without flattening (visible in
//! the render), non-Latin text in a real font, radios by export value, refusals by name.

mod common;

use pdfedit_engine::edit::{edit, Edit, EditOp, EditRequest, EditResult, FieldInput, FormSpec};
use pdfedit_engine::FieldValue;

const LIBRE: &str = "form-libreoffice-writer-needappearances.pdf";
const FANCY: &str = "form-fancy-fields-acrobat-dc.pdf";

fn load(name: &str) -> Option<Vec<u8>> {
    if !common::init_pdfium() {
        return None;
    }
    common::corpus()?;
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(name);
    std::fs::read(path).ok()
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
    let Some(pdf) = load(LIBRE) else { return };
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
    let Some(pdf) = load(FANCY) else { return };
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
    let Some(pdf) = load(FANCY) else { return };
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
    let Some(pdf) = load("form-cra-cannabis-return-combed-13p.pdf") else {
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
        assert!(f.message.contains("limit"), "{}", f.message);
    }
}
