//! The text of a page in the API's shape: spans with their line, block and source.

use pdf_render::FormField;

/// One span of text in the API's shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Stable id: the same bytes always give the same ids.
    pub span_id: String,
    /// 1-based page.
    pub page: u32,
    /// The text; words inside the span keep their single spaces.
    pub text: String,
    /// `[x0, y0, x1, y1]` in points, top-left origin of the displayed page.
    pub bbox: [f32; 4],
    /// Font name without the subset tag.
    pub font: String,
    /// Font size in points (text matrix and CTM applied).
    pub size: f32,
    /// Fill colour `#rrggbb`.
    pub color: String,
    /// Any of `bold`, `italic`, `monospace`, `serif`.
    pub flags: Vec<&'static str>,
    /// Line id, unique within the page.
    pub line: u32,
    /// Block id, unique within the page.
    pub block: u32,
    /// Baseline angle in degrees counter-clockwise as displayed (0 = left to right).
    pub rotation: f32,
    /// `text-layer` (the page's content), `annotation` (text drawn by an annotation's
    /// appearance: free text, stamps, signature appearances) or `form-field` (drawn by a
    /// form widget's appearance: a filled value, a button's caption). `ocr` spans come
    /// from the OCR bridge, not from here.
    pub source: &'static str,
    /// Whether a word separator precedes the span on its line. `false` means the span
    /// continues the previous span's word (a superscript, a colour change mid-word).
    pub space_before: bool,
    /// The span ends in a hyphen that breaks a word across lines (PDFium's judgement);
    /// plain text joins the word and drops the hyphen, as pdftotext does.
    pub soft_hyphen_end: bool,
    /// OCR spans: Tesseract's confidence in the word, 0…100 (`None` for other sources).
    pub confidence: Option<f32>,
}

/// The text of one page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageText {
    /// 1-based page number.
    pub page: u32,
    /// Displayed width in points.
    pub width: f32,
    /// Displayed height in points.
    pub height: f32,
    /// Clockwise page rotation (0, 90, 180, 270).
    pub rotation: u16,
    /// Spans in reading order: the page content's, then the annotations'.
    pub spans: Vec<Span>,
}

impl PageText {
    /// The page as plain text: spans of a line joined by a space (none when the span
    /// continues a word), lines by a newline; a soft line-end hyphen joins its word.
    pub fn plain_text(&self) -> String {
        let mut out = String::new();
        let mut last: Option<&Span> = None;
        for s in &self.spans {
            match last {
                None => {}
                Some(prev) if prev.line == s.line && s.space_before => out.push(' '),
                Some(prev) if prev.line == s.line => {}
                Some(prev)
                    if prev.soft_hyphen_end
                        && prev.text.ends_with('-')
                        && prev.source == s.source =>
                {
                    out.pop();
                }
                Some(_) => out.push('\n'),
            }
            out.push_str(&s.text);
            last = Some(s);
        }
        out
    }
}

/// The answer of [`super::read_text`].
#[derive(Debug, Clone, PartialEq)]
pub struct TextResult {
    /// Requested pages (empty span lists when the text layer was not asked for).
    pub pages: Vec<PageText>,
    /// Form fields whose first widget is on a requested page (empty when the forms layer
    /// was not asked for).
    pub fields: Vec<FormField>,
}
