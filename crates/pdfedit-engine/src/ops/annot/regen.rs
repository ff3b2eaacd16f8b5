//! FreeText appearances generated from the annotation's own entries, for a FreeText that
//! has no normal appearance stream (or one whose font cannot draw the new text).
//!
//! The text is /Contents (line breaks kept), drawn as §12.7.3.3 variable text: the /DA
//! font, size and colour (size 0: the largest size, at most 12 pt, at which the wrapped
//! text fits the box), where /DA lacks them the simple parts of /DS (`font-size` or the
//! size of `font`, `color`, `text-align`), /Q alignment, words wrapped at the box's width
//! and long words broken by characters (as the form generator wraps multiline fields:
//! [`lay_out`]). The box is the /Rect less /RD; it is filled with /C (a FreeText's
//! background colour, PDF 2.0 §12.5.6.6) and stroked with the /BS (else /Border) width and
//! dash in the /DA stroke colour (else the text colour), and the text is clipped to it.
//! The font: the /DA font from the AcroForm /DR or the appearance's own resources when it
//! has every glyph, else the form fonts' chain (metric twin embedded as a new subset, then
//! a look-alike; `Helv`, `TiRo`, `Cour` name their standard families).
//!
//! Not drawn: a callout line (/CL) and cloudy borders (/BE); such annotations are not
//! regenerated.

use lopdf::{dictionary, Dictionary, Document, Object, ObjectId, Stream};
use pdf_content::decode_text_string;
use pdf_content::interp::matrix::transform_rect;
use pdf_fonts::obj;

use super::appearance::{self, numbers, rect_of, Candidate, View};
use crate::find::Match;
use crate::model::fonts::DocFonts;
use crate::ops::form::appearance::{color_op, fmt, lay_out, parse_da, Da, Layout, TextStyle, PAD};
use crate::ops::form::font::{FormFonts, Picked};
use crate::plan::streams::hex;
use crate::plan::Planned;
use crate::types::{FailReason, FontPolicy, Refusal};

/// Characters of /Contents drawn at most (a longer text is not regenerated).
const MAX_TEXT: usize = 20_000;

/// An appearance generated to find the text in: what to undo when it is not kept.
pub(crate) struct Generated {
    /// Objects added for it (the stream, fonts).
    objects: Vec<ObjectId>,
    /// The annotation's /AP as it was (an /AP without a usable /N, or none).
    ap: Option<Object>,
    /// Whether the old text fit the box.
    fits: bool,
}

/// How the annotation's box is stroked.
struct Border {
    color: String,
    width: f64,
    dash: Vec<f64>,
}

/// What the generated appearance looks like, read from the annotation.
struct Look {
    da: Da,
    quadding: i64,
    /// The /Rect's width and height.
    w: f64,
    h: f64,
    /// The box inside the rect (/RD applied), rect-relative: x0, y0, x1, y1.
    inner: [f64; 4],
    fill: Option<String>,
    border: Option<Border>,
}

/// A generated appearance stream.
pub(crate) struct Drawn {
    pub ap: ObjectId,
    pub picked: Picked,
    /// Whether every line ends above the box's bottom.
    pub fits: bool,
}

fn string(doc: &Document, d: &Dictionary, key: &[u8]) -> Option<String> {
    match obj::get(doc, d, key)? {
        Object::String(s, _) => Some(decode_text_string(s)),
        _ => None,
    }
}

/// The stroke colour operator a /DA string sets (`0 0 1 RG`), if any.
fn da_stroke(da: &str) -> Option<String> {
    let tokens: Vec<&str> = da.split_ascii_whitespace().collect();
    let mut out = None;
    for (i, t) in tokens.iter().enumerate() {
        let n = match *t {
            "G" => 1,
            "RG" => 3,
            "K" => 4,
            _ => continue,
        };
        let Some(ops) = i.checked_sub(n).and_then(|s| tokens.get(s..i)) else {
            continue;
        };
        let v: Option<Vec<f64>> = ops.iter().map(|o| o.parse::<f64>().ok()).collect();
        if let Some(v) = v {
            out = color_op(&v, true);
        }
    }
    out
}

/// Whether a /DA string sets a fill colour / a font size.
fn da_sets(da: &str, ops: &[&str]) -> bool {
    da.split_ascii_whitespace().any(|t| ops.contains(&t))
}

/// The simple parts of a /DS style string: size, colour, alignment.
fn parse_ds(ds: &str) -> (Option<f64>, Option<String>, Option<i64>) {
    let (mut size, mut color, mut align) = (None, None, None);
    for decl in ds.split(';') {
        let Some((key, value)) = decl.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
        let pt = |v: &str| {
            v.split_ascii_whitespace()
                .find_map(|t| t.strip_suffix("pt")?.parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s > 0.0 && *s < 1000.0)
        };
        match key.as_str() {
            "font-size" => size = pt(value).or(size),
            "font" => size = pt(value).or(size),
            "color" => {
                let hexes = value.strip_prefix('#').filter(|h| h.len() == 6);
                let rgb: Option<Vec<f64>> = hexes.and_then(|h| {
                    (0..3)
                        .map(|i| {
                            let c = u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok()?;
                            Some(f64::from(c) / 255.0)
                        })
                        .collect()
                });
                color = rgb.and_then(|v| color_op(&v, false)).or(color);
            }
            "text-align" => {
                align = match value.to_ascii_lowercase().as_str() {
                    "left" => Some(0),
                    "center" => Some(1),
                    "right" => Some(2),
                    _ => align,
                };
            }
            _ => {}
        }
    }
    (size, color, align)
}

/// The annotation's look; None without a usable /Rect, or with a callout line or a cloudy
/// border (not drawn).
fn look(doc: &Document, annot: &Dictionary) -> Option<Look> {
    let rect = rect_of(&numbers(doc, annot.get(b"Rect").ok()?))?;
    let (w, h) = (rect[2] - rect[0], rect[3] - rect[1]);
    if w < 1.0 || h < 1.0 || w > 20_000.0 || h > 20_000.0 {
        return None;
    }
    // A key whose value is null is absent (PDF 32000 7.3.7; `obj::get`).
    if obj::get(doc, annot, b"CL").is_some() || obj::get(doc, annot, b"BE").is_some() {
        return None;
    }
    let form_da = crate::model::form::acroform(doc).and_then(|af| string(doc, af, b"DA"));
    let da_text = string(doc, annot, b"DA").or(form_da).unwrap_or_default();
    let mut da = parse_da(Some(&da_text));
    let (ds_size, ds_color, ds_align) = string(doc, annot, b"DS")
        .map(|ds| parse_ds(&ds))
        .unwrap_or_default();
    if !da_sets(&da_text, &["Tf"]) {
        da.size = ds_size.unwrap_or(0.0);
    }
    if !da_sets(&da_text, &["g", "rg", "k"]) {
        if let Some(c) = ds_color {
            da.color = c;
        }
    }
    let quadding = annot
        .get(b"Q")
        .ok()
        .and_then(|q| obj::num_of(doc, q))
        .map(|q| q as i64)
        .filter(|q| (0..=2).contains(q))
        .or(ds_align)
        .unwrap_or(0);
    let rd = annot
        .get(b"RD")
        .map(|o| numbers(doc, o))
        .unwrap_or_default();
    let inner = match rd.as_slice() {
        [l, b, r, t] if l.max(0.0) + r.max(0.0) < w - 1.0 && b.max(0.0) + t.max(0.0) < h - 1.0 => {
            [l.max(0.0), b.max(0.0), w - r.max(0.0), h - t.max(0.0)]
        }
        _ => [0.0, 0.0, w, h],
    };
    let fill = annot
        .get(b"C")
        .ok()
        .and_then(|c| color_op(&numbers(doc, c), false));
    let bs = annot
        .get(b"BS")
        .ok()
        .and_then(|b| doc.dereference(b).ok())
        .and_then(|(_, b)| b.as_dict().ok());
    let border_array = annot.get(b"Border").map(|b| numbers(doc, b)).ok();
    let width = bs
        .and_then(|b| b.get(b"W").ok())
        .and_then(|v| obj::num_of(doc, v))
        .or_else(|| border_array.as_ref().and_then(|b| b.get(2).copied()))
        .unwrap_or(1.0)
        .clamp(0.0, (inner[2] - inner[0]).min(inner[3] - inner[1]) / 4.0);
    let dashed = bs
        .and_then(|b| b.get(b"S").ok())
        .and_then(|s| s.as_name().ok())
        == Some(b"D".as_slice());
    let dash = if dashed {
        let d = bs.and_then(|b| b.get(b"D").ok()).map(|d| numbers(doc, d));
        d.filter(|d| !d.is_empty() && d.iter().all(|v| *v >= 0.0) && d.iter().any(|v| *v > 0.0))
            .unwrap_or_else(|| vec![3.0])
    } else {
        Vec::new()
    };
    let stroke = da_stroke(&da_text).or_else(|| {
        // The text colour as a stroke colour.
        let (ops, op) = da.color.rsplit_once(' ')?;
        Some(format!("{ops} {}", op.to_ascii_uppercase()))
    });
    let border = stroke.filter(|_| width > 0.0).map(|color| Border {
        color,
        width,
        dash: dash.into_iter().take(16).collect(),
    });
    Some(Look {
        da,
        quadding,
        w,
        h,
        inner,
        fill,
        border,
    })
}

/// The annotation's /Contents with its line breaks as `\n` and no control characters.
pub(crate) fn contents(doc: &Document, annot: ObjectId) -> Option<String> {
    let d = doc.get_dictionary(annot).ok()?;
    let text = string(doc, d, b"Contents")?;
    let text = text
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', " ");
    let text: String = text
        .chars()
        .filter(|c| *c == '\n' || !c.is_control())
        .collect();
    (text.chars().count() <= MAX_TEXT).then_some(text)
}

/// Draws `text` as annotation `annot`'s appearance (a new stream object, not yet set as
/// its /AP). `own_fonts`: a /Font resource dictionary to look the /DA font up in besides
/// the form's /DR.
pub(crate) fn draw(
    doc: &mut Document,
    fonts: &mut FormFonts,
    annot: ObjectId,
    text: &str,
    own_fonts: Option<&Dictionary>,
    policy: FontPolicy,
) -> Result<Drawn, Refusal> {
    let unusable = || {
        (
            FailReason::AnnotationText,
            "the annotation has no appearance and none can be drawn from its /DA \
             (no usable /Rect, or a callout line or cloudy border)"
                .to_string(),
        )
    };
    let d = doc.get_dictionary(annot).map_err(|_| unusable())?;
    let look = look(doc, d).ok_or_else(unusable)?;
    let covered = text.replace('\n', " ");
    let picked = fonts.pick_in(doc, look.da.font.as_deref(), own_fonts, &covered, policy)?;
    let [ix, iy, ix1, iy1] = look.inner;
    let (iw, ih) = (ix1 - ix, iy1 - iy);
    let bw = look.border.as_ref().map_or(0.0, |b| b.width);
    let style = TextStyle {
        picked: &picked,
        da: &look.da,
        quadding: look.quadding,
    };
    let room = (iw - 2.0 * (PAD + bw)).max(1.0);
    let laid = lay_out(fonts, &style, [iw, ih, bw, room], text, &Layout::Multiline);
    let fits = laid
        .lines
        .last()
        .is_none_or(|(_, y, _)| y + picked.descent.min(0.0) / 1000.0 * laid.size >= bw - 0.5);
    let mut ops = String::from("q\n");
    if let Some(fill) = &look.fill {
        ops += &format!(
            "{fill}\n{} {} {} {} re f\n",
            fmt(ix),
            fmt(iy),
            fmt(iw),
            fmt(ih)
        );
    }
    if let Some(b) = &look.border {
        let dash: Vec<String> = b.dash.iter().map(|v| fmt(*v)).collect();
        ops += &format!(
            "{}\n{} w\n[{}] 0 d\n{} {} {} {} re S\n",
            b.color,
            fmt(b.width),
            dash.join(" "),
            fmt(ix + b.width / 2.0),
            fmt(iy + b.width / 2.0),
            fmt(iw - b.width),
            fmt(ih - b.width)
        );
    }
    ops += &format!(
        "{} {} {} {} re W n\n1 0 0 1 {} {} cm\nBT\n/PEF0 {} Tf\n{}\n",
        fmt(ix + bw),
        fmt(iy + bw),
        fmt((iw - 2.0 * bw).max(0.0)),
        fmt((ih - 2.0 * bw).max(0.0)),
        fmt(ix),
        fmt(iy),
        fmt(laid.size),
        look.da.color
    );
    for (x, y, t) in &laid.lines {
        let codes = fonts.encode(&picked, t);
        ops += &format!("1 0 0 1 {} {} Tm\n<{}> Tj\n", fmt(*x), fmt(*y), hex(&codes));
    }
    ops += "ET\nQ\n";
    let dict = dictionary! {
        "Type" => "XObject",
        "Subtype" => "Form",
        "BBox" => vec![0.into(), 0.into(), Object::Real(look.w as f32), Object::Real(look.h as f32)],
        "Resources" => dictionary! { "Font" => dictionary! { "PEF0" => picked.font_id } },
    };
    let ap = doc.add_object(Stream::new(dict, ops.into_bytes()));
    Ok(Drawn { ap, picked, fits })
}

/// Sets (`Some`) or removes the annotation's /AP.
fn set_ap(doc: &mut Document, annot: ObjectId, ap: Option<Object>) {
    if let Ok(d) = doc.get_object_mut(annot).and_then(Object::as_dict_mut) {
        match ap {
            Some(ap) => d.set("AP", ap),
            None => {
                d.remove(b"AP");
            }
        }
    }
}

/// For a FreeText without a normal appearance stream: an appearance drawn from its
/// /Contents and /DA, set as its /AP and opened like a stored one, so that finding works
/// on what the regenerated appearance shows. None for other annotations, or when no
/// appearance can be drawn (the document is then as it was).
pub(crate) fn open(doc: &mut Document, fonts: &mut DocFonts, cand: Candidate) -> Option<View> {
    if cand.field.is_some() {
        return None;
    }
    let annot = doc.get_dictionary(cand.annot_id).ok()?;
    if appearance::normal_appearance(doc, annot).is_some() {
        return None;
    }
    let old_ap = annot.get(b"AP").ok().cloned();
    let text = contents(doc, cand.annot_id)?;
    let first_new = doc.max_id + 1;
    // Its own form fonts: what it embeds goes again when it is not kept.
    let mut form_fonts = FormFonts::default();
    let drawn = draw(
        doc,
        &mut form_fonts,
        cand.annot_id,
        &text,
        None,
        FontPolicy::PreferExact,
    );
    let objects: Vec<ObjectId> = doc
        .objects
        .keys()
        .filter(|id| id.0 >= first_new)
        .copied()
        .collect();
    let generated = Generated {
        objects,
        ap: old_ap,
        fits: drawn.as_ref().is_ok_and(|d| d.fits),
    };
    let Ok(drawn) = drawn else {
        undo(doc, cand.annot_id, generated);
        return None;
    };
    let mut ap = Dictionary::new();
    ap.set("N", Object::Reference(drawn.ap));
    set_ap(doc, cand.annot_id, Some(Object::Dictionary(ap)));
    let annot_id = cand.annot_id;
    match appearance::open(doc, fonts, cand) {
        Some(mut view) => {
            view.generated = Some(generated);
            Some(view)
        }
        None => {
            undo(doc, annot_id, generated);
            None
        }
    }
}

/// Removes a generated appearance's objects and gives the annotation its /AP back.
fn undo(doc: &mut Document, annot: ObjectId, g: Generated) {
    for id in &g.objects {
        doc.objects.remove(id);
    }
    set_ap(doc, annot, g.ap);
}

/// Closes a view that is not edited (its scratch objects and any generated appearance).
pub(crate) fn discard(doc: &mut Document, view: View) {
    appearance::close(doc, view.scratch_page, view.copy);
    if let Some(g) = view.generated {
        undo(doc, view.cand.annot_id, g);
    }
}

/// The /Font resources of the view's stored appearance.
fn appearance_fonts(doc: &Document, view: &View) -> Option<Dictionary> {
    let s = doc.get_object(view.original_ap).ok()?.as_stream().ok()?;
    let r = doc.dereference(s.dict.get(b"Resources").ok()?).ok()?.1;
    let f = doc
        .dereference(r.as_dict().ok()?.get(b"Font").ok()?)
        .ok()?
        .1;
    f.as_dict().ok().cloned()
}

/// Whether the FreeText's /DA font (from the form's /DR or its appearance's resources)
/// draws the replacements of `ms`: its appearance can then be drawn anew when the
/// appearance's own text cannot be edited in place.
pub(crate) fn da_font_draws(doc: &mut Document, view: &View, ms: &[Match]) -> bool {
    let Ok(annot) = doc.get_dictionary(view.cand.annot_id) else {
        return false;
    };
    let Some(name) = string(doc, annot, b"DA").and_then(|da| parse_da(Some(&da)).font) else {
        return false;
    };
    if look(doc, annot).is_none() {
        return false;
    }
    let own = appearance_fonts(doc, view);
    let text: String = ms.iter().map(|m| m.replacement.as_str()).collect();
    FormFonts::default().named_font_draws(doc, &name, own.as_ref(), &text)
}

/// Replaces the annotation's appearance by one drawn from its (already updated) /Contents
/// and /DA; one planned change per match. The view's scratch objects and any appearance
/// generated to find in go. Refused (`overflow`) when the new text does not fit the box
/// while the old one did.
pub(crate) fn commit(
    doc: &mut Document,
    fonts: &mut FormFonts,
    view: &mut View,
    matches: usize,
    policy: FontPolicy,
) -> Result<Vec<Planned>, Refusal> {
    let annot = view.cand.annot_id;
    // The stored appearance's fonts: the /DA font may be one of them.
    let own_fonts = appearance_fonts(doc, view);
    appearance::close(doc, view.scratch_page, view.copy);
    // A stored appearance is drawn anew only in the /DA font itself.
    let own_only = view.generated.is_none();
    let fitted = match view.generated.take() {
        Some(g) => {
            let fits = g.fits;
            undo(doc, annot, g);
            fits
        }
        None => true,
    };
    let text = contents(doc, annot).ok_or_else(|| {
        (
            FailReason::AnnotationText,
            "the annotation's /Contents cannot be read back".to_string(),
        )
    })?;
    let drawn = draw(doc, fonts, annot, &text, own_fonts.as_ref(), policy)?;
    if own_only && !drawn.picked.source.starts_with("exact") {
        return Err((
            FailReason::MissingGlyphs,
            format!(
                "the annotation's font cannot draw the new text (only {} could)",
                drawn.picked.name
            ),
        ));
    }
    if fitted && !drawn.fits {
        return Err((
            FailReason::Overflow,
            "the new text does not fit the annotation's box".into(),
        ));
    }
    let mut ap = Dictionary::new();
    ap.set("N", Object::Reference(drawn.ap));
    set_ap(doc, annot, Some(Object::Dictionary(ap)));
    if doc.objects.contains_key(&view.original_ap) && !appearance::referenced(doc, view.original_ap)
    {
        doc.objects.remove(&view.original_ap);
    }
    let area = transform_rect(&view.to_page, view.text_box);
    Ok((0..matches)
        .map(|match_index| Planned {
            match_index,
            font_source: drawn.picked.source,
            font_used: drawn.picked.name.clone(),
            area_user: area,
            warning: drawn.picked.warning,
            moved: None,
            alignment: None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ds_gives_size_colour_and_alignment() {
        let (size, color, align) =
            parse_ds("font: Helvetica,sans-serif 10.5pt; text-align:center; color:#FF0000");
        assert_eq!(size, Some(10.5));
        assert_eq!(color.as_deref(), Some("1 0 0 rg"));
        assert_eq!(align, Some(1));
        assert_eq!(parse_ds("font-size: 0pt; color: red"), (None, None, None));
    }

    #[test]
    fn da_stroke_colour() {
        assert_eq!(
            da_stroke("/Helv 12 Tf 0 0 1 rg 1 0 0 RG").as_deref(),
            Some("1 0 0 RG")
        );
        assert_eq!(da_stroke("/Helv 12 Tf 0 g"), None);
        assert_eq!(da_stroke("RG"), None);
    }
}
