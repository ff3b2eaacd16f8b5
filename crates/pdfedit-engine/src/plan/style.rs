//! Style overrides of new text (`style`: font, size, colour) for replace and insert.
//!
//! A styled run gets its own `Tf` and fill colour; afterwards the state in force before it
//! is set again (the same font and size, the colour ops that were in force, byte for byte),
//! so the rest of the line keeps its original font, size and colour.

use crate::types::FailReason;
use pdf_content::{OpKind, StreamId};
use pdf_fonts::registry::{Kind, Resolved};

use crate::model::PageModel;
use crate::plan::choose::registry;
use crate::plan::Refusal;
use crate::types::{FontPolicy, Style};

/// Checks a request's style: a known font name, a positive size, a `#RRGGBB` colour.
pub(crate) fn check(style: &Style) -> Result<(), String> {
    if let Some(name) = &style.font {
        if resolve_font(name, false, false).is_none() {
            return Err(format!(
                "style.font \"{name}\" is not a font of GET /v1/fonts (give a listed name, such as \
                 LiberationSerif-Bold, or a listed family, such as Times New Roman)"
            ));
        }
    }
    if let Some(size) = style.size {
        if !(size.is_finite() && size > 0.0 && size <= 1000.0) {
            return Err(format!(
                "style.size {size} is not between 0 and 1000 points"
            ));
        }
    }
    if let Some(c) = &style.color {
        if parse_hex(c).is_none() {
            return Err(format!("style.color \"{c}\" is not #RRGGBB"));
        }
    }
    Ok(())
}

/// [`resolve_font`] for `style.font` under the font policy: refused when the name is not
/// installed, or is a look-alike under `metric_only`.
pub(crate) fn resolve_style_font(
    name: &str,
    bold: bool,
    italic: bool,
    policy: FontPolicy,
) -> Result<Resolved, Refusal> {
    let resolved = resolve_font(name, bold, italic).ok_or_else(|| {
        (
            FailReason::MissingGlyphs,
            format!("style.font {name} is not installed"),
        )
    })?;
    if policy == FontPolicy::MetricOnly && resolved.kind == Kind::LookAlike {
        return Err((
            FailReason::NoMetricFont,
            format!("style.font {} is a look-alike", resolved.name),
        ));
    }
    Ok(resolved)
}

/// The installed font a `style.font` names: a listed font name (`LiberationSerif-Bold`,
/// any case), else a listed family in any spelling the registry reads (`Times New Roman`,
/// `Arial Bold`), in the style of the text it replaces (`bold`, `italic`) unless the name
/// says otherwise.
pub(crate) fn resolve_font(name: &str, bold: bool, italic: bool) -> Option<Resolved> {
    let reg = registry();
    let listed = reg.list().into_iter().find(|l| {
        l.name
            .as_deref()
            .is_some_and(|n| n.eq_ignore_ascii_case(name.trim()))
    });
    match listed {
        Some(l) => {
            let style = l.style;
            let (b, i) = match style {
                pdf_fonts::registry::Style::Regular => (false, false),
                pdf_fonts::registry::Style::Bold => (true, false),
                pdf_fonts::registry::Style::Italic => (false, true),
                pdf_fonts::registry::Style::BoldItalic => (true, true),
            };
            reg.resolve(&l.family, b, i)
        }
        None => reg.resolve(name, bold, italic),
    }
}

/// One font new text can be written in (a row of `GET /v1/fonts`).
#[derive(Debug, Clone, PartialEq)]
pub struct FontEntry {
    /// The name `style.font` takes (the installed file's name, e.g. `LiberationSerif-Bold`).
    pub name: String,
    /// The promised family it serves (e.g. `Times New Roman`).
    pub family: String,
    /// `regular`, `bold`, `italic` or `bold-italic`.
    pub style: &'static str,
    /// `metric-twin` or `look-alike` (also the `font_source` of text drawn in it).
    pub kind: &'static str,
    /// Families whose widths it reproduces.
    pub metric_compatible_with: Vec<String>,
}

/// Every installed font of the registry's promised families and styles.
pub fn list_fonts() -> Vec<FontEntry> {
    registry()
        .list()
        .into_iter()
        .filter_map(|l| {
            Some(FontEntry {
                name: l.name?,
                family: l.family,
                style: l.style.as_str(),
                kind: l.kind.as_str(),
                metric_compatible_with: l.metric_compatible_with,
            })
        })
        .collect()
}

/// `#RRGGBB` as RGB components in 0..1.
pub(crate) fn parse_hex(c: &str) -> Option<[f64; 3]> {
    let h = c.strip_prefix('#')?;
    if h.len() != 6 {
        return None;
    }
    let v = |i: usize| u8::from_str_radix(h.get(i..i + 2)?, 16).ok();
    Some([v(0)?, v(2)?, v(4)?].map(|b| f64::from(b) / 255.0))
}

/// `r g b rg` for a styled run.
pub(crate) fn rgb_op(c: [f64; 3]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in c {
        pdf_content::write::write_number(&mut out, v);
        out.push(b' ');
    }
    out.extend_from_slice(b"rg ");
    out
}

/// Most `gs` ops kept when re-stating the graphics state (bounds work on hostile files).
const MAX_GS_OPS: usize = 64;

/// The fill colour (and, with `with_gs`, the `gs` ops) in force when op `op_index` of
/// `stream` runs, as the stream's own op bytes: the colour space op and colour op last
/// run, or `0 g` (the initial state) when a page's content never set one. `None` inside a
/// form XObject that sets no colour itself (it inherits one from its caller, not known
/// here).
pub(crate) fn fill_state_at(
    model: &PageModel,
    stream: StreamId,
    op_index: usize,
    with_gs: bool,
) -> Option<Vec<u8>> {
    // (stream position, op index) of the ops in force.
    #[derive(Clone, Default)]
    struct State {
        space: Option<(usize, usize)>,
        color: Option<(usize, usize)>,
        gs: Vec<(usize, usize)>,
    }
    let mut stack: Vec<State> = Vec::new();
    let mut s = State::default();
    let streams = &model.glyphs.streams;
    for (si, cs) in streams.iter().enumerate() {
        let last = cs.id == stream;
        let same_family = matches!(
            (cs.id, stream),
            (StreamId::PageContent { .. }, StreamId::PageContent { .. })
        );
        if !last && !same_family {
            continue;
        }
        let end = if last { op_index + 1 } else { cs.ops.len() };
        for (oi, op) in cs.ops.iter().enumerate().take(end) {
            match &op.kind {
                OpKind::Save => stack.push(s.clone()),
                OpKind::Restore => s = stack.pop().unwrap_or_else(|| s.clone()),
                OpKind::FillColorSpace(_) => {
                    s.space = Some((si, oi));
                    s.color = None;
                }
                OpKind::FillColor(_) | OpKind::FillColorN { .. } => s.color = Some((si, oi)),
                OpKind::FillGray(_) | OpKind::FillRgb(_) | OpKind::FillCmyk(_) => {
                    s.space = None;
                    s.color = Some((si, oi));
                }
                OpKind::ExtGState(_) if with_gs && s.gs.len() < MAX_GS_OPS => {
                    s.gs.push((si, oi));
                }
                _ => {}
            }
        }
        if last {
            break;
        }
    }
    let bytes_of = |(si, oi): (usize, usize)| {
        let cs = &streams[si];
        cs.bytes
            .get(cs.ops[oi].span.clone())
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for r in s.gs.iter().copied().chain(s.space).chain(s.color) {
        out.extend(bytes_of(r));
        out.push(b' ');
    }
    if s.space.is_none() && s.color.is_none() {
        if matches!(stream, StreamId::Form { .. }) {
            return None;
        }
        out.extend_from_slice(b"0 g ");
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_parse() {
        assert_eq!(parse_hex("#FF0000"), Some([1.0, 0.0, 0.0]));
        assert_eq!(parse_hex("red"), None);
        assert_eq!(parse_hex("#12345"), None);
    }

    #[test]
    fn check_refuses_what_cannot_be_drawn() {
        let bad_color = Style {
            color: Some("blue".into()),
            ..Style::default()
        };
        assert!(check(&bad_color).is_err());
        let bad_size = Style {
            size: Some(-3.0),
            ..Style::default()
        };
        assert!(check(&bad_size).is_err());
        let unknown = Style {
            font: Some("No Such Font 123".into()),
            ..Style::default()
        };
        assert!(check(&unknown).is_err());
        assert!(check(&Style::default()).is_ok());
    }
}
