//! Images under a redaction box: where the page draws its images (a walk of the content
//! streams with the graphics state's CTM, into Form XObjects), and the masking of the
//! covered pixels in a copy of each image (the page, or a copy of the form that draws it
//! made for this page, is pointed at the copy, so other users of a shared image keep
//! theirs). An inline image is masked and drawn as an image XObject instead.

use std::collections::{BTreeMap, HashMap};

use lopdf::{Dictionary, Document, Object, ObjectId, Stream};
use pdf_content::interp::matrix::{invert, multiply, transform_rect, Matrix, IDENTITY};
use pdf_content::{parse, Op, OpKind, StreamId};

use super::inline::inline_images;
use super::pixels::{mask_stream, PixelRect};
use super::Refusal;
use crate::model::PageModel;
use crate::plan::streams::{page_subdict_mut, resources};

/// Deepest form nesting followed when looking for images.
const MAX_DEPTH: usize = 12;

/// One image drawn by the page.
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    /// The image XObject; `None` for an inline image.
    pub image: Option<ObjectId>,
    /// Its /XObject resource name.
    pub name: Vec<u8>,
    /// CTM when drawn: maps the unit square onto the page (user space).
    pub ctm: Matrix,
    /// The Form XObjects that draw it, outermost first: (resource name, form object).
    pub forms: Vec<(Vec<u8>, ObjectId)>,
    /// An inline image's stream and op index.
    pub inline: Option<(StreamId, usize)>,
}

impl Placement {
    /// Box in user space.
    pub fn bbox(&self) -> [f64; 4] {
        transform_rect(&self.ctm, [0.0, 0.0, 1.0, 1.0])
    }
}

/// What one masked image became.
#[derive(Debug, Clone)]
pub(crate) struct Masked {
    /// Human description: resource name, object, pixel rectangles.
    pub location: String,
    /// Areas of the removed pixels, user space.
    pub areas_user: Vec<[f64; 4]>,
}

/// Every image the page draws (page content and forms it draws), in content order.
pub(crate) fn placements(doc: &Document, model: &PageModel) -> Vec<Placement> {
    let mut out = Vec::new();
    let page_res = resources(doc, model.page_id).cloned().unwrap_or_default();
    // Page streams share one graphics state (§7.8.2).
    let mut walker = Walker {
        doc,
        model,
        out: &mut out,
        stack: Vec::new(),
        ctm: IDENTITY,
        forms: Vec::new(),
    };
    for cs in &model.glyphs.streams {
        if let StreamId::PageContent { .. } = cs.id {
            walker.walk(&cs.ops, &page_res, Some(cs.id), 0);
        }
    }
    out
}

struct Walker<'a, 'o> {
    doc: &'a Document,
    model: &'a PageModel,
    out: &'o mut Vec<Placement>,
    stack: Vec<Matrix>,
    ctm: Matrix,
    forms: Vec<(Vec<u8>, ObjectId)>,
}

impl Walker<'_, '_> {
    fn walk(&mut self, ops: &[Op], res: &Dictionary, sid: Option<StreamId>, depth: usize) {
        for (i, op) in ops.iter().enumerate() {
            match &op.kind {
                OpKind::Save => self.stack.push(self.ctm),
                OpKind::Restore => self.ctm = self.stack.pop().unwrap_or(self.ctm),
                OpKind::Transform(m) => self.ctm = multiply(m, &self.ctm),
                OpKind::InlineImage { .. } => self.out.push(Placement {
                    image: None,
                    name: b"(inline)".to_vec(),
                    ctm: self.ctm,
                    forms: self.forms.clone(),
                    inline: sid.map(|sid| (sid, i)),
                }),
                OpKind::XObject(name) => self.xobject(name, res, depth),
                _ => {}
            }
        }
    }

    fn xobject(&mut self, name: &[u8], res: &Dictionary, depth: usize) {
        let doc = self.doc;
        let Some(id) = res
            .get(b"XObject")
            .ok()
            .and_then(|x| doc.dereference(x).ok())
            .and_then(|(_, x)| x.as_dict().ok())
            .and_then(|x| x.get(name).ok())
            .and_then(|o| o.as_reference().ok())
        else {
            return;
        };
        let Ok(stream) = doc.get_object(id).and_then(Object::as_stream) else {
            return;
        };
        match stream.dict.get(b"Subtype").and_then(Object::as_name) {
            Ok(b"Image") => self.out.push(Placement {
                image: Some(id),
                name: name.to_vec(),
                ctm: self.ctm,
                forms: self.forms.clone(),
                inline: None,
            }),
            Ok(b"Form") if depth < MAX_DEPTH => {
                let parsed;
                let ops = match self.model.glyphs.stream(StreamId::Form { object_id: id }) {
                    Some(cs) => &cs.ops,
                    None => {
                        let Ok(bytes) = stream.decompressed_content_with_limit(64 << 20) else {
                            return;
                        };
                        parsed = parse(&bytes);
                        &parsed
                    }
                };
                let matrix = stream
                    .dict
                    .get(b"Matrix")
                    .and_then(Object::as_array)
                    .ok()
                    .and_then(|a| {
                        let v: Vec<f64> = a
                            .iter()
                            .filter_map(|o| o.as_float().ok().map(f64::from))
                            .collect();
                        <[f64; 6]>::try_from(v).ok()
                    })
                    .unwrap_or(IDENTITY);
                let inner_res = stream
                    .dict
                    .get(b"Resources")
                    .ok()
                    .and_then(|r| doc.dereference(r).ok())
                    .and_then(|(_, r)| r.as_dict().ok())
                    .cloned()
                    .unwrap_or_else(|| res.clone());
                let saved = (self.ctm, self.stack.len());
                self.ctm = multiply(&matrix, &self.ctm);
                self.forms.push((name.to_vec(), id));
                self.walk(ops, &inner_res, None, depth + 1);
                self.forms.pop();
                self.ctm = saved.0;
                self.stack.truncate(saved.1);
            }
            _ => {}
        }
    }
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

/// The pixels of a `width`×`height` image drawn with `ctm` that `area` (user space)
/// touches, as a pixel rectangle (row 0 at the top of the image), or None.
pub(crate) fn pixel_rect(
    ctm: &Matrix,
    width: u32,
    height: u32,
    area: [f64; 4],
) -> Option<PixelRect> {
    let inv = invert(ctm)?;
    let unit = transform_rect(&inv, area);
    let u0 = unit[0].clamp(0.0, 1.0);
    let u1 = unit[2].clamp(0.0, 1.0);
    let v0 = unit[1].clamp(0.0, 1.0);
    let v1 = unit[3].clamp(0.0, 1.0);
    if u1 <= u0 || v1 <= v0 {
        return None;
    }
    let (w, h) = (f64::from(width), f64::from(height));
    Some(PixelRect {
        x0: (u0 * w).floor() as u32,
        x1: ((u1 * w).ceil() as u32).min(width),
        y0: ((1.0 - v1) * h).floor() as u32,
        y1: (((1.0 - v0) * h).ceil() as u32).min(height),
    })
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

pub(crate) fn dims(s: &Stream) -> Option<(u32, u32)> {
    let w = s.dict.get(b"Width").and_then(Object::as_i64).ok()?;
    let h = s.dict.get(b"Height").and_then(Object::as_i64).ok()?;
    (w > 0 && h > 0 && w <= 1 << 16 && h <= 1 << 16).then_some((w as u32, h as u32))
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
    let unsupported = |m: String| ("image_unsupported", m);
    // Per (forms, resource name): the image and the CTMs it is drawn with under a box.
    type Key = (Vec<(Vec<u8>, ObjectId)>, Vec<u8>);
    let mut hit: BTreeMap<Key, (ObjectId, Vec<Matrix>)> = BTreeMap::new();
    let mut inline = Vec::new();
    for p in placements.iter().filter(|p| covered(p, boxes)) {
        let Some(id) = p.image else {
            match p.inline {
                Some(at) if p.forms.is_empty() => {
                    inline.push((at, p.ctm));
                    continue;
                }
                _ => {
                    return Err(unsupported(
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

/// Points resource `name` of the innermost of `forms` (of the page when there are none)
/// at `target`. A form is changed in a copy made for this page (once per form), and the
/// copy is pointed at by its parent in the same way, up to the page.
pub(crate) fn set_xobject(
    doc: &mut Document,
    page_id: ObjectId,
    forms: &[(Vec<u8>, ObjectId)],
    name: &[u8],
    target: ObjectId,
    copies: &mut HashMap<ObjectId, ObjectId>,
) -> Result<(), String> {
    let Some(((form_name, form_id), outer)) = forms.split_last() else {
        let xobjects = page_subdict_mut(doc, page_id, b"XObject")?;
        xobjects.set(name.to_vec(), Object::Reference(target));
        return Ok(());
    };
    // The text part may already have copied a form the page draws directly: that copy
    // is this page's own and is changed in place.
    if outer.is_empty() && !copies.contains_key(form_id) {
        let current = resources(doc, page_id)
            .and_then(|r| r.get(b"XObject").ok())
            .and_then(|x| doc.dereference(x).ok())
            .and_then(|(_, x)| x.as_dict().ok())
            .and_then(|x| x.get(form_name).ok())
            .and_then(|o| o.as_reference().ok());
        if let Some(c) = current.filter(|c| c != form_id) {
            copies.insert(*form_id, c);
            own_xobjects(doc, c)?;
        }
    }
    let copy_id = match copies.get(form_id) {
        Some(&c) => c,
        None => {
            let form = doc
                .get_object(*form_id)
                .and_then(Object::as_stream)
                .map_err(|e| e.to_string())?
                .clone();
            let c = doc.add_object(form);
            own_xobjects(doc, c)?;
            copies.insert(*form_id, c);
            set_xobject(doc, page_id, outer, form_name, c, copies)?;
            c
        }
    };
    doc.get_object_mut(copy_id)
        .and_then(Object::as_stream_mut)
        .ok()
        .and_then(|f| f.dict.get_mut(b"Resources").ok())
        .and_then(|r| r.as_dict_mut().ok())
        .and_then(|r| r.get_mut(b"XObject").ok())
        .and_then(|x| x.as_dict_mut().ok())
        .ok_or("the copied form has no /XObject resources")?
        .set(name.to_vec(), Object::Reference(target));
    Ok(())
}

/// Makes the /Resources and /XObject of form `id` direct dictionaries of its own.
fn own_xobjects(doc: &mut Document, id: ObjectId) -> Result<(), String> {
    let form = doc
        .get_object(id)
        .and_then(Object::as_stream)
        .map_err(|e| e.to_string())?;
    let mut res = form
        .dict
        .get(b"Resources")
        .ok()
        .and_then(|r| doc.dereference(r).ok())
        .and_then(|(_, r)| r.as_dict().ok().cloned())
        .ok_or("the form has no resources of its own")?;
    let xobjects = res
        .get(b"XObject")
        .ok()
        .and_then(|x| doc.dereference(x).ok())
        .and_then(|(_, x)| x.as_dict().ok().cloned())
        .unwrap_or_default();
    res.set("XObject", Object::Dictionary(xobjects));
    doc.get_object_mut(id)
        .and_then(Object::as_stream_mut)
        .map_err(|e| e.to_string())?
        .dict
        .set("Resources", Object::Dictionary(res));
    Ok(())
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
