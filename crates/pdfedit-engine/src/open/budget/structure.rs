//! The structure pass: pages, the forms, appearances and patterns they draw, decoded once
//! under the byte budget and tokenised to count operators, form depth and draws.

use std::collections::{HashMap, HashSet};

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
}

pub(super) struct Walker<'a> {
    doc: &'a Document,
    limits: &'a Limits,
    measured: &'a mut Measured,
    /// Costed streams (forms, patterns, appearances, shared page contents).
    memo: HashMap<ObjectId, Cost>,
    /// Forms being costed (a form that draws itself is not expanded, as PDFium does).
    stack: Vec<ObjectId>,
}

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
    }
    let mut walker = Walker {
        doc,
        limits,
        measured,
        memo: HashMap::new(),
        stack: Vec::new(),
    };
    for (number, id) in &pages {
        let Ok(page) = doc.get_dictionary(*id) else {
            continue;
        };
        let resources = inherited(doc, page, b"Resources");
        let mut cost = Cost::default();
        for stream_id in content_ids(page) {
            let c = walker.stream_cost(stream_id, resources, 0)?;
            cost = walker.sum(cost, c, 1, *number)?;
        }
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
        let out = Cost {
            operators: into
                .operators
                .saturating_add(c.operators.saturating_mul(times)),
            draws: into.draws.saturating_add(c.draws.saturating_mul(times)),
            depth: into.depth.max(c.depth),
        };
        self.check(out, page)?;
        Ok(out)
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
        if let Some(at) = stream.start_position {
            self.measured.at.insert(at);
        }
        self.measured.add(content.len() as u64, self.limits)?;
        Ok(content)
    }

    fn content_cost(
        &mut self,
        content: &[u8],
        resources: Option<&Dictionary>,
        depth: u32,
    ) -> Result<Cost> {
        let xobjects = resources.and_then(|r| self.sub_dict(r, b"XObject"));
        let patterns = resources.and_then(|r| self.sub_dict(r, b"Pattern"));
        let mut cost = Cost::default();
        let mut last_name: Option<Vec<u8>> = None;
        // Forms are costed once each, then multiplied by how often this stream draws them.
        let mut drawn: HashMap<ObjectId, u64> = HashMap::new();
        for token in Lexer::new(content) {
            match token.kind {
                TokenKind::Operator(op) => {
                    cost.operators += 1;
                    if cost.operators > self.limits.page_operators {
                        return refuse(
                            "page_operators",
                            format!(
                                "a page executes more than {} operators",
                                self.limits.page_operators
                            ),
                        );
                    }
                    let target = match op.as_slice() {
                        b"Do" => last_name.as_deref().and_then(|n| lookup(xobjects, n)),
                        b"scn" | b"SCN" => last_name.as_deref().and_then(|n| lookup(patterns, n)),
                        _ => None,
                    };
                    if let Some(id) = target.filter(|id| self.is_drawn_stream(*id)) {
                        *drawn.entry(id).or_default() += 1;
                    }
                    last_name = None;
                }
                TokenKind::InlineImage { .. } => cost.operators += 1,
                TokenKind::Name(n) => last_name = Some(n),
                _ => last_name = None,
            }
        }
        for (id, times) in drawn {
            let c = self.stream_cost(id, resources, depth + 1)?;
            let c = Cost {
                draws: c.draws.saturating_add(1),
                depth: c.depth + 1,
                ..c
            };
            cost = Cost {
                operators: cost
                    .operators
                    .saturating_add(c.operators.saturating_mul(times)),
                draws: cost.draws.saturating_add(c.draws.saturating_mul(times)),
                depth: cost.depth.max(c.depth),
            };
            self.check(cost, 0).map_err(|e| match e {
                // The page number is not known down here; the page's check names it.
                Error::Unsupported(m) => Error::Unsupported(m.replace("page 0", "a page")),
                other => other,
            })?;
        }
        Ok(cost)
    }

    fn sub_dict<'d>(&'d self, resources: &'d Dictionary, key: &[u8]) -> Option<&'d Dictionary> {
        let obj = resources.get(key).ok()?;
        self.doc.dereference(obj).ok()?.1.as_dict().ok()
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
