//! Everything in pdfedit that touches PDFium.
//!
//! PDFium is bound once per process (see [`init`]); every call then goes through
//! pdfium-render's `thread_safe` mutex, because PDFium itself is not thread-safe. Threads
//! therefore only parallelise the pure-Rust work; real parallel rendering needs processes.
//!
//! All geometry leaving this crate is in the API coordinate system: PDF points, origin at
//! the top-left corner of the page *as displayed* (crop box and `/Rotate` applied), x to the
//! right, y down, boxes `[x0, y0, x1, y1]` with `x0 <= x1` and `y0 <= y1`.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod annots;
mod bind;
mod chars;
pub mod diff;
mod document;
mod error;
mod forms;
mod geometry;
mod image;
mod png_budget;
pub mod raster;
mod reading;
mod render;

pub use bind::{init, is_initialized};
pub use chars::RawChar;
pub use document::{DocInfo, Document, PageInfo, SignatureInfo};
pub use error::{Error, Result};
pub use forms::{FieldCollector, FieldKind, FieldValue, FormField};
pub use geometry::Rect;
pub use image::DecodedImage;
pub use png_budget::{encode_png_within, RgbImage};
pub use reading::{PageRead, ReadingPage};
pub use render::{RenderOptions, DEFAULT_MAX_BYTES, DEFAULT_WIDTH, MAX_WIDTH};
