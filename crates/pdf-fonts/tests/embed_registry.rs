//! The twin registry against the fonts installed on this machine, with the metric claims
//! measured: widths of the twins against known widths of the originals (the standard-14
//! AFM values that Arial / Times New Roman / Courier New reproduce) and against the URW
//! clones of the same originals where both are installed.

use pdf_fonts::registry::{parse_name, Kind, Registry, Style};
use std::path::Path;
use ttf_parser::Face;

fn widths(path: &Path, text: &str) -> Vec<i32> {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let face = Face::parse(&data, 0).expect("font");
    let upem = f32::from(face.units_per_em());
    text.chars()
        .map(|c| {
            let gid = face
                .glyph_index(c)
                .unwrap_or_else(|| panic!("{c:?} missing in {}", path.display()));
            let advance = f32::from(face.glyph_hor_advance(gid).unwrap_or(0));
            (advance * 1000.0 / upem).round() as i32
        })
        .collect()
}

fn printable_ascii() -> String {
    (0x20u8..0x7f).map(char::from).collect()
}

/// The file serving a family/style, or `None` with a skip message.
fn served(
    reg: &Registry,
    family: &str,
    bold: bool,
    italic: bool,
) -> Option<pdf_fonts::registry::Resolved> {
    let r = reg.resolve(family, bold, italic);
    if r.is_none() {
        eprintln!("skipped: nothing installed for {family}");
    }
    r
}

#[test]
fn arial_helvetica_twin_has_arial_widths() {
    let reg = Registry::discover();
    let Some(r) = served(&reg, "ArialMT", false, false) else {
        return;
    };
    assert_eq!(r.kind, Kind::MetricTwin);
    assert_eq!(r.family, "Arial");
    assert!(r.metric_compatible_with.iter().any(|f| f == "Helvetica"));
    // Arial = Helvetica AFM: a 556, W 944, space 278, i 222, M 833.
    assert_eq!(widths(&r.path, "aW iM"), [556, 944, 278, 222, 833]);
    let helv = reg.resolve("Helvetica-Bold", false, false).expect("bold");
    assert_eq!(helv.style, Style::Bold);
    // Helvetica-Bold AFM: a 556, W 944, space 278, i 278.
    assert_eq!(widths(&helv.path, "aW i"), [556, 944, 278, 278]);
}

#[test]
fn times_and_courier_twins_have_the_originals_widths() {
    let reg = Registry::discover();
    if let Some(r) = served(&reg, "TimesNewRomanPSMT", false, false) {
        assert_eq!(r.kind, Kind::MetricTwin);
        // Times-Roman AFM: a 444, W 944, space 250, M 889, i 278.
        assert_eq!(widths(&r.path, "aW Mi"), [444, 944, 250, 889, 278]);
    }
    for (bold, italic) in [(false, false), (true, false), (false, true), (true, true)] {
        let Some(r) = served(&reg, "Courier New", bold, italic) else {
            continue;
        };
        assert_eq!(r.kind, Kind::MetricTwin);
        let w = widths(&r.path, &printable_ascii());
        assert!(w.iter().all(|&x| x == 600), "{}: {w:?}", r.name);
    }
}

/// Liberation and the URW base-35 clones were made to the same originals independently;
/// equal widths on all printable ASCII (within 1/1000 em of rounding) confirm both.
#[test]
fn liberation_and_urw_clones_agree() {
    let reg = Registry::discover();
    let pairs = [
        ("LiberationSans-Regular.ttf", "NimbusSans-Regular.otf"),
        ("LiberationSans-Bold.ttf", "NimbusSans-Bold.otf"),
        ("LiberationSerif-Regular.ttf", "NimbusRoman-Regular.otf"),
        ("LiberationSerif-Italic.ttf", "NimbusRoman-Italic.otf"),
        ("LiberationMono-Regular.ttf", "NimbusMonoPS-Regular.otf"),
        (
            "LiberationSansNarrow-Regular.ttf",
            "NimbusSansNarrow-Regular.otf",
        ),
        ("LiberationSansNarrow-Bold.ttf", "NimbusSansNarrow-Bold.otf"),
    ];
    let ascii = printable_ascii();
    for (a, b) in pairs {
        let (Some(pa), Some(pb)) = (reg.file(a), reg.file(b)) else {
            eprintln!("skipped: {a} or {b} not installed");
            continue;
        };
        let (wa, wb) = (widths(pa, &ascii), widths(pb, &ascii));
        for ((c, x), y) in ascii.chars().zip(&wa).zip(&wb) {
            assert!((x - y).abs() <= 1, "{a} vs {b}: {c:?} {x} != {y}");
        }
    }
}

#[test]
fn every_promised_family_and_style_is_listed() {
    let reg = Registry::discover();
    let list = reg.list();
    for family in Registry::promised_families() {
        for style in Style::ALL {
            assert!(
                list.iter().any(|l| l.family == family && l.style == style),
                "{family} {style:?}"
            );
        }
    }
    for l in &list {
        eprintln!(
            "{:24} {:12} {:32} {:12} {:?}",
            l.family,
            l.style.as_str(),
            l.name.as_deref().unwrap_or("(none)"),
            l.kind.as_str(),
            l.metric_compatible_with
        );
    }
    let without = reg.families_without_twin();
    eprintln!("families without a metric twin here: {without:?}");
    if reg.file("LiberationSans-Regular.ttf").is_some() && reg.file("DejaVuSerif.ttf").is_some() {
        // Debian packages give no twin for these three; Gelasio / Selawik would change that.
        let no_twin = reg.file("Gelasio-Regular.ttf").is_none();
        assert_eq!(without.contains(&"Georgia"), no_twin);
        assert!(without.contains(&"Century Gothic"));
        let georgia = reg.resolve("Georgia", false, false).expect("look-alike");
        assert_eq!(georgia.kind == Kind::LookAlike, no_twin);
        assert!(georgia.metric_compatible_with.is_empty() == no_twin);
    }
}

#[test]
fn styles_resolve_to_their_own_files() {
    let reg = Registry::discover();
    let expect = [
        (
            "Arial-BoldItalicMT",
            false,
            false,
            "LiberationSans-BoldItalic",
        ),
        ("Arial", true, true, "LiberationSans-BoldItalic"),
        ("ArialNarrow", true, false, "LiberationSansNarrow-Bold"),
        ("Calibri-Bold", false, false, "Carlito-Bold"),
        ("ABCDEF+Cambria,Italic", false, false, "Caladea-Italic"),
        ("Palatino Linotype", false, false, "P052-Roman"),
        ("BookAntiqua,Bold", false, false, "P052-Bold"),
        ("Bookman-Demi", false, false, "URWBookman-Demi"),
        ("NewCenturySchlbk-BoldItalic", false, false, "C059-BdIta"),
        ("CenturyGothic", false, true, "URWGothic-BookOblique"),
        ("Courier", false, true, "LiberationMono-Italic"),
    ];
    for (family, bold, italic, name) in expect {
        match reg.resolve(family, bold, italic) {
            Some(r) => assert_eq!(r.name, name, "{family} bold={bold} italic={italic}"),
            None => eprintln!("skipped: nothing installed for {family}"),
        }
    }
}

#[test]
fn font_dirs_override_limits_the_search() {
    let dir = std::env::temp_dir().join(format!("pdfedit-fontdirs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let reg = Registry::from_dirs([dir.clone()]);
    assert_eq!(reg.resolve("Arial", false, false), None);
    assert_eq!(
        reg.families_without_twin().len(),
        Registry::promised_families().len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Georgia and Segoe UI have no twin installed: print the candidates' widths (1000 units,
/// on a pangram) so the choice of look-alike can be reviewed.
#[test]
fn look_alike_candidates_measured() {
    let reg = Registry::discover();
    let text = "The quick brown fox jumps over the lazy dog. Sphinx of black quartz, judge my vow";
    for file in [
        "LiberationSerif-Regular.ttf",
        "Caladea-Regular.ttf",
        "P052-Roman.otf",
        "C059-Roman.otf",
        "DejaVuSerif.ttf",
        "LiberationSans-Regular.ttf",
        "Carlito-Regular.ttf",
        "DejaVuSans.ttf",
    ] {
        if let Some(path) = reg.file(file) {
            let total: i32 = widths(path, text).iter().sum();
            eprintln!("{file:32} pangram width {total}");
        }
    }
}

fn parsed(name: &str) -> (&'static str, bool, bool) {
    let p = parse_name(name).unwrap_or_else(|| panic!("{name} not recognised"));
    (p.family, p.bold, p.italic)
}

#[test]
fn names_as_documents_spell_them() {
    assert_eq!(parsed("ArialMT"), ("Arial", false, false));
    assert_eq!(parsed("Arial-BoldMT"), ("Arial", true, false));
    assert_eq!(parsed("Arial-BoldItalicMT"), ("Arial", true, true));
    assert_eq!(
        parsed("TimesNewRomanPSMT"),
        ("Times New Roman", false, false)
    );
    assert_eq!(
        parsed("TimesNewRomanPS-BoldItalicMT"),
        ("Times New Roman", true, true)
    );
    assert_eq!(parsed("Times-Roman"), ("Times New Roman", false, false));
    assert_eq!(parsed("Helvetica-Oblique"), ("Arial", false, true));
    assert_eq!(parsed("CourierNewPS-BoldMT"), ("Courier New", true, false));
    assert_eq!(parsed("Calibri-Bold"), ("Calibri", true, false));
    assert_eq!(parsed("ABCDEF+Cambria,Italic"), ("Cambria", false, true));
    assert_eq!(parsed("ArialNarrow-Bold"), ("Arial Narrow", true, false));
    assert_eq!(parsed("Arial Narrow"), ("Arial Narrow", false, false));
    assert_eq!(
        parsed("NewCenturySchlbk-Italic"),
        ("New Century Schoolbook", false, true)
    );
    assert_eq!(parsed("PalatinoLinotype-Roman"), ("Palatino", false, false));
    assert_eq!(parsed("BookAntiqua,Bold"), ("Book Antiqua", true, false));
    assert_eq!(parsed("BookmanOldStyle"), ("Bookman", false, false));
    assert_eq!(parsed("Segoe UI Semibold"), ("Segoe UI", true, false));
    assert_eq!(parsed("Georgia"), ("Georgia", false, false));
    assert_eq!(
        parsed("CenturyGothic-Bold"),
        ("Century Gothic", true, false)
    );
}

#[test]
fn unknown_names_are_not_guessed() {
    assert_eq!(parse_name("Verdana"), None);
    assert_eq!(parse_name("ArialUnicodeMS"), None);
    assert_eq!(parse_name("Timesless"), None);
}

#[test]
fn empty_registry_resolves_nothing_and_lists_every_promise() {
    let reg = Registry::default();
    assert_eq!(reg.resolve("Arial", false, false), None);
    let listing = reg.list();
    assert_eq!(listing.len(), Registry::promised_families().len() * 4);
    assert!(listing
        .iter()
        .all(|l| l.name.is_none() && l.kind == Kind::LookAlike));
    assert_eq!(
        reg.families_without_twin().len(),
        Registry::promised_families().len()
    );
}
