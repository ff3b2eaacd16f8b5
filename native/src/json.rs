//! `readTextJson`'s wire form: the [`TextResult`] the addon's `readText` returns, written
//! as one UTF-8 JSON document instead of built as JS objects.
//!
//! An engine process hands its answer to the service over an IPC channel: as objects,
//! napi builds every span's object and array, the channel's structured clone walks and
//! copies each, and the service's process builds them once more; as one buffer of JSON,
//! napi makes one buffer, the channel copies bytes and `JSON.parse` builds the objects
//! once. The document is exactly what `JSON.stringify` makes of `readText`'s answer: the
//! same keys in the same order (napi sets the optional members last), `None` left out as
//! napi leaves it out, every number the
//! same `f64` (serde_json writes the shortest text that reads back as that `f64`, as
//! `JSON.stringify` does; a non-finite number is `null`, as there).

use std::io::Write;

use napi::bindgen_prelude::{Either, Either4};

use crate::types::{FormField, PageText, Span, TextResult};

/// `result` as JSON bytes.
pub fn text_result_json(result: &TextResult) -> Vec<u8> {
    let spans: usize = result.pages.iter().map(|p| p.spans.len()).sum();
    let mut out = Vec::with_capacity(256 + spans * 256);
    out.extend_from_slice(b"{\"pages\":[");
    for (i, p) in result.pages.iter().enumerate() {
        comma(&mut out, i);
        page(&mut out, p);
    }
    out.extend_from_slice(b"],\"fields\":[");
    for (i, f) in result.fields.iter().enumerate() {
        comma(&mut out, i);
        field(&mut out, f);
    }
    out.extend_from_slice(b"]}");
    out
}

fn comma(out: &mut Vec<u8>, i: usize) {
    if i > 0 {
        out.push(b',');
    }
}

/// `"key":` (keys are plain ASCII written here, never input).
fn key(out: &mut Vec<u8>, k: &str) {
    out.push(b'"');
    out.extend_from_slice(k.as_bytes());
    out.extend_from_slice(b"\":");
}

fn string(out: &mut Vec<u8>, s: &str) {
    // Writing to a Vec cannot fail, and a str always serialises.
    let _ = serde_json::to_writer(&mut *out, s);
}

fn number(out: &mut Vec<u8>, v: f64) {
    let _ = serde_json::to_writer(&mut *out, &v);
}

fn uint(out: &mut Vec<u8>, v: u32) {
    let _ = write!(out, "{v}");
}

fn boolean(out: &mut Vec<u8>, v: bool) {
    out.extend_from_slice(if v { b"true" } else { b"false" });
}

fn numbers(out: &mut Vec<u8>, vs: &[f64]) {
    out.push(b'[');
    for (i, &v) in vs.iter().enumerate() {
        comma(out, i);
        number(out, v);
    }
    out.push(b']');
}

fn strings(out: &mut Vec<u8>, vs: &[String]) {
    out.push(b'[');
    for (i, v) in vs.iter().enumerate() {
        comma(out, i);
        string(out, v);
    }
    out.push(b']');
}

fn page(out: &mut Vec<u8>, p: &PageText) {
    key_first(out, "page");
    uint(out, p.page);
    next_key(out, "width");
    number(out, p.width);
    next_key(out, "height");
    number(out, p.height);
    next_key(out, "rotation");
    uint(out, p.rotation);
    next_key(out, "spans");
    out.push(b'[');
    for (i, s) in p.spans.iter().enumerate() {
        comma(out, i);
        span(out, s);
    }
    out.push(b']');
    next_key(out, "text");
    string(out, &p.text);
    out.push(b'}');
}

fn span(out: &mut Vec<u8>, s: &Span) {
    key_first(out, "span_id");
    string(out, &s.span_id);
    next_key(out, "page");
    uint(out, s.page);
    next_key(out, "text");
    string(out, &s.text);
    next_key(out, "box");
    numbers(out, &s.bbox);
    next_key(out, "font");
    string(out, &s.font);
    next_key(out, "size");
    number(out, s.size);
    next_key(out, "color");
    string(out, &s.color);
    next_key(out, "flags");
    strings(out, &s.flags);
    next_key(out, "line");
    uint(out, s.line);
    next_key(out, "block");
    uint(out, s.block);
    next_key(out, "rotation");
    number(out, s.rotation);
    next_key(out, "source");
    string(out, &s.source);
    next_key(out, "space_before");
    boolean(out, s.space_before);
    if let Some(c) = s.confidence {
        next_key(out, "confidence");
        number(out, c);
    }
    out.push(b'}');
}

fn field(out: &mut Vec<u8>, f: &FormField) {
    key_first(out, "name");
    string(out, &f.name);
    next_key(out, "type");
    string(out, &f.kind);
    next_key(out, "value");
    match &f.value {
        Either4::A(s) => string(out, s),
        Either4::B(b) => boolean(out, *b),
        Either4::C(l) => strings(out, l),
        Either4::D(_) => out.extend_from_slice(b"null"),
    }
    next_key(out, "page");
    uint(out, f.page);
    next_key(out, "box");
    numbers(out, &f.bbox);
    next_key(out, "read_only");
    boolean(out, f.read_only);
    next_key(out, "required");
    boolean(out, f.required);
    next_key(out, "multiline");
    boolean(out, f.multiline);
    next_key(out, "comb");
    boolean(out, f.comb);
    next_key(out, "max_len");
    match f.max_len {
        Either::A(n) => uint(out, n),
        Either::B(_) => out.extend_from_slice(b"null"),
    }
    // napi sets an object's optional members after all the others.
    if let Some(o) = &f.options {
        next_key(out, "options");
        strings(out, o);
    }
    out.push(b'}');
}

/// `{"key":`
fn key_first(out: &mut Vec<u8>, k: &str) {
    out.push(b'{');
    key(out, k);
}

/// `,"key":`
fn next_key(out: &mut Vec<u8>, k: &str) {
    out.push(b',');
    key(out, k);
}
