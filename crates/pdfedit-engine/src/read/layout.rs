//! Lines, blocks, span ids and the public span shape.
//!
//! Lines: consecutive spans (in PDFium's reading order) on the same baseline, moving
//! forward along it, belong to one line. Blocks: a line joins the block of the line before
//! it when it has the same angle, lies below it (in the text's frame) by at most
//! `BLOCK_LEADING_EM` times the font size, and overlaps it horizontally; anything else
//! (a big vertical gap, a column jump, a move upwards) starts a new block. This is a
//! deliberately simple heuristic: good for paragraphs and columns, rough for tables.

use sha2::{Digest, Sha256};

use super::joins::{join_split_lines, Geo};
use super::page_text::Span;
use super::spans::RawSpan;

/// Largest baseline-to-baseline distance, in ems, between two lines of one block.
const BLOCK_LEADING_EM: f32 = 1.9;
/// Baselines closer than this many ems (of the larger size) belong to one line, so
/// superscripts and subscripts stay on their line.
const LINE_TOLERANCE_EM: f32 = 0.5;

/// Assigns lines and blocks and produces the public spans of one page (1-based `page`).
pub(crate) fn layout_page(page: u32, raw: Vec<RawSpan>, source: &'static str) -> Vec<Span> {
    let mut out = Vec::with_capacity(raw.len());
    let mut line: u32 = 0;
    let mut block: u32 = 0;
    // Extent of the current line and block, along and across the text direction.
    let mut line_state: Option<(f32, f32, f32, f32)> = None; // baseline, along_end, size, angle
    let mut block_extent: Option<(f32, f32)> = None; // along range
    let mut line_extent: (f32, f32) = (0.0, 0.0);
    let mut geo = Vec::with_capacity(raw.len());
    for s in raw {
        let text = s.text.trim().to_string();
        if text.is_empty() {
            continue;
        }
        let size = s.size.max(1.0);
        let mut new_line = true;
        let mut new_block = true;
        if let Some((baseline, along_end, prev_size, angle)) = line_state {
            let same_angle = (angle - s.angle).abs() < 2.0;
            let tol = LINE_TOLERANCE_EM * size.max(prev_size);
            let forward = s.along.0 >= along_end - LINE_TOLERANCE_EM * size;
            if same_angle && (s.baseline - baseline).abs() <= tol && forward {
                new_line = false;
                new_block = false;
            } else if same_angle {
                // Baseline advance: positive when the new line is below the last one.
                let advance = s.baseline - baseline;
                let (b0, b1) = block_extent.unwrap_or(line_extent);
                let overlaps = s.along.0 <= b1 && s.along.1 >= b0;
                if advance > 0.0 && advance <= BLOCK_LEADING_EM * size.max(prev_size) && overlaps {
                    new_block = false;
                }
            }
        }
        if line_state.is_some() {
            if new_line {
                line += 1;
            }
            if new_block {
                block += 1;
            }
        }
        if new_block {
            block_extent = Some(s.along);
        } else if let Some(e) = block_extent.as_mut() {
            *e = (e.0.min(s.along.0), e.1.max(s.along.1));
        }
        line_extent = if new_line {
            s.along
        } else {
            (line_extent.0.min(s.along.0), line_extent.1.max(s.along.1))
        };
        line_state = Some((s.baseline, s.along.1, size, s.angle));
        geo.push(Geo {
            baseline: s.baseline,
            along: s.along,
            size,
            angle: s.angle,
            vertical: s.vertical,
            first_index: s.first_index,
        });
        out.push(public_span(page, s, text, line, block, source));
    }
    join_split_lines(&mut out, geo);
    out
}

fn public_span(
    page: u32,
    s: RawSpan,
    text: String,
    line: u32,
    block: u32,
    source: &'static str,
) -> Span {
    let font = strip_subset_tag(&s.font).to_string();
    Span {
        span_id: span_id(page, s.first_index, &text, &s.font),
        page,
        bbox: [
            round2(s.bbox.x0),
            round2(s.bbox.y0),
            round2(s.bbox.x1),
            round2(s.bbox.y1),
        ],
        flags: flags(&s),
        font,
        size: round2(s.size),
        color: format!("#{:02x}{:02x}{:02x}", s.color[0], s.color[1], s.color[2]),
        line,
        block,
        // Vertical writing: the line runs downwards, i.e. 270° counter-clockwise.
        rotation: if s.vertical {
            270.0
        } else {
            snap_angle(s.angle)
        },
        source,
        space_before: s.space_before,
        soft_hyphen_end: s.soft_hyphen_end,
        confidence: None,
        text,
    }
}

/// Stable for the same bytes: everything hashed comes from the document, nothing random.
pub(crate) fn span_id(page: u32, first_index: u32, text: &str, font: &str) -> String {
    let mut h = Sha256::new();
    h.update(page.to_le_bytes());
    h.update(first_index.to_le_bytes());
    h.update(text.as_bytes());
    h.update([0]);
    h.update(font.as_bytes());
    let digest = h.finalize();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = format!("s{page}_");
    for b in &digest[..5] {
        id.push(char::from(HEX[usize::from(b >> 4)]));
        id.push(char::from(HEX[usize::from(b & 15)]));
    }
    id
}

/// `ABCDEF+Name` → `Name` (the six-letter tag only names a subset).
fn strip_subset_tag(font: &str) -> &str {
    match font.split_once('+') {
        Some((tag, rest)) if tag.len() == 6 && tag.bytes().all(|b| b.is_ascii_uppercase()) => rest,
        _ => font,
    }
}

/// Font descriptor flags are often missing or wrong in real files, so the PostScript
/// name's usual style words count too.
fn flags(s: &RawSpan) -> Vec<&'static str> {
    let name = s.font.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
    let mut out = Vec::new();
    if s.weight.is_some_and(|w| w >= 600) || has(&["bold", "black", "heavy", "semibold"]) {
        out.push("bold");
    }
    if s.italic || has(&["italic", "oblique"]) {
        out.push("italic");
    }
    if s.monospace || has(&["mono", "courier", "consol"]) {
        out.push("monospace");
    }
    let sans = has(&["sans", "arial", "helvetica", "verdana", "calibri"]);
    if !sans && (s.serif || has(&["times", "serif", "georgia", "garamond", "roman"])) {
        out.push("serif");
    }
    out
}

/// Degrees counter-clockwise; within a degree of a right angle counts as that angle.
fn snap_angle(angle: f32) -> f32 {
    let nearest = (angle / 90.0).round() * 90.0;
    let a = if (angle - nearest).abs() < 1.0 {
        nearest
    } else {
        round2(angle)
    };
    // `+ 0.0` turns -0.0 into 0.0, which JSON would otherwise print as -0.
    a.rem_euclid(360.0) + 0.0
}

fn round2(v: f32) -> f32 {
    (v * 100.0).round() / 100.0 + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_ids_are_deterministic_and_shaped() {
        let a = span_id(3, 17, "Hello world", "ABCDEF+Arial");
        assert_eq!(a, span_id(3, 17, "Hello world", "ABCDEF+Arial"));
        assert!(a.starts_with("s3_") && a.len() == 13, "{a}");
        assert_ne!(a, span_id(3, 18, "Hello world", "ABCDEF+Arial"));
    }

    #[test]
    fn span_ids_are_the_digests_first_five_bytes_in_hex() {
        // sha256(page LE, first index LE, text, 0, font), as Python's hashlib gives it.
        assert_eq!(
            span_id(3, 17, "Hello world", "ABCDEF+Arial"),
            "s3_3de70bda27"
        );
        assert_eq!(span_id(12, 4096, "Grüße, 世界", ""), "s12_ee95578580");
    }

    #[test]
    fn subset_tags_are_stripped() {
        assert_eq!(strip_subset_tag("ABCDEF+Times-Bold"), "Times-Bold");
        assert_eq!(strip_subset_tag("Times+Bold"), "Times+Bold");
    }

    #[test]
    fn near_right_angles_snap() {
        assert_eq!(snap_angle(359.6), 0.0);
        assert_eq!(snap_angle(90.4), 90.0);
        assert_eq!(snap_angle(45.0), 45.0);
        assert!(snap_angle(-0.0).is_sign_positive());
    }
}
