//! Debug helper: `render_diff A.pdf B.pdf PAGE [x0 y0 x1 y1]` rasterises a page of both
//! files as verification does and prints the pixels that differ (top-left points).
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let lib = std::env::var("PDFIUM_LIB_PATH").expect("PDFIUM_LIB_PATH");
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("init");
    let page: u32 = a[3].parse().expect("page");
    let ra =
        pdf_render::raster::rasterize_page(&std::fs::read(&a[1]).expect("a"), None, page - 1, 2.0)
            .expect("render a");
    let rb =
        pdf_render::raster::rasterize_page(&std::fs::read(&a[2]).expect("b"), None, page - 1, 2.0)
            .expect("render b");
    let region: Vec<f64> = a[4..].iter().map(|v| v.parse().expect("num")).collect();
    let w = ra.width as usize;
    let mut n = 0;
    for y in 0..ra.height as usize {
        for x in 0..w {
            let i = (y * w + x) * 3;
            let (pa, pb) = (&ra.pixels[i..i + 3], &rb.pixels[i..i + 3]);
            let d = pa
                .iter()
                .zip(pb)
                .map(|(p, q)| p.abs_diff(*q))
                .max()
                .unwrap_or(0);
            let (px, py) = (x as f64 / 2.0, y as f64 / 2.0);
            let inside = region.len() == 4
                && px >= region[0]
                && px <= region[2]
                && py >= region[1]
                && py <= region[3];
            if d > 8 && (region.len() != 4 || !inside) {
                n += 1;
                if n < 60 {
                    println!("({px},{py}) {pa:?} -> {pb:?}");
                }
            }
        }
    }
    println!(
        "{n} pixels differ outside; colour pixels {} / {}",
        colour_pixels(&ra),
        colour_pixels(&rb)
    );
}
#[allow(dead_code)]
fn colour_pixels(r: &pdf_render::raster::Raster) -> usize {
    r.pixels
        .chunks(3)
        .filter(|p| p[0] != p[1] || p[1] != p[2])
        .count()
}
