//! The nearest installed face (issue 15 item 4): a font's own proportions lead back to the
//! face they were measured on, and the class (serif, sans, fixed pitch) and style are kept.

use pdf_fonts::nearest::{measure, Appearance};
use pdf_fonts::registry::{Kind, Registry};

fn appearance_of(reg: &Registry, file: &str, serif: bool, fixed: bool) -> Option<Appearance> {
    let Some(path) = reg.file(file) else {
        eprintln!("SKIP: {file} is not installed (scripts/setup.sh installs it)");
        return None;
    };
    let m = measure(path).expect("an installed face measures");
    assert!(m.x_height > 300.0 && m.x_height < 700.0, "{file}: {m:?}");
    assert!(
        m.lower_width > 300.0 && m.lower_width < 700.0,
        "{file}: {m:?}"
    );
    Some(Appearance {
        serif,
        fixed,
        bold: false,
        italic: false,
        x_height: m.x_height,
        lower_width: m.lower_width,
    })
}

#[test]
fn a_faces_own_proportions_choose_that_face() {
    let reg = Registry::discover();
    for (file, stem, serif, fixed) in [
        ("DejaVuSans.ttf", "DejaVuSans", false, false),
        (
            "LiberationSerif-Regular.ttf",
            "LiberationSerif-Regular",
            true,
            false,
        ),
        ("DejaVuSerif.ttf", "DejaVuSerif", true, false),
        (
            "LiberationSansNarrow-Regular.ttf",
            "LiberationSansNarrow-Regular",
            false,
            false,
        ),
        (
            "LiberationMono-Regular.ttf",
            "LiberationMono-Regular",
            false,
            true,
        ),
    ] {
        let Some(want) = appearance_of(&reg, file, serif, fixed) else {
            continue;
        };
        let got = reg
            .nearest(&want)
            .expect("a face of the class is installed");
        assert_eq!(got.name, stem, "wanted the proportions of {file}");
        assert_eq!(got.kind, Kind::LookAlike);
    }
}

#[test]
fn class_and_style_are_kept() {
    let reg = Registry::discover();
    if reg.file("LiberationSerif-BoldItalic.ttf").is_none() {
        eprintln!("SKIP: Liberation fonts are not installed");
        return;
    }
    // Wide, low proportions no face has exactly: the class and style still decide.
    let want = Appearance {
        serif: true,
        fixed: false,
        bold: true,
        italic: true,
        x_height: 470.0,
        lower_width: 520.0,
    };
    let got = reg.nearest(&want).expect("a serif is installed");
    assert!(
        got.name.contains("Bold") || got.name.contains("Bd") || got.name.contains("Demi"),
        "{}",
        got.name
    );
    assert!(
        got.name.contains("Ita") || got.name.contains("Oblique"),
        "{}",
        got.name
    );
    let serifs = [
        "LiberationSerif",
        "Caladea",
        "DejaVuSerif",
        "P052",
        "C059",
        "URWBookman",
    ];
    assert!(
        serifs.iter().any(|s| got.name.starts_with(s)),
        "{}",
        got.name
    );
    let mono = reg
        .nearest(&Appearance {
            fixed: true,
            ..Appearance::default()
        })
        .expect("a fixed-pitch face is installed");
    let monos = ["LiberationMono", "DejaVuSansMono", "NimbusMonoPS"];
    assert!(
        monos.iter().any(|s| mono.name.starts_with(s)),
        "{}",
        mono.name
    );
}

#[test]
fn gelasio_from_npm_serves_georgia_and_embeds() {
    let reg = Registry::discover();
    let Some(path) = reg.file("Gelasio-Regular.ttf") else {
        eprintln!("SKIP: Gelasio is not installed (scripts/setup.sh installs it as root)");
        return;
    };
    let georgia = reg
        .resolve("Georgia", false, false)
        .expect("Georgia resolves");
    assert_eq!(georgia.kind, Kind::MetricTwin);
    assert_eq!(georgia.name, "Gelasio-Regular");
    // The TrueType that scripts/install-fonts.cjs rebuilt from WOFF parses, measures like a
    // text serif, and subsets into a PDF font that encodes Latin-1 text.
    let m = measure(path).expect("Gelasio measures");
    assert!(m.x_height > 450.0 && m.x_height < 520.0, "{m:?}");
    let mut doc = lopdf::Document::with_version("1.7");
    let text = "Façade Zürich";
    let font = pdf_fonts::embed::embed_font_file(&mut doc, path, text).expect("embeds");
    assert_eq!(
        font.encode(text).expect("encodes").len(),
        2 * text.chars().count()
    );
}

#[test]
fn urw_clones_that_tex_embeds_are_their_originals() {
    use pdf_fonts::registry::parse_name;
    let p = parse_name("TACTGM+NimbusRomNo9L-Medi").expect("a Times clone");
    assert_eq!(
        (p.family, p.bold, p.italic),
        ("Times New Roman", true, false)
    );
    let p = parse_name("NimbusRomNo9L-ReguItal").expect("a Times clone");
    assert_eq!(
        (p.family, p.bold, p.italic),
        ("Times New Roman", false, true)
    );
    assert_eq!(
        parse_name("NimbusSanL-Bold").map(|p| p.family),
        Some("Arial")
    );
    assert_eq!(
        parse_name("NimbusMonL-Regu").map(|p| p.family),
        Some("Courier New")
    );
}
