//! From PDFium's characters to spans.
//!
//! A span is a run of glyphs on one baseline with the same font, size, colour and angle
//! and no large gap. PDFium's generated characters (the spaces and line breaks it infers)
//! are word separators, never glyphs. Geometry is handled in the text's own frame
//! ("along" the baseline and "across" it), so rotated text groups like upright text.

use pdf_render::{RawChar, Rect};

/// A gap wider than this many ems between two glyphs splits the span (about 1.5 times a
/// typical space of 0.25 em…0.3 em, so justified word spaces stay inside the span).
const SPLIT_GAP_EM: f32 = 0.45;
/// A gap wider than this many ems between glyphs without a space between them is a word
/// break PDFium did not mark (some producers position every word absolutely).
const WORD_GAP_EM: f32 = 0.12;
/// The word gap between glyphs that only have ink boxes (see `word_gap_em`).
const INK_WORD_GAP_EM: f32 = 0.25;
/// A space between glyphs closer than this many ems is not a word break.
const MIN_SPACE_EM: f32 = 0.05;
/// Baselines closer than this many ems are the same line.
const BASELINE_TOLERANCE_EM: f32 = 0.35;

/// A span before ids, lines and blocks are assigned.
#[derive(Debug, Clone)]
pub(crate) struct RawSpan {
    /// PDFium index of the first glyph.
    pub first_index: u32,
    pub text: String,
    pub bbox: Rect,
    pub font: String,
    pub size: f32,
    pub color: [u8; 3],
    pub weight: Option<u32>,
    pub italic: bool,
    pub monospace: bool,
    pub serif: bool,
    /// Displayed baseline angle, degrees counter-clockwise.
    pub angle: f32,
    /// Position of the baseline across the text direction.
    pub baseline: f32,
    /// Extent along the text direction.
    pub along: (f32, f32),
    /// A generated line break came right before this span.
    pub after_break: bool,
    /// A word separator (space, gap or line break) precedes this span.
    pub space_before: bool,
    /// The last glyph is a line-end hyphen inside a word.
    pub soft_hyphen_end: bool,
    /// Vertical writing: upright glyphs running top to bottom.
    pub vertical: bool,
}

/// Unit vector of the text direction in top-left (y down) coordinates.
fn direction(angle_deg: f32) -> (f32, f32) {
    let a = angle_deg.to_radians();
    (a.cos(), -a.sin())
}

fn project(r: &Rect, d: (f32, f32)) -> (f32, f32) {
    let corners = [(r.x0, r.y0), (r.x1, r.y0), (r.x0, r.y1), (r.x1, r.y1)];
    corners
        .iter()
        .map(|&(x, y)| x * d.0 + y * d.1)
        .fold((f32::MAX, f32::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// Position of a glyph along its line and of the line across the page.
fn frame(c: &RawChar, vertical: bool) -> ((f32, f32), f32) {
    if vertical {
        return vertical_frame(&c.advance_box);
    }
    let d = direction(c.angle);
    let along = project(&c.advance_box, d);
    // The origin, not the box, fixes the baseline: boxes vary with the glyph's shape.
    let baseline = c.origin.0 * -d.1 + c.origin.1 * d.0;
    (along, baseline)
}

/// The frame of a top-to-bottom line: along = y; across = the column's centre, counted
/// from the right because vertical columns follow each other leftwards.
fn vertical_frame(r: &Rect) -> ((f32, f32), f32) {
    ((r.y0, r.y1), -(r.x0 + r.x1) / 2.0)
}

/// Whether `c` continues a one-glyph span downwards in vertical writing. Only CJK glyphs
/// qualify, so stacked single digits in a table column never merge.
fn starts_vertical_run(span: &RawSpan, prev: &Last, c: &RawChar, ch: char, size: f32) -> bool {
    if span.vertical || prev.glyphs != 1 || u32::from(ch) < 0x2E80 {
        return false;
    }
    let (a, b) = (&prev.advance_box, &c.advance_box);
    let overlap = a.x1.min(b.x1) - a.x0.max(b.x0);
    let below = b.y0 >= a.y0 + 0.5 * a.height();
    overlap >= 0.5 * a.width().min(b.width()) && below && b.y0 - a.y1 < 0.4 * size
}

/// Word-break threshold between two glyphs. When PDFium knows no advance for a glyph
/// (Type 3 fonts, whose loose box is the ink box) gaps are measured ink to ink and
/// include both side bearings, so the threshold is larger.
fn word_gap_em(prev: &Last, c: &RawChar) -> f32 {
    let ink_only = |r: &Rect, t: &Rect| (r.x0 - t.x0).abs() < 0.01 && (r.x1 - t.x1).abs() < 0.01;
    if ink_only(&prev.advance_box, &prev.ink_box) && ink_only(&c.advance_box, &c.bbox) {
        INK_WORD_GAP_EM
    } else {
        WORD_GAP_EM
    }
}

fn same_angle(a: f32, b: f32) -> bool {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d) < 2.0
}

/// What the builder needs to know about the previous glyph.
struct Last {
    advance_box: Rect,
    ink_box: Rect,
    /// Glyphs in the current span so far.
    glyphs: u32,
    /// The glyph shares its start with the one before: a letter of a split ligature.
    ligature: bool,
    along_start: f32,
    along_end: f32,
    baseline: f32,
}

/// Groups the characters of one page into spans, in PDFium's order.
pub(crate) fn build_spans(chars: &[RawChar]) -> Vec<RawSpan> {
    // Right-to-left glyphs laid left to right, their text put back in logical order below.
    let chars = super::bidi::visual_order(chars);
    let rtl = matches!(chars, std::borrow::Cow::Owned(_));
    let mut b = Builder::default();
    for c in chars.iter() {
        let Some(ch) = c.ch else { continue };
        if b.separator(c, ch) {
            continue;
        }
        // PDFium reports a hyphen that ends a line inside a word as U+0002: keep the
        // glyph as '-' and remember that the word continues on the next line.
        let soft_hyphen = ch == '\u{2}' || c.hyphen;
        let ch = if ch == '\u{2}' { '-' } else { ch };
        let Some(ch) = readable(c, ch) else { continue };
        b.add(c, ch, soft_hyphen);
    }
    if let Some(done) = b.current {
        b.spans.push(done);
    }
    if rtl {
        for s in &mut b.spans {
            super::bidi::logical_text(&mut s.text);
        }
    }
    b.spans
}

/// A drawn glyph whose font maps it to a control code (an unmapped ligature of a Type 3
/// font) reads as the replacement character: "a glyph we cannot read", without breaking
/// its word in two or dropping it (pdftotext prints the raw control code). Invisible
/// control codes are skipped (`None`).
fn readable(c: &RawChar, ch: char) -> Option<char> {
    if !ch.is_control() {
        return Some(ch);
    }
    (c.bbox.width() > 0.0 || c.bbox.height() > 0.0).then_some('\u{FFFD}')
}

/// The span builder's state between characters.
#[derive(Default)]
struct Builder {
    spans: Vec<RawSpan>,
    current: Option<RawSpan>,
    last: Option<Last>,
    pending_space: bool,
    pending_break: bool,
    pending_real_space: bool,
}

/// What the glyph after the previous one starts: a new span, a word, a vertical run.
struct Step {
    split: bool,
    space: bool,
    vertical_switch: bool,
}

impl Builder {
    /// Takes a separator (PDFium's generated space or line break, or a real space
    /// glyph); `false` for a glyph.
    fn separator(&mut self, c: &RawChar, ch: char) -> bool {
        if c.generated || ch == '\r' || ch == '\n' {
            if ch == '\r' || ch == '\n' {
                self.pending_break = true;
            } else {
                self.pending_space = true;
            }
            return true;
        }
        if ch.is_whitespace() {
            // A real space glyph: a word separator whose box says nothing useful.
            self.pending_space = true;
            self.pending_real_space = true;
            return true;
        }
        false
    }

    /// Adds glyph `c` (read as `ch`) to the current span or a new one.
    fn add(&mut self, c: &RawChar, ch: char, soft_hyphen: bool) {
        let size = c.size.max(1.0);
        let vertical = self.current.as_ref().is_some_and(|s| s.vertical);
        let (mut along, mut baseline) = frame(c, vertical);
        let step = self.step(c, ch, vertical, along, baseline, size);
        if step.vertical_switch {
            (along, baseline) = self.switch_vertical(c);
        }
        if step.split {
            if let Some(done) = self.current.take() {
                self.spans.push(done);
            }
            if vertical {
                // The vertical run ended: the new span starts in the ordinary frame.
                (along, baseline) = frame(c, false);
            }
        }
        self.place(c, ch, along, baseline, step.space, soft_hyphen);
        self.remember(c, along, baseline, step.split, size);
    }

    /// How glyph `c` relates to the previous one: a split, a word break, or the start of
    /// a vertical run.
    fn step(
        &self,
        c: &RawChar,
        ch: char,
        vertical: bool,
        along: (f32, f32),
        baseline: f32,
        size: f32,
    ) -> Step {
        // PDFium puts a line break after every glyph of vertical writing; the geometry
        // checks below still end the column.
        let mut step = Step {
            split: self.pending_break && !vertical,
            space: self.pending_space,
            vertical_switch: false,
        };
        let (Some(span), Some(prev)) = (self.current.as_ref(), self.last.as_ref()) else {
            return step;
        };
        let gap = along.0 - prev.along_end;
        let style_differs = *span.font != *c.font
            || (span.size - c.size).abs() > 0.05 * size
            || span.color != rgb(c)
            || !same_angle(span.angle, c.angle);
        let off_line = (baseline - prev.baseline).abs() > BASELINE_TOLERANCE_EM * size;
        // Starting before the previous glyph starts means a new line or a column
        // jump. (PDFium splits a ligature into letters that all carry the ligature's
        // box, so overlapping the previous glyph is not enough.)
        let backwards = along.0 < prev.along_start - 0.1 * size;
        // The letters of one multi-letter glyph (a ligature) share its start.
        let same_glyph = (along.0 - prev.along_start).abs() < 0.01 * size;
        if style_differs || off_line || backwards || gap > SPLIT_GAP_EM * size {
            step.split = true;
        }
        if step.split && !style_differs && starts_vertical_run(span, prev, c, ch, size) {
            // Vertical writing: upright glyphs stacked downwards. PDFium reports them
            // as one-glyph lines; re-read this span in the top-to-bottom frame.
            step.split = false;
            step.vertical_switch = true;
        }
        if vertical || step.vertical_switch {
            // Vertical (CJK) glyph boxes follow the ink, so gaps between them say
            // nothing about words; CJK text has no spaces anyway, and the spaces PDFium
            // infers between tracked-out glyphs are not words either (pdftotext joins
            // them). Only a real space glyph counts.
            step.space = self.pending_real_space;
        } else if gap > word_gap_em(prev, c) * size {
            step.space = true;
        } else if prev.ligature
            && gap < MIN_SPACE_EM * size
            && !off_line
            && !backwards
            && !same_glyph
        {
            // A space with no room for it right after a ligature: some producers map
            // ligatures to "fi " in ToUnicode; pdftotext drops that space too. (A space
            // *inside* one glyph's mapping, followed by more of that glyph's letters,
            // separates words: WeasyPrint maps a whole shaped phrase to one glyph.)
            step.space = false;
        }
        step
    }

    /// Re-reads the current one-glyph span in the top-to-bottom frame; the frame of `c`
    /// in it.
    fn switch_vertical(&mut self, c: &RawChar) -> ((f32, f32), f32) {
        if let (Some(span), Some(prev)) = (self.current.as_mut(), self.last.as_mut()) {
            span.vertical = true;
            let (a, b) = vertical_frame(&prev.advance_box);
            span.along = a;
            span.baseline = b;
            prev.along_start = a.0;
            prev.along_end = a.1;
            prev.baseline = b;
        }
        vertical_frame(&c.advance_box)
    }

    /// Puts the glyph in the current span, or starts one with it.
    fn place(
        &mut self,
        c: &RawChar,
        ch: char,
        along: (f32, f32),
        baseline: f32,
        space: bool,
        soft_hyphen: bool,
    ) {
        match self.current.as_mut() {
            Some(span) => {
                if space && !span.text.ends_with(' ') {
                    span.text.push(' ');
                }
                push_glyph(span, ch, c, along);
                span.soft_hyphen_end = soft_hyphen;
            }
            None => {
                let mut span = new_span(c, along, baseline);
                span.after_break = self.pending_break;
                span.space_before = space || self.pending_break || self.spans.is_empty();
                push_glyph(&mut span, ch, c, along);
                span.soft_hyphen_end = soft_hyphen;
                self.current = Some(span);
            }
        }
    }

    /// Keeps what the next glyph is compared with, and clears the pending separators.
    fn remember(&mut self, c: &RawChar, along: (f32, f32), baseline: f32, split: bool, size: f32) {
        let prev = self.last.as_ref().filter(|_| !split);
        // Keep the furthest end seen in the span: the letters PDFium splits a ligature
        // into do not all carry the ligature's full advance.
        self.last = Some(Last {
            advance_box: c.advance_box,
            ink_box: c.bbox,
            glyphs: prev.map_or(1, |p| p.glyphs + 1),
            ligature: prev.is_some_and(|p| (along.0 - p.along_start).abs() < 0.01 * size),
            along_start: along.0,
            along_end: prev.map_or(along.1, |p| p.along_end.max(along.1)),
            baseline,
        });
        self.pending_space = false;
        self.pending_real_space = false;
        self.pending_break = false;
    }
}

fn rgb(c: &RawChar) -> [u8; 3] {
    c.color
}

fn new_span(c: &RawChar, along: (f32, f32), baseline: f32) -> RawSpan {
    RawSpan {
        first_index: c.index,
        text: String::new(),
        bbox: c.bbox,
        font: c.font.to_string(),
        size: c.size,
        color: c.color,
        weight: c.weight,
        italic: c.italic,
        monospace: c.monospace,
        serif: c.serif,
        angle: c.angle,
        baseline,
        along,
        after_break: false,
        space_before: true,
        soft_hyphen_end: false,
        vertical: false,
    }
}

fn push_glyph(span: &mut RawSpan, ch: char, c: &RawChar, along: (f32, f32)) {
    push_normalised(&mut span.text, ch);
    if c.bbox.width() > 0.0 || c.bbox.height() > 0.0 {
        // At most one character so far (counting them all made a long span quadratic).
        span.bbox = if span.text.chars().nth(1).is_none() {
            c.bbox
        } else {
            span.bbox.union(&c.bbox)
        };
    }
    span.along = (span.along.0.min(along.0), span.along.1.max(along.1));
}

/// Latin ligature code points become their letters, as pdftotext does, so search and
/// word matching see "fi" rather than U+FB01.
fn push_normalised(text: &mut String, ch: char) {
    let expanded = match ch {
        '\u{FB00}' => "ff",
        '\u{FB01}' => "fi",
        '\u{FB02}' => "fl",
        '\u{FB03}' => "ffi",
        '\u{FB04}' => "ffl",
        '\u{FB05}' | '\u{FB06}' => "st",
        _ => {
            text.push(ch);
            return;
        }
    };
    text.push_str(expanded);
}
