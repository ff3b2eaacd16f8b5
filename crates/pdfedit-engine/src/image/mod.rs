//! Images of a page as pixels, shared by the operations that change them (redaction
//! masks pixels under its boxes, the raster replace of a scanned word draws into them):
//! where the page draws each image ([`placements`]), which pixels a user-space area
//! covers, and an image's samples decoded, changed and written back ([`samples`]).

mod decoders;
mod fax_g3;
mod jpx_pdfium;
pub(crate) mod placements;
pub(crate) mod samples;
