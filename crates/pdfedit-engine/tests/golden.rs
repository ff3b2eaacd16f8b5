//! Golden-image tests: a few engine edits on corpus pages, the edited area rendered by
//! PDFium at the verification resolution and compared with a PNG kept in
//! `tests/fixtures/golden/`.
//!
//! - `GOLDEN_THRESHOLD=n` lets up to `n` pixels differ (default 0: PDFium's rasters are
//!   deterministic for one build, so any difference is a change in the engine's output).
//! - `REPLACE=1` (re)writes the goldens from the current output instead of comparing. Do it
//!   when the engine's output changes on purpose (new fitting, new font choice…), look at
//!   the new PNGs, and commit them with that change.
//! - On a mismatch the test writes `diffs/<case>.png` at the repository root (git-ignored):
//!   expected | diff (changed pixels red over a faded expected) | actual.
//!
//! The cases avoid what other work is changing: same-length replaces in the document's own
//! embedded font, a delete, a non-embedded standard font on a rotated page, and the SAMPLE
//! mark. Crops keep each golden small (a few KB).

mod common;

use std::path::{Path, PathBuf};

use pdf_render::raster::{rasterize_page, Raster, VERIFY_PX_PER_PT};
use pdfedit_engine::edit::{edit, Edit, EditOp, EditOptions, EditRequest, Occurrence, Scope};

/// What part of the page a golden holds, in displayed top-left points.
enum Crop {
    /// The first change's box, grown by this many points left and right, and above and
    /// below (the rest of the line and the lines around it show that nothing else moved).
    AroundChange(f64, f64),
    /// The bottom-right corner: this wide and this high.
    BottomRight(f64, f64),
}

struct Case {
    name: &'static str,
    file: &'static str,
    op: EditOp,
    find: &'static str,
    replace: &'static str,
    /// Only this page (1-based).
    page: Option<u32>,
    mark: bool,
    crop: Crop,
}

const CASES: &[Case] = &[
    Case {
        name: "replace-truetype-subset",
        file: "font-tt-subset-libreoffice-trivial.pdf",
        op: EditOp::Replace,
        find: "dolor",
        replace: "rolod",
        page: None,
        mark: false,
        crop: Crop::AroundChange(80.0, 16.0),
    },
    Case {
        name: "delete-truetype-subset",
        file: "font-tt-subset-libreoffice-trivial.pdf",
        op: EditOp::Delete,
        find: "ipsum ",
        replace: "",
        page: None,
        mark: false,
        crop: Crop::AroundChange(80.0, 16.0),
    },
    Case {
        name: "replace-cid-truetype-invoice",
        file: "doc-invoice-itextsharp-demo.pdf",
        op: EditOp::Replace,
        find: "INV-0046",
        replace: "INV-0064",
        page: None,
        mark: false,
        crop: Crop::AroundChange(60.0, 12.0),
    },
    Case {
        name: "replace-type1-pdflatex",
        file: "font-type1-pdflatex-4p.pdf",
        op: EditOp::Replace,
        find: "meaning",
        replace: "mnaeing",
        page: None,
        mark: false,
        crop: Crop::AroundChange(60.0, 12.0),
    },
    Case {
        name: "replace-rotated-page-standard-font",
        file: "rot-0-90-180-270-pages.pdf",
        op: EditOp::Replace,
        find: "cell[0][1]",
        replace: "cell[1][0]",
        // /Rotate 90.
        page: Some(2),
        mark: false,
        crop: Crop::AroundChange(60.0, 12.0),
    },
    Case {
        name: "sample-mark-invoice",
        file: "doc-invoice-itextsharp-demo.pdf",
        op: EditOp::Replace,
        find: "INV-0046",
        replace: "INV-0064",
        page: None,
        mark: true,
        crop: Crop::BottomRight(90.0, 24.0),
    },
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/golden")
        .join(format!("{name}.png"))
}

fn threshold() -> u64 {
    std::env::var("GOLDEN_THRESHOLD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn replacing() -> bool {
    std::env::var("REPLACE").is_ok_and(|v| v == "1")
}

/// An RGB image.
#[derive(Clone)]
struct Image {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Image {
    fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }
}

/// Cuts `[x0, y0, x1, y1]` (top-left points) out of a raster, clamped to it.
fn crop(r: &Raster, b: [f64; 4]) -> Image {
    let s = f64::from(r.px_per_pt);
    let clamp = |v: f64, max: u32| (v * s).round().clamp(0.0, f64::from(max)) as u32;
    let (x0, y0) = (clamp(b[0], r.width), clamp(b[1], r.height));
    let (x1, y1) = (clamp(b[2], r.width), clamp(b[3], r.height));
    let (w, h) = (x1.saturating_sub(x0), y1.saturating_sub(y0));
    let mut rgb = Vec::with_capacity((w * h * 3) as usize);
    for y in y0..y1 {
        let start = ((y * r.width + x0) * 3) as usize;
        rgb.extend_from_slice(&r.pixels[start..start + (w * 3) as usize]);
    }
    Image {
        width: w,
        height: h,
        rgb,
    }
}

fn write_png(path: &Path, img: &Image) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("folder created");
    let file = std::fs::File::create(path).expect("png file created");
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), img.width, img.height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Best);
    let mut w = enc.write_header().expect("png header");
    w.write_image_data(&img.rgb).expect("png data");
}

fn read_png(path: &Path) -> Option<Image> {
    let dec = png::Decoder::new(std::fs::File::open(path).ok()?);
    let mut reader = dec.read_info().ok()?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).ok()?;
    buf.truncate(info.buffer_size());
    let rgb = match info.color_type {
        png::ColorType::Rgb => buf,
        png::ColorType::Rgba => buf
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect(),
        _ => return None,
    };
    Some(Image {
        width: info.width,
        height: info.height,
        rgb,
    })
}

/// Pixels that differ (any channel) between two images; a size mismatch counts every pixel
/// of the larger one.
fn count_diff(a: &Image, b: &Image) -> u64 {
    if (a.width, a.height) != (b.width, b.height) {
        return u64::from(a.width.max(b.width)) * u64::from(a.height.max(b.height));
    }
    a.rgb
        .chunks_exact(3)
        .zip(b.rgb.chunks_exact(3))
        .filter(|(p, q)| p != q)
        .count() as u64
}

/// expected | diff | actual, side by side on a grey background, 4 px apart.
fn three_panel(expected: &Image, actual: &Image) -> Image {
    const GAP: u32 = 4;
    let (w, h) = (
        expected.width.max(actual.width),
        expected.height.max(actual.height),
    );
    let total_w = 3 * w + 2 * GAP;
    let mut out = Image {
        width: total_w,
        height: h,
        rgb: vec![128; (total_w * h * 3) as usize],
    };
    let mut put = |x: u32, y: u32, p: [u8; 3]| {
        let i = ((y * total_w + x) * 3) as usize;
        out.rgb[i..i + 3].copy_from_slice(&p);
    };
    for y in 0..h {
        for x in 0..w {
            let e = (x < expected.width && y < expected.height).then(|| expected.pixel(x, y));
            let a = (x < actual.width && y < actual.height).then(|| actual.pixel(x, y));
            if let Some(p) = e {
                put(x, y, p);
            }
            if let Some(p) = a {
                put(2 * (w + GAP) + x, y, p);
            }
            let diff = match (e, a) {
                (Some(p), Some(q)) if p == q => {
                    // Faded expected, so the changes stand out.
                    let g = (u16::from(p[0]) + u16::from(p[1]) + u16::from(p[2])) / 3;
                    let f = (255 - (255 - g) / 4) as u8;
                    [f, f, f]
                }
                _ => [255, 0, 0],
            };
            put(w + GAP + x, y, diff);
        }
    }
    out
}

/// Runs the case's edit and renders the golden's area of the output.
fn render_case(case: &Case) -> Option<Image> {
    let path = common::corpus_dir().join(case.file);
    let pdf = std::fs::read(path).ok()?;
    let request = EditRequest {
        edits: vec![Edit {
            index: 0,
            op: case.op,
            find: case.find.into(),
            replace: case.replace.into(),
            match_mode: Default::default(),
            scope: Scope {
                pages: case.page.map(|p| vec![p]),
                occurrence: Some(Occurrence::First),
                ..Scope::default()
            },
            fit: Default::default(),
            style: Default::default(),
            ..Edit::default()
        }],
        options: EditOptions {
            mark: case.mark.then(|| "SAMPLE".to_string()),
            ..EditOptions::default()
        },
        ..EditRequest::default()
    };
    let result = edit(&pdf, &request).expect("the edit runs");
    let change = result.changes.first().unwrap_or_else(|| {
        panic!(
            "{}: the edit did not apply: {:?} {:?}",
            case.name, result.failed, result.unmatched
        )
    });
    let raster = rasterize_page(&result.pdf, None, change.page - 1, VERIFY_PX_PER_PT)
        .expect("the output renders");
    let s = f64::from(raster.px_per_pt);
    let (pw, ph) = (f64::from(raster.width) / s, f64::from(raster.height) / s);
    let area = match case.crop {
        Crop::AroundChange(mx, my) => {
            let b = change.bbox;
            [b[0] - mx, b[1] - my, b[2] + mx, b[3] + my]
        }
        Crop::BottomRight(w, h) => [pw - w, ph - h, pw, ph],
    };
    Some(crop(&raster, area))
}

#[test]
fn golden_images() {
    if !common::init_pdfium() || common::corpus().is_none() {
        return;
    }
    let limit = threshold();
    let mut failures = Vec::new();
    for case in CASES {
        let Some(actual) = render_case(case) else {
            eprintln!("SKIP {}: {} not in the corpus", case.name, case.file);
            continue;
        };
        let golden = golden_path(case.name);
        if replacing() {
            write_png(&golden, &actual);
            eprintln!("wrote {}", golden.display());
            continue;
        }
        let Some(expected) = read_png(&golden) else {
            failures.push(format!(
                "{}: no golden at {} (run with REPLACE=1 to create it)",
                case.name,
                golden.display()
            ));
            continue;
        };
        let differing = count_diff(&expected, &actual);
        if differing > limit {
            let out = repo_root().join("diffs").join(format!("{}.png", case.name));
            write_png(&out, &three_panel(&expected, &actual));
            failures.push(format!(
                "{}: {differing} pixels differ (threshold {limit}); expected|diff|actual in {}",
                case.name,
                out.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_harness_sees_a_one_pixel_change() {
    let a = Image {
        width: 2,
        height: 2,
        rgb: vec![255; 12],
    };
    let mut b = a.clone();
    b.rgb[3] = 0;
    assert_eq!(count_diff(&a, &a), 0);
    assert_eq!(count_diff(&a, &b), 1);
    let panel = three_panel(&a, &b);
    assert_eq!((panel.width, panel.height), (2 * 3 + 8, 2));
    assert_eq!(
        panel.pixel(2 + 4 + 1, 0),
        [255, 0, 0],
        "the diff panel marks it red"
    );
    let smaller = Image {
        width: 1,
        height: 2,
        rgb: vec![255; 6],
    };
    assert_eq!(
        count_diff(&a, &smaller),
        4,
        "a size change differs everywhere"
    );
}
