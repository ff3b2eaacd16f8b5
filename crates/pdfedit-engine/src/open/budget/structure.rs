//! The structure pass: pages, the forms, appearances and patterns they draw, decoded once
//! under the byte budget and tokenised to count operators, form depth and draws.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use lopdf::{Dictionary, Document, Object, ObjectId};
use pdf_content::{Lexer, TokenKind};

use super::bytes::{bound, decoded_size, Filter, RawStream};
use super::{refuse, Limits, Measured, Scan};
use crate::{Error, Result};

/// Cost of drawing one form once: its operators (nested forms included), the forms it
/// draws (nested included) and how deep they nest below it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cost {
    operators: u64,
    draws: u64,
    depth: u32,
    /// Codes shown in the font the stream was drawn with (before any `Tf` of its own, its
    /// forms' included): the caller costs them with its Type 3 font, if any.
    inherited: u64,
}

impl Cost {
    /// The dearest of `costs` in each measure (a Type 3 font's dearest glyph).
    fn dearest(costs: &[Cost]) -> Cost {
        costs.iter().fold(Cost::default(), |m, c| Cost {
            operators: m.operators.max(c.operators),
            draws: m.draws.max(c.draws),
            depth: m.depth.max(c.depth),
            inherited: 0,
        })
    }

    /// This cost plus `times` draws of `c` (saturating; depth is the deeper of the two).
    fn plus(self, c: Cost, times: u64) -> Cost {
        Cost {
            operators: self
                .operators
                .saturating_add(c.operators.saturating_mul(times)),
            draws: self.draws.saturating_add(c.draws.saturating_mul(times)),
            depth: self.depth.max(c.depth),
            inherited: self
                .inherited
                .saturating_add(c.inherited.saturating_mul(times)),
        }
    }
}

/// The font a content stream shows text in, as far as the scan cares.
#[derive(Clone)]
enum Font {
    /// Not selected in this stream: the caller's (a form inherits the graphics state).
    Inherited,
    /// Not a Type 3 font: its glyphs run no content.
    Plain,
    /// A Type 3 font: each code's glyph procedure cost, and the dearest of them.
    Type3(Rc<Glyphs>, Cost),
}

/// How a drawn form's inherited codes are costed: by the drawing stream's font.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Shows {
    /// Passed up: the drawing stream's own font is inherited.
    Up,
    /// Free: a plain font.
    Free,
    /// Each code at most this many operators and form draws (the dearest glyph).
    Glyph(u64, u64, u32),
}

pub(super) struct Walker<'a> {
    doc: &'a Document,
    limits: &'a Limits,
    measured: &'a mut Measured,
    /// Costed streams (forms, patterns, appearances, shared page contents).
    memo: HashMap<ObjectId, Cost>,
    /// Forms being costed (a form that draws itself is not expanded, as PDFium does).
    stack: Vec<ObjectId>,
    /// The cost of each code's glyph procedure of the Type 3 fonts met so far (`None`: not
    /// a Type 3 font).
    type3: HashMap<ObjectId, Option<Rc<Glyphs>>>,
    /// Costed page contents of several streams (run as one, as PDFium concatenates them).
    pages_memo: HashMap<Vec<ObjectId>, Cost>,
}

/// What drawing each one-byte code of a Type 3 font costs: its glyph procedure's.
type Glyphs = [Cost; 256];

pub(super) fn structure(
    doc: &Document,
    limits: &Limits,
    measured: &mut Measured,
    out: &mut Scan,
) -> Result<usize> {
    let pages = doc.get_pages();
    let mut distinct = HashSet::new();
    for (number, id) in &pages {
        if !distinct.insert(*id) {
            return refuse(
                "page_tree",
                format!(
                    "the page tree is damaged: page object {} {} is listed more than once (page {number})",
                    id.0, id.1
                ),
            );
        }
        let is_tree_node = doc
            .get_dictionary(*id)
            .ok()
            .and_then(|d| d.get(b"Type").ok())
            .and_then(|t| t.as_name().ok())
            == Some(b"Pages".as_slice());
        if is_tree_node {
            return refuse(
                "page_tree",
                format!("the page tree is damaged: page {number} is a page tree node (the tree lists itself)"),
            );
        }
        if let Ok(page) = doc.get_dictionary(*id) {
            check_page_size(doc, page, *number, limits)?;
        }
    }
    let mut walker = Walker {
        doc,
        limits,
        measured,
        memo: HashMap::new(),
        stack: Vec::new(),
        type3: HashMap::new(),
        pages_memo: HashMap::new(),
    };
    for (number, id) in &pages {
        let Ok(page) = doc.get_dictionary(*id) else {
            continue;
        };
        let resources = inherited(doc, page, b"Resources");
        let mut cost = Cost::default();
        let c = walker.page_content_cost(&content_ids(page), resources)?;
        cost = walker.sum(cost, c, 1, *number)?;
        for ap in appearance_ids(doc, page) {
            // An appearance stream is drawn as a form.
            let c = walker.stream_cost(ap, None, 1)?;
            let c = Cost {
                draws: c.draws.saturating_add(1),
                depth: c.depth + 1,
                ..c
            };
            cost = walker.sum(cost, c, 1, *number)?;
        }
        out.page_operators = out.page_operators.max(cost.operators);
        out.form_depth = out.form_depth.max(cost.depth);
        out.form_draws = out.form_draws.max(cost.draws);
    }
    Ok(pages.len())
}

impl Walker<'_> {
    /// `into` plus `times` draws of `c`, checked against the page's limits.
    fn sum(&self, into: Cost, c: Cost, times: u64, page: u32) -> Result<Cost> {
        let out = into.plus(c, times);
        self.check(out, page)?;
        Ok(out)
    }

    /// A page's content streams run as one (a font or state set in one holds in the next,
    /// as PDFium concatenates them); one stream is costed as any other (memoised).
    fn page_content_cost(
        &mut self,
        ids: &[ObjectId],
        resources: Option<&Dictionary>,
    ) -> Result<Cost> {
        if ids.len() == 1 {
            return self.stream_cost(ids[0], resources, 0);
        }
        if let Some(c) = self.pages_memo.get(ids) {
            return Ok(*c);
        }
        let mut content = Vec::new();
        for id in ids {
            let Ok(stream) = self.doc.get_object(*id).and_then(Object::as_stream) else {
                continue;
            };
            if self.measured.ids.insert(*id) {
                content.append(&mut self.decode(stream)?);
            } else {
                // Counted already (another page lists it): decoded again, not counted again.
                content.append(&mut self.decode_uncounted(stream)?);
            }
            content.push(b'\n');
        }
        let cost = self.content_cost(&content, resources, 0)?;
        self.pages_memo.insert(ids.to_vec(), cost);
        Ok(cost)
    }

    fn check(&self, c: Cost, page: u32) -> Result<()> {
        let l = self.limits;
        if c.operators > l.page_operators {
            return refuse(
                "page_operators",
                format!(
                    "page {page} executes more than {} operators (forms counted as often as they are drawn)",
                    l.page_operators
                ),
            );
        }
        if c.depth > l.form_depth {
            return refuse(
                "form_depth",
                format!("page {page} nests forms more than {} deep", l.form_depth),
            );
        }
        if c.draws > l.form_draws {
            return refuse(
                "form_draws",
                format!(
                    "page {page} draws forms more than {} times (nested draws included)",
                    l.form_draws
                ),
            );
        }
        Ok(())
    }

    /// The cost of running the content stream `id` once with `resources` (its own
    /// `/Resources` first), `depth` forms below the page.
    fn stream_cost(
        &mut self,
        id: ObjectId,
        resources: Option<&Dictionary>,
        depth: u32,
    ) -> Result<Cost> {
        if let Some(c) = self.memo.get(&id) {
            return Ok(*c);
        }
        if self.stack.contains(&id) || depth > self.limits.form_depth.saturating_add(1) {
            // Drawing itself: PDFium refuses the recursion; the depth check ends ours.
            return Ok(Cost::default());
        }
        let Ok(stream) = self.doc.get_object(id).and_then(Object::as_stream) else {
            return Ok(Cost::default());
        };
        let content = self.decode(stream)?;
        self.measured.ids.insert(id);
        let own = stream
            .dict
            .get(b"Resources")
            .ok()
            .and_then(|r| self.doc.dereference(r).ok())
            .and_then(|(_, r)| r.as_dict().ok());
        let resources = own.or(resources);
        self.stack.push(id);
        let cost = self.content_cost(&content, resources, depth);
        self.stack.pop();
        let cost = cost?;
        self.memo.insert(id, cost);
        Ok(cost)
    }

    /// Decodes a content stream under the byte budget and counts it. A stream whose
    /// filters could decode past the budget is first counted streaming (nothing held), so
    /// a bomb is refused without materialising its first few hundred megabytes.
    fn decode(&mut self, stream: &lopdf::Stream) -> Result<Vec<u8>> {
        let content = self.decode_uncounted(stream)?;
        self.measured.add(content.len() as u64, self.limits)?;
        Ok(content)
    }

    /// [`Self::decode`] without adding to the document's count (a stream counted already).
    fn decode_uncounted(&self, stream: &lopdf::Stream) -> Result<Vec<u8>> {
        let remaining = self
            .limits
            .document_bytes
            .saturating_sub(self.measured.total);
        let cap = self.limits.stream_bytes.min(remaining);
        let over = |limits: &Limits| {
            if remaining < limits.stream_bytes {
                refuse(
                    "document_bytes",
                    format!(
                        "the document's streams decode to more than {} bytes",
                        limits.document_bytes
                    ),
                )
            } else {
                refuse(
                    "stream_bytes",
                    format!(
                        "a content stream decodes to more than {} bytes",
                        limits.stream_bytes
                    ),
                )
            }
        };
        // The filters, resolved when the array sits behind a reference (lopdf reads only
        // direct ones; PDFium resolves it).
        let filter_obj = stream
            .dict
            .get(b"Filter")
            .ok()
            .and_then(|f| self.doc.dereference(f).ok())
            .map(|(_, f)| f.clone());
        let names: Vec<Vec<u8>> = match &filter_obj {
            Some(Object::Name(n)) => vec![n.clone()],
            Some(Object::Array(a)) => a
                .iter()
                .filter_map(|o| o.as_name().ok().map(<[u8]>::to_vec))
                .collect(),
            _ => Vec::new(),
        };
        let filters: Vec<Filter> = names.iter().map(|n| Filter::from_name(n)).collect();
        let raw = RawStream {
            data: 0..stream.content.len(),
            filters,
            samples: None,
        };
        if bound(&raw) > cap && decoded_size(&stream.content, &raw, cap).is_err() {
            return over(self.limits);
        }
        let mut direct = stream.clone();
        if let Some(f) = filter_obj {
            direct.dict.set("Filter", f);
        }
        let cap = usize::try_from(cap).unwrap_or(usize::MAX);
        let content = match direct.decompressed_content_with_limit(cap) {
            Ok(c) => c,
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded {
                ..
            })) => return over(self.limits),
            // Undecodable (or an image filter): PDFium reads what it can of the raw bytes.
            Err(_) => stream.content.clone(),
        };
        Ok(content)
    }

    fn content_cost(
        &mut self,
        content: &[u8],
        resources: Option<&Dictionary>,
        depth: u32,
    ) -> Result<Cost> {
        let doc = self.doc;
        let xobjects = resources.and_then(|r| sub_dict(doc, r, b"XObject"));
        let patterns = resources.and_then(|r| sub_dict(doc, r, b"Pattern"));
        let fonts = resources.and_then(|r| sub_dict(doc, r, b"Font"));
        let mut cost = Cost::default();
        let mut last_name: Option<Vec<u8>> = None;
        // The first name operand since the last operator (`/F1 12 Tf`).
        let mut first_name: Option<Vec<u8>> = None;
        // The bytes of the string operands since the last operator (`Tj`, `TJ`, `'`, `"`).
        let mut shown: Vec<u8> = Vec::new();
        // The selected font, and those saved by `q`.
        let mut font = Font::Inherited;
        let mut saved: Vec<Font> = Vec::new();
        // Forms are costed once each, then multiplied by how often this stream draws them
        // (apart by the font they are drawn with, which their inherited text shows in).
        let mut drawn: HashMap<(ObjectId, Shows), u64> = HashMap::new();
        let too_many = |limit: u64| {
            refuse(
                "page_operators",
                format!("a page executes more than {limit} operators (Type 3 glyphs and forms counted as often as they are drawn)"),
            )
        };
        for token in Lexer::new(content) {
            match token.kind {
                TokenKind::Operator(op) => {
                    cost.operators += 1;
                    if cost.operators > self.limits.page_operators {
                        return too_many(self.limits.page_operators);
                    }
                    let target = match op.as_slice() {
                        b"Do" => last_name.as_deref().and_then(|n| lookup(xobjects, n)),
                        b"scn" | b"SCN" => last_name.as_deref().and_then(|n| lookup(patterns, n)),
                        _ => None,
                    };
                    if let Some(id) = target.filter(|id| self.is_drawn_stream(*id)) {
                        let shows = match &font {
                            Font::Inherited => Shows::Up,
                            Font::Plain => Shows::Free,
                            Font::Type3(_, m) => Shows::Glyph(m.operators, m.draws, m.depth),
                        };
                        *drawn.entry((id, shows)).or_default() += 1;
                    }
                    match op.as_slice() {
                        b"q" => saved.push(font.clone()),
                        b"Q" => {
                            if let Some(f) = saved.pop() {
                                font = f;
                            }
                        }
                        b"Tf" => {
                            let glyphs = match first_name.as_deref() {
                                Some(name) => self.type3_glyphs(fonts, name, resources, depth)?,
                                None => None,
                            };
                            font = match glyphs {
                                Some(g) => {
                                    let dearest = Cost::dearest(&g[..]);
                                    Font::Type3(g, dearest)
                                }
                                None => Font::Plain,
                            };
                        }
                        b"Tj" | b"TJ" | b"'" | b"\"" => match &font {
                            Font::Type3(g, _) => {
                                // Each code draws its glyph procedure once, like a form.
                                for code in &shown {
                                    let c = g[usize::from(*code)];
                                    cost.operators = cost.operators.saturating_add(c.operators);
                                    cost.draws = cost.draws.saturating_add(c.draws);
                                    cost.depth = cost.depth.max(c.depth);
                                }
                                if cost.operators > self.limits.page_operators {
                                    return too_many(self.limits.page_operators);
                                }
                                self.check(cost, 0).map_err(unknown_page)?;
                            }
                            Font::Inherited => {
                                cost.inherited = cost.inherited.saturating_add(shown.len() as u64);
                            }
                            Font::Plain => {}
                        },
                        _ => {}
                    }
                    last_name = None;
                    first_name = None;
                    shown.clear();
                }
                TokenKind::InlineImage { .. } => cost.operators += 1,
                TokenKind::Name(n) => {
                    if first_name.is_none() {
                        first_name = Some(n.clone());
                    }
                    last_name = Some(n);
                }
                TokenKind::LiteralString(s) | TokenKind::HexString(s) => {
                    if !matches!(font, Font::Plain) {
                        shown.extend_from_slice(&s);
                    }
                    last_name = None;
                }
                _ => last_name = None,
            }
        }
        self.plus_drawn(cost, drawn, resources, depth)
    }

    /// `cost` plus the streams it draws (forms and patterns, each costed once), each as
    /// often as it is drawn and with its inherited text costed in the font it is drawn
    /// with.
    fn plus_drawn(
        &mut self,
        mut cost: Cost,
        drawn: HashMap<(ObjectId, Shows), u64>,
        resources: Option<&Dictionary>,
        depth: u32,
    ) -> Result<Cost> {
        for ((id, shows), times) in drawn {
            let c = self.stream_cost(id, resources, depth + 1)?;
            // The form's text in the font it inherits from here.
            let (glyph_ops, glyph_draws, glyph_depth, up) = match shows {
                Shows::Up => (0, 0, 0, c.inherited),
                Shows::Free => (0, 0, 0, 0),
                Shows::Glyph(o, d, depth) => (
                    c.inherited.saturating_mul(o),
                    c.inherited.saturating_mul(d),
                    if c.inherited > 0 { depth } else { 0 },
                    0,
                ),
            };
            let c = Cost {
                operators: c.operators.saturating_add(glyph_ops),
                draws: c.draws.saturating_add(1).saturating_add(glyph_draws),
                depth: (c.depth + 1).max(glyph_depth + 1),
                inherited: up,
            };
            cost = cost.plus(c, times);
            self.check(cost, 0).map_err(unknown_page)?;
        }
        Ok(cost)
    }

    /// The glyph costs of the font `name` of `fonts` when it is a Type 3 font: each of its
    /// `/CharProcs` streams is decoded under the byte budget and costed once (with the
    /// font's `/Resources`, else the resources of the stream that selects it); a code
    /// costs what its glyph procedure (named by `/Encoding /Differences`) costs.
    fn type3_glyphs(
        &mut self,
        fonts: Option<&Dictionary>,
        name: &[u8],
        resources: Option<&Dictionary>,
        depth: u32,
    ) -> Result<Option<Rc<Glyphs>>> {
        let doc = self.doc;
        let Some(obj) = fonts.and_then(|f| f.get(name).ok()) else {
            return Ok(None);
        };
        let id = obj.as_reference().ok();
        if let Some(known) = id.and_then(|id| self.type3.get(&id)) {
            return Ok(known.clone());
        }
        let font = doc
            .dereference(obj)
            .ok()
            .and_then(|(_, f)| f.as_dict().ok())
            .filter(|f| f.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Type3"));
        let glyphs = match font {
            Some(font) => Some(Rc::new(self.glyph_costs(font, resources, depth)?)),
            None => None,
        };
        if let Some(id) = id {
            self.type3.insert(id, glyphs.clone());
        }
        Ok(glyphs)
    }

    fn glyph_costs(
        &mut self,
        font: &Dictionary,
        resources: Option<&Dictionary>,
        depth: u32,
    ) -> Result<Glyphs> {
        let doc = self.doc;
        let mut out = [Cost::default(); 256];
        let Some(procs) = sub_dict(doc, font, b"CharProcs") else {
            return Ok(out);
        };
        let own = sub_dict(doc, font, b"Resources");
        let resources = own.or(resources);
        // Every glyph procedure, drawn or not: PDFium loads a glyph's procedure when the
        // page shows its code, and the bytes pass must not count them again.
        let mut by_name: HashMap<&[u8], Cost> = HashMap::new();
        for (glyph, proc_ref) in procs.iter() {
            let Ok(id) = proc_ref.as_reference() else {
                continue;
            };
            let c = self.stream_cost(id, resources, depth + 1)?;
            by_name.insert(
                glyph.as_slice(),
                Cost {
                    depth: c.depth + 1,
                    ..c
                },
            );
        }
        let differences = font
            .get(b"Encoding")
            .ok()
            .and_then(|e| doc.dereference(e).ok())
            .and_then(|(_, e)| e.as_dict().ok())
            .and_then(|e| e.get(b"Differences").ok())
            .and_then(|d| doc.dereference(d).ok())
            .and_then(|(_, d)| d.as_array().ok());
        let mut code: i64 = 0;
        for item in differences.into_iter().flatten() {
            match item {
                Object::Integer(n) => code = *n,
                Object::Name(glyph) => {
                    if let (Ok(at), Some(c)) =
                        (usize::try_from(code), by_name.get(glyph.as_slice()))
                    {
                        if at < 256 {
                            out[at] = *c;
                        }
                    }
                    code = code.saturating_add(1);
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// A form XObject, or a tiling pattern (both run a content stream).
    fn is_drawn_stream(&self, id: ObjectId) -> bool {
        let Ok(stream) = self.doc.get_object(id).and_then(Object::as_stream) else {
            return false;
        };
        let name = |k: &[u8]| stream.dict.get(k).and_then(Object::as_name).ok();
        name(b"Subtype") == Some(b"Form".as_slice())
            || stream
                .dict
                .get(b"PatternType")
                .and_then(Object::as_i64)
                .ok()
                == Some(1)
    }
}

/// The page number is not known inside a form; the page's own check names it.
fn unknown_page(e: Error) -> Error {
    match e {
        Error::Unsupported(m) => Error::Unsupported(m.replace("page 0", "a page")),
        other => other,
    }
}

/// The dictionary under `key` of `dict`, resolved when it is a reference.
fn sub_dict<'d>(doc: &'d Document, dict: &'d Dictionary, key: &[u8]) -> Option<&'d Dictionary> {
    let obj = dict.get(key).ok()?;
    doc.dereference(obj).ok()?.1.as_dict().ok()
}

/// Refuses a page whose MediaBox or CropBox (inherited through `/Parent`), times its
/// `/UserUnit`, is not finite or larger than `limits.page_side` on a side. A box that is
/// not four numbers is left alone: PDFium then uses a US Letter page.
fn check_page_size(doc: &Document, page: &Dictionary, number: u32, limits: &Limits) -> Result<()> {
    let unit = page
        .get(b"UserUnit")
        .ok()
        .and_then(|u| doc.dereference(u).ok())
        .and_then(|(_, u)| u.as_float().ok())
        .map_or(1.0, |u| f64::from(u).abs());
    for key in [b"MediaBox".as_slice(), b"CropBox"] {
        let Some(side) = box_side(doc, page, key) else {
            continue;
        };
        let side = side * unit;
        if !side.is_finite() || side > limits.page_side as f64 {
            let name = String::from_utf8_lossy(key);
            return refuse(
                "page_size",
                format!(
                    "page {number}'s {name} is {side:.0} units on a side (UserUnit included); pages may be at most {} units a side",
                    limits.page_side
                ),
            );
        }
    }
    Ok(())
}

/// The longer side of a page's box `key`, inherited through `/Parent` (at most 64 levels).
fn box_side(doc: &Document, page: &Dictionary, key: &[u8]) -> Option<f64> {
    let mut dict = page;
    for _ in 0..64 {
        if let Ok(obj) = dict.get(key) {
            let arr = doc.dereference(obj).ok()?.1.as_array().ok()?;
            let n: Vec<f64> = arr
                .iter()
                .filter_map(|o| doc.dereference(o).ok()?.1.as_float().ok())
                .map(f64::from)
                .collect();
            if n.len() != 4 {
                return None;
            }
            return Some((n[2] - n[0]).abs().max((n[3] - n[1]).abs()));
        }
        let parent = dict.get(b"Parent").ok()?.as_reference().ok()?;
        dict = doc.get_dictionary(parent).ok()?;
    }
    None
}

pub(super) fn lookup(dict: Option<&Dictionary>, name: &[u8]) -> Option<ObjectId> {
    dict?.get(name).ok()?.as_reference().ok()
}

/// A page attribute, inherited through `/Parent` (at most 64 levels).
pub(super) fn inherited<'d>(
    doc: &'d Document,
    page: &'d Dictionary,
    key: &[u8],
) -> Option<&'d Dictionary> {
    let mut dict = page;
    for _ in 0..64 {
        if let Ok(obj) = dict.get(key) {
            return doc.dereference(obj).ok()?.1.as_dict().ok();
        }
        let parent = dict.get(b"Parent").ok()?.as_reference().ok()?;
        dict = doc.get_dictionary(parent).ok()?;
    }
    None
}

/// The content streams of a page, in order.
pub(super) fn content_ids(page: &Dictionary) -> Vec<ObjectId> {
    match page.get(b"Contents") {
        Ok(Object::Reference(id)) => vec![*id],
        Ok(Object::Array(items)) => items.iter().filter_map(|o| o.as_reference().ok()).collect(),
        _ => Vec::new(),
    }
}

/// Normal appearance streams of a page's annotations (at most 10,000 annotations).
pub(super) fn appearance_ids(doc: &Document, page: &Dictionary) -> Vec<ObjectId> {
    let Some(annots) = page
        .get(b"Annots")
        .ok()
        .and_then(|a| doc.dereference(a).ok())
        .and_then(|(_, a)| a.as_array().ok())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for a in annots.iter().take(10_000) {
        let Some(ap) = doc
            .dereference(a)
            .ok()
            .and_then(|(_, a)| a.as_dict().ok())
            .and_then(|a| a.get(b"AP").ok())
            .and_then(|ap| doc.dereference(ap).ok())
            .and_then(|(_, ap)| ap.as_dict().ok())
            .and_then(|ap| ap.get(b"N").ok())
        else {
            continue;
        };
        out.extend(crate::open::appearance_entry_streams(doc, ap));
    }
    out
}
