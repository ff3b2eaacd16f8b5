//! The pdfedit engine API used by the Node addon: document facts, the text model (spans,
//! lines, blocks, form fields) and page previews.
//!
//! Every function takes the document's bytes and an optional password and opens the
//! document afresh: the engine keeps no state between calls, so a worker thread can serve
//! any request. PDFium work is serialised process-wide (see `pdf-render`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod commit;
mod error;
mod find;
mod flags;
mod image;
mod model;
pub mod ocr;
mod open;
mod ops;
mod pipeline;
mod plan;
mod read;
mod run;
mod save;
mod template;
mod template_models;
mod types;
mod verify;
mod words;

use std::path::Path;

pub use error::{Error, Result};
pub use open::budget;
pub use open::{open_facts_within, open_info, open_info_within, Limits};
pub use pdf_render::{DocInfo, FieldKind, FieldValue, FormField, PageInfo, Rect, SignatureInfo};
pub use read::{read_text, read_text_within, Fields, PageText, Span, TextResult};

/// Editing: the request and result shapes and [`edit::edit`], the entry point.
pub mod edit {
    pub use crate::flags::gather::gathered as facts_gathered;
    pub use crate::open::facts_kept::found as template_facts_kept;
    pub use crate::pipeline::scan_parses_taken;
    pub use crate::pipeline::{edit, locate, EditError};
    pub use crate::plan::style::{list_fonts, FontEntry};
    pub use crate::template::hits as template_cache_hits;
    pub use crate::template::saves_skipped as template_saves_skipped;
    pub use crate::template_models::taken as template_models_taken;
    pub use crate::types::*;
    pub use crate::verify::bare_render;
}

/// What [`render`] should draw.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RenderRequest {
    /// 1-based page.
    pub page: u32,
    /// Region `[x0, y0, x1, y1]` of the page; `None` = the whole page.
    pub region: Option<[f32; 4]>,
    /// Highlight boxes in page coordinates.
    pub highlights: Vec<[f32; 4]>,
    /// Output width in pixels (default 1000, max 2000).
    pub width: Option<u32>,
    /// Byte budget of the PNG (default 200 000).
    pub max_bytes: Option<usize>,
    /// What the document may cost (checked before PDFium opens it).
    pub limits: Limits,
}

/// Binds PDFium from `lib_path` (idempotent). Without a call, the first use binds from
/// the `PDFIUM_LIB_PATH` environment variable.
pub fn init(lib_path: &Path) -> Result<()> {
    Ok(pdf_render::init(Some(lib_path))?)
}

/// Renders a page (or a region of it) to a PNG that never exceeds the byte budget.
pub fn render(bytes: &[u8], password: Option<&str>, req: &RenderRequest) -> Result<Vec<u8>> {
    let doc = open::open_checked(bytes, password, &req.limits)?;
    let count = doc.page_count();
    if req.page == 0 || req.page > count {
        return Err(Error::InvalidRequest(format!(
            "page {} does not exist (the document has {count})",
            req.page
        )));
    }
    let to_rect = |b: &[f32; 4]| pdf_render::Rect::from_corners(b[0], b[1], b[2], b[3]);
    if let Some(r) = &req.region {
        if r[2] <= r[0] || r[3] <= r[1] {
            return Err(Error::InvalidRequest(
                "region must be [x0, y0, x1, y1] with x0 < x1 and y0 < y1".into(),
            ));
        }
    }
    let options = pdf_render::RenderOptions {
        region: req.region.as_ref().map(to_rect),
        highlights: req.highlights.iter().map(to_rect).collect(),
        width: req.width.unwrap_or(pdf_render::DEFAULT_WIDTH),
        max_bytes: req.max_bytes.unwrap_or(pdf_render::DEFAULT_MAX_BYTES),
    };
    if options.width == 0 || options.width > pdf_render::MAX_WIDTH {
        return Err(Error::InvalidRequest(format!(
            "width must be between 1 and {} pixels",
            pdf_render::MAX_WIDTH
        )));
    }
    Ok(doc.render_png(req.page - 1, &options)?)
}
