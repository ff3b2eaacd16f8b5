//! The crate's single error type.

/// Everything that can go wrong while talking to PDFium.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The PDFium library could not be bound (missing file, wrong architecture, no path
    /// given and `PDFIUM_LIB_PATH` unset). The message never contains the path.
    #[error("the PDF engine library could not be loaded: {0}")]
    Bind(String),
    /// The document is encrypted and no password, or a wrong one, was given.
    #[error("the document is encrypted and the password is missing or wrong")]
    Encrypted,
    /// The input is not a PDF PDFium can open (not a PDF, damaged beyond repair).
    #[error("the document cannot be opened: {0}")]
    Unsupported(String),
    /// The request cannot be satisfied as written (page out of range, empty region, …).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// Even the smallest, grayscale rendering does not fit the byte budget.
    #[error("the preview cannot be made smaller than {max_bytes} bytes")]
    BudgetTooSmall {
        /// The budget that could not be met.
        max_bytes: usize,
    },
    /// PDFium reported an error on an operation that should have worked.
    #[error("PDFium failed while {context}: {message}")]
    Pdfium {
        /// What we were doing.
        context: &'static str,
        /// PDFium's (or pdfium-render's) description.
        message: String,
    },
    /// PNG encoding failed.
    #[error("PNG encoding failed: {0}")]
    Png(String),
}

/// The crate's `Result` alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps a pdfium-render error with what we were doing when it happened.
    pub(crate) fn pdfium(context: &'static str, err: pdfium_render::prelude::PdfiumError) -> Self {
        Error::Pdfium {
            context,
            message: format!("{err:?}"),
        }
    }
}
