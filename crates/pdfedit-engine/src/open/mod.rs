//! Opening a document: its facts through PDFium (`open_info`), and for editing, an
//! encrypted document decrypted with the state needed to encrypt the output again
//! (`crypt`).

pub(crate) mod crypt;

use pdf_render::DocInfo;

use crate::Result;

/// Document facts: pages, encryption, signatures, forms.
pub fn open_info(bytes: &[u8], password: Option<&str>) -> Result<DocInfo> {
    let doc = pdf_render::Document::open(bytes, password)?;
    Ok(doc.info()?)
}

/// Refuses a document whose page tree names a page that lopdf could not read as a
/// dictionary (a page dictionary nested past the parser's depth limit, or damaged), where
/// PDFium may still read it: the edit would otherwise fail later as an engine error.
pub(crate) fn check_pages(doc: &lopdf::Document) -> Result<()> {
    for (number, id) in doc.get_pages() {
        if doc.get_dictionary(id).is_err() {
            return Err(crate::Error::Unsupported(format!(
                "page {number} (object {} {}) cannot be read for editing: damaged or nested too deeply",
                id.0, id.1
            )));
        }
    }
    Ok(())
}
