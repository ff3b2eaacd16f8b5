//! `fit: reflow`: a longer replacement re-breaks its paragraph (greedy, same left edge and
//! leading), grows it into empty room below, refuses with `overflow` when that room is
//! taken and with `reflow_unsupported` on a paragraph that is not simple; checked with
//! pdftotext (every word, in reading order) on a built paragraph and a corpus one.

mod common;

use lopdf::{dictionary, Document, Object, Stream};
use pdfedit_engine::edit::{edit, Edit, EditRequest, EditResult, Fit, Occurrence, Scope};

const TRIVIAL: &str = "font-tt-subset-libreoffice-trivial.pdf";

/// Courier 10 pt: every glyph 6 pt wide, so a line's width is known exactly.
const CHAR_W: f64 = 6.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 540.0;
const TOP: f64 = 700.0;
const LEADING: f64 = 12.0;

const WORDS: &str = "The quick brown fox jumps over the lazy dog while the patient \
    reader follows every word of this paragraph from its first line to its last \
    line without losing a single one of them along the way to the end";

/// Greedy lines of at most `(RIGHT - LEFT) / CHAR_W` characters.
fn wrap(text: &str) -> Vec<String> {
    let max = ((RIGHT - LEFT) / CHAR_W) as usize;
    let mut lines: Vec<String> = vec![String::new()];
    for w in text.split_whitespace() {
        let cur = lines.last_mut().expect("a line");
        if cur.is_empty() {
            cur.push_str(w);
        } else if cur.len() + 1 + w.len() <= max {
            cur.push(' ');
            cur.push_str(w);
        } else {
            lines.push(w.to_string());
        }
    }
    lines
}

/// One page: the paragraph at (LEFT, TOP) in Courier 10 with 12 pt leading; `below`
/// is drawn `gap` points under the paragraph's last baseline; `bold_word` draws the
/// second line's first word in Courier-Bold.
fn build(below: &str, gap: f64, bold_word: bool) -> Vec<u8> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier",
        "Encoding" => "WinAnsiEncoding",
    });
    let bold = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier-Bold",
        "Encoding" => "WinAnsiEncoding",
    });
    let lines = wrap(WORDS);
    let mut content = String::from("BT /F1 10 Tf\n");
    for (k, line) in lines.iter().enumerate() {
        let y = TOP - k as f64 * LEADING;
        if bold_word && k == 1 {
            let (first, rest) = line.split_once(' ').expect("two words");
            content +=
                &format!("1 0 0 1 {LEFT} {y} Tm /F2 10 Tf ({first}) Tj /F1 10 Tf ( {rest}) Tj\n");
        } else {
            content += &format!("1 0 0 1 {LEFT} {y} Tm ({line}) Tj\n");
        }
    }
    let last_y = TOP - (lines.len() - 1) as f64 * LEADING;
    content += &format!("1 0 0 1 {LEFT} {} Tm ({below}) Tj\nET\n", last_y - gap);
    let contents = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        "Resources" => dictionary! { "Font" => dictionary! { "F1" => font, "F2" => bold } },
        "Contents" => contents,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![Object::Reference(page)], "Count" => 1,
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("saves");
    out
}

fn reflow(pdf: &[u8], find: &str, replace: &str) -> EditResult {
    let request = EditRequest {
        edits: vec![Edit {
            find: find.into(),
            replace: replace.into(),
            fit: Fit::Reflow,
            scope: Scope {
                occurrence: Some(Occurrence::First),
                ..Scope::default()
            },
            ..Edit::default()
        }],
        ..EditRequest::default()
    };
    edit(pdf, &request).expect("edit runs")
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// Text lines of a pdftotext -layout output, trimmed, without empty ones.
fn text_lines(s: &str) -> Vec<String> {
    s.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

fn ready() -> bool {
    common::init_pdfium()
}

#[test]
fn a_longer_word_rebreaks_the_paragraph_and_it_grows_into_empty_room() {
    if !ready() {
        return;
    }
    let pdf = build("Footer far below", 200.0, false);
    let before_lines = wrap(WORDS);
    let new = "extraordinarily quick and remarkably brown";
    let r = reflow(&pdf, "quick brown", new);
    assert_eq!(r.failed, vec![], "{:?}", r.failed);
    assert_eq!(r.changes.len(), 1);
    let c = &r.changes[0];
    assert!(c.verified && c.collateral_pixels == 0);
    assert_eq!(c.font_source, "exact-declared");
    assert_eq!(c.font_used, "Courier");
    let text = common::pdftotext(&r.pdf, &[]).unwrap_or_default();
    let expected = WORDS.replacen("quick brown", new, 1);
    let mut want = words(&expected);
    want.extend(words("Footer far below"));
    assert_eq!(words(&text), want, "every word, in reading order:\n{text}");
    // The paragraph is re-broken greedily: pdftotext's lines are the greedy lines of the
    // new text, one more than before, and the footer is where it was.
    let got = text_lines(&common::pdftotext(&r.pdf, &["-layout"]).unwrap_or_default());
    let mut want_lines = wrap(&expected);
    assert_eq!(
        want_lines.len(),
        before_lines.len() + 1,
        "the case grows a line"
    );
    want_lines.push("Footer far below".into());
    assert_eq!(got, want_lines);
}

#[test]
fn text_that_fits_its_line_is_replaced_in_place() {
    if !ready() {
        return;
    }
    let pdf = build("Footer far below", 200.0, false);
    let r = reflow(&pdf, "lazy", "calm");
    assert_eq!(r.failed, vec![]);
    assert_eq!(r.changes.len(), 1);
    let got = text_lines(&common::pdftotext(&r.pdf, &["-layout"]).unwrap_or_default());
    let mut want = wrap(&WORDS.replacen("lazy", "calm", 1));
    want.push("Footer far below".into());
    assert_eq!(got, want);
}

#[test]
fn no_room_below_is_an_overflow_and_nothing_changes() {
    if !ready() {
        return;
    }
    // The next block sits two leadings below: the grown paragraph would need that line.
    let pdf = build("Next block text", LEADING * 1.5, false);
    let r = reflow(
        &pdf,
        "quick brown",
        "extraordinarily quick and remarkably brown",
    );
    assert!(r.changes.is_empty());
    assert_eq!(r.failed.len(), 1);
    assert_eq!(r.failed[0].reason, "overflow", "{}", r.failed[0].message);
    assert_eq!(r.pdf, pdf, "a refused edit returns the input unchanged");
}

#[test]
fn a_paragraph_mixing_fonts_is_refused_clearly() {
    if !ready() {
        return;
    }
    let pdf = build("Footer far below", 200.0, true);
    let r = reflow(
        &pdf,
        "quick brown",
        "extraordinarily quick and remarkably brown",
    );
    assert!(r.changes.is_empty());
    assert_eq!(r.failed.len(), 1);
    assert_eq!(
        r.failed[0].reason, "reflow_unsupported",
        "{}",
        r.failed[0].message
    );
    assert!(r.failed[0].message.contains("mixes fonts"));
}

#[test]
fn a_corpus_paragraph_reflows_with_every_word_in_order() {
    if !ready() {
        return;
    }
    let Some(_) = common::corpus() else { return };
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(TRIVIAL);
    let Ok(pdf) = std::fs::read(path) else { return };
    let before = common::pdftotext(&pdf, &[]).unwrap_or_default();
    let new = "consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore \
               et dolore magna aliquyam erat, sed diam voluptua. At vero eos et accusam et \
               justo duo dolores et ea rebum consetetur";
    let r = reflow(&pdf, "consetetur", new);
    assert_eq!(r.failed, vec![], "{:?}", r.failed);
    assert_eq!(r.changes.len(), 1);
    assert!(r.changes[0].verified);
    assert_eq!(r.changes[0].font_source, "exact-embedded");
    let after = common::pdftotext(&r.pdf, &[]).unwrap_or_default();
    assert_eq!(
        words(&after),
        words(&before.replacen("consetetur", new, 1)),
        "every word, in reading order:\n{after}"
    );
    // The paragraph grew by lines; its first line keeps the text before the match.
    let lines_before = text_lines(&common::pdftotext(&pdf, &["-layout"]).unwrap_or_default());
    let lines_after = text_lines(&common::pdftotext(&r.pdf, &["-layout"]).unwrap_or_default());
    assert!(
        lines_after.len() > lines_before.len(),
        "{lines_before:?} -> {lines_after:?}"
    );
    assert!(lines_after[0].starts_with("Lorem ipsum dolor sit amet, consetetur sadipscing"));
}
