//! The ToUnicode CMap of an embedded font: written from the CID → char table, and read
//! back when a later edit adds glyphs to a font an earlier edit embedded.

use std::fmt::Write;

/// The PDF spec caps a bfchar block at 100 entries.
const BLOCK: usize = 100;

/// A ToUnicode CMap for 2-byte CIDs; `chars[i]` is the text of CID `i + 1` (CID 0 is
/// .notdef and maps to nothing).
pub fn write(chars: &[char]) -> Vec<u8> {
    let mut s = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
         /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n\
         /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
         1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    let entries: Vec<(usize, char)> = chars.iter().enumerate().map(|(i, &c)| (i + 1, c)).collect();
    for block in entries.chunks(BLOCK) {
        let _ = writeln!(s, "{} beginbfchar", block.len());
        for &(cid, c) in block {
            let mut units = [0u16; 2];
            let hex: String = c
                .encode_utf16(&mut units)
                .iter()
                .map(|u| format!("{u:04X}"))
                .collect();
            let _ = writeln!(s, "<{cid:04X}> <{hex}>");
        }
        s.push_str("endbfchar\n");
    }
    s.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    s.into_bytes()
}

/// The CID → char pairs of the bfchar sections of a CMap we wrote (other sections and
/// multi-character targets are not ours and are skipped).
pub fn read(cmap: &[u8]) -> Vec<(u16, char)> {
    let text = String::from_utf8_lossy(cmap);
    let mut out = Vec::new();
    let mut in_bfchar = false;
    for line in text.lines() {
        let line = line.trim();
        if line.ends_with("beginbfchar") {
            in_bfchar = true;
        } else if line == "endbfchar" {
            in_bfchar = false;
        } else if in_bfchar {
            if let Some(pair) = parse_pair(line) {
                out.push(pair);
            }
        }
    }
    out
}

fn parse_pair(line: &str) -> Option<(u16, char)> {
    let mut hexes = line
        .split('>')
        .filter_map(|part| part.trim().strip_prefix('<'));
    let cid = u16::from_str_radix(hexes.next()?, 16).ok()?;
    let target = hexes.next()?;
    if target.len() % 4 != 0 {
        return None;
    }
    let units: Vec<u16> = (0..target.len() / 4)
        .map(|i| u16::from_str_radix(&target[i * 4..i * 4 + 4], 16))
        .collect::<Result<_, _>>()
        .ok()?;
    let mut decoded = char::decode_utf16(units);
    let c = decoded.next()?.ok()?;
    decoded.next().is_none().then_some((cid, c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_bmp_and_astral_chars_across_blocks() {
        let mut chars: Vec<char> = "Ñandú Αθήνα".chars().collect();
        chars.push('𝄞');
        chars.extend((0..150).map(|i| char::from_u32(0x4E00 + i).unwrap_or('?')));
        let cmap = write(&chars);
        let text = String::from_utf8(cmap.clone()).unwrap_or_default();
        assert!(text.contains("<0001> <00D1>"));
        assert!(text.contains("<D834DD1E>"));
        assert_eq!(text.matches("beginbfchar").count(), 2);
        let back = read(&cmap);
        assert_eq!(back.len(), chars.len());
        for (i, (cid, c)) in back.iter().enumerate() {
            assert_eq!(usize::from(*cid), i + 1);
            assert_eq!(*c, chars[i]);
        }
    }
}
