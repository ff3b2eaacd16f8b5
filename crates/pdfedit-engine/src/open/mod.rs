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
