//! Finding an edit's text among the OCR words of a scanned page: each OCR line is the
//! words joined by one space, matched with every match mode like a text-layer line.

use super::{line_matches, Match, Matcher};
use crate::model::text::PageGeom;
use crate::ocr::OcrPage;
use crate::types::{Edit, EditOp};

/// One OCR line: its text and, per word, (word index, byte start, byte end).
pub(crate) struct OcrLine {
    pub text: String,
    pub words: Vec<(usize, usize, usize)>,
}

/// The page's lines in reading order.
pub(crate) fn ocr_lines(page: &OcrPage) -> Vec<OcrLine> {
    let mut out: Vec<OcrLine> = Vec::new();
    let mut last = None;
    for (i, w) in page.words.iter().enumerate() {
        if last != Some(w.line) {
            out.push(OcrLine {
                text: String::new(),
                words: Vec::new(),
            });
            last = Some(w.line);
        }
        let Some(line) = out.last_mut() else {
            continue;
        };
        if !line.text.is_empty() {
            line.text.push(' ');
        }
        let start = line.text.len();
        line.text.push_str(&w.text);
        line.words.push((i, start, line.text.len()));
    }
    out
}

/// Every match of `m` among the page's OCR words, in reading order. A match inside a word
/// gets the share of the word's box its characters take.
pub(crate) fn ocr_matches(page: &OcrPage, geom: &PageGeom, m: &Matcher, edit: &Edit) -> Vec<Match> {
    let replace = match edit.op {
        EditOp::Replace => edit.replace.as_str(),
        _ => "",
    };
    let mut out = Vec::new();
    for (li, line) in ocr_lines(page).iter().enumerate() {
        for (s, e, replacement) in line_matches(m, &line.text, replace) {
            let mut bbox: Option<[f64; 4]> = None;
            for &(wi, ws, we) in &line.words {
                if we <= s || ws >= e {
                    continue;
                }
                let b = page.words[wi].bbox.map(f64::from);
                let word = &line.text[ws..we];
                let chars = word.chars().count().max(1) as f64;
                let from = line.text[ws..s.max(ws)].chars().count() as f64;
                let to = line.text[ws..e.min(we)].chars().count() as f64;
                let width = b[2] - b[0];
                let part = [
                    b[0] + width * from / chars,
                    b[1],
                    b[0] + width * to / chars,
                    b[3],
                ];
                bbox = Some(match bbox {
                    None => part,
                    Some(u) => [
                        u[0].min(part[0]),
                        u[1].min(part[1]),
                        u[2].max(part[2]),
                        u[3].max(part[3]),
                    ],
                });
            }
            let Some(bbox) = bbox else {
                continue;
            };
            let (ax, ay) = geom.user_point(bbox[0], bbox[1]);
            let (bx, by) = geom.user_point(bbox[2], bbox[3]);
            out.push(Match {
                page: page.page,
                line: li,
                start: s,
                end: e,
                glyphs: Vec::new(),
                found: line.text[s..e].to_string(),
                replacement,
                bbox_user: [ax.min(bx), ay.min(by), ax.max(bx), ay.max(by)],
                bbox,
                unicode_cuts: Vec::new(),
                ocr: true,
                wrapped: false,
            });
        }
    }
    out
}

/// Where an anchor phrase ends among the OCR lines: (line, byte end), first occurrence.
pub(crate) fn ocr_anchor_end(page: &OcrPage, anchor: &str, icase: bool) -> Option<(usize, usize)> {
    ocr_lines(page).iter().enumerate().find_map(|(li, l)| {
        let pos = if icase {
            l.text.to_lowercase().find(&anchor.to_lowercase())
        } else {
            l.text.find(anchor)
        };
        pos.map(|p| (li, p + anchor.len()))
    })
}
