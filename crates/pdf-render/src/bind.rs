//! Binding PDFium once per process.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use pdfium_render::prelude::Pdfium;

use crate::{Error, Result};

/// The process-wide PDFium instance. pdfium-render itself keeps the bindings in a global,
/// so a second `bind_to_library` would fail: we bind exactly once and hand out `&'static`.
static PDFIUM: OnceLock<Pdfium> = OnceLock::new();
/// Serialises the first binding so two threads racing in `init` do not both load the library.
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Binds PDFium from `lib_path` (or, when `None`, from the `PDFIUM_LIB_PATH` environment
/// variable). Idempotent: once bound, later calls return `Ok(())` whatever the path.
pub fn init(lib_path: Option<&Path>) -> Result<()> {
    pdfium_from(lib_path.map(Path::to_path_buf)).map(|_| ())
}

/// Whether PDFium is already bound in this process.
pub fn is_initialized() -> bool {
    PDFIUM.get().is_some()
}

/// The bound PDFium, binding it from `PDFIUM_LIB_PATH` on first use.
pub(crate) fn pdfium() -> Result<&'static Pdfium> {
    pdfium_from(None)
}

fn pdfium_from(lib_path: Option<PathBuf>) -> Result<&'static Pdfium> {
    if let Some(p) = PDFIUM.get() {
        return Ok(p);
    }
    // A poisoned lock only means another thread panicked while binding; the OnceLock is
    // still consistent, so carry on.
    let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = PDFIUM.get() {
        return Ok(p);
    }
    let path = match lib_path {
        Some(p) => p,
        None => std::env::var_os("PDFIUM_LIB_PATH")
            .map(PathBuf::from)
            .ok_or_else(|| {
                Error::Bind("no library path given and PDFIUM_LIB_PATH is not set".into())
            })?,
    };
    // The path is deliberately left out of the message: messages can reach API clients.
    let bindings = Pdfium::bind_to_library(&path).map_err(|e| Error::Bind(short_reason(&e)))?;
    Ok(PDFIUM.get_or_init(|| Pdfium::new(bindings)))
}

fn short_reason(err: &pdfium_render::prelude::PdfiumError) -> String {
    use pdfium_render::prelude::PdfiumError as E;
    match err {
        E::LoadLibraryError(_) => "the shared library could not be loaded".into(),
        E::PdfiumLibraryBindingsAlreadyInitialized => "already bound elsewhere".into(),
        _ => "the shared library does not export the expected functions".into(),
    }
}
