//! Where a page draws its images: a walk of the content streams with the graphics
//! state's CTM, into Form XObjects; the pixels of an image that a user-space area covers;
//! and pointing the page (or a copy, made for this page, of each form on the way) at a
//! changed copy of an image, so other users of a shared image keep theirs.

use std::collections::HashMap;

use lopdf::{Dictionary, Document, Object, ObjectId, Stream};
use pdf_content::interp::matrix::{invert, multiply, transform_rect, Matrix, IDENTITY};
use pdf_content::{parse, Op, OpKind, StreamId};

use super::samples::PixelRect;
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

/// Width and height of image `s` (each at most 65,536).
pub(crate) fn dims(s: &Stream) -> Option<(u32, u32)> {
    let w = s.dict.get(b"Width").and_then(Object::as_i64).ok()?;
    let h = s.dict.get(b"Height").and_then(Object::as_i64).ok()?;
    (w > 0 && h > 0 && w <= 1 << 16 && h <= 1 << 16).then_some((w as u32, h as u32))
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
