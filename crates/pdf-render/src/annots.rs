//! Text drawn by annotation appearance streams (free text, stamps, signature appearances,
//! filled form widgets): visible text of the page that is not in its content stream.
//!
//! PDFium has no text API for appearance streams, but it can flatten a page: the
//! appearances of its visible, printable annotations become form XObjects drawn after the
//! original content. Flattening a page of a scratch copy of the document (opened from the
//! same bytes, never saved) and reading that page's text gives the content characters
//! first, in the same order, then the annotations' characters. Only the characters past
//! the original content are kept, so the content's own character indices (and the span ids
//! built from them) never depend on the annotations.

use std::collections::HashMap;

use pdfium_render::prelude::*;

use crate::chars::{chars_of, RawChar};
use crate::document::{page_transform, Document};
use crate::geometry::{PageTransform, Rect};
use crate::{Error, Result};

impl Document<'_> {
    /// Whether page `index` has an annotation that may draw text: anything but links and
    /// popups (a popup only shows its parent's note in a viewer's window).
    pub fn has_text_annotations(&self, index: u32) -> Result<bool> {
        Ok(draws_text_annotations(&self.page(index)?))
    }

    /// The characters that page `index` gains when its annotations are flattened, given
    /// the page's own `content` characters (from [`Document::page_chars`] on an unflattened
    /// copy). **Flattens the page in this document**: call it on a scratch copy only.
    ///
    /// Indices of the returned characters are their places in the flattened page's text,
    /// after the content's when PDFium reads the appearances after the content.
    pub fn flattened_annotation_chars(
        &self,
        index: u32,
        content: &[RawChar],
    ) -> Result<Vec<RawChar>> {
        let mut page = self.page(index)?;
        // The transform of the page as displayed, before flattening touches its boxes.
        let transform = page_transform(&page);
        flattened_chars(&mut page, &transform, content)
    }
}

/// [`Document::flattened_annotation_chars`] of a loaded `page`, whose transform as
/// displayed (taken before flattening) is `transform`. Flattens the page in its document.
pub(crate) fn flattened_chars(
    page: &mut PdfPage,
    transform: &PageTransform,
    content: &[RawChar],
) -> Result<Vec<RawChar>> {
    // pdfium-render's `flatten` (without the crate's `flatten` feature) is PDFium's own
    // FPDFPage_Flatten with FLAT_PRINT, which keeps only annotations flagged Print.
    // What a reader sees is every annotation that is not hidden (pdftotext prints
    // those too), so in the document read (never saved) the Print flag follows visibility; links and
    // popups never draw page text. A push button's appearance draws its caption
    // ("Submit", "Clear Data"), which readers see and pdftotext prints.
    let mut broken = Vec::new();
    for mut annot in page.annotations().iter() {
        let drawn = !annot.is_hidden()
            && !matches!(
                annot.annotation_type(),
                PdfPageAnnotationType::Link | PdfPageAnnotationType::Popup
            );
        if drawn && annot.annotation_type() == PdfPageAnnotationType::FreeText {
            broken.extend(annot.contents().filter(|c| c.contains(['\r', '\n'])));
        }
        if annot.is_printed() != drawn {
            annot
                .set_is_printed(drawn)
                .map_err(|e| Error::pdfium("preparing annotations", e))?;
        }
    }
    // PDFium draws some annotations that have no appearance stream (a FreeText, for one)
    // with an appearance it generates when it lists the page's annotations for rendering;
    // flattening only takes stored appearances. A render of a few pixels has it generate
    // (and store in the document read, never saved) what a viewer of PDFium shows. Best
    // effort: when that render fails, only the stored appearances are read.
    let config = PdfRenderConfig::new()
        .set_target_width(16)
        .set_maximum_height(16)
        .render_annotations(true);
    let _ = page.render_with_config(&config);
    page.flatten()
        .map_err(|e| Error::pdfium("flattening annotations", e))?;
    let all = chars_of(page, transform)?;
    if all.len() < content.len() {
        return Ok(Vec::new());
    }
    let same_prefix = all.iter().zip(content).all(|(a, b)| a.ch == b.ch);
    let mut extra = if same_prefix {
        all.into_iter().skip(content.len()).collect()
    } else {
        not_in_content(all, content)
    };
    for contents in &broken {
        keep_line_breaks(&mut extra, contents);
    }
    Ok(extra)
}

/// PDFium's generated appearance of a FreeText without one draws its /Contents on one line
/// and drops the line breaks, so the last word of a line and the first of the next read as
/// one ("meetingsecond"); the edit, which draws the annotation anew with its breaks, finds
/// two words, and so do other readers. Where the annotation's characters are found in
/// `chars`, in order, a generated space is put between two glyphs that a line break (and
/// nothing else) separates in `contents` and nothing separates in `chars`. Nothing moves;
/// characters that do not follow `contents` exactly are left as they are.
fn keep_line_breaks(chars: &mut Vec<RawChar>, contents: &str) {
    // The glyphs of `contents` (no whitespace), each with whether only a line break comes
    // before it.
    let mut want: Vec<(char, bool)> = Vec::new();
    let (mut brk, mut other) = (false, false);
    for ch in contents.chars() {
        match ch {
            '\r' | '\n' => brk = true,
            c if c.is_whitespace() => other = true,
            c => {
                want.push((c, brk && !other && !want.is_empty()));
                (brk, other) = (false, false);
            }
        }
    }
    if !want.iter().any(|w| w.1) {
        return;
    }
    let glyphs: Vec<usize> = (0..chars.len())
        .filter(|&i| !chars[i].generated && chars[i].ch.is_some_and(|c| !c.is_whitespace()))
        .collect();
    let Some(start) = (0..glyphs.len().saturating_sub(want.len() - 1)).find(|&s| {
        want.iter()
            .enumerate()
            .all(|(k, w)| chars[glyphs[s + k]].ch == Some(w.0))
    }) else {
        return;
    };
    let mut at: Vec<usize> = Vec::new();
    for (k, w) in want.iter().enumerate().skip(1) {
        let (prev, next) = (glyphs[start + k - 1], glyphs[start + k]);
        // Only glyphs glued together: no character at all between them.
        if w.1 && next == prev + 1 {
            at.push(next);
        }
    }
    for &i in at.iter().rev() {
        let next = &chars[i];
        // Zero-sized, where the next glyph starts, like the separators PDFium generates.
        let at = Rect {
            x1: next.bbox.x0,
            y1: next.bbox.y0,
            ..next.bbox
        };
        let space = RawChar {
            ch: Some(' '),
            generated: true,
            hyphen: false,
            bbox: at,
            advance_box: at,
            ..next.clone()
        };
        chars.insert(i, space);
    }
}

/// Whether a loaded page has an annotation that may draw text (see
/// [`Document::has_text_annotations`]).
pub(crate) fn draws_text_annotations(page: &PdfPage) -> bool {
    page.annotations().iter().any(|a| {
        !matches!(
            a.annotation_type(),
            PdfPageAnnotationType::Link | PdfPageAnnotationType::Popup
        )
    })
}

/// Where an appearance draws text on a line of the page's own text, PDFium merges the two
/// into one reading order (a Stamp that magnifies the words under it). The content's
/// glyphs are still where they were: each is matched by character and origin and taken
/// out; what remains, with the separators PDFium inferred after a remaining glyph, is the
/// annotations' text.
fn not_in_content(all: Vec<RawChar>, content: &[RawChar]) -> Vec<RawChar> {
    // Origins in quarter points: flattening does not move the content, so its glyphs come
    // back at the same coordinates.
    let key = |c: &RawChar| {
        (
            c.ch,
            (c.origin.0 * 4.0).round() as i64,
            (c.origin.1 * 4.0).round() as i64,
        )
    };
    let mut left: HashMap<(Option<char>, i64, i64), u32> = HashMap::new();
    for c in content.iter().filter(|c| !c.generated) {
        *left.entry(key(c)).or_default() += 1;
    }
    let mut out = Vec::new();
    let mut after_kept = false;
    for c in all {
        if c.generated {
            if after_kept {
                out.push(c);
            }
            continue;
        }
        match left.get_mut(&key(&c)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                after_kept = false;
            }
            _ => {
                after_kept = true;
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glyph(ch: char, x: f32, generated: bool) -> RawChar {
        RawChar {
            index: 0,
            ch: Some(ch),
            generated,
            bbox: Rect::default(),
            hyphen: false,
            advance_box: Rect::default(),
            origin: (x, 100.0),
            font: "".into(),
            size: 10.0,
            weight: None,
            italic: false,
            monospace: false,
            serif: false,
            color: [0, 0, 0],
            angle: 0.0,
            invisible: false,
        }
    }

    fn text(chars: &[RawChar]) -> String {
        chars.iter().filter_map(|c| c.ch).collect()
    }

    #[test]
    fn appearance_text_read_into_the_content_is_taken_out_of_it() {
        // Content "ab cd"; the flattened page reads an appearance's "XY" in the middle.
        let content = vec![
            glyph('a', 10.0, false),
            glyph('b', 15.0, false),
            glyph(' ', 20.0, true),
            glyph('c', 25.0, false),
            glyph('d', 30.0, false),
        ];
        let all = vec![
            glyph('a', 10.0, false),
            glyph('b', 15.0, false),
            glyph('X', 16.0, false),
            glyph('Y', 21.0, false),
            glyph('\n', 22.0, true),
            glyph('c', 25.0, false),
            glyph(' ', 28.0, true),
            glyph('d', 30.0, false),
        ];
        assert_eq!(text(&not_in_content(all, &content)), "XY\n");
    }

    #[test]
    fn the_same_letter_elsewhere_is_new_text() {
        let content = vec![glyph('a', 10.0, false)];
        let all = vec![glyph('a', 10.0, false), glyph('a', 50.0, false)];
        let out = not_in_content(all, &content);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].origin.0, 50.0);
    }

    fn read(s: &str) -> Vec<RawChar> {
        s.chars()
            .enumerate()
            .map(|(i, c)| glyph(c, i as f32 * 5.0, c == ' '))
            .collect()
    }

    #[test]
    fn a_line_break_the_appearance_dropped_reads_as_a_space() {
        let mut chars = read("xx the meetingsecond line");
        keep_line_breaks(&mut chars, "the meeting\rsecond line");
        assert_eq!(text(&chars), "xx the meeting second line");
        assert!(chars[14].generated);
        // Breaks kept by the appearance, other text, or no break: nothing changes.
        for (drawn, contents) in [
            ("the meeting second", "the meeting\r\nsecond"),
            ("the meetingsecond", "the meeting\rthird"),
            ("the meetingsecond", "the meetingsecond"),
            ("the meeting\nsecond", "the meeting \nsecond"),
        ] {
            let mut chars = read(drawn);
            keep_line_breaks(&mut chars, contents);
            assert_eq!(text(&chars), drawn, "{contents:?}");
        }
    }
}
