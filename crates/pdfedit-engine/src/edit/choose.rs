//! Choosing the font new text is drawn in (SPEC rule 5): the glyph's own font, another
//! subset of the same font in the document, a metric twin, then a look-alike.

use std::sync::OnceLock;

use lopdf::{Document, Object, ObjectId};
use pdf_content::{FontObject, Glyph};
use pdf_fonts::registry::{Kind, Registry};
use pdf_fonts::Font;

use super::find::PageModel;
use super::fonts::{strip_subset, DocFonts};
use super::replace::Refusal;
use super::streams::add_font_resource;
use super::types::FontPolicy;

/// A piece of encoded new text. Spaces the font has no glyph for become kerns (many
/// subsets carry no space glyph because the producer positioned words instead).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Seg {
    /// Codes in the chosen font.
    Codes(Vec<u8>),
    /// One word space, drawn as a kern.
    Space,
}

/// The font and codes for a replacement.
pub(crate) struct Chosen {
    pub segs: Vec<Seg>,
    /// The font object used, when not the glyph's own.
    pub font_id: Option<ObjectId>,
    /// Resource name to switch to, when not the glyph's own font.
    pub switch_to: Option<Vec<u8>>,
    pub source: &'static str,
    pub name: String,
    pub warning: Option<&'static str>,
}

pub(crate) fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(Registry::discover)
}

/// `text` in `font`, words separately when only the space is missing.
pub(crate) fn encode_segments(font: &Font, text: &str) -> Result<Vec<Seg>, String> {
    let whole = match font.encode(text) {
        Ok(c) => return Ok(vec![Seg::Codes(c)]),
        Err(e) => e.to_string(),
    };
    if !text.contains(' ') {
        return Err(whole);
    }
    let mut segs = Vec::new();
    for (i, part) in text.split(' ').enumerate() {
        if i > 0 {
            segs.push(Seg::Space);
        }
        if !part.is_empty() {
            segs.push(Seg::Codes(font.encode(part).map_err(|_| whole.clone())?));
        }
    }
    Ok(segs)
}

/// Width of a word space in `font`, glyph units (1/1000 em).
pub(crate) fn space_width(font: &Font) -> f64 {
    if let Ok(c) = font.encode(" ") {
        let (code, _) = font.next_code(&c);
        let w = font.width(code);
        if w > 0.0 {
            return w;
        }
    }
    if !font.is_composite() && font.width(32) > 0.0 {
        return font.width(32);
    }
    250.0
}

/// The best font for `text` at `first`'s place.
pub(crate) fn choose_font(
    doc: &mut Document,
    fonts: &mut DocFonts,
    model: &PageModel,
    first: &Glyph,
    text: &str,
    policy: FontPolicy,
) -> Result<Chosen, Refusal> {
    let own = fonts
        .get(doc, &first.font)
        .ok_or_else(|| ("missing_glyphs", "font unreadable".to_string()))?;
    let base = strip_subset(own.font.base_font()).to_string();
    let source = |embedded: bool| {
        if embedded {
            "exact-embedded"
        } else {
            "exact-declared"
        }
    };
    let missing = match encode_segments(&own.font, text) {
        Ok(segs) => {
            return Ok(Chosen {
                segs,
                font_id: None,
                switch_to: None,
                source: source(own.font.is_embedded()),
                name: base,
                warning: None,
            })
        }
        Err(e) => e,
    };
    // A Type 3 font's glyphs are drawings of its own; text in it is re-encoded with the
    // glyphs it has, and nothing else is drawn in its place.
    if own.font.kind() == pdf_fonts::FontKind::Type3 {
        return Err((
            "type3_font",
            format!("the Type 3 font {base} has no glyph for part of the new text ({missing})"),
        ));
    }
    let own_id = match first.font.object {
        FontObject::Reference(id) => Some(id),
        _ => None,
    };
    let candidates: Vec<ObjectId> = doc
        .objects
        .iter()
        .filter(|(id, _)| Some(**id) != own_id)
        .filter_map(|(id, o)| {
            let d = o.as_dict().ok()?;
            let is_font = d
                .get(b"Type")
                .and_then(Object::as_name)
                .is_ok_and(|n| n == b"Font");
            let name = d.get(b"BaseFont").and_then(Object::as_name).ok()?;
            let name = String::from_utf8_lossy(name);
            (is_font && strip_subset(&name) == base).then_some(*id)
        })
        .collect();
    for id in candidates {
        let Some(f) = fonts.by_id(doc, id) else {
            continue;
        };
        if let Ok(segs) = encode_segments(&f.font, text) {
            let name = add_font_resource(doc, model, first.stream, id)
                .map_err(|e| ("unsupported_layout", e))?;
            return Ok(Chosen {
                segs,
                font_id: Some(id),
                switch_to: Some(name),
                source: source(f.font.is_embedded()),
                name: base,
                warning: None,
            });
        }
    }
    substitute(doc, fonts, model, first, &own.font, text, policy)
        .map_err(|(reason, m)| (reason, format!("{base}: {missing}; {m}")))
}

/// A metric twin (or, unless `metric_only`, a look-alike) embedded as a new subset font.
fn substitute(
    doc: &mut Document,
    fonts: &mut DocFonts,
    model: &PageModel,
    first: &Glyph,
    own: &Font,
    text: &str,
    policy: FontPolicy,
) -> Result<Chosen, Refusal> {
    let style = own.style();
    let Some(resolved) = registry().resolve(&own.family(), style.bold, style.italic) else {
        let reason = if policy == FontPolicy::MetricOnly {
            "no_metric_font"
        } else {
            "missing_glyphs"
        };
        return Err((reason, "no installed substitute for this family".into()));
    };
    if resolved.kind == Kind::LookAlike && policy == FontPolicy::MetricOnly {
        return Err((
            "no_metric_font",
            format!("only the look-alike {} is available", resolved.name),
        ));
    }
    let look_alike = resolved.kind == Kind::LookAlike;
    let mut chosen = embed_resolved(doc, fonts, model, first, &resolved, text)?;
    chosen.warning = look_alike.then_some("approx_font_used");
    Ok(chosen)
}

/// `resolved` embedded as a new subset font holding `text`'s glyphs, added to the resources
/// of `first`'s stream; `font_source` is its kind in the font list.
pub(crate) fn embed_resolved(
    doc: &mut Document,
    fonts: &mut DocFonts,
    model: &PageModel,
    first: &Glyph,
    resolved: &pdf_fonts::registry::Resolved,
    text: &str,
) -> Result<Chosen, Refusal> {
    let embedded = pdf_fonts::embed::embed_font_file(doc, &resolved.path, text)
        .map_err(|e| ("missing_glyphs", e.to_string()))?;
    let codes = embedded
        .encode(text)
        .map_err(|e| ("missing_glyphs", e.to_string()))?;
    let id = embedded.font_id;
    if fonts.by_id(doc, id).is_none() {
        return Err((
            "engine_error",
            "the embedded substitute cannot be read back".into(),
        ));
    }
    let name =
        add_font_resource(doc, model, first.stream, id).map_err(|e| ("unsupported_layout", e))?;
    Ok(Chosen {
        segs: vec![Seg::Codes(codes)],
        font_id: Some(id),
        switch_to: Some(name),
        source: resolved.kind.as_str(),
        name: resolved.name.clone(),
        warning: None,
    })
}
