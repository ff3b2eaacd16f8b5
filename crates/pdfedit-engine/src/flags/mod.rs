//! The document classifier of SPEC rule 12: whether a document is a bank statement, an
//! identity document, a contract with signatures, invoice-like or a sealed paper, each from
//! evidence it can point to (a line of the text layer, a signature dictionary or field, a
//! stamp annotation, an image next to seal words).
//!
//! The rules are deliberately conservative: every flag needs one strong piece of evidence
//! (a valid IBAN, an MRZ line, a signature dictionary, a stamp annotation naming a seal) or two weaker
//! ones that belong together (a statement title and transaction columns; an invoice title
//! and a totals line). An ordinary document (a letter, an article, a tax form) carries no
//! flag. Scanned pages without a text layer are judged by their objects only.

pub(crate) mod gather;
mod text;

pub(crate) use gather::gather;

use crate::types::Flag;

/// What the classifier looks at, gathered from the document by [`gather`].
#[derive(Debug, Default)]
pub(crate) struct Facts {
    /// Text lines of the first pages: (1-based page, line text).
    pub lines: Vec<(u32, String)>,
    /// Pages in the document.
    pub page_count: u32,
    /// Signature dictionaries (signed fields): a description of each.
    pub signatures: Vec<String>,
    /// Signature fields without a value: their names.
    pub signature_fields: Vec<String>,
    /// Stamp annotations: (page, /Name or `stamp`).
    pub stamps: Vec<(u32, String)>,
    /// Pages with a roughly square picture (a seal or a stamp is round or square).
    pub square_images: Vec<u32>,
}

/// Kind names, as the API reports them.
pub(crate) const BANK_STATEMENT: &str = "bank_statement";
pub(crate) const IDENTITY_DOCUMENT: &str = "identity_document";
pub(crate) const SIGNED_CONTRACT: &str = "signed_contract";
pub(crate) const INVOICE: &str = "invoice";
pub(crate) const SEALED_PAPER: &str = "sealed_paper";

/// The flags of a document, each with its evidence; empty for an ordinary document.
pub(crate) fn classify(facts: &Facts) -> Vec<Flag> {
    let mut flags = Vec::new();
    let mut add = |kind: &'static str, evidence: Vec<String>| {
        if !evidence.is_empty() {
            flags.push(Flag {
                kind,
                evidence: evidence.join("; "),
            });
        }
    };
    add(BANK_STATEMENT, bank_statement(facts));
    add(IDENTITY_DOCUMENT, identity_document(facts));
    add(SIGNED_CONTRACT, signed_contract(facts));
    add(INVOICE, invoice(facts));
    add(SEALED_PAPER, sealed_paper(facts));
    flags
}

/// "page N: “text”", the text shortened to a readable length.
fn cite(page: u32, text: &str) -> String {
    let t: String = text.trim().chars().take(60).collect();
    let more = if text.trim().chars().count() > 60 {
        "…"
    } else {
        ""
    };
    format!("page {page}: \"{t}{more}\"")
}

/// The first line for which `test` holds, cited.
fn first(facts: &Facts, test: impl Fn(&str) -> bool) -> Option<String> {
    facts
        .lines
        .iter()
        .find(|(_, l)| test(l))
        .map(|(p, l)| cite(*p, l))
}

/// A valid IBAN or an account-number line, with a statement title or transaction columns
/// (or, without an account, a statement title with transaction columns).
fn bank_statement(facts: &Facts) -> Vec<String> {
    let iban = facts
        .lines
        .iter()
        .find_map(|(p, l)| text::find_iban(l).map(|i| format!("page {p}: IBAN {i}")));
    let account = first(facts, text::is_account_line);
    let title = first(facts, text::is_statement_title);
    let columns = first(facts, text::is_transaction_header);
    let balances = first(facts, text::is_balance_line);
    let context = [title, columns, balances]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
    match (iban.or(account), context.len()) {
        (Some(acct), n) if n >= 1 => std::iter::once(acct).chain(context).collect(),
        (None, n) if n >= 2 => context,
        _ => Vec::new(),
    }
}

/// Machine-readable zone lines; or, on a short document, a document title with the
/// fields every identity document prints.
fn identity_document(facts: &Facts) -> Vec<String> {
    let mrz: Vec<String> = facts
        .lines
        .iter()
        .filter(|(_, l)| text::is_mrz_line(l))
        .map(|(p, l)| format!("page {p}: MRZ line \"{}\"", l.trim()))
        .collect();
    if !mrz.is_empty() {
        return mrz;
    }
    if facts.page_count > 2 {
        return Vec::new();
    }
    let title = first(facts, text::is_id_title);
    let birth = first(facts, |l| text::has_any(l, &["date of birth", "born on"]));
    let expiry = first(facts, |l| {
        text::has_any(
            l,
            &["date of expiry", "expiry date", "expires", "valid until"],
        )
    });
    let other = first(facts, |l| {
        text::has_any(l, &["nationality", "sex", "place of birth"])
    });
    match (title, birth, expiry, other) {
        (Some(t), Some(b), Some(e), Some(o)) => vec![t, b, e, o],
        _ => Vec::new(),
    }
}

/// A signature dictionary (a digitally signed document); or signature fields or signature
/// lines in a document that reads as a contract.
fn signed_contract(facts: &Facts) -> Vec<String> {
    if !facts.signatures.is_empty() {
        return facts.signatures.clone();
    }
    let contract: Vec<String> = facts
        .lines
        .iter()
        .filter(|(_, l)| text::is_contract_line(l))
        .take(2)
        .map(|(p, l)| cite(*p, l))
        .collect();
    if contract.len() < 2 {
        return Vec::new();
    }
    let signed = facts
        .signature_fields
        .first()
        .map(|n| format!("signature field \"{n}\""))
        .or_else(|| first(facts, text::is_signature_line));
    match signed {
        Some(s) => contract.into_iter().chain([s]).collect(),
        None => Vec::new(),
    }
}

/// An invoice or receipt title with a totals line carrying an amount.
fn invoice(facts: &Facts) -> Vec<String> {
    let title = first(facts, text::is_invoice_title);
    let total = first(facts, text::is_total_line);
    match (title, total) {
        (Some(t), Some(s)) => vec![t, s],
        _ => Vec::new(),
    }
}

/// A stamp annotation that names a seal (`/Notary`, `/OfficialSeal`) or sits on a page with
/// seal wording; or seal words on a page that carries a square picture. A viewer's rubber
/// stamp alone (`/Approved`, `/Sold`, `/Draft`: Acrobat's stock stamps) is review markup,
/// not a seal, and flags nothing.
fn sealed_paper(facts: &Facts) -> Vec<String> {
    let seal_line_on = |page: u32| {
        facts
            .lines
            .iter()
            .find(|(p, l)| *p == page && text::is_seal_line(l))
    };
    let mut out: Vec<String> = Vec::new();
    for (p, n) in &facts.stamps {
        if text::is_seal_line(&spaced_name(n)) {
            out.push(format!("page {p}: stamp annotation /{n}"));
        } else if let Some((lp, l)) = seal_line_on(*p) {
            out.push(format!(
                "page {p}: stamp annotation /{n} beside {}",
                cite(*lp, l)
            ));
        }
    }
    for &page in &facts.square_images {
        if let Some((p, l)) = seal_line_on(page) {
            out.push(format!("{} beside a square image", cite(*p, l)));
        }
    }
    out
}

/// A stamp's `/Name` as words: `OfficialSeal` → `Official Seal`, `notary_stamp` → `notary stamp`.
fn spaced_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c == '_' || c == '-' || c == '#' {
            out.push(' ');
            continue;
        }
        if i > 0 && c.is_uppercase() {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(lines: &[&str]) -> Facts {
        Facts {
            lines: lines.iter().map(|l| (1, (*l).to_string())).collect(),
            page_count: 1,
            ..Facts::default()
        }
    }

    fn kinds(f: &Facts) -> Vec<&'static str> {
        classify(f).into_iter().map(|f| f.kind).collect()
    }

    #[test]
    fn an_ordinary_letter_has_no_flag() {
        let f = facts(&[
            "Dear Ms Smith,",
            "Thank you for your letter of 3 March. The total of our expenses was high.",
            "We agree that the parties should meet. Signature of the committee follows.",
            "Yours sincerely",
        ]);
        assert!(kinds(&f).is_empty(), "{:?}", classify(&f));
    }

    #[test]
    fn a_statement_with_an_iban() {
        let f = facts(&[
            "Account statement 01/2026",
            "IBAN: DE89 3704 0044 0532 0130 00",
            "Date Description Debit Credit Balance",
        ]);
        let flags = classify(&f);
        assert_eq!(kinds(&f), vec![BANK_STATEMENT]);
        assert!(flags[0].evidence.contains("DE89370400440532013000"));
        // A wrong check digit is not an IBAN: the columns and title still make a statement.
        let g = facts(&[
            "IBAN: DE88 3704 0044 0532 0130 00",
            "Date Description Amount",
        ]);
        assert!(kinds(&g).is_empty());
    }

    #[test]
    fn mrz_lines_make_an_identity_document() {
        let f = facts(&[
            "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
            "L898902C36UTO7408122F1204159ZE184226B<<<<<10",
        ]);
        assert_eq!(kinds(&f), vec![IDENTITY_DOCUMENT]);
    }

    #[test]
    fn invoices_need_a_title_and_a_total() {
        let f = facts(&[
            "INVOICE No. 2026-17",
            "Item Qty Price",
            "Total due: EUR 1,250.00",
        ]);
        assert_eq!(kinds(&f), vec![INVOICE]);
        assert!(kinds(&facts(&["INVOICE No. 2026-17", "Item Qty Price"])).is_empty());
        assert!(kinds(&facts(&["Total: 12.00"])).is_empty());
    }

    #[test]
    fn contracts_need_contract_words_and_a_signature() {
        let mut f = facts(&[
            "SERVICE AGREEMENT",
            "This Agreement is made between the Parties named below.",
            "Signature: ______________________",
        ]);
        assert_eq!(kinds(&f), vec![SIGNED_CONTRACT]);
        f.lines.pop();
        assert!(kinds(&f).is_empty());
        f.signature_fields.push("Signer1".into());
        assert_eq!(kinds(&f), vec![SIGNED_CONTRACT]);
        let signed = Facts {
            signatures: vec!["signature dictionary (adbe.pkcs7.detached)".into()],
            ..Facts::default()
        };
        assert_eq!(kinds(&signed), vec![SIGNED_CONTRACT]);
        // "Contractor" is not contract wording.
        let mut claim = facts(&[
            "Send the form to your Medicare Administrative Contractor.",
            "Reference the Contractor address table.",
        ]);
        claim.signature_fields.push("Signature Field 1".into());
        assert!(kinds(&claim).is_empty());
    }

    #[test]
    fn stamps_and_seals() {
        // A viewer's stock stamp alone is review markup.
        let f = Facts {
            stamps: vec![(1, "Approved".into()), (1, "Sold".into())],
            ..Facts::default()
        };
        assert!(kinds(&f).is_empty());
        // A stamp named as a seal, or a stamp beside seal wording, is a seal.
        let named = Facts {
            stamps: vec![(1, "NotarySeal".into())],
            ..Facts::default()
        };
        assert_eq!(kinds(&named), vec![SEALED_PAPER]);
        let mut beside = facts(&["Official stamp of the registry office"]);
        beside.stamps.push((1, "stamp".into()));
        assert_eq!(kinds(&beside), vec![SEALED_PAPER]);
        let mut g = facts(&["Witness my hand and official seal"]);
        assert!(kinds(&g).is_empty());
        g.square_images.push(1);
        assert_eq!(kinds(&g), vec![SEALED_PAPER]);
    }
}
