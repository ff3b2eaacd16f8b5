//! `style` (font, size, colour) on replace and on the three insert forms: the new text is
//! drawn in the font picked from the font list (pdffonts lists it), at the size asked for
//! (PDFium's spans), in the colour asked for (pixels of a poppler render), and the rest of
//! the line keeps its own font, size and colour.

mod common;

use pdfedit_engine::edit::{
    edit, At, Edit, EditError, EditOp, EditRequest, EditResult, InsertSpec, Occurrence, Scope,
    Style,
};
use pdfedit_engine::Span;

const TRIVIAL: &str = "font-tt-subset-libreoffice-trivial.pdf";

fn style(font: Option<&str>, size: Option<f64>, color: Option<&str>) -> Style {
    Style {
        font: font.map(str::to_string),
        size,
        color: color.map(str::to_string),
    }
}

fn run(pdf: &[u8], e: Edit) -> Result<EditResult, EditError> {
    edit(
        pdf,
        &EditRequest {
            edits: vec![e],
            ..EditRequest::default()
        },
    )
}

fn replace(find: &str, replace: &str, style: Style) -> Edit {
    Edit {
        find: find.into(),
        replace: replace.into(),
        scope: Scope {
            occurrence: Some(Occurrence::First),
            ..Scope::default()
        },
        style,
        ..Edit::default()
    }
}

fn insert(text: &str, at: At, style: Style) -> Edit {
    Edit {
        op: EditOp::Insert,
        insert: Some(InsertSpec {
            text: text.into(),
            at,
        }),
        style,
        ..Edit::default()
    }
}

fn pdftotext(pdf: &[u8]) -> String {
    let t = common::pdftotext(pdf, &[]).unwrap_or_default();
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Font names pdffonts lists, subset tags removed (PostScript names: Liberation Mono's
/// regular is `LiberationMono`, its bold `LiberationMono-Bold`).
fn pdffonts(pdf: &[u8]) -> Vec<String> {
    let text = common::run_tool("pdffonts", &[], pdf, &[])
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    text.lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().next())
        .map(|n| n.split_once('+').map_or(n, |(_, r)| r).to_string())
        .collect()
}

/// Page 1 rendered by poppler at 2 px per point: (width, height, RGB bytes).
fn poppler_render(pdf: &[u8]) -> (usize, usize, Vec<u8>) {
    let ppm = common::run_tool("pdftoppm", &["-r", "144", "-f", "1", "-l", "1"], pdf, &[])
        .map(|o| o.stdout)
        .unwrap_or_default();
    // P6\n<w> <h>\n255\n<bytes>
    let mut fields = Vec::new();
    let mut pos = 0;
    while fields.len() < 4 {
        while ppm[pos].is_ascii_whitespace() {
            pos += 1;
        }
        let start = pos;
        while !ppm[pos].is_ascii_whitespace() {
            pos += 1;
        }
        fields.push(String::from_utf8_lossy(&ppm[start..pos]).into_owned());
    }
    let (w, h) = (fields[1].parse().expect("w"), fields[2].parse().expect("h"));
    (w, h, ppm[pos + 1..].to_vec())
}

/// Pixels inside `bbox` (top-left points) for which `pick` holds.
fn count(
    render: &(usize, usize, Vec<u8>),
    bbox: [f32; 4],
    pick: impl Fn(u8, u8, u8) -> bool,
) -> usize {
    let (w, h, px) = (render.0, render.1, &render.2);
    let to = |v: f32, lim: usize| ((v * 2.0).max(0.0) as usize).min(lim);
    let mut n = 0;
    for y in to(bbox[1], h)..to(bbox[3], h) {
        for x in to(bbox[0], w)..to(bbox[2], w) {
            let i = (y * w + x) * 3;
            if pick(px[i], px[i + 1], px[i + 2]) {
                n += 1;
            }
        }
    }
    n
}

fn red(r: u8, g: u8, b: u8) -> bool {
    r > 150 && g < 90 && b < 90
}

fn spans(pdf: &[u8]) -> Vec<Span> {
    pdfedit_engine::read_text(pdf, None, Some(vec![1]), true, false)
        .expect("text")
        .pages
        .remove(0)
        .spans
}

fn span_with<'a>(spans: &'a [Span], text: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.text.contains(text))
        .unwrap_or_else(|| {
            panic!(
                "no span with {text:?}: {:?}",
                spans.iter().map(|s| &s.text).collect::<Vec<_>>()
            )
        })
}

#[test]
fn replace_in_a_picked_font_size_and_colour_keeps_the_rest_of_the_line() {
    let Some(pdf) = common::load(TRIVIAL) else {
        return;
    };
    let e = replace(
        "consetetur",
        "NEW",
        style(Some("LiberationSerif-Bold"), Some(12.0), Some("#FF0000")),
    );
    let r = run(&pdf, e).expect("edit runs");
    assert_eq!(r.failed, vec![]);
    assert_eq!(r.changes.len(), 1);
    let c = &r.changes[0];
    assert!(c.verified && c.collateral_pixels == 0);
    assert_eq!(c.font_used, "LiberationSerif-Bold");
    assert_eq!(c.font_source, "metric-twin");
    assert!(!r.warnings.iter().any(|w| w == "style_not_applied"));
    assert!(pdftotext(&r.pdf).starts_with("Lorem ipsum dolor sit amet, NEW sadipscing elitr,"));
    let fonts = pdffonts(&r.pdf);
    assert!(
        fonts.contains(&"LiberationSerif-Bold".to_string()),
        "{fonts:?}"
    );
    assert!(fonts.contains(&"DejaVuSans".to_string()), "{fonts:?}");
    let after = spans(&r.pdf);
    let new = span_with(&after, "NEW");
    assert!((new.size - 12.0).abs() < 0.05, "{}", new.size);
    assert!(new.font.contains("LiberationSerif"), "{}", new.font);
    let rest = span_with(&after, "sadipscing");
    assert!((rest.size - 10.0).abs() < 0.05 && rest.font.contains("DejaVuSans"));
    let render = poppler_render(&r.pdf);
    assert!(count(&render, new.bbox, red) > 30, "the new text is red");
    assert_eq!(
        count(&render, rest.bbox, red),
        0,
        "the rest of the line is not"
    );
    assert_eq!(
        count(&render, span_with(&after, "invidunt").bbox, red),
        0,
        "nor the next line"
    );
}

#[test]
fn insert_at_a_point_in_a_picked_style() {
    let Some(pdf) = common::load(TRIVIAL) else {
        return;
    };
    let at = At::Point {
        page: 1,
        x: 60.0,
        y: 300.0,
    };
    let e = insert(
        "Styled note",
        at,
        style(Some("LiberationMono-Regular"), Some(14.0), Some("#FF0000")),
    );
    let r = run(&pdf, e).expect("edit runs");
    assert_eq!(r.failed, vec![]);
    let c = &r.changes[0];
    assert_eq!(c.font_used, "LiberationMono-Regular");
    assert_eq!(c.font_source, "metric-twin");
    assert!(pdftotext(&r.pdf).ends_with("Styled note"));
    let fonts = pdffonts(&r.pdf);
    assert!(fonts.contains(&"LiberationMono".to_string()), "{fonts:?}");
    let new = span_with(&spans(&r.pdf), "Styled").clone();
    assert!((new.size - 14.0).abs() < 0.05, "{}", new.size);
    assert!(count(&poppler_render(&r.pdf), new.bbox, red) > 30);
}

#[test]
fn insert_on_a_new_line_in_a_family_picked_by_name() {
    let Some(pdf) = common::load(TRIVIAL) else {
        return;
    };
    let at = At::After {
        phrase: "sanctus est Lorem ipsum dolor sit amet.".into(),
        newline: true,
        page: None,
    };
    let e = insert(
        "nova linea",
        at,
        style(Some("Times New Roman"), None, Some("#FF0000")),
    );
    let r = run(&pdf, e).expect("edit runs");
    assert_eq!(r.failed, vec![]);
    // DejaVu Sans is regular: the family's regular style serves.
    assert_eq!(r.changes[0].font_used, "LiberationSerif-Regular");
    assert!(pdftotext(&r.pdf).ends_with("dolor sit amet. nova linea"));
    let fonts = pdffonts(&r.pdf);
    assert!(fonts.contains(&"LiberationSerif".to_string()), "{fonts:?}");
    let after = spans(&r.pdf);
    let new = span_with(&after, "nova linea");
    assert!(
        (new.size - 10.0).abs() < 0.05,
        "the size of the text around"
    );
    assert!(count(&poppler_render(&r.pdf), new.bbox, red) > 30);
}

#[test]
fn inline_insert_styles_the_new_text_and_not_the_anchor() {
    let Some(pdf) = common::load(TRIVIAL) else {
        return;
    };
    let at = At::After {
        phrase: "nonumy eirmod tempor".into(),
        newline: false,
        page: None,
    };
    let e = insert(
        "NB",
        at,
        style(Some("LiberationSans-Bold"), None, Some("#FF0000")),
    );
    let r = run(&pdf, e).expect("edit runs");
    assert_eq!(r.failed, vec![]);
    assert_eq!(r.changes[0].op, EditOp::Insert);
    assert_eq!(r.changes[0].font_used, "LiberationSans-Bold");
    assert!(pdftotext(&r.pdf).contains("sed diam nonumy eirmod tempor NB invidunt ut"));
    assert!(pdffonts(&r.pdf).contains(&"LiberationSans-Bold".to_string()));
    let after = spans(&r.pdf);
    let render = poppler_render(&r.pdf);
    let new = span_with(&after, "NB");
    assert!(new.font.contains("LiberationSans-Bold"), "{}", new.font);
    assert!(count(&render, new.bbox, red) > 20);
    let anchor = span_with(&after, "eirmod tempor");
    assert!(anchor.font.contains("DejaVuSans"), "{}", anchor.font);
    assert_eq!(
        count(&render, anchor.bbox, red),
        0,
        "the anchor keeps its colour"
    );
}

#[test]
fn an_unknown_font_name_is_an_invalid_request() {
    let Some(pdf) = common::load(TRIVIAL) else {
        return;
    };
    let e = replace(
        "consetetur",
        "x",
        style(Some("Comic Sans Nonexistent"), None, None),
    );
    match run(&pdf, e) {
        Err(EditError::Engine(pdfedit_engine::Error::InvalidRequest(m))) => {
            assert!(m.contains("GET /v1/fonts"), "{m}");
        }
        other => panic!(
            "expected invalid_request, got {:?}",
            other.map(|r| r.failed)
        ),
    }
}
