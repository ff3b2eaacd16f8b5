//! Mutation tests of the font parsers (issue 21 item 3): the embedded programs (TrueType,
//! CFF, OpenType, Type 1) and ToUnicode CMaps of ../shared/corpus, mutated, then loaded
//! and asked for every one-byte code. `PROPTEST_CASES` raises the case count
//! (`npm run fuzz`); a failing case is kept in proptest-regressions/ beside this file.

use std::sync::OnceLock;

use lopdf::{Document, Object, ObjectId};
use pdf_fonts::cmap::CMap;
use pdf_fonts::Font;
use proptest::prelude::*;
use proptest::sample::Index;

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn corpus_dir() -> std::path::PathBuf {
    std::env::var_os("PDFEDIT_CORPUS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
        })
}

/// One font of a corpus document: the document, the font dictionary and the stream that
/// holds its program (or its ToUnicode CMap).
struct Seed {
    doc: Document,
    font: ObjectId,
    stream: ObjectId,
    data: Vec<u8>,
}

/// Up to 24 fonts from the smaller corpus documents, each program kind represented.
fn seeds() -> &'static Vec<Seed> {
    static SEEDS: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut out = Vec::new();
        let Ok(dir) = std::fs::read_dir(corpus_dir()) else {
            eprintln!("fuzz: ../shared/corpus not found; nothing to mutate");
            return out;
        };
        let mut paths: Vec<_> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "pdf"))
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() < 400_000))
            .collect();
        paths.sort();
        for path in paths {
            let Ok(doc) = Document::load(&path) else {
                continue;
            };
            let mut found = Vec::new();
            for (id, obj) in &doc.objects {
                let Ok(d) = obj.as_dict() else { continue };
                if d.get(b"Type").and_then(Object::as_name).ok() != Some(b"Font".as_slice()) {
                    continue;
                }
                // The program sits in the font's descriptor, or its descendant's.
                let descriptor = d
                    .get(b"FontDescriptor")
                    .ok()
                    .or_else(|| {
                        let kids = d.get(b"DescendantFonts").ok()?;
                        let kids = doc.dereference(kids).ok()?.1.as_array().ok()?;
                        let kid = doc.dereference(kids.first()?).ok()?.1.as_dict().ok()?;
                        kid.get(b"FontDescriptor").ok()
                    })
                    .and_then(|r| doc.dereference(r).ok())
                    .and_then(|(_, d)| d.as_dict().ok());
                let program = descriptor.and_then(|fd| {
                    [&b"FontFile2"[..], b"FontFile3", b"FontFile"]
                        .iter()
                        .find_map(|k| fd.get(k).ok()?.as_reference().ok())
                });
                let to_unicode = d.get(b"ToUnicode").ok().and_then(|r| r.as_reference().ok());
                for stream in [program, to_unicode].into_iter().flatten() {
                    let Ok(s) = doc.get_object(stream).and_then(Object::as_stream) else {
                        continue;
                    };
                    let Ok(data) = s.decompressed_content_with_limit(4 << 20) else {
                        continue;
                    };
                    found.push((*id, stream, data));
                }
            }
            for (font, stream, data) in found.into_iter().take(3) {
                out.push(Seed {
                    doc: doc.clone(),
                    font,
                    stream,
                    data,
                });
            }
            if out.len() >= 24 {
                break;
            }
        }
        out
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(Index, u8),
    /// A 16- or 32-bit field (table offsets, lengths, counts) set to an extreme.
    Word(Index, bool),
    Delete(Index, u16),
    Truncate(Index),
    Duplicate(Index, u16),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<Index>(), any::<bool>()).prop_map(|(i, b)| Mutation::Word(i, b)),
        (any::<Index>(), any::<u16>()).prop_map(|(i, n)| Mutation::Delete(i, n)),
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), any::<u16>()).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
    ]
}

fn apply(data: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut s = data.to_vec();
    for m in mutations {
        if s.is_empty() {
            break;
        }
        match m {
            Mutation::Flip(i, b) => {
                let k = i.index(s.len());
                s[k] = *b;
            }
            Mutation::Word(i, high) => {
                // Early bytes are headers and table directories: aim there more often.
                let k = i.index(s.len().min(512));
                let v: &[u8] = if *high {
                    &[0xff, 0xff, 0xff, 0xff]
                } else {
                    &[0, 0, 0, 0]
                };
                let end = (k + 4).min(s.len());
                s[k..end].copy_from_slice(&v[..end - k]);
            }
            Mutation::Delete(i, n) => {
                let k = i.index(s.len());
                let end = (k + *n as usize % 64).min(s.len());
                s.drain(k..end);
            }
            Mutation::Truncate(i) => {
                let k = i.index(s.len() + 1);
                s.truncate(k);
            }
            Mutation::Duplicate(i, n) => {
                let k = i.index(s.len());
                let end = (k + *n as usize % 256).min(s.len());
                let piece = s[k..end].to_vec();
                s.splice(k..k, piece);
            }
        }
    }
    s
}

/// Loads the seed's font with `data` in place of its stream and asks it everything.
fn exercise(seed: &Seed, data: Vec<u8>) {
    let mut doc = seed.doc.clone();
    if let Ok(Object::Stream(s)) = doc.get_object_mut(seed.stream) {
        s.dict.remove(b"Filter");
        s.dict.remove(b"DecodeParms");
        s.set_content(data.clone());
    }
    let _ = CMap::parse(&data);
    let Ok(font) = Font::load_id(&doc, seed.font) else {
        return;
    };
    for code in 0..=255u32 {
        let _ = font.unicode(code);
        let w = font.width(code);
        assert!(w.is_finite(), "width of {code} is {w}");
        let _ = font.glyph_name(code);
        let _ = font.cid_for_code(code);
        let _ = font.vertical_advance(code);
    }
    let bytes: Vec<u8> = (0..=255u8).collect();
    let mut at = 0;
    while at < bytes.len() {
        let (_, len) = font.next_code(&bytes[at..]);
        assert!(len > 0, "next_code made no progress at {at}");
        at += len;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(96)))]

    #[test]
    fn mutated_corpus_fonts_load_and_answer(
        seed in any::<Index>(),
        muts in prop::collection::vec(mutation(), 0..8),
    ) {
        let seeds = seeds();
        if seeds.is_empty() {
            return Ok(());
        }
        let seed = &seeds[seed.index(seeds.len())];
        exercise(seed, apply(&seed.data, &muts));
    }

    #[test]
    fn arbitrary_bytes_parse_as_cmaps(data in prop::collection::vec(any::<u8>(), 0..4096)) {
        let _ = CMap::parse(&data);
    }
}
