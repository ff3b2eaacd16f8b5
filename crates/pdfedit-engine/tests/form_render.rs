//! Form values are visible without flattening, on every AcroForm of the corpus: each text
//! field gets a typed value (cut to its MaxLen), each checkbox `true`, each radio group its
//! first option and each choice field an option other than its current one; every page
//! with a widget is rendered by PDFium with the form cleared (text empty, buttons off) and
//! filled, and each filled widget's rectangle must show new ink.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use pdf_render::raster::{rasterize_page, Raster, VERIFY_PX_PER_PT};
use pdfedit_engine::edit::{
    edit, Edit, EditOp, EditOptions, EditRequest, EditResult, FieldInput, FormSpec,
};
use pdfedit_engine::{FieldKind, FieldValue, FormField};

fn fill(pdf: &[u8], password: Option<&str>, fields: Vec<(String, FieldInput)>) -> EditResult {
    let request = EditRequest {
        password: password.map(String::from),
        edits: vec![Edit {
            op: EditOp::Form,
            form: Some(FormSpec {
                fields,
                flatten: false,
            }),
            ..Edit::default()
        }],
        options: EditOptions {
            break_signature: true,
            ..EditOptions::default()
        },
    };
    edit(pdf, &request).expect("form edit runs")
}

/// The MaxLen a refusal names ("… (MaxLen 4) …").
fn max_len(message: &str) -> Option<usize> {
    let rest = &message[message.find("MaxLen ")? + 7..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The value each field is filled with for the test, and the one that clears it.
fn targets(fields: &[FormField]) -> Vec<(&FormField, FieldInput, Option<FieldInput>)> {
    let mut out = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let opts = f.options.clone().unwrap_or_default();
        let current = match &f.value {
            FieldValue::Text(t) => Some(t.clone()),
            FieldValue::List(l) => l.first().cloned(),
            _ => None,
        };
        let (fill, clear) = match f.kind {
            FieldKind::Text => (
                FieldInput::Text(format!("Zq{i}x")),
                Some(FieldInput::Text(String::new())),
            ),
            FieldKind::Checkbox => (FieldInput::Bool(true), Some(FieldInput::Bool(false))),
            FieldKind::Radio if !opts.is_empty() => (
                FieldInput::Text(opts[0].clone()),
                Some(FieldInput::Text("Off".into())),
            ),
            // A choice field cannot be emptied: it takes an option it does not show yet.
            FieldKind::Combo | FieldKind::List => {
                match opts.iter().find(|o| Some(*o) != current.as_ref()) {
                    Some(o) => (FieldInput::Text(o.clone()), None),
                    None => continue,
                }
            }
            _ => continue,
        };
        out.push((f, fill, clear));
    }
    out
}

/// Pixels of `bbox` (top-left points) where the two renders differ clearly, and the dark
/// pixels (any channel below 128) of each.
fn ink(before: &Raster, after: &Raster, bbox: [f64; 4]) -> (usize, usize, usize) {
    let [x0, y0, x1, y1] = pdf_render::diff::pixel_boxes(before, &[bbox], 0)[0];
    let stride = before.width as usize * 3;
    let (mut changed, mut dark_before, mut dark_after) = (0, 0, 0);
    for y in y0..y1 {
        for x in x0..x1 {
            let i = y * stride + x * 3;
            let (b, a) = (&before.pixels[i..i + 3], &after.pixels[i..i + 3]);
            if b.iter().zip(a).any(|(p, q)| p.abs_diff(*q) > 48) {
                changed += 1;
            }
            dark_before += usize::from(b.iter().any(|&c| c < 128));
            dark_after += usize::from(a.iter().any(|&c| c < 128));
        }
    }
    (changed, dark_before, dark_after)
}

#[derive(Default, Clone, Copy)]
struct Tally {
    ok: usize,
    all: usize,
}

#[test]
#[allow(clippy::too_many_lines)] // a test: one corpus scenario, read top to bottom (tests are exempt, #15 item 9)
fn every_corpus_form_value_is_visible_without_flattening() {
    if !common::init_pdfium() {
        return;
    }
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut report = Vec::new();
    let mut total = Tally::default();
    for file in &corpus {
        let pdf = std::fs::read(&file.path).expect("corpus file");
        let pw = file.password.as_deref();
        let Ok(before) = pdfedit_engine::read_text(&pdf, pw, None, false, true) else {
            continue;
        };
        let mut plan = targets(&before.fields);
        if plan.is_empty() {
            continue;
        }
        let request = |plan: &[(&FormField, FieldInput, Option<FieldInput>)]| {
            plan.iter()
                .map(|(f, v, _)| (f.name.clone(), v.clone()))
                .collect::<Vec<_>>()
        };
        let mut filled = fill(&pdf, pw, request(&plan));
        // A value longer than the field's MaxLen is refused by name; it is cut to fit.
        let cut: BTreeMap<String, usize> = filled
            .failed
            .iter()
            .filter(|f| f.reason == "value_not_accepted")
            .filter_map(|f| Some((f.field.clone()?, max_len(&f.message)?)))
            .collect();
        if !cut.is_empty() {
            for (f, v, _) in &mut plan {
                if let (Some(&n), FieldInput::Text(t)) = (cut.get(&f.name), &*v) {
                    *v = FieldInput::Text(t.chars().take(n.max(1)).collect());
                }
            }
            filled = fill(&pdf, pw, request(&plan));
        }
        let failed: BTreeSet<&str> = filled
            .failed
            .iter()
            .filter_map(|f| f.field.as_deref())
            .collect();
        for f in &filled.failed {
            report.push(format!(
                "{}: {} refused: {}",
                file.name, f.reason, f.message
            ));
        }
        let cleared = fill(
            &pdf,
            pw,
            plan.iter()
                .filter_map(|(f, _, c)| Some((f.name.clone(), c.clone()?)))
                .collect(),
        );
        if let Ok(dir) = std::env::var("FORM_RENDER_DUMP") {
            std::fs::write(format!("{dir}/{}-filled.pdf", file.name), &filled.pdf).unwrap();
            std::fs::write(format!("{dir}/{}-cleared.pdf", file.name), &cleared.pdf).unwrap();
        }
        let pages: BTreeSet<u32> = filled.changes.iter().map(|c| c.page).collect();
        let mut renders = BTreeMap::new();
        for &p in &pages {
            let b = rasterize_page(&cleared.pdf, pw, p - 1, VERIFY_PX_PER_PT).expect("render");
            let a = rasterize_page(&filled.pdf, pw, p - 1, VERIFY_PX_PER_PT).expect("render");
            renders.insert(p, (b, a));
        }
        // Where each value shows: the change's box (a radio group's chosen button).
        let shown: BTreeMap<&str, (u32, [f64; 4])> = filled
            .changes
            .iter()
            .filter_map(|c| Some((c.field.as_deref()?, (c.page, c.bbox))))
            .collect();
        let no_view = common::no_view_fields(&pdf, pw);
        let mut kinds: BTreeMap<&str, Tally> = BTreeMap::new();
        let mut hidden = 0;
        for (f, v, _) in &plan {
            if f.hidden || no_view.contains(&f.name) {
                hidden += 1;
                continue;
            }
            let tally = kinds.entry(f.kind.as_str()).or_default();
            tally.all += 1;
            total.all += 1;
            if failed.contains(f.name.as_str()) {
                continue;
            }
            let Some(&(page, bbox)) = shown.get(f.name.as_str()) else {
                report.push(format!("{}: {} has no change entry", file.name, f.name));
                continue;
            };
            let Some((b, a)) = renders.get(&page) else {
                report.push(format!(
                    "{}: {} shown on page {page}, not rendered",
                    file.name, f.name
                ));
                continue;
            };
            let (changed, dark_b, dark_a) = ink(b, a, bbox);
            // A glyph of a 4-point value at 2 px/pt is tens of pixels; a check mark more.
            let visible = changed >= 8;
            if visible {
                tally.ok += 1;
                total.ok += 1;
            } else {
                report.push(format!(
                    "{}: {} ({}) = {v:?} shows no new ink on page {} in {bbox:?}: {changed} px changed, dark {dark_b} -> {dark_a}",
                    file.name,
                    f.name,
                    f.kind.as_str(),
                    page
                ));
            }
        }
        let counts: Vec<String> = kinds
            .iter()
            .map(|(k, t)| format!("{k} {}/{}", t.ok, t.all))
            .collect();
        eprintln!(
            "{}: {}, {} cut to MaxLen, {hidden} hidden or NoView (not shown on screen by design)",
            file.name,
            counts.join(", "),
            cut.len()
        );
    }
    for r in &report {
        eprintln!("{r}");
    }
    eprintln!(
        "total visible without flattening {}/{}",
        total.ok, total.all
    );
    assert!(total.all > 1000, "the corpus forms were not found");
    assert_eq!(
        total.ok,
        total.all,
        "{} values are not visible",
        report.len()
    );
}
