//! Typed content-stream operations with byte spans (ISO 32000-1 Annex A, Table A.1).
//!
//! [`parse`] is the one place where operator bytes are matched; everything downstream
//! matches on [`OpKind`]. Operands stay attached to each op with their own spans so an
//! editor can rewrite exactly one string of a `TJ` array and leave the rest alone.

use std::ops::Range;

use crate::lexer::{Lexer, Token, TokenKind};

mod classify;
mod kind;

pub(crate) use classify::classify;
pub use kind::OpKind;

/// An operand value (§7.3), nested arrays and dictionaries included.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Integer.
    Integer(i64),
    /// Real.
    Real(f64),
    /// Boolean.
    Bool(bool),
    /// `null`.
    Null,
    /// Name, without `/`, escapes decoded.
    Name(Vec<u8>),
    /// String, decoded.
    String(PdfString),
    /// Array.
    Array(Vec<Operand>),
    /// Dictionary, in source order; entries whose key is not a name are dropped.
    Dict(Vec<(Vec<u8>, Operand)>),
}

/// A decoded string and how it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfString {
    /// The decoded bytes (character codes for text-showing operators).
    pub bytes: Vec<u8>,
    /// Written as `<hex>` rather than `(literal)`.
    pub hex: bool,
}

/// An operand and its bytes in the stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    /// The value.
    pub value: Value,
    /// Its source bytes (for arrays and dictionaries: from `[`/`<<` to `]`/`>>`).
    pub span: Range<usize>,
}

impl Operand {
    /// The value as a number, if it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self.value {
            Value::Integer(i) => Some(i as f64),
            Value::Real(r) => Some(r),
            _ => None,
        }
    }

    /// The value as a name, if it is one.
    pub fn as_name(&self) -> Option<&[u8]> {
        match &self.value {
            Value::Name(n) => Some(n),
            _ => None,
        }
    }

    /// The value as a string, if it is one.
    pub fn as_string(&self) -> Option<&PdfString> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The dictionary entry `key`, if the value is a dictionary that has it.
    pub fn dict_get(&self, key: &[u8]) -> Option<&Operand> {
        match &self.value {
            Value::Dict(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// One operation: its kind, its operands and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// The typed operation.
    pub kind: OpKind,
    /// From the first operand (or stray token) after the previous op to the end of the
    /// operator. Every token of the stream lies in exactly one op's span.
    pub span: Range<usize>,
    /// The operator's own bytes (empty at `span.end` for [`OpKind::Trailing`]).
    pub operator_span: Range<usize>,
    /// All operands as written, in order (for `BI`: the image dictionary).
    pub operands: Vec<Operand>,
}

impl Op {
    /// The string or array shown by `Tj`, `TJ`, `'` and `"`.
    pub fn shown_operand(&self) -> Option<&Operand> {
        match self.kind {
            OpKind::ShowText
            | OpKind::ShowTextArray
            | OpKind::NextLineShowText
            | OpKind::NextLineShowTextSpacing { .. } => self.operands.last(),
            _ => None,
        }
    }

    /// The property list of `BDC` and `DP`: an inline dictionary or a name to look up
    /// in the resources' /Properties.
    pub fn properties(&self) -> Option<&Operand> {
        match self.kind {
            OpKind::BeginMarkedProps(_) | OpKind::MarkedPointProps(_) => self.operands.last(),
            _ => None,
        }
    }
}

/// Deepest array/dictionary nesting kept as structure. Deeper brackets are treated as
/// stray tokens: no real content stream nests operands more than a few levels, and a
/// bound keeps hostile input from exhausting the stack.
const MAX_NESTING: usize = 32;

/// Parses a decoded content stream into operations, in order.
pub fn parse(bytes: &[u8]) -> Vec<Op> {
    let mut ops = Vec::new();
    let mut builder = OperandBuilder::default();
    let mut start: Option<usize> = None;
    for token in Lexer::new(bytes) {
        let op_start = *start.get_or_insert(token.span.start);
        match token.kind {
            TokenKind::Operator(operator) => {
                let operands = builder.finish();
                let kind = classify(&operator, &operands);
                ops.push(Op {
                    kind,
                    span: op_start..token.span.end,
                    operator_span: token.span,
                    operands,
                });
                start = None;
            }
            TokenKind::InlineImage { dict, data } => {
                // Operands before `BI` are stray; their bytes stay inside this op's span.
                builder.finish();
                let mut dict_builder = OperandBuilder::default();
                for t in Lexer::new(bytes.get(dict.clone()).unwrap_or_default()) {
                    let shifted = t.span.start + dict.start..t.span.end + dict.start;
                    dict_builder.push(Token {
                        kind: t.kind,
                        span: shifted,
                    });
                }
                let entries = pair_entries(dict_builder.finish());
                ops.push(Op {
                    kind: OpKind::InlineImage { data },
                    span: op_start..token.span.end,
                    operator_span: token.span.clone(),
                    operands: vec![Operand {
                        value: Value::Dict(entries),
                        span: dict,
                    }],
                });
                start = None;
            }
            _ => builder.push(token),
        }
    }
    if let Some(op_start) = start {
        let operands = builder.finish();
        ops.push(Op {
            kind: OpKind::Trailing,
            span: op_start..bytes.len(),
            operator_span: bytes.len()..bytes.len(),
            operands,
        });
    }
    ops
}

/// Collects operand tokens into values, building arrays and dictionaries.
#[derive(Default)]
struct OperandBuilder {
    top: Vec<Operand>,
    /// Open containers: (is_dict, start offset, items so far).
    frames: Vec<(bool, usize, Vec<Operand>)>,
}

impl OperandBuilder {
    fn items(&mut self) -> &mut Vec<Operand> {
        match self.frames.last_mut() {
            Some((_, _, items)) => items,
            None => &mut self.top,
        }
    }

    fn push(&mut self, token: Token) {
        let value = match token.kind {
            TokenKind::Integer(i) => Value::Integer(i),
            TokenKind::Real(r) => Value::Real(r),
            TokenKind::Bool(b) => Value::Bool(b),
            TokenKind::Null => Value::Null,
            TokenKind::Name(n) => Value::Name(n),
            TokenKind::LiteralString(bytes) => Value::String(PdfString { bytes, hex: false }),
            TokenKind::HexString(bytes) => Value::String(PdfString { bytes, hex: true }),
            TokenKind::ArrayOpen | TokenKind::DictOpen if self.frames.len() < MAX_NESTING => {
                let is_dict = token.kind == TokenKind::DictOpen;
                self.frames.push((is_dict, token.span.start, Vec::new()));
                return;
            }
            TokenKind::ArrayClose | TokenKind::DictClose => {
                let is_dict = token.kind == TokenKind::DictClose;
                if self.frames.last().is_some_and(|f| f.0 == is_dict) {
                    self.close_frame(token.span.end);
                }
                // A closer that matches nothing is stray: dropped from the operands, its
                // bytes stay inside the op's span.
                return;
            }
            _ => return,
        };
        self.items().push(Operand {
            value,
            span: token.span,
        });
    }

    fn close_frame(&mut self, end: usize) {
        if let Some((is_dict, start, items)) = self.frames.pop() {
            let value = if is_dict {
                Value::Dict(pair_entries(items))
            } else {
                Value::Array(items)
            };
            self.items().push(Operand {
                value,
                span: start..end,
            });
        }
    }

    /// Closes any unterminated containers and returns the operands.
    fn finish(&mut self) -> Vec<Operand> {
        while let Some(end) = self.frames.last().map(|f| {
            f.2.last()
                .map_or(f.1 + if f.0 { 2 } else { 1 }, |o| o.span.end)
        }) {
            self.close_frame(end);
        }
        std::mem::take(&mut self.top)
    }
}

/// Pairs `key value key value …` into dictionary entries, skipping non-name keys.
fn pair_entries(items: Vec<Operand>) -> Vec<(Vec<u8>, Operand)> {
    let mut entries = Vec::new();
    let mut iter = items.into_iter();
    while let Some(key) = iter.next() {
        if let Value::Name(name) = key.value {
            if let Some(value) = iter.next() {
                entries.push((name, value));
            }
        }
    }
    entries
}

#[cfg(test)]
#[path = "../ops_tests.rs"]
mod tests;
