//! Verification: the page rendered before and after an edit, compared outside the change.

use pdf_render::diff::{diff, DiffReport};
use pdf_render::raster::{crop_png, rasterize_page, Raster, VERIFY_PX_PER_PT};

use crate::{Error, Result};

/// Pixels added around every change area before comparing (glyph edges, rounding).
pub(crate) const DILATE_PX: u32 = 3;
/// Margin around a change in its preview crops, in points.
const PREVIEW_MARGIN_PT: f64 = 6.0;
/// Byte budget of one preview crop (the API's preview limit).
const PREVIEW_MAX_BYTES: usize = 200_000;

/// Renders 1-based `page` of `bytes` for verification.
pub(crate) fn render(bytes: &[u8], page: u32) -> Result<Raster> {
    Ok(rasterize_page(
        bytes,
        None,
        page.saturating_sub(1),
        VERIFY_PX_PER_PT,
    )?)
}

/// Compares two renders of a page outside `areas` (top-left points).
pub(crate) fn compare(before: &Raster, after: &Raster, areas: &[[f64; 4]]) -> Result<DiffReport> {
    if before.width != after.width || before.height != after.height {
        // The page itself changed size: everything counts as collateral.
        return Ok(DiffReport {
            changed_pixels_outside: u64::from(after.width) * u64::from(after.height),
            changed_pixels_total: u64::from(after.width) * u64::from(after.height),
            bbox_of_changes: None,
        });
    }
    diff(before, after, areas, DILATE_PX).map_err(|e| Error::Engine(e.to_string()))
}

/// Before and after PNG crops of one change area.
pub(crate) fn previews(before: &Raster, after: &Raster, area: [f64; 4]) -> (Vec<u8>, Vec<u8>) {
    let m = PREVIEW_MARGIN_PT;
    let b = [area[0] - m, area[1] - m, area[2] + m, area[3] + m];
    let crop = |r: &Raster| crop_png(r, b, PREVIEW_MAX_BYTES).unwrap_or_default();
    (crop(before), crop(after))
}

/// Renders 1-based `page` exactly as verification does (same resolution, pixels copied
/// out), and returns the raster's size. Benchmarks time two of these as the floor an
/// edit's before-and-after check compares with.
pub fn bare_render(bytes: &[u8], password: Option<&str>, page: u32) -> Result<(u32, u32)> {
    if page == 0 {
        return Err(Error::InvalidRequest("pages are 1-based".into()));
    }
    let r = rasterize_page(bytes, password, page - 1, VERIFY_PX_PER_PT)?;
    Ok((r.width, r.height))
}
