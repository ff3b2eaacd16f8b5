//! The crate's one error type.

/// Everything that can go wrong while reading a font dictionary or re-encoding text.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The object is not a font dictionary (no `/Type /Font`-like shape or no `/Subtype`).
    #[error("not a font dictionary: {reason}")]
    NotAFont {
        /// What was wrong with the dictionary.
        reason: String,
    },
    /// The font's `/Subtype` is one we do not read (e.g. a bare `CIDFontType0` used directly).
    #[error("unsupported font subtype {subtype}")]
    UnsupportedSubtype {
        /// The `/Subtype` name as found.
        subtype: String,
    },
    /// A referenced object could not be resolved or has the wrong type.
    #[error("bad font object {what}: {source}")]
    Object {
        /// Which entry we were reading.
        what: &'static str,
        /// lopdf's description.
        #[source]
        source: lopdf::Error,
    },
    /// Some characters of the text have no code whose glyph exists in the font.
    #[error("font cannot show {} character(s): {:?}", chars.len(), chars)]
    Missing {
        /// The characters that cannot be shown, in text order, without duplicates.
        chars: Vec<char>,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
