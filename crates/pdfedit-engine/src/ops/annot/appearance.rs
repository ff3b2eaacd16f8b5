//! A FreeText annotation's normal appearance, opened as the page machinery reads a page.
//!
//! The appearance stream (a Form XObject) is copied, and a scratch page object is added
//! whose /Contents is that copy, whose /Resources are the form's and whose MediaBox is the
//! annotation's text box in form space (the /Rect less /RD, mapped back through the form's
//! matrix). The page interpreter, `find`, and `replace::plan_page` (own subset, metric twin,
//! look-alike; fitting against the box's edge) then work on it unchanged, and writing the
//! planned bytes edits the copy. The scratch page is never part of the page tree and is
//! removed again before anything is saved.

use lopdf::{Dictionary, Document, Object, ObjectId, Stream};
use pdf_content::interp::matrix::{invert, multiply, transform_rect, Matrix, IDENTITY};

use crate::model::fonts::{DocFonts, Source};
use crate::model::text::{build_lines, PageGeom};
use crate::model::PageModel;

/// A FreeText annotation on a page of the document.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// 1-based page.
    pub page: u32,
    /// The page object.
    pub page_id: ObjectId,
    /// The annotation dictionary.
    pub annot_id: ObjectId,
    /// For a widget: the field it shows.
    pub field: Option<super::widgets::WidgetField>,
}

/// An opened appearance.
pub(crate) struct View {
    /// The annotation.
    pub cand: Candidate,
    /// The scratch page drawing the copy.
    pub scratch_page: ObjectId,
    /// The appearance as it was.
    pub original_ap: ObjectId,
    /// The copy that edits go into.
    pub copy: ObjectId,
    /// Form space to the page's user space.
    pub to_page: Matrix,
    /// The annotation's /Rect (page user space).
    pub rect: [f64; 4],
    /// The text box in form space (the scratch page's MediaBox).
    pub text_box: [f64; 4],
    /// The appearance read as a page.
    pub model: PageModel,
    /// Set when the appearance was generated from /DA to find in ([`super::regen`]).
    pub generated: Option<super::regen::Generated>,
}

pub(super) fn numbers(doc: &Document, o: &Object) -> Vec<f64> {
    let Ok((_, Object::Array(a))) = doc.dereference(o) else {
        return Vec::new();
    };
    a.iter()
        .filter_map(|v| pdf_fonts::obj::num_of(doc, v))
        .collect()
}

pub(super) fn rect_of(v: &[f64]) -> Option<[f64; 4]> {
    (v.len() == 4).then(|| {
        [
            v[0].min(v[2]),
            v[1].min(v[3]),
            v[0].max(v[2]),
            v[1].max(v[3]),
        ]
    })
}

/// The normal appearance stream of an annotation: None when /AP /N is missing, a
/// dictionary of states, or not an indirect stream.
pub(super) fn normal_appearance(doc: &Document, annot: &Dictionary) -> Option<ObjectId> {
    let ap = doc
        .dereference(annot.get(b"AP").ok()?)
        .ok()?
        .1
        .as_dict()
        .ok()?;
    let id = ap.get(b"N").ok()?.as_reference().ok()?;
    doc.get_object(id).ok()?.as_stream().ok()?;
    Some(id)
}

/// Opens `cand`'s appearance for editing (adds the copy and the scratch page to `doc`);
/// None when the annotation has no usable appearance stream.
pub(crate) fn open(doc: &mut Document, fonts: &mut DocFonts, cand: Candidate) -> Option<View> {
    let annot = doc.get_dictionary(cand.annot_id).ok()?;
    let rect = rect_of(&numbers(doc, annot.get(b"Rect").ok()?))?;
    let rd = annot
        .get(b"RD")
        .map(|o| numbers(doc, o))
        .unwrap_or_default();
    let original_ap = normal_appearance(doc, annot)?;
    let stream = doc.get_object(original_ap).ok()?.as_stream().ok()?;
    let bbox = rect_of(&numbers(doc, stream.dict.get(b"BBox").ok()?))?;
    let matrix: Matrix = stream
        .dict
        .get(b"Matrix")
        .map(|o| numbers(doc, o))
        .ok()
        .and_then(|v| <[f64; 6]>::try_from(v).ok())
        .unwrap_or(IDENTITY);
    // §12.5.5: the form's bbox, mapped by its matrix, is fitted to /Rect by `a`.
    let tb = transform_rect(&matrix, bbox);
    let (w, h) = (tb[2] - tb[0], tb[3] - tb[1]);
    if w <= 1e-6 || h <= 1e-6 {
        return None;
    }
    let (sx, sy) = ((rect[2] - rect[0]) / w, (rect[3] - rect[1]) / h);
    let a = [sx, 0.0, 0.0, sy, rect[0] - tb[0] * sx, rect[1] - tb[1] * sy];
    let to_page = multiply(&matrix, &a);
    // /RD: the inner box the text is laid out in (left, bottom, right, top insets).
    let inner = match rd.as_slice() {
        [l, b, r, t] if l + r < rect[2] - rect[0] && b + t < rect[3] - rect[1] => [
            rect[0] + l.max(0.0),
            rect[1] + b.max(0.0),
            rect[2] - r.max(0.0),
            rect[3] - t.max(0.0),
        ],
        _ => rect,
    };
    let text_box = transform_rect(&invert(&to_page)?, inner);
    let resources = stream
        .dict
        .get(b"Resources")
        .ok()
        .and_then(|r| doc.dereference(r).ok())
        .and_then(|(_, r)| r.as_dict().ok().cloned())
        .unwrap_or_default();
    let copy = Stream::new(stream.dict.clone(), stream.content.clone());
    let copy = doc.add_object(copy);
    let media_box = Object::Array(text_box.iter().map(|v| Object::Real(*v as f32)).collect());
    let scratch_page = crate::model::drawn::scratch_page(doc, copy, resources, media_box);
    let model = read_model(doc, fonts, cand.page, scratch_page);
    let Some(model) = model else {
        close(doc, scratch_page, copy);
        return None;
    };
    Some(View {
        cand,
        scratch_page,
        original_ap,
        copy,
        to_page,
        rect,
        text_box,
        model,
        generated: None,
    })
}

/// The scratch page read as the page machinery reads a page.
pub(crate) fn read_model(
    doc: &Document,
    fonts: &mut DocFonts,
    number: u32,
    page_id: ObjectId,
) -> Option<PageModel> {
    let mut source = Source { doc, fonts };
    let glyphs = pdf_content::interpret_page(doc, page_id, &mut source).ok()?;
    let lines = build_lines(&glyphs.glyphs);
    let geom = PageGeom::read(doc, page_id);
    Some(PageModel {
        number,
        page_id,
        glyphs,
        lines,
        geom,
    })
}

/// Removes the scratch page and, when it was not used, the copy.
pub(crate) fn close(doc: &mut Document, scratch_page: ObjectId, copy: ObjectId) {
    doc.objects.remove(&scratch_page);
    doc.objects.remove(&copy);
}

/// Whether the appearance of the edited copy still keeps its visible text inside the text
/// box (or no further out than the text it replaced already reached), with a small
/// tolerance for rounding.
pub(crate) fn text_stays_inside(doc: &Document, fonts: &mut DocFonts, view: &View) -> bool {
    const TOL: f64 = 0.75;
    let visible = |m: &PageModel| -> Option<[f64; 4]> {
        m.glyphs
            .glyphs
            .iter()
            .filter(|g| g.render_mode != 3)
            .filter(|g| g.unicode.as_deref().is_some_and(|u| !u.trim().is_empty()))
            .map(|g| g.bbox)
            .reduce(|a, b| {
                [
                    a[0].min(b[0]),
                    a[1].min(b[1]),
                    a[2].max(b[2]),
                    a[3].max(b[3]),
                ]
            })
    };
    let Some(after) = read_model(doc, fonts, view.cand.page, view.scratch_page) else {
        return false;
    };
    let Some(new) = visible(&after) else {
        return true;
    };
    let b = view.text_box;
    let old = visible(&view.model).unwrap_or(b);
    // Only the extent along the line is checked: vertical boxes follow the font's
    // ascent and descent, which producers often draw past the box already.
    new[0] >= b[0].min(old[0]) - TOL && new[2] <= b[2].max(old[2]) + TOL
}

/// Makes the edited copy the annotation's normal appearance: the scratch page's resources
/// (new fonts) go into the copy, /AP /N points at it, and the down and rollover
/// appearances, which still show the old text, are dropped (viewers fall back to /N).
/// The scratch page goes; the original appearance goes too when nothing else uses it.
pub(crate) fn commit(doc: &mut Document, view: &View) -> Result<(), String> {
    let resources = doc
        .get_dictionary(view.scratch_page)
        .map_err(|e| e.to_string())?
        .get(b"Resources")
        .ok()
        .cloned();
    let copy = doc
        .get_object_mut(view.copy)
        .and_then(Object::as_stream_mut)
        .map_err(|e| e.to_string())?;
    if let Some(r) = resources {
        copy.dict.set("Resources", r);
    }
    doc.objects.remove(&view.scratch_page);
    let annot = doc
        .get_object_mut(view.cand.annot_id)
        .and_then(Object::as_dict_mut)
        .map_err(|e| e.to_string())?;
    let mut ap = Dictionary::new();
    ap.set("N", Object::Reference(view.copy));
    annot.set("AP", Object::Dictionary(ap));
    if !referenced(doc, view.original_ap) {
        doc.objects.remove(&view.original_ap);
    }
    Ok(())
}

/// Whether any object of `doc` (or its trailer) refers to `id`.
pub(super) fn referenced(doc: &Document, id: ObjectId) -> bool {
    fn walk(o: &Object, id: ObjectId, depth: u32) -> bool {
        if depth > 64 {
            return true; // too deep to tell: keep the object
        }
        match o {
            Object::Reference(r) => *r == id,
            Object::Array(a) => a.iter().any(|v| walk(v, id, depth + 1)),
            Object::Dictionary(d) => d.iter().any(|(_, v)| walk(v, id, depth + 1)),
            Object::Stream(s) => s.dict.iter().any(|(_, v)| walk(v, id, depth + 1)),
            _ => false,
        }
    }
    doc.trailer.iter().any(|(_, v)| walk(v, id, 0)) || doc.objects.values().any(|o| walk(o, id, 0))
}
