//! The engine's single error type.

/// Why an engine call failed. The Node addon maps each variant to one stable API code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The document is encrypted and the password is missing or wrong
    /// (API code `document_encrypted`).
    #[error("the document is encrypted and the password is missing or wrong")]
    Encrypted,
    /// Not a PDF the engine can open: damaged, truncated, not a PDF at all
    /// (API code `document_unsupported`).
    #[error("the document cannot be opened: {0}")]
    Unsupported(String),
    /// The request is impossible as written: page out of range, empty region, …
    /// (API code `invalid_request`).
    #[error("{0}")]
    InvalidRequest(String),
    /// A step with its own time budget (a page's OCR) passed it (API code
    /// `engine_timeout`).
    #[error("{0}")]
    Timeout(String),
    /// Anything else went wrong inside the engine (API code `engine_error`).
    #[error("engine failure: {0}")]
    Engine(String),
}

/// The engine's `Result` alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<pdf_render::Error> for Error {
    fn from(err: pdf_render::Error) -> Self {
        use pdf_render::Error as R;
        match err {
            R::Encrypted => Error::Encrypted,
            R::Unsupported(reason) => Error::Unsupported(reason),
            R::InvalidRequest(reason) => Error::InvalidRequest(reason),
            other @ (R::Bind(_) | R::BudgetTooSmall { .. } | R::Pdfium { .. } | R::Png(_)) => {
                Error::Engine(other.to_string())
            }
        }
    }
}
