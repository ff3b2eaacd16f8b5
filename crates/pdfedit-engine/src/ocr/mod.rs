//! The OCR bridge (SPEC rule 11): which pages are scanned, and their words as Tesseract
//! reads them on a 300 dpi render of that page alone (deskewed first when the page is
//! skewed).
//!
//! A page is read by OCR when it has no visible text and draws something (a scan), or
//! when its only text is an invisible layer that does not sit on the page's ink (an OCR
//! layer of another image, or a misplaced one). A page with visible text is never OCR'd.
//!
//! Results are plain data ([`OcrPage`]) so the service can cache them per document, page
//! and languages and hand them back ([`OcrOptions::cached`]): a find followed by an edit
//! reads each page once.

pub(crate) mod deskew;
pub(crate) mod tesseract;

use std::time::{Duration, Instant};

use pdf_render::raster::Raster;

use crate::{Error, Result};

/// Resolution of the render Tesseract reads.
pub const OCR_DPI: f32 = 300.0;
/// Pixels per point of that render.
pub(crate) const OCR_PX_PER_PT: f32 = OCR_DPI / 72.0;
/// Default budget of one page's OCR run.
pub const DEFAULT_PAGE_BUDGET_MS: u64 = 60_000;
/// A word of an invisible layer counts as sitting on ink when this share of its box is dark.
const INKED_SHARE: f32 = 0.03;
/// An invisible layer matches its page when this share of its glyphs sit on ink.
const MATCHING_LAYER: f32 = 0.5;
/// Grey value below which a render pixel is ink.
const INK_LEVEL: u8 = 160;

/// One word read by OCR.
#[derive(Debug, Clone, PartialEq)]
pub struct OcrWord {
    /// The word.
    pub text: String,
    /// `[x0, y0, x1, y1]` in points, top-left origin of the displayed page.
    pub bbox: [f32; 4],
    /// Tesseract's confidence, 0…100.
    pub confidence: f32,
    /// Block number (Tesseract's), 1-based.
    pub block: u32,
    /// Line number, unique within the page, 1-based, in reading order.
    pub line: u32,
}

/// The OCR of one page.
#[derive(Debug, Clone, PartialEq)]
pub struct OcrPage {
    /// 1-based page.
    pub page: u32,
    /// The languages it was read with (`eng+deu`).
    pub languages: String,
    /// Skew of the page found and undone before reading, degrees.
    pub skew: f32,
    /// Words in reading order.
    pub words: Vec<OcrWord>,
}

/// OCR wanted for a call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OcrOptions {
    /// Tesseract language codes (`eng` when empty).
    pub languages: Vec<String>,
    /// Budget of one page's run (ms); 0 = [`DEFAULT_PAGE_BUDGET_MS`].
    pub page_budget_ms: u64,
    /// Pages already read with the same languages (from the service's cache).
    pub cached: Vec<OcrPage>,
}

impl OcrOptions {
    /// `eng+deu`, the languages in Tesseract's form; checks each is installed.
    pub fn language_arg(&self) -> Result<String> {
        let langs: Vec<&str> = if self.languages.is_empty() {
            vec!["eng"]
        } else {
            self.languages.iter().map(String::as_str).collect()
        };
        let installed = tesseract::installed_languages();
        for l in &langs {
            if !installed.iter().any(|i| i == l) {
                return Err(Error::InvalidRequest(format!(
                    "OCR language \"{l}\" is not installed (installed: {})",
                    installed.join(", ")
                )));
            }
        }
        Ok(langs.join("+"))
    }

    fn budget(&self) -> Duration {
        Duration::from_millis(if self.page_budget_ms == 0 {
            DEFAULT_PAGE_BUDGET_MS
        } else {
            self.page_budget_ms
        })
    }

    /// The cached OCR of `page` read with `languages`.
    pub(crate) fn cached_page(&self, page: u32, languages: &str) -> Option<&OcrPage> {
        self.cached
            .iter()
            .find(|c| c.page == page && c.languages == languages)
    }
}

/// What a page offers to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PageKind {
    /// Visible text: read from the text layer, never OCR'd.
    Text,
    /// An invisible text layer sitting on the page's ink: read from that layer.
    MatchingLayer,
    /// No usable text and something drawn: read by OCR.
    Scanned,
    /// Nothing drawn at all.
    Blank,
}

/// Grey levels of an RGB raster.
pub(crate) fn gray_of(r: &Raster) -> Vec<u8> {
    r.pixels
        .chunks_exact(3)
        .map(|p| {
            ((u32::from(p[0]) * 299 + u32::from(p[1]) * 587 + u32::from(p[2]) * 114) / 1000) as u8
        })
        .collect()
}

/// The kind of a page from its text (`visible` glyphs, `invisible` glyph boxes in
/// top-left points) and its 300 dpi render.
pub(crate) fn classify(
    visible: usize,
    invisible: &[[f32; 4]],
    gray: &[u8],
    raster: &Raster,
) -> PageKind {
    if visible > 0 {
        return PageKind::Text;
    }
    let inked = gray.iter().filter(|&&v| v < INK_LEVEL).count();
    if inked < 50 {
        return PageKind::Blank;
    }
    if invisible.is_empty() {
        return PageKind::Scanned;
    }
    let s = raster.px_per_pt;
    let (w, h) = (raster.width as usize, raster.height as usize);
    let on_ink = invisible
        .iter()
        .filter(|b| {
            let px = |v: f32, max: usize| ((v * s).max(0.0) as usize).min(max);
            let (x0, x1) = (px(b[0], w), px(b[2], w));
            let (y0, y1) = (px(b[1], h), px(b[3], h));
            let area = (x1.saturating_sub(x0)) * (y1.saturating_sub(y0));
            if area == 0 {
                return false;
            }
            let dark = (y0..y1)
                .map(|y| {
                    gray[y * w + x0..y * w + x1]
                        .iter()
                        .filter(|&&v| v < INK_LEVEL)
                        .count()
                })
                .sum::<usize>();
            dark as f32 >= INKED_SHARE * area as f32
        })
        .count();
    if on_ink as f32 >= MATCHING_LAYER * invisible.len() as f32 {
        PageKind::MatchingLayer
    } else {
        PageKind::Scanned
    }
}

/// Reads 1-based `page` from its grey 300 dpi render (`px_per_pt` as rendered).
pub(crate) fn read_page(
    page: u32,
    gray: &[u8],
    width: u32,
    height: u32,
    px_per_pt: f32,
    languages: &str,
    options: &OcrOptions,
) -> Result<OcrPage> {
    let skew = deskew::estimate(gray, width, height);
    let rotated;
    let image = if skew != 0.0 {
        rotated = deskew::rotate(gray, width, height, -skew);
        &rotated
    } else {
        gray
    };
    let deadline = Instant::now() + options.budget();
    let words =
        tesseract::run(image, width, height, languages, 3, deadline).map_err(|e| match e {
            tesseract::RunError::Timeout => Error::Timeout(format!(
                "OCR of page {page} took longer than {} ms",
                options.budget().as_millis()
            )),
            tesseract::RunError::Failed(m) => Error::Engine(format!("OCR of page {page}: {m}")),
        })?;
    Ok(OcrPage {
        page,
        languages: languages.to_string(),
        skew,
        words: to_page_words(&words, width, height, px_per_pt, skew),
    })
}

/// Tesseract's words to page words: boxes back in the unrotated image and in points;
/// lines numbered in reading order across blocks.
fn to_page_words(
    words: &[tesseract::TsvWord],
    width: u32,
    height: u32,
    px_per_pt: f32,
    skew: f32,
) -> Vec<OcrWord> {
    let mut out = Vec::with_capacity(words.len());
    let mut line_key = None;
    let mut line = 0u32;
    for w in words {
        let key = (w.block, w.par, w.line);
        if line_key != Some(key) {
            line += 1;
            line_key = Some(key);
        }
        let px = [
            w.left as f32,
            w.top as f32,
            (w.left + w.width) as f32,
            (w.top + w.height) as f32,
        ];
        let px = if skew != 0.0 {
            deskew::unrotate_box(px, width, height, -skew)
        } else {
            px
        };
        out.push(OcrWord {
            text: w.text.clone(),
            bbox: px.map(|v| v / px_per_pt),
            confidence: w.conf,
            block: w.block,
            line,
        });
    }
    out
}

/// Reads the single line of text in `gray` (a crop of a render), for read-back checks.
pub(crate) fn read_line(gray: &[u8], width: u32, height: u32, languages: &str) -> Result<String> {
    let deadline = Instant::now() + Duration::from_millis(DEFAULT_PAGE_BUDGET_MS / 4);
    let read = |psm: u8| -> Result<String> {
        let words =
            tesseract::run(gray, width, height, languages, psm, deadline).map_err(|e| match e {
                tesseract::RunError::Timeout => {
                    Error::Timeout("OCR read-back took too long".into())
                }
                tesseract::RunError::Failed(m) => Error::Engine(format!("OCR read-back: {m}")),
            })?;
        Ok(words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" "))
    };
    // A single line (7); Tesseract finds no line in some short crops, then a single word (8).
    let line = read(7)?;
    if line.trim().is_empty() {
        return read(8);
    }
    Ok(line)
}
