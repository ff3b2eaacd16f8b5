//! The PDF objects of an embedded font: Type0 → CIDFont → FontDescriptor → font program,
//! plus ToUnicode. Written in place so a font keeps its object ids when glyphs are added.

use super::{EmbedError, FontObjects, Metrics, Outlines, Result};
use lopdf::{dictionary, Dictionary, Document, Object, ObjectId, Stream};

/// Everything [`write`] puts into the objects.
pub struct Parts<'a> {
    pub base_font: &'a str,
    pub outlines: Outlines,
    pub metrics: &'a Metrics,
    pub program: Vec<u8>,
    /// Advance per CID, CID 0 first.
    pub widths: &'a [f32],
    pub to_unicode: Vec<u8>,
}

/// Allocate the five object ids (filled by [`write`]).
pub fn reserve(doc: &mut Document) -> FontObjects {
    let mut next = || doc.add_object(Object::Null);
    FontObjects {
        font: next(),
        descendant: next(),
        descriptor: next(),
        program: next(),
        to_unicode: next(),
    }
}

fn name(s: &str) -> Object {
    Object::Name(s.as_bytes().to_vec())
}

fn number(v: f32) -> Object {
    // Integers where the value is whole keep the dictionaries readable and exact.
    if v.fract() == 0.0 && v.abs() < 1e9 {
        Object::Integer(v as i64)
    } else {
        Object::Real(v)
    }
}

/// Flate-compressed stream; left uncompressed if compression fails (still valid PDF).
fn stream(dict: Dictionary, content: Vec<u8>) -> Stream {
    let mut s = Stream::new(dict, content);
    let _ = s.compress();
    s
}

/// `/W [0 [w0 w1 …]]`: one run from CID 0, since subset CIDs are dense.
fn widths_array(widths: &[f32]) -> Object {
    Object::Array(vec![
        Object::Integer(0),
        Object::Array(widths.iter().map(|&w| number(w)).collect()),
    ])
}

/// Write (or overwrite) all five objects.
pub fn write(doc: &mut Document, ids: &FontObjects, parts: &Parts<'_>) {
    let m = parts.metrics;
    let (subtype, file_key, program) = match parts.outlines {
        Outlines::TrueType => {
            let len = parts.program.len() as i64;
            (
                "CIDFontType2",
                "FontFile2",
                stream(dictionary! { "Length1" => len }, parts.program.clone()),
            )
        }
        Outlines::Cff => (
            "CIDFontType0",
            "FontFile3",
            stream(
                dictionary! { "Subtype" => name("OpenType") },
                parts.program.clone(),
            ),
        ),
    };
    doc.set_object(ids.program, program);

    let mut descriptor = dictionary! {
        "Type" => name("FontDescriptor"),
        "FontName" => name(parts.base_font),
        "Flags" => m.flags,
        "FontBBox" => Object::Array(m.bbox.iter().map(|&v| number(v)).collect()),
        "ItalicAngle" => number(m.italic_angle),
        "Ascent" => number(m.ascent),
        "Descent" => number(m.descent),
        "CapHeight" => number(m.cap_height),
        "StemV" => number(m.stem_v),
    };
    descriptor.set(file_key, Object::Reference(ids.program));
    doc.set_object(ids.descriptor, descriptor);

    let mut descendant = dictionary! {
        "Type" => name("Font"),
        "Subtype" => name(subtype),
        "BaseFont" => name(parts.base_font),
        "CIDSystemInfo" => dictionary! {
            "Registry" => Object::string_literal("Adobe"),
            "Ordering" => Object::string_literal("Identity"),
            "Supplement" => 0,
        },
        "FontDescriptor" => Object::Reference(ids.descriptor),
        "W" => widths_array(parts.widths),
    };
    // CIDToGIDMap applies to CIDFontType2 only; a CID-keyed CFF maps CIDs through its charset,
    // which the subsetter writes as identity.
    if parts.outlines == Outlines::TrueType {
        descendant.set("CIDToGIDMap", name("Identity"));
    }
    doc.set_object(ids.descendant, descendant);

    doc.set_object(
        ids.to_unicode,
        stream(Dictionary::new(), parts.to_unicode.clone()),
    );

    let font = dictionary! {
        "Type" => name("Font"),
        "Subtype" => name("Type0"),
        "BaseFont" => name(parts.base_font),
        "Encoding" => name("Identity-H"),
        "DescendantFonts" => vec![Object::Reference(ids.descendant)],
        "ToUnicode" => Object::Reference(ids.to_unicode),
    };
    doc.set_object(ids.font, font);
}

/// Follow a Type0 font we wrote back to its objects, `/BaseFont` and decoded ToUnicode.
pub fn locate(doc: &Document, font_id: ObjectId) -> Result<(FontObjects, String, Vec<u8>)> {
    let not_ours = |why| EmbedError::NotEmbeddedByUs(font_id, why);
    let font = doc
        .get_dictionary(font_id)
        .map_err(|_| not_ours("not a dictionary"))?;
    let is_name = |d: &Dictionary, key: &[u8], want: &[u8]| {
        d.get(key)
            .and_then(Object::as_name)
            .is_ok_and(|n| n == want)
    };
    if !is_name(font, b"Subtype", b"Type0") || !is_name(font, b"Encoding", b"Identity-H") {
        return Err(not_ours("not a Type0 Identity-H font"));
    }
    let reference = |d: &Dictionary, key: &[u8]| d.get(key).and_then(Object::as_reference).ok();
    let base_font = font
        .get(b"BaseFont")
        .and_then(Object::as_name)
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .map_err(|_| not_ours("no /BaseFont"))?;
    let descendant = font
        .get(b"DescendantFonts")
        .and_then(Object::as_array)
        .ok()
        .and_then(|a| a.first())
        .and_then(|o| o.as_reference().ok())
        .ok_or_else(|| not_ours("no indirect descendant font"))?;
    let to_unicode =
        reference(font, b"ToUnicode").ok_or_else(|| not_ours("no indirect ToUnicode"))?;
    let desc_dict = doc
        .get_dictionary(descendant)
        .map_err(|_| not_ours("bad descendant"))?;
    let descriptor =
        reference(desc_dict, b"FontDescriptor").ok_or_else(|| not_ours("no FontDescriptor"))?;
    let fd = doc
        .get_dictionary(descriptor)
        .map_err(|_| not_ours("bad FontDescriptor"))?;
    let program = reference(fd, b"FontFile2")
        .or_else(|| reference(fd, b"FontFile3"))
        .ok_or_else(|| not_ours("no embedded program"))?;
    let cmap = doc
        .get_object(to_unicode)
        .and_then(Object::as_stream)
        .and_then(|s| s.decompressed_content().or_else(|_| Ok(s.content.clone())))
        .map_err(|_| not_ours("unreadable ToUnicode"))?;
    Ok((
        FontObjects {
            font: font_id,
            descendant,
            descriptor,
            program,
            to_unicode,
        },
        base_font,
        cmap,
    ))
}
