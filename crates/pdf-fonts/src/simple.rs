//! The 256-entry tables of a simple font (Type1, MMType1, TrueType, Type3), computed once at
//! load so per-glyph queries are array lookups.

use lopdf::{Dictionary, Document, Object};

use crate::agl;
use crate::encodings::BaseEncoding;
use crate::font::{Font, FontKind};
use crate::metrics;
use crate::obj;
use crate::program::{Program, ProgramKind};

/// Per-code facts of a simple font.
#[derive(Debug, Clone)]
pub(crate) struct SimpleMap {
    /// Glyph name per code (encoding + Differences, else the program's built-in encoding).
    pub names: Vec<Option<String>>,
    /// Text per code from the encoding (ToUnicode is consulted before this).
    pub unicode: Vec<Option<String>>,
    /// Glyph id per code when the program is sfnt/CFF and the code resolves.
    pub gids: Vec<Option<u16>>,
    /// Whether the code's glyph exists in the embedded program; `None` = cannot tell.
    pub present: Vec<Option<bool>>,
    /// Advance per code, 1/1000 em.
    pub widths: Vec<f64>,
}

/// Where a simple font's encoding comes from.
struct EncodingSpec {
    base: Option<BaseEncoding>,
    differences: Vec<(u8, String)>,
    /// No `/Encoding` at all, or a dictionary without `/BaseEncoding` on a symbolic font:
    /// the program's own encoding applies.
    builtin: bool,
    /// The PDF declared something (name or dictionary).
    declared: bool,
}

fn read_encoding(doc: &Document, font: &Dictionary, symbolic: bool) -> EncodingSpec {
    let mut spec = EncodingSpec {
        base: None,
        differences: Vec::new(),
        builtin: true,
        declared: false,
    };
    match obj::get(doc, font, b"Encoding") {
        Some(Object::Name(n)) => {
            spec.base = BaseEncoding::from_pdf_name(n);
            spec.builtin = spec.base.is_none();
            spec.declared = true;
        }
        Some(Object::Dictionary(d)) => {
            spec.declared = true;
            spec.base = obj::name(doc, d, b"BaseEncoding").and_then(BaseEncoding::from_pdf_name);
            spec.builtin = spec.base.is_none() && symbolic;
            let mut code: i64 = 0;
            for o in obj::array(doc, d, b"Differences").unwrap_or(&[]) {
                match obj::deref(doc, o) {
                    Object::Integer(i) => code = *i,
                    Object::Real(r) => code = *r as i64,
                    Object::Name(n) => {
                        if let Ok(c) = u8::try_from(code) {
                            spec.differences
                                .push((c, String::from_utf8_lossy(n).into_owned()));
                        }
                        code += 1;
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    spec
}

/// The encoding a standard font name implies when nothing else is known.
fn named_builtin(base_font: &str) -> Option<BaseEncoding> {
    let (_, name) = crate::descriptor::split_subset_tag(base_font);
    if name.starts_with("Symbol") {
        Some(BaseEncoding::Symbol)
    } else if name.starts_with("ZapfDingbats") || name.starts_with("Dingbats") {
        Some(BaseEncoding::ZapfDingbats)
    } else {
        None
    }
}

impl SimpleMap {
    pub fn build(doc: &Document, font: &Dictionary, f: &Font) -> Self {
        let symbolic = f.descriptor.flags.symbolic() && !f.descriptor.flags.nonsymbolic();
        let spec = read_encoding(doc, font, symbolic);
        let program = f.program.as_ref();
        let is_tt = matches!(program.map(|p| p.kind), Some(ProgramKind::TrueType))
            || f.kind == FontKind::TrueType && program.is_none();
        let named = named_builtin(&f.base_font);
        // Base table: declared base, else the font's own (Symbol/Dingbats), else Standard for
        // Type1-like fonts and WinAnsi for TrueType (what Acrobat assumes for non-symbolic
        // TrueType without /Encoding).
        let base = spec
            .base
            .or(named)
            .unwrap_or(if f.kind == FontKind::TrueType {
                BaseEncoding::WinAnsi
            } else {
                BaseEncoding::Standard
            });
        let mut names: Vec<Option<String>> = (0..=255u8)
            .map(|c| base.glyph_name(c).map(|n| n.into_owned()))
            .collect();
        let mut unicode: Vec<Option<String>> = (0..=255u8)
            .map(|c| {
                base.unicode(c)
                    .map(|u| agl::ligature_text(u).map_or_else(|| u.to_string(), str::to_string))
            })
            .collect();
        let mut gids: Vec<Option<u16>> = vec![None; 256];
        if spec.builtin && spec.base.is_none() && named.is_none() {
            if let Some(p) = program {
                apply_builtin(p, &mut names, &mut unicode, &mut gids, is_tt);
            }
        }
        for (code, name) in &spec.differences {
            let c = usize::from(*code);
            names[c] = Some(name.clone());
            unicode[c] =
                agl::name_to_unicode(name).or_else(|| unicode_from_program_name(program, name));
        }
        if f.kind == FontKind::Type3 && names_are_codes(&spec.differences) {
            for (code, name) in &spec.differences {
                let c = usize::from(*code);
                if unicode[c].is_none() && name != ".notdef" {
                    unicode[c] = latin1_text(*code);
                }
            }
        }
        let present = presence(
            doc,
            font,
            f,
            program,
            &names,
            &unicode,
            &mut gids,
            spec.declared,
            is_tt,
        );
        let widths = widths(doc, font, f, program, &unicode, &gids);
        SimpleMap {
            names,
            unicode,
            gids,
            present,
            widths,
        }
    }
}

/// Whether every glyph a Type3 font names is called after its own code (`/a73` at 73,
/// as pdfTeX names the glyphs of bitmap fonts): then the code itself is the character.
fn names_are_codes(differences: &[(u8, String)]) -> bool {
    let mut named = 0;
    for (code, name) in differences {
        if name == ".notdef" {
            continue;
        }
        let digits = name.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        if digits.len() == name.len() || digits.len() > 3 || digits.parse::<u8>() != Ok(*code) {
            return false;
        }
        named += 1;
    }
    named > 0
}

/// A code read as Latin-1 (TeX's T1 encoding agrees with it on letters, digits,
/// punctuation and accented letters), or `None` for control and TeX-specific slots.
fn latin1_text(code: u8) -> Option<String> {
    matches!(code, 0x20..=0x7E | 0xA1..=0xFF).then(|| char::from(code).to_string())
}

/// TeX and subset fonts name glyphs `g42`/`cid42`/`glyph42`; their text is unknown unless the
/// program's cmap maps the glyph.
fn unicode_from_program_name(program: Option<&Program>, name: &str) -> Option<String> {
    let p = program?;
    let gid = p.gid_by_name(name)?;
    p.gid_to_char().get(&gid).map(|c| c.to_string())
}

/// The program's own encoding: Type1 `/Encoding` array, CFF Encoding, TrueType symbolic cmap.
fn apply_builtin(
    p: &Program,
    names: &mut [Option<String>],
    unicode: &mut [Option<String>],
    gids: &mut [Option<u16>],
    is_tt: bool,
) {
    if let Some(t1) = &p.type1 {
        for (code, name) in t1.encoding.iter().enumerate().take(256) {
            if name.is_some() {
                names[code] = name.clone();
                unicode[code] = name.as_deref().and_then(agl::name_to_unicode);
            }
        }
        return;
    }
    let reverse = p.gid_to_char();
    for code in 0..=255u8 {
        let c = usize::from(code);
        let gid = if is_tt {
            p.truetype_symbolic_gid(code)
        } else {
            p.cff_builtin_gid(code)
        };
        let Some(gid) = gid else { continue };
        gids[c] = Some(gid);
        let name = p.glyph_name(gid);
        let text = name
            .as_deref()
            .and_then(agl::name_to_unicode)
            .or_else(|| reverse.get(&gid).map(|ch| ch.to_string()));
        // Symbolic TrueType maps codes into the U+F0xx private area; that is no text.
        unicode[c] = text.filter(|t| !t.chars().all(|ch| ('\u{F000}'..='\u{F0FF}').contains(&ch)));
        names[c] = name;
    }
}

/// Glyph presence per code (and gids for sfnt/CFF programs).
#[allow(clippy::too_many_arguments)]
fn presence(
    doc: &Document,
    font: &Dictionary,
    f: &Font,
    program: Option<&Program>,
    names: &[Option<String>],
    unicode: &[Option<String>],
    gids: &mut [Option<u16>],
    declared: bool,
    is_tt: bool,
) -> Vec<Option<bool>> {
    if f.kind == FontKind::Type3 {
        let procs = obj::dict(doc, font, b"CharProcs");
        return names
            .iter()
            .map(|n| Some(matches!((procs, n), (Some(d), Some(n)) if d.has(n.as_bytes()))))
            .collect();
    }
    let Some(p) = program else {
        return vec![None; 256];
    };
    (0..256)
        .map(|c| {
            // ToUnicode is the better witness of a blank glyph (symbolic subsets have no names).
            let text = f
                .to_unicode
                .get(&(c as u32))
                .map(|t| t.0.as_str())
                .or(unicode[c].as_deref());
            let blank = text.is_some_and(|t| t.chars().all(char::is_whitespace));
            if let Some(t1) = &p.type1 {
                if t1.glyphs.is_empty() {
                    return None;
                }
                return Some(names[c].as_ref().is_some_and(|n| t1.glyphs.contains(n)));
            }
            if gids[c].is_none() {
                gids[c] = resolve_gid(
                    p,
                    names[c].as_deref(),
                    unicode[c].as_deref(),
                    c as u8,
                    declared,
                    is_tt,
                );
            }
            let gid = gids[c]?;
            p.gid_has_glyph(gid, blank)
        })
        .collect()
}

/// Code → glyph id for sfnt/CFF programs (PDF 32000 9.6.6.4 for TrueType): by Unicode through
/// the (3,1) cmap, by glyph name through `post`/CFF charset, then the symbolic cmaps.
fn resolve_gid(
    p: &Program,
    name: Option<&str>,
    text: Option<&str>,
    code: u8,
    declared: bool,
    is_tt: bool,
) -> Option<u16> {
    if is_tt || p.kind == ProgramKind::OpenType {
        let by_text = text.and_then(|t| {
            let mut cs = t.chars();
            let c = cs.next()?;
            cs.next().is_none().then(|| p.gid_for_char(c)).flatten()
        });
        by_text
            .or_else(|| name.and_then(|n| p.gid_by_name(n)))
            .or_else(|| p.truetype_symbolic_gid(code))
    } else {
        name.and_then(|n| p.gid_by_name(n)).or_else(|| {
            if declared {
                None
            } else {
                p.cff_builtin_gid(code)
            }
        })
    }
}

/// `/Widths` from `/FirstChar`, else standard-14 metrics, else the program's advances, else
/// `/MissingWidth`. Type3 widths are taken through the FontMatrix into 1/1000 em.
fn widths(
    doc: &Document,
    font: &Dictionary,
    f: &Font,
    program: Option<&Program>,
    unicode: &[Option<String>],
    gids: &[Option<u16>],
) -> Vec<f64> {
    let missing = f.descriptor.missing_width;
    let scale = if f.kind == FontKind::Type3 {
        f.font_matrix[0] * 1000.0
    } else {
        1.0
    };
    if let Some(ws) = obj::array(doc, font, b"Widths") {
        let first = obj::num(doc, font, b"FirstChar").unwrap_or(0.0).max(0.0) as usize;
        return (0..256)
            .map(|c: usize| {
                c.checked_sub(first)
                    .and_then(|i| ws.get(i))
                    .and_then(|o| obj::num_of(doc, o))
                    .map_or(missing, |w| w * scale)
            })
            .collect();
    }
    let text_of = |c: u8| {
        unicode[usize::from(c)]
            .as_deref()
            .and_then(|t| t.chars().next())
    };
    if let Some(std) = metrics::standard_widths(&f.base_font, text_of) {
        return std;
    }
    let fallback = if missing > 0.0 {
        missing
    } else if named_builtin(&f.base_font).is_some() {
        500.0
    } else {
        missing
    };
    (0..256)
        .map(|c| {
            gids[c]
                .and_then(|g| program.and_then(|p| p.gid_advance(g)))
                .unwrap_or(fallback)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type3_glyphs_named_after_their_codes() {
        let d = |v: &[(u8, &str)]| {
            v.iter()
                .map(|(c, n)| (*c, n.to_string()))
                .collect::<Vec<_>>()
        };
        assert!(names_are_codes(&d(&[
            (73, "a73"),
            (74, ".notdef"),
            (97, "a97")
        ])));
        assert!(!names_are_codes(&d(&[(73, "a73"), (97, "a98")])));
        assert!(!names_are_codes(&d(&[(65, "A")])));
        assert!(!names_are_codes(&d(&[(74, ".notdef")])));
        assert_eq!(latin1_text(0xE1).as_deref(), Some("\u{e1}"));
        assert_eq!(latin1_text(0x0B), None);
    }
}
