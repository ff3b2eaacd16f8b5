//! Content streams for an editor that must leave untouched bytes identical.
//!
//! Three layers, one-way: [`lexer`] (tokens with byte spans) → [`ops`] (typed
//! operations) → [`interp`] (graphics and text state, yielding positioned glyphs with
//! the bytes they came from). [`write`] produces replacement bytes and [`patch`]es them
//! into a stream. Fonts are supplied by the caller through [`FontSource`].
//!
//! ```
//! use pdf_content::{parse, patch, write::write_literal_string, OpKind};
//!
//! let stream = b"BT /F1 12 Tf 72 700 Td (Hello) Tj ET";
//! let ops = parse(stream);
//! let show = ops.iter().find(|op| op.kind == OpKind::ShowText).unwrap();
//! let string = show.shown_operand().unwrap();
//! let mut replacement = Vec::new();
//! write_literal_string(&mut replacement, b"Howdy");
//! let edited = patch(stream, &[(string.span.clone(), replacement)]).unwrap();
//! assert_eq!(edited, b"BT /F1 12 Tf 72 700 Td (Howdy) Tj ET");
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod error;
pub mod interp;
pub mod lexer;
pub mod ops;
pub mod write;

pub use error::{Error, Result};
pub use interp::marked_text::{decode_text_string, encode_text_string};
pub use interp::matrix::Matrix;
pub use interp::{
    interpret_page, ActualText, ContentStream, FontKey, FontObject, FontSource, Glyph, GlyphFont,
    Kern, PageGlyphs, StreamId, Warning,
};
pub use lexer::{string_source_ranges, tokenize, Lexer, Token, TokenKind};
pub use ops::{parse, Op, OpKind, Operand, PdfString, Value};
pub use write::{patch, tj_array, tj_array_from_pairs, write_op, TjItem};
