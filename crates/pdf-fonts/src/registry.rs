//! The metric-twin / look-alike registry (SPEC rule 5, cases b and c).
//!
//! For every family the service promises, and each of its four styles, this says which
//! installed font file stands in for it and whether that file is a true *metric twin*
//! (same advance widths, so replaced text keeps its place) or only a *look-alike* (the
//! edit then carries the warning `approx_font_used`). Files are found by name in the
//! standard Debian font directories, or in the directories listed in `PDFEDIT_FONT_DIRS`
//! (colon-separated; when set it replaces the defaults, so tests and deployments can pin
//! exactly what is served).
//!
//! Only OpenType files (`.ttf`, `.otf`) are listed: the embedder writes CIDFontType2 or
//! OpenType/CFF programs, and fonts-urw-base35 ships its `.t1` files next to `.otf` ones.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Environment variable overriding the font directories searched by [`Registry::discover`].
pub const FONT_DIRS_ENV: &str = "PDFEDIT_FONT_DIRS";

/// Directories searched (recursively) when [`FONT_DIRS_ENV`] is not set.
pub const DEFAULT_FONT_DIRS: &[&str] = &["/usr/share/fonts", "/usr/local/share/fonts"];

/// How faithfully a substitute stands in for the family asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Same advance widths as the original: text keeps its length.
    MetricTwin,
    /// Similar design, different widths: warning `approx_font_used`.
    LookAlike,
}

impl Kind {
    /// The API spelling (`GET /v1/fonts`, `font_source`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::MetricTwin => "metric-twin",
            Kind::LookAlike => "look-alike",
        }
    }
}

/// One of the four styles of a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Style {
    /// Upright, normal weight.
    Regular,
    /// Upright, bold.
    Bold,
    /// Italic or oblique, normal weight.
    Italic,
    /// Italic or oblique, bold.
    BoldItalic,
}

impl Style {
    /// All styles, in table order.
    pub const ALL: [Style; 4] = [
        Style::Regular,
        Style::Bold,
        Style::Italic,
        Style::BoldItalic,
    ];

    /// The style for a bold / italic pair of flags.
    pub fn from_flags(bold: bool, italic: bool) -> Style {
        match (bold, italic) {
            (false, false) => Style::Regular,
            (true, false) => Style::Bold,
            (false, true) => Style::Italic,
            (true, true) => Style::BoldItalic,
        }
    }

    /// The API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Style::Regular => "regular",
            Style::Bold => "bold",
            Style::Italic => "italic",
            Style::BoldItalic => "bold-italic",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// A font file chosen for a family and style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The substitute's name (its file stem, e.g. `LiberationSans-Bold`).
    pub name: String,
    /// The promised family this stands in for (e.g. `Arial`).
    pub family: String,
    /// The style served.
    pub style: Style,
    /// The font file.
    pub path: PathBuf,
    /// Twin or look-alike.
    pub kind: Kind,
    /// Families whose widths this file reproduces (empty for a look-alike).
    pub metric_compatible_with: Vec<String>,
}

/// One row of `GET /v1/fonts`: a promised family and style, and what serves it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// Served font name; `None` when nothing at all is installed for it.
    pub name: Option<String>,
    /// Promised family.
    pub family: String,
    /// Style.
    pub style: Style,
    /// Twin or look-alike (`LookAlike` when nothing is installed).
    pub kind: Kind,
    /// Families whose widths are reproduced.
    pub metric_compatible_with: Vec<String>,
    /// Why a family has no twin, when it has none.
    pub note: Option<&'static str>,
}

/// Broad class of a family, choosing the DejaVu look-alike of last resort.
#[derive(Debug, Clone, Copy)]
enum Class {
    Sans,
    Serif,
    Mono,
}

/// A candidate: files `{stem}{suffix}.{ext}` for the four styles, twin or look-alike.
struct Candidate {
    stem: &'static str,
    suffixes: &'static [&'static str; 4],
    ext: &'static str,
    kind: Kind,
    compatible: &'static [&'static str],
}

impl Candidate {
    fn file(&self, style: Style) -> String {
        format!("{}{}.{}", self.stem, self.suffixes[style.index()], self.ext)
    }
}

/// A promised family: names it answers to, candidates in order of preference.
struct Family {
    name: &'static str,
    /// Lower-case alphanumeric keys of every name the family answers to.
    keys: &'static [&'static str],
    class: Class,
    candidates: &'static [Candidate],
    note: Option<&'static str>,
}

pub(crate) type Suffixes = &'static [&'static str; 4];

const fn twin(
    stem: &'static str,
    suffixes: Suffixes,
    ext: &'static str,
    with: &'static [&'static str],
) -> Candidate {
    Candidate {
        stem,
        suffixes,
        ext,
        kind: Kind::MetricTwin,
        compatible: with,
    }
}

const fn alike(stem: &'static str, suffixes: Suffixes, ext: &'static str) -> Candidate {
    Candidate {
        stem,
        suffixes,
        ext,
        kind: Kind::LookAlike,
        compatible: &[],
    }
}

const fn family(
    name: &'static str,
    keys: &'static [&'static str],
    class: Class,
    candidates: &'static [Candidate],
    note: Option<&'static str>,
) -> Family {
    Family {
        name,
        keys,
        class,
        candidates,
        note,
    }
}

pub(crate) const STD: Suffixes = &["-Regular", "-Bold", "-Italic", "-BoldItalic"];
pub(crate) const OBLIQUE: Suffixes = &["-Regular", "-Bold", "-Oblique", "-BoldOblique"];
pub(crate) const ROMAN: Suffixes = &["-Roman", "-Bold", "-Italic", "-BoldItalic"];
pub(crate) const C059: Suffixes = &["-Roman", "-Bold", "-Italic", "-BdIta"];
pub(crate) const BOOKMAN: Suffixes = &["-Light", "-Demi", "-LightItalic", "-DemiItalic"];
pub(crate) const GOTHIC: Suffixes = &["-Book", "-Demi", "-BookOblique", "-DemiOblique"];
pub(crate) const DEJAVU_OBLIQUE: Suffixes = &["", "-Bold", "-Oblique", "-BoldOblique"];
pub(crate) const DEJAVU_ITALIC: Suffixes = &["", "-Bold", "-Italic", "-BoldItalic"];
const SELAWIK: Suffixes = &["", "b", "", "b"];

const ARIAL: &[&str] = &["Arial", "Helvetica"];
const TIMES: &[&str] = &["Times New Roman", "Times"];
const COURIER: &[&str] = &["Courier New", "Courier"];
const NARROW: &[&str] = &["Arial Narrow", "Helvetica Narrow"];
const PALATINO: &[&str] = &["Palatino", "Palatino Linotype", "Book Antiqua"];
const BOOKMANS: &[&str] = &["Bookman", "Bookman Old Style"];
const SCHOOLBOOK: &[&str] = &["New Century Schoolbook", "Century Schoolbook"];

const DEJAVU_SANS: Candidate = alike("DejaVuSans", DEJAVU_OBLIQUE, "ttf");
const DEJAVU_SERIF: Candidate = alike("DejaVuSerif", DEJAVU_ITALIC, "ttf");
const DEJAVU_MONO: Candidate = alike("DejaVuSansMono", DEJAVU_OBLIQUE, "ttf");

// Liberation first (TrueType, the best-hinted), the URW base-35 clones of the same
// originals second; tests/embed_registry.rs measures that both carry the same widths.
// Kept one row per candidate by hand: rustfmt would stretch the table over 250 lines.
#[rustfmt::skip]
const FAMILIES: &[Family] = &[
    family("Arial", &["arial", "helvetica", "nimbussanl", "nimbussans"], Class::Sans, &[
        twin("LiberationSans", STD, "ttf", ARIAL),
        twin("NimbusSans", STD, "otf", ARIAL),
    ], None),
    family("Arial Narrow", &["arialnarrow", "helveticanarrow", "helveticacondensed"], Class::Sans, &[
        twin("LiberationSansNarrow", STD, "ttf", NARROW),
        twin("NimbusSansNarrow", OBLIQUE, "otf", NARROW),
    ], None),
    family("Times New Roman", &["timesnewroman", "times", "nimbusromno9l", "nimbusroman"], Class::Serif, &[
        twin("LiberationSerif", STD, "ttf", TIMES),
        twin("NimbusRoman", STD, "otf", TIMES),
    ], None),
    family("Courier New", &["couriernew", "courier", "nimbusmonl", "nimbusmonops"], Class::Mono, &[
        twin("LiberationMono", STD, "ttf", COURIER),
        twin("NimbusMonoPS", STD, "otf", COURIER),
    ], None),
    family("Calibri", &["calibri"], Class::Sans, &[twin("Carlito", STD, "ttf", &["Calibri"])], None),
    family("Cambria", &["cambria"], Class::Serif, &[twin("Caladea", STD, "ttf", &["Cambria"])], None),
    // Gelasio is Georgia's metric twin; no Debian package carries it, so scripts/setup.sh
    // installs it from the pinned npm package @fontsource/gelasio (scripts/install-fonts.cjs).
    // Georgia itself is not installed, so its widths cannot be checked here (the test
    // `look_alike_candidates_measured` prints the installed serifs' widths for review).
    // Without Gelasio: DejaVu Serif shares its screen-serif design (large x-height, wide set).
    family("Georgia", &["georgia"], Class::Serif, &[
        twin("Gelasio", STD, "ttf", &["Georgia"]),
        DEJAVU_SERIF,
    ], Some("Gelasio (from npm, installed by scripts/setup.sh) not installed; DejaVu Serif look-alike")),
    // Selawik is Microsoft's open Segoe UI fallback, not packaged in Debian either.
    family("Segoe UI", &["segoeui", "segoe"], Class::Sans, &[
        twin("selawk", SELAWIK, "ttf", &["Segoe UI"]),
        alike("LiberationSans", STD, "ttf"),
    ], Some("no packaged metric twin (Selawik is not in Debian); Liberation Sans look-alike")),
    family("Palatino", &["palatino", "palatinolinotype"], Class::Serif,
        &[twin("P052", ROMAN, "otf", PALATINO)], None),
    family("Book Antiqua", &["bookantiqua"], Class::Serif,
        &[twin("P052", ROMAN, "otf", PALATINO)], None),
    family("Bookman", &["bookman", "bookmanoldstyle", "itcbookman"], Class::Serif, &[
        twin("URWBookman", BOOKMAN, "otf", BOOKMANS),
    ], None),
    family("Century Gothic", &["centurygothic"], Class::Sans, &[alike("URWGothic", GOTHIC, "otf")],
        Some("URW Gothic (the Avant Garde design) is close but not width-identical")),
    family("New Century Schoolbook", &["newcenturyschoolbook", "newcenturyschlbk", "centuryschoolbook"],
        Class::Serif, &[twin("C059", C059, "otf", SCHOOLBOOK)], None),
];

/// Suffix tokens a PostScript or display name may carry after the family, and whether each
/// says bold / italic. Longer tokens first, so `bolditalic` is not read as `bold` + junk.
const STYLE_TOKENS: &[(&str, bool, bool)] = &[
    ("semibold", true, false),
    ("demibold", true, false),
    ("bold", true, false),
    ("demi", true, false),
    // URW's own abbreviations (NimbusRomNo9L-Medi, -ReguItal: the clones TeX embeds).
    ("medi", true, false),
    ("regu", false, false),
    ("black", true, false),
    ("heavy", true, false),
    ("italic", false, true),
    ("oblique", false, true),
    ("ital", false, true),
    ("regular", false, false),
    ("roman", false, false),
    ("normal", false, false),
    ("medium", false, false),
    ("light", false, false),
    ("book", false, false),
    ("psmt", false, false),
    ("mt", false, false),
    ("ps", false, false),
    ("it", false, true),
];

/// A family name as the document spells it, reduced to what the registry matches on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedName {
    /// Canonical promised family (e.g. `Times New Roman` for `TimesNewRomanPS-BoldMT`).
    pub family: &'static str,
    /// Bold named in the name.
    pub bold: bool,
    /// Italic or oblique named in the name.
    pub italic: bool,
}

/// Match a font or family name (`ArialMT`, `ABCDEF+Cambria,Italic`, `Times-Roman`, …)
/// against the promised families. The longest matching family key wins, so `ArialNarrow`
/// is Arial Narrow, not Arial.
pub fn parse_name(raw: &str) -> Option<ParsedName> {
    let without_tag = match raw.split_once('+') {
        Some((tag, rest)) if tag.len() == 6 && tag.bytes().all(|b| b.is_ascii_uppercase()) => rest,
        _ => raw,
    };
    let key: String = without_tag
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let mut best: Option<(usize, ParsedName)> = None;
    for family in FAMILIES {
        for fkey in family.keys {
            let Some(rest) = key.strip_prefix(fkey) else {
                continue;
            };
            let Some((bold, italic)) = read_style_suffix(rest) else {
                continue;
            };
            if best.as_ref().is_none_or(|(len, _)| fkey.len() > *len) {
                best = Some((
                    fkey.len(),
                    ParsedName {
                        family: family.name,
                        bold,
                        italic,
                    },
                ));
            }
        }
    }
    best.map(|(_, parsed)| parsed)
}

/// Consume `rest` entirely with style tokens; `None` if something else is left.
fn read_style_suffix(mut rest: &str) -> Option<(bool, bool)> {
    let (mut bold, mut italic) = (false, false);
    while !rest.is_empty() {
        let (token, b, i) = STYLE_TOKENS.iter().find(|(t, _, _)| rest.starts_with(t))?;
        rest = &rest[token.len()..];
        bold |= b;
        italic |= i;
    }
    Some((bold, italic))
}

/// Installed font files, indexed by file name.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    files: HashMap<String, PathBuf>,
}

impl Registry {
    /// Index the fonts in [`FONT_DIRS_ENV`] (when set) or [`DEFAULT_FONT_DIRS`].
    pub fn discover() -> Registry {
        match std::env::var_os(FONT_DIRS_ENV) {
            Some(dirs) => Registry::from_dirs(std::env::split_paths(&dirs)),
            None => Registry::from_dirs(DEFAULT_FONT_DIRS.iter().map(PathBuf::from)),
        }
    }

    /// Index the fonts below the given directories; the first file of a name wins.
    pub fn from_dirs(dirs: impl IntoIterator<Item = PathBuf>) -> Registry {
        let mut files = HashMap::new();
        for dir in dirs {
            index_dir(&dir, &mut files, 0);
        }
        Registry { files }
    }

    /// The file serving `family` (any spelling [`parse_name`] accepts) in the given style.
    /// Bold / italic named in `family` itself add to the flags. A style no candidate has
    /// installed falls back to the DejaVu look-alike of the family's class.
    pub fn resolve(&self, family: &str, bold: bool, italic: bool) -> Option<Resolved> {
        let parsed = parse_name(family)?;
        let style = Style::from_flags(bold || parsed.bold, italic || parsed.italic);
        let fam = FAMILIES.iter().find(|f| f.name == parsed.family)?;
        self.resolve_family(fam, style)
    }

    fn resolve_family(&self, fam: &Family, style: Style) -> Option<Resolved> {
        let last_resort = match fam.class {
            Class::Sans => &DEJAVU_SANS,
            Class::Serif => &DEJAVU_SERIF,
            Class::Mono => &DEJAVU_MONO,
        };
        fam.candidates
            .iter()
            .chain(std::iter::once(last_resort))
            .find_map(|c| {
                let file = c.file(style);
                self.files.get(&file).map(|path| Resolved {
                    name: file
                        .rsplit_once('.')
                        .map_or(file.as_str(), |(stem, _)| stem)
                        .to_string(),
                    family: fam.name.to_string(),
                    style,
                    path: path.clone(),
                    kind: c.kind,
                    metric_compatible_with: c.compatible.iter().map(|s| s.to_string()).collect(),
                })
            })
    }

    /// Every promised family and style with what serves it now (`GET /v1/fonts`).
    pub fn list(&self) -> Vec<Listing> {
        let mut out = Vec::new();
        for fam in FAMILIES {
            for style in Style::ALL {
                let resolved = self.resolve_family(fam, style);
                let kind = resolved.as_ref().map_or(Kind::LookAlike, |r| r.kind);
                out.push(Listing {
                    name: resolved.as_ref().map(|r| r.name.clone()),
                    family: fam.name.to_string(),
                    style,
                    kind,
                    metric_compatible_with: resolved
                        .map(|r| r.metric_compatible_with)
                        .unwrap_or_default(),
                    note: if kind == Kind::MetricTwin {
                        None
                    } else {
                        fam.note.or(Some("no twin installed"))
                    },
                });
            }
        }
        out
    }

    /// Promised families with at least one style not served by a metric twin right now.
    pub fn families_without_twin(&self) -> Vec<&'static str> {
        FAMILIES
            .iter()
            .filter(|fam| {
                Style::ALL.iter().any(|&s| {
                    self.resolve_family(fam, s)
                        .is_none_or(|r| r.kind != Kind::MetricTwin)
                })
            })
            .map(|fam| fam.name)
            .collect()
    }

    /// Every promised family name (canonical spelling).
    pub fn promised_families() -> Vec<&'static str> {
        FAMILIES.iter().map(|f| f.name).collect()
    }

    /// The indexed path of a font file name, if installed.
    pub fn file(&self, file_name: &str) -> Option<&Path> {
        self.files.get(file_name).map(PathBuf::as_path)
    }
}

/// Font directories are shallow; the depth cap only guards against symlink loops.
fn index_dir(dir: &Path, files: &mut HashMap<String, PathBuf>, depth: u32) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    // Sorted so that which of two same-named files wins does not depend on the file system.
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if depth < 8 {
                index_dir(&path, files, depth + 1);
            }
        } else if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            let lower = name.to_ascii_lowercase();
            if lower.ends_with(".ttf") || lower.ends_with(".otf") {
                files.entry(name.to_string()).or_insert(path);
            }
        }
    }
}
