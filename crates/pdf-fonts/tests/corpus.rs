//! Every font of every corpus PDF: loads without panicking, maps codes to Unicode, round-trips
//! shown strings through `encode`, and can re-encode the manifest's test phrases in the
//! document's own font (the same-font replace case).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use lopdf::content::Content;
use lopdf::{Document, Object};
use pdf_fonts::Font;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

fn open(path: &Path, entry: &serde_json::Value) -> Option<Document> {
    let pws: Vec<&str> = ["user_password", "owner_password"]
        .iter()
        .filter_map(|k| entry.get(*k).and_then(|v| v.as_str()))
        .collect();
    if pws.is_empty() {
        return Document::load(path)
            .map_err(|e| println!("  skip {}: cannot open ({e})", path.display()))
            .ok();
    }
    // lopdf rejects some user passwords it should accept (cpdf AES-128 R4); try each one.
    let mut last = None;
    for pw in pws {
        match Document::load_with_password(path, pw) {
            Ok(d) => return Some(d),
            Err(e) => last = Some(e),
        }
    }
    println!(
        "  skip {}: cannot open with the manifest passwords ({last:?})",
        path.display()
    );
    None
}

/// Per-font accumulated text and a sample of shown strings.
#[derive(Default)]
struct Shown {
    text: String,
    strings: Vec<Vec<u8>>,
}

fn shown_strings(
    doc: &Document,
    fonts: &HashMap<Vec<u8>, Font>,
    content: &[u8],
    out: &mut HashMap<Vec<u8>, Shown>,
) {
    let Ok(content) = Content::decode(content) else {
        return;
    };
    let mut current: Option<Vec<u8>> = None;
    for op in content.operations {
        let strings: Vec<&[u8]> = match op.operator.as_str() {
            "Tf" => {
                current = op
                    .operands
                    .first()
                    .and_then(|o| o.as_name().ok())
                    .map(<[u8]>::to_vec);
                continue;
            }
            "Tj" | "'" => op
                .operands
                .last()
                .and_then(|o| o.as_str().ok())
                .into_iter()
                .collect(),
            "\"" => op
                .operands
                .get(2)
                .and_then(|o| o.as_str().ok())
                .into_iter()
                .collect(),
            "TJ" => match op.operands.first() {
                Some(Object::Array(a)) => a.iter().filter_map(|o| o.as_str().ok()).collect(),
                _ => Vec::new(),
            },
            _ => continue,
        };
        let Some(name) = &current else { continue };
        let Some(font) = fonts.get(name) else {
            continue;
        };
        let entry = out.entry(name.clone()).or_default();
        for s in strings {
            let mut rest = s;
            while !rest.is_empty() {
                let (code, n) = font.next_code(rest);
                // Only codes standing for exactly one character count as "drawn": a glyph
                // mapped to a whole cluster (WeasyPrint's Arabic) cannot be reused per char.
                if let Some(t) = font.unicode_str(code).filter(|t| t.chars().count() == 1) {
                    entry.text.push_str(t);
                }
                rest = &rest[n..];
            }
            if entry.strings.len() < 40 {
                entry.strings.push(s.to_vec());
            }
        }
    }
    let _ = doc;
}

#[test]
#[allow(clippy::too_many_lines)] // a test: one corpus scenario, read top to bottom (tests are exempt, #15 item 9)
fn corpus_fonts() {
    let dir = corpus_dir();
    let Ok(manifest) = std::fs::read_to_string(dir.join("manifest.json")) else {
        println!("corpus not found at {}: skipping", dir.display());
        return;
    };
    let manifest: Vec<serde_json::Value> =
        serde_json::from_str(&manifest).expect("manifest.json is JSON");
    let (mut total_fonts, mut total_loaded, mut phrase_checked, mut roundtrips) = (0, 0, 0, 0);
    let mut failures: Vec<String> = Vec::new();
    for entry in &manifest {
        let Some(file) = entry.get("file").and_then(|f| f.as_str()) else {
            continue;
        };
        let Some(doc) = open(&dir.join(file), entry) else {
            continue;
        };

        // Every font dictionary in the file, wherever it lives.
        let (mut found, mut loaded, mut codes, mut mapped) = (0, 0, 0usize, 0usize);
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for (id, obj) in &doc.objects {
            let dict = match obj {
                Object::Dictionary(d) => d,
                _ => continue,
            };
            let is_font = dict
                .get(b"Type")
                .and_then(Object::as_name)
                .is_ok_and(|t| t == b"Font");
            let sub = dict
                .get(b"Subtype")
                .and_then(Object::as_name)
                .unwrap_or(b"");
            if !is_font || sub.starts_with(b"CIDFontType") {
                continue;
            }
            found += 1;
            match Font::load_id(&doc, *id) {
                Ok(f) => {
                    loaded += 1;
                    *kinds
                        .entry(format!(
                            "{:?}{}",
                            f.kind(),
                            if f.is_embedded() { "" } else { "(ne)" }
                        ))
                        .or_default() += 1;
                    let range = if f.is_composite() {
                        0..0x1_0000u32
                    } else {
                        0..256
                    };
                    for code in range {
                        if f.is_composite() && f.unicode_str(code).is_none() {
                            continue;
                        }
                        codes += 1;
                        mapped += usize::from(f.unicode_str(code).is_some());
                    }
                }
                Err(e) => println!("  {file}: font {id:?} not loaded: {e}"),
            }
        }
        // Simple fonts count all 256 codes; Type0 fonts count only mapped codes.
        println!(
            "{file}: fonts {loaded}/{found} loaded {kinds:?}; codes with Unicode {mapped}/{codes}"
        );
        total_fonts += found;
        total_loaded += loaded;

        let mut own_misses = 0;
        // Shown strings per page font.
        let mut per_font: HashMap<Vec<u8>, Shown> = HashMap::new();
        let mut page_fonts: Vec<HashMap<Vec<u8>, Font>> = Vec::new();
        for (_, page) in doc.get_pages() {
            let fonts: HashMap<Vec<u8>, Font> = doc
                .get_page_fonts(page)
                .map(|m| {
                    m.into_iter()
                        .filter_map(|(k, d)| Font::load(&doc, d).ok().map(|f| (k, f)))
                        .collect()
                })
                .unwrap_or_default();
            let mut shown = HashMap::new();
            shown_strings(&doc, &fonts, &doc.get_page_content(page), &mut shown);
            // Round trip: unicode(next_code(..)) then encode(..) gives codes with the same text.
            for (name, s) in &shown {
                let font = &fonts[name];
                for bytes in &s.strings {
                    let text = decode(font, bytes);
                    if text.is_empty() || text.contains('\u{FFFD}') {
                        continue;
                    }
                    let encoded = font.encode(&text);
                    if let Err(e) = &encoded {
                        // Text the font itself showed should re-encode; report, don't fail:
                        // a glyph mapped to several chars or to text another code also claims
                        // can legitimately make this miss.
                        own_misses += 1;
                        if own_misses <= 3 {
                            println!(
                                "  {file}: own text {text:?} not re-encodable in {}: {e}",
                                font.base_font()
                            );
                        }
                    }
                    if let Ok(enc) = encoded {
                        roundtrips += 1;
                        if decode(font, &enc) != text {
                            failures.push(format!(
                                "{file}: round trip of {text:?} in {} gave {:?}",
                                font.base_font(),
                                decode(font, &enc)
                            ));
                        }
                    }
                }
            }
            for (k, v) in shown {
                let e = per_font.entry(k).or_default();
                e.text.push_str(&v.text);
            }
            page_fonts.push(fonts);
        }

        if own_misses > 0 {
            println!("  {file}: {own_misses} shown string(s) not re-encodable in their own font");
        }

        // Phrases whose characters were all shown by one font must be encodable in some font.
        let all_fonts: Vec<&Font> = page_fonts.iter().flat_map(|m| m.values()).collect();
        for phrase in entry
            .get("phrases")
            .and_then(|p| p.as_array())
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str())
        {
            let drawn = per_font.values().any(|s| {
                let have: HashSet<char> = s.text.chars().collect();
                phrase.chars().all(|c| c == ' ' || have.contains(&c))
            });
            if !drawn {
                continue;
            }
            phrase_checked += 1;
            // Spaces are often positioning, not glyphs: then each word must encode.
            let ok = all_fonts.iter().any(|f| {
                f.encode(phrase).is_ok()
                    || phrase
                        .split(' ')
                        .all(|w| w.is_empty() || f.encode(w).is_ok())
            });
            if !ok {
                let why: Vec<String> = all_fonts
                    .iter()
                    .map(|f| format!("{}: {:?}", f.base_font(), f.encode(phrase).err()))
                    .take(6)
                    .collect();
                failures.push(format!("{file}: phrase {phrase:?} not encodable: {why:?}"));
            }
        }
    }
    println!("TOTAL fonts {total_loaded}/{total_fonts} loaded; phrases checked {phrase_checked}; round trips {roundtrips}");
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn decode(font: &Font, bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (code, n) = font.next_code(rest);
        out.push_str(font.unicode_str(code).unwrap_or("\u{FFFD}"));
        rest = &rest[n..];
    }
    out
}
