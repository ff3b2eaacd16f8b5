//! Just enough of Type 1 font programs (`/FontFile`): the built-in `/Encoding` from the
//! cleartext part and the glyph names of `/CharStrings` from the eexec-encrypted part.
//! We never interpret charstrings: a name's presence is what tells us a subset kept the glyph.

use std::collections::HashSet;

use crate::encodings::BaseEncoding;

/// What we read from a Type 1 program.
#[derive(Debug, Clone, Default)]
pub struct Type1Program {
    /// Built-in encoding: code → glyph name. Empty names mean undefined.
    pub encoding: Vec<Option<String>>,
    /// Glyph names present in `/CharStrings`.
    pub glyphs: HashSet<String>,
}

impl Type1Program {
    /// Reads a program (PFA- or PFB-framed). Never fails; missing parts stay empty.
    pub fn parse(data: &[u8]) -> Self {
        let data = strip_pfb(data);
        let eexec = find(&data, b"eexec");
        let clear = &data[..eexec.unwrap_or(data.len())];
        let encoding = builtin_encoding(clear);
        let glyphs = eexec
            .map(|at| charstring_names(&decrypt(&data[at + 5..])))
            .unwrap_or_default();
        Self { encoding, glyphs }
    }
}

/// PFB files wrap segments in `0x80 type len32le` headers; PDFs sometimes embed them raw.
fn strip_pfb(data: &[u8]) -> Vec<u8> {
    if data.first() != Some(&0x80) {
        return data.to_vec();
    }
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i + 6 <= data.len() && data[i] == 0x80 && data[i + 1] != 3 {
        let len = u32::from_le_bytes([data[i + 2], data[i + 3], data[i + 4], data[i + 5]]) as usize;
        let end = (i + 6).saturating_add(len).min(data.len());
        out.extend_from_slice(&data[i + 6..end]);
        i = end;
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `/Encoding StandardEncoding def` or `/Encoding 256 array ... dup <code> /<name> put ...`.
fn builtin_encoding(clear: &[u8]) -> Vec<Option<String>> {
    let mut enc = vec![None; 256];
    let Some(at) = find(clear, b"/Encoding") else {
        return enc;
    };
    let rest = &clear[at + 9..];
    let head = String::from_utf8_lossy(&rest[..rest.len().min(40)]);
    if head.trim_start().starts_with("StandardEncoding") {
        for (code, slot) in enc.iter_mut().enumerate() {
            *slot = BaseEncoding::Standard
                .glyph_name(code as u8)
                .map(|n| n.into_owned());
        }
        return enc;
    }
    let end = find(rest, b"readonly def")
        .or_else(|| find(rest, b" def"))
        .unwrap_or(rest.len());
    let text = String::from_utf8_lossy(&rest[..end]);
    let words: Vec<&str> = text.split_ascii_whitespace().collect();
    for w in words.windows(4) {
        if w[0] == "dup" && w[3] == "put" {
            if let (Ok(code), Some(name)) = (w[1].parse::<usize>(), w[2].strip_prefix('/')) {
                if code < 256 {
                    enc[code] = Some(name.to_string());
                }
            }
        }
    }
    enc
}

/// eexec decryption (r = 55665, c1 = 52845, c2 = 22719), dropping the 4 random lead bytes.
/// The encrypted part may be hex-encoded (PFA); we detect that from its first bytes.
fn decrypt(cipher: &[u8]) -> Vec<u8> {
    let start = cipher
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(cipher.len());
    let cipher = &cipher[start..];
    let is_hex = cipher.len() >= 4 && cipher[..4].iter().all(u8::is_ascii_hexdigit);
    let bytes: Vec<u8> = if is_hex {
        let digits: Vec<u8> = cipher
            .iter()
            .filter_map(|c| (*c as char).to_digit(16).map(|d| d as u8))
            .collect();
        digits.chunks_exact(2).map(|c| (c[0] << 4) | c[1]).collect()
    } else {
        cipher.to_vec()
    };
    let mut r: u16 = 55665;
    let mut out = Vec::with_capacity(bytes.len());
    for c in bytes {
        out.push(c ^ (r >> 8) as u8);
        r = u16::from(c)
            .wrapping_add(r)
            .wrapping_mul(52845)
            .wrapping_add(22719);
    }
    out.drain(..out.len().min(4));
    out
}

/// Walks `/CharStrings n dict dup begin /name len RD <len bytes> ND ... end`, skipping the
/// binary charstrings by their declared length so their bytes are never mistaken for names.
fn charstring_names(plain: &[u8]) -> HashSet<String> {
    let mut names = HashSet::new();
    let Some(at) = find(plain, b"/CharStrings") else {
        return names;
    };
    let mut i = at + 12;
    // Skip to the `begin` that opens the dictionary.
    if let Some(b) = find(&plain[i..], b"begin") {
        i += b + 5;
    }
    while i < plain.len() {
        match plain[i] {
            b'/' => {
                let start = i + 1;
                i = start;
                while i < plain.len()
                    && !plain[i].is_ascii_whitespace()
                    && !b"/[]{}()<>".contains(&plain[i])
                {
                    i += 1;
                }
                let name = String::from_utf8_lossy(&plain[start..i]).into_owned();
                let (len, after) = read_int(plain, i);
                let Some(len) = len else { break };
                // `len RD ` : the operator token, then exactly one space, then the binary.
                let mut j = after;
                while j < plain.len() && plain[j].is_ascii_whitespace() {
                    j += 1;
                }
                while j < plain.len() && !plain[j].is_ascii_whitespace() {
                    j += 1;
                }
                names.insert(name);
                i = j.saturating_add(1).saturating_add(len);
            }
            b'e' if plain[i..].starts_with(b"end") => break,
            _ => i += 1,
        }
    }
    names
}

fn read_int(data: &[u8], mut i: usize) -> (Option<usize>, usize) {
    while i < data.len() && data[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    while i < data.len() && data[i].is_ascii_digit() {
        i += 1;
    }
    (
        std::str::from_utf8(&data[start..i])
            .ok()
            .and_then(|s| s.parse().ok()),
        i,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encrypt(plain: &[u8]) -> Vec<u8> {
        let mut r: u16 = 55665;
        let mut out = Vec::new();
        for &p in [0u8, 0, 0, 0].iter().chain(plain) {
            let c = p ^ (r >> 8) as u8;
            r = u16::from(c)
                .wrapping_add(r)
                .wrapping_mul(52845)
                .wrapping_add(22719);
            out.push(c);
        }
        out
    }

    #[test]
    fn reads_encoding_and_charstrings() {
        let mut prog = b"%!PS-AdobeFont-1.0: Test\n/Encoding 256 array\n0 1 255 {1 index exch /.notdef put} for\ndup 65 /A put\ndup 97 /a.sc put\nreadonly def\ncurrentfile eexec\n".to_vec();
        let secret = b"dup /Private 8 dict dup begin /CharStrings 3 dict dup begin\n/.notdef 4 RD \x01/A\x02 ND\n/A 3 -| end\n|-\n/a.sc 2 RD xy ND\nend\nend";
        prog.extend(encrypt(secret));
        let p = Type1Program::parse(&prog);
        assert_eq!(p.encoding[65].as_deref(), Some("A"));
        assert_eq!(p.encoding[97].as_deref(), Some("a.sc"));
        assert_eq!(p.encoding[66], None);
        let mut names: Vec<_> = p.glyphs.into_iter().collect();
        names.sort();
        assert_eq!(names, vec![".notdef", "A", "a.sc"]);
    }

    #[test]
    fn standard_encoding_reference() {
        let p = Type1Program::parse(
            b"/FontName /X def /Encoding StandardEncoding def\ncurrentfile eexec\n",
        );
        assert_eq!(p.encoding[0x27].as_deref(), Some("quoteright"));
    }
}
