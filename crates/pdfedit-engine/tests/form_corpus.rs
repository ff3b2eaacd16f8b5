//! Form filling on every AcroForm of the corpus: each text, checkbox, radio, combo and list
//! field gets a typed value; the values are read back (PDFium, through `read_text`), and
//! after flattening they are in `pdftotext`'s text with no widget left.

mod common;

use std::collections::BTreeMap;

use pdfedit_engine::edit::{
    edit, Edit, EditOp, EditOptions, EditRequest, EditResult, FieldInput, FormSpec,
};
use pdfedit_engine::{FieldKind, FieldValue, FormField};

/// `qpdf --check` passes (exit 0, or 3 for warnings only); `true` when qpdf is absent.
fn qpdf_ok(pdf: &[u8]) -> bool {
    common::run_tool("qpdf", &["--check"], pdf, &[])
        .is_none_or(|o| matches!(o.status.code(), Some(0 | 3)))
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
#[allow(clippy::too_many_lines)] // a test: one corpus scenario, read top to bottom (tests are exempt, #15 item 9)
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
        // Only a value longer than the field's MaxLen may be refused.
        let by_max_len = |f: &&pdfedit_engine::edit::Failed| {
            f.reason == "value_not_accepted" && f.message.contains("(MaxLen ")
        };
        for f in r.failed.iter().filter(|f| !by_max_len(f)) {
            report.push(format!("{}: {:?}", file.name, f));
        }
        let fill_ms = started.elapsed().as_millis();
        let refused: Vec<&str> = r
            .failed
            .iter()
            .filter(by_max_len)
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
        let text = squash(&common::pdftotext(&flat.pdf, &[]).unwrap_or_default());
        assert!(
            qpdf_ok(&r.pdf),
            "{}: qpdf --check fails on the filled output",
            file.name
        );
        assert!(
            qpdf_ok(&flat.pdf),
            "{}: qpdf --check fails after flatten",
            file.name
        );
        let mut visible = 0;
        let mut texts = 0;
        // Hidden and NoView widgets are not drawn, and not flattened (as Acrobat does).
        let no_view = common::no_view_fields(&pdf, pw);
        let hidden: Vec<&str> = before
            .fields
            .iter()
            .filter(|f| f.hidden || no_view.contains(&f.name))
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

/// What `../shared/tools/corpus-eval` measures for forms, run on the engine: every text field
/// gets `Zq{i}x`, every checkbox `true`; the values are read back, and the text values
/// looked for as-is in `pdftotext` after flattening. Its failures are sorted by cause; only
/// refusals by MaxLen and fields hidden by design may fail.
#[test]
fn corpus_eval_forms_check_fails_only_by_design() {
    if !common::init_pdfium() {
        return;
    }
    let Some(corpus) = common::corpus() else {
        return;
    };
    let (mut ok, mut all) = (0usize, 0usize);
    let mut by_design: BTreeMap<&str, usize> = BTreeMap::new();
    let mut ours = Vec::new();
    for file in &corpus {
        let pdf = std::fs::read(&file.path).expect("corpus file");
        let pw = file.password.as_deref();
        let Ok(before) = pdfedit_engine::read_text(&pdf, pw, None, false, true) else {
            continue;
        };
        let mut values: Vec<(String, FieldInput)> = Vec::new();
        for (i, f) in before.fields.iter().enumerate() {
            let v = match f.kind {
                FieldKind::Text => FieldInput::Text(format!("Zq{i}x")),
                FieldKind::Checkbox => FieldInput::Bool(true),
                _ => continue,
            };
            // The tool sends a JSON object: a repeated name keeps its last value.
            values.retain(|(n, _)| *n != f.name);
            values.push((f.name.clone(), v));
        }
        if values.is_empty() {
            continue;
        }
        let refused: Vec<String> = fill(&pdf, pw, values.clone(), false)
            .failed
            .iter()
            .filter(|f| f.reason == "value_not_accepted" && f.message.contains("MaxLen"))
            .filter_map(|f| f.field.clone())
            .collect();
        // Hidden and NoView widgets are not drawn, and not flattened (as Acrobat does).
        let no_view = common::no_view_fields(&pdf, pw);
        let hidden: Vec<&str> = before
            .fields
            .iter()
            .filter(|f| f.hidden || no_view.contains(&f.name))
            .map(|f| f.name.as_str())
            .collect();
        let r = fill(&pdf, pw, values.clone(), false);
        let got: BTreeMap<String, FieldValue> =
            pdfedit_engine::read_text(&r.pdf, pw, None, false, true)
                .expect("output opens")
                .fields
                .into_iter()
                .map(|f| (f.name, f.value))
                .collect();
        let flat = fill(&pdf, pw, values.clone(), true);
        let text = common::pdftotext(&flat.pdf, &[]).unwrap_or_default();
        let mut tally = |pass: bool, name: &str, what: String| {
            all += 1;
            if pass {
                ok += 1;
            } else if refused.iter().any(|n| n == name) {
                *by_design.entry("MaxLen refusal").or_default() += 1;
            } else if hidden.contains(&name) {
                *by_design.entry("hidden field").or_default() += 1;
            } else {
                ours.push(format!("{}: {name}: {what}", file.name));
            }
        };
        for (name, v) in &values {
            let g = got.get(name);
            let pass = match v {
                FieldInput::Text(t) => g == Some(&FieldValue::Text(t.clone())),
                _ => {
                    matches!(g, Some(FieldValue::Bool(true)))
                        || matches!(g, Some(FieldValue::Text(t)) if !t.is_empty() && t != "Off")
                }
            };
            tally(pass, name, format!("read back {g:?}"));
        }
        for (name, v) in &values {
            if let FieldInput::Text(t) = v {
                tally(
                    text.contains(t.as_str()),
                    name,
                    format!("{t} not in pdftotext after flatten"),
                );
            }
        }
    }
    for o in &ours {
        eprintln!("{o}");
    }
    eprintln!(
        "corpus-eval forms on the engine: {ok}/{all}; by design {by_design:?}; other {}",
        ours.len()
    );
    assert!(all > 2000, "the corpus forms were not found");
    assert!(ours.is_empty(), "{} failures are not by design", ours.len());
}
