//! `options.template_cache` (a batch's records reuse the renders of the template's
//! unedited pages): every record's result is the one an uncached edit gives (output bytes,
//! extracted text, changes, failures, warnings), on a corpus invoice and on a generated
//! one, with two edits a record; and the cache is used (renders before, and the template's
//! page models and fonts).

mod common;

use pdfedit_engine::edit::{
    edit, facts_gathered, template_cache_hits, template_models_taken, Edit, EditOp, EditOptions,
    EditRequest,
};

/// One record's request: each `(find, replace)` a replace edit.
fn record(pairs: &[(&str, String)], cached: bool) -> EditRequest {
    EditRequest {
        password: None,
        edits: pairs
            .iter()
            .zip(0..)
            .map(|((find, replace), index)| Edit {
                index,
                op: EditOp::Replace,
                find: (*find).into(),
                replace: replace.clone(),
                ..Edit::default()
            })
            .collect(),
        options: EditOptions {
            template_cache: cached,
            ..EditOptions::default()
        },
    }
}

/// Runs `records` records of `pdf` without and with the cache and compares them.
fn same_with_cache(pdf: &[u8], records: &[Vec<(&str, String)>]) {
    let before = template_cache_hits();
    let models_before = template_models_taken();
    let mut cached_gathers = 0;
    for (i, pairs) in records.iter().enumerate() {
        let plain = edit(pdf, &record(pairs, false)).expect("uncached edit runs");
        let gathered = facts_gathered();
        let cached = edit(pdf, &record(pairs, true)).expect("cached edit runs");
        cached_gathers += facts_gathered() - gathered;
        assert!(
            !plain.changes.is_empty() && plain.unmatched.is_empty(),
            "record {i}: the edits applied: {:?} {:?}",
            plain.failed,
            plain.unmatched
        );
        if let (Some(a), Some(b)) = (
            common::pdftotext(&plain.pdf, &[]),
            common::pdftotext(&cached.pdf, &[]),
        ) {
            assert_eq!(a, b, "record {i}: the text differs");
            for (_, replace) in pairs {
                assert!(a.contains(replace.as_str()), "record {i}: {replace} in {a}");
            }
        }
        assert_eq!(
            common::untimed(plain),
            common::untimed(cached),
            "record {i}"
        );
    }
    // Every record after the first took its renders before from the cache.
    let hits = template_cache_hits() - before;
    assert!(
        hits >= records.len() as u64 - 1,
        "{hits} cache hits over {} records",
        records.len()
    );
    // And every record after the first started from the template's page models.
    let taken = template_models_taken() - models_before;
    assert!(
        taken >= records.len() as u64 - 1,
        "{taken} runs from kept models over {} records",
        records.len()
    );
    // Those records took the template's classification with its models (their flags are
    // compared above): at most the first cached record gathered the document's facts.
    assert!(
        cached_gathers <= 1,
        "{cached_gathers} classifications over {} cached records",
        records.len()
    );
}

#[test]
fn corpus_invoice_cached_as_uncached() {
    let Some(pdf) = common::load("doc-invoice-itextsharp-demo.pdf") else {
        return;
    };
    let records: Vec<_> = (0..4)
        .map(|i| {
            vec![
                ("Bayside Wholesale", format!("Client {i} Wholesale")),
                ("INV-0046", format!("INV-{:04}", 100 + i)),
            ]
        })
        .collect();
    same_with_cache(&pdf, &records);
}

#[test]
fn generated_invoice_cached_as_uncached() {
    if !common::init_pdfium() {
        return;
    }
    let mut c = String::from("BT /F1 11 Tf 14 TL 56 740 Td\n");
    for l in [
        "ACME Tools Ltd",
        "INVOICE No. 2026-0117",
        "Bill to: Jane Customer",
        "Hammer            2      24.00",
        "Total due: EUR 48.00",
    ] {
        c.push_str(&format!("({l}) Tj T*\n"));
    }
    c.push_str("ET\n");
    let pdf = common::helvetica_page(c.as_bytes(), 612, 792);
    let records: Vec<_> = ["Ann Lee", "Bartholomew Oyelaran-Smith", "Zo"]
        .iter()
        .zip(0..)
        .map(|(name, i)| {
            vec![
                ("Jane Customer", (*name).to_string()),
                ("2026-0117", format!("2026-{:04}", 200 + i)),
            ]
        })
        .collect();
    same_with_cache(&pdf, &records);
}

/// An 18-page form whose phrase is on several pages: each page's commit changes the
/// current bytes, so a later page's render before must not come from the template.
#[test]
fn multi_page_form_cached_as_uncached() {
    let Some(pdf) = common::load("form-cms1490s-medicare-18p-partly-filled.pdf") else {
        return;
    };
    let records: Vec<_> = (0..2)
        .map(|i| {
            vec![(
                "Medicare Administrative Contractor",
                format!("Medicare Administrative Contract{i}r"),
            )]
        })
        .collect();
    same_with_cache(&pdf, &records);
}
