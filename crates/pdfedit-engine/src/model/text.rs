//! Lines of text built from the interpreter's glyphs, each character mapped back to the
//! glyph that drew it, so a match in the line string names exact glyphs and bytes.

use lopdf::{Document, Object, ObjectId};
use pdf_content::Glyph;

/// One line of text in reading order.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    /// The line's text; a space is inserted where glyphs leave a word-sized gap.
    pub text: String,
    /// Per byte of `text`: the glyph index that drew the character there, or `None` for
    /// an inserted space.
    pub byte_glyph: Vec<Option<usize>>,
    /// A column of upright CJK characters set one under the other in a horizontal font
    /// (one text line each, as Distiller sets vertical Japanese in an Identity-H font):
    /// the text reads down the column.
    pub stacked: bool,
}

/// How a glyph's origin and direction read: position along the baseline, baseline offset.
fn frame(g: &Glyph) -> ([f64; 2], [f64; 2]) {
    (writing_dir(g), [g.trm[4], g.trm[5]])
}

/// The unit vector (user space) the pen moves along after `g`: text space's x axis, or
/// for vertical writing its negative y axis (columns run down).
pub(crate) fn writing_dir(g: &Glyph) -> [f64; 2] {
    let (dx, dy) = if g.vertical {
        (-g.trm[2], -g.trm[3])
    } else {
        (g.trm[0], g.trm[1])
    };
    let len = (dx * dx + dy * dy).sqrt().max(1e-9);
    [dx / len, dy / len]
}

fn size_of(g: &Glyph) -> f64 {
    (g.trm[2] * g.trm[2] + g.trm[3] * g.trm[3]).sqrt().max(0.1)
}

/// Groups glyphs (content order) into lines, then sorts the lines top to bottom and left to
/// right in user space of the unrotated page.
pub(crate) fn build_lines(glyphs: &[Glyph]) -> Vec<Line> {
    build_lines_with(glyphs, None)
}

/// [`build_lines`], with the word breaks of reading where it gives them.
pub(crate) fn build_lines_with(glyphs: &[Glyph], breaks: Option<&Breaks>) -> Vec<Line> {
    struct Open {
        dir: [f64; 2],
        origin: [f64; 2],
        end: f64,
        size: f64,
        members: Vec<usize>,
        key: (f64, f64),
        stacked: bool,
    }
    let mut lines: Vec<Open> = Vec::new();
    for (i, g) in glyphs.iter().enumerate() {
        let (dir, o) = frame(g);
        let size = size_of(g);
        let advance_user = (g.bbox[2] - g.bbox[0])
            .abs()
            .max((g.bbox[3] - g.bbox[1]).abs());
        let joins = |l: &Open, dir: [f64; 2]| {
            let same_dir = (l.dir[0] * dir[0] + l.dir[1] * dir[1]) > 0.99;
            let rel = [o[0] - l.origin[0], o[1] - l.origin[1]];
            let along = rel[0] * l.dir[0] + rel[1] * l.dir[1];
            let across = rel[1] * l.dir[0] - rel[0] * l.dir[1];
            same_dir
                && across.abs() < 0.4 * l.size.min(size)
                && along > l.end - 0.6 * l.size
                && along < l.end + 6.0 * l.size
        };
        let joined = match lines.last_mut() {
            Some(l) if l.stacked => {
                (upright_cjk(g) && joins(l, down(dir)))
                    || set_in_column(l.dir, l.origin, l.end, l.size, g)
            }
            Some(l) if joins(l, dir) => true,
            Some(l) => {
                let starts_column = l.members.len() == 1
                    && upright_cjk(&glyphs[l.members[0]])
                    && ((upright_cjk(g) && stacks_under(&glyphs[l.members[0]], g))
                        || ends_short_column(&glyphs[l.members[0]], g));
                let opens_column = l.members.len() == 1
                    && upright_cjk(g)
                    && opens_column(&glyphs[l.members[0]], g);
                if starts_column {
                    // The one-character line becomes the column's first character.
                    let first = &glyphs[l.members[0]];
                    l.dir = down(frame(first).0);
                    l.stacked = true;
                    l.end = advance_along(first, l.dir).unwrap_or(l.size);
                } else if opens_column {
                    // A vertical bracket opens the column: measure from the column's left
                    // edge level with the bracket's top, as for one set inside it.
                    let first = &glyphs[l.members[0]];
                    l.dir = down(dir);
                    let rel = [o[0] - l.origin[0], o[1] - l.origin[1]];
                    let along = rel[0] * l.dir[0] + rel[1] * l.dir[1];
                    l.origin = [o[0] - along * l.dir[0], o[1] - along * l.dir[1]];
                    l.stacked = true;
                    l.end = advance_along(first, l.dir).unwrap_or(l.size);
                }
                starts_column || opens_column
            }
            None => false,
        };
        if !joined {
            lines.push(Open {
                dir,
                origin: o,
                end: 0.0,
                size,
                members: Vec::new(),
                key: (-o[1], o[0]),
                stacked: false,
            });
        }
        let Some(l) = lines.last_mut() else { continue };
        let rel = [o[0] - l.origin[0], o[1] - l.origin[1]];
        let along = rel[0] * l.dir[0] + rel[1] * l.dir[1];
        let width = advance_along(g, l.dir).unwrap_or(advance_user);
        l.members.push(i);
        l.end = l.end.max(along + width);
    }
    lines.sort_by(|a, b| {
        let ya = (a.key.0 / 2.0).round();
        let yb = (b.key.0 / 2.0).round();
        ya.total_cmp(&yb).then(a.key.1.total_cmp(&b.key.1))
    });
    lines
        .into_iter()
        .map(|l| Line {
            stacked: l.stacked,
            ..text_of(glyphs, &l.members, l.dir, l.stacked, breaks)
        })
        .collect()
}

/// A CJK character in a vertical font (a comma or bracket set for vertical writing) that
/// continues a column of upright characters stacked in a horizontal font, as Distiller
/// mixes the two: it runs the column's way, in its size, its origin (the top centre of its
/// cell) half an em across from the column's left edge, where the column goes on.
fn set_in_column(dir: [f64; 2], origin: [f64; 2], end: f64, size: f64, g: &Glyph) -> bool {
    let (gdir, o) = frame(g);
    if !g.vertical || !cjk(g) || (dir[0] * gdir[0] + dir[1] * gdir[1]) < 0.99 {
        return false;
    }
    if (size_of(g) - size).abs() > 0.05 * size {
        return false;
    }
    let rel = [o[0] - origin[0], o[1] - origin[1]];
    let along = rel[0] * dir[0] + rel[1] * dir[1];
    let across = rel[1] * dir[0] - rel[0] * dir[1];
    // The column's end counts from its glyphs' baselines, an em below their cells' tops.
    (across.abs() - 0.5 * size).abs() < 0.25 * size
        && along > end - 1.2 * size
        && along < end + 2.0 * size
}

/// `g`, a CJK character in a vertical font (a full stop set for vertical writing),
/// continues a column whose one character so far is `first`, upright in a horizontal
/// font: the last characters of a paragraph carried over to a new column ("る。").
fn ends_short_column(first: &Glyph, g: &Glyph) -> bool {
    let (dir, origin) = frame(first);
    let col = down(dir);
    let size = size_of(first);
    let end = advance_along(first, col).unwrap_or(size);
    set_in_column(col, origin, end, size, g)
}

/// `b`, an upright CJK character in a horizontal font, starts right under `a`, a CJK
/// character in a vertical font (an opening bracket), in the same size: the two begin a
/// column.
fn opens_column(a: &Glyph, b: &Glyph) -> bool {
    let (dir_a, oa) = frame(a);
    let (dir_b, ob) = frame(b);
    let size = size_of(b);
    let col = down(dir_b);
    if !a.vertical || !cjk(a) || (dir_a[0] * col[0] + dir_a[1] * col[1]) < 0.99 {
        return false;
    }
    if (size_of(a) - size).abs() > 0.05 * size {
        return false;
    }
    let rel = [oa[0] - ob[0], oa[1] - ob[1]];
    let across = rel[1] * col[0] - rel[0] * col[1];
    let gap = box_start(b, col) - (box_start(a, col) + advance_along(a, col).unwrap_or(size));
    (across.abs() - 0.5 * size).abs() < 0.25 * size && gap.abs() < 0.5 * size
}

/// Down the page from a line running along `dir`: `dir` turned a quarter clockwise.
fn down(dir: [f64; 2]) -> [f64; 2] {
    [dir[1], -dir[0]]
}

/// One full-width CJK character (ideograph, kana, CJK punctuation, full-width form or
/// Hangul syllable) in a horizontal font: a character that may be set in a column.
fn upright_cjk(g: &Glyph) -> bool {
    !g.vertical && cjk(g)
}

/// One full-width CJK character, in any font.
fn cjk(g: &Glyph) -> bool {
    let mut chars = g.unicode.as_deref().unwrap_or_default().chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return false;
    };
    matches!(u32::from(c),
            0x3000..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF
                | 0xF900..=0xFAFF | 0xFF01..=0xFF60)
}

/// `b` sits right under `a` as the next character of a column: the same horizontal
/// position (within a fifth of the em) and one em lower (0.8 to 1.5 em: the character
/// and a little leading), both in the same size and direction.
fn stacks_under(a: &Glyph, b: &Glyph) -> bool {
    let (dir, oa) = frame(a);
    let (dir_b, ob) = frame(b);
    let size = size_of(a);
    if (dir[0] * dir_b[0] + dir[1] * dir_b[1]) < 0.99 || (size_of(b) - size).abs() > 0.05 * size {
        return false;
    }
    let rel = [ob[0] - oa[0], ob[1] - oa[1]];
    let across = rel[0] * dir[0] + rel[1] * dir[1];
    let d = down(dir);
    let step = rel[0] * d[0] + rel[1] * d[1];
    across.abs() < 0.2 * size && (0.8 * size..=1.5 * size).contains(&step)
}

/// A glyph that reads as several letters (a ligature such as "fi").
fn is_ligature(g: &Glyph) -> bool {
    let text = g.unicode.as_deref().map(fold_forms).unwrap_or_default();
    text.chars().count() > 1 && text.chars().all(char::is_alphabetic)
}

/// Where the glyph's box begins along `dir` (user space).
fn box_start(g: &Glyph, dir: [f64; 2]) -> f64 {
    let xs = [g.bbox[0] * dir[0], g.bbox[2] * dir[0]];
    let ys = [g.bbox[1] * dir[1], g.bbox[3] * dir[1]];
    xs[0].min(xs[1]) + ys[0].min(ys[1])
}

/// The glyph's advance measured along `dir` (user space), from its box.
///
/// The box is the upright box around the glyph's box as drawn: along a baseline at an
/// odd angle (a watermark set at 45°) it is wider than the glyph by the glyph's height
/// turned onto the baseline, so each glyph would seem to end an em past the next one's
/// start and every glyph opened a line of its own. There the pen's advance along its
/// own baseline (text space through the rendering matrix, horizontal scaling taken as
/// 100 %) measures it, when shorter.
fn advance_along(g: &Glyph, dir: [f64; 2]) -> Option<f64> {
    let w = (g.bbox[2] - g.bbox[0]) * dir[0].abs() + (g.bbox[3] - g.bbox[1]) * dir[1].abs();
    let oblique = dir[0].abs() > OBLIQUE && dir[1].abs() > OBLIQUE;
    let own = writing_dir(g);
    let w = if oblique && !g.vertical && (own[0] * dir[0] + own[1] * dir[1]) > 0.99 {
        let pen = g.advance.abs() * g.trm[0].hypot(g.trm[1]) / g.font_size.abs().max(1e-9);
        if pen.is_finite() && pen > 0.0 {
            w.min(pen)
        } else {
            w
        }
    } else {
        w
    };
    w.is_finite().then_some(w)
}

/// A direction whose two components both exceed this is at an odd angle to the axes.
const OBLIQUE: f64 = 0.05;

/// Whether `c` is a presentation form: a Latin or Armenian ligature, a Hebrew or Arabic
/// presentation form, or a vertical or CJK compatibility form.
fn is_presentation_form(c: char) -> bool {
    matches!(u32::from(c), 0xFB00..=0xFDFF | 0xFE10..=0xFE1F | 0xFE30..=0xFE4F | 0xFE70..=0xFEFF)
}

/// A glyph's text as lines (and so finding) read it: presentation forms folded to the
/// characters they present (NFKC), as PDFium reads them for `/v1/text` ("ﬁ" → "fi", an
/// Arabic final form → its letter, a vertical bracket "﹁" → "「"). Everything else is
/// kept as the font maps it.
pub(crate) fn fold_forms(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    if !text.chars().any(is_presentation_form) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_presentation_form(c) {
            out.extend(c.to_string().nfkc());
        } else {
            out.push(c);
        }
    }
    out
}

/// The text of a line's glyphs, with a space where the gap before a glyph is over a fifth
/// of its size. A stacked column measures gaps between glyph boxes: it mixes horizontal
/// glyphs (origin on the baseline) with vertical ones (origin at the top).
fn text_of(
    glyphs: &[Glyph],
    members: &[usize],
    dir: [f64; 2],
    stacked: bool,
    breaks: Option<&Breaks>,
) -> Line {
    let mut text = String::new();
    let mut byte_glyph = Vec::new();
    let mut prev_end: Option<f64> = None;
    let mut prev_space = true;
    let mut prev: Option<usize> = None;
    for &i in members {
        let g = &glyphs[i];
        let pos = if stacked {
            box_start(g, dir)
        } else {
            g.trm[4] * dir[0] + g.trm[5] * dir[1]
        };
        let uni = g
            .unicode
            .as_deref()
            .map_or_else(|| "\u{FFFD}".into(), fold_forms);
        let is_space = uni.chars().all(char::is_whitespace);
        if let (true, Some(end), Some(p)) = (is_space, prev_end, prev) {
            // A space drawn inside a ligature (a producer that maps "fi" to "fi " or
            // draws a space glyph over it) separates nothing; reading drops it too.
            if is_ligature(&glyphs[p]) && pos < end - 0.05 * size_of(g) {
                continue;
            }
        }
        if let Some(end) = prev_end {
            // A gap reading joins (a ligature's short advance) is no word break.
            let joined = prev.and_then(|p| breaks?.between(p, i)) == Some(false);
            let gap = pos - end > 0.2 * size_of(g) && !joined;
            if gap && !prev_space && !is_space {
                text.push(' ');
                byte_glyph.push(None);
            }
        }
        if is_space && prev_space && !text.is_empty() {
            // Runs of space glyphs read as one space (OCR layers pad words with several).
            prev_end = Some(pos + advance_along(g, dir).unwrap_or(0.0));
            continue;
        }
        for c in uni.chars() {
            // Every whitespace becomes one plain space so phrases match across layouts.
            let c = if c.is_whitespace() { ' ' } else { c };
            let start = text.len();
            text.push(c);
            byte_glyph.extend(std::iter::repeat_n(Some(i), text.len() - start));
        }
        prev_space = is_space;
        prev = Some(i);
        prev_end = Some(pos + advance_along(g, dir).unwrap_or(0.0));
    }
    Line {
        text,
        byte_glyph,
        stacked: false,
    }
}

/// Where reading (PDFium) breaks words between glyphs: per glyph, the range of reading's
/// characters it drew, and a running count of reading's breaks (a space or line end it
/// inferred, or a whitespace character).
pub(crate) struct Breaks {
    /// Per glyph: first and last index of its characters in reading.
    pub runs: Vec<Option<(usize, usize)>>,
    /// `upto[k]`: breaks among reading's characters `0..k`.
    pub upto: Vec<u32>,
}

impl Breaks {
    /// Whether reading puts a break between glyph `a` and the glyph `b` after it; `None`
    /// when either has no characters in reading or reading orders them otherwise.
    pub fn between(&self, a: usize, b: usize) -> Option<bool> {
        let (_, last) = (*self.runs.get(a)?)?;
        let (first, _) = (*self.runs.get(b)?)?;
        (first > last).then(|| self.upto[first] > self.upto[last + 1])
    }
}

/// Displayed geometry of a page: visible box and rotation, for top-left API boxes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageGeom {
    left: f64,
    bottom: f64,
    width: f64,
    height: f64,
    rotation: i64,
}

impl PageGeom {
    /// Reads /CropBox (else /MediaBox) and /Rotate, inherited through the page tree.
    pub fn read(doc: &Document, page_id: ObjectId) -> PageGeom {
        let rect = |key: &[u8]| -> Option<[f64; 4]> {
            let arr = inherited(doc, page_id, key)?;
            let arr = arr.as_array().ok()?;
            let v: Vec<f64> = arr
                .iter()
                .filter_map(|o| doc.dereference(o).ok()?.1.as_float().ok().map(f64::from))
                .collect();
            (v.len() == 4).then(|| {
                [
                    v[0].min(v[2]),
                    v[1].min(v[3]),
                    v[0].max(v[2]),
                    v[1].max(v[3]),
                ]
            })
        };
        let media = rect(b"MediaBox").unwrap_or([0.0, 0.0, 612.0, 792.0]);
        let r = rect(b"CropBox").map_or(media, |c| {
            [
                c[0].max(media[0]),
                c[1].max(media[1]),
                c[2].min(media[2]),
                c[3].min(media[3]),
            ]
        });
        let rotation = inherited(doc, page_id, b"Rotate")
            .and_then(|o| o.as_i64().ok())
            .unwrap_or(0)
            .rem_euclid(360);
        PageGeom {
            left: r[0],
            bottom: r[1],
            width: r[2] - r[0],
            height: r[3] - r[1],
            rotation,
        }
    }

    /// How far from user-space point `(x, y)` along unit vector `dir` the visible page
    /// ends (text drawn beyond it is cut off and extracts as nothing).
    pub fn distance_to_edge(&self, x: f64, y: f64, dir: [f64; 2]) -> f64 {
        let (right, top) = (self.left + self.width, self.bottom + self.height);
        let mut t = f64::INFINITY;
        if dir[0] > 1e-9 {
            t = t.min((right - x) / dir[0]);
        } else if dir[0] < -1e-9 {
            t = t.min((self.left - x) / dir[0]);
        }
        if dir[1] > 1e-9 {
            t = t.min((top - y) / dir[1]);
        } else if dir[1] < -1e-9 {
            t = t.min((self.bottom - y) / dir[1]);
        }
        t.max(0.0)
    }

    fn point(&self, x: f64, y: f64) -> (f64, f64) {
        let u = x - self.left;
        let v = self.height - (y - self.bottom);
        match self.rotation {
            90 => (self.height - v, u),
            180 => (self.width - u, self.height - v),
            270 => (v, self.width - u),
            _ => (u, v),
        }
    }

    /// The visible box's left and right edge in user space.
    pub fn x_range(&self) -> (f64, f64) {
        (self.left, self.left + self.width)
    }

    /// A user-space point to displayed top-left points.
    pub fn display_point(&self, x: f64, y: f64) -> (f64, f64) {
        self.point(x, y)
    }

    /// A user-space box to a displayed `[x0, y0, x1, y1]`.
    pub fn display_box(&self, b: [f64; 4]) -> [f64; 4] {
        let (ax, ay) = self.point(b[0], b[1]);
        let (bx, by) = self.point(b[2], b[3]);
        [ax.min(bx), ay.min(by), ax.max(bx), ay.max(by)]
    }

    /// Width and height of the page as displayed (rotation applied), in points.
    pub fn display_size(&self) -> (f64, f64) {
        match self.rotation {
            90 | 270 => (self.height, self.width),
            _ => (self.width, self.height),
        }
    }

    /// A displayed top-left point `(u, v)` back to user space: the inverse of
    /// [`PageGeom::display_box`]'s mapping.
    pub fn user_point(&self, u: f64, v: f64) -> (f64, f64) {
        let (u0, v0) = match self.rotation {
            90 => (v, self.height - u),
            180 => (self.width - u, self.height - v),
            270 => (self.width - v, u),
            _ => (u, v),
        };
        (self.left + u0, self.bottom + self.height - v0)
    }
}

fn inherited(doc: &Document, page_id: ObjectId, key: &[u8]) -> Option<Object> {
    let mut id = page_id;
    for _ in 0..32 {
        let dict = doc.get_dictionary(id).ok()?;
        if let Ok(v) = dict.get(key) {
            return doc.dereference(v).ok().map(|(_, o)| o.clone());
        }
        id = dict.get(b"Parent").ok()?.as_reference().ok()?;
    }
    None
}

/// Union of boxes.
pub(crate) fn union(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0].min(b[0]),
        a[1].min(b[1]),
        a[2].max(b[2]),
        a[3].max(b[3]),
    ]
}

/// A box in the page's user space as a top-left display box.
pub(crate) fn display_box(doc: &Document, page_id: ObjectId, user: [f64; 4]) -> [f64; 4] {
    PageGeom::read(doc, page_id).display_box(user)
}

/// An annotation's /Rect on its page as a top-left display box.
pub(crate) fn page_geom_box(
    doc: &Document,
    page_id: ObjectId,
    annot: ObjectId,
) -> Option<[f64; 4]> {
    let d = doc.get_dictionary(annot).ok()?;
    let rect = doc
        .dereference(d.get(b"Rect").ok()?)
        .ok()?
        .1
        .as_array()
        .ok()?;
    let v: Vec<f64> = rect
        .iter()
        .filter_map(|o| match o {
            Object::Integer(i) => Some(*i as f64),
            Object::Real(r) => Some(f64::from(*r)),
            _ => None,
        })
        .collect();
    let [x0, y0, x1, y1] = v.as_slice() else {
        return None;
    };
    Some(display_box(
        doc,
        page_id,
        [x0.min(*x1), y0.min(*y1), x0.max(*x1), y0.max(*y1)],
    ))
}
