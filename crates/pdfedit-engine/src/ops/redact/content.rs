//! The page-text part of a redaction: the matched glyphs leave the content stream (each
//! replaced by a `TJ` number of its exact advance, so every other glyph keeps its place),
//! and a filled box is painted over their area.

use std::collections::HashMap;

use lopdf::{Document, Object, ObjectId, Stream};
use pdf_content::write::write_number;
use pdf_content::StreamId;

use crate::find::Match;
use crate::model::text::union;
use crate::model::PageModel;
use crate::plan::actual::ActualTexts;
use crate::plan::fit::spacing_at;
use crate::plan::rewrite::{rewrite_ops, Action};

use super::widths::{follow_pdfium, Dropped};

/// New stream bytes and the box of every planned match.
pub(crate) struct ContentPlan {
    /// Decoded new content of every stream that changed.
    pub streams: Vec<(StreamId, Vec<u8>)>,
    /// (index into the page's matches, box in user space) for each match removed.
    pub boxes: Vec<(usize, [f64; 4])>,
}

/// Plans the removal of every match's glyphs. `vertical` tells whether a glyph (by index)
/// is shown in a vertical font (its advance is then along y and `Tz` does not apply);
/// `dropped` what PDFium's whole width of a glyph drops from its exact width (1/1000 em,
/// see [`super::widths`]).
pub(crate) fn plan(
    model: &PageModel,
    matches: &[Match],
    vertical: &dyn Fn(usize) -> bool,
    dropped: &dyn Fn(usize) -> Dropped,
) -> Result<ContentPlan, String> {
    let glyphs = &model.glyphs.glyphs;
    let mut actions: HashMap<usize, Action> = HashMap::new();
    let mut actual = ActualTexts::default();
    let mut boxes = Vec::new();
    for (mi, m) in matches.iter().enumerate() {
        if m.glyphs.iter().any(|g| actions.contains_key(g)) {
            continue; // overlapping match: its glyphs already go
        }
        // PDFium draws the rest of the line after the sum of whole widths: follow it
        // when the exact numbers would move the rest visibly there.
        let drops: Vec<Dropped> = m
            .glyphs
            .iter()
            .map(|&g| {
                if vertical(g) {
                    Dropped::default()
                } else {
                    dropped(g)
                }
            })
            .collect();
        let fractions: Vec<f64> = drops.iter().map(|d| d.fraction).collect();
        let t = glyphs[m.glyphs[0]].trm;
        let pdfium = follow_pdfium(
            fractions.iter().sum(),
            t[0].hypot(t[1]),
            drops.iter().any(|d| d.whole_pixels),
        );
        for (&g, fraction) in m.glyphs.iter().zip(&fractions) {
            let exact = removal_kern(model, g, vertical(g))?;
            let kern = if pdfium { exact + fraction } else { exact };
            actions.insert(
                g,
                Action {
                    insert: None,
                    remove_kern: Some(kern),
                    keep: false,
                },
            );
        }
        actual.record(model, m);
        let b = m
            .glyphs
            .iter()
            .map(|&g| glyphs[g].bbox)
            .fold(m.bbox_user, union);
        boxes.push((mi, b));
    }
    let streams = rewrite_ops(model, &actions, &actual)?;
    Ok(ContentPlan { streams, boxes })
}

/// The `TJ` number that moves the pen exactly as glyph `g` did, so the glyphs after it
/// stay in place. Horizontally a positive number moves the pen back (left), by
/// thousandths of the size under `Tz`. In a column (vertical writing) the glyph's advance
/// is negative (down) and `Tz` does not apply; measured on PDFium's renders (the
/// `redact_vertical` test), a positive number there moves the pen down the column, as
/// §9.4.4 writes it, so the number is minus the advance as well.
fn removal_kern(model: &PageModel, g: usize, vertical: bool) -> Result<f64, String> {
    let gl = &model.glyphs.glyphs[g];
    let unusable = || "a glyph of the text has no usable size".to_string();
    if !gl.advance.is_finite() {
        return Err(unusable());
    }
    if vertical {
        if gl.font_size.abs() < 1e-9 {
            return Err(unusable());
        }
        return Ok(-gl.advance * 1000.0 / gl.font_size);
    }
    let unit = gl.font_size * spacing_at(model, gl.stream, gl.op_index).scale;
    if unit.abs() < 1e-9 {
        return Err(unusable());
    }
    Ok(-gl.advance * 1000.0 / unit)
}

/// Paints filled black boxes (user space) on top of the page. The page's own content is
/// wrapped in `q … Q` first so a graphics state it leaves behind cannot move the boxes.
pub(crate) fn draw_boxes(
    doc: &mut Document,
    page_id: ObjectId,
    boxes: &[[f64; 4]],
) -> Result<(), String> {
    if boxes.is_empty() {
        return Ok(());
    }
    let page = doc.get_dictionary(page_id).map_err(|e| e.to_string())?;
    let mut contents: Vec<Object> = match page.get(b"Contents") {
        Ok(Object::Reference(id)) => match doc.get_object(*id) {
            Ok(Object::Array(a)) => a.clone(),
            Ok(_) => vec![Object::Reference(*id)],
            Err(e) => return Err(e.to_string()),
        },
        Ok(Object::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    let mut paint = b"Q\nq 0 g\n".to_vec();
    for b in boxes {
        let (x0, y0) = (b[0].min(b[2]), b[1].min(b[3]));
        let (w, h) = ((b[2] - b[0]).abs(), (b[3] - b[1]).abs());
        for v in [x0, y0, w, h] {
            write_number(&mut paint, v);
            paint.push(b' ');
        }
        paint.extend_from_slice(b"re\n");
    }
    paint.extend_from_slice(b"f\nQ\n");
    let pre = doc.add_object(Stream::new(lopdf::Dictionary::new(), b"q\n".to_vec()));
    let post = doc.add_object(Stream::new(lopdf::Dictionary::new(), paint));
    contents.insert(0, Object::Reference(pre));
    contents.push(Object::Reference(post));
    let page = doc
        .get_object_mut(page_id)
        .and_then(Object::as_dict_mut)
        .map_err(|e| e.to_string())?;
    page.set("Contents", Object::Array(contents));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::dictionary;

    #[test]
    fn boxes_wrap_the_page_content() {
        let mut doc = Document::with_version("1.7");
        let content = doc.add_object(Stream::new(dictionary! {}, b"1 0 0 1 50 50 cm".to_vec()));
        let page = doc.add_object(dictionary! { "Type" => "Page", "Contents" => content });
        draw_boxes(&mut doc, page, &[[10.0, 20.0, 30.0, 25.0]]).unwrap();
        let arr = doc
            .get_dictionary(page)
            .unwrap()
            .get(b"Contents")
            .unwrap()
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(arr.len(), 3);
        let text = |o: &Object| {
            let id = o.as_reference().unwrap();
            String::from_utf8(
                doc.get_object(id)
                    .unwrap()
                    .as_stream()
                    .unwrap()
                    .content
                    .clone(),
            )
            .unwrap()
        };
        assert_eq!(text(&arr[0]), "q\n");
        assert_eq!(arr[1], Object::Reference(content));
        assert_eq!(text(&arr[2]), "Q\nq 0 g\n10 20 20 5 re\nf\nQ\n");
    }

    #[test]
    fn no_boxes_leave_the_page_alone() {
        let mut doc = Document::with_version("1.7");
        let page = doc.add_object(dictionary! { "Type" => "Page" });
        draw_boxes(&mut doc, page, &[]).unwrap();
        assert!(doc.get_dictionary(page).unwrap().get(b"Contents").is_err());
    }
}
