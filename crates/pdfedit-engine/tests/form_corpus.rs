//! Form filling on every AcroForm of the corpus: each text, checkbox, radio, combo and list
//! field gets a typed value; the values are read back (PDFium, through `read_text`), and
//! after flattening they are in `pdftotext`'s text with no widget left.

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use pdfedit_engine::edit::{
    edit, Edit, EditOp, EditOptions, EditRequest, EditResult, FieldInput, FormSpec,
};
use pdfedit_engine::{FieldKind, FieldValue, FormField};

fn pdftotext(pdf: &[u8], tag: &str) -> String {
    let path = std::env::temp_dir().join(format!("pdfedit-form-{}-{tag}.pdf", std::process::id()));
    std::fs::write(&path, pdf).expect("temp file");
    let out = Command::new("pdftotext").arg(&path).arg("-").output();
    let _ = std::fs::remove_file(&path);
    out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// `qpdf --check` passes (exit 0, or 3 for warnings only); `true` when qpdf is absent.
fn qpdf_ok(pdf: &[u8], tag: &str) -> bool {
    let path =
        std::env::temp_dir().join(format!("pdfedit-form-{}-{tag}-q.pdf", std::process::id()));
    std::fs::write(&path, pdf).expect("temp file");
    let out = Command::new("qpdf").arg("--check").arg(&path).output();
    let _ = std::fs::remove_file(&path);
    out.map_or(true, |o| matches!(o.status.code(), Some(0 | 3)))
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A typed test value for every fillable field, and what reading it back must give.
fn values(fields: &[FormField]) -> Vec<(String, FieldInput, FieldValue)> {
    let mut out = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let opts = f.options.clone().unwrap_or_default();
        let v = match f.kind {
            FieldKind::Text => {
                let t = format!("Zq{i}x");
                (FieldInput::Text(t.clone()), FieldValue::Text(t))
            }
            FieldKind::Checkbox => (FieldInput::Bool(true), FieldValue::Bool(true)),
            FieldKind::Radio | FieldKind::Combo if !opts.is_empty() => {
                let o = opts.last().cloned().unwrap_or_default();
                (FieldInput::Text(o.clone()), FieldValue::Text(o))
            }
            FieldKind::List if !opts.is_empty() => {
                let o = opts[0].clone();
                (FieldInput::Text(o.clone()), FieldValue::List(vec![o]))
            }
            _ => continue,
        };
        out.push((f.name.clone(), v.0, v.1));
    }
    out
}

fn fill(
    pdf: &[u8],
    password: Option<&str>,
    fields: Vec<(String, FieldInput)>,
    flatten: bool,
) -> EditResult {
    let request = EditRequest {
        password: password.map(String::from),
        edits: vec![Edit {
            op: EditOp::Form,
            form: Some(FormSpec { fields, flatten }),
            ..Edit::default()
        }],
        options: EditOptions {
            break_signature: true,
            ..EditOptions::default()
        },
    };
    edit(pdf, &request).expect("form edit runs")
}

#[test]
fn every_corpus_form_is_filled_read_back_and_flattened() {
    if !common::init_pdfium() {
        return;
    }
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut report = Vec::new();
    let mut total = (0usize, 0usize);
    for file in &corpus {
        let pdf = std::fs::read(&file.path).expect("corpus file");
        let pw = file.password.as_deref();
        let Ok(before) = pdfedit_engine::read_text(&pdf, pw, None, false, true) else {
            continue;
        };
        let vals = values(&before.fields);
        if vals.is_empty() {
            continue;
        }
        // Values a field cannot take (MaxLen shorter than the test value) are refused by
        // name, never truncated silently.
        let started = std::time::Instant::now();
        let r = fill(
            &pdf,
            pw,
            vals.iter()
                .map(|(n, v, _)| (n.clone(), v.clone()))
                .collect(),
            false,
        );
        for f in r.failed.iter().filter(|f| f.reason != "value_not_accepted") {
            report.push(format!("{}: {:?}", file.name, f));
        }
        let fill_ms = started.elapsed().as_millis();
        let refused: Vec<&str> = r
            .failed
            .iter()
            .filter(|f| f.reason == "value_not_accepted")
            .filter_map(|f| f.field.as_deref())
            .collect();
        let after = pdfedit_engine::read_text(&r.pdf, pw, None, false, true).expect("output opens");
        let got: BTreeMap<&str, &FieldValue> = after
            .fields
            .iter()
            .map(|f| (f.name.as_str(), &f.value))
            .collect();
        assert_eq!(
            after.fields.len(),
            before.fields.len(),
            "{}: a field was lost",
            file.name
        );
        let mut ok = 0;
        for (name, _, want) in &vals {
            if refused.contains(&name.as_str()) {
                continue;
            }
            total.1 += 1;
            if got.get(name.as_str()) == Some(&want) {
                ok += 1;
                total.0 += 1;
            } else {
                report.push(format!(
                    "{}: {name} read back {:?}, want {want:?}",
                    file.name,
                    got.get(name.as_str())
                ));
            }
        }
        // Flattened: the text values are in pdftotext's output and no field is left.
        let flat = fill(
            &pdf,
            pw,
            vals.iter()
                .map(|(n, v, _)| (n.clone(), v.clone()))
                .collect(),
            true,
        );
        let text = squash(&pdftotext(&flat.pdf, "flat"));
        assert!(
            qpdf_ok(&r.pdf, "filled"),
            "{}: qpdf --check fails on the filled output",
            file.name
        );
        assert!(
            qpdf_ok(&flat.pdf, "flat"),
            "{}: qpdf --check fails after flatten",
            file.name
        );
        let mut visible = 0;
        let mut texts = 0;
        let hidden: Vec<&str> = before
            .fields
            .iter()
            .filter(|f| f.hidden)
            .map(|f| f.name.as_str())
            .collect();
        for (name, input, _) in &vals {
            let skip = refused.contains(&name.as_str()) || hidden.contains(&name.as_str());
            if let (FieldInput::Text(t), false) = (input, skip) {
                if t.starts_with("Zq") {
                    texts += 1;
                    if text.contains(t.as_str()) {
                        visible += 1;
                    } else {
                        report.push(format!(
                            "{}: {name}={t} not in pdftotext after flatten",
                            file.name
                        ));
                    }
                }
            }
        }
        let left = pdfedit_engine::read_text(&flat.pdf, pw, None, false, true)
            .expect("flattened output opens")
            .fields
            .len();
        eprintln!(
            "{}: {ok}/{} read back, {visible}/{texts} visible after flatten, {} refused, {left} fields left after flatten, warnings {:?}, fill {fill_ms} ms",
            file.name,
            vals.len() - refused.len(),
            refused.len(),
            flat.warnings
        );
        if !flat.warnings.iter().any(|w| w == "flatten_skipped") {
            assert_eq!(left, 0, "{}: fields left after flatten", file.name);
        }
    }
    for r in &report {
        eprintln!("{r}");
    }
    eprintln!("total read back {}/{}", total.0, total.1);
    assert!(report.is_empty(), "{} values did not land", report.len());
}
