//! The SAMPLE mark of test-mode and keyless outputs (SPEC rule 12, API-DECISIONS "Test and
//! live keys"): a small light-grey text in a corner of every page as displayed.
//!
//! The mark is added after every edit has been verified, to the plain document (before an
//! encrypted output is encrypted again), and never touches the page's own streams: each page
//! gets a one-line stream in front (`q`) and one at the end that closes whatever the page left
//! open, then draws the mark inside its own `q … Q`. A viewer therefore draws it in the
//! default user space whatever `cm`, clipping or text state the page content ends in.
//! Its text extracts as itself (`pdftotext` shows "SAMPLE"), marked as an /Artifact so
//! tagged-PDF readers skip it.

use std::collections::HashMap;
use std::sync::OnceLock;

use lopdf::{dictionary, Document, Object, ObjectId, Stream};
use pdf_content::{write_op, OpKind, PageGlyphs, PdfString, Value};
use pdf_fonts::Font;

use crate::model::fonts::{DocFonts, Source};
use crate::model::text::PageGeom;
use crate::plan::streams::page_subdict_mut;
use crate::{Error, Result};

/// Size of the mark's text in points: small enough to stay out of the way, large enough to
/// be read on a printout.
const SIZE_PT: f64 = 7.0;
/// Distance from the displayed page edges, in points.
const MARGIN_PT: f64 = 6.0;
/// Fill grey (0 black … 1 white): light, so it does not compete with the page.
const GREY: f64 = 0.6;
/// Longest mark text accepted.
const MAX_CHARS: usize = 64;
/// Resource names tried for the mark's font: `PEMark`, `PEMark1`, … (the first unused).
const FONT_NAME: &str = "PEMark";
/// Ascent and descent of Helvetica in 1/1000 em (its AFM), for the mark's box.
const ASCENT: f64 = 718.0;
const DESCENT: f64 = -207.0;

/// Adds `text` in a corner of every page of `doc`; returns how many pages were marked.
///
/// `text` must be printable ASCII (it is drawn in Helvetica, WinAnsiEncoding). `known`
/// holds pages already interpreted in their current state (by page object), so the mark
/// does not read them again; the others are interpreted here, with `fonts` (the fonts of
/// `doc` loaded so far, which the run keeps true to its document).
pub(crate) fn stamp(
    doc: &mut Document,
    text: &str,
    known: &HashMap<ObjectId, &PageGlyphs>,
    fonts: &mut DocFonts,
) -> Result<usize> {
    let pages: Vec<ObjectId> = doc.get_pages().into_values().collect();
    stamp_pages(doc, text, known, fonts, &pages, false, &mut |_, _| true)?;
    Ok(pages.len())
}

/// Adds `text` to each of `pages`, in the first place (corners, bottom right first or with
/// `from_left` bottom left first, then the middles of the bottom and top edges) that no
/// glyph overlaps and that `clear` accepts (page, displayed box in top-left points); when
/// there is none, in the corner that overlaps the fewest glyphs. Returns, per page, whether
/// a clear place was found. Pages not in `known` are read with `fonts` (see [`stamp`]).
pub(crate) fn stamp_pages(
    doc: &mut Document,
    text: &str,
    known: &HashMap<ObjectId, &PageGlyphs>,
    fonts: &mut DocFonts,
    pages: &[ObjectId],
    from_left: bool,
    clear: &mut dyn FnMut(ObjectId, [f64; 4]) -> bool,
) -> Result<Vec<bool>> {
    check(text)?;
    let (font_id, widths) = add_font(doc);
    let em = text
        .bytes()
        .map(|b| widths.get(usize::from(b - 32)).copied().unwrap_or(556.0))
        .sum::<f64>()
        / 1000.0;
    let mut openers: HashMap<usize, ObjectId> = HashMap::new();
    let mut placed_clear = Vec::with_capacity(pages.len());
    for page_id in pages {
        let page = match known.get(page_id) {
            Some(glyphs) => page_facts(doc, *page_id, glyphs),
            None => read_page(doc, *page_id, fonts),
        };
        let geom = PageGeom::read(doc, *page_id);
        let (place, is_clear) = place_where(&geom, &page.text_boxes, em, from_left, &mut |b| {
            clear(*page_id, b)
        });
        placed_clear.push(is_clear);
        let name = add_font_name(doc, *page_id, font_id)?;
        let opener = *openers.entry(page.saves_needed).or_insert_with(|| {
            let q = OpKind::Save.operator();
            let bytes = vec![write_op(&[], q); page.saves_needed].join(&b'\n');
            doc.add_object(Stream::new(dictionary! {}, bytes))
        });
        let closer = closing_stream(&page, &name, text, &place);
        let closer_id = doc.add_object(Stream::new(dictionary! {}, closer));
        set_contents(doc, *page_id, opener, closer_id)?;
    }
    Ok(placed_clear)
}

/// Refuses a mark text that [`stamp`] cannot draw (checked before any work).
pub(crate) fn check(text: &str) -> Result<()> {
    if text.is_empty() || text.len() > MAX_CHARS || !text.bytes().all(|b| (0x20..0x7f).contains(&b))
    {
        return Err(Error::InvalidRequest(format!(
            "the mark must be 1 to {MAX_CHARS} printable ASCII characters"
        )));
    }
    Ok(())
}

/// Helvetica (a standard font every viewer has) with its widths for codes 32..=126.
fn add_font(doc: &mut Document) -> (ObjectId, Vec<f64>) {
    let mut dict = dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    };
    // The standard widths, written out so the dictionary is complete (PDF 2.0 asks for
    // /Widths on every simple font) and every reader measures the mark alike. They are
    // Helvetica's own whatever the document: loaded once per process.
    static WIDTHS: OnceLock<Vec<f64>> = OnceLock::new();
    let widths = WIDTHS
        .get_or_init(|| {
            let loaded = Font::load(doc, &dict).ok();
            (32u32..=126)
                .map(|c| loaded.as_ref().map_or(556.0, |f| f.width(c)))
                .collect()
        })
        .clone();
    dict.set("FirstChar", 32);
    dict.set("LastChar", 126);
    dict.set(
        "Widths",
        Object::Array(widths.iter().map(|w| Object::Real(*w as f32)).collect()),
    );
    (doc.add_object(dict), widths)
}

/// What the mark needs to know of a page's content.
struct PageFacts {
    /// Displayed boxes of the page's glyphs, which the mark avoids.
    text_boxes: Vec<[f64; 4]>,
    /// `q`s to put in front so the content never restores below them.
    saves_needed: usize,
    /// `Q`s, `EMC`s and whether an `ET` are needed after the content to close it.
    restores: usize,
    open_marked: usize,
    in_text: bool,
}

fn read_page(doc: &Document, page_id: ObjectId, fonts: &mut DocFonts) -> PageFacts {
    let mut source = Source { doc, fonts };
    match pdf_content::interpret_page(doc, page_id, &mut source) {
        Ok(glyphs) => page_facts(doc, page_id, &glyphs),
        // An unreadable page still gets its mark; it just cannot avoid the text.
        Err(_) => PageFacts {
            text_boxes: Vec::new(),
            saves_needed: 1,
            restores: 1,
            open_marked: 0,
            in_text: false,
        },
    }
}

fn page_facts(doc: &Document, page_id: ObjectId, glyphs: &PageGlyphs) -> PageFacts {
    let geom = PageGeom::read(doc, page_id);
    let text_boxes = glyphs
        .glyphs
        .iter()
        .filter(|g| g.render_mode != 3 && g.bbox.iter().all(|v| v.is_finite()))
        .map(|g| geom.display_box(g.bbox))
        .collect();
    // Page streams come first in `streams`, in /Contents order; forms are balanced on
    // their own (the viewer saves and restores around `Do`).
    let mut page_streams: Vec<_> = glyphs
        .streams
        .iter()
        .filter_map(|s| match s.id {
            pdf_content::StreamId::PageContent { index, .. } => Some((index, s)),
            pdf_content::StreamId::Form { .. } => None,
        })
        .collect();
    page_streams.sort_by_key(|(i, _)| *i);
    let (mut depth, mut lowest, mut marked, mut in_text) = (0i64, 0i64, 0usize, false);
    for op in page_streams.iter().flat_map(|(_, s)| s.ops.iter()) {
        match op.kind {
            OpKind::Save => depth += 1,
            OpKind::Restore => {
                depth -= 1;
                lowest = lowest.min(depth);
            }
            OpKind::BeginText => in_text = true,
            OpKind::EndText => in_text = false,
            OpKind::BeginMarked(_) | OpKind::BeginMarkedProps(_) => marked += 1,
            OpKind::EndMarked => marked = marked.saturating_sub(1),
            _ => {}
        }
    }
    // A page that restores more than it saved would pop our own `q`: put enough in front.
    let saves_needed = usize::try_from(1 - lowest).unwrap_or(1);
    let restores = usize::try_from(depth + i64::try_from(saves_needed).unwrap_or(1)).unwrap_or(0);
    PageFacts {
        text_boxes,
        saves_needed,
        restores,
        open_marked: marked,
        in_text,
    }
}

/// Where the mark goes: its displayed box and the text matrix that draws it upright there.
struct Placement {
    size: f64,
    matrix: [f64; 6],
}

/// The first corner (bottom right, bottom left, top right, top left, as displayed) whose
/// box stays clear of the page's text; when none is clear, the one overlapping least.
#[cfg(test)]
fn place(geom: &PageGeom, text_boxes: &[[f64; 4]], em: f64) -> Placement {
    place_where(geom, text_boxes, em, false, &mut |_| true).0
}

/// Like [`place`], with the middles of the bottom and top edges as further candidates, and
/// a candidate counted clear only when `clear` accepts its displayed box as well. Returns
/// the placement and whether it is clear.
fn place_where(
    geom: &PageGeom,
    text_boxes: &[[f64; 4]],
    em: f64,
    from_left: bool,
    clear: &mut dyn FnMut([f64; 4]) -> bool,
) -> (Placement, bool) {
    let (w, h) = geom.display_size();
    // Tiny pages: shrink so the mark still fits between the margins.
    let size = SIZE_PT.min((w - 2.0 * MARGIN_PT) / em.max(0.1)).max(2.0);
    let margin = MARGIN_PT.min(w / 10.0).min(h / 10.0);
    let width = em * size;
    let (up, down) = (ASCENT / 1000.0 * size, -DESCENT / 1000.0 * size);
    // Baseline starts (displayed, top-left origin) of the candidates.
    let mut candidates = [
        (w - margin - width, h - margin - down),
        (margin, h - margin - down),
        (w - margin - width, margin + up),
        (margin, margin + up),
        ((w - width) / 2.0, h - margin - down),
        ((w - width) / 2.0, margin + up),
    ];
    if from_left {
        candidates.swap(0, 1);
        candidates.swap(2, 3);
    }
    let area = |(x, y): (f64, f64)| [x - 1.0, y - up - 1.0, x + width + 1.0, y + down + 1.0];
    let overlap = |c: (f64, f64)| {
        let b = area(c);
        text_boxes
            .iter()
            .filter(|t| t[0] < b[2] && b[0] < t[2] && t[1] < b[3] && b[1] < t[3])
            .count()
    };
    let free = candidates
        .iter()
        .copied()
        .find(|c| overlap(*c) == 0 && clear(area(*c)));
    let best = free.unwrap_or_else(|| {
        candidates[..4]
            .iter()
            .copied()
            .min_by_key(|c| overlap(*c))
            .unwrap_or(candidates[0])
    });
    // Text space: x along the displayed page's right, y towards its top.
    let origin = geom.user_point(best.0, best.1);
    let right = geom.user_point(best.0 + 1.0, best.1);
    let upward = geom.user_point(best.0, best.1 - 1.0);
    let placement = Placement {
        size,
        matrix: [
            right.0 - origin.0,
            right.1 - origin.1,
            upward.0 - origin.0,
            upward.1 - origin.1,
            origin.0,
            origin.1,
        ],
    };
    (placement, free.is_some())
}

/// The stream after the page's content: close what it left open, then draw the mark.
fn closing_stream(page: &PageFacts, font: &[u8], text: &str, at: &Placement) -> Vec<u8> {
    let op = |operands: &[Value], kind: OpKind| write_op(operands, kind.operator());
    let mut ops = Vec::new();
    if page.in_text {
        ops.push(op(&[], OpKind::EndText));
    }
    ops.extend((0..page.open_marked).map(|_| op(&[], OpKind::EndMarked)));
    ops.extend((0..page.restores).map(|_| op(&[], OpKind::Restore)));
    let artifact = OpKind::BeginMarked(b"Artifact".to_vec());
    ops.extend([
        op(&[], OpKind::Save),
        op(&[Value::Name(b"Artifact".to_vec())], artifact),
        op(&[], OpKind::BeginText),
        op(
            &[Value::Name(font.to_vec()), Value::Real(at.size)],
            OpKind::Font {
                name: font.to_vec(),
                size: at.size,
            },
        ),
        // Text state is part of the graphics state the closing `Q`s restored to the
        // defaults; set it anyway so the mark does not depend on that.
        op(&[Value::Integer(0)], OpKind::CharSpacing(0.0)),
        op(&[Value::Integer(0)], OpKind::WordSpacing(0.0)),
        op(&[Value::Integer(100)], OpKind::HorizontalScaling(100.0)),
        op(&[Value::Integer(0)], OpKind::Rise(0.0)),
        op(&[Value::Integer(0)], OpKind::RenderMode(0)),
        op(&[Value::Real(GREY)], OpKind::FillGray(GREY)),
        op(&at.matrix.map(Value::Real), OpKind::TextMatrix(at.matrix)),
        op(
            &[Value::String(PdfString {
                bytes: text.as_bytes().to_vec(),
                hex: false,
            })],
            OpKind::ShowText,
        ),
        op(&[], OpKind::EndText),
        op(&[], OpKind::EndMarked),
        op(&[], OpKind::Restore),
    ]);
    let mut out = b"\n".to_vec();
    out.extend(ops.join(&b'\n'));
    out.push(b'\n');
    out
}

/// Adds the mark's font to the page's /Font resources under a name the page does not use.
fn add_font_name(doc: &mut Document, page_id: ObjectId, font_id: ObjectId) -> Result<Vec<u8>> {
    let fonts = page_subdict_mut(doc, page_id, b"Font").map_err(Error::Engine)?;
    let name = std::iter::once(FONT_NAME.to_string())
        .chain((1..).map(|n| format!("{FONT_NAME}{n}")))
        .map(String::into_bytes)
        .find(|n| !fonts.has(n))
        .unwrap_or_else(|| FONT_NAME.as_bytes().to_vec());
    fonts.set(name.clone(), Object::Reference(font_id));
    Ok(name)
}

/// `/Contents [opener, …the page's own streams…, closer]`; the page's streams untouched.
fn set_contents(
    doc: &mut Document,
    page_id: ObjectId,
    opener: ObjectId,
    closer: ObjectId,
) -> Result<()> {
    let page = doc
        .get_dictionary(page_id)
        .map_err(|e| Error::Engine(format!("page dictionary: {e}")))?;
    let existing: Vec<Object> = match page.get(b"Contents") {
        Ok(Object::Reference(id)) => match doc.get_object(*id) {
            Ok(Object::Array(items)) => items.clone(),
            Ok(Object::Stream(_)) => vec![Object::Reference(*id)],
            _ => Vec::new(),
        },
        Ok(Object::Array(items)) => items.clone(),
        _ => Vec::new(),
    };
    let mut contents = Vec::with_capacity(existing.len() + 2);
    contents.push(Object::Reference(opener));
    contents.extend(existing);
    contents.push(Object::Reference(closer));
    let page = doc
        .get_object_mut(page_id)
        .and_then(Object::as_dict_mut)
        .map_err(|e| Error::Engine(format!("page dictionary: {e}")))?;
    page.set("Contents", Object::Array(contents));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stamps "SAMPLE" on every page with nothing known of the document's fonts.
    fn stamp_sample(doc: &mut Document) -> usize {
        stamp(doc, "SAMPLE", &HashMap::new(), &mut DocFonts::default()).unwrap()
    }

    /// A one-page document drawing `content`, with a font resource named `PEMark` already.
    fn doc_with(content: &[u8], rotate: i64) -> (Document, ObjectId) {
        let mut doc = Document::with_version("1.7");
        let pages_id = doc.new_object_id();
        let font = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Times-Roman",
        });
        let stream = doc.add_object(Stream::new(dictionary! {}, content.to_vec()));
        let page = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "MediaBox" => vec![0.into(), 0.into(), 600.into(), 400.into()],
            "Rotate" => rotate,
            "Contents" => stream,
            "Resources" => dictionary! { "Font" => dictionary! { "PEMark" => font } },
        });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1,
            }),
        );
        let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog);
        (doc, page)
    }

    fn contents(doc: &Document, page: ObjectId) -> Vec<Vec<u8>> {
        doc.get_page_contents(page)
            .iter()
            .map(|id| {
                doc.get_object(*id)
                    .unwrap()
                    .as_stream()
                    .unwrap()
                    .content
                    .clone()
            })
            .collect()
    }

    #[test]
    fn closes_what_the_page_left_open_and_draws_in_default_space() {
        // Restores below its start, flips the CTM outside any q, ends inside BT and BDC.
        let page_content = b"Q 1 0 0 -1 0 400 cm q /P <</MCID 0>> BDC BT /F1 9 Tf";
        let (mut doc, page) = doc_with(page_content, 0);
        assert_eq!(stamp_sample(&mut doc), 1);
        let streams = contents(&doc, page);
        assert_eq!(streams.len(), 3);
        assert_eq!(streams[0], b"q\nq", "two saves: the content pops one");
        assert_eq!(
            streams[1], page_content,
            "the page's own stream is untouched"
        );
        let closer = String::from_utf8(streams[2].clone()).unwrap();
        // ET, EMC, then two Qs: our two saves, less the page's pop, plus its open q.
        assert!(
            closer.starts_with("\nET\nEMC\nQ\nQ\nq\n/Artifact BMC\nBT\n"),
            "{closer}"
        );
        assert!(closer.contains("(SAMPLE) Tj"), "{closer}");
        assert!(closer.ends_with("ET\nEMC\nQ\n"), "{closer}");
        // A fresh font name: the page already uses PEMark.
        assert!(closer.contains("/PEMark1 7 Tf"), "{closer}");
    }

    #[test]
    fn balanced_pages_get_one_save_and_one_restore() {
        let (mut doc, page) = doc_with(b"q 1 0 0 1 5 5 cm Q BT ET", 0);
        stamp_sample(&mut doc);
        let streams = contents(&doc, page);
        assert_eq!(streams[0], b"q");
        let closer = String::from_utf8(streams[2].clone()).unwrap();
        assert!(closer.starts_with("\nQ\nq\n/Artifact"), "{closer}");
    }

    #[test]
    fn the_text_matrix_reads_upright_on_a_rotated_page() {
        // /Rotate 90: displayed x runs along user +y and displayed up along user −x; the
        // bottom-right displayed corner is the user-space top-right.
        let (mut doc, page) = doc_with(b"", 90);
        stamp_sample(&mut doc);
        let closer = String::from_utf8(contents(&doc, page)[2].clone()).unwrap();
        let tm = closer
            .lines()
            .find(|l| l.ends_with(" Tm"))
            .expect("a text matrix");
        let v: Vec<f64> = tm
            .split_whitespace()
            .take(6)
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(&v[..4], &[0.0, 1.0, -1.0, 0.0], "{tm}");
        // Displayed page is 400 × 600; the baseline starts near its bottom edge, which is
        // user x ≈ 600 − margin − descent, and near its right edge, user y ≈ 400 − … .
        assert!(v[4] > 580.0 && v[4] < 600.0, "{tm}");
        assert!(v[5] > 340.0 && v[5] < 394.0, "{tm}");
    }

    #[test]
    fn the_mark_sits_inside_the_crop_box_and_moves_away_from_text() {
        let (mut doc, page) = doc_with(b"", 0);
        let crop = vec![100.into(), 50.into(), 400.into(), 250.into()];
        doc.get_object_mut(page)
            .and_then(Object::as_dict_mut)
            .unwrap()
            .set("CropBox", crop);
        let geom = PageGeom::read(&doc, page);
        let em = 3.5; // about "SAMPLE" in Helvetica
        let clear = place(&geom, &[], em);
        let [.., x, y] = clear.matrix;
        // Bottom right of the visible 300 × 200 box, in user space.
        assert!(
            x > 300.0 && x < 400.0 && y > 50.0 && y < 70.0,
            "{:?}",
            clear.matrix
        );
        // Text in that corner (displayed top-left coordinates): the next corner is used.
        let text = [[200.0, 170.0, 300.0, 200.0]];
        let moved = place(&geom, &text, em);
        let [.., x, y] = moved.matrix;
        assert!(
            x > 100.0 && x < 120.0 && y > 50.0 && y < 70.0,
            "{:?}",
            moved.matrix
        );
    }

    #[test]
    fn refuses_what_helvetica_winansi_cannot_draw() {
        assert!(check("SAMPLE").is_ok());
        assert!(check("").is_err());
        assert!(check("ÉCHANTILLON").is_err());
        assert!(check(&"X".repeat(MAX_CHARS + 1)).is_err());
    }
}
