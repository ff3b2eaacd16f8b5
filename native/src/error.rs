//! The addon's one error-code enum and its one panic guard: every export runs through
//! [`guarded`], so an engine error becomes a JS `Error` whose `code` is one of [`Code`],
//! and a panic on one document becomes `engine_error` instead of ending the process.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pdfedit_engine::edit::EditError;
use pdfedit_engine::Error;

/// The stable error codes (the service's closed list); a thrown JS `Error` carries one as
/// `code`. An argument of the wrong type is refused by napi before the call, with napi's
/// own code (`InvalidArg`, `StringExpected`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Encrypted and the password is missing or wrong.
    DocumentEncrypted,
    /// Not a PDF the engine can open, or past one of the call's limits.
    DocumentUnsupported,
    /// Signed and `options.break_signature` not set (edit).
    SignedDocument,
    /// The request is impossible as written.
    InvalidRequest,
    /// `options.watermark` `off` on a flagged document, not allowed for the caller (edit).
    ForbiddenWatermarkOff,
    /// A step with its own budget (a page's OCR) ran out of time.
    EngineTimeout,
    /// Anything else, including a caught panic.
    EngineError,
}

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        match self {
            Code::DocumentEncrypted => "document_encrypted",
            Code::DocumentUnsupported => "document_unsupported",
            Code::SignedDocument => "signed_document",
            Code::InvalidRequest => "invalid_request",
            Code::ForbiddenWatermarkOff => "forbidden_watermark_off",
            Code::EngineTimeout => "engine_timeout",
            Code::EngineError => "engine_error",
        }
    }
}

/// The addon's `Result`: a JS error with a [`Code`].
pub type Result<T> = napi::Result<T, Code>;

/// An error the engine returns, with its code.
pub trait Coded: std::fmt::Display {
    /// The stable code of this error.
    fn code(&self) -> Code;
}

impl Coded for Error {
    fn code(&self) -> Code {
        match self {
            Error::Encrypted => Code::DocumentEncrypted,
            Error::Unsupported(_) => Code::DocumentUnsupported,
            Error::InvalidRequest(_) => Code::InvalidRequest,
            Error::Timeout(_) => Code::EngineTimeout,
            Error::Engine(_) => Code::EngineError,
        }
    }
}

impl Coded for EditError {
    fn code(&self) -> Code {
        match self {
            EditError::SignedDocument => Code::SignedDocument,
            EditError::WatermarkOffForbidden(_) => Code::ForbiddenWatermarkOff,
            EditError::Engine(e) => e.code(),
        }
    }
}

/// `invalid_request` with `message`.
pub fn invalid(message: impl Into<String>) -> napi::Error<Code> {
    napi::Error::new(Code::InvalidRequest, message.into())
}

/// Runs `f`, turning its error and any panic into a JS error with a stable code.
pub fn guarded<T, E: Coded>(f: impl FnOnce() -> std::result::Result<T, E>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(|e| napi::Error::new(e.code(), e.to_string())),
        Err(_) => Err(napi::Error::new(
            Code::EngineError,
            "the engine crashed on this document".to_string(),
        )),
    }
}
