//! Marked content (§14.6): tags, MCIDs and /ActualText (§14.9.4).

use lopdf::{Document, Object};

use super::resources::{resolve_dict, Resources};
use super::ActualText;
use crate::ops::{Operand, Value};

/// One open marked-content sequence.
#[derive(Debug, Clone)]
pub(crate) struct MarkedSequence {
    pub mcid: Option<i64>,
    /// (text, sequence number, no glyph shown in it yet).
    pub actual_text: Option<(String, usize, bool)>,
}

/// Reads MCID and ActualText from a `BDC` property list: an inline dictionary or a
/// name in the resources' /Properties.
pub(crate) fn read_properties(
    doc: &Document,
    resources: &Resources<'_>,
    props: Option<&Operand>,
) -> (Option<i64>, Option<String>) {
    let Some(props) = props else {
        return (None, None);
    };
    match &props.value {
        Value::Dict(_) => {
            let mcid = props.dict_get(b"MCID").and_then(|o| match o.value {
                Value::Integer(i) => Some(i),
                _ => None,
            });
            let text = props
                .dict_get(b"ActualText")
                .and_then(Operand::as_string)
                .map(|s| decode_text_string(&s.bytes));
            (mcid, text)
        }
        Value::Name(name) => {
            let Some(dict) = resources
                .lookup(doc, b"Properties", name)
                .and_then(|o| resolve_dict(doc, o))
            else {
                return (None, None);
            };
            let mcid = dict.get(b"MCID").and_then(Object::as_i64).ok();
            let text = dict
                .get_deref(b"ActualText", doc)
                .and_then(Object::as_str)
                .ok()
                .map(decode_text_string);
            (mcid, text)
        }
        _ => (None, None),
    }
}

/// Encodes `text` as a PDF text string (§7.9.2.2): PDFDocEncoding when it is plain ASCII
/// and `utf16` is not asked for, else UTF-16BE with a byte order mark.
pub fn encode_text_string(text: &str, utf16: bool) -> Vec<u8> {
    if !utf16 && text.is_ascii() {
        return text.as_bytes().to_vec();
    }
    let mut out = vec![0xFE, 0xFF];
    for u in text.encode_utf16() {
        out.extend_from_slice(&u.to_be_bytes());
    }
    out
}

/// Decodes a PDF text string (§7.9.2.2): UTF-16BE with BOM, UTF-8 with BOM (PDF 2.0),
/// else PDFDocEncoding.
pub fn decode_text_string(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xfe, 0xff]) {
        let units: Vec<u16> = rest
            .chunks(2)
            .map(|c| u16::from_be_bytes([c[0], c.get(1).copied().unwrap_or(0)]))
            .collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        return String::from_utf8_lossy(rest).into_owned();
    }
    bytes.iter().map(|&b| pdf_doc_char(b)).collect()
}

/// PDFDocEncoding (Annex D.2): Latin-1 except 0x18–0x1F and 0x80–0xA0.
fn pdf_doc_char(b: u8) -> char {
    const LOW: [char; 8] = [
        '\u{02D8}', '\u{02C7}', '\u{02C6}', '\u{02D9}', '\u{02DD}', '\u{02DB}', '\u{02DA}',
        '\u{02DC}',
    ];
    const HIGH: [char; 33] = [
        '\u{2022}', '\u{2020}', '\u{2021}', '\u{2026}', '\u{2014}', '\u{2013}', '\u{0192}',
        '\u{2044}', '\u{2039}', '\u{203A}', '\u{2212}', '\u{2030}', '\u{201E}', '\u{201C}',
        '\u{201D}', '\u{2018}', '\u{2019}', '\u{201A}', '\u{2122}', '\u{FB01}', '\u{FB02}',
        '\u{0141}', '\u{0152}', '\u{0160}', '\u{0178}', '\u{017D}', '\u{0131}', '\u{0142}',
        '\u{0153}', '\u{0161}', '\u{017E}', '\u{FFFD}', '\u{20AC}',
    ];
    match b {
        0x18..=0x1f => LOW[usize::from(b - 0x18)],
        0x80..=0xa0 => HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

/// The MCID and ActualText a glyph shown now gets; marks the ActualText as started.
pub(crate) fn current(stack: &mut [MarkedSequence]) -> (Option<i64>, Option<ActualText>) {
    let mcid = stack.iter().rev().find_map(|m| m.mcid);
    let actual = stack
        .iter_mut()
        .rev()
        .find_map(|m| m.actual_text.as_mut())
        .map(|(text, sequence, fresh)| {
            let first = *fresh;
            *fresh = false;
            ActualText {
                text: text.clone(),
                sequence: *sequence,
                first,
            }
        });
    (mcid, actual)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_strings_decode() {
        assert_eq!(decode_text_string(b"\xfe\xff\x00f\xfb\x01"), "f\u{FB01}");
        assert_eq!(decode_text_string(b"\xef\xbb\xbfcaf\xc3\xa9"), "café");
        assert_eq!(decode_text_string(b"a\x93b\xe9"), "a\u{FB01}bé");
    }
}
