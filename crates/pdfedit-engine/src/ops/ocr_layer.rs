//! `options.ocr_text_layer`: every page read by OCR gets an invisible text layer (render
//! mode 3, Helvetica, WinAnsi) of its words, each word stretched over its box, so the
//! output is searchable and selectable like a scanner's OCR layer. Drawn after
//! verification: it changes no pixel.

use lopdf::{dictionary, Document, Object};

use crate::model::text::PageGeom;
use crate::ocr::OcrPage;
use crate::plan::streams::{append_page_stream, page_subdict_mut};

/// The font resource name of the layer.
const FONT: &[u8] = b"FOcrLayer";
/// Helvetica's average advance, in ems (the layer is invisible: only the box matters).
const AVG_ADVANCE_EM: f64 = 0.52;

/// Adds the layer of `page` to the document; the number of words written.
pub(crate) fn add(doc: &mut Document, page: &OcrPage) -> Result<usize, String> {
    let pages = doc.get_pages();
    let Some(&page_id) = pages.get(&page.page) else {
        return Ok(0);
    };
    if page.words.is_empty() {
        return Ok(0);
    }
    let geom = PageGeom::read(doc, page_id);
    let mut ops = String::from("q BT 3 Tr\n");
    let mut written = 0;
    for w in &page.words {
        let b = w.bbox.map(f64::from);
        let height = b[3] - b[1];
        let width = b[2] - b[0];
        if height <= 0.0 || width <= 0.0 {
            continue;
        }
        // Baseline start, the end of the baseline and a point above it, in user space.
        let size = height * 0.8;
        let base = b[3] - height * 0.2;
        let p0 = geom.user_point(b[0], base);
        let p1 = geom.user_point(b[2], base);
        let up = geom.user_point(b[0], base - 1.0);
        let len = (p1.0 - p0.0).hypot(p1.1 - p0.1).max(1e-6);
        let a = ((p1.0 - p0.0) / len, (p1.1 - p0.1) / len);
        let n = (up.0 - p0.0, up.1 - p0.1);
        let text: String = w
            .text
            .chars()
            .map(|c| {
                if (c as u32) < 256 && !c.is_control() {
                    c
                } else {
                    '?'
                }
            })
            .collect();
        let chars = text.chars().count().max(1) as f64;
        let scale = 100.0 * width / (AVG_ADVANCE_EM * size * chars);
        let mut escaped = String::new();
        for c in text.chars() {
            if matches!(c, '(' | ')' | '\\') {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        ops.push_str(&format!(
            "/{} {size:.2} Tf {scale:.2} Tz {:.4} {:.4} {:.4} {:.4} {:.2} {:.2} Tm ({escaped}) Tj\n",
            String::from_utf8_lossy(FONT),
            a.0,
            a.1,
            n.0,
            n.1,
            p0.0,
            p0.1
        ));
        written += 1;
    }
    ops.push_str("ET Q\n");
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    page_subdict_mut(doc, page_id, b"Font")?.set(FONT.to_vec(), Object::Reference(font));
    // Latin-1 bytes: WinAnsi agrees with Latin-1 on every letter written.
    let bytes: Vec<u8> = ops.chars().map(|c| c as u32 as u8).collect();
    append_page_stream(doc, page_id, bytes)?;
    Ok(written)
}
