//! Words of OCR text layers over real scans are redacted for real: the invisible glyphs
//! leave the text (pdftotext no longer finds the phrase, every other word stays), and in
//! every image the page draws (decoded by Poppler's pdfimages, not by the engine) the
//! pixels under the redaction box are blanked while every other pixel keeps its value.
//! The corpus holds a CCITT Group 3 scan (Brother) and an MRC scan of JPEG 2000 layers
//! with a JBIG2 soft mask (LuraDocument).

mod common;

use std::collections::HashMap;

/// One image as pdfimages writes it: P4 (1 bit), P5 (gray) or P6 (RGB), one value per
/// pixel and channel (bits expanded to 0/1).
#[derive(Debug)]
struct Pnm {
    width: usize,
    height: usize,
    channels: usize,
    data: Vec<u8>,
}

impl Pnm {
    fn pixel(&self, x: usize, y: usize) -> &[u8] {
        let i = (y * self.width + x) * self.channels;
        &self.data[i..i + self.channels]
    }
}

fn parse_pnm(bytes: &[u8]) -> Pnm {
    // Header: magic, width, height, (maxval unless P4), each after whitespace.
    let mut fields = Vec::new();
    let mut at = 0;
    let want = if &bytes[..2] == b"P4" { 3 } else { 4 };
    while fields.len() < want {
        while bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while !bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        fields.push(String::from_utf8_lossy(&bytes[start..at]).into_owned());
    }
    let body = &bytes[at + 1..];
    let (width, height): (usize, usize) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    let (channels, data) = match fields[0].as_str() {
        "P4" => {
            let stride = width.div_ceil(8);
            let mut data = Vec::with_capacity(width * height);
            for y in 0..height {
                for x in 0..width {
                    data.push(body[y * stride + x / 8] >> (7 - x % 8) & 1);
                }
            }
            (1, data)
        }
        "P5" => (1, body[..width * height].to_vec()),
        "P6" => (3, body[..width * height * 3].to_vec()),
        other => panic!("pdfimages wrote {other}"),
    };
    Pnm {
        width,
        height,
        channels,
        data,
    }
}

/// Every image page `page` draws (soft masks included), in pdfimages' order.
fn page_images(pdf: &[u8], page: u32) -> Option<Vec<Pnm>> {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("pdfedit-redact-ocr-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let p = page.to_string();
    let prefix = dir.join("img");
    let out = common::run_tool("pdfimages", &["-f", &p, "-l", &p], pdf, &[prefix.to_str()?])?;
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    let images = names
        .iter()
        .map(|n| parse_pnm(&std::fs::read(n).unwrap()))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    out.status.success().then_some(images)
}

fn words(text: &str) -> HashMap<String, i64> {
    let mut out = HashMap::new();
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        *out.entry(w.to_string()).or_default() += 1;
    }
    out
}

/// Redacts `phrase` in corpus file `name` (whose scans fill their pages) and checks the
/// text and, on every page changed, the images.
fn check(name: &str, phrase: &str) {
    let Some(pdf) = common::load(name) else {
        return;
    };
    let r = common::redact(&pdf, phrase);
    assert!(!r.changes.is_empty(), "{name}: {:?}", r.failed);
    assert!(r.failed.is_empty(), "{name}: {:?}", r.failed);
    assert!(r
        .changes
        .iter()
        .all(|c| c.verified && c.collateral_pixels == 0));
    let (Some(before), Some(after)) =
        (common::pdftotext(&pdf, &[]), common::pdftotext(&r.pdf, &[]))
    else {
        return;
    };
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    assert!(squash(&before).contains(&squash(phrase)));
    assert!(
        !squash(&after).contains(&squash(phrase)),
        "{name}: {phrase:?} left"
    );
    // Every other word is kept: only the phrase's words, once per change, are gone.
    let mut lost = words(&before);
    for (w, n) in words(&after) {
        *lost.entry(w).or_default() -= n;
    }
    for (w, n) in words(phrase) {
        *lost.entry(w).or_default() -= n * r.changes.len() as i64;
    }
    let lost: Vec<_> = lost.into_iter().filter(|(_, n)| *n > 0).collect();
    assert!(lost.is_empty(), "{name}: words lost {lost:?}");

    let doc = pdf_render::Document::open(&pdf, None).unwrap();
    let info = doc.info().unwrap();
    let mut pages: Vec<u32> = r.changes.iter().map(|c| c.page).collect();
    pages.sort_unstable();
    pages.dedup();
    for page in pages {
        let size = &info.pages[page as usize - 1];
        let boxes: Vec<[f64; 4]> = r
            .changes
            .iter()
            .filter(|c| c.page == page)
            .map(|c| c.bbox)
            .collect();
        let (Some(old), Some(new)) = (page_images(&pdf, page), page_images(&r.pdf, page)) else {
            return;
        };
        assert_eq!(old.len(), new.len(), "{name} p{page}: images");
        let mut ink_removed = false;
        for (k, (a, b)) in old.iter().zip(&new).enumerate() {
            assert_eq!(
                (a.width, a.height, a.channels),
                (b.width, b.height, b.channels)
            );
            // The boxes in this image's pixels (the image fills the page).
            let sx = a.width as f64 / f64::from(size.width);
            let sy = a.height as f64 / f64::from(size.height);
            let rects: Vec<[f64; 4]> = boxes
                .iter()
                .map(|bb| [bb[0] * sx, bb[1] * sy, bb[2] * sx, bb[3] * sy])
                .collect();
            // A pixel touching a box may change; one well inside must be blank.
            let touches = |x: usize, y: usize| {
                let (x, y) = (x as f64, y as f64);
                rects
                    .iter()
                    .any(|r| x + 2.0 > r[0] && x - 1.0 < r[2] && y + 2.0 > r[1] && y - 1.0 < r[3])
            };
            let mut changed = 0;
            for y in 0..a.height {
                for x in 0..a.width {
                    if a.pixel(x, y) != b.pixel(x, y) {
                        assert!(touches(x, y), "{name} p{page} image {k}: {x},{y} changed");
                        changed += 1;
                    }
                }
            }
            for r in &rects {
                let (x0, y0) = (r[0].ceil() as usize + 1, r[1].ceil() as usize + 1);
                let (x1, y1) = (r[2].floor() as usize - 1, r[3].floor() as usize - 1);
                let blank = b.pixel(x0, y0).to_vec();
                if b.channels == 3 {
                    assert_eq!(blank, [0, 0, 0], "{name} p{page} image {k}: not black");
                }
                let mut varied = false;
                for y in y0..y1 {
                    for x in x0..x1 {
                        assert_eq!(b.pixel(x, y), blank, "{name} p{page} image {k}: {x},{y}");
                        varied |= a.pixel(x, y) != a.pixel(x0, y0);
                    }
                }
                // The word was drawn there: ink and paper, now one blank value.
                ink_removed |= varied && changed > 0;
            }
        }
        assert!(ink_removed, "{name} p{page}: no image held the word");
    }
}

#[test]
fn ccitt_group_3_scan_word_is_redacted_in_text_and_pixels() {
    check("scan-ocr-layer-brother-de.pdf", "Testdokument");
}

#[test]
fn jpeg_2000_mrc_scan_words_are_redacted_in_text_and_pixels() {
    check(
        "scan-ocr-layer-vicksburg-luradoc.pdf",
        "Johnston is coming with fifty",
    );
    check(
        "scan-ocr-layer-vicksburg-luradoc.pdf",
        "THE SIEGE OF VICKSBURG",
    );
}
