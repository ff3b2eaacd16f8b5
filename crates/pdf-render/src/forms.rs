//! AcroForm fields, read through PDFium's widget annotations.

use std::collections::HashMap;

use pdfium_render::prelude::*;

use crate::document::{page_transform, Document};
use crate::geometry::Rect;
use crate::{Error, Result};

/// The kind of a form field, as the API names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Single- or multi-line text.
    Text,
    /// A checkbox.
    Checkbox,
    /// A radio group.
    Radio,
    /// A combo box (drop-down, possibly editable).
    Combo,
    /// A list box.
    List,
    /// A signature field.
    Signature,
    /// A push button.
    Button,
}

impl FieldKind {
    /// The API's name for the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Text => "text",
            FieldKind::Checkbox => "checkbox",
            FieldKind::Radio => "radio",
            FieldKind::Combo => "combo",
            FieldKind::List => "list",
            FieldKind::Signature => "signature",
            FieldKind::Button => "button",
        }
    }
}

/// A field's current value, shaped by its kind.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    /// No value (push buttons, unselected radio groups).
    Null,
    /// Text, combo and radio (the selected export value).
    Text(String),
    /// Checkbox checked, signature signed.
    Bool(bool),
    /// List box selection.
    List(Vec<String>),
}

/// One form field (one entry per fully qualified name).
#[derive(Debug, Clone, PartialEq)]
pub struct FormField {
    /// Fully qualified field name (`parent.child`).
    pub name: String,
    /// Field kind.
    pub kind: FieldKind,
    /// Current value.
    pub value: FieldValue,
    /// Option labels of combo and list boxes.
    pub options: Option<Vec<String>>,
    /// 1-based page of the first widget.
    pub page: u32,
    /// Box of the first widget, in API coordinates.
    pub bbox: Rect,
    /// Every widget is hidden (annotation flag 2): the value is not shown or printed.
    pub hidden: bool,
    /// /Ff ReadOnly: a viewer does not let the user change the value.
    pub read_only: bool,
    /// /Ff Required: the value must be set when the form is submitted.
    pub required: bool,
    /// Text fields: /Ff Multiline (the value may hold line breaks).
    pub multiline: bool,
    /// Text fields: /Ff Comb (one character per cell; `max_len` cells).
    pub comb: bool,
    /// Text fields: /MaxLen, inherited. PDFium does not expose it, so it is `None` here
    /// and filled in by the caller that reads the field tree.
    pub max_len: Option<u32>,
}

impl Document<'_> {
    /// Every form field of the document, in page and widget order.
    ///
    /// PDFium does not link a signature to its field, so signature fields are reported
    /// signed only when every signature field of the document carries a signature
    /// (exact for the common one-field case; partly signed documents report `false`).
    pub fn form_fields(&self) -> Result<Vec<FormField>> {
        let mut fields = FieldCollector::new(self);
        for page_index in 0..self.page_count() {
            fields.add_page(page_index, &self.page(page_index)?);
        }
        Ok(fields.finish())
    }
}

/// [`Document::form_fields`] gathered page by page from pages loaded for something else
/// too (reading loads each page once): every page in order, then [`FieldCollector::finish`].
pub struct FieldCollector {
    fields: Vec<FormField>,
    by_name: HashMap<String, usize>,
    /// The document's signed signatures, counted before any page is read: PDFium finds
    /// signatures through the pages' widgets, which flattening a page for its text removes.
    signed: usize,
}

impl FieldCollector {
    /// A collector for the fields of `doc`.
    pub fn new(doc: &Document) -> Self {
        // PDFium lists every signature field; the signed ones have /Contents.
        let signed = doc
            .doc
            .signatures()
            .iter()
            .filter(|s| !s.bytes().is_empty())
            .count();
        FieldCollector {
            fields: Vec::new(),
            by_name: HashMap::new(),
            signed,
        }
    }

    /// The widgets of loaded page `page_index` (0-based). Pages must come in order, each
    /// once, before anything changes the page's annotations (flattening removes them).
    pub(crate) fn add_page(&mut self, page_index: u32, page: &PdfPage) {
        let transform = page_transform(page);
        for annotation in page.annotations().iter() {
            let Some(field) = annotation.as_form_field() else {
                continue;
            };
            let Some(name) = field.name() else { continue };
            let bbox = annotation
                .bounds()
                .map(|r| transform.pdf_rect(&r))
                .map_err(|e| Error::pdfium("reading a widget box", e))
                .unwrap_or_default();
            let (kind, value, options) = describe(field);
            let hidden = annotation.is_hidden();
            let text = field.as_text_field();
            if let Some(&i) = self.by_name.get(&name) {
                self.fields[i].hidden &= hidden;
                merge_widget(&mut self.fields[i], kind, value);
                continue;
            }
            self.by_name.insert(name.clone(), self.fields.len());
            self.fields.push(FormField {
                name,
                kind,
                value,
                options,
                page: page_index + 1,
                bbox,
                hidden,
                read_only: field.is_read_only(),
                required: field.is_required(),
                multiline: text.is_some_and(|t| t.is_multiline()),
                comb: text.is_some_and(|t| t.is_combed()),
                max_len: None,
            });
        }
    }

    /// The fields of every page added, with the signature fields' values set from the
    /// document's signatures.
    pub fn finish(mut self) -> Vec<FormField> {
        let signed = self.signed;
        let signature_fields = self
            .fields
            .iter()
            .filter(|f| f.kind == FieldKind::Signature)
            .count();
        let all_signed = signature_fields > 0 && signed >= signature_fields;
        for f in self
            .fields
            .iter_mut()
            .filter(|f| f.kind == FieldKind::Signature)
        {
            f.value = FieldValue::Bool(all_signed);
        }
        self.fields
    }
}

/// A radio group (or a checkbox group sharing one name) has one widget per option: the
/// entry keeps the first widget's box and takes the value of whichever widget is on.
fn merge_widget(entry: &mut FormField, kind: FieldKind, value: FieldValue) {
    match (kind, &value) {
        (FieldKind::Radio, FieldValue::Text(_)) => entry.value = value,
        (FieldKind::Checkbox, FieldValue::Bool(true)) => entry.value = value,
        _ => {}
    }
}

fn describe(field: &PdfFormField) -> (FieldKind, FieldValue, Option<Vec<String>>) {
    match field {
        PdfFormField::Text(t) => (
            FieldKind::Text,
            FieldValue::Text(t.value().unwrap_or_default()),
            None,
        ),
        PdfFormField::Checkbox(c) => {
            // pdfium-render counts only an "on" state named `Yes` as checked; forms name it
            // freely (`1`, `On`, an export value), so any state but Off is checked, as in
            // PDFium's own CPDF_FormControl::IsChecked.
            let checked = match c.appearance_stream() {
                Some(s) => !matches!(s.trim_start_matches('/'), "Off" | ""),
                None => c.is_checked().unwrap_or(false),
            };
            (FieldKind::Checkbox, FieldValue::Bool(checked), None)
        }
        PdfFormField::RadioButton(r) => {
            // The export value of a radio widget is the name of its "on" appearance state,
            // which is what /AS holds while it is selected.
            // The widget's /AS names its state: any state but Off is the selected option
            // (FPDFAnnot_IsChecked misses groups whose states are indices into /Opt).
            let state = r
                .appearance_stream()
                .map(|s| s.trim_start_matches('/').to_string())
                .filter(|s| !s.is_empty() && s != "Off");
            let value = match state {
                Some(s) => FieldValue::Text(s),
                None if r.is_checked().unwrap_or(false) => {
                    r.group_value().map_or(FieldValue::Null, FieldValue::Text)
                }
                None => FieldValue::Null,
            };
            (FieldKind::Radio, value, None)
        }
        PdfFormField::ComboBox(c) => (
            FieldKind::Combo,
            FieldValue::Text(c.value().unwrap_or_default()),
            Some(option_labels(c.options())),
        ),
        PdfFormField::ListBox(l) => {
            let selected = l
                .options()
                .iter()
                .filter(|o| o.is_set())
                .filter_map(|o| o.label().cloned())
                .collect::<Vec<_>>();
            // Fall back to /V when no option is flagged selected (PDFium reads /I first).
            let selected = if selected.is_empty() {
                l.value().into_iter().filter(|v| !v.is_empty()).collect()
            } else {
                selected
            };
            (
                FieldKind::List,
                FieldValue::List(selected),
                Some(option_labels(l.options())),
            )
        }
        PdfFormField::Signature(_) => (FieldKind::Signature, FieldValue::Bool(false), None),
        PdfFormField::PushButton(_) | PdfFormField::Unknown(_) => {
            (FieldKind::Button, FieldValue::Null, None)
        }
    }
}

fn option_labels(options: &PdfFormFieldOptions) -> Vec<String> {
    options.iter().filter_map(|o| o.label().cloned()).collect()
}
