//! Where an inline image's binary data ends (§8.9.7).

use super::{is_delimiter, is_whitespace};

/// Finds where inline image data ends. Returns (end of data, end of `EI`).
///
/// The data is binary and may itself contain `EI`, so, like PDFium and pdf.js, we accept
/// an `EI` only when it is preceded by white space, followed by white space, a delimiter
/// or the end, and the bytes after it look like content-stream text. A declared `/L` or
/// `/Length` (PDF 2.0) is tried first.
pub(super) fn find_inline_image_end(
    bytes: &[u8],
    data_start: usize,
    declared: Option<usize>,
) -> (usize, usize) {
    let len = bytes.len();
    let ei_at = |i: usize| -> bool {
        bytes.get(i) == Some(&b'E')
            && bytes.get(i + 1) == Some(&b'I')
            && bytes
                .get(i + 2)
                .is_none_or(|&b| is_whitespace(b) || is_delimiter(b))
    };
    if let Some(declared) = declared {
        let data_end = data_start.saturating_add(declared);
        if data_end <= len {
            let mut i = data_end;
            while bytes.get(i).is_some_and(|&b| is_whitespace(b)) {
                i += 1;
            }
            if ei_at(i) {
                return (data_end, i + 2);
            }
        }
    }
    let mut first_candidate = None;
    let mut i = data_start;
    while i + 1 < len {
        let preceded = i == data_start || is_whitespace(bytes[i - 1]);
        if preceded && ei_at(i) {
            let data_end = if i > data_start { i - 1 } else { i };
            if looks_like_content(&bytes[i + 2..]) {
                return (data_end, i + 2);
            }
            first_candidate.get_or_insert((data_end, i + 2));
        }
        i += 1;
    }
    first_candidate.unwrap_or((len, len))
}

/// True when the bytes after a candidate `EI` look like more content-stream syntax:
/// printable ASCII and white space only, over a short window.
fn looks_like_content(rest: &[u8]) -> bool {
    rest.iter()
        .take(48)
        .all(|&b| is_whitespace(b) || (0x20..0x7f).contains(&b))
}
