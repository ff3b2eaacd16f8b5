//! Tests on one line of the text layer: IBANs, MRZ lines, titles, column headers, totals.

/// The line in lower case with runs of white space made one space.
///
/// Every test of every line of the first pages normalises its line, on every edit: an
/// ASCII line (most) is done in one pass into one string; any other goes through the
/// Unicode lower-casing of the whole string (a final sigma depends on what follows it).
fn norm(line: &str) -> String {
    if !line.is_ascii() {
        return line
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
    }
    let mut out = String::with_capacity(line.len());
    for word in line.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out.make_ascii_lowercase();
    out
}

/// Whether `word` occurs in `hay` as whole words (`hay` normalised, `word` lower case).
fn has_word(hay: &str, word: &str) -> bool {
    let bytes = hay.as_bytes();
    hay.match_indices(word).any(|(at, _)| {
        let before = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        let end = at + word.len();
        let after = end >= bytes.len() || !bytes[end].is_ascii_alphanumeric();
        before && after
    })
}

/// Whether the line holds any of `words` (lower case) as whole words.
pub(super) fn has_any(line: &str, words: &[&str]) -> bool {
    let n = norm(line);
    words.iter().any(|w| has_word(&n, w))
}

fn count_of(line: &str, words: &[&str]) -> usize {
    let n = norm(line);
    words.iter().filter(|w| has_word(&n, w)).count()
}

/// A valid IBAN in the line (ISO 13616: country, check digits, 11 to 30 alphanumerics,
/// written with or without groups of four; the mod-97 check must hold), without spaces.
pub(super) fn find_iban(line: &str) -> Option<String> {
    let chars: Vec<char> = line.chars().collect();
    for start in 0..chars.len() {
        if start > 0 && chars[start - 1].is_ascii_alphanumeric() {
            continue;
        }
        if !(chars[start].is_ascii_uppercase()
            && chars.get(start + 1).is_some_and(char::is_ascii_uppercase)
            && chars.get(start + 2).is_some_and(char::is_ascii_digit)
            && chars.get(start + 3).is_some_and(char::is_ascii_digit))
        {
            continue;
        }
        // Take alphanumerics, allowing single spaces between groups.
        let mut compact = String::new();
        let mut i = start;
        while i < chars.len() && compact.len() < 34 {
            let c = chars[i];
            if c.is_ascii_digit() || c.is_ascii_uppercase() {
                compact.push(c);
            } else if c == ' ' && chars.get(i + 1).is_some_and(char::is_ascii_alphanumeric) {
            } else {
                break;
            }
            i += 1;
        }
        // The longest prefix of 15 to 34 characters that checks out.
        for len in (15..=compact.len()).rev() {
            if iban_checks(&compact[..len]) {
                return Some(compact[..len].to_string());
            }
        }
    }
    None
}

/// The mod-97 check of ISO 7064 on an IBAN without spaces.
fn iban_checks(iban: &str) -> bool {
    if iban.len() < 15 || iban.len() > 34 {
        return false;
    }
    let moved = iban[4..].chars().chain(iban[..4].chars());
    let mut rest: u32 = 0;
    for c in moved {
        let v = match c.to_digit(36) {
            Some(v) => v,
            None => return false,
        };
        rest = if v < 10 {
            (rest * 10 + v) % 97
        } else {
            (rest * 100 + v) % 97
        };
    }
    rest == 1
}

/// An account-number label followed by digits.
pub(super) fn is_account_line(line: &str) -> bool {
    let n = norm(line);
    let labels = [
        "account number",
        "account no",
        "account #",
        "a/c no",
        "acct no",
        "kontonummer",
        "numéro de compte",
    ];
    labels.iter().any(|l| {
        n.find(l).is_some_and(|at| {
            n[at + l.len()..]
                .chars()
                .filter(char::is_ascii_digit)
                .count()
                >= 6
        })
    })
}

/// A statement's title: "statement of account", "account statement", "bank statement".
pub(super) fn is_statement_title(line: &str) -> bool {
    let n = norm(line);
    [
        "account statement",
        "statement of account",
        "bank statement",
        "ledger statement",
        "kontoauszug",
        "relevé de compte",
        "estado de cuenta",
    ]
    .iter()
    .any(|w| n.contains(w))
        || (has_word(&n, "statement") && (has_word(&n, "period") || has_word(&n, "account")))
}

/// A transaction table's header: at least three of date, description, debit, credit,
/// balance, withdrawal(s), deposit(s), with debit/credit or withdrawal/deposit among them.
pub(super) fn is_transaction_header(line: &str) -> bool {
    let sides = count_of(
        line,
        &[
            "debit",
            "credit",
            "withdrawal",
            "withdrawals",
            "deposit",
            "deposits",
            "dr",
            "cr",
        ],
    );
    let others = count_of(
        line,
        &[
            "date",
            "description",
            "particulars",
            "balance",
            "narration",
            "details",
        ],
    );
    sides >= 2 && sides + others >= 3
}

/// An opening or closing balance line.
pub(super) fn is_balance_line(line: &str) -> bool {
    let n = norm(line);
    [
        "opening balance",
        "closing balance",
        "balance brought forward",
        "balance carried forward",
        "previous balance",
        "new balance",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// A line of a machine-readable zone (ICAO 9303): 30, 36 or 44 characters of A–Z, 0–9
/// and `<`, with fillers.
pub(super) fn is_mrz_line(line: &str) -> bool {
    let t: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let ok = t
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '<');
    let fillers = t.chars().filter(|&c| c == '<').count();
    ok && (28..=46).contains(&t.len()) && fillers >= 2 && t.contains("<<")
}

/// The title of an identity document.
pub(super) fn is_id_title(line: &str) -> bool {
    let n = norm(line);
    n.len() < 60
        && [
            "passport",
            "identity card",
            "national id",
            "id card",
            "driver's license",
            "driver license",
            "driving licence",
            "residence permit",
            "personalausweis",
            "carte nationale d'identité",
        ]
        .iter()
        .any(|w| n.contains(w))
}

/// Contract wording (whole words: "Contractor" is no contract).
pub(super) fn is_contract_line(line: &str) -> bool {
    has_any(
        line,
        &[
            "agreement",
            "contract",
            "the parties",
            "hereby agree",
            "in witness whereof",
            "terms and conditions",
            "hereinafter",
            "the undersigned",
        ],
    )
}

/// A signature line: "Signature", "Signed", "Sign here" with a rule of underscores or dots.
pub(super) fn is_signature_line(line: &str) -> bool {
    let n = norm(line);
    let label = ["signature", "signed", "sign here", "signed by"]
        .iter()
        .any(|w| n.contains(w));
    label && (n.contains("____") || n.contains("....") || n.contains("…"))
}

/// An invoice's or receipt's title word.
pub(super) fn is_invoice_title(line: &str) -> bool {
    has_any(
        line,
        &[
            "invoice",
            "tax invoice",
            "receipt",
            "bill to",
            "rechnung",
            "facture",
            "factura",
        ],
    )
}

/// A totals line: total, subtotal, amount due, balance due … with an amount on it.
pub(super) fn is_total_line(line: &str) -> bool {
    let n = norm(line);
    let label = [
        "total",
        "subtotal",
        "sub total",
        "grand total",
        "amount due",
        "balance due",
        "total due",
        "gesamtbetrag",
        "montant total",
    ]
    .iter()
    .any(|w| has_word(&n, w));
    label && has_amount(&n)
}

/// A money amount: digits with two decimals (`1,250.00`, `12,50`), not a percentage.
fn has_amount(n: &str) -> bool {
    let b = n.as_bytes();
    (0..b.len()).any(|i| {
        (b[i] == b'.' || b[i] == b',')
            && i > 0
            && b[i - 1].is_ascii_digit()
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
            && b.get(i + 2).is_some_and(u8::is_ascii_digit)
            && !b
                .get(i + 3)
                .is_some_and(|c| c.is_ascii_digit() || *c == b'%')
    })
}

/// Seal wording: seal, notary, notarised, apostille, official stamp, L.S.
pub(super) fn is_seal_line(line: &str) -> bool {
    has_any(
        line,
        &[
            "seal",
            "official seal",
            "notary",
            "notary public",
            "notarized",
            "notarised",
            "apostille",
            "official stamp",
            "l.s.",
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ibans() {
        assert_eq!(
            find_iban("IBAN GB82 WEST 1234 5698 7654 32 BIC X").as_deref(),
            Some("GB82WEST12345698765432")
        );
        assert_eq!(find_iban("GB82WEST12345698765433"), None);
        assert_eq!(find_iban("Reference AB12 and nothing"), None);
    }

    #[test]
    fn amounts_and_totals() {
        assert!(is_total_line("Total 1,250.00"));
        assert!(is_total_line("Amount due: 12,50 EUR"));
        assert!(!is_total_line("Total pages 12"));
        assert!(!is_total_line("totally 12.00"));
        assert!(!is_total_line("Total sales tax 9.25%"));
    }

    #[test]
    fn mrz() {
        assert!(is_mrz_line("IDUTOD231458907<<<<<<<<<<<<<<<"));
        assert!(!is_mrz_line("HELLO WORLD"));
        assert!(!is_mrz_line("P<UTO"));
    }
}
