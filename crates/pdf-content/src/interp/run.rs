//! Walking the ops of a page and its forms, keeping the state.

use std::collections::{HashMap, HashSet};

use lopdf::{Document, Object, ObjectId, Stream};

use super::marked::{read_properties, MarkedSequence};
use super::matrix::{multiply, translate, Matrix, IDENTITY};
use super::resources::{resolve, resolve_dict, Resources};
use super::state::{cmyk, gray, ActiveFont, ColorFamily, GraphicsState, TextObject};
use super::{
    ContentStream, FontKey, FontSource, PageGlyphs, StreamId, Warning, MAX_FORM_DEPTH,
    MAX_STREAM_BYTES,
};
use crate::ops::{classify, parse, Op, OpKind, Value};

/// How many bytes the text-showing ops of `ops` show: an upper bound on their glyphs.
fn shown_bytes(ops: &[Op]) -> usize {
    let string_len = |v: &Value| match v {
        Value::String(s) => s.bytes.len(),
        _ => 0,
    };
    ops.iter()
        .filter_map(Op::shown_operand)
        .map(|operand| match &operand.value {
            Value::Array(items) => items.iter().map(|i| string_len(&i.value)).sum(),
            other => string_len(other),
        })
        .sum()
}

/// Most glyphs room is made for at once per stream (about 20 MB); a page that shows more
/// grows its list as it fills.
const RESERVED_GLYPHS_MAX: usize = 1 << 16;

/// Deepest `q` nesting kept. Real files stay far below; hostile ones could otherwise
/// grow the stack without bound.
const MAX_SAVE_DEPTH: usize = 4096;

type FontCacheKey = (Option<ObjectId>, Vec<u8>);

pub(crate) struct Interpreter<'a, 'f> {
    pub(super) doc: &'a Document,
    fonts: &'f mut dyn FontSource,
    pub(super) out: PageGlyphs,
    pub(super) gstate: GraphicsState,
    saved: Vec<GraphicsState>,
    pub(super) text: TextObject,
    pub(super) marked: Vec<MarkedSequence>,
    next_sequence: usize,
    forms: Vec<ObjectId>,
    font_cache: HashMap<FontCacheKey, Option<ActiveFont>>,
    font_warned: HashSet<FontCacheKey>,
    seen: HashSet<StreamId>,
}

/// What the op being run belongs to.
pub(super) struct Ctx<'r, 'a> {
    pub stream: StreamId,
    pub op_index: usize,
    pub op: &'r Op,
    pub resources: &'r Resources<'a>,
}

impl<'a, 'f> Interpreter<'a, 'f> {
    pub(crate) fn new(doc: &'a Document, fonts: &'f mut dyn FontSource) -> Self {
        Self {
            doc,
            fonts,
            out: PageGlyphs::default(),
            gstate: GraphicsState::default(),
            saved: Vec::new(),
            text: TextObject::default(),
            marked: Vec::new(),
            next_sequence: 0,
            forms: Vec::new(),
            font_cache: HashMap::new(),
            font_warned: HashSet::new(),
            seen: HashSet::new(),
        }
    }

    pub(crate) fn finish(mut self) -> PageGlyphs {
        self.out.glyphs.shrink_to_fit();
        self.out
    }

    /// Runs the page's content streams in order. They behave as one stream split at
    /// token boundaries (§7.8.2), so state carries from one to the next.
    pub(crate) fn run_page(&mut self, page_id: ObjectId) {
        let ids = self.doc.get_page_contents(page_id);
        let Some(&first) = ids.first() else {
            return;
        };
        let owner = StreamId::PageContent {
            index: 0,
            object_id: first,
        };
        let resources = Resources::for_page(self.doc, page_id, owner);
        let mut carried: Option<(StreamId, usize, Op)> = None;
        for (index, object_id) in ids.into_iter().enumerate() {
            let id = StreamId::PageContent { index, object_id };
            let Some(stream) = self
                .doc
                .get_object(object_id)
                .and_then(Object::as_stream)
                .ok()
            else {
                continue;
            };
            let Some(ops) = self.load(id, object_id, stream) else {
                continue;
            };
            let mut first_index = 0;
            if let (Some((prev_id, prev_index, trailing)), Some(first)) =
                (carried.take(), ops.first())
            {
                if let Some(joined) = join_split_op(&trailing, first) {
                    // Report the op where its shown string is, so glyph spans index
                    // into the right stream's bytes.
                    let (stream, op_index) = if first.operands.is_empty() {
                        (prev_id, prev_index)
                    } else {
                        (id, 0)
                    };
                    let ctx = Ctx {
                        stream,
                        op_index,
                        op: &joined,
                        resources: &resources,
                    };
                    self.run_op(&ctx);
                    first_index = 1;
                }
            }
            self.run_ops(id, &ops, first_index, &resources);
            carried = match ops.last() {
                Some(last) if last.kind == OpKind::Trailing => {
                    Some((id, ops.len() - 1, last.clone()))
                }
                _ => None,
            };
            self.store_ops(id, ops);
        }
    }

    /// Decodes and parses a stream, registering it in the output the first time.
    fn load(&mut self, id: StreamId, object_id: ObjectId, stream: &Stream) -> Option<Vec<Op>> {
        match stream.get_plain_content_with_limit(MAX_STREAM_BYTES) {
            Ok(bytes) => {
                let ops = parse(&bytes);
                // At most one glyph per shown byte: room for them at once, rather than
                // the list of glyphs (large records) growing and copying itself as it
                // fills; `finish` gives back what multi-byte codes left unused. Capped,
                // and only tried: text shown without a font makes no glyphs, so a
                // hostile stream's strings must not size an allocation.
                let wanted = shown_bytes(&ops).min(RESERVED_GLYPHS_MAX);
                let _ = self.out.glyphs.try_reserve(wanted);
                if self.seen.insert(id) {
                    self.out.streams.push(ContentStream {
                        id,
                        bytes,
                        ops: Vec::new(),
                    });
                }
                Some(ops)
            }
            Err(e) => {
                self.out.warnings.push(Warning::StreamUnreadable {
                    object_id,
                    reason: e.to_string(),
                });
                None
            }
        }
    }

    /// Hands the parsed ops to the output after running them (running borrows them).
    fn store_ops(&mut self, id: StreamId, ops: Vec<Op>) {
        if let Some(slot) = self
            .out
            .streams
            .iter_mut()
            .find(|s| s.id == id && s.ops.is_empty())
        {
            slot.ops = ops;
        }
    }

    fn run_ops(&mut self, stream: StreamId, ops: &[Op], from: usize, resources: &Resources<'a>) {
        for (op_index, op) in ops.iter().enumerate().skip(from) {
            let ctx = Ctx {
                stream,
                op_index,
                op,
                resources,
            };
            self.run_op(&ctx);
        }
    }

    fn run_op(&mut self, ctx: &Ctx<'_, 'a>) {
        let g = &mut self.gstate;
        match &ctx.op.kind {
            OpKind::Save if self.saved.len() < MAX_SAVE_DEPTH => self.saved.push(g.clone()),
            OpKind::Restore => {
                // An unbalanced `Q` is ignored, as viewers do.
                if let Some(previous) = self.saved.pop() {
                    self.gstate = previous;
                }
            }
            OpKind::Transform(m) => g.ctm = multiply(m, &g.ctm),
            OpKind::FillGray(v) => {
                g.fill_family = ColorFamily::Gray;
                g.fill_rgb = Some(gray(*v));
            }
            OpKind::FillRgb(c) => {
                g.fill_family = ColorFamily::Rgb;
                g.fill_rgb = ColorFamily::Rgb.to_rgb(c);
            }
            OpKind::FillCmyk([c, m, y, k]) => {
                g.fill_family = ColorFamily::Cmyk;
                g.fill_rgb = Some(cmyk(*c, *m, *y, *k));
            }
            OpKind::FillColorSpace(name) => {
                g.fill_family = ctx.resources.color_family(self.doc, name);
                g.fill_rgb = g.fill_family.initial_rgb();
            }
            OpKind::FillColor(c)
            | OpKind::FillColorN {
                components: c,
                pattern: None,
            } => {
                g.fill_rgb = g.fill_family.to_rgb(c);
            }
            OpKind::FillColorN {
                pattern: Some(_), ..
            } => g.fill_rgb = None,
            OpKind::BeginText => self.text = TextObject::default(),
            OpKind::CharSpacing(v) => g.text.char_spacing = *v,
            OpKind::WordSpacing(v) => g.text.word_spacing = *v,
            OpKind::HorizontalScaling(v) => g.text.horizontal_scale = v / 100.0,
            OpKind::Leading(v) => g.text.leading = *v,
            OpKind::Rise(v) => g.text.rise = *v,
            OpKind::RenderMode(v) => g.text.render_mode = *v,
            OpKind::Font { name, size } => {
                g.text.font_size = *size;
                g.text.font_name = Some(name.clone());
                let font = self.font(ctx.resources, name);
                self.gstate.text.font = font;
            }
            OpKind::MoveText([tx, ty]) => self.move_line(*tx, *ty),
            OpKind::MoveTextSetLeading([tx, ty]) => {
                g.text.leading = -ty;
                self.move_line(*tx, *ty);
            }
            OpKind::TextMatrix(m) => {
                self.text.tm = *m;
                self.text.tlm = *m;
            }
            OpKind::NextLine => self.next_line(),
            OpKind::ShowText | OpKind::ShowTextArray => self.show(ctx),
            OpKind::NextLineShowText => {
                self.next_line();
                self.show(ctx);
            }
            OpKind::NextLineShowTextSpacing {
                word_spacing,
                char_spacing,
            } => {
                g.text.word_spacing = *word_spacing;
                g.text.char_spacing = *char_spacing;
                self.next_line();
                self.show(ctx);
            }
            OpKind::XObject(name) => self.do_xobject(ctx, name),
            OpKind::BeginMarked(_) => self.marked.push(MarkedSequence {
                mcid: None,
                actual_text: None,
            }),
            OpKind::BeginMarkedProps(_) => {
                let (mcid, text) = read_properties(self.doc, ctx.resources, ctx.op.properties());
                let actual_text = text.map(|t| {
                    self.next_sequence += 1;
                    (t, self.next_sequence - 1, true)
                });
                self.marked.push(MarkedSequence { mcid, actual_text });
            }
            OpKind::EndMarked => {
                self.marked.pop();
            }
            // Everything else does not move glyphs or change their colour.
            _ => {}
        }
    }

    /// `Td`: start a new line offset from the current line start (§9.4.2).
    fn move_line(&mut self, tx: f64, ty: f64) {
        self.text.tlm = multiply(&translate(tx, ty), &self.text.tlm);
        self.text.tm = self.text.tlm;
    }

    /// `T*`: `0 -TL Td`.
    fn next_line(&mut self) {
        self.move_line(0.0, -self.gstate.text.leading);
    }

    /// The font for a `Tf` name in these resources, asked of the font source once.
    fn font(&mut self, resources: &Resources<'a>, name: &[u8]) -> Option<ActiveFont> {
        let cache_key = (resources.cache_key, name.to_vec());
        if let Some(cached) = self.font_cache.get(&cache_key) {
            return cached.clone();
        }
        let key: FontKey = resources.font_key(self.doc, name);
        let loaded = self
            .fonts
            .font(resources.owner, &key)
            .map(|font| ActiveFont { key, font });
        if loaded.is_none() && self.font_warned.insert(cache_key.clone()) {
            self.out.warnings.push(Warning::FontUnavailable {
                stream: resources.owner,
                name: name.to_vec(),
            });
        }
        self.font_cache.insert(cache_key, loaded.clone());
        loaded
    }

    /// `Do` for a Form XObject (§8.10): run its stream with its /Matrix and its own
    /// /Resources (or, for old files that omit them, the parent's, §7.8.3).
    fn do_xobject(&mut self, ctx: &Ctx<'_, 'a>, name: &[u8]) {
        let doc = self.doc;
        let Some((Some(object_id), Object::Stream(stream))) = ctx
            .resources
            .lookup(doc, b"XObject", name)
            .map(|o| resolve(doc, o))
        else {
            self.out.warnings.push(Warning::MissingXObject {
                stream: ctx.stream,
                name: name.to_vec(),
            });
            return;
        };
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form".as_slice()) {
            return;
        }
        if self.forms.contains(&object_id) {
            self.out.warnings.push(Warning::FormCycle { object_id });
            return;
        }
        if self.forms.len() >= MAX_FORM_DEPTH {
            self.out.warnings.push(Warning::FormTooDeep { object_id });
            return;
        }
        let id = StreamId::Form { object_id };
        let Some(ops) = self.load(id, object_id, stream) else {
            return;
        };
        let matrix = form_matrix(doc, stream.dict.get(b"Matrix").ok());
        let resources = match stream
            .dict
            .get(b"Resources")
            .ok()
            .and_then(|o| resolve_dict(doc, o))
        {
            Some(dict) => Resources {
                dicts: vec![dict],
                owner: id,
                cache_key: Some(object_id),
            },
            None => ctx.resources.clone(),
        };

        // The form runs in a copy of the current state; nothing it does leaks out:
        // graphics state (an implicit q/Q), text object, unbalanced marked content.
        let saved_gstate = self.gstate.clone();
        let saved_depth = self.saved.len();
        let saved_text = self.text;
        let saved_marked = self.marked.len();
        self.gstate.ctm = multiply(&matrix, &self.gstate.ctm);
        self.forms.push(object_id);
        self.run_ops(id, &ops, 0, &resources);
        self.forms.pop();
        self.store_ops(id, ops);
        self.gstate = saved_gstate;
        self.saved.truncate(saved_depth);
        self.text = saved_text;
        self.marked.truncate(saved_marked);
    }
}

/// Page content streams may split an op between operands and operator (§7.8.2 only
/// forbids splitting a token): `/F1` | `10 Tf`, `[(a)-20(b)]` | `TJ`. Each stream is
/// parsed alone (spans are per stream), so the first stream ends in a
/// [`OpKind::Trailing`] op and the second starts with a [`OpKind::Malformed`] one. This
/// joins them. The joined op carries the span of whichever part holds the last operand.
fn join_split_op(trailing: &Op, first: &Op) -> Option<Op> {
    let OpKind::Malformed(operator) = &first.kind else {
        return None;
    };
    let mut operands = trailing.operands.clone();
    operands.extend(first.operands.iter().cloned());
    let kind = classify(operator, &operands);
    if matches!(kind, OpKind::Malformed(_)) {
        return None;
    }
    let span = if first.operands.is_empty() {
        trailing.span.clone()
    } else {
        first.span.clone()
    };
    Some(Op {
        kind,
        span,
        operator_span: first.operator_span.clone(),
        operands,
    })
}

/// A form's /Matrix, identity when absent or malformed.
fn form_matrix(doc: &Document, object: Option<&Object>) -> Matrix {
    let Some(Object::Array(items)) = object.map(|o| resolve(doc, o).1) else {
        return IDENTITY;
    };
    let numbers: Vec<f64> = items
        .iter()
        .filter_map(|o| match resolve(doc, o).1 {
            Object::Integer(i) => Some(*i as f64),
            Object::Real(r) => Some(f64::from(*r)),
            _ => None,
        })
        .collect();
    numbers.try_into().unwrap_or(IDENTITY)
}
