//! The document classifier of SPEC rule 12 (`EditResult::flags`): small built documents
//! for every kind (the corpus has no identity document, no contract with a signature line
//! and no sealed paper with a seal picture), ordinary ones that must stay unflagged, and
//! the table of the whole corpus (printed with `--nocapture`), checked against what each
//! corpus document is.

mod common;

use lopdf::{dictionary, Document, Object, Stream};
use pdfedit_engine::edit::{edit, Edit, EditOp, EditOptions, EditRequest, EditResult};

/// Content drawing `lines` in Helvetica 11, one under the other from the top of a Letter page.
fn content(lines: &[&str]) -> Vec<u8> {
    let mut c = String::from("BT /F1 11 Tf 14 TL 56 740 Td\n");
    for l in lines {
        let escaped = l
            .replace('\\', "\\\\")
            .replace('(', "\\(")
            .replace(')', "\\)");
        c.push_str(&format!("({escaped}) Tj T*\n"));
    }
    c.push_str("ET\n");
    c.into_bytes()
}

fn page(lines: &[&str]) -> Vec<u8> {
    common::helvetica_page(&content(lines), 612, 792)
}

/// The document with `f` applied to its only page dictionary and its catalog.
fn with(pdf: &[u8], f: impl FnOnce(&mut Document, lopdf::ObjectId)) -> Vec<u8> {
    let mut doc = Document::load_mem(pdf).expect("loads");
    let page = *doc.get_pages().get(&1).expect("a page");
    f(&mut doc, page);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("saves");
    out
}

/// A page of `lines` carrying one Stamp annotation named `name`.
fn with_stamp(lines: &[&str], name: &str) -> Vec<u8> {
    with(&page(lines), |doc, page| {
        let annot = doc.add_object(dictionary! {
            "Type" => "Annot", "Subtype" => "Stamp", "Name" => Object::Name(name.as_bytes().to_vec()),
            "Rect" => vec![400.into(), 600.into(), 540.into(), 650.into()],
        });
        let p = doc.get_object_mut(page).unwrap().as_dict_mut().unwrap();
        p.set("Annots", vec![Object::Reference(annot)]);
    })
}

/// Flags of `pdf`, from an edit that finds nothing (the document is only classified).
fn classify(pdf: &[u8], password: Option<&str>, signed: bool) -> EditResult {
    let request = EditRequest {
        password: password.map(str::to_string),
        edits: vec![Edit {
            index: 0,
            op: EditOp::Replace,
            find: "\u{2603}no such text\u{2603}".into(),
            replace: "x".into(),
            ..Edit::default()
        }],
        options: EditOptions {
            break_signature: signed,
            ..EditOptions::default()
        },
    };
    edit(pdf, &request).expect("edit runs")
}

fn kinds(r: &EditResult) -> Vec<&'static str> {
    r.flags.iter().map(|f| f.kind).collect()
}

/// A certified copy with a grey 64 × 64 picture, as a scanned round seal would be.
fn sealed_copy() -> Vec<u8> {
    with(
        &page(&[
            "Certified true copy of the original.",
            "Given under my hand and official seal.",
        ]),
        |doc, page| {
            // A 64 × 64 grey picture, as a scanned round seal would be.
            let image = doc.add_object(Stream::new(
                dictionary! {
                    "Type" => "XObject", "Subtype" => "Image", "Width" => 64, "Height" => 64,
                    "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
                },
                vec![128; 64 * 64],
            ));
            let p = doc.get_object_mut(page).unwrap().as_dict_mut().unwrap();
            let res = p.get_mut(b"Resources").unwrap().as_dict_mut().unwrap();
            res.set("XObject", dictionary! { "Seal" => image });
        },
    )
}

/// A lease contract with an (unsigned) signature field.
fn lease_with_signature_field() -> Vec<u8> {
    with(
        &page(&[
            "LEASE CONTRACT",
            "The parties hereby agree to the following terms and conditions.",
        ]),
        |doc, page| {
            let field = doc.add_object(dictionary! {
                "Type" => "Annot", "Subtype" => "Widget", "FT" => "Sig",
                "T" => Object::string_literal("Tenant"), "P" => page,
                "Rect" => vec![56.into(), 100.into(), 256.into(), 140.into()],
            });
            doc.get_object_mut(page)
                .unwrap()
                .as_dict_mut()
                .unwrap()
                .set("Annots", vec![Object::Reference(field)]);
            let form = dictionary! { "Fields" => vec![Object::Reference(field)] };
            let root = doc.trailer.get(b"Root").unwrap().as_reference().unwrap();
            doc.get_object_mut(root)
                .unwrap()
                .as_dict_mut()
                .unwrap()
                .set("AcroForm", form);
        },
    )
}

#[test]
fn built_documents_of_every_kind() {
    if !common::init_pdfium() {
        return;
    }
    let passport = page(&[
        "PASSPORT",
        "Type P   Country UTO   Passport No. L898902C3",
        "Surname ERIKSSON   Given names ANNA MARIA",
        "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
        "L898902C36UTO7408122F1204159ZE184226B<<<<<10",
    ]);
    let statement = page(&[
        "First Example Bank",
        "Account statement for the period 01.10.2026 - 31.10.2026",
        "IBAN: DE89 3704 0044 0532 0130 00",
        "Date        Description             Debit     Credit    Balance",
        "01.10.2026  Opening balance                             1,204.17",
    ]);
    let invoice = page(&[
        "ACME Tools Ltd",
        "INVOICE No. 2026-0117",
        "Item              Qty    Price",
        "Hammer            2      24.00",
        "Total due: EUR 48.00",
    ]);
    let contract = page(&[
        "SERVICE AGREEMENT",
        "This Agreement is made between the Parties named below.",
        "The undersigned agree to the terms set out above.",
        "Signature: ______________________    Date: __________",
    ]);
    let stamped = with_stamp(
        &[
            "Received and checked.",
            "Official stamp of the land registry.",
        ],
        "Approved",
    );
    let sealed = sealed_copy();
    let signature_field = lease_with_signature_field();
    let cases: [(&str, &[u8], &str); 7] = [
        ("passport", &passport, "identity_document"),
        ("statement", &statement, "bank_statement"),
        ("invoice", &invoice, "invoice"),
        ("contract", &contract, "signed_contract"),
        ("stamped", &stamped, "sealed_paper"),
        ("sealed", &sealed, "sealed_paper"),
        ("signature field", &signature_field, "signed_contract"),
    ];
    for (name, pdf, kind) in cases {
        let r = classify(pdf, None, false);
        assert_eq!(kinds(&r), vec![kind], "{name}: {:?}", r.flags);
        assert!(r.flags[0].evidence.contains("page 1") || kind == "signed_contract");
        println!("{name}: {kind} — {}", r.flags[0].evidence);
    }
    let mrz = &classify(&passport, None, false).flags[0].evidence;
    assert!(mrz.contains("MRZ line"), "{mrz}");
    let iban = &classify(&statement, None, false).flags[0].evidence;
    assert!(iban.contains("IBAN DE89370400440532013000"), "{iban}");
    let field = &classify(&signature_field, None, false).flags[0].evidence;
    assert!(field.contains("signature field \"Tenant\""), "{field}");
}

#[test]
fn ordinary_documents_carry_no_flag() {
    if !common::init_pdfium() {
        return;
    }
    let ordinary: [&[&str]; 4] = [
        &[
            "Dear Ms Smith,",
            "Thank you for your letter. The total cost of the trip was lower than planned.",
            "Please find the minutes of the meeting attached.",
            "Yours sincerely, John",
        ],
        // Words of every kind, none with the evidence that would make it one.
        &[
            "Notes on statements, invoices and passports",
            "An invoice lists items; a passport shows a photo; a seal is pressed in wax.",
            "Account numbers are private. The agreement was discussed.",
        ],
        // A filler-free upper-case line is not an MRZ line.
        &["PROCEEDINGS OF THE ANNUAL GENERAL MEETING 2026 ITEM ONE"],
        // A wrong IBAN check digit with an account word is no statement.
        &["Account statement", "IBAN DE88 3704 0044 0532 0130 00"],
    ];
    for lines in ordinary {
        let r = classify(&page(lines), None, false);
        assert!(r.flags.is_empty(), "{lines:?}: {:?}", r.flags);
    }
    // A reviewer's stock rubber stamp on an ordinary page is markup, not a seal.
    let reviewed = with_stamp(
        &["Received and checked.", "Filed under 2026/17."],
        "Approved",
    );
    let r = classify(&reviewed, None, false);
    assert!(r.flags.is_empty(), "approved stamp: {:?}", r.flags);
}

/// What each corpus document is: the flags it must carry. Every other document is
/// ordinary and must carry none.
fn expected(name: &str) -> &'static [&'static str] {
    match name {
        "doc-invoice-itextsharp-demo.pdf" => &["invoice"],
        "doc-ledger-statement-opening-balance.pdf" => &["bank_statement"],
        // Digitally signed: a signature dictionary.
        "sig-certified-docmdp.pdf"
        | "sig-federal-register-gpo-15p.pdf"
        | "sig-kampo-japanese-gazette-encrypted.pdf"
        | "sig-libreoffice-okular-visible.pdf"
        | "sig-pades-lta-3sigs-dss-timestamp.pdf" => &["signed_contract"],
        // annot-many-types (/Sold) and annot-markup-openoffice (/stamp) carry a viewer's
        // rubber stamp on ordinary text: review markup, no seal, no flag.
        _ => &[],
    }
}

#[test]
fn the_corpus_table() {
    if !common::init_pdfium() {
        return;
    }
    let Some(files) = common::corpus() else {
        return;
    };
    let mut wrong = Vec::new();
    println!("| document | flags | evidence |\n|---|---|---|");
    for f in &files {
        let pdf = std::fs::read(&f.path).expect("corpus file");
        let r = classify(&pdf, f.password.as_deref(), true);
        let got = kinds(&r);
        let evidence: Vec<&str> = r.flags.iter().map(|f| f.evidence.as_str()).collect();
        println!(
            "| {} | {} | {} |",
            f.name,
            if got.is_empty() {
                "—".to_string()
            } else {
                got.join(", ")
            },
            evidence.join(" / ").replace('|', "/")
        );
        if got != expected(&f.name) {
            wrong.push(format!(
                "{}: {got:?}, expected {:?}",
                f.name,
                expected(&f.name)
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
