//! The font a field's appearance is drawn in: the /DA font from the form's /DR when it has
//! every glyph, else the same chain as replace (a metric twin of its family embedded as a
//! new Type0 subset, then a look-alike), so accented and Greek values never draw as tofu.

use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use lopdf::{Dictionary, Document, Object, ObjectId};
use pdf_fonts::embed::{embed_font_file, EmbeddedFont};
use pdf_fonts::registry::Kind as RegKind;
use pdf_fonts::Font;

use crate::model::fonts::{own_font_source, strip_subset};
use crate::types::FailReason;
use crate::types::FontPolicy;

/// Why no font could be found: (reason, message).
pub(crate) use crate::types::Refusal;

/// Family used when the /DA font is missing or unreadable (Acrobat's default, Helvetica).
const DEFAULT_FAMILY: &str = "Helvetica";

/// How codes and widths are obtained for the chosen font.
#[derive(Clone)]
enum Coder {
    Doc(Rc<Font>),
    Embedded(PathBuf),
}

/// The font chosen for one appearance.
#[derive(Clone)]
pub(crate) struct Picked {
    /// The font object to put in the appearance's resources.
    pub font_id: ObjectId,
    /// `exact-embedded`, `exact-declared`, `metric-twin` or `look-alike`.
    pub source: &'static str,
    /// The font's name (no subset tag).
    pub name: String,
    /// `approx_font_used` for a look-alike.
    pub warning: Option<&'static str>,
    /// Ascent and descent in 1/1000 em.
    pub ascent: f64,
    pub descent: f64,
    coder: Coder,
}

/// Fonts loaded and embedded during one form edit.
#[derive(Default)]
pub(crate) struct FormFonts {
    loaded: HashMap<ObjectId, Option<Rc<Font>>>,
    embedded: HashMap<PathBuf, EmbeddedFont>,
}

impl FormFonts {
    /// A font that shows every character of `text`, starting with the /DR font `da_name`.
    pub fn pick(
        &mut self,
        doc: &mut Document,
        da_name: Option<&[u8]>,
        text: &str,
        policy: FontPolicy,
    ) -> Result<Picked, Refusal> {
        self.pick_in(doc, da_name, None, text, policy)
    }

    /// [`Self::pick`], looking the /DA font up in `own_fonts` (a /Font resource dictionary,
    /// such as an annotation appearance's) when the form's /DR does not have it.
    pub fn pick_in(
        &mut self,
        doc: &mut Document,
        da_name: Option<&[u8]>,
        own_fonts: Option<&Dictionary>,
        text: &str,
        policy: FontPolicy,
    ) -> Result<Picked, Refusal> {
        let own = da_name.and_then(|n| {
            self.dr_font(doc, n)
                .or_else(|| self.resource_font(doc, own_fonts?, n))
        });
        if let Some((id, font)) = &own {
            if font.encode(text).is_ok() {
                let d = font.descriptor();
                return Ok(Picked {
                    font_id: *id,
                    source: own_font_source(font.is_embedded()),
                    name: strip_subset(font.base_font()).to_string(),
                    warning: None,
                    ascent: nonzero(d.ascent, 718.0),
                    descent: nonzero(d.descent, -207.0),
                    coder: Coder::Doc(font.clone()),
                });
            }
        }
        let (family, bold, italic) = match &own {
            Some((_, f)) => (f.family(), f.style().bold, f.style().italic),
            None => match da_name.and_then(acrobat_font) {
                Some((family, bold, italic)) => (family.to_string(), bold, italic),
                None => (DEFAULT_FAMILY.to_string(), false, false),
            },
        };
        let registry = crate::plan::choose::registry();
        let resolved = registry
            .resolve(&family, bold, italic)
            .or_else(|| registry.resolve(DEFAULT_FAMILY, bold, italic))
            .ok_or_else(|| {
                (
                    FailReason::MissingGlyphs,
                    format!("no installed font for {family}"),
                )
            })?;
        if resolved.kind == RegKind::LookAlike && policy == FontPolicy::MetricOnly {
            return Err((
                FailReason::NoMetricFont,
                format!(
                    "only the look-alike {} is available for {family}",
                    resolved.name
                ),
            ));
        }
        let font_id = match self.embedded.get_mut(&resolved.path) {
            Some(ef) => {
                ef.add_text(doc, text)
                    .map_err(|e| (FailReason::MissingGlyphs, format!("{}: {e}", resolved.name)))?;
                ef.font_id
            }
            None => {
                let ef = embed_font_file(doc, &resolved.path, text)
                    .map_err(|e| (FailReason::MissingGlyphs, format!("{}: {e}", resolved.name)))?;
                let id = ef.font_id;
                self.embedded.insert(resolved.path.clone(), ef);
                id
            }
        };
        // Metrics of the new subset as a PDF font (the descriptor the embedder wrote).
        let (ascent, descent) = Font::load_id(doc, font_id)
            .map(|f| (f.descriptor().ascent, f.descriptor().descent))
            .unwrap_or((800.0, -200.0));
        let look_alike = resolved.kind == RegKind::LookAlike;
        Ok(Picked {
            font_id,
            source: resolved.kind.as_str(),
            name: resolved.name,
            warning: look_alike.then_some("approx_font_used"),
            ascent: nonzero(ascent, 800.0),
            descent: nonzero(descent, -200.0),
            coder: Coder::Embedded(resolved.path),
        })
    }

    /// Whether the /DA font `da_name` (in the form's /DR, else in `own_fonts`) shows every
    /// character of `text`.
    pub fn named_font_draws(
        &mut self,
        doc: &mut Document,
        da_name: &[u8],
        own_fonts: Option<&Dictionary>,
        text: &str,
    ) -> bool {
        self.dr_font(doc, da_name)
            .or_else(|| self.resource_font(doc, own_fonts?, da_name))
            .is_some_and(|(_, f)| f.encode(text).is_ok())
    }

    /// `text` as string bytes of `picked` (every character was covered when it was picked).
    pub fn encode(&self, picked: &Picked, text: &str) -> Vec<u8> {
        match &picked.coder {
            Coder::Doc(f) => f.encode(text).unwrap_or_default(),
            Coder::Embedded(p) => self
                .embedded
                .get(p)
                .and_then(|e| e.encode(text).ok())
                .unwrap_or_default(),
        }
    }

    /// Advance of `text` in 1/1000 em.
    pub fn width(&self, picked: &Picked, text: &str) -> f64 {
        match &picked.coder {
            Coder::Doc(f) => {
                let bytes = f.encode(text).unwrap_or_default();
                let mut rest = bytes.as_slice();
                let mut total = 0.0;
                while !rest.is_empty() {
                    let (code, used) = f.next_code(rest);
                    total += f.width(code);
                    rest = &rest[used.clamp(1, rest.len())..];
                }
                total
            }
            Coder::Embedded(p) => self
                .embedded
                .get(p)
                .map_or(0.0, |e| f64::from(e.text_width(text))),
        }
    }

    /// The /DR font named `name`, made an indirect object when it was inline.
    fn dr_font(&mut self, doc: &mut Document, name: &[u8]) -> Option<(ObjectId, Rc<Font>)> {
        let af = crate::model::form::acroform(doc)?;
        let dr = doc
            .dereference(af.get(b"DR").ok()?)
            .ok()?
            .1
            .as_dict()
            .ok()?;
        let fonts = doc
            .dereference(dr.get(b"Font").ok()?)
            .ok()?
            .1
            .as_dict()
            .ok()?
            .clone();
        self.resource_font(doc, &fonts, name)
    }

    /// The font named `name` in the /Font resource dictionary `fonts`, made an indirect
    /// object when it was inline.
    fn resource_font(
        &mut self,
        doc: &mut Document,
        fonts: &Dictionary,
        name: &[u8],
    ) -> Option<(ObjectId, Rc<Font>)> {
        let entry = fonts.get(name).ok()?.clone();
        let id = match entry {
            Object::Reference(id) => id,
            Object::Dictionary(d) => doc.add_object(d),
            _ => return None,
        };
        let font = self
            .loaded
            .entry(id)
            .or_insert_with(|| Font::load_id(doc, id).ok().map(Rc::new))
            .clone()?;
        Some((id, font))
    }
}

/// The family and style of the resource names Acrobat gives the standard fonts in /DA
/// (`Helv`, `TiRo`, `Cour`, ...) and of the standard font names themselves, for a /DA
/// whose font is in no resource dictionary.
fn acrobat_font(name: &[u8]) -> Option<(&'static str, bool, bool)> {
    let (family, (bold, italic)) = match name {
        b"Helv" | b"Helvetica" | b"Arial" => ("Helvetica", (false, false)),
        b"HeBo" | b"Helvetica-Bold" => ("Helvetica", (true, false)),
        b"HeOb" | b"Helvetica-Oblique" => ("Helvetica", (false, true)),
        b"HeBO" | b"Helvetica-BoldOblique" => ("Helvetica", (true, true)),
        b"TiRo" | b"Times-Roman" | b"Times" => ("Times", (false, false)),
        b"TiBo" | b"Times-Bold" => ("Times", (true, false)),
        b"TiIt" | b"Times-Italic" => ("Times", (false, true)),
        b"TiBI" | b"Times-BoldItalic" => ("Times", (true, true)),
        b"Cour" | b"Courier" => ("Courier", (false, false)),
        b"CoBo" | b"Courier-Bold" => ("Courier", (true, false)),
        b"CoOb" | b"Courier-Oblique" => ("Courier", (false, true)),
        b"CoBO" | b"Courier-BoldOblique" => ("Courier", (true, true)),
        _ => return None,
    };
    Some((family, bold, italic))
}

fn nonzero(v: f64, fallback: f64) -> f64 {
    if v.is_finite() && v != 0.0 {
        v
    } else {
        fallback
    }
}
