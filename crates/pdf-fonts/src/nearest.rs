//! The nearest installed face for a font of any family (issue 15 item 4): when no metric
//! twin or named look-alike serves a document's font (Verdana, Garamond, Computer Modern,
//! a producer's own face), new text is drawn in the installed face that looks most like it,
//! judged by what the document says of its font: serif or sans or fixed pitch and italic
//! (descriptor flags and angle), bold (weight, stem width, name), and the proportions a
//! reader notices first: the x-height and the set width of the lowercase letters.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::registry::{
    Kind, Registry, Resolved, Style, Suffixes, BOOKMAN, C059, DEJAVU_ITALIC, DEJAVU_OBLIQUE,
    GOTHIC, ROMAN, STD,
};

/// How a document's font looks, from its descriptor and widths.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Appearance {
    /// Serifed (descriptor flag, or the name says so).
    pub serif: bool,
    /// Every glyph the same width.
    pub fixed: bool,
    /// Bold or heavier.
    pub bold: bool,
    /// Italic or oblique.
    pub italic: bool,
    /// x-height in 1/1000 em; 0 when unknown.
    pub x_height: f64,
    /// Mean advance of the lowercase Latin letters the font has, 1/1000 em; 0 when unknown.
    pub lower_width: f64,
}

/// Generic faces new text may be drawn in, with their class (serif, fixed pitch): the
/// families `scripts/setup.sh` installs from Debian (Liberation, Carlito, Caladea, DejaVu,
/// the URW base-35). Files are `{stem}{suffix}.{ext}` per style (regular, bold, italic,
/// bold italic).
const FACES: &[(&str, Suffixes, &str, bool, bool)] = &[
    ("LiberationSans", STD, "ttf", false, false),
    ("LiberationSansNarrow", STD, "ttf", false, false),
    ("Carlito", STD, "ttf", false, false),
    ("DejaVuSans", DEJAVU_OBLIQUE, "ttf", false, false),
    ("URWGothic", GOTHIC, "otf", false, false),
    ("LiberationSerif", STD, "ttf", true, false),
    ("Caladea", STD, "ttf", true, false),
    ("DejaVuSerif", DEJAVU_ITALIC, "ttf", true, false),
    ("P052", ROMAN, "otf", true, false),
    ("C059", C059, "otf", true, false),
    ("URWBookman", BOOKMAN, "otf", true, false),
    ("LiberationMono", STD, "ttf", false, true),
    ("DejaVuSansMono", DEJAVU_OBLIQUE, "ttf", false, true),
    ("NimbusMonoPS", STD, "otf", false, true),
];

/// A face file's proportions, in 1/1000 em.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaceMetrics {
    /// x-height (OS/2, else the height of the `x` glyph).
    pub x_height: f64,
    /// Mean advance of `a`..`z`.
    pub lower_width: f64,
}

/// Measures a face file; `None` when it cannot be parsed or has no Latin lowercase.
pub fn measure(path: &Path) -> Option<FaceMetrics> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Option<FaceMetrics>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(m) = cache.lock().ok()?.get(path) {
        return *m;
    }
    let measured = std::fs::read(path).ok().and_then(|data| {
        let face = ttf_parser::Face::parse(&data, 0).ok()?;
        let scale = 1000.0 / f64::from(face.units_per_em());
        let widths: Vec<f64> = ('a'..='z')
            .filter_map(|c| face.glyph_index(c))
            .filter_map(|g| face.glyph_hor_advance(g))
            .map(|w| f64::from(w) * scale)
            .collect();
        if widths.len() < 13 {
            return None;
        }
        let x_height = face
            .x_height()
            .filter(|h| *h > 0)
            .map(f64::from)
            .or_else(|| {
                let g = face.glyph_index('x')?;
                face.glyph_bounding_box(g).map(|b| f64::from(b.y_max))
            })
            .unwrap_or(0.0)
            * scale;
        Some(FaceMetrics {
            x_height,
            lower_width: widths.iter().sum::<f64>() / widths.len() as f64,
        })
    });
    if let Ok(mut c) = cache.lock() {
        c.insert(path.to_path_buf(), measured);
    }
    measured
}

/// How far a face's proportions are from the wanted ones: relative differences of set
/// width (weighted double: it decides whether the new text fits where the old was) and of
/// x-height; unknown wanted values count nothing.
fn distance(want: &Appearance, got: &FaceMetrics) -> f64 {
    let rel = |w: f64, g: f64| if w > 0.0 { (g - w).abs() / w } else { 0.0 };
    2.0 * rel(want.lower_width, got.lower_width) + rel(want.x_height, got.x_height)
}

impl Registry {
    /// The installed face nearest to `want` among the generic faces of its class (fixed
    /// pitch, else serif or sans), in its style; `None` when none of them is installed.
    /// Always a look-alike.
    pub fn nearest(&self, want: &Appearance) -> Option<Resolved> {
        let style = Style::from_flags(want.bold, want.italic);
        let index = style.index();
        let mut best: Option<(f64, String, PathBuf)> = None;
        for (stem, suffixes, ext, serif, fixed) in FACES {
            if *fixed != want.fixed || (!want.fixed && *serif != want.serif) {
                continue;
            }
            let file = format!("{stem}{}.{ext}", suffixes[index]);
            let Some(path) = self.file(&file) else {
                continue;
            };
            let d = measure(path).map_or(f64::MAX / 4.0, |m| distance(want, &m));
            if best.as_ref().is_none_or(|(bd, ..)| d < *bd) {
                let name = format!("{stem}{}", suffixes[index]);
                best = Some((d, name, path.to_path_buf()));
            }
        }
        best.map(|(_, name, path)| Resolved {
            name,
            family: "nearest installed face".into(),
            style,
            path,
            kind: Kind::LookAlike,
            metric_compatible_with: Vec::new(),
        })
    }
}
