//! Advance widths: `/Widths`, CID `/W` `/DW` `/W2` `/DW2`, and the standard 14 fonts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use lopdf::{Dictionary, Document, Object};

use crate::obj;

/// Directory of the Liberation fonts shipped by Debian's `fonts-liberation`.
const LIBERATION_DIR: &str = "/usr/share/fonts/truetype/liberation";

/// Horizontal and vertical metrics of a CIDFont.
#[derive(Debug, Clone, Default)]
pub(crate) struct CidMetrics {
    pub default: f64,
    pub widths: HashMap<u32, f64>,
    /// `/DW2`: (vy of origin, w1y).
    pub default_v: (f64, f64),
    /// `/W2`: CID → (w1y, vx, vy).
    pub vertical: HashMap<u32, (f64, f64, f64)>,
}

impl CidMetrics {
    pub fn read(doc: &Document, cid_font: &Dictionary) -> Self {
        let mut m = CidMetrics {
            default: obj::num(doc, cid_font, b"DW").unwrap_or(1000.0),
            default_v: (880.0, -1000.0),
            ..Self::default()
        };
        if let Some([vy, w1]) = obj::nums(doc, cid_font, b"DW2").as_deref() {
            m.default_v = (*vy, *w1);
        }
        if let Some(w) = obj::array(doc, cid_font, b"W") {
            read_w(doc, w, 1, |cid, v| {
                m.widths.insert(cid, v[0]);
            });
        }
        if let Some(w2) = obj::array(doc, cid_font, b"W2") {
            read_w(doc, w2, 3, |cid, v| {
                m.vertical.insert(cid, (v[0], v[1], v[2]));
            });
        }
        m
    }

    pub fn width(&self, cid: u32) -> f64 {
        self.widths.get(&cid).copied().unwrap_or(self.default)
    }

    /// (w1y, vx, vy) with the defaults of PDF 32000 9.7.4.3 (vx = half the width).
    pub fn vertical(&self, cid: u32) -> (f64, f64, f64) {
        self.vertical.get(&cid).copied().unwrap_or((
            self.default_v.1,
            self.width(cid) / 2.0,
            self.default_v.0,
        ))
    }
}

/// Walks a `/W`-style array: `c [v v ...]` (groups of `n` per CID) or `c_first c_last v...`.
/// Ranges are clamped so a corrupt `0 4294967295 500` cannot allocate without bound.
fn read_w(doc: &Document, arr: &[Object], n: usize, mut put: impl FnMut(u32, &[f64])) {
    let mut i = 0;
    while i < arr.len() {
        let Some(first) = obj::num_of(doc, &arr[i]) else {
            break;
        };
        let first = first.max(0.0) as u32;
        match arr.get(i + 1).map(|o| obj::deref(doc, o)) {
            Some(Object::Array(list)) => {
                let vals: Vec<f64> = list
                    .iter()
                    .map(|o| obj::num_of(doc, o).unwrap_or(0.0))
                    .collect();
                for (k, chunk) in vals.chunks_exact(n).enumerate() {
                    put(first + k as u32, chunk);
                }
                i += 2;
            }
            Some(o) => {
                let Some(last) = obj::num_of(doc, o) else {
                    break;
                };
                let vals: Vec<f64> = (0..n)
                    .map(|k| {
                        arr.get(i + 2 + k)
                            .and_then(|o| obj::num_of(doc, o))
                            .unwrap_or(0.0)
                    })
                    .collect();
                let last = (last.max(0.0) as u32).min(first.saturating_add(0xFFFF));
                for cid in first..=last {
                    put(cid, &vals);
                }
                i += 2 + n;
            }
            None => break,
        }
    }
}

/// The metric-compatible Liberation file for a standard-14 name (or a common alias such as
/// `Arial,Bold`), with the fixed width used when that file is not installed.
fn standard_face(base: &str) -> Option<(&'static str, f64)> {
    let (_, name) = crate::descriptor::split_subset_tag(base);
    let lower = name.to_ascii_lowercase().replace([' ', '-', ','], "");
    let bold = lower.contains("bold");
    let italic = lower.contains("italic") || lower.contains("oblique");
    let pick = |regular, b, i, bi| match (bold, italic) {
        (false, false) => regular,
        (true, false) => b,
        (false, true) => i,
        (true, true) => bi,
    };
    let family = if lower.starts_with("courier") {
        "Mono"
    } else if lower.starts_with("helvetica") || lower.starts_with("arial") {
        "Sans"
    } else if lower.starts_with("times") {
        "Serif"
    } else {
        return None;
    };
    let file = match family {
        "Mono" => pick(
            "LiberationMono-Regular.ttf",
            "LiberationMono-Bold.ttf",
            "LiberationMono-Italic.ttf",
            "LiberationMono-BoldItalic.ttf",
        ),
        "Sans" => pick(
            "LiberationSans-Regular.ttf",
            "LiberationSans-Bold.ttf",
            "LiberationSans-Italic.ttf",
            "LiberationSans-BoldItalic.ttf",
        ),
        _ => pick(
            "LiberationSerif-Regular.ttf",
            "LiberationSerif-Bold.ttf",
            "LiberationSerif-Italic.ttf",
            "LiberationSerif-BoldItalic.ttf",
        ),
    };
    Some((file, if family == "Mono" { 600.0 } else { 500.0 }))
}

type WidthTable = Arc<HashMap<char, f64>>;

/// Char → advance (1/1000 em) of one Liberation file, read once per process.
fn liberation_widths(file: &'static str) -> Option<WidthTable> {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, Option<WidthTable>>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    cache
        .entry(file)
        .or_insert_with(|| {
            let data = std::fs::read(format!("{LIBERATION_DIR}/{file}")).ok()?;
            let face = ttf_parser::Face::parse(&data, 0).ok()?;
            let scale = 1000.0 / f64::from(face.units_per_em().max(1));
            let mut map = HashMap::new();
            let cmap = face.tables().cmap?;
            for sub in cmap.subtables.into_iter().filter(|s| s.is_unicode()) {
                sub.codepoints(|cp| {
                    if let (Some(c), Some(g)) = (char::from_u32(cp), sub.glyph_index(cp)) {
                        if let Some(adv) = face.glyph_hor_advance(g) {
                            map.insert(c, (f64::from(adv) * scale).round());
                        }
                    }
                });
            }
            Some(Arc::new(map))
        })
        .clone()
}

/// Widths for the 256 codes of a standard-14 font without `/Widths`, given each code's text.
/// `None` when the name is not one of the standard Latin families (Symbol and ZapfDingbats
/// have no Liberation counterpart and fall back to the descriptor's MissingWidth or 500).
pub(crate) fn standard_widths(
    base: &str,
    text_of: impl Fn(u8) -> Option<char>,
) -> Option<Vec<f64>> {
    let (file, fallback) = standard_face(base)?;
    let table = liberation_widths(file);
    Some(
        (0..=255u8)
            .map(|code| match (&table, text_of(code)) {
                (Some(t), Some(c)) => t.get(&c).copied().unwrap_or(fallback),
                _ => fallback,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_names() {
        assert_eq!(
            standard_face("Helvetica-BoldOblique").map(|f| f.0),
            Some("LiberationSans-BoldItalic.ttf")
        );
        assert_eq!(
            standard_face("Times-Roman").map(|f| f.0),
            Some("LiberationSerif-Regular.ttf")
        );
        assert_eq!(standard_face("Courier").map(|f| f.1), Some(600.0));
        assert_eq!(standard_face("Symbol"), None);
    }

    #[test]
    fn helvetica_widths_match_afm_when_installed() {
        let w = standard_widths("Helvetica", |c| Some(c as char)).unwrap_or_default();
        if std::path::Path::new(LIBERATION_DIR).exists() {
            // Helvetica AFM: space 278, A 667, a 556.
            assert_eq!((w[32], w[65], w[97]), (278.0, 667.0, 556.0));
        }
    }

    #[test]
    fn w_array_both_forms() {
        let doc = Document::with_version("1.7");
        let arr = vec![
            Object::Integer(1),
            Object::Array(vec![Object::Integer(500), Object::Integer(600)]),
            Object::Integer(10),
            Object::Integer(12),
            Object::Integer(700),
        ];
        let mut got = HashMap::new();
        read_w(&doc, &arr, 1, |c, v| {
            got.insert(c, v[0]);
        });
        assert_eq!(got.get(&2), Some(&600.0));
        assert_eq!(got.get(&11), Some(&700.0));
        assert_eq!(got.get(&13), None);
    }
}
