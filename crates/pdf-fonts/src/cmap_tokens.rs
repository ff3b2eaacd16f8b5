//! Tokens of the PostScript-like CMap syntax; only what `cmap` needs is kept apart.

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Hex(Vec<u8>),
    Int(i64),
    Name(String),
    Op(String),
    ArrOpen,
    ArrClose,
    Other,
}

fn is_delim(b: u8) -> bool {
    b.is_ascii_whitespace() || b"[]<>(){}/%".contains(&b)
}

pub(crate) fn tokenize(data: &[u8]) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        match b {
            b'%' => {
                while i < data.len() && data[i] != b'\n' && data[i] != b'\r' {
                    i += 1;
                }
            }
            b'[' => {
                toks.push(Tok::ArrOpen);
                i += 1;
            }
            b']' => {
                toks.push(Tok::ArrClose);
                i += 1;
            }
            b'<' if data.get(i + 1) == Some(&b'<') => {
                toks.push(Tok::Other);
                i += 2;
            }
            b'>' => {
                toks.push(Tok::Other);
                i += 1 + usize::from(data.get(i + 1) == Some(&b'>'));
            }
            b'<' => {
                let end = data[i..]
                    .iter()
                    .position(|&c| c == b'>')
                    .map_or(data.len(), |p| i + p);
                let digits: Vec<u8> = data[i + 1..end]
                    .iter()
                    .filter_map(|c| (*c as char).to_digit(16).map(|d| d as u8))
                    .collect();
                let mut bytes: Vec<u8> = digits
                    .chunks(2)
                    .map(|c| (c[0] << 4) | c.get(1).copied().unwrap_or(0))
                    .collect();
                if bytes.is_empty() {
                    bytes.push(0);
                }
                toks.push(Tok::Hex(bytes));
                i = end + 1;
            }
            b'(' => {
                let mut depth = 0;
                while i < data.len() {
                    match data[i] {
                        b'\\' => i += 1,
                        b'(' => depth += 1,
                        b')' => depth -= 1,
                        _ => {}
                    }
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                }
                toks.push(Tok::Other);
            }
            b'/' => {
                let start = i + 1;
                i = start;
                while i < data.len() && !is_delim(data[i]) {
                    i += 1;
                }
                toks.push(Tok::Name(
                    String::from_utf8_lossy(&data[start..i]).into_owned(),
                ));
            }
            _ if b.is_ascii_whitespace() || b == b')' || b == b'{' || b == b'}' => i += 1,
            _ => {
                let start = i;
                while i < data.len() && !is_delim(data[i]) {
                    i += 1;
                }
                let word = String::from_utf8_lossy(&data[start..i]).into_owned();
                toks.push(match word.parse::<i64>() {
                    Ok(n) => Tok::Int(n),
                    Err(_) => Tok::Op(word),
                });
            }
        }
    }
    toks
}
