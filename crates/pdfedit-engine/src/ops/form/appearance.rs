//! Appearance streams for text and choice widgets, drawn as Acrobat draws them: the /DA
//! font, size and colour, /Q quadding, comb cells, multiline wrapping, auto size (size 0),
//! the widget's /MK background and border, and its /MK /R rotation.

use lopdf::{dictionary, Dictionary, Document, Object, ObjectId, Stream};

use super::font::{FormFonts, Picked};
use crate::plan::streams::hex;

/// Padding between the border and the text, in points (Acrobat uses 2).
pub(crate) const PAD: f64 = 2.0;
/// Auto size (DA size 0) never exceeds this, so short values in tall fields stay readable.
const AUTO_MAX: f64 = 12.0;
/// Auto size never goes below this.
const AUTO_MIN: f64 = 4.0;
/// Line height as a multiple of the size for multiline text and list boxes.
const LEADING: f64 = 1.15;

/// The parts of a /DA string we use.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Da {
    /// The /DR font resource name.
    pub font: Option<Vec<u8>>,
    /// Size in points; 0 means auto.
    pub size: f64,
    /// The colour operator as written (`0 g`, `1 0 0 rg`, `0 0 0 1 k`).
    pub color: String,
}

/// Parses a default-appearance string such as `/Helv 0 Tf 0 g`.
pub(crate) fn parse_da(da: Option<&str>) -> Da {
    let mut out = Da {
        font: None,
        size: 0.0,
        color: "0 g".into(),
    };
    let tokens: Vec<&str> = da.unwrap_or("").split_ascii_whitespace().collect();
    for (i, t) in tokens.iter().enumerate() {
        let operands = |n: usize| tokens.get(i.saturating_sub(n)..i).filter(|_| i >= n);
        match *t {
            "Tf" => {
                if let Some([name, size]) = operands(2) {
                    out.font = name.strip_prefix('/').map(|n| n.as_bytes().to_vec());
                    out.size = size.parse().unwrap_or(0.0);
                }
            }
            "g" | "rg" | "k" => {
                let n = match *t {
                    "g" => 1,
                    "rg" => 3,
                    _ => 4,
                };
                if let Some(ops) = operands(n) {
                    if ops.iter().all(|o| o.parse::<f64>().is_ok()) {
                        out.color = format!("{} {t}", ops.join(" "));
                    }
                }
            }
            _ => {}
        }
    }
    if !out.size.is_finite() || out.size < 0.0 {
        out.size = 0.0;
    }
    out
}

/// How the value is laid out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Layout {
    /// One line, quadded.
    Line,
    /// Wrapped lines from the top.
    Multiline,
    /// One character per cell of `cells` equal cells.
    Comb(usize),
    /// A list box: every option, `selected` ones highlighted, from `top`.
    List {
        options: Vec<String>,
        selected: Vec<usize>,
        top: usize,
    },
}

/// Font, /DA and quadding of a field's appearance.
pub(crate) struct TextStyle<'a> {
    pub picked: &'a Picked,
    pub da: &'a Da,
    pub quadding: i64,
}

/// Geometry and decoration of one widget.
struct Widget {
    /// Width and height of the appearance box (after /MK /R rotation).
    w: f64,
    h: f64,
    rotation: i64,
    background: Option<String>,
    border: Option<(String, f64)>,
}

fn widget(doc: &Document, id: ObjectId) -> Option<Widget> {
    let d = doc.get_dictionary(id).ok()?;
    let rect = doc
        .dereference(d.get(b"Rect").ok()?)
        .ok()?
        .1
        .as_array()
        .ok()?;
    let n: Vec<f64> = rect.iter().filter_map(num).collect();
    let [x0, y0, x1, y1] = n.as_slice() else {
        return None;
    };
    let (w, h) = ((x1 - x0).abs(), (y1 - y0).abs());
    let mk = d
        .get(b"MK")
        .ok()
        .and_then(|m| doc.dereference(m).ok())
        .and_then(|(_, m)| m.as_dict().ok());
    let rotation = mk
        .and_then(|m| m.get(b"R").ok())
        .and_then(num)
        .map_or(0, |r| (r as i64).rem_euclid(360));
    let color = |key: &[u8], stroke: bool| {
        let c = mk?.get(key).ok()?.as_array().ok()?;
        color_op(&c.iter().filter_map(num).collect::<Vec<f64>>(), stroke)
    };
    let border_width = d
        .get(b"BS")
        .ok()
        .and_then(|b| doc.dereference(b).ok())
        .and_then(|(_, b)| b.as_dict().ok())
        .and_then(|b| b.get(b"W").ok())
        .and_then(num)
        .unwrap_or(1.0);
    let border = color(b"BC", true)
        .filter(|_| border_width > 0.0)
        .map(|c| (c, border_width));
    let (w, h) = if rotation == 90 || rotation == 270 {
        (h, w)
    } else {
        (w, h)
    };
    Some(Widget {
        w,
        h,
        rotation,
        background: color(b"BG", false),
        border,
    })
}

/// Builds the normal appearance of widget `id` showing `text` (ignored for lists) in
/// `picked` and stores it as the widget's /AP. Returns the appearance's object id.
pub(crate) fn write_text_appearance(
    doc: &mut Document,
    fonts: &FormFonts,
    id: ObjectId,
    style: &TextStyle<'_>,
    text: &str,
    layout: &Layout,
) -> Result<ObjectId, String> {
    let (picked, da) = (style.picked, style.da);
    let wd = widget(doc, id).ok_or("the widget has no usable /Rect")?;
    let (w, h) = (wd.w, wd.h);
    let bw = wd.border.as_ref().map_or(0.0, |b| b.1);
    let inner = (w - 2.0 * (PAD + bw)).max(1.0);
    let mut ops = String::from("/Tx BMC\nq\n");
    if let Some(bg) = &wd.background {
        ops += &format!("{bg}\n0 0 {} {} re f\n", fmt(w), fmt(h));
    }
    if let Some((bc, bw)) = &wd.border {
        ops += &format!(
            "{bc}\n{} w\n{} {} {} {} re S\n",
            fmt(*bw),
            fmt(bw / 2.0),
            fmt(bw / 2.0),
            fmt(w - bw),
            fmt(h - bw)
        );
    }
    ops += &format!(
        "{} {} {} {} re W n\n",
        fmt(bw),
        fmt(bw),
        fmt((w - 2.0 * bw).max(0.0)),
        fmt((h - 2.0 * bw).max(0.0))
    );
    let LaidOut {
        size,
        lines,
        highlights,
    } = lay_out(fonts, style, [w, h, bw, inner], text, layout);
    for (y, lh) in &highlights {
        // Acrobat's selection colour for list boxes.
        ops += &format!(
            "0.6 0.75 0.85 rg\n{} {} {} {} re f\n",
            fmt(bw),
            fmt(*y),
            fmt(w - 2.0 * bw),
            fmt(*lh)
        );
    }
    // Comb cells are far apart, so extractors would split the value into letters: the
    // value is given as ActualText of the whole run (pdftotext and Acrobat honour it).
    let comb = matches!(layout, Layout::Comb(_));
    if comb {
        let utf16: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        ops += &format!("/Span <</ActualText <FEFF{}>>> BDC\n", hex(&utf16));
    }
    ops += &format!("BT\n/PEF0 {} Tf\n{}\n", fmt(size), da.color);
    for (x, y, t) in &lines {
        let codes = fonts.encode(picked, t);
        ops += &format!("1 0 0 1 {} {} Tm\n<{}> Tj\n", fmt(*x), fmt(*y), hex(&codes));
    }
    ops += "ET\n";
    if comb {
        ops += "EMC\n";
    }
    ops += "Q\nEMC\n";
    let mut dict = dictionary! {
        "Type" => "XObject",
        "Subtype" => "Form",
        "BBox" => vec![0.into(), 0.into(), Object::Real(w as f32), Object::Real(h as f32)],
        "Resources" => dictionary! { "Font" => dictionary! { "PEF0" => picked.font_id } },
    };
    if let Some(m) = rotation_matrix(wd.rotation) {
        dict.set(
            "Matrix",
            m.iter().map(|&v| Object::Integer(v)).collect::<Vec<_>>(),
        );
    }
    let ap_id = doc.add_object(Stream::new(dict, ops.into_bytes()));
    set_normal_appearance(doc, id, Object::Reference(ap_id))?;
    Ok(ap_id)
}

/// The lines of an appearance laid out in its box: the font size (from /DA, else the
/// largest that fits), each line's place and text, and the highlighted rows of a list.
pub(crate) struct LaidOut {
    pub size: f64,
    /// (x, baseline y, text) at `size`.
    pub lines: Vec<(f64, f64, String)>,
    /// (y, height) of each selected row of a list box.
    pub highlights: Vec<(f64, f64)>,
}

/// Lays `text` (or a list's options) out in a widget box `[w, h, border width, inner
/// width]` as `layout` says (also FreeText annotations' regenerated appearances).
pub(crate) fn lay_out(
    fonts: &FormFonts,
    style: &TextStyle<'_>,
    [w, h, bw, inner]: [f64; 4],
    text: &str,
    layout: &Layout,
) -> LaidOut {
    let (picked, da, quadding) = (style.picked, style.da, style.quadding);
    let em = (picked.ascent - picked.descent) / 1000.0;
    let width = |s: &str| fonts.width(picked, s) / 1000.0;
    let mut lines: Vec<(f64, f64, String)> = Vec::new();
    let mut highlights: Vec<(f64, f64)> = Vec::new();
    let size;
    match layout {
        Layout::Line => {
            size = if da.size > 0.0 {
                da.size
            } else {
                let by_h = (h - 2.0 * (PAD + bw)) / em;
                let tw = width(text);
                let by_w = if tw > 0.0 { inner / tw } else { AUTO_MAX };
                by_h.min(by_w).clamp(AUTO_MIN, AUTO_MAX)
            };
            let y = (h - em * size) / 2.0 - picked.descent / 1000.0 * size;
            lines.push((quad(quadding, width(text) * size, w, bw), y, text.into()));
        }
        Layout::Comb(cells) => {
            size = if da.size > 0.0 {
                da.size
            } else {
                ((h - 2.0 * (PAD + bw)) / em).clamp(AUTO_MIN, AUTO_MAX)
            };
            let cell = w / (*cells).max(1) as f64;
            let y = (h - em * size) / 2.0 - picked.descent / 1000.0 * size;
            for (i, c) in text.chars().enumerate() {
                let s = c.to_string();
                let x = i as f64 * cell + (cell - width(&s) * size) / 2.0;
                lines.push((x, y, s));
            }
        }
        Layout::Multiline => {
            let mut s = if da.size > 0.0 { da.size } else { AUTO_MAX };
            let mut wrapped = wrap(text, inner / s, &width);
            while da.size <= 0.0 && s > AUTO_MIN {
                let needed = wrapped.len() as f64 * s * LEADING;
                if needed <= h - 2.0 * (PAD + bw) {
                    break;
                }
                s = (s - 0.5).max(AUTO_MIN);
                wrapped = wrap(text, inner / s, &width);
            }
            size = s;
            let top = h - PAD - bw - picked.ascent / 1000.0 * size;
            for (i, l) in wrapped.into_iter().enumerate() {
                let y = top - i as f64 * size * LEADING;
                lines.push((quad(quadding, width(&l) * size, w, bw), y, l));
            }
        }
        Layout::List {
            options,
            selected,
            top,
        } => {
            size = if da.size > 0.0 { da.size } else { AUTO_MAX };
            let line_h = size * LEADING;
            for (row, (i, o)) in options.iter().enumerate().skip(*top).enumerate() {
                let y_top = h - bw - row as f64 * line_h;
                if y_top < 0.0 {
                    break;
                }
                if selected.contains(&i) {
                    highlights.push((y_top - line_h, line_h));
                }
                let y = y_top - (line_h - em * size) / 2.0 - picked.ascent / 1000.0 * size;
                lines.push((bw + PAD, y, o.clone()));
            }
        }
    }
    LaidOut {
        size,
        lines,
        highlights,
    }
}

/// Replaces the widget's /AP with one normal appearance (a changed value makes the old
/// rollover and down appearances wrong).
pub(crate) fn set_normal_appearance(
    doc: &mut Document,
    id: ObjectId,
    n: Object,
) -> Result<(), String> {
    let w = doc.get_dictionary_mut(id).map_err(|e| e.to_string())?;
    let mut ap = Dictionary::new();
    ap.set("N", n);
    w.set("AP", ap);
    Ok(())
}

/// The ZapfDingbats character a button draws when on: its /MK /CA caption, else a check
/// (`4`) for checkboxes and a dot (`l`) for radio buttons, as Acrobat draws them.
fn button_glyph(doc: &Document, id: ObjectId, radio: bool) -> u8 {
    let ca = doc
        .get_dictionary(id)
        .ok()
        .and_then(|d| d.get(b"MK").ok())
        .and_then(|m| doc.dereference(m).ok())
        .and_then(|(_, m)| m.as_dict().ok())
        .and_then(|m| m.get(b"CA").ok())
        .and_then(|c| c.as_str().ok())
        .and_then(|c| c.first().copied())
        .filter(|c| c.is_ascii_graphic());
    ca.unwrap_or(if radio { b'l' } else { b'4' })
}

/// Width and height (in em) of the ZapfDingbats glyphs buttons use (from the font's AFM:
/// check, cross, dot, diamond, square, star); others are taken as 0.8 by 0.7.
fn dingbat_size(c: u8) -> (f64, f64) {
    match c {
        b'4' => (0.846, 0.705),
        b'8' => (0.838, 0.72),
        b'l' => (0.791, 0.722),
        b'u' => (0.759, 0.722),
        b'n' => (0.761, 0.692),
        b'H' => (0.816, 0.705),
        _ => (0.8, 0.7),
    }
}

/// A button widget without an "on" appearance state gets one: the /MK background and
/// border with the ZapfDingbats glyph of its style (/MK /CA) in the /DA colour, named
/// `state`, and `Off` (the widget's existing single appearance when it has one, else the
/// background and border alone), so the value renders in every viewer.
pub(crate) fn write_button_appearance(
    doc: &mut Document,
    id: ObjectId,
    state: &[u8],
    radio: bool,
    da: &Da,
) -> Result<(), String> {
    let wd = widget(doc, id).ok_or("the widget has no usable /Rect")?;
    let glyph = button_glyph(doc, id, radio);
    let (gw, gh) = dingbat_size(glyph);
    let bw = wd.border.as_ref().map_or(0.0, |b| b.1);
    let room = (wd.w.min(wd.h) - 2.0 * bw).max(1.0);
    let size = if da.size > 0.0 {
        da.size
    } else {
        (room * 0.8 / gw.max(gh)).max(1.0)
    };
    let zadb = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "ZapfDingbats",
    });
    let bbox = || {
        vec![
            0.into(),
            0.into(),
            Object::Real(wd.w as f32),
            Object::Real(wd.h as f32),
        ]
    };
    let mut frame = String::new();
    if let Some(bg) = &wd.background {
        frame += &format!("{bg}\n0 0 {} {} re f\n", fmt(wd.w), fmt(wd.h));
    }
    if let Some((bc, bw)) = &wd.border {
        frame += &format!(
            "{bc}\n{} w\n{} {} {} {} re S\n",
            fmt(*bw),
            fmt(bw / 2.0),
            fmt(bw / 2.0),
            fmt(wd.w - bw),
            fmt(wd.h - bw)
        );
    }
    let x = (wd.w - gw * size) / 2.0;
    let y = (wd.h - gh * size) / 2.0;
    let on = format!(
        "q\n{frame}BT\n/ZaDb {} Tf\n{}\n{} {} Td\n<{:02X}> Tj\nET\nQ\n",
        fmt(size),
        da.color,
        fmt(x),
        fmt(y),
        glyph
    );
    let mut dict = dictionary! {
        "Type" => "XObject", "Subtype" => "Form", "BBox" => bbox(),
        "Resources" => dictionary! { "Font" => dictionary! { "ZaDb" => zadb } },
    };
    if let Some(m) = rotation_matrix(wd.rotation) {
        dict.set(
            "Matrix",
            m.iter().map(|&v| Object::Integer(v)).collect::<Vec<_>>(),
        );
    }
    let on_id = doc.add_object(Stream::new(dict, on.into_bytes()));
    // A single appearance stream (no states) is what the widget showed so far: it stays
    // the off look.
    // A state dictionary with only an Off state keeps that Off.
    let existing = crate::model::form::normal_appearance(doc, id).and_then(|n| match n {
        Object::Dictionary(states) => states.get(b"Off").ok()?.as_reference().ok(),
        _ => None,
    });
    let existing = existing.or_else(|| {
        doc.get_dictionary(id)
            .ok()
            .and_then(|d| d.get(b"AP").ok())
            .and_then(|ap| doc.dereference(ap).ok())
            .and_then(|(_, ap)| ap.as_dict().ok())
            .and_then(|ap| ap.get(b"N").ok())
            .and_then(|n| n.as_reference().ok())
            .filter(|n| doc.get_object(*n).and_then(Object::as_stream).is_ok())
    });
    let off_id = match existing {
        Some(n) => n,
        None => doc.add_object(Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Form", "BBox" => bbox() },
            format!("q\n{frame}Q\n").into_bytes(),
        )),
    };
    let mut states = Dictionary::new();
    states.set(state.to_vec(), on_id);
    states.set("Off", off_id);
    set_normal_appearance(doc, id, Object::Dictionary(states))
}

/// x of a line of `tw` points in a box `w` wide: left, centred or right (/Q 0, 1, 2).
fn quad(q: i64, tw: f64, w: f64, bw: f64) -> f64 {
    match q {
        1 => (w - tw) / 2.0,
        2 => w - bw - PAD - tw,
        _ => bw + PAD,
    }
}

/// Greedy word wrap of `text` into lines at most `max` (in em at size 1) wide; explicit
/// line breaks are kept, and a word longer than a line is broken by characters.
fn wrap(text: &str, max: f64, width: &dyn Fn(&str) -> f64) -> Vec<String> {
    let mut lines = Vec::new();
    for para in text.split(['\n', '\r']) {
        let mut line = String::new();
        for word in para.split(' ') {
            let candidate = if line.is_empty() {
                word.to_string()
            } else {
                format!("{line} {word}")
            };
            if width(&candidate) <= max || line.is_empty() && width(word) <= max {
                line = candidate;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            for c in word.chars() {
                let next = format!("{line}{c}");
                if width(&next) > max && !line.is_empty() {
                    lines.push(std::mem::replace(&mut line, c.to_string()));
                } else {
                    line = next;
                }
            }
        }
        lines.push(line);
    }
    lines
}

fn rotation_matrix(r: i64) -> Option<[i64; 6]> {
    match r {
        90 => Some([0, 1, -1, 0, 0, 0]),
        180 => Some([-1, 0, 0, -1, 0, 0]),
        270 => Some([0, -1, 1, 0, 0, 0]),
        _ => None,
    }
}

fn num(o: &Object) -> Option<f64> {
    match o {
        Object::Integer(i) => Some(*i as f64),
        Object::Real(r) => Some(f64::from(*r)),
        _ => None,
    }
}

/// A number for a content stream: at most 3 decimals, no exponent.
/// A colour array (gray, RGB or CMYK components) as a fill or stroke operator; `None` for
/// an empty or odd array.
pub(crate) fn color_op(v: &[f64], stroke: bool) -> Option<String> {
    let op = match (v.len(), stroke) {
        (1, false) => "g",
        (3, false) => "rg",
        (4, false) => "k",
        (1, true) => "G",
        (3, true) => "RG",
        (4, true) => "K",
        _ => return None,
    };
    let parts: Vec<String> = v.iter().map(|c| fmt(c.clamp(0.0, 1.0))).collect();
    Some(format!("{} {op}", parts.join(" ")))
}

pub(crate) fn fmt(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn da_gives_font_size_and_colour() {
        let da = parse_da(Some("/Helv 9 Tf 0 0 1 rg"));
        assert_eq!(da.font.as_deref(), Some(&b"Helv"[..]));
        assert_eq!(da.size, 9.0);
        assert_eq!(da.color, "0 0 1 rg");
        let auto = parse_da(Some("0 g /TiRo 0 Tf"));
        assert_eq!(auto.size, 0.0);
        assert_eq!(auto.color, "0 g");
        assert_eq!(parse_da(None).font, None);
    }

    #[test]
    fn wrap_breaks_at_words_and_newlines() {
        let w = |s: &str| s.chars().count() as f64;
        assert_eq!(wrap("aa bb cc", 5.0, &w), vec!["aa bb", "cc"]);
        assert_eq!(wrap("a\nb", 5.0, &w), vec!["a", "b"]);
        assert_eq!(wrap("abcdefg", 3.0, &w), vec!["abc", "def", "g"]);
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(fmt(1.0), "1");
        assert_eq!(fmt(1.23456), "1.235");
        assert_eq!(fmt(-0.0001), "0");
    }
}
