//! Opening a document and reading what it is: pages, encryption, signatures, forms.

use pdfium_render::prelude::*;

use crate::bind::pdfium;
use crate::geometry::PageTransform;
use crate::{Error, Result};

/// How far into the file the `%PDF-` header may start. Acrobat accepts junk before the
/// header within the first 1024 bytes, so we do the same and refuse anything else up front.
const HEADER_WINDOW: usize = 1024;

/// One page as displayed.
#[derive(Debug, Clone, PartialEq)]
pub struct PageInfo {
    /// Width in points, rotation applied.
    pub width: f32,
    /// Height in points, rotation applied.
    pub height: f32,
    /// Clockwise display rotation: 0, 90, 180 or 270.
    pub rotation: u16,
}

/// One digital signature (a signature field that carries a value).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SignatureInfo {
    /// The signature's `/SubFilter` (e.g. `adbe.pkcs7.detached`, `ETSI.CAdES.detached`).
    pub sub_filter: Option<String>,
    /// The signing reason, when the signer gave one.
    pub reason: Option<String>,
    /// The signing time as written in the PDF (`D:YYYYMMDD…`), when present.
    pub signing_time: Option<String>,
}

/// What a document is, cheaply.
#[derive(Debug, Clone, PartialEq)]
pub struct DocInfo {
    /// Number of pages.
    pub page_count: u32,
    /// Whether the file uses a security handler (even one opened with no password).
    pub encrypted: bool,
    /// Pages in order.
    pub pages: Vec<PageInfo>,
    /// Signed signature fields (those with a value), in PDFium's order.
    pub signatures: Vec<SignatureInfo>,
    /// Whether the document has an AcroForm (also true for XFA hybrids).
    pub has_acro_form: bool,
    /// Whether the document carries XFA (full or foreground/hybrid).
    pub has_xfa: bool,
}

/// An open document. Borrows the bytes: PDFium reads from them lazily.
pub struct Document<'a> {
    pub(crate) doc: PdfDocument<'a>,
    bytes: &'a [u8],
}

impl<'a> Document<'a> {
    /// Opens `bytes` with an optional password.
    ///
    /// Wrong or missing password gives [`Error::Encrypted`]; anything that is not a PDF
    /// PDFium can parse gives [`Error::Unsupported`].
    pub fn open(bytes: &'a [u8], password: Option<&str>) -> Result<Self> {
        let window = &bytes[..bytes.len().min(HEADER_WINDOW)];
        if !window.windows(5).any(|w| w == b"%PDF-") {
            return Err(Error::Unsupported("no %PDF- header".into()));
        }
        let pdfium = pdfium()?;
        // An empty password is the same as none: PDFium always tries the empty user
        // password first.
        // PDFium takes a C string: a password with a NUL inside cannot match any document,
        // so it is treated like no password (an encrypted document then answers Encrypted).
        let password = password.filter(|p| !p.is_empty() && !p.contains('\0'));
        let doc = pdfium
            .load_pdf_from_byte_slice(bytes, password)
            .map_err(classify_open_error)?;
        if doc.pages().is_empty() {
            return Err(Error::Unsupported("the document has no pages".into()));
        }
        Ok(Document { doc, bytes })
    }

    /// Number of pages.
    pub fn page_count(&self) -> u32 {
        u32::try_from(self.doc.pages().len()).unwrap_or(0)
    }

    /// Loads page `index` (0-based), or `InvalidRequest` when out of range.
    pub(crate) fn page(&self, index: u32) -> Result<PdfPage<'_>> {
        let count = self.page_count();
        let idx = i32::try_from(index)
            .ok()
            .filter(|_| index < count)
            .ok_or_else(|| {
                Error::InvalidRequest(format!(
                    "page {} does not exist (the document has {count})",
                    index + 1
                ))
            })?;
        self.doc
            .pages()
            .get(idx)
            .map_err(|e| Error::pdfium("loading a page", e))
    }

    /// Document facts: pages, encryption, signatures, forms.
    pub fn info(&self) -> Result<DocInfo> {
        let pages: Vec<PageInfo> = self.doc.pages().iter().map(|p| page_info_of(&p)).collect();
        Ok(DocInfo {
            page_count: u32::try_from(pages.len()).unwrap_or(u32::MAX),
            pages,
            ..self.facts()?
        })
    }

    /// [`Document::info`] without the pages' own facts: `pages` is left empty and
    /// `page_count` is PDFium's count. Loading a page parses its whole content, so
    /// `info` costs as much as reading every page; an edit, which reads only the pages it
    /// touches, asks for these facts instead.
    pub fn facts(&self) -> Result<DocInfo> {
        let encrypted = !matches!(
            self.doc.permissions().security_handler_revision(),
            Ok(PdfSecurityHandlerRevision::Unprotected)
        );
        let sub_filters = scan_sub_filters(self.bytes);
        let signatures: Vec<SignatureInfo> = self
            .doc
            .signatures()
            .iter()
            // PDFium lists every signature field; an unsigned one has no /Contents.
            .filter(|s| !s.bytes().is_empty())
            .map(|s| SignatureInfo {
                sub_filter: None,
                reason: s.reason(),
                signing_time: s.signing_date(),
            })
            .collect();
        // Only trust the file-order scan when it found exactly one sub filter per
        // signature PDFium knows of; otherwise we cannot pair them.
        let signatures = if sub_filters.len() == signatures.len() {
            signatures
                .into_iter()
                .zip(sub_filters)
                .map(|(s, f)| SignatureInfo {
                    sub_filter: Some(f),
                    ..s
                })
                .collect()
        } else {
            signatures
        };
        let form_type = self.doc.form().map(|f| f.form_type());
        let has_xfa = matches!(
            form_type,
            Some(PdfFormType::XfaFull | PdfFormType::XfaForeground)
        );
        Ok(DocInfo {
            page_count: self.page_count(),
            encrypted,
            pages: Vec::new(),
            signatures,
            has_acro_form: self.has_acro_form(),
            has_xfa,
        })
    }

    /// Page `index` (0-based) as displayed; [`Document::info`] has every page's, at the
    /// price of loading (and so parsing) each of them.
    pub fn page_info(&self, index: u32) -> Result<PageInfo> {
        Ok(page_info_of(&self.page(index)?))
    }

    /// Whether the document has an AcroForm (also true for XFA hybrids), as in
    /// [`DocInfo::has_acro_form`].
    pub fn has_acro_form(&self) -> bool {
        matches!(self.doc.form().map(|f| f.form_type()), Some(t) if t != PdfFormType::None)
    }
}

/// A loaded page as displayed.
pub(crate) fn page_info_of(page: &PdfPage) -> PageInfo {
    PageInfo {
        width: page.width().value,
        height: page.height().value,
        rotation: rotation_degrees(page),
    }
}

/// Clockwise display rotation of a page in degrees.
pub(crate) fn rotation_degrees(page: &PdfPage) -> u16 {
    match page.rotation() {
        Ok(PdfPageRenderRotation::Degrees90) => 90,
        Ok(PdfPageRenderRotation::Degrees180) => 180,
        Ok(PdfPageRenderRotation::Degrees270) => 270,
        _ => 0,
    }
}

/// The user-space → display transform of a page.
pub(crate) fn page_transform(page: &PdfPage) -> PageTransform {
    let rotation = rotation_degrees(page);
    match page.boundaries().bounding() {
        Ok(b) => PageTransform::new(
            b.bounds.left().value,
            b.bounds.bottom().value,
            b.bounds.right().value,
            b.bounds.top().value,
            rotation,
        ),
        // Without a bounding box fall back to a page anchored at the origin.
        Err(_) => {
            let (w, h) = if rotation % 180 == 90 {
                (page.height().value, page.width().value)
            } else {
                (page.width().value, page.height().value)
            };
            PageTransform::new(0.0, 0.0, w, h, rotation)
        }
    }
}

/// `/SubFilter` names of signature value dictionaries, in file order.
///
/// pdfium-render does not expose `FPDFSignatureObj_GetSubFilter`, so we read it from the
/// bytes: a signature dictionary is the only object that carries `/ByteRange`, and it is
/// always a plain indirect object (its `/Contents` must be excluded from the signed byte
/// range, so it cannot live in a compressed object stream). Names are never encrypted.
fn scan_sub_filters(bytes: &[u8]) -> Vec<String> {
    const WINDOW: usize = 1 << 20;
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = find(&bytes[from..], b"/ByteRange").map(|p| p + from) {
        let start = pos.saturating_sub(WINDOW);
        let obj_start = rfind(&bytes[start..pos], b"obj").map_or(start, |p| p + start);
        let end = (pos + WINDOW).min(bytes.len());
        let obj_end = find(&bytes[pos..end], b"endobj").map_or(end, |p| p + pos);
        let object = &bytes[obj_start..obj_end];
        if let Some(name) = find(object, b"/SubFilter").and_then(|p| read_name(&object[p + 10..])) {
            out.push(name);
        }
        from = obj_end.max(pos + 1);
    }
    out
}

/// The PDF name at the start of `s` (after optional whitespace), without its slash.
fn read_name(s: &[u8]) -> Option<String> {
    let s = &s[s.iter().position(|b| !b.is_ascii_whitespace())?..];
    let rest = s.strip_prefix(b"/")?;
    let len = rest
        .iter()
        .position(|b| b.is_ascii_whitespace() || b"/<>[]()%".contains(b))
        .unwrap_or(rest.len());
    (len > 0).then(|| String::from_utf8_lossy(&rest[..len]).into_owned())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

fn classify_open_error(err: PdfiumError) -> Error {
    match err {
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::PasswordError) => {
            Error::Encrypted
        }
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::SecurityError) => {
            Error::Unsupported("unsupported security handler".into())
        }
        PdfiumError::PdfiumLibraryInternalError(
            PdfiumInternalError::FormatError | PdfiumInternalError::FileError,
        ) => Error::Unsupported("the file is damaged or not a PDF".into()),
        other => Error::pdfium("opening the document", other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_filters_are_read_in_file_order() {
        let pdf =
            b"1 0 obj\n<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /adbe.pkcs7.detached\n\
            /ByteRange [0 10 20 30] /Contents <00> >>\nendobj\n\
            2 0 obj << /SubFilter/ETSI.RFC3161 /ByteRange [0 1 2 3] >> endobj";
        assert_eq!(
            scan_sub_filters(pdf),
            vec![
                "adbe.pkcs7.detached".to_string(),
                "ETSI.RFC3161".to_string()
            ]
        );
        assert!(scan_sub_filters(b"%PDF-1.7 nothing signed").is_empty());
    }
}
