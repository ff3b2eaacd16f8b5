//! Content-stream tokens with byte spans (ISO 32000-1 §7.2, §7.3, §8.9.7).
//!
//! The lexer never fails and never panics: bytes it cannot make sense of become
//! [`TokenKind::Junk`] tokens, so every byte of the input is either inside a token's span
//! or is whitespace/comment between tokens. That is what lets [`crate::patch`] keep every
//! untouched byte identical.

use std::ops::Range;

mod inline_image;

use inline_image::find_inline_image_end;

/// One lexical token and the bytes it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Its bytes in the stream, delimiters included (`(`…`)`, `<`…`>`, `/`).
    pub span: Range<usize>,
}

/// The kinds of content-stream tokens.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    /// An integer (no `.` in the token).
    Integer(i64),
    /// A real number (the token contains a `.`).
    Real(f64),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// A name, `#xx` escapes decoded, without the leading `/`.
    Name(Vec<u8>),
    /// A literal string `( … )`, escapes decoded.
    LiteralString(Vec<u8>),
    /// A hexadecimal string `< … >`, decoded.
    HexString(Vec<u8>),
    /// `[`
    ArrayOpen,
    /// `]`
    ArrayClose,
    /// `<<`
    DictOpen,
    /// `>>`
    DictClose,
    /// Any other regular-character word: an operator such as `Tj` or `T*`.
    Operator(Vec<u8>),
    /// A whole inline image `BI … ID … EI` (§8.9.7), as one token.
    InlineImage {
        /// Bytes between `BI` and `ID`: the image dictionary's keys and values.
        dict: Range<usize>,
        /// The image data between `ID` + one white-space byte and `EI`.
        data: Range<usize>,
    },
    /// A byte that cannot start a token (a stray `)`, `>`, `{` or `}`), kept so that
    /// nothing is lost.
    Junk,
}

/// White-space characters (§7.2.2, Table 1).
pub(crate) fn is_whitespace(b: u8) -> bool {
    matches!(b, 0 | 9 | 10 | 12 | 13 | 32)
}

/// Delimiter characters (§7.2.2, Table 2).
pub(crate) fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

fn is_regular(b: u8) -> bool {
    !is_whitespace(b) && !is_delimiter(b)
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Tokenises a whole content stream.
pub fn tokenize(bytes: &[u8]) -> Vec<Token> {
    Lexer::new(bytes).collect()
}

/// An iterator over the tokens of a content stream.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    /// Skips white space and comments (a `%` up to the end of the line, §7.2.3).
    fn skip_blank(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if is_whitespace(b) {
                self.pos += 1;
            } else if b == b'%' {
                while let Some(&c) = self.bytes.get(self.pos) {
                    if c == b'\r' || c == b'\n' {
                        break;
                    }
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    fn regular_run(&self, start: usize) -> usize {
        let mut end = start;
        while self.bytes.get(end).is_some_and(|&b| is_regular(b)) {
            end += 1;
        }
        end
    }

    fn lex_token(&mut self) -> Option<Token> {
        self.skip_blank();
        let start = self.pos;
        let first = *self.bytes.get(start)?;
        let second = self.bytes.get(start + 1).copied();
        let (kind, end) = match first {
            b'(' => {
                let (decoded, end) = scan_literal(self.bytes, start, None);
                (TokenKind::LiteralString(decoded), end)
            }
            b'<' if second == Some(b'<') => (TokenKind::DictOpen, start + 2),
            b'<' => {
                let (decoded, end) = scan_hex(self.bytes, start, None);
                (TokenKind::HexString(decoded), end)
            }
            b'>' if second == Some(b'>') => (TokenKind::DictClose, start + 2),
            b'[' => (TokenKind::ArrayOpen, start + 1),
            b']' => (TokenKind::ArrayClose, start + 1),
            b'/' => {
                let end = self.regular_run(start + 1);
                (
                    TokenKind::Name(decode_name(&self.bytes[start + 1..end])),
                    end,
                )
            }
            b if is_regular(b) => {
                let end = self.regular_run(start);
                let word = &self.bytes[start..end];
                let kind = match word {
                    b"true" => TokenKind::Bool(true),
                    b"false" => TokenKind::Bool(false),
                    b"null" => TokenKind::Null,
                    [b'0'..=b'9' | b'+' | b'-' | b'.', ..] => parse_number(word),
                    _ => TokenKind::Operator(word.to_vec()),
                };
                (kind, end)
            }
            // `)`, a lone `>`, `{`, `}`: nothing valid starts here.
            _ => (TokenKind::Junk, start + 1),
        };
        self.pos = end;
        if kind == TokenKind::Operator(b"BI".to_vec()) {
            return Some(self.inline_image(start));
        }
        Some(Token {
            kind,
            span: start..end,
        })
    }

    /// Reads the rest of an inline image after its `BI` (§8.9.7) and returns it as one
    /// token spanning `BI` to `EI`.
    fn inline_image(&mut self, bi_start: usize) -> Token {
        let dict_start = self.pos;
        let mut dict_end = self.bytes.len();
        let mut declared_len: Option<usize> = None;
        let mut last_name: Option<Vec<u8>> = None;
        let mut found_id = false;
        while let Some(token) = self.lex_token_plain() {
            match &token.kind {
                TokenKind::Operator(op) if op == b"ID" => {
                    dict_end = token.span.start;
                    found_id = true;
                    break;
                }
                TokenKind::Name(n) => {
                    last_name = Some(n.clone());
                    continue;
                }
                TokenKind::Integer(v) if matches!(last_name.as_deref(), Some(b"L" | b"Length")) => {
                    declared_len = usize::try_from(*v).ok();
                }
                _ => {}
            }
            last_name = None;
        }
        let len = self.bytes.len();
        if !found_id {
            self.pos = len;
            return Token {
                kind: TokenKind::InlineImage {
                    dict: dict_start..len,
                    data: len..len,
                },
                span: bi_start..len,
            };
        }
        // `ID` is followed by exactly one white-space byte, then the data.
        let mut data_start = self.pos;
        if self
            .bytes
            .get(data_start)
            .is_some_and(|&b| is_whitespace(b))
        {
            data_start += 1;
        }
        let (data_end, ei_end) = find_inline_image_end(self.bytes, data_start, declared_len);
        self.pos = ei_end;
        Token {
            kind: TokenKind::InlineImage {
                dict: dict_start..dict_end,
                data: data_start..data_end,
            },
            span: bi_start..ei_end,
        }
    }

    /// Like `lex_token` but never starts a nested inline image (a `BI` inside an image
    /// dictionary is just a word).
    fn lex_token_plain(&mut self) -> Option<Token> {
        self.skip_blank();
        let start = self.pos;
        let first = *self.bytes.get(start)?;
        if is_regular(first) {
            let end = self.regular_run(start);
            if &self.bytes[start..end] == b"BI" {
                self.pos = end;
                return Some(Token {
                    kind: TokenKind::Operator(b"BI".to_vec()),
                    span: start..end,
                });
            }
        }
        self.lex_token()
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        self.lex_token()
    }
}

/// Decodes `#xx` escapes in a name (§7.3.5). A `#` not followed by two hex digits is
/// kept as is, as PDFium does.
fn decode_name(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'#' {
            let hi = raw.get(i + 1).copied().and_then(hex_value);
            let lo = raw.get(i + 2).copied().and_then(hex_value);
            if let (Some(hi), Some(lo)) = (hi, lo) {
                out.push(hi << 4 | lo);
                i += 3;
                continue;
            }
        }
        out.push(raw[i]);
        i += 1;
    }
    out
}

/// Parses a numeric word the way PDFium's `FX_Number` does: one optional sign, digits,
/// and (for reals) one `.`; parsing stops at the first unexpected byte and the prefix
/// read so far is the value. So `--3` is 0, `4.5.6` is 4.5, `.5` is 0.5, `-` is 0.
fn parse_number(word: &[u8]) -> TokenKind {
    let (negative, rest) = match word.first() {
        Some(b'-') => (true, &word[1..]),
        Some(b'+') => (false, &word[1..]),
        _ => (false, word),
    };
    if word.contains(&b'.') {
        // Take the longest `digits [. digits]` prefix and let the standard library
        // round it correctly (summing digit by digit would not: 0.3 ≠ 0.1·3).
        let mut seen_dot = false;
        let prefix_len = rest
            .iter()
            .take_while(|&&b| match b {
                b'0'..=b'9' => true,
                b'.' if !seen_dot => {
                    seen_dot = true;
                    true
                }
                _ => false,
            })
            .count();
        let prefix = std::str::from_utf8(&rest[..prefix_len]).unwrap_or("0");
        let value = match prefix {
            "" | "." => 0.0,
            p => p.parse::<f64>().unwrap_or(0.0),
        };
        TokenKind::Real(if negative { -value } else { value })
    } else {
        let mut value: i64 = 0;
        for &b in rest {
            if !b.is_ascii_digit() {
                break;
            }
            match value
                .checked_mul(10)
                .and_then(|v| v.checked_add(i64::from(b - b'0')))
            {
                Some(v) => value = v,
                // Out of range: PDFium resets to 0; a huge value is as wrong as 0 anyway.
                None => return TokenKind::Integer(0),
            }
        }
        TokenKind::Integer(if negative { -value } else { value })
    }
}

/// Scans a literal string starting at `bytes[start] == b'('` (§7.3.4.2). Returns the
/// decoded bytes and the offset just after the closing `)` (or the end of input when the
/// string is unterminated). When `offsets` is given, it receives for each decoded byte
/// the offset where its source starts.
pub(crate) fn scan_literal(
    bytes: &[u8],
    start: usize,
    mut offsets: Option<&mut Vec<usize>>,
) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let mut push = |b: u8, at: usize, out: &mut Vec<u8>| {
        out.push(b);
        if let Some(o) = offsets.as_deref_mut() {
            o.push(at);
        }
    };
    let mut depth = 1usize;
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => {
                let Some(&e) = bytes.get(i + 1) else {
                    return (out, i + 1);
                };
                let mapped = match e {
                    b'n' => Some(b'\n'),
                    b'r' => Some(b'\r'),
                    b't' => Some(b'\t'),
                    b'b' => Some(8),
                    b'f' => Some(12),
                    b'0'..=b'7' => {
                        // Up to three octal digits; overflow of the high-order digit is
                        // ignored as the spec says ("\ddd" mod 256).
                        let mut value: u32 = 0;
                        let mut j = i + 1;
                        while j < i + 4 && bytes.get(j).is_some_and(|c| (b'0'..=b'7').contains(c)) {
                            value = value * 8 + u32::from(bytes[j] - b'0');
                            j += 1;
                        }
                        push((value & 0xff) as u8, i, &mut out);
                        i = j;
                        continue;
                    }
                    b'\r' => {
                        // Line continuation: backslash + EOL produce nothing.
                        i += 2;
                        if bytes.get(i) == Some(&b'\n') {
                            i += 1;
                        }
                        continue;
                    }
                    b'\n' => {
                        i += 2;
                        continue;
                    }
                    // `\(`, `\)`, `\\`, and an unknown escape: the backslash is ignored.
                    other => Some(other),
                };
                if let Some(m) = mapped {
                    push(m, i, &mut out);
                }
                i += 2;
            }
            b'(' => {
                depth += 1;
                push(b, i, &mut out);
                i += 1;
            }
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return (out, i + 1);
                }
                push(b, i, &mut out);
                i += 1;
            }
            b'\r' => {
                // An unescaped end-of-line (CR, CR LF) reads as a single LF.
                push(b'\n', i, &mut out);
                i += if bytes.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
            }
            _ => {
                push(b, i, &mut out);
                i += 1;
            }
        }
    }
    (out, bytes.len())
}

/// Scans a hex string starting at `bytes[start] == b'<'` (§7.3.4.3): white space and,
/// like PDFium, any other non-hex byte are skipped; an odd final digit is padded with 0.
pub(crate) fn scan_hex(
    bytes: &[u8],
    start: usize,
    mut offsets: Option<&mut Vec<usize>>,
) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let mut pending: Option<(u8, usize)> = None;
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        if b == b'>' {
            i += 1;
            break;
        }
        if let Some(v) = hex_value(b) {
            match pending.take() {
                Some((hi, at)) => {
                    out.push(hi << 4 | v);
                    if let Some(o) = offsets.as_deref_mut() {
                        o.push(at);
                    }
                }
                None => pending = Some((v, i)),
            }
        }
        i += 1;
    }
    if let Some((hi, at)) = pending {
        out.push(hi << 4);
        if let Some(o) = offsets {
            o.push(at);
        }
    }
    (out, i)
}

/// For a string token (literal or hex) at `span` in `stream`, the source byte range of
/// each decoded byte. An editor uses it to turn a glyph's `code_span` (decoded bytes)
/// into stream bytes, e.g. to split a string without re-encoding the rest of it.
///
/// Returns `None` when `span` does not start a string token.
pub fn string_source_ranges(stream: &[u8], span: Range<usize>) -> Option<Vec<Range<usize>>> {
    let mut starts = Vec::new();
    let end = match stream.get(span.start)? {
        b'(' => {
            let _ = scan_literal(stream, span.start, Some(&mut starts));
            // The closing `)` (when present) belongs to no decoded byte.
            span.end - usize::from(stream.get(span.end.wrapping_sub(1)) == Some(&b')'))
        }
        b'<' => {
            let _ = scan_hex(stream, span.start, Some(&mut starts));
            span.end - usize::from(stream.get(span.end.wrapping_sub(1)) == Some(&b'>'))
        }
        _ => return None,
    };
    let mut ranges = Vec::with_capacity(starts.len());
    for (k, &s) in starts.iter().enumerate() {
        let e = starts.get(k + 1).copied().unwrap_or(end).max(s);
        ranges.push(s..e);
    }
    Some(ranges)
}

#[cfg(test)]
#[path = "../lexer_tests.rs"]
pub(crate) mod tests;
