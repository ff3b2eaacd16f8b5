//! Reading the fonts of existing PDFs so edited text can be drawn in the document's own font.
//!
//! [`Font::load`] turns a font dictionary (Type1, MMType1, TrueType, Type3, Type0 with a
//! CIDFontType0 or CIDFontType2 descendant) into a value that answers, cheaply and per glyph,
//! the questions a content interpreter asks ([`Font::next_code`], [`Font::unicode`],
//! [`Font::width`]) and, less often, the question an editor asks: can this text be shown with
//! glyphs that really exist in the embedded program ([`Font::encode`])?
//!
//! Per-glyph answers are precomputed at load time; the embedded program is kept as bytes and
//! re-parsed only for [`Font::encode`] of Type0 fonts and for [`Font::glyph_bbox`].
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod agl;
pub mod cmap;
mod cmap_tokens;
mod collection;
mod descriptor;
pub mod embed;
mod encode;
pub mod encodings;
mod error;
mod font;
mod metrics;
pub mod nearest;
pub mod obj;
mod program;
pub mod registry;
mod simple;
mod type1;

pub use descriptor::{Descriptor, FontFlags, FontStyle};
pub use error::{Error, Result};
pub use font::{Font, FontKind};
pub use program::ProgramKind;
