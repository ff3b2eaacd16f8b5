//! Test fonts of fixed widths and a builder for one-page documents.
#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::rc::Rc;

use lopdf::{dictionary, Dictionary, Document, Object, ObjectId, Stream};
use pdf_content::{
    interpret_page, FontKey, FontObject, FontSource, Glyph, GlyphFont, PageGlyphs, StreamId,
};

/// A Helvetica-like simple font: every glyph 500 wide, the space 250.
pub struct SimpleFont;

impl GlyphFont for SimpleFont {
    fn next_code(&self, bytes: &[u8]) -> (u32, usize) {
        (u32::from(bytes[0]), 1)
    }
    fn unicode(&self, code: u32) -> Option<String> {
        char::from_u32(code).map(String::from)
    }
    fn width(&self, code: u32) -> f64 {
        if code == 32 {
            250.0
        } else {
            500.0
        }
    }
    fn is_vertical(&self) -> bool {
        false
    }
    fn vertical_advance(&self, _: u32) -> f64 {
        -1000.0
    }
    fn ascent(&self) -> f64 {
        700.0
    }
    fn descent(&self) -> f64 {
        -200.0
    }
    fn is_type3(&self) -> bool {
        false
    }
    fn font_matrix(&self) -> [f64; 6] {
        [0.001, 0.0, 0.0, 0.001, 0.0, 0.0]
    }
}

/// An Identity-H-like font: two-byte codes, every glyph 1000 wide; optionally vertical.
pub struct TwoByteFont {
    pub vertical: bool,
}

impl GlyphFont for TwoByteFont {
    fn next_code(&self, bytes: &[u8]) -> (u32, usize) {
        match bytes {
            [a, b, ..] => (u32::from(*a) << 8 | u32::from(*b), 2),
            [a] => (u32::from(*a), 1),
            [] => (0, 0),
        }
    }
    fn unicode(&self, code: u32) -> Option<String> {
        char::from_u32(code).map(String::from)
    }
    fn width(&self, _: u32) -> f64 {
        1000.0
    }
    fn is_vertical(&self) -> bool {
        self.vertical
    }
    fn vertical_advance(&self, _: u32) -> f64 {
        -1000.0
    }
    fn ascent(&self) -> f64 {
        880.0
    }
    fn descent(&self) -> f64 {
        -120.0
    }
    fn is_type3(&self) -> bool {
        false
    }
    fn font_matrix(&self) -> [f64; 6] {
        [0.001, 0.0, 0.0, 0.001, 0.0, 0.0]
    }
}

/// A Type 3 font with a 1/100 font matrix and widths of 50 glyph units.
pub struct Type3Font;

impl GlyphFont for Type3Font {
    fn next_code(&self, bytes: &[u8]) -> (u32, usize) {
        (u32::from(bytes[0]), 1)
    }
    fn unicode(&self, _: u32) -> Option<String> {
        None
    }
    fn width(&self, _: u32) -> f64 {
        50.0
    }
    fn is_vertical(&self) -> bool {
        false
    }
    fn vertical_advance(&self, _: u32) -> f64 {
        0.0
    }
    fn ascent(&self) -> f64 {
        80.0
    }
    fn descent(&self) -> f64 {
        -20.0
    }
    fn is_type3(&self) -> bool {
        true
    }
    fn font_matrix(&self) -> [f64; 6] {
        [0.01, 0.0, 0.0, 0.01, 0.0, 0.0]
    }
}

/// Fonts by resource name; records what it was asked.
#[derive(Default)]
pub struct Fonts {
    pub asked: Vec<(StreamId, FontKey)>,
}

impl FontSource for Fonts {
    fn font(&mut self, owner: StreamId, key: &FontKey) -> Option<Rc<dyn GlyphFont>> {
        self.asked.push((owner, key.clone()));
        if key.object == FontObject::Missing {
            return None;
        }
        match &*key.name {
            b"F1" => Some(Rc::new(SimpleFont)),
            b"F2" => Some(Rc::new(TwoByteFont { vertical: false })),
            b"F3" => Some(Rc::new(Type3Font)),
            b"F4" => Some(Rc::new(TwoByteFont { vertical: true })),
            _ => None,
        }
    }
}

/// A one-page document with fonts F1–F4 in its resources; `setup` may add more
/// resources (and objects) before the page is made.
pub fn build(
    contents: &[&[u8]],
    setup: impl FnOnce(&mut Document, &mut Dictionary),
) -> (Document, ObjectId) {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let mut fonts = Dictionary::new();
    for name in ["F1", "F2", "F3", "F4"] {
        let id = doc
            .add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => name });
        fonts.set(name, id);
    }
    let mut resources = dictionary! { "Font" => fonts };
    setup(&mut doc, &mut resources);
    let ids: Vec<Object> = contents
        .iter()
        .map(|c| {
            doc.add_object(Stream::new(Dictionary::new(), c.to_vec()))
                .into()
        })
        .collect();
    let contents = if ids.len() == 1 {
        ids[0].clone()
    } else {
        Object::Array(ids)
    };
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page",
        "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        "Contents" => contents,
        "Resources" => resources,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(
            dictionary! { "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1 },
        ),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    (doc, page_id)
}

pub fn run(contents: &[&[u8]], setup: impl FnOnce(&mut Document, &mut Dictionary)) -> PageGlyphs {
    let (doc, page) = build(contents, setup);
    interpret_page(&doc, page, &mut Fonts::default()).expect("page interprets")
}

pub fn text(glyphs: &[Glyph]) -> String {
    glyphs.iter().filter_map(|g| g.unicode.clone()).collect()
}

pub fn origin(g: &Glyph) -> (f64, f64) {
    (g.trm[4], g.trm[5])
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

pub fn assert_at(g: &Glyph, x: f64, y: f64) {
    assert!(
        close(g.trm[4], x) && close(g.trm[5], y),
        "{:?} at {:?}, want ({x}, {y})",
        g.unicode,
        origin(g)
    );
}
