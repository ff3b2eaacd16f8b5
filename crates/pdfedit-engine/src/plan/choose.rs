//! Choosing the font new text is drawn in (SPEC rule 5): the glyph's own font, another
//! subset of the same font in the document, a metric twin, then a look-alike.

use std::sync::OnceLock;

use lopdf::{Document, Object, ObjectId};
use pdf_content::{FontKey, FontObject, Glyph};
use pdf_fonts::cmap::code_bytes;
use pdf_fonts::registry::{Kind, Registry};
use pdf_fonts::Font;

use crate::model::fonts::{own_font_source, strip_subset, DocFonts};
use crate::model::PageModel;
use crate::plan::streams::add_font_resource;
use crate::plan::Refusal;
use crate::types::FailReason;
use crate::types::FontPolicy;

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
        .ok_or_else(|| (FailReason::MissingGlyphs, "font unreadable".to_string()))?;
    let base = strip_subset(own.font.base_font()).to_string();
    let missing = match encode_segments(&own.font, text) {
        Ok(segs) => {
            return Ok(Chosen {
                segs,
                font_id: None,
                switch_to: None,
                source: own_font_source(own.font.is_embedded()),
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
            FailReason::Type3Font,
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
                .map_err(|e| (FailReason::UnsupportedLayout, e))?;
            return Ok(Chosen {
                segs,
                font_id: Some(id),
                switch_to: Some(name),
                source: own_font_source(f.font.is_embedded()),
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
    let named = registry().resolve(&own.family(), style.bold, style.italic);
    // A family no twin or named look-alike serves: the installed face nearest to it.
    let nearest = || {
        (policy != FontPolicy::MetricOnly)
            .then(|| registry().nearest(&own.appearance()))
            .flatten()
    };
    let Some(resolved) = named.or_else(nearest) else {
        let reason = if policy == FontPolicy::MetricOnly {
            FailReason::NoMetricFont
        } else {
            FailReason::MissingGlyphs
        };
        return Err((reason, "no installed substitute for this family".into()));
    };
    if resolved.kind == Kind::LookAlike && policy == FontPolicy::MetricOnly {
        return Err((
            FailReason::NoMetricFont,
            format!("only the look-alike {} is available", resolved.name),
        ));
    }
    let look_alike = resolved.kind == Kind::LookAlike;
    let mut chosen = match embed_resolved(doc, fonts, model, first, &resolved, text) {
        Ok(c) => c,
        Err(refusal) => {
            // Arabic the family's substitute cannot draw: an installed face that can.
            let script = (policy != FontPolicy::MetricOnly)
                .then(|| arabic_face(style.bold, style.italic))
                .flatten()
                .filter(|_| crate::plan::arabic::has_rtl(text));
            let Some(face) = script else {
                return Err(refusal);
            };
            let mut c =
                embed_resolved(doc, fonts, model, first, &face, text).map_err(|_| refusal)?;
            c.warning = Some("approx_font_used");
            return Ok(c);
        }
    };
    chosen.warning = look_alike.then_some("approx_font_used");
    Ok(chosen)
}

/// Installed faces with Arabic coverage, in the order tried: DejaVu Sans (fonts-dejavu-core,
/// which `scripts/setup.sh` installs) in the style asked for, else its regular face.
const ARABIC_FACES: &[(&str, &str)] = &[
    ("DejaVuSans-Bold.ttf", "DejaVuSans.ttf"),
    ("DejaVuSans.ttf", "DejaVuSans.ttf"),
];

/// A look-alike for Arabic text whose own font lacks the letters' forms.
fn arabic_face(bold: bool, _italic: bool) -> Option<pdf_fonts::registry::Resolved> {
    let (want, regular) = ARABIC_FACES[usize::from(!bold)];
    let (file, path) = [want, regular]
        .into_iter()
        .find_map(|f| registry().file(f).map(|p| (f, p.to_path_buf())))?;
    let style = pdf_fonts::registry::Style::from_flags(file.contains("Bold"), false);
    Some(pdf_fonts::registry::Resolved {
        name: file.trim_end_matches(".ttf").to_string(),
        family: "DejaVu Sans".into(),
        style,
        path,
        kind: Kind::LookAlike,
        metric_compatible_with: Vec::new(),
    })
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
        .map_err(|e| (FailReason::MissingGlyphs, e.to_string()))?;
    let codes = embedded
        .encode(text)
        .map_err(|e| (FailReason::MissingGlyphs, e.to_string()))?;
    let id = embedded.font_id;
    if fonts.by_id(doc, id).is_none() {
        return Err((
            FailReason::EngineError,
            "the embedded substitute cannot be read back".into(),
        ));
    }
    let name = add_font_resource(doc, model, first.stream, id)
        .map_err(|e| (FailReason::UnsupportedLayout, e))?;
    Ok(Chosen {
        segs: vec![Seg::Codes(codes)],
        font_id: Some(id),
        switch_to: Some(name),
        source: resolved.kind.as_str(),
        name: resolved.name.clone(),
        warning: None,
    })
}

/// Re-codes `segs` (codes in the glyph's own font `key`) with the codes the page already
/// shows for the same text in that font. A font may map several codes to one character
/// (a CID collection's full-width, proportional and vertical forms; a subset's duplicate
/// glyphs): the document's own choice is the form that matches the text around it, and
/// it certainly has a glyph.
pub(crate) fn prefer_shown_codes(model: &PageModel, key: &FontKey, font: &Font, segs: &mut [Seg]) {
    let mut shown: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    for g in model.glyphs.glyphs.iter().filter(|g| &g.font == key) {
        if let Some(u) = g.unicode.as_deref() {
            shown.entry(u).or_insert(g.code);
        }
    }
    for seg in segs.iter_mut() {
        let Seg::Codes(codes) = seg else { continue };
        let mut out = Vec::with_capacity(codes.len());
        let mut pos = 0;
        while pos < codes.len() {
            let (code, used) = font.next_code(&codes[pos..]);
            let used = used.clamp(1, codes.len() - pos);
            // Only a code of the same byte length that splits back to itself.
            let better = font
                .unicode_str(code)
                .and_then(|u| shown.get(u))
                .map(|&c| code_bytes(c, used))
                .filter(|b| font.next_code(b).1 == used);
            match better {
                Some(b) => out.extend(b),
                None => out.extend_from_slice(&codes[pos..pos + used]),
            }
            pos += used;
        }
        *codes = out;
    }
}

/// Where new text switches to another font: `(segment index, font key)`.
pub(crate) type FontSwitches = Vec<(usize, FontKey)>;

/// New text for a phrase the document draws in several of its own fonts (a Type 3 font
/// split in 256-glyph pieces, a symbol font for the punctuation): each character in the
/// first of the phrase's fonts that has it, the first glyph's font preferred. Besides the
/// segments, where to switch fonts: `(segment index, font key)`.
pub(crate) fn encode_in_phrase_fonts(
    doc: &Document,
    fonts: &mut DocFonts,
    model: &PageModel,
    members: &[usize],
    text: &str,
) -> Option<(Vec<Seg>, FontSwitches)> {
    let glyphs = &model.glyphs.glyphs;
    let mut keys: Vec<FontKey> = Vec::new();
    for &g in members {
        if !keys.contains(&glyphs[g].font) {
            keys.push(glyphs[g].font.clone());
        }
    }
    if keys.len() < 2 {
        return None;
    }
    let loaded: Vec<_> = keys
        .iter()
        .map(|k| fonts.get(doc, k))
        .collect::<Option<Vec<_>>>()?;
    let mut segs: Vec<Seg> = Vec::new();
    let mut switches: FontSwitches = Vec::new();
    let mut current = 0;
    for c in text.chars() {
        let s = c.to_string();
        let found = std::iter::once(current)
            .chain((0..keys.len()).filter(|&i| i != current))
            .find_map(|i| loaded[i].font.encode(&s).ok().map(|codes| (i, codes)));
        let (i, codes) = match found {
            Some(f) => f,
            // A space no font draws is a kern in the current font.
            None if c == ' ' => {
                segs.push(Seg::Space);
                continue;
            }
            None => return None,
        };
        if i != current {
            switches.push((segs.len(), keys[i].clone()));
            current = i;
        }
        let n = segs.len();
        let switched_here = switches.last().is_some_and(|(at, _)| *at == n);
        match segs.last_mut() {
            Some(Seg::Codes(prev)) if !switched_here => prev.extend(codes),
            _ => segs.push(Seg::Codes(codes)),
        }
    }
    Some((segs, switches))
}
