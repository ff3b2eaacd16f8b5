//! Replace and delete on a scanned page, drawn as pixels (SPEC rule 11, `font_source:
//! "raster"`).
//!
//! For each OCR match: the image the page draws under the word is decoded; a crop of it
//! aligned with the word's frame (the displayed page turned by the page's skew as OCR found
//! it) is measured (paper and ink levels, ink box, x-height band, baseline, stroke blur);
//! the Liberation face (Sans or Serif, regular or bold) is chosen by the strokes of the
//! word's line, the ink mass and how its rendering of the old word matches the old ink,
//! sized from the x-height and letter-spaced to the old word's width, and draws the new
//! word with `fontdue`; the old word is painted out with paper pixels taken from the same
//! image row beside it (within the paper's spread of grey: its mean where the paper is
//! flat, its texture where not), the new word blended on top in the ink colour of the old
//! word's darkest pixels, slightly blurred like the scan; the image is written back
//! (Flate, or CCITT Group 4 for a fax image; every other sample keeps its value) in a copy
//! the page points at. The change is verified like every edit (nothing outside its box
//! moves), and OCR of the new render must read the new word (else `failed[]` with reason
//! `ocr_readback_mismatch`).

use crate::types::FailReason;
use std::sync::OnceLock;

use lopdf::Object;
use pdf_content::interp::matrix::{invert, transform_rect, Matrix};

use crate::commit::{change, commit, Checks, PageCheck, Pair, Refusal, Rules, Verdict};
use crate::find::Match;
use crate::image::placements::{dims, pixel_rect, placements, set_xobject};
use crate::image::samples::{rewrite_stream, PixelRect, Samples};
use crate::model::text::PageGeom;
use crate::ocr::{self, OcrWord};
use crate::run::{timed, Run};
use crate::save::save_in_place;
use crate::types::{Change, Edit, EditOp, Timings};
use crate::Error;

/// Fonts tried for the new word: file, name.
const FONTS: [(&str, &str); 4] = [
    ("LiberationSans-Regular.ttf", "LiberationSans"),
    ("LiberationSans-Bold.ttf", "LiberationSans-Bold"),
    ("LiberationSerif-Regular.ttf", "LiberationSerif"),
    ("LiberationSerif-Bold.ttf", "LiberationSerif-Bold"),
];
const FONT_DIR: &str = "/usr/share/fonts/truetype/liberation";

struct Face {
    font: fontdue::Font,
    name: &'static str,
    /// Cap height and x-height as shares of the em.
    cap: f32,
    x: f32,
}

fn faces() -> &'static [Face] {
    static FACES: OnceLock<Vec<Face>> = OnceLock::new();
    FACES.get_or_init(|| {
        FONTS
            .iter()
            .filter_map(|(file, name)| {
                let bytes = std::fs::read(format!("{FONT_DIR}/{file}")).ok()?;
                let font =
                    fontdue::Font::from_bytes(bytes, fontdue::FontSettings::default()).ok()?;
                let cap = font.metrics('H', 100.0).height as f32 / 100.0;
                let x = font.metrics('x', 100.0).height as f32 / 100.0;
                Some(Face { font, name, cap, x })
            })
            .collect()
    })
}

/// A coverage bitmap of a word: rows top to bottom, `baseline` rows from the top.
struct Rendered {
    width: usize,
    height: usize,
    baseline: usize,
    cov: Vec<f32>,
    /// Ink extent along x (columns), for fitting to the old word.
    ink: (usize, usize),
}

impl Rendered {
    fn at(&self, x: f32, y: f32) -> f32 {
        // Bilinear.
        if x < 0.0 || y < 0.0 {
            return 0.0;
        }
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        if x0 + 1 >= self.width || y0 + 1 >= self.height {
            return 0.0;
        }
        let (fx, fy) = (x - x0 as f32, y - y0 as f32);
        let p = |xx: usize, yy: usize| self.cov[yy * self.width + xx];
        let top = p(x0, y0) * (1.0 - fx) + p(x0 + 1, y0) * fx;
        let bottom = p(x0, y0 + 1) * (1.0 - fx) + p(x0 + 1, y0 + 1) * fx;
        top * (1.0 - fy) + bottom * fy
    }
}

/// `text` rasterised at `px` pixels per em, `tracking` pixels added after each letter but
/// the last, with a margin around it.
fn render_word(face: &Face, text: &str, px: f32, tracking: f32) -> Rendered {
    let m = (px * 0.3).ceil() as usize + 2;
    let ascent = (px * 1.0).ceil() as usize;
    let descent = (px * 0.3).ceil() as usize;
    let mut glyphs = Vec::new();
    let mut pen = 0.0f32;
    let mut prev: Option<char> = None;
    for ch in text.chars() {
        if let Some(p) = prev {
            pen += face.font.horizontal_kern(p, ch, px).unwrap_or(0.0) + tracking;
        }
        let (metrics, bitmap) = face.font.rasterize(ch, px);
        glyphs.push((pen, metrics, bitmap));
        pen += metrics.advance_width;
        prev = Some(ch);
    }
    let width = pen.max(0.0).ceil() as usize + 2 * m;
    let height = ascent + descent + 2 * m;
    let baseline = m + ascent;
    let mut cov = vec![0.0f32; width * height];
    let mut ink = (usize::MAX, 0usize);
    for (x, metrics, bitmap) in glyphs {
        let left = (m as f32 + x).round() as i64 + i64::from(metrics.xmin);
        let top = baseline as i64 - i64::from(metrics.ymin) - metrics.height as i64;
        for gy in 0..metrics.height {
            for gx in 0..metrics.width {
                let v = f32::from(bitmap[gy * metrics.width + gx]) / 255.0;
                let (cx, cy) = (left + gx as i64, top + gy as i64);
                if v <= 0.0 || cx < 0 || cy < 0 || cx as usize >= width || cy as usize >= height {
                    continue;
                }
                let at = cy as usize * width + cx as usize;
                cov[at] = (cov[at] + v).min(1.0);
                if v > 0.5 {
                    ink = (ink.0.min(cx as usize), ink.1.max(cx as usize + 1));
                }
            }
        }
    }
    if ink.0 == usize::MAX {
        ink = (m, m);
    }
    Rendered {
        width,
        height,
        baseline,
        cov,
        ink,
    }
}

/// Gaussian blur of a coverage bitmap (separable, radius 2σ).
fn blur(r: &mut Rendered, sigma: f32) {
    if sigma < 0.2 {
        return;
    }
    let radius = (2.0 * sigma).ceil() as i64;
    let kernel: Vec<f32> = (-radius..=radius)
        .map(|i| (-(i * i) as f32 / (2.0 * sigma * sigma)).exp())
        .collect();
    let sum: f32 = kernel.iter().sum();
    let (w, h) = (r.width as i64, r.height as i64);
    let pass = |src: &[f32], horizontal: bool| -> Vec<f32> {
        let mut out = vec![0.0f32; src.len()];
        for y in 0..h {
            for x in 0..w {
                let mut acc = 0.0;
                for (k, kv) in kernel.iter().enumerate() {
                    let d = k as i64 - radius;
                    let (sx, sy) = if horizontal { (x + d, y) } else { (x, y + d) };
                    if sx >= 0 && sy >= 0 && sx < w && sy < h {
                        acc += kv * src[(sy * w + sx) as usize];
                    }
                }
                out[(y * w + x) as usize] = acc / sum;
            }
        }
        out
    };
    let once = pass(&r.cov, true);
    r.cov = pass(&once, false);
    // Blurring thin strokes lowers their peak: the strokes' cores keep full ink, as the
    // scan's own do.
    let peak = r.cov.iter().copied().fold(0.0f32, f32::max);
    if peak > 0.05 && peak < 1.0 {
        for v in &mut r.cov {
            *v = (*v / peak).min(1.0);
        }
    }
}

/// How the image's samples read and write as colour.
struct Pixels<'a> {
    s: &'a mut Samples,
    stride: usize,
    /// 1-bit images: the sample value that is dark.
    dark_bit: u8,
}

impl Pixels<'_> {
    fn get(&self, x: u32, y: u32) -> [f32; 3] {
        let row = &self.s.data[y as usize * self.stride..];
        match (self.s.bpc, self.s.comps) {
            (1, _) => {
                let bit = (row[x as usize / 8] >> (7 - x % 8)) & 1;
                let v = if bit == self.dark_bit { 0.0 } else { 255.0 };
                [v; 3]
            }
            (_, 1) => [f32::from(row[x as usize]); 3],
            _ => {
                let i = x as usize * 3;
                [
                    f32::from(row[i]),
                    f32::from(row[i + 1]),
                    f32::from(row[i + 2]),
                ]
            }
        }
    }

    fn set(&mut self, x: u32, y: u32, c: [f32; 3]) {
        let stride = self.stride;
        let row = &mut self.s.data[y as usize * stride..(y as usize + 1) * stride];
        let byte = |v: f32| v.round().clamp(0.0, 255.0) as u8;
        match (self.s.bpc, self.s.comps) {
            (1, _) => {
                let dark = lum(c) < 128.0;
                let bit = if dark {
                    self.dark_bit
                } else {
                    1 - self.dark_bit
                };
                let mask = 0x80u8 >> (x % 8);
                if bit == 1 {
                    row[x as usize / 8] |= mask;
                } else {
                    row[x as usize / 8] &= !mask;
                }
            }
            (_, 1) => row[x as usize] = byte(lum(c)),
            _ => {
                let i = x as usize * 3;
                row[i] = byte(c[0]);
                row[i + 1] = byte(c[1]);
                row[i + 2] = byte(c[2]);
            }
        }
    }
}

fn lum(c: [f32; 3]) -> f32 {
    0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
}

/// Maps between the image's pixels and displayed page points.
struct Mapping {
    ctm: Matrix,
    inv: Matrix,
    geom: PageGeom,
    w: f64,
    h: f64,
    /// Image pixels per displayed point.
    ppp: f64,
    /// The word's frame: displayed points turned by the page's skew about the word's centre
    /// (sine, cosine, centre), so that a word on a skewed line is measured and drawn along it.
    turn: (f64, f64, (f64, f64)),
}

impl Mapping {
    fn new(ctm: Matrix, geom: PageGeom, w: u32, h: u32) -> Option<Mapping> {
        let det = ctm[0] * ctm[3] - ctm[1] * ctm[2];
        if det.abs() < 1e-9 {
            return None;
        }
        let inv = invert(&ctm)?;
        let (w, h) = (f64::from(w), f64::from(h));
        let ppp = ((w * h) / det.abs()).sqrt();
        Some(Mapping {
            ctm,
            inv,
            geom,
            w,
            h,
            ppp,
            turn: (0.0, 1.0, (0.0, 0.0)),
        })
    }

    /// Measures and draws along a line that rises to the right by `skew_deg` (the page's
    /// skew as OCR found it), about `centre` (displayed points).
    fn along(&mut self, skew_deg: f32, centre: (f64, f64)) {
        let (sin, cos) = f64::from(skew_deg).to_radians().sin_cos();
        self.turn = (sin, cos, centre);
    }

    /// Frame point → displayed point: the frame's x axis runs along the line, (cos, -sin)
    /// on the page (y down), its y axis across it.
    fn frame_to_page(&self, x: f64, y: f64) -> (f64, f64) {
        let (s, c, (cx, cy)) = self.turn;
        let (dx, dy) = (x - cx, y - cy);
        (cx + c * dx + s * dy, cy - s * dx + c * dy)
    }

    /// Displayed point → frame point.
    fn page_to_frame(&self, x: f64, y: f64) -> (f64, f64) {
        let (s, c, (cx, cy)) = self.turn;
        let (dx, dy) = (x - cx, y - cy);
        (cx + c * dx - s * dy, cy + s * dx + c * dy)
    }

    /// The displayed box that holds a frame box.
    fn page_box(&self, b: [f64; 4]) -> [f64; 4] {
        let mut out = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
        for (x, y) in [(b[0], b[1]), (b[2], b[1]), (b[0], b[3]), (b[2], b[3])] {
            let (px, py) = self.frame_to_page(x, y);
            out = [
                out[0].min(px),
                out[1].min(py),
                out[2].max(px),
                out[3].max(py),
            ];
        }
        out
    }

    /// Frame point → image pixel (fractional).
    fn to_image(&self, fx: f64, fy: f64) -> (f64, f64) {
        let (dx, dy) = self.frame_to_page(fx, fy);
        let (ux, uy) = self.geom.user_point(dx, dy);
        let i = &self.inv;
        let u = i[0] * ux + i[2] * uy + i[4];
        let v = i[1] * ux + i[3] * uy + i[5];
        (u * self.w, (1.0 - v) * self.h)
    }

    /// Image pixel centre → frame point.
    fn to_display(&self, px: u32, py: u32) -> (f64, f64) {
        let u = (f64::from(px) + 0.5) / self.w;
        let v = 1.0 - (f64::from(py) + 0.5) / self.h;
        let c = &self.ctm;
        let ux = c[0] * u + c[2] * v + c[4];
        let uy = c[1] * u + c[3] * v + c[5];
        let (dx, dy) = self.geom.display_point(ux, uy);
        self.page_to_frame(dx, dy)
    }

    /// The image pixels a frame box touches.
    fn pixel_box(&self, b: [f64; 4]) -> Option<PixelRect> {
        let b = self.page_box(b);
        let (ax, ay) = self.geom.user_point(b[0], b[1]);
        let (bx, by) = self.geom.user_point(b[2], b[3]);
        let user = [ax.min(bx), ay.min(by), ax.max(bx), ay.max(by)];
        pixel_rect(&self.ctm, self.w as u32, self.h as u32, user)
    }
}

/// What the old word looks like, measured on a crop of the image aligned with the word's
/// frame (the displayed page turned by the page's skew).
struct Measured {
    /// Crop origin (display points) and size (pixels at `ppp`).
    origin: (f64, f64),
    width: usize,
    height: usize,
    /// Darkness of each crop pixel below the paper level (0 = paper).
    dark: Vec<f32>,
    /// Ink extent in crop pixels: left, right, top, baseline.
    left: usize,
    right: usize,
    top: usize,
    baseline: usize,
    /// Top of the rows dense with ink: the x-height line (the cap height of a word
    /// without lower-case letters), which ascenders (sparse) do not move.
    band_top: usize,
    paper: [f32; 3],
    ink_colour: [f32; 3],
    paper_level: f32,
    /// Spread (standard deviation) of the paper's grey level around the word.
    paper_spread: f32,
    threshold: f32,
    /// Blur of the scan's edges (σ in image pixels).
    sigma: f32,
}

/// The colours of a `width` × `height` crop at the mapping's resolution from `origin`
/// (displayed points), row by row, each sampled from the image pixel under its centre.
fn crop_colours(
    px: &Pixels,
    map: &Mapping,
    origin: (f64, f64),
    width: usize,
    height: usize,
) -> Vec<[f32; 3]> {
    let mut colours = Vec::with_capacity(width * height);
    for cy in 0..height {
        for cx in 0..width {
            let dx = origin.0 + (cx as f64 + 0.5) / map.ppp;
            let dy = origin.1 + (cy as f64 + 0.5) / map.ppp;
            let (ix, iy) = map.to_image(dx, dy);
            let (ix, iy) = (
                ix.clamp(0.0, map.w - 1.0) as u32,
                iy.clamp(0.0, map.h - 1.0) as u32,
            );
            colours.push(px.get(ix, iy));
        }
    }
    colours
}

/// The ink and paper colours of a crop, and how many of its pixels are stroke cores and
/// blurred edges.
struct Tones {
    /// The mean colour of the strokes' cores (not of their blurred edges).
    ink: [f32; 3],
    paper: [f32; 3],
    core: usize,
    edge: usize,
}

impl Tones {
    /// From the crop's colours and grey levels, given its ink level, ink threshold and
    /// paper level.
    fn of(
        colours: &[[f32; 3]],
        lums: &[f32],
        [ink_level, threshold, paper_level]: [f32; 3],
    ) -> Self {
        let (mut ink_sum, mut ink_n) = ([0.0f32; 3], 0.0f32);
        let (mut paper_sum, mut paper_n) = ([0.0f32; 3], 0.0f32);
        let dark_cut = ink_level + (threshold - ink_level) * 0.25;
        let (mut edge, mut core) = (0usize, 0usize);
        for (i, c) in colours.iter().enumerate() {
            let l = lums[i];
            if l <= dark_cut {
                for k in 0..3 {
                    ink_sum[k] += c[k];
                }
                ink_n += 1.0;
            }
            if l >= paper_level - 10.0 {
                for k in 0..3 {
                    paper_sum[k] += c[k];
                }
                paper_n += 1.0;
            }
            let quarter = (paper_level - ink_level) / 4.0;
            if l < ink_level + quarter {
                core += 1;
            } else if l < paper_level - quarter {
                edge += 1;
            }
        }
        let avg = |s: [f32; 3], n: f32| s.map(|v| v / n.max(1.0));
        Self {
            ink: avg(ink_sum, ink_n),
            paper: avg(paper_sum, paper_n),
            core,
            edge,
        }
    }
}

fn measure(px: &Pixels, map: &Mapping, word: [f64; 4]) -> Option<Measured> {
    let h_pt = word[3] - word[1];
    let origin = (word[0] - 0.25 * h_pt, word[1] - 0.3 * h_pt);
    let end = (word[2] + 0.25 * h_pt, word[3] + 0.3 * h_pt);
    let width = ((end.0 - origin.0) * map.ppp).ceil() as usize;
    let height = ((end.1 - origin.1) * map.ppp).ceil() as usize;
    if width < 4 || height < 4 || width * height > 4_000_000 {
        return None;
    }
    let colours = crop_colours(px, map, origin, width, height);
    let mut levels: Vec<f32> = colours.iter().map(|&c| lum(c)).collect();
    let lums = levels.clone();
    levels.sort_by(f32::total_cmp);
    let paper_level = levels[levels.len() * 3 / 4];
    let ink_level = levels[levels.len() / 50];
    if paper_level - ink_level < 40.0 {
        return None;
    }
    let threshold = (paper_level + ink_level) / 2.0;
    let ink: Vec<bool> = lums.iter().map(|&l| l < threshold).collect();
    let dark: Vec<f32> = lums.iter().map(|&l| (paper_level - l).max(0.0)).collect();
    // The word's own ink: inside its OCR box.
    let to_crop = |d: f64, o: f64| ((d - o) * map.ppp).round().max(0.0) as usize;
    let (bx0, bx1) = (
        to_crop(word[0], origin.0),
        to_crop(word[2], origin.0).min(width),
    );
    let (by0, by1) = (
        to_crop(word[1], origin.1),
        to_crop(word[3], origin.1).min(height),
    );
    let mut rows = vec![0usize; height];
    let (mut left, mut right) = (usize::MAX, 0);
    for y in by0..by1 {
        for x in bx0..bx1 {
            if ink[y * width + x] {
                rows[y] += 1;
                left = left.min(x);
                right = right.max(x + 1);
            }
        }
    }
    let max_row = *rows.iter().max()?;
    if max_row == 0 {
        return None;
    }
    // The OCR box of a word found inside a longer OCR word ("powerful" of "powerful,") is
    // apportioned by letters and can cut a letter: the ink box grows over ink columns that
    // touch it, up to a third of the box height.
    let grow = ((by1 - by0) / 3).max(1);
    let column_inked = |x: usize| (by0..by1).any(|y| ink[y * width + x]);
    let mut grown = 0;
    while right < width && grown < grow && column_inked(right) {
        right += 1;
        grown += 1;
    }
    grown = 0;
    while left > 0 && left < width && grown < grow && column_inked(left - 1) {
        left -= 1;
        grown += 1;
    }
    let top = rows.iter().position(|&r| r * 10 >= max_row)?;
    let band_top = rows.iter().position(|&r| r * 5 >= max_row * 2)?;
    // Baseline: the lowest row still dense with ink (descenders are sparse).
    let baseline = rows.iter().rposition(|&r| r * 4 >= max_row)? + 1;
    let tones = Tones::of(&colours, &lums, [ink_level, threshold, paper_level]);
    // The paper's spread: grey levels of the crop's lighter half around their mean.
    let light: Vec<f32> = lums
        .iter()
        .copied()
        .filter(|&l| l >= paper_level - 0.25 * (paper_level - ink_level))
        .collect();
    let mean = light.iter().sum::<f32>() / light.len().max(1) as f32;
    let paper_spread = (light.iter().map(|l| (l - mean) * (l - mean)).sum::<f32>()
        / light.len().max(1) as f32)
        .sqrt();
    let sigma = if px.s.bpc == 1 {
        0.0
    } else {
        (tones.edge as f32 / tones.core.max(1) as f32 * 0.5).clamp(0.25, 0.9)
    };
    Some(Measured {
        origin,
        width,
        height,
        dark,
        left,
        right,
        top,
        baseline,
        band_top,
        paper: tones.paper,
        ink_colour: tones.ink,
        paper_level,
        paper_spread,
        threshold,
        sigma,
    })
}

/// Stroke widths of text, in pixels: the vertical stems (the median of horizontal ink runs
/// across the middle of the x-height band), the horizontal strokes (the median of vertical
/// runs shorter than half that band) and the band's height.
#[derive(Debug, Clone, Copy)]
struct Strokes {
    stem: f32,
    hair: f32,
    band: f32,
}

impl Strokes {
    /// Stem width over x-height: what tells bold from regular.
    fn weight(&self) -> f32 {
        self.stem / self.band
    }

    /// Stems over horizontal strokes: what tells a serif face (thick and thin) from a sans.
    fn contrast(&self) -> f32 {
        self.stem / self.hair
    }
}

/// [`Strokes`] of an ink mask `w` pixels wide whose x-height band is rows `top..baseline`.
fn strokes(ink: &[bool], w: usize, top: usize, baseline: usize) -> Option<Strokes> {
    let h = ink.len() / w.max(1);
    let band = baseline.saturating_sub(top);
    if band < 4 || baseline > h {
        return None;
    }
    let longest = band / 2;
    let mut stems = Vec::new();
    for y in top + band * 3 / 10..baseline - band * 3 / 10 {
        let mut run = 0usize;
        for x in 0..w {
            if ink[y * w + x] {
                run += 1;
            } else {
                // Runs that touch the crop's edge are cut: not counted.
                if run > 0 && run < x && run <= longest {
                    stems.push(run);
                }
                run = 0;
            }
        }
    }
    let (lo, hi) = (top.saturating_sub(band / 3), (baseline + band / 3).min(h));
    let mut hairs = Vec::new();
    for x in 0..w {
        let mut run = 0usize;
        for y in lo..hi {
            if ink[y * w + x] {
                run += 1;
            } else {
                if run > 0 && y - run > lo && run < longest {
                    hairs.push(run);
                }
                run = 0;
            }
        }
    }
    if stems.len() < 8 || hairs.len() < 8 {
        return None;
    }
    // The mean of the middle half: a median that is not held to whole pixels.
    let median = |v: &mut Vec<usize>| {
        v.sort_unstable();
        let mid = &v[v.len() / 4..v.len() - v.len() / 4];
        mid.iter().sum::<usize>() as f32 / mid.len().max(1) as f32
    };
    Some(Strokes {
        stem: median(&mut stems),
        hair: median(&mut hairs),
        band: band as f32,
    })
}

/// [`Strokes`] of `face` drawn at `px` pixels per em (a sample of lower-case letters).
fn face_strokes(face: &Face, px: f32) -> Option<Strokes> {
    let r = render_word(face, "handgloves minimum", px, 0.0);
    let ink: Vec<bool> = r.cov.iter().map(|&v| v >= 0.5).collect();
    let top = r.baseline - (face.x * px).round() as usize;
    strokes(&ink, r.width, top, r.baseline)
}

/// [`Strokes`] of the text on the old word's line: the word and its neighbours (up to ten
/// word heights on each side), on a crop with the rows of the word's own crop.
fn line_strokes(px: &Pixels, map: &Mapping, word: [f64; 4], m: &Measured) -> Option<Strokes> {
    let h_pt = word[3] - word[1];
    let x_start = word[0] - 10.0 * h_pt;
    let width = ((word[2] - word[0] + 20.0 * h_pt) * map.ppp).ceil() as usize;
    if width * m.height > 8_000_000 {
        return None;
    }
    let mut ink = Vec::with_capacity(width * m.height);
    for cy in 0..m.height {
        for cx in 0..width {
            let dx = x_start + (cx as f64 + 0.5) / map.ppp;
            let dy = m.origin.1 + (cy as f64 + 0.5) / map.ppp;
            let (ix, iy) = map.to_image(dx, dy);
            // Beyond the image: paper.
            let inside = ix >= 0.0 && iy >= 0.0 && ix < map.w && iy < map.h;
            ink.push(inside && lum(px.get(ix as u32, iy as u32)) < m.threshold);
        }
    }
    strokes(&ink, width, m.band_top, m.baseline)
}

/// How a redrawn word is fitted to the old one: face, em size (pixels), letter spacing
/// added (pixels) and the horizontal scale left after it.
struct Fit {
    face: &'static Face,
    px: f32,
    tracking: f32,
    scale: f32,
}

/// The face, size and spacing that best redraw the old word. The size comes from the
/// x-height (the cap height when the word has no lower-case letter); the letter spacing
/// from the old word's width (the glyphs keep their shapes, the spacing takes the
/// difference). Serif or sans and the weight come from the strokes of the old word's line
/// (`line`: its neighbours too, so one short word does not decide) against each face's own
/// strokes at the same size; the correlation of each face's rendering with the old word's
/// pixels decides the rest.
fn choose_face(old: &str, m: &Measured, line: Option<Strokes>) -> Option<Fit> {
    let lower = old.chars().any(char::is_lowercase);
    let band = m.baseline.saturating_sub(m.band_top) as f32;
    let ink_w = m.right.saturating_sub(m.left) as f32;
    if band < 3.0 || ink_w < 2.0 {
        return None;
    }
    let gaps = old.chars().count().saturating_sub(1) as f32;
    // The old word's ink mass above its baseline, one for a pixel of full ink.
    let full = (2.0 * (m.paper_level - m.threshold)).max(1.0);
    let rows = m.top.saturating_sub(2)..m.baseline.min(m.height);
    let scan_mass = rows
        .flat_map(|cy| (m.left..m.right).map(move |cx| cy * m.width + cx))
        .map(|i| m.dark[i] / full)
        .sum::<f32>()
        .max(1.0);
    let mut best: Option<(Fit, f32)> = None;
    for face in faces() {
        let ratio = if lower { face.x } else { face.cap };
        if ratio <= 0.0 {
            continue;
        }
        let px = band / ratio;
        let plain = render_word(face, old, px, 0.0);
        let rw = plain.ink.1.saturating_sub(plain.ink.0) as f32;
        if rw < 1.0 {
            continue;
        }
        let tracking = if gaps > 0.0 {
            ((ink_w - rw) / gaps).clamp(-0.06 * px, 0.12 * px)
        } else {
            0.0
        };
        let mut r = render_word(face, old, px, tracking);
        let tw = r.ink.1.saturating_sub(r.ink.0).max(1) as f32;
        let scale = (ink_w / tw).clamp(0.85, 1.18);
        // Ink mass above the baseline (coverage summed), which a blur keeps: the weight of
        // the strokes as drawn.
        let face_mass = r.cov[..r.baseline * r.width].iter().sum::<f32>() * scale;
        // Correlation of the rendering (left ink edge and baseline aligned, blurred like the
        // scan) with the old word's darkness: unlike an overlap of thresholded masks it does
        // not favour thick strokes when the scan's blur thickens thin ones.
        blur(&mut r, m.sigma);
        let (mut n, mut sa, mut sb, mut saa, mut sbb, mut sab) = (0.0f32, 0.0, 0.0, 0.0, 0.0, 0.0);
        for cy in m.top.saturating_sub(2)..(m.baseline + (px * 0.3) as usize).min(m.height) {
            for cx in m.left..m.right {
                let rx = r.ink.0 as f32 + (cx - m.left) as f32 / scale;
                let ry = r.baseline as f32 + cy as f32 - m.baseline as f32;
                let a = r.at(rx, ry);
                let b = m.dark[cy * m.width + cx];
                n += 1.0;
                sa += a;
                sb += b;
                saa += a * a;
                sbb += b * b;
                sab += a * b;
            }
        }
        let cov = sab - sa * sb / n.max(1.0);
        let var = ((saa - sa * sa / n.max(1.0)) * (sbb - sb * sb / n.max(1.0))).max(1e-6);
        // Correlation, less a penalty for squeezing (the right face needs little) and for
        // an ink mass unlike the old word's.
        let mut score = cov / var.sqrt()
            - 0.5 * scale.ln().abs()
            - 2.0 * (face_mass / scan_mass).ln().abs().min(2.0);
        // Strokes of the line: log distances of contrast and weight (a factor of two costs
        // 0.35 and 1.4; at 300 dpi the weight, stem over x-height, also tells Times from
        // Arial, whose x-height is larger).
        if let (Some(l), Some(f)) = (line, face_strokes(face, px)) {
            score -= 0.5 * (f.contrast() / l.contrast()).ln().abs()
                + 2.0 * (f.weight() / l.weight()).ln().abs();
        }
        if best.as_ref().is_none_or(|b| score > b.1) {
            best = Some((
                Fit {
                    face,
                    px,
                    tracking,
                    scale,
                },
                score,
            ));
        }
    }
    best.map(|b| b.0)
}

/// Whether an image (its dictionary) can be drawn into: no mask, a gray or RGB colour
/// space, no /Decode array but an inverted one. Returns the bit value of dark pixels of a
/// 1-bit image, or why not.
fn drawable(dict: &lopdf::Dictionary) -> Result<u8, &'static str> {
    if dict.has(b"SMask") || dict.has(b"Mask") {
        return Err("the image under the word has a mask");
    }
    let colour_ok = match dict.get(b"ColorSpace") {
        Ok(Object::Name(n)) => matches!(
            n.as_slice(),
            b"DeviceGray" | b"DeviceRGB" | b"CalGray" | b"CalRGB"
        ),
        Ok(Object::Array(a)) => a
            .first()
            .and_then(|o| o.as_name().ok())
            .is_some_and(|n| matches!(n, b"ICCBased" | b"CalGray" | b"CalRGB")),
        Ok(Object::Reference(_)) => true,
        _ => dict.has(b"ImageMask") || dict.has(b"Filter"),
    };
    if !colour_ok {
        return Err("the image's colour space cannot be drawn into");
    }
    match dict.get(b"Decode").and_then(Object::as_array) {
        Ok(d)
            if d.first()
                .and_then(|o| o.as_float().ok())
                .is_some_and(|v| v > 0.5) =>
        {
            Ok(1)
        }
        Ok(d) if d.len() > 2 => Err("the image has a /Decode array"),
        _ => Ok(0),
    }
}

/// One match redrawn in the page's image: the new document (not yet saved), the change's
/// display area, the new word's display box and the font used.
fn redraw(run: &mut Run, m: &Match, op: EditOp) -> Result<([f64; 4], [f64; 4], String), Refusal> {
    let unsupported = |s: String| (FailReason::ImageUnsupported, s);
    let pages = run.page_ids();
    let page_id = pages[&m.page];
    run.model(m.page, page_id)
        .map_err(|e| unsupported(e.to_string()))?;
    let model = &run.models[&m.page];
    let geom = model.geom;
    // The image drawn last under the word (the one on top).
    let placement = placements(&run.doc, model)
        .into_iter()
        .filter(|p| p.image.is_some())
        .rfind(|p| {
            let b = transform_rect(&p.ctm, [0.0, 0.0, 1.0, 1.0]);
            let u = m.bbox_user;
            u[0] >= b[0] - 1.0 && u[1] >= b[1] - 1.0 && u[2] <= b[2] + 1.0 && u[3] <= b[3] + 1.0
        })
        .ok_or_else(|| unsupported("no image lies under the word".into()))?;
    let Some(image_id) = placement.image else {
        return Err(unsupported("no image lies under the word".into()));
    };
    let original = run
        .doc
        .get_object(image_id)
        .and_then(Object::as_stream)
        .map_err(|e| unsupported(e.to_string()))?
        .clone();
    let dark_bit = drawable(&original.dict).map_err(|m| unsupported(m.into()))?;
    let (w, h) =
        dims(&original).ok_or_else(|| unsupported("the image has no usable size".into()))?;
    let mut map = Mapping::new(placement.ctm, geom, w, h)
        .ok_or_else(|| unsupported("the image is drawn flat".into()))?;
    let skew = run
        .ocr
        .as_ref()
        .and_then(|o| o.pages.get(&m.page))
        .and_then(Option::as_ref)
        .map_or(0.0, |p| p.skew);
    let b = m.bbox;
    map.along(skew, ((b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0));
    let old = m.found.clone();
    let new = m.replacement.clone();
    let mut outcome: Result<([f64; 4], [f64; 4], String), Refusal> =
        Err(unsupported("the image could not be decoded".into()));
    let stream = rewrite_stream(&run.doc, &original, |samples, stride| {
        if !matches!((samples.bpc, samples.comps), (8, 1) | (8, 3) | (1, 1)) {
            outcome = Err(unsupported(format!(
                "{} bits and {} components per pixel are not drawn into yet",
                samples.bpc, samples.comps
            )));
            return;
        }
        let mut px = Pixels {
            s: samples,
            stride,
            dark_bit,
        };
        outcome = draw(&mut px, &map, m.bbox, &old, &new, op);
    })
    .map_err(unsupported)?;
    let (area, new_box, font) = outcome?;
    let new_id = run.doc.add_object(stream);
    let mut copies = std::collections::HashMap::new();
    set_xobject(
        &mut run.doc,
        page_id,
        &placement.forms,
        &placement.name,
        new_id,
        &mut copies,
    )
    .map_err(unsupported)?;
    Ok((area, new_box, font))
}

/// The paper beside the old word on image row `y`, up to `reach` pixels left and right
/// of it (pixels at least `paper_min` light), and its mean colour.
fn row_paper(
    px: &Pixels,
    old_rect: &PixelRect,
    y: u32,
    reach: u32,
    paper_min: f32,
) -> (Vec<[f32; 3]>, [f32; 3]) {
    let mut paper: Vec<[f32; 3]> = Vec::new();
    let mut x = old_rect.x0;
    while x > 0 && old_rect.x0 - x < reach && paper.len() < 24 {
        x -= 1;
        let c = px.get(x, y);
        if lum(c) >= paper_min {
            paper.push(c);
        }
    }
    let mut x = old_rect.x1;
    while x + 1 < px.s.width && x - old_rect.x1 < reach && paper.len() < 48 {
        let c = px.get(x, y);
        if lum(c) >= paper_min {
            paper.push(c);
        }
        x += 1;
    }
    let mut row_mean = [0.0f32; 3];
    for c in &paper {
        for k in 0..3 {
            row_mean[k] += c[k] / paper.len().max(1) as f32;
        }
    }
    (paper, row_mean)
}

/// Paints the old word out and the new one in; returns the change's display area, the new
/// word's display box and the font used.
fn draw(
    px: &mut Pixels,
    map: &Mapping,
    word: [f64; 4],
    old: &str,
    new: &str,
    op: EditOp,
) -> Result<([f64; 4], [f64; 4], String), Refusal> {
    let unreadable = |s: &str| (FailReason::ImageUnsupported, s.to_string());
    let m = measure(px, map, word)
        .ok_or_else(|| unreadable("the word's pixels show no ink on paper"))?;
    let to_display = |cx: f64, cy: f64| (m.origin.0 + cx / map.ppp, m.origin.1 + cy / map.ppp);
    let (ink_x0, ink_y0) = to_display(m.left as f64, m.top as f64);
    let (ink_x1, base_y) = to_display(m.right as f64, m.baseline as f64);
    let pad = 2.5 / map.ppp + 0.06 * (base_y - ink_y0);
    // The old word's ink, with the OCR box: everything of it goes.
    let old_area = [
        word[0].min(ink_x0) - pad,
        word[1].min(ink_y0) - pad,
        word[2].max(ink_x1) + pad,
        word[3].max(base_y) + pad,
    ];
    let mut rendered = None;
    let mut new_box = old_area;
    let mut font = String::new();
    if op == EditOp::Replace && !new.trim().is_empty() {
        let line = line_strokes(px, map, word, &m);
        let fit = choose_face(old, &m, line)
            .ok_or_else(|| unreadable("the word is too small to measure"))?;
        let (face, em, k) = (fit.face, fit.px, fit.scale);
        let mut r = render_word(face, new, em, fit.tracking);
        blur(&mut r, m.sigma);
        let w_pt = (r.ink.1 - r.ink.0) as f64 * f64::from(k) / map.ppp;
        let asc = (r.baseline as f64 - 0.0) / map.ppp;
        let desc = (r.height - r.baseline) as f64 / map.ppp;
        new_box = [
            ink_x0,
            base_y - asc.min(f64::from(em) * 1.0 / map.ppp),
            ink_x0 + w_pt,
            base_y + desc.min(f64::from(em) * 0.3 / map.ppp),
        ];
        font = face.name.to_string();
        rendered = Some((r, k));
    }
    let area = [
        old_area[0].min(new_box[0]),
        old_area[1].min(new_box[1]),
        old_area[2].max(new_box[2]),
        old_area[3].max(new_box[3]),
    ];
    let rect = map
        .pixel_box(area)
        .ok_or_else(|| unreadable("the word lies outside the image"))?;
    let old_rect = map.pixel_box(old_area).unwrap_or(rect);
    // Paper beside the word on each image row: its own shading, and its texture where it
    // has one. Only pixels within the paper's own spread count: the light edges of letters
    // would leave a faint patch where the word was.
    let reach = ((rect.y1 - rect.y0) * 3).max(8);
    let paper_min = (m.paper_level - (2.5 * m.paper_spread).max(6.0))
        .max(m.paper_level - (m.paper_level - m.threshold) * 0.5);
    let flat = m.paper_spread < 2.5;
    let mut updates = Vec::new();
    for y in rect.y0..rect.y1 {
        let (paper, row_mean) = row_paper(px, &old_rect, y, reach, paper_min);
        for x in rect.x0..rect.x1 {
            // Inside the old word's area of the frame (along a skewed line, not its box).
            let (fx, fy) = map.to_display(x, y);
            let inside_old = x >= old_rect.x0
                && x < old_rect.x1
                && y >= old_rect.y0
                && y < old_rect.y1
                && fx >= old_area[0]
                && fx <= old_area[2]
                && fy >= old_area[1]
                && fy <= old_area[3];
            let current = px.get(x, y);
            let bg = if inside_old {
                if paper.len() < 6 {
                    m.paper
                } else if flat {
                    row_mean
                } else {
                    let hash = (x.wrapping_mul(73_856_093) ^ y.wrapping_mul(19_349_663)) as usize;
                    paper[hash % paper.len()]
                }
            } else {
                current
            };
            let mut value = bg;
            if let Some((r, k)) = &rendered {
                let rx = r.ink.0 as f64 + (fx - ink_x0) * map.ppp / f64::from(*k);
                let ry = r.baseline as f64 + (fy - base_y) * map.ppp;
                let a = r.at(rx as f32, ry as f32);
                if a > 0.0 {
                    for c in 0..3 {
                        value[c] = bg[c] * (1.0 - a) + m.ink_colour[c] * a;
                    }
                }
            }
            if value != current {
                updates.push((x, y, value));
            }
        }
    }
    for (x, y, v) in updates {
        px.set(x, y, v);
    }
    // The change's area and the new word's box on the page (the frame's turned boxes).
    Ok((map.page_box(area), map.page_box(new_box), font))
}

/// Letters and digits only, lower case: what a read-back is compared on.
fn normal(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

impl Run {
    /// Replace or delete every OCR match of `edit`, each drawn as pixels and verified on
    /// its own.
    pub(crate) fn raster(&mut self, edit: &Edit, matches: Vec<Match>) -> Result<(), Error> {
        for m in matches {
            self.raster_one(edit, &m)?;
        }
        Ok(())
    }

    fn raster_one(&mut self, edit: &Edit, m: &Match) -> Result<(), Error> {
        let snapshot = self.doc.clone();
        let (area, new_box, font) = match redraw(self, m, edit.op) {
            Ok(v) => v,
            Err(refusal) => {
                self.refuse(snapshot, edit, refusal);
                return Ok(());
            }
        };
        let new_bytes = timed(&mut self.result.timings.save_ms, || {
            save_in_place(&mut self.doc)
        })?;
        let page = PageCheck {
            page: m.page,
            areas: vec![area],
            moved: Vec::new(),
            shown: vec![area],
        };
        let mut read_back = ReadBack {
            languages: self
                .ocr
                .as_ref()
                .map_or_else(|| "eng".to_string(), |o| o.languages.clone()),
            m,
            op: edit.op,
            new_box,
        };
        let rules = Rules::new(edit, "the redrawn word");
        let verdict = commit(
            &mut self.verifier(),
            &rules,
            new_bytes,
            &[page],
            &mut read_back,
        )?;
        let Verdict::Kept(kept) = verdict else {
            self.rollback(snapshot);
            return Ok(());
        };
        for crops in kept.into_iter().flat_map(|k| k.previews) {
            self.result.changes.push(Change {
                find: m.found.clone(),
                replace: m.replacement.clone(),
                font_source: "raster",
                font_used: font.clone(),
                ..change(edit, m.page, 0, area, crops)
            });
        }
        self.models.remove(&m.page);
        if let Err(at) = self.result.ocr_pages.binary_search(&m.page) {
            self.result.ocr_pages.insert(at, m.page);
        }
        self.follow_ocr_words(edit, m, new_box);
        Ok(())
    }

    /// The page's OCR words follow a kept change: the old word goes, the new one (of a
    /// replace) takes its place in its line.
    fn follow_ocr_words(&mut self, edit: &Edit, m: &Match, new_box: [f64; 4]) {
        let Some(Some(page)) = self.ocr.as_mut().and_then(|o| o.pages.get_mut(&m.page)) else {
            return;
        };
        let inside = |w: &OcrWord| {
            let b = w.bbox.map(f64::from);
            let cx = (b[0] + b[2]) / 2.0;
            let cy = (b[1] + b[3]) / 2.0;
            cx >= m.bbox[0] && cx <= m.bbox[2] && cy >= m.bbox[1] && cy <= m.bbox[3]
        };
        let at = page.words.iter().position(inside);
        let line = at.map(|i| {
            (
                page.words[i].line,
                page.words[i].block,
                page.words[i].confidence,
            )
        });
        page.words.retain(|w| !inside(w));
        if let (Some(i), Some((line, block, confidence))) = (at, line) {
            if edit.op == EditOp::Replace {
                page.words.insert(
                    i.min(page.words.len()),
                    OcrWord {
                        text: m.replacement.clone(),
                        bbox: new_box.map(|v| v as f32),
                        confidence,
                        block,
                        line,
                    },
                );
            }
        }
    }
}

/// The raster operation's last check: the redrawn word, read back by OCR from a 300 dpi
/// render of the candidate, must read as the replacement (or no longer as the deleted
/// word).
struct ReadBack<'a> {
    /// Tesseract's `-l` argument.
    languages: String,
    m: &'a Match,
    op: EditOp,
    /// The new word's box on the page (top-left points).
    new_box: [f64; 4],
}

impl Checks for ReadBack<'_> {
    fn after(&mut self, pair: &Pair<'_>, timings: &mut Timings) -> Result<Option<Refusal>, Error> {
        let start = std::time::Instant::now();
        let read = readback(
            pair.after_pdf,
            pair.page.page,
            self.new_box,
            &self.languages,
        );
        timings.ocr_ms += crate::run::ms_since(start);
        let read = read?;
        let m = self.m;
        let ok = match self.op {
            EditOp::Replace => normal(&read).contains(&normal(&m.replacement)),
            _ => normal(&m.found).is_empty() || !normal(&read).contains(&normal(&m.found)),
        };
        Ok((!ok).then(|| {
            (
                FailReason::OcrReadbackMismatch,
                format!(
                    "OCR of the redrawn word reads \"{read}\", not \"{}\"; rolled back",
                    m.replacement
                ),
            )
        }))
    }
}

/// What OCR reads in `bbox` (displayed points, with a margin) of a 300 dpi render.
fn readback(bytes: &[u8], page: u32, bbox: [f64; 4], languages: &str) -> Result<String, Error> {
    let raster = pdf_render::raster::rasterize_page(bytes, None, page - 1, ocr::OCR_PX_PER_PT)?;
    let gray = ocr::gray_of(&raster);
    let s = f64::from(raster.px_per_pt);
    let h = bbox[3] - bbox[1];
    let clamp = |v: f64, max: u32| (v * s).round().clamp(0.0, f64::from(max)) as u32;
    let x0 = clamp(bbox[0] - 0.15 * h, raster.width);
    let x1 = clamp(bbox[2] + 0.15 * h, raster.width);
    let y0 = clamp(bbox[1] - 0.3 * h, raster.height);
    let y1 = clamp(bbox[3] + 0.3 * h, raster.height);
    if x1 <= x0 || y1 <= y0 {
        return Ok(String::new());
    }
    // A white border helps Tesseract find the line.
    let border = 20u32;
    let (cw, ch) = (x1 - x0 + 2 * border, y1 - y0 + 2 * border);
    let mut crop = vec![255u8; (cw * ch) as usize];
    for y in y0..y1 {
        let src = (y * raster.width + x0) as usize..(y * raster.width + x1) as usize;
        let dst = ((y - y0 + border) * cw + border) as usize;
        crop[dst..dst + (x1 - x0) as usize].copy_from_slice(&gray[src]);
    }
    ocr::read_line(&crop, cw, ch, languages)
}
