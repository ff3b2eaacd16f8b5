//! Serialising operands and operations, and patching streams byte-exactly.
//!
//! An edit never re-serialises a whole stream: [`patch`] replaces only the byte ranges
//! an editor names, so every untouched byte stays identical (DESIGN.md, "Replace and
//! delete"). The writers below produce the replacement bytes in one canonical form.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::lexer::{is_delimiter, is_whitespace};
use crate::ops::{Op, Operand, PdfString, Value};

/// Fractional digits kept when writing a real. Six is below the precision any viewer
/// uses for coordinates (Annex C suggests about five significant digits for reals), and
/// it keeps values like `0.1 + 0.2` from printing as `0.30000000000000004`.
const FRACTION_DIGITS: usize = 6;

/// Writes a number in the shortest form that round-trips at [`FRACTION_DIGITS`]
/// precision: no exponent (PDF has none, §7.3.3), no trailing zeros, `-0` as `0`, and
/// non-finite values as `0`.
pub fn write_number(out: &mut Vec<u8>, value: f64) {
    if !value.is_finite() {
        out.push(b'0');
        return;
    }
    let mut text = format!("{value:.FRACTION_DIGITS$}");
    if text.contains('.') {
        let trimmed = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(trimmed);
    }
    if text == "-0" {
        text = "0".to_owned();
    }
    out.extend_from_slice(text.as_bytes());
}

/// `write_number` into a new `String`.
pub fn format_number(value: f64) -> String {
    let mut out = Vec::new();
    write_number(&mut out, value);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes a literal string with the fewest escapes that read back to the same bytes
/// (§7.3.4.2): `\` always; `(`/`)` only when unbalanced; CR as `\r` because a raw CR
/// would read back as LF. Every other byte, LF and binary included, is written raw.
pub fn write_literal_string(out: &mut Vec<u8>, bytes: &[u8]) {
    // A `)` is safe raw only if an earlier raw `(` balances it; a `(` only if a later
    // `)` closes it. Decide both in one pass with a stack of open positions.
    let mut escape = vec![false; bytes.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' => open.push(i),
            // The guard pops for every `)`: a matched one just consumes its `(`.
            b')' if open.pop().is_none() => escape[i] = true,
            _ => {}
        }
    }
    for i in open {
        escape[i] = true;
    }
    out.push(b'(');
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'(' | b')' if escape[i] => {
                out.push(b'\\');
                out.push(b);
            }
            _ => out.push(b),
        }
    }
    out.push(b')');
}

/// Writes a hex string, upper-case digits, no white space.
pub fn write_hex_string(out: &mut Vec<u8>, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    out.push(b'<');
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 15)]);
    }
    out.push(b'>');
}

/// Writes a string in the form it had (`hex` or literal).
pub fn write_string(out: &mut Vec<u8>, string: &PdfString) {
    if string.hex {
        write_hex_string(out, &string.bytes);
    } else {
        write_literal_string(out, &string.bytes);
    }
}

/// Writes a name with `#xx` for bytes that cannot appear raw (§7.3.5).
pub fn write_name(out: &mut Vec<u8>, name: &[u8]) {
    out.push(b'/');
    for &b in name {
        if b == b'#' || !(0x21..=0x7e).contains(&b) || is_delimiter(b) || is_whitespace(b) {
            out.extend_from_slice(format!("#{b:02X}").as_bytes());
        } else {
            out.push(b);
        }
    }
}

/// Writes one value; arrays and dictionaries with single spaces between items.
pub fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Integer(i) => out.extend_from_slice(i.to_string().as_bytes()),
        Value::Real(r) => write_number(out, *r),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Null => out.extend_from_slice(b"null"),
        Value::Name(n) => write_name(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 && needs_space(out.last().copied(), &item.value) {
                    out.push(b' ');
                }
                write_value(out, &item.value);
            }
            out.push(b']');
        }
        Value::Dict(entries) => {
            out.extend_from_slice(b"<<");
            for (key, item) in entries {
                write_name(out, key);
                if needs_space(out.last().copied(), &item.value) {
                    out.push(b' ');
                }
                write_value(out, &item.value);
            }
            out.extend_from_slice(b">>");
        }
    }
}

/// Whether a separator is needed between what was written last and the next value:
/// only when both sides are regular characters (`1 2`, `/A 1`), never next to a
/// delimiter (`(a)-20(b)`, `/A/B`).
fn needs_space(prev: Option<u8>, next: &Value) -> bool {
    let prev_regular = prev.is_some_and(|b| !is_delimiter(b) && !is_whitespace(b));
    let next_regular = matches!(
        next,
        Value::Integer(_) | Value::Real(_) | Value::Bool(_) | Value::Null
    );
    prev_regular && next_regular
}

/// Serialises operands followed by an operator, separated by single spaces:
/// `write_op(&[1, 2], b"Td")` gives `1 2 Td`.
pub fn write_op(operands: &[Value], operator: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for value in operands {
        write_value(&mut out, value);
        out.push(b' ');
    }
    out.extend_from_slice(operator);
    out
}

/// Re-serialises a parsed op canonically from its operands and operator.
pub fn write_parsed_op(op: &Op) -> Vec<u8> {
    let values: Vec<Value> = op
        .operands
        .iter()
        .map(|o: &Operand| o.value.clone())
        .collect();
    write_op(&values, op.kind.operator())
}

/// One element of a `TJ` array to build.
#[derive(Debug, Clone, PartialEq)]
pub enum TjItem {
    /// Character codes to show.
    Text(Vec<u8>),
    /// An adjustment in thousandths of text space (positive moves left in horizontal
    /// writing, §9.4.3).
    Kern(f64),
}

/// Builds a `TJ` array such as `[(Hel)20(lo)]` from items; strings written as hex when
/// `hex` (two-byte CIDs read better as hex), zero kerns dropped.
pub fn tj_array(items: &[TjItem], hex: bool) -> Vec<u8> {
    let mut out = vec![b'['];
    for item in items {
        match item {
            TjItem::Text(bytes) if hex => write_hex_string(&mut out, bytes),
            TjItem::Text(bytes) => write_literal_string(&mut out, bytes),
            TjItem::Kern(k) if *k == 0.0 => {}
            TjItem::Kern(k) => {
                if out.last().is_some_and(|&b| !is_delimiter(b)) {
                    out.push(b' ');
                }
                write_number(&mut out, *k);
            }
        }
    }
    out.push(b']');
    out
}

/// `tj_array` from `(codes, kern after them)` pairs.
pub fn tj_array_from_pairs(pairs: &[(Vec<u8>, f64)], hex: bool) -> Vec<u8> {
    let items: Vec<TjItem> = pairs
        .iter()
        .flat_map(|(text, kern)| [TjItem::Text(text.clone()), TjItem::Kern(*kern)])
        .collect();
    tj_array(&items, hex)
}

/// Replaces byte ranges of `original`, leaving every other byte as it was.
///
/// Edits may come in any order; they are applied by start offset. Empty ranges are
/// insertions (several at one offset keep their given order). Overlapping ranges or a
/// range past the end are errors: silently merging them would corrupt the stream.
pub fn patch(original: &[u8], edits: &[(Range<usize>, Vec<u8>)]) -> Result<Vec<u8>> {
    let mut order: Vec<&(Range<usize>, Vec<u8>)> = edits.iter().collect();
    order.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = Vec::with_capacity(original.len());
    let mut cursor = 0usize;
    let mut previous: Option<&Range<usize>> = None;
    for (range, replacement) in order {
        if range.start > range.end || range.end > original.len() {
            return Err(Error::EditOutOfBounds {
                range: range.clone(),
                len: original.len(),
            });
        }
        if range.start < cursor {
            return Err(Error::OverlappingEdits {
                first: previous.cloned().unwrap_or(0..0),
                second: range.clone(),
            });
        }
        out.extend_from_slice(&original[cursor..range.start]);
        out.extend_from_slice(replacement);
        cursor = range.end;
        previous = Some(range);
    }
    out.extend_from_slice(&original[cursor..]);
    Ok(out)
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
