//! Images under a redaction box: the covered pixels of each image the page draws there
//! (see [`crate::image::placements`]) are masked in a copy of the image, which the page
//! (or a copy of the form that draws it, made for this page) is pointed at. An inline
//! image is masked and drawn as an image XObject instead.

use std::collections::{BTreeMap, HashMap};

use lopdf::{Document, Object, ObjectId};
use pdf_content::interp::matrix::{transform_rect, Matrix};
use pdf_content::StreamId;

use super::inline::inline_images;
use super::Refusal;
use crate::image::placements::{dims, pixel_rect, set_xobject, Placement};
use crate::image::samples::{mask_stream, PixelRect};
use crate::model::PageModel;
use crate::types::FailReason;

/// What one masked image became.
#[derive(Debug, Clone)]
pub(crate) struct Masked {
    /// Human description: resource name, object, pixel rectangles.
    pub location: String,
    /// Areas of the removed pixels, user space.
    pub areas_user: Vec<[f64; 4]>,
}

fn overlap(a: [f64; 4], b: [f64; 4]) -> Option<[f64; 4]> {
    let o = [
        a[0].max(b[0]),
        a[1].max(b[1]),
        a[2].min(b[2]),
        a[3].min(b[3]),
    ];
    (o[2] - o[0] > 1e-3 && o[3] - o[1] > 1e-3).then_some(o)
}

/// Whether any of `boxes` covers part of a placement.
pub(crate) fn covered(p: &Placement, boxes: &[[f64; 4]]) -> bool {
    boxes.iter().any(|b| overlap(p.bbox(), *b).is_some())
}

/// Whether one pixel of the image is as tall or as wide as the box's text: such an image
/// (a 1×1 colour stretched over the page, a gradient strip) cannot show the redacted
/// glyphs, and zeroing its pixel would blank far more than the box.
fn too_coarse(ctm: &Matrix, width: u32, height: u32, b: [f64; 4]) -> bool {
    let text = (b[2] - b[0]).abs().min((b[3] - b[1]).abs());
    let px_w = ctm[0].hypot(ctm[1]) / f64::from(width);
    let px_h = ctm[2].hypot(ctm[3]) / f64::from(height);
    px_w >= text || px_h >= text
}

/// The user-space area of a pixel rectangle of an image drawn with `ctm`.
fn rect_area(ctm: &Matrix, width: u32, height: u32, r: PixelRect) -> [f64; 4] {
    let (w, h) = (f64::from(width), f64::from(height));
    transform_rect(
        ctm,
        [
            f64::from(r.x0) / w,
            1.0 - f64::from(r.y1) / h,
            f64::from(r.x1) / w,
            1.0 - f64::from(r.y0) / h,
        ],
    )
}

/// An image XObject as the page reaches it: the forms on the way and its resource name.
type Key = (Vec<(Vec<u8>, ObjectId)>, Vec<u8>);

/// An inline image (its stream and op) and the CTM it is drawn with.
type Inline = ((StreamId, usize), Matrix);

/// Per image XObject: its object and the CTMs it is drawn with under the boxes.
type Hits = BTreeMap<Key, (ObjectId, Vec<Matrix>)>;

/// The images drawn under `boxes`: per image XObject (by the forms and name it is reached
/// by) its object and the CTMs it is drawn with there, and the inline images of the page's
/// own content; refused for an inline image inside a form.
fn images_under(
    placements: &[Placement],
    boxes: &[[f64; 4]],
) -> Result<(Hits, Vec<Inline>), Refusal> {
    let mut hit: Hits = BTreeMap::new();
    let mut inline = Vec::new();
    for p in placements.iter().filter(|p| covered(p, boxes)) {
        let Some(id) = p.image else {
            match p.inline {
                Some(at) if p.forms.is_empty() => {
                    inline.push((at, p.ctm));
                    continue;
                }
                _ => {
                    return Err((
                        FailReason::ImageUnsupported,
                        "an inline image inside a form lies under the redaction; \
                         it is not masked yet"
                            .into(),
                    ))
                }
            }
        };
        hit.entry((p.forms.clone(), p.name.clone()))
            .or_insert((id, Vec::new()))
            .1
            .push(p.ctm);
    }
    Ok((hit, inline))
}

/// Masks the pixels under `boxes` in every image the page draws there. A part that
/// cannot be done refuses the whole redaction (fail closed).
///
/// `written` holds the decoded content of page streams the text part already rewrote;
/// an inline image under a box becomes a masked image XObject drawn in its place.
pub(crate) fn mask_under(
    doc: &mut Document,
    model: &PageModel,
    placements: &[Placement],
    boxes: &[[f64; 4]],
    written: &[(StreamId, Vec<u8>)],
) -> Result<Vec<Masked>, Refusal> {
    let page_id = model.page_id;
    let unsupported = |m: String| (FailReason::ImageUnsupported, m);
    let (hit, inline) = images_under(placements, boxes)?;
    // Forms copied for this page (original → copy): other users keep the original.
    let mut copies: HashMap<ObjectId, ObjectId> = HashMap::new();
    let mut out = inline_images(doc, model, &inline, boxes, written)?;
    for ((forms, name), (id, ctms)) in hit {
        let original = doc
            .get_object(id)
            .and_then(Object::as_stream)
            .map_err(|e| unsupported(e.to_string()))?
            .clone();
        let (w, h) = dims(&original)
            .ok_or_else(|| unsupported(format!("image {} {} has no usable size", id.0, id.1)))?;
        let (rects, mut areas) = rects_under(&ctms, w, h, boxes);
        let mut copy = if rects.is_empty() {
            original.clone()
        } else {
            mask_stream(doc, &original, &rects)
                .map_err(|m| unsupported(format!("image {} {}: {m}", id.0, id.1)))?
        };
        let mut parts = Vec::new();
        if !rects.is_empty() {
            parts.push(format!("{w}x{h} px, pixels {}", describe(&rects)));
        }
        // The soft mask and an explicit stencil mask carry shapes of their own (in an
        // MRC scan the text is a 1×1 colour through a fine mask): masked at their own
        // resolution.
        for key in [b"SMask".as_slice(), b"Mask".as_slice()] {
            let Ok(mask_id) = original.dict.get(key).and_then(Object::as_reference) else {
                continue;
            };
            let Ok(mask) = doc.get_object(mask_id).and_then(Object::as_stream).cloned() else {
                continue;
            };
            let Some((mw, mh)) = dims(&mask) else {
                continue;
            };
            let (mrects, mareas) = rects_under(&ctms, mw, mh, boxes);
            if mrects.is_empty() {
                continue;
            }
            let masked = mask_stream(doc, &mask, &mrects).map_err(|m| {
                unsupported(format!(
                    "mask {} {} of image {} {}: {m}",
                    mask_id.0, mask_id.1, id.0, id.1
                ))
            })?;
            let new_mask = doc.add_object(masked);
            copy.dict.set(key.to_vec(), Object::Reference(new_mask));
            areas.extend(mareas);
            parts.push(format!(
                "/{} {}x{mh} px, pixels {}",
                String::from_utf8_lossy(key),
                mw,
                describe(&mrects)
            ));
        }
        if parts.is_empty() {
            continue;
        }
        let new_id = doc.add_object(copy);
        set_xobject(doc, page_id, &forms, &name, new_id, &mut copies).map_err(unsupported)?;
        let path: String = forms
            .iter()
            .map(|(n, f)| {
                format!(
                    "form /{} (object {} {}) > ",
                    String::from_utf8_lossy(n),
                    f.0,
                    f.1
                )
            })
            .collect();
        out.push(Masked {
            location: format!(
                "{path}image /{} (object {} {}): {}",
                String::from_utf8_lossy(&name),
                id.0,
                id.1,
                parts.join("; ")
            ),
            areas_user: areas,
        });
    }
    Ok(out)
}

/// The pixel rectangles of a `w`×`h` image (drawn with each of `ctms`) under `boxes`,
/// and their user-space areas; none where the image is too coarse to show the text.
pub(super) fn rects_under(
    ctms: &[Matrix],
    w: u32,
    h: u32,
    boxes: &[[f64; 4]],
) -> (Vec<PixelRect>, Vec<[f64; 4]>) {
    let mut rects = Vec::new();
    let mut areas = Vec::new();
    for ctm in ctms {
        for b in boxes {
            if too_coarse(ctm, w, h, *b) {
                continue;
            }
            if let Some(r) = pixel_rect(ctm, w, h, *b) {
                rects.push(r);
                areas.push(rect_area(ctm, w, h, r));
            }
        }
    }
    (rects, areas)
}

pub(super) fn describe(rects: &[PixelRect]) -> String {
    rects
        .iter()
        .map(|r| format!("{},{}-{},{}", r.x0, r.y0, r.x1, r.y1))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_rect_maps_user_space_to_rows_from_the_top() {
        // A 100x50 image drawn 200x100 pt at (100, 100).
        let ctm = [200.0, 0.0, 0.0, 100.0, 100.0, 100.0];
        let r = pixel_rect(&ctm, 100, 50, [100.0, 180.0, 120.0, 200.0]).unwrap();
        assert_eq!((r.x0, r.x1, r.y0, r.y1), (0, 10, 0, 10));
        let a = rect_area(&ctm, 100, 50, r);
        assert_eq!(a, [100.0, 180.0, 120.0, 200.0]);
        assert!(pixel_rect(&ctm, 100, 50, [0.0, 0.0, 50.0, 50.0]).is_none());
    }

    #[test]
    fn partial_pixels_are_included() {
        let ctm = [10.0, 0.0, 0.0, 10.0, 0.0, 0.0];
        let r = pixel_rect(&ctm, 10, 10, [2.5, 2.5, 3.5, 3.5]).unwrap();
        assert_eq!((r.x0, r.x1, r.y0, r.y1), (2, 4, 6, 8));
    }
}
