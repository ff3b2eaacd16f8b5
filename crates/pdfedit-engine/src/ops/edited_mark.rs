//! The 'Edited' mark of SPEC rule 12: whether an output gets it, on which pages, and the
//! rendering check that keeps it off the page's content.
//!
//! `options.watermark` `auto` marks a flagged document and never an ordinary one, `on`
//! marks any document, `off` marks none but is refused on a flagged document unless the
//! service says the caller may (a Growth or Scale account that accepted the
//! document-integrity terms). The mark goes on every page an edit changed, except pages
//! only a redaction changed: a redaction is never marked (rule 8). It is drawn like the
//! SAMPLE mark (small grey Helvetica text that extracts as "Edited"), in the first place
//! along the page edges where no glyph lies and the render of the page shows nothing.

use std::collections::{BTreeSet, HashMap};

use lopdf::ObjectId;
use pdf_render::raster::{rasterize_page, Raster};

use crate::types::{EditOp, EditResult, Watermark};

/// The mark's text.
pub(crate) const TEXT: &str = "Edited";

/// Resolution of the check render, pixels per point: fine enough to see a hairline.
const CHECK_PX_PER_PT: f32 = 2.0;
/// Darkest channel value that still counts as the empty (white) page: a fill of any colour
/// (a band, a background picture) is content the mark must not cover.
const EMPTY_MIN: u8 = 250;

/// `options.watermark` `off` on a flagged document by a caller who may not send it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OffRefused;

/// Whether the output is marked: the request's `watermark`, whether the document is
/// flagged, whether the caller may turn the mark off.
pub(crate) fn decide(
    watermark: Watermark,
    flagged: bool,
    off_allowed: bool,
) -> Result<bool, OffRefused> {
    match watermark {
        Watermark::Auto => Ok(flagged),
        Watermark::On => Ok(true),
        Watermark::Off if flagged && !off_allowed => Err(OffRefused),
        Watermark::Off => Ok(false),
    }
}

/// 1-based pages changed by an edit other than a redaction, in order.
pub(crate) fn pages(result: &EditResult) -> Vec<u32> {
    result
        .changes
        .iter()
        .filter(|c| c.op != EditOp::Redact)
        .map(|c| c.page)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Answers whether a box of a page shows nothing, from renders of the output as it is
/// before the mark: the verification render an edit left for the page when there is one
/// (it shows the page as it is now), else a render of `bytes` made once per page, on
/// first need.
pub(crate) struct BlankCheck<'a> {
    bytes: Option<&'a [u8]>,
    numbers: HashMap<ObjectId, u32>,
    renders: HashMap<u32, Option<Raster>>,
}

impl<'a> BlankCheck<'a> {
    /// `bytes`: the unencrypted output before the mark (`None` when every page to check
    /// has a render in `known`); `numbers`: page object to 1-based page number; `known`:
    /// renders of pages as they are now, by 1-based page number.
    pub(crate) fn new(
        bytes: Option<&'a [u8]>,
        numbers: HashMap<ObjectId, u32>,
        known: HashMap<u32, Raster>,
    ) -> Self {
        BlankCheck {
            bytes,
            numbers,
            renders: known.into_iter().map(|(n, r)| (n, Some(r))).collect(),
        }
    }

    /// Whether `bbox` (displayed, top-left points) of the page renders as empty paper. A
    /// page that does not render counts as not blank.
    pub(crate) fn is_blank(&mut self, page_id: ObjectId, bbox: [f64; 4]) -> bool {
        let Some(&number) = self.numbers.get(&page_id) else {
            return false;
        };
        let bytes = self.bytes;
        let raster = self.renders.entry(number).or_insert_with(|| {
            bytes.and_then(|b| {
                rasterize_page(b, None, number.saturating_sub(1), CHECK_PX_PER_PT).ok()
            })
        });
        raster.as_ref().is_some_and(|r| empty(r, bbox))
    }
}

/// Whether the raster's pixels inside `bbox` (top-left points) are all white (within
/// [`EMPTY_MIN`]); a box reaching outside the raster is not.
fn empty(r: &Raster, bbox: [f64; 4]) -> bool {
    let s = f64::from(r.px_per_pt);
    let (x0, y0) = ((bbox[0] * s).floor(), (bbox[1] * s).floor());
    let (x1, y1) = ((bbox[2] * s).ceil(), (bbox[3] * s).ceil());
    if x0 < 0.0 || y0 < 0.0 || x1 > f64::from(r.width) || y1 > f64::from(r.height) {
        return false;
    }
    let (x0, y0, x1, y1) = (x0 as usize, y0 as usize, x1 as usize, y1 as usize);
    let width = r.width as usize;
    (y0..y1).all(|y| {
        r.pixels[(y * width + x0) * 3..(y * width + x1) * 3]
            .iter()
            .all(|&v| v >= EMPTY_MIN)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Change;

    #[test]
    fn the_decision_of_rule_12() {
        use Watermark::*;
        for allowed in [false, true] {
            assert_eq!(decide(Auto, false, allowed), Ok(false));
            assert_eq!(decide(Auto, true, allowed), Ok(true));
            assert_eq!(decide(On, false, allowed), Ok(true));
            assert_eq!(decide(On, true, allowed), Ok(true));
            assert_eq!(decide(Off, false, allowed), Ok(false));
        }
        assert_eq!(decide(Off, true, false), Err(OffRefused));
        assert_eq!(decide(Off, true, true), Ok(false));
    }

    fn change(page: u32, op: EditOp) -> Change {
        Change {
            edit_index: 0,
            page,
            op,
            find: String::new(),
            replace: String::new(),
            font_source: "none",
            font_used: String::new(),
            verified: true,
            collateral_pixels: 0,
            bbox: [0.0; 4],
            before_png: Vec::new(),
            after_png: Vec::new(),
            field: None,
            value: None,
            alignment: None,
        }
    }

    #[test]
    fn redacted_pages_are_not_marked() {
        let result = EditResult {
            changes: vec![
                change(3, EditOp::Replace),
                change(1, EditOp::Redact),
                change(3, EditOp::Delete),
                change(2, EditOp::Insert),
            ],
            ..EditResult::default()
        };
        assert_eq!(pages(&result), vec![2, 3]);
    }

    #[test]
    fn empty_boxes() {
        let mut r = Raster {
            width: 20,
            height: 10,
            px_per_pt: 1.0,
            pixels: vec![255; 20 * 10 * 3],
        };
        assert!(empty(&r, [1.0, 1.0, 10.0, 9.0]));
        assert!(!empty(&r, [15.0, 1.0, 21.0, 9.0]), "outside the raster");
        let at = (5 * 20 + 5) * 3;
        r.pixels[at..at + 3].copy_from_slice(&[0, 0, 0]);
        assert!(!empty(&r, [1.0, 1.0, 10.0, 9.0]));
        assert!(empty(&r, [10.0, 1.0, 19.0, 9.0]));
        // A flat fill of any colour is content.
        r.pixels.iter_mut().for_each(|v| *v = 200);
        assert!(!empty(&r, [10.0, 1.0, 19.0, 9.0]));
    }
}
