//! Resource dictionaries (§7.8.3) and lookups in them.

use std::rc::Rc;

use lopdf::{Dictionary, Document, Object, ObjectId};

use super::state::ColorFamily;
use super::{FontKey, FontObject, StreamId};

/// The resources in effect for a stream: one or more dictionaries searched in order,
/// and who owns them.
#[derive(Clone)]
pub(crate) struct Resources<'a> {
    pub dicts: Vec<&'a Dictionary>,
    /// Passed to the font source as `resources_owner`.
    pub owner: StreamId,
    /// Identifies these resources for the font cache: `None` for the page's,
    /// the form's id for a form's own.
    pub cache_key: Option<ObjectId>,
}

/// Follows references (bounded, lopdf's `dereference` stops cycles).
pub(crate) fn resolve<'a>(doc: &'a Document, object: &'a Object) -> (Option<ObjectId>, &'a Object) {
    doc.dereference(object).unwrap_or((None, object))
}

pub(crate) fn resolve_dict<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Dictionary> {
    resolve(doc, object).1.as_dict().ok()
}

impl<'a> Resources<'a> {
    /// The page's resources, inherited through the page tree (§7.7.3.4). lopdf returns
    /// the nearest direct dictionary and every referenced one up the tree; we search
    /// them nearest first, which also tolerates split resources some producers write.
    pub(crate) fn for_page(doc: &'a Document, page_id: ObjectId, owner: StreamId) -> Self {
        let mut dicts = Vec::new();
        if let Ok((direct, ids)) = doc.get_page_resources(page_id) {
            dicts.extend(direct);
            dicts.extend(ids.into_iter().filter_map(|id| doc.get_dictionary(id).ok()));
        }
        Self {
            dicts,
            owner,
            cache_key: None,
        }
    }

    /// The entry `name` of the sub-dictionary `category` (e.g. /Font /F1), unresolved.
    pub(crate) fn lookup(
        &self,
        doc: &'a Document,
        category: &[u8],
        name: &[u8],
    ) -> Option<&'a Object> {
        self.dicts.iter().find_map(|dict| {
            let sub = resolve_dict(doc, dict.get(category).ok()?)?;
            sub.get(name).ok()
        })
    }

    /// The font key for a `Tf` name.
    pub(crate) fn font_key(&self, doc: &'a Document, name: &[u8]) -> FontKey {
        let object = match self.lookup(doc, b"Font", name).map(|o| resolve(doc, o)) {
            Some((Some(id), Object::Dictionary(_))) => FontObject::Reference(id),
            Some((None, Object::Dictionary(dict))) => FontObject::Inline(Rc::new(dict.clone())),
            _ => FontObject::Missing,
        };
        FontKey {
            name: name.into(),
            object,
        }
    }

    /// The colour family for a `cs`/`CS` operand: a device name or a /ColorSpace
    /// resource (§8.6.3, §8.6.5).
    pub(crate) fn color_family(&self, doc: &'a Document, name: &[u8]) -> ColorFamily {
        if let Some(family) = device_family(name) {
            return family;
        }
        match self.lookup(doc, b"ColorSpace", name) {
            Some(object) => family_of(doc, object, 0),
            None => ColorFamily::Unknown,
        }
    }
}

fn device_family(name: &[u8]) -> Option<ColorFamily> {
    match name {
        b"DeviceGray" | b"G" | b"CalGray" => Some(ColorFamily::Gray),
        b"DeviceRGB" | b"RGB" | b"CalRGB" => Some(ColorFamily::Rgb),
        b"DeviceCMYK" | b"CMYK" => Some(ColorFamily::Cmyk),
        _ => None,
    }
}

/// The family of a colour space object: device names, Cal spaces, and ICCBased by
/// its /N (or /Alternate); anything else is unknown.
fn family_of(doc: &Document, object: &Object, depth: usize) -> ColorFamily {
    if depth > 4 {
        return ColorFamily::Unknown;
    }
    match resolve(doc, object).1 {
        Object::Name(n) => device_family(n).unwrap_or(ColorFamily::Unknown),
        Object::Array(items) => {
            let kind = items.first().and_then(|o| resolve(doc, o).1.as_name().ok());
            match kind {
                Some(b"ICCBased") => {
                    let Some(Ok(stream)) = items.get(1).map(|o| resolve(doc, o).1.as_stream())
                    else {
                        return ColorFamily::Unknown;
                    };
                    match stream.dict.get(b"N").and_then(Object::as_i64) {
                        Ok(1) => ColorFamily::Gray,
                        Ok(3) => ColorFamily::Rgb,
                        Ok(4) => ColorFamily::Cmyk,
                        _ => match stream.dict.get(b"Alternate") {
                            Ok(alt) => family_of(doc, alt, depth + 1),
                            Err(_) => ColorFamily::Unknown,
                        },
                    }
                }
                Some(name) => device_family(name).unwrap_or(ColorFamily::Unknown),
                None => ColorFamily::Unknown,
            }
        }
        _ => ColorFamily::Unknown,
    }
}
