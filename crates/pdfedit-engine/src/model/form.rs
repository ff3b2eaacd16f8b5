//! The AcroForm field tree as terminal fields with fully qualified names and their inherited
//! attributes (PDF 32000 12.7.3): what filling and flattening work on.

use std::collections::{BTreeMap, HashMap, HashSet};

use lopdf::{decode_text_string, Dictionary, Document, Object, ObjectId};

/// Fields nested deeper than this are ignored (hostile files loop or nest absurdly).
const MAX_DEPTH: usize = 32;
/// At most this many field nodes are read.
const MAX_NODES: usize = 20_000;

/// Field flag bits (PDF 32000 tables 226, 228, 230).
pub(crate) mod ff {
    pub const READ_ONLY: u32 = 1;
    pub const REQUIRED: u32 = 1 << 1;
    pub const MULTILINE: u32 = 1 << 12;
    pub const PASSWORD: u32 = 1 << 13;
    pub const RADIO: u32 = 1 << 15;
    pub const PUSHBUTTON: u32 = 1 << 16;
    pub const COMBO: u32 = 1 << 17;
    pub const EDIT: u32 = 1 << 18;
    pub const MULTI_SELECT: u32 = 1 << 21;
    pub const COMB: u32 = 1 << 24;
}

/// What kind of field a terminal field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Checkbox,
    Radio,
    Combo,
    List,
    PushButton,
    Signature,
}

/// A terminal field: the node that holds /V, and the widgets that show it.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    /// Fully qualified name (`parent.child`).
    pub name: String,
    /// The last part of the name.
    pub partial: String,
    /// The field dictionary (holds /V; may also be the only widget).
    pub id: ObjectId,
    pub kind: Kind,
    /// /Ff, inherited.
    pub flags: u32,
    /// /DA, inherited, else the AcroForm's.
    pub da: Option<String>,
    /// /Q, inherited, else the AcroForm's.
    pub quadding: i64,
    /// /MaxLen, inherited.
    pub max_len: Option<usize>,
    /// Choice options as (export value, display text).
    pub options: Vec<(String, String)>,
    /// Widget annotation dictionaries.
    pub widgets: Vec<ObjectId>,
    /// Every widget is hidden (annotation flag 2): flattening drops it undrawn.
    pub hidden: bool,
}

#[derive(Clone, Default)]
struct Inherited {
    ft: Option<Vec<u8>>,
    flags: u32,
    da: Option<String>,
    quadding: Option<i64>,
    max_len: Option<usize>,
    opt: Option<Vec<(String, String)>>,
}

/// The AcroForm dictionary (resolved), when the document has one.
pub(crate) fn acroform(doc: &Document) -> Option<&Dictionary> {
    let af = doc.catalog().ok()?.get(b"AcroForm").ok()?;
    doc.dereference(af).ok()?.1.as_dict().ok()
}

/// Every terminal field of the document, in tree order.
pub(crate) fn fields(doc: &Document) -> Vec<Field> {
    let Some(af) = acroform(doc) else {
        return Vec::new();
    };
    let root = Inherited {
        da: af.get(b"DA").ok().and_then(text),
        quadding: af.get(b"Q").ok().and_then(|q| q.as_i64().ok()),
        ..Inherited::default()
    };
    let mut walk = Walk {
        doc,
        seen: HashSet::new(),
        out: Vec::new(),
    };
    if let Some(list) = af
        .get(b"Fields")
        .ok()
        .and_then(|f| doc.dereference(f).ok())
        .and_then(|(_, f)| f.as_array().ok())
    {
        for kid in list {
            if let Ok(id) = kid.as_reference() {
                walk.node(id, "", &root, 0);
            }
        }
    }
    walk.out
}

/// Maps each widget's object id to its 1-based page number and page id (from /Annots).
pub(crate) fn widget_pages(doc: &Document) -> BTreeMap<ObjectId, (u32, ObjectId)> {
    let mut map = BTreeMap::new();
    for (number, page_id) in doc.get_pages() {
        let Ok(page) = doc.get_dictionary(page_id) else {
            continue;
        };
        let Some(annots) = page
            .get(b"Annots")
            .ok()
            .and_then(|a| doc.dereference(a).ok())
            .and_then(|(_, a)| a.as_array().ok())
        else {
            continue;
        };
        for a in annots {
            if let Ok(id) = a.as_reference() {
                map.entry(id).or_insert((number, page_id));
            }
        }
    }
    map
}

struct Walk<'a> {
    doc: &'a Document,
    seen: HashSet<ObjectId>,
    out: Vec<Field>,
}

impl Walk<'_> {
    fn node(&mut self, id: ObjectId, prefix: &str, parent: &Inherited, depth: usize) {
        if depth > MAX_DEPTH || self.seen.len() >= MAX_NODES || !self.seen.insert(id) {
            return;
        }
        let Ok(dict) = self.doc.get_dictionary(id) else {
            return;
        };
        let partial = dict.get(b"T").ok().and_then(text);
        let name = match (&partial, prefix.is_empty()) {
            (Some(t), true) => t.clone(),
            (Some(t), false) => format!("{prefix}.{t}"),
            (None, _) => prefix.to_string(),
        };
        let inh = self.inherit(dict, parent);
        let kids: Vec<ObjectId> = dict
            .get(b"Kids")
            .ok()
            .and_then(|k| self.doc.dereference(k).ok())
            .and_then(|(_, k)| k.as_array().ok())
            .map(|a| a.iter().filter_map(|o| o.as_reference().ok()).collect())
            .unwrap_or_default();
        // Kids with a /T are child fields; kids without are this field's widgets.
        let (child_fields, widgets): (Vec<ObjectId>, Vec<ObjectId>) =
            kids.into_iter().partition(|k| {
                self.doc
                    .get_dictionary(*k)
                    .is_ok_and(|d| d.has(b"T") || d.has(b"Kids"))
            });
        for child in &child_fields {
            self.node(*child, &name, &inh, depth + 1);
        }
        if !child_fields.is_empty() && widgets.is_empty() {
            return;
        }
        if name.is_empty() {
            return;
        }
        let widgets = if widgets.is_empty() {
            vec![id]
        } else {
            widgets
        };
        let Some(kind) = kind_of(inh.ft.as_deref(), inh.flags) else {
            return;
        };
        let hidden = widgets.iter().all(|w| {
            self.doc
                .get_dictionary(*w)
                .ok()
                .and_then(|d| d.get(b"F").ok())
                .and_then(|f| f.as_i64().ok())
                .is_some_and(|f| f & 2 != 0)
        });
        self.out.push(Field {
            partial: partial.unwrap_or_else(|| name.rsplit('.').next().unwrap_or("").into()),
            name,
            id,
            kind,
            flags: inh.flags,
            da: inh.da,
            quadding: inh.quadding.unwrap_or(0),
            max_len: inh.max_len,
            options: inh.opt.unwrap_or_default(),
            widgets,
            hidden,
        });
    }

    fn inherit(&self, dict: &Dictionary, parent: &Inherited) -> Inherited {
        let mut inh = parent.clone();
        if let Ok(ft) = dict.get(b"FT").and_then(Object::as_name) {
            inh.ft = Some(ft.to_vec());
        }
        if let Some(f) = dict.get(b"Ff").ok().and_then(|f| f.as_i64().ok()) {
            inh.flags = f as u32;
        }
        if let Some(da) = dict.get(b"DA").ok().and_then(text) {
            inh.da = Some(da);
        }
        if let Some(q) = dict.get(b"Q").ok().and_then(|q| q.as_i64().ok()) {
            inh.quadding = Some(q);
        }
        if let Some(m) = dict
            .get(b"MaxLen")
            .ok()
            .and_then(|m| self.doc.dereference(m).ok())
            .and_then(|(_, m)| m.as_i64().ok())
        {
            inh.max_len = usize::try_from(m).ok();
        }
        if let Some(opt) = dict
            .get(b"Opt")
            .ok()
            .and_then(|o| self.doc.dereference(o).ok())
            .and_then(|(_, o)| o.as_array().ok())
        {
            inh.opt = Some(opt.iter().filter_map(|o| option(self.doc, o)).collect());
        }
        inh
    }
}

/// One /Opt entry: a text, or an [export, display] pair.
fn option(doc: &Document, o: &Object) -> Option<(String, String)> {
    let o = doc.dereference(o).ok()?.1;
    if let Ok(pair) = o.as_array() {
        let export = text(pair.first()?)?;
        let display = pair.get(1).and_then(text).unwrap_or_else(|| export.clone());
        return Some((export, display));
    }
    let t = text(o)?;
    Some((t.clone(), t))
}

fn kind_of(ft: Option<&[u8]>, flags: u32) -> Option<Kind> {
    Some(match ft? {
        b"Tx" => Kind::Text,
        b"Btn" if flags & ff::PUSHBUTTON != 0 => Kind::PushButton,
        b"Btn" if flags & ff::RADIO != 0 => Kind::Radio,
        b"Btn" => Kind::Checkbox,
        b"Ch" if flags & ff::COMBO != 0 => Kind::Combo,
        b"Ch" => Kind::List,
        b"Sig" => Kind::Signature,
        _ => return None,
    })
}

/// A text string object as Rust text (PDFDocEncoding or UTF-16BE).
pub(crate) fn text(o: &Object) -> Option<String> {
    decode_text_string(o).ok()
}

/// Whether the field holds a value worth showing (a non-empty /V other than /Off).
pub(crate) fn has_value(doc: &Document, field: &Field) -> bool {
    let Some(v) = doc
        .get_dictionary(field.id)
        .ok()
        .and_then(|d| d.get(b"V").ok())
        .and_then(|v| doc.dereference(v).ok())
        .map(|(_, v)| v)
    else {
        return false;
    };
    match v {
        Object::String(s, _) => !s.is_empty() && s.as_slice() != b"\xfe\xff",
        Object::Name(n) => n.as_slice() != b"Off",
        Object::Array(a) => !a.is_empty(),
        Object::Null => false,
        _ => true,
    }
}

/// The field's current /V as a value to fill in again (text and choice fields).
pub(crate) fn current_value(doc: &Document, field: &Field) -> Option<crate::types::FieldInput> {
    use crate::types::FieldInput;
    let v = doc.get_dictionary(field.id).ok()?.get(b"V").ok()?;
    let v = doc.dereference(v).ok()?.1;
    match v {
        Object::Array(a) => Some(FieldInput::Many(a.iter().filter_map(text).collect())),
        other => text(other).filter(|t| !t.is_empty()).map(FieldInput::Text),
    }
}

/// An appearance state name as text: UTF-8 when it is, else PDFDocEncoding (as PDFium
/// reads it; older producers wrote names in their 8-bit encoding).
pub(crate) fn state_text(name: &[u8]) -> String {
    match std::str::from_utf8(name) {
        Ok(t) => t.to_string(),
        Err(_) => text(&Object::string_literal(name.to_vec()))
            .unwrap_or_else(|| String::from_utf8_lossy(name).into_owned()),
    }
}

/// The names of the "on" appearance states of a button widget (every /N state but /Off).
pub(crate) fn on_states(doc: &Document, widget: ObjectId) -> Vec<Vec<u8>> {
    let Some(n) = normal_appearance(doc, widget) else {
        return Vec::new();
    };
    match n.as_dict() {
        Ok(states) => states
            .iter()
            .map(|(k, _)| k.clone())
            .filter(|k| k != b"Off")
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The widget's /AP /N entry, resolved (a stream, or a dictionary of states).
pub(crate) fn normal_appearance(doc: &Document, widget: ObjectId) -> Option<&Object> {
    let w = doc.get_dictionary(widget).ok()?;
    let ap = doc.dereference(w.get(b"AP").ok()?).ok()?.1.as_dict().ok()?;
    Some(doc.dereference(ap.get(b"N").ok()?).ok()?.1)
}

/// Radio groups of the document by fully qualified name: each option as (appearance state
/// name, export value). The export value is the /Opt entry when the group has one (state
/// names are then only indices), else the state name itself.
pub(crate) fn radio_options(doc: &Document) -> HashMap<String, Vec<(String, String)>> {
    let mut out = HashMap::new();
    for f in fields(doc).into_iter().filter(|f| f.kind == Kind::Radio) {
        let mut options: Vec<(String, String)> = Vec::new();
        for (i, w) in f.widgets.iter().enumerate() {
            for state in on_states(doc, *w) {
                let state = state_text(&state);
                let export = f
                    .options
                    .get(i)
                    .map_or_else(|| state.clone(), |(e, _)| e.clone());
                if !options.iter().any(|(s, _)| *s == state) {
                    options.push((state, export));
                }
            }
        }
        out.insert(f.name, options);
    }
    out
}

/// Whether PDFium's reading `got` of an appearance state names `state`. PDFium hands back
/// long state names cut short (about 200 bytes, a `#` where it stopped inside an escape),
/// so a long reading that starts `state` counts.
pub(crate) fn same_state(got: &str, state: &str) -> bool {
    if got == state {
        return true;
    }
    // The cut may leave `#` or `#` and one hex digit of an escape.
    let cut = match got.rfind('#') {
        Some(i) if got.len() - i <= 2 && got[i + 1..].chars().all(|c| c.is_ascii_hexdigit()) => {
            &got[..i]
        }
        _ => got,
    };
    got.len() >= 64 && state.starts_with(cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::dictionary;

    #[test]
    fn names_are_qualified_and_flags_inherited() {
        let mut doc = Document::with_version("1.7");
        let w1 = doc.add_object(dictionary! {"Subtype" => "Widget"});
        let w2 = doc.add_object(dictionary! {"Subtype" => "Widget"});
        let child = doc.add_object(dictionary! {
            "T" => Object::string_literal("city"),
            "Kids" => vec![w1.into(), w2.into()],
        });
        let parent = doc.add_object(dictionary! {
            "T" => Object::string_literal("addr"),
            "FT" => "Tx",
            "Ff" => 4096,
            "Kids" => vec![child.into()],
        });
        let af = doc.add_object(dictionary! {"Fields" => vec![parent.into()], "DA" => Object::string_literal("/Helv 0 Tf 0 g")});
        let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "AcroForm" => af});
        doc.trailer.set("Root", catalog);
        let f = fields(&doc);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].name, "addr.city");
        assert_eq!(f[0].partial, "city");
        assert_eq!(f[0].kind, Kind::Text);
        assert_eq!(f[0].flags, ff::MULTILINE);
        assert_eq!(f[0].widgets, vec![w1, w2]);
        assert_eq!(f[0].da.as_deref(), Some("/Helv 0 Tf 0 g"));
    }

    #[test]
    fn a_field_tree_that_loops_ends() {
        let mut doc = Document::with_version("1.7");
        let id = doc.new_object_id();
        doc.objects.insert(
            id,
            dictionary! {"T" => Object::string_literal("a"), "FT" => "Tx", "Kids" => vec![id.into()]}
                .into(),
        );
        let af = doc.add_object(dictionary! {"Fields" => vec![id.into()]});
        let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "AcroForm" => af});
        doc.trailer.set("Root", catalog);
        assert!(fields(&doc).len() <= 1);
    }
}
