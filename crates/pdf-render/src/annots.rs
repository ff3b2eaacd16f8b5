//! Text drawn by annotation appearance streams (free text, stamps, signature appearances,
//! filled form widgets): visible text of the page that is not in its content stream.
//!
//! PDFium has no text API for appearance streams, but it can flatten a page: the
//! appearances of its visible, printable annotations become form XObjects drawn after the
//! original content. Flattening a page of a scratch copy of the document (opened from the
//! same bytes, never saved) and reading that page's text gives the content characters
//! first, in the same order, then the annotations' characters. Only the characters past
//! the original content are kept, so the content's own character indices (and the span ids
//! built from them) never depend on the annotations.

use pdfium_render::prelude::*;

use crate::chars::{chars_of, RawChar};
use crate::document::{page_transform, Document};
use crate::{Error, Result};

impl Document<'_> {
    /// Whether page `index` has an annotation that may draw text: anything but links and
    /// popups (a popup only shows its parent's note in a viewer's window).
    pub fn has_text_annotations(&self, index: u32) -> Result<bool> {
        let page = self.page(index)?;
        let found = page.annotations().iter().any(|a| {
            !matches!(
                a.annotation_type(),
                PdfPageAnnotationType::Link | PdfPageAnnotationType::Popup
            )
        });
        Ok(found)
    }

    /// The characters that page `index` gains when its annotations are flattened, given
    /// the page's own `content` characters (from [`Document::page_chars`] on an unflattened
    /// copy). **Flattens the page in this document**: call it on a scratch copy only.
    ///
    /// Indices of the returned characters continue after the content's. Empty when the
    /// flattened page does not start with the content unchanged (then we cannot tell which
    /// characters are new, and showing nothing beats showing the content twice).
    pub fn flattened_annotation_chars(
        &self,
        index: u32,
        content: &[RawChar],
    ) -> Result<Vec<RawChar>> {
        let mut page = self.page(index)?;
        // The transform of the page as displayed, before flattening touches its boxes.
        let transform = page_transform(&page);
        // pdfium-render's `flatten` (without the crate's `flatten` feature) is PDFium's own
        // FPDFPage_Flatten with FLAT_PRINT, which keeps only annotations flagged Print.
        // What a reader sees is every annotation that is not hidden (pdftotext prints
        // those too), so in this scratch copy the Print flag follows visibility; links and
        // popups never draw page text. A push button's appearance draws its caption
        // ("Submit", "Clear Data"), which readers see and pdftotext prints.
        for mut annot in page.annotations().iter() {
            let drawn = !annot.is_hidden()
                && !matches!(
                    annot.annotation_type(),
                    PdfPageAnnotationType::Link | PdfPageAnnotationType::Popup
                );
            if annot.is_printed() != drawn {
                annot
                    .set_is_printed(drawn)
                    .map_err(|e| Error::pdfium("preparing annotations", e))?;
            }
        }
        page.flatten()
            .map_err(|e| Error::pdfium("flattening annotations", e))?;
        let all = chars_of(&page, &transform)?;
        if all.len() < content.len() {
            return Ok(Vec::new());
        }
        let same_prefix = all.iter().zip(content).all(|(a, b)| a.ch == b.ch);
        if !same_prefix {
            return Ok(Vec::new());
        }
        Ok(all.into_iter().skip(content.len()).collect())
    }
}
