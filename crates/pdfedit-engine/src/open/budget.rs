//! Budgets a document cannot escape (issue 21 item 1), checked before PDFium sees the
//! bytes: PDFium cannot be patched, and it decompresses, parses every operator of a page
//! and expands every Form XObject it draws as soon as a page is loaded.
//!
//! Two passes, each cheap on an ordinary document:
//! - **structure** (lopdf): every page's content streams and the forms, annotation
//!   appearances and tiling patterns they draw are decoded once, under the byte budget,
//!   and tokenised to count operators; forms are costed once each (memoised) and their
//!   draws multiplied through the nesting, so 20 levels of "draw the next form twice" are
//!   refused without expanding a million draws. The page tree must list distinct page
//!   objects: a tree that lists itself or one page many times is read differently by
//!   PDFium and lopdf.
//! - **bytes** (the raw file, no parser): every `stream … endstream` in the file, whatever
//!   object or revision it belongs to and whether or not lopdf could load the file. A
//!   stream's decoded size is bounded from its filters (deflate expands at most 1032:1);
//!   only the streams whose bound does not already fit are decoded, streaming and counted,
//!   never held, and never twice (the content streams measured by the structure pass are
//!   skipped).
//!
//! A refusal is [`Error::Unsupported`] whose message starts with `limit <name>:`, so the
//! service can name the limit in its hint.

use std::collections::{HashMap, HashSet};
use std::io::Read;

use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId};
use pdf_content::{Lexer, TokenKind};

use crate::{Error, Result};

/// What one call may cost. The defaults are the paid plans'; the service passes tighter
/// ones for keyless and free callers (src/billing/plans.ts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Decoded bytes of one stream.
    pub stream_bytes: u64,
    /// Decoded bytes of all the streams of the document together.
    pub document_bytes: u64,
    /// Operators one page executes, counting those of every form it draws as often as
    /// it draws them.
    pub page_operators: u64,
    /// How deep Form XObjects may nest (a page drawing a form is depth 1).
    pub form_depth: u32,
    /// Form XObjects one page draws, nested draws included.
    pub form_draws: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            stream_bytes: 512 << 20,
            document_bytes: 2 << 30,
            page_operators: 1_000_000,
            form_depth: 12,
            form_draws: 20_000,
        }
    }
}

/// What the scan learnt: lopdf's page count (`None` when lopdf cannot load the file), to
/// compare with PDFium's, and what the document costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scan {
    /// Pages lopdf lists.
    pub lopdf_pages: Option<usize>,
    /// The most operators one page executes.
    pub page_operators: u64,
    /// The deepest form nesting of a page.
    pub form_depth: u32,
    /// The most form draws of one page.
    pub form_draws: u64,
    /// Decoded bytes counted (measured, or bounded from the filters).
    pub decoded_bytes: u64,
    /// Streams the bytes pass had to decode (their bound did not settle them).
    pub streams_decoded: usize,
}

fn refuse<T>(limit: &str, message: String) -> Result<T> {
    Err(Error::Unsupported(format!("limit {limit}: {message}")))
}

/// Checks `bytes` against `limits` before any PDFium call.
pub fn scan(bytes: &[u8], password: Option<&str>, limits: &Limits) -> Result<Scan> {
    let mut measured = Measured::default();
    let mut out = Scan::default();
    let options = LoadOptions::with_password(password.unwrap_or(""));
    if let Ok(doc) = Document::load_mem_with_options(bytes, options) {
        out.lopdf_pages = Some(structure(&doc, limits, &mut measured, &mut out)?);
    }
    out.streams_decoded = raw_bytes(bytes, limits, &mut measured)?;
    out.decoded_bytes = measured.total;
    Ok(out)
}

/// PDFium's page count must be lopdf's: otherwise reading, editing and billing would each
/// see a different document.
pub fn check_page_count(scan: &Scan, pdfium_pages: u32) -> Result<()> {
    match scan.lopdf_pages {
        Some(n) if n != pdfium_pages as usize => refuse(
            "page_tree",
            format!(
                "the page tree is damaged: it lists {n} page(s) where {pdfium_pages} are counted; the two readers must agree"
            ),
        ),
        _ => Ok(()),
    }
}

/// Streams decoded by the structure pass (by the file offset of their data), and the
/// decoded bytes counted so far.
#[derive(Default)]
struct Measured {
    at: HashSet<usize>,
    total: u64,
}

impl Measured {
    fn add(&mut self, n: u64, limits: &Limits) -> Result<()> {
        self.total = self.total.saturating_add(n);
        if self.total > limits.document_bytes {
            return refuse(
                "document_bytes",
                format!(
                    "the document's streams decode to more than {} bytes",
                    limits.document_bytes
                ),
            );
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Structure pass
// ---------------------------------------------------------------------------------------

/// Cost of drawing one form once: its operators (nested forms included), the forms it
/// draws (nested included) and how deep they nest below it.
#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    operators: u64,
    draws: u64,
    depth: u32,
}

struct Walker<'a> {
    doc: &'a Document,
    limits: &'a Limits,
    measured: &'a mut Measured,
    /// Costed streams (forms, patterns, appearances, shared page contents).
    memo: HashMap<ObjectId, Cost>,
    /// Forms being costed (a form that draws itself is not expanded, as PDFium does).
    stack: Vec<ObjectId>,
}

fn structure(
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

fn lookup(dict: Option<&Dictionary>, name: &[u8]) -> Option<ObjectId> {
    dict?.get(name).ok()?.as_reference().ok()
}

/// A page attribute, inherited through `/Parent` (at most 64 levels).
fn inherited<'d>(doc: &'d Document, page: &'d Dictionary, key: &[u8]) -> Option<&'d Dictionary> {
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
fn content_ids(page: &Dictionary) -> Vec<ObjectId> {
    match page.get(b"Contents") {
        Ok(Object::Reference(id)) => vec![*id],
        Ok(Object::Array(items)) => items.iter().filter_map(|o| o.as_reference().ok()).collect(),
        _ => Vec::new(),
    }
}

/// Normal appearance streams of a page's annotations (at most 10,000 annotations).
fn appearance_ids(doc: &Document, page: &Dictionary) -> Vec<ObjectId> {
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
        match ap {
            Object::Reference(id) => match doc.get_object(*id) {
                Ok(Object::Stream(_)) => out.push(*id),
                // A dictionary of states: each state's appearance.
                Ok(Object::Dictionary(states)) => {
                    out.extend(states.iter().filter_map(|(_, s)| s.as_reference().ok()));
                }
                _ => {}
            },
            Object::Dictionary(states) => {
                out.extend(states.iter().filter_map(|(_, s)| s.as_reference().ok()));
            }
            _ => {}
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Bytes pass
// ---------------------------------------------------------------------------------------

/// One stream found in the file: its data and its filters in decoding order.
struct RawStream {
    data: std::ops::Range<usize>,
    filters: Vec<Filter>,
    /// For an image: the bytes of its samples (width x height x components x bits / 8).
    samples: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter {
    Flate,
    Lzw,
    RunLength,
    Ascii85,
    AsciiHex,
    /// An image codec (DCT, JPX, JBIG2, CCITT): its output is pixels, bounded by the
    /// image's size rather than by its stream; counting stops before it.
    Image,
    /// Named indirectly or unknown: decoded by lopdf when it can.
    Other,
}

impl Filter {
    fn from_name(name: &[u8]) -> Filter {
        match name {
            b"FlateDecode" | b"Fl" => Filter::Flate,
            b"LZWDecode" | b"LZW" => Filter::Lzw,
            b"RunLengthDecode" | b"RL" => Filter::RunLength,
            b"ASCII85Decode" | b"A85" => Filter::Ascii85,
            b"ASCIIHexDecode" | b"AHx" => Filter::AsciiHex,
            b"DCTDecode" | b"DCT" | b"JPXDecode" | b"JBIG2Decode" | b"CCITTFaxDecode" | b"CCF" => {
                Filter::Image
            }
            _ => Filter::Other,
        }
    }

    /// Most bytes one input byte can decode to.
    fn expansion(self) -> u64 {
        match self {
            // Deflate's longest match (258 bytes) costs at least two bits: 1032:1.
            Filter::Flate => 1032,
            // A 9-bit LZW code emits at most 4096 bytes.
            Filter::Lzw => 3641,
            Filter::RunLength => 64,
            // `z` is four zero bytes.
            Filter::Ascii85 => 4,
            Filter::AsciiHex | Filter::Image | Filter::Other => 1,
        }
    }
}

/// Counts every stream of the file; returns how many had to be decoded.
fn raw_bytes(bytes: &[u8], limits: &Limits, measured: &mut Measured) -> Result<usize> {
    let streams: Vec<RawStream> = find_streams(bytes)
        .into_iter()
        .filter(|s| !measured.at.contains(&s.data.start))
        .collect();
    // Bound every stream from its filters; decode only what the bounds do not settle.
    let bounds: Vec<u64> = streams.iter().map(bound).collect();
    let mut known: Vec<Option<u64>> = vec![None; streams.len()];
    for (i, s) in streams.iter().enumerate() {
        if bounds[i] > limits.stream_bytes {
            known[i] = Some(decoded_size(bytes, s, limits.stream_bytes)?);
        }
    }
    let sum = |known: &[Option<u64>]| -> u64 {
        known
            .iter()
            .zip(&bounds)
            .fold(0u64, |acc, (k, b)| acc.saturating_add(k.unwrap_or(*b)))
    };
    if measured.total.saturating_add(sum(&known)) > limits.document_bytes {
        // Largest bounds first: they are the ones that may be far from their real size.
        let mut order: Vec<usize> = (0..streams.len()).filter(|&i| known[i].is_none()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(bounds[i]));
        for i in order {
            known[i] = Some(decoded_size(bytes, &streams[i], limits.stream_bytes)?);
            if measured.total.saturating_add(sum(&known)) <= limits.document_bytes {
                break;
            }
        }
    }
    measured.add(sum(&known), limits)?;
    Ok(known.iter().filter(|k| k.is_some()).count())
}

/// Upper bound of a stream's decoded size (up to the first image codec).
fn bound(s: &RawStream) -> u64 {
    // PDFium decodes an image of one filter a row at a time and stops after its last row:
    // it never decodes more than the image's samples, whatever the stream holds.
    if let (Some(samples), [Filter::Flate | Filter::Lzw | Filter::RunLength]) =
        (s.samples, s.filters.as_slice())
    {
        return samples;
    }
    let mut n = s.data.len() as u64;
    for f in &s.filters {
        if *f == Filter::Image {
            break;
        }
        n = n.saturating_mul(f.expansion());
    }
    n
}

/// The decoded size of one stream, counted while streaming, never held; past `cap` it is
/// refused.
fn decoded_size(bytes: &[u8], s: &RawStream, cap: u64) -> Result<u64> {
    let data = &bytes[s.data.clone()];
    let chain: Vec<Filter> = s
        .filters
        .iter()
        .copied()
        .take_while(|f| *f != Filter::Image)
        .collect();
    let mut reader: Box<dyn Read + '_> = Box::new(data);
    for f in chain {
        reader = match f {
            Filter::Flate => Box::new(flate2::read::ZlibDecoder::new(reader)),
            Filter::Lzw => Box::new(LzwReader::new(reader)),
            Filter::RunLength => Box::new(RunLengthReader::new(reader)),
            // Text encodings shrink or barely grow: their input bounds them.
            Filter::Ascii85 | Filter::AsciiHex | Filter::Image | Filter::Other => reader,
        };
    }
    let mut buf = vec![0u8; 64 << 10];
    let mut total: u64 = 0;
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total += n as u64;
                if total > cap {
                    return refuse(
                        "stream_bytes",
                        format!("a stream decodes to more than {cap} bytes"),
                    );
                }
            }
        }
    }
    Ok(total)
}

/// Every `stream … endstream` of the file with the filters of its dictionary.
fn find_streams(bytes: &[u8]) -> Vec<RawStream> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = find(&bytes[pos..], b"stream") {
        let at = pos + i;
        pos = at + 6;
        if at >= 3 && &bytes[at - 3..at] == b"end" {
            continue;
        }
        // The keyword follows a dictionary's `>>`.
        let mut j = at;
        while j > 0 && is_space(bytes[j - 1]) {
            j -= 1;
        }
        if j < 2 || &bytes[j - 2..j] != b">>" {
            continue;
        }
        let mut start = at + 6;
        if bytes.get(start) == Some(&b'\r') {
            start += 1;
        }
        if bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
        let end =
            find(&bytes[start.min(bytes.len())..], b"endstream").map_or(bytes.len(), |e| start + e);
        let dict = dict_before(bytes, j);
        let mut filters = filters_of(dict);
        if filters == [Filter::Other] {
            filters = indirect_filters(bytes, dict).unwrap_or(filters);
        }
        out.push(RawStream {
            data: start.min(end)..end,
            filters,
            samples: image_samples(dict),
        });
        pos = end.max(pos);
    }
    out
}

/// The dictionary that ends at `end` (just past its `>>`), found by matching `<<`/`>>`
/// backwards within 64 KiB.
fn dict_before(bytes: &[u8], end: usize) -> &[u8] {
    let floor = end.saturating_sub(64 << 10);
    let mut depth = 0i32;
    let mut i = end;
    while i >= floor + 2 {
        match &bytes[i - 2..i] {
            b">>" => {
                depth += 1;
                i -= 2;
            }
            b"<<" => {
                depth -= 1;
                i -= 2;
                if depth == 0 {
                    return &bytes[i..end];
                }
            }
            _ => i -= 1,
        }
    }
    &bytes[floor..end]
}

/// The `/Filter` of a stream dictionary's text: one name or an array of names.
fn filters_of(dict: &[u8]) -> Vec<Filter> {
    let Some(p) = find(dict, b"/Filter") else {
        return Vec::new();
    };
    let rest = &dict[p + 7..];
    // `/FilterX` is another key.
    if rest
        .first()
        .is_some_and(|b| !is_space(*b) && !b"/[".contains(b))
    {
        return Vec::new();
    }
    let rest = &rest[rest
        .iter()
        .position(|b| !is_space(*b))
        .unwrap_or(rest.len())..];
    let names = |s: &[u8]| -> Vec<Filter> {
        s.split(|b| *b == b'/')
            .skip(1)
            .map(|n| {
                let end = n
                    .iter()
                    .position(|b| is_space(*b) || b"[]<>()%".contains(b))
                    .unwrap_or(n.len());
                Filter::from_name(&n[..end])
            })
            .collect()
    };
    match rest.first() {
        Some(b'[') => {
            let close = rest.iter().position(|b| *b == b']').unwrap_or(rest.len());
            names(&rest[1..close])
        }
        Some(b'/') => {
            let end = rest[1..]
                .iter()
                .position(|b| is_space(*b) || b"/[]<>()%".contains(b))
                .map_or(rest.len(), |e| e + 1);
            names(&rest[..end])
        }
        // An indirect filter array: unknown, counted at its raw size. The structure pass
        // has decoded it already when it is page content.
        _ => vec![Filter::Other],
    }
}

/// The filters of a `/Filter N G R` whose object `N G obj` holds a name or an array of
/// names (PDFium resolves the reference: `[/FlateDecode /FlateDecode]` hidden there must
/// count as two layers). The last definition of the object in the file wins, as in an
/// incremental update.
fn indirect_filters(bytes: &[u8], dict: &[u8]) -> Option<Vec<Filter>> {
    let p = find(dict, b"/Filter")? + 7;
    let rest = std::str::from_utf8(&dict[p..(p + 32).min(dict.len())]).ok()?;
    let mut words = rest.split_ascii_whitespace();
    let n: u32 = words.next()?.parse().ok()?;
    let g: u16 = words.next()?.parse().ok()?;
    let header = format!("{n} {g} obj");
    let mut from = 0;
    let mut last = None;
    while let Some(i) = find(&bytes[from..], header.as_bytes()) {
        let at = from + i;
        // A whole number, not the tail of a longer one (`12 0 obj` inside `112 0 obj`).
        if at == 0 || !bytes[at - 1].is_ascii_digit() {
            last = Some(at + header.len());
        }
        from = at + header.len();
    }
    let body = &bytes[last?..];
    let body = &body[..find(body, b"endobj").unwrap_or(body.len()).min(4096)];
    let mut text = b"/Filter ".to_vec();
    text.extend_from_slice(body);
    let filters = filters_of(&text);
    (filters != [Filter::Other]).then_some(filters)
}

/// The sample bytes of an image dictionary's text: `/Subtype /Image` with direct
/// `/Width`, `/Height` and `/BitsPerComponent`; four components unless the colour space
/// is named as gray or RGB.
fn image_samples(dict: &[u8]) -> Option<u64> {
    let value = |key: &[u8]| -> Option<&[u8]> {
        let mut from = 0;
        loop {
            let p = find(&dict[from..], key)? + from + key.len();
            // The key itself, not a longer one (`/Width` in `/WidthX`).
            if dict
                .get(p)
                .is_some_and(|b| is_space(*b) || b"/[<(".contains(b))
            {
                let rest = &dict[p..];
                let start = rest.iter().position(|b| !is_space(*b))?;
                return Some(&rest[start..]);
            }
            from = p;
        }
    };
    let int = |key: &[u8]| -> Option<u64> {
        let v = value(key)?;
        let end = v
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(v.len());
        // A reference (`12 0 R`) is not the number itself.
        let after = &v[end..];
        let after = &after[after
            .iter()
            .position(|b| !is_space(*b))
            .unwrap_or(after.len())..];
        if after.first().is_some_and(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(&v[..end]).ok()?.parse().ok()
    };
    if !value(b"/Subtype")?.starts_with(b"/Image") {
        return None;
    }
    let (w, h, bpc) = (
        int(b"/Width")?,
        int(b"/Height")?,
        int(b"/BitsPerComponent")?,
    );
    let components = match value(b"/ColorSpace") {
        Some(cs) if cs.starts_with(b"/DeviceGray") || cs.starts_with(b"/G") => 1,
        Some(cs) if cs.starts_with(b"/DeviceRGB") || cs.starts_with(b"/RGB") => 3,
        _ => 4,
    };
    let bits = w
        .checked_mul(components)?
        .checked_mul(bpc.clamp(1, 16))?
        .div_ceil(8);
    bits.checked_mul(h)
}

fn is_space(b: u8) -> bool {
    matches!(b, 0 | 9 | 10 | 12 | 13 | 32)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// RunLengthDecode (§7.4.5) as a reader.
struct RunLengthReader<R> {
    inner: R,
    /// Pending output: a byte repeated `count` times, or `count` literal bytes to copy.
    repeat: Option<u8>,
    count: usize,
    done: bool,
}

impl<R: Read> RunLengthReader<R> {
    fn new(inner: R) -> Self {
        RunLengthReader {
            inner,
            repeat: None,
            count: 0,
            done: false,
        }
    }

    fn byte(&mut self) -> Option<u8> {
        let mut b = [0u8];
        match self.inner.read(&mut b) {
            Ok(1) => Some(b[0]),
            _ => None,
        }
    }
}

impl<R: Read> Read for RunLengthReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() && !self.done {
            if self.count == 0 {
                match self.byte() {
                    None | Some(128) => self.done = true,
                    Some(len @ 0..=127) => {
                        self.repeat = None;
                        self.count = len as usize + 1;
                    }
                    Some(len) => {
                        self.repeat = self.byte();
                        self.done = self.repeat.is_none();
                        self.count = 257 - len as usize;
                    }
                }
                continue;
            }
            let b = match self.repeat {
                Some(b) => b,
                None => match self.byte() {
                    Some(b) => b,
                    None => {
                        self.done = true;
                        break;
                    }
                },
            };
            buf[n] = b;
            n += 1;
            self.count -= 1;
        }
        Ok(n)
    }
}

/// LZWDecode (§7.4.4, early change on) as a reader; a code it cannot read ends the data.
struct LzwReader<R> {
    inner: R,
    bits: u64,
    nbits: u32,
    width: u32,
    /// Each entry: (prefix code, last byte, length).
    table: Vec<(u16, u8, u32)>,
    prev: Option<u16>,
    out: Vec<u8>,
    out_pos: usize,
    done: bool,
}

impl<R: Read> LzwReader<R> {
    fn new(inner: R) -> Self {
        let mut r = LzwReader {
            inner,
            bits: 0,
            nbits: 0,
            width: 9,
            table: Vec::with_capacity(4096),
            prev: None,
            out: Vec::new(),
            out_pos: 0,
            done: false,
        };
        r.reset();
        r
    }

    fn reset(&mut self) {
        self.table.clear();
        for b in 0..=255u8 {
            self.table.push((u16::MAX, b, 1));
        }
        // 256 clear, 257 end of data.
        self.table.push((u16::MAX, 0, 0));
        self.table.push((u16::MAX, 0, 0));
        self.width = 9;
        self.prev = None;
    }

    fn code(&mut self) -> Option<u16> {
        while self.nbits < self.width {
            let mut b = [0u8];
            match self.inner.read(&mut b) {
                Ok(1) => {
                    self.bits = (self.bits << 8) | u64::from(b[0]);
                    self.nbits += 8;
                }
                _ => return None,
            }
        }
        self.nbits -= self.width;
        let code = (self.bits >> self.nbits) & ((1 << self.width) - 1);
        self.bits &= (1u64 << self.nbits) - 1;
        u16::try_from(code).ok()
    }

    /// The bytes of `code`, into `self.out`.
    fn emit(&mut self, code: u16) {
        let start = self.out.len();
        let mut c = code;
        while let Some(&(prefix, last, _)) = self.table.get(c as usize) {
            self.out.push(last);
            if prefix == u16::MAX {
                break;
            }
            c = prefix;
        }
        self.out[start..].reverse();
    }

    fn first_byte(&self, code: u16) -> u8 {
        let mut c = code;
        loop {
            let (prefix, last, _) = self.table[c as usize];
            if prefix == u16::MAX {
                return last;
            }
            c = prefix;
        }
    }

    fn step(&mut self) {
        let Some(code) = self.code() else {
            self.done = true;
            return;
        };
        match code {
            256 => self.reset(),
            257 => self.done = true,
            _ => {
                let known = (code as usize) < self.table.len();
                match (self.prev, known) {
                    (None, true) => self.emit(code),
                    (Some(prev), true) => {
                        self.emit(code);
                        let first = self.first_byte(code);
                        self.add(prev, first);
                    }
                    (Some(prev), false) if code as usize == self.table.len() => {
                        let first = self.first_byte(prev);
                        self.add(prev, first);
                        self.emit(code);
                    }
                    _ => {
                        self.done = true;
                        return;
                    }
                }
                self.prev = Some(code);
            }
        }
    }

    fn add(&mut self, prefix: u16, last: u8) {
        if self.table.len() < 4096 {
            let len = self.table[prefix as usize].2 + 1;
            self.table.push((prefix, last, len));
        }
        self.width = match self.table.len() + 1 {
            n if n >= 2048 => 12,
            n if n >= 1024 => 11,
            n if n >= 512 => 10,
            _ => 9,
        };
    }
}

impl<R: Read> Read for LzwReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.out_pos >= self.out.len() && !self.done {
            self.out.clear();
            self.out_pos = 0;
            self.step();
        }
        let n = (self.out.len() - self.out_pos).min(buf.len());
        buf[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
        self.out_pos += n;
        Ok(n)
    }
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
