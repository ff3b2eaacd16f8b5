//! JPEG 2000 samples as PDFium decodes them.
//!
//! Two JPEG 2000 decoders need not agree to the last level: the irreversible (9/7)
//! wavelet is computed in floating or fixed point, and PDFium's decoder (OpenJPEG) and
//! `hayro-jpeg2000` differ by up to about thirty levels on a lossy scan of the corpus. A
//! masked image is written back losslessly (Flate), and written from another decoder's
//! samples, every pixel of it would change in PDFium, far from the redaction box. So the
//! samples of an RGB image are taken from PDFium itself: the Flate copy then holds exactly
//! what PDFium painted (and Poppler, also decoding with OpenJPEG, agrees).

use lopdf::{dictionary, Document, Object, Stream};

/// PDFium's RGB samples of the JPEG 2000 image `s` (`width`×`height`, three 8-bit
/// components), or why not: the image is put alone on the page of a scratch document,
/// as DeviceRGB without /Decode, so that PDFium's bitmap of it is its raw samples.
pub(super) fn decode_rgb(s: &Stream, width: u32, height: u32) -> Result<Vec<u8>, String> {
    let mut doc = Document::with_version("1.7");
    let mut dict = dictionary! {
        "Type" => "XObject", "Subtype" => "Image",
        "Width" => i64::from(width), "Height" => i64::from(height),
        "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => "JPXDecode",
    };
    if let Ok(p) = s.dict.get(b"DecodeParms") {
        if p.as_dict().is_ok() {
            dict.set("DecodeParms", p.clone());
        }
    }
    let image = doc.add_object(Stream::new(dict, s.content.clone()));
    let content = doc.add_object(Stream::new(
        dictionary! {},
        format!("q {width} 0 0 {height} 0 0 cm /Im0 Do Q").into_bytes(),
    ));
    let pages_id = doc.new_object_id();
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), i64::from(width).into(), i64::from(height).into()],
        "Resources" => dictionary! { "XObject" => dictionary! { "Im0" => image } },
        "Contents" => content,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1,
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).map_err(|e| e.to_string())?;
    let pdf = pdf_render::Document::open(&bytes, None).map_err(|e| e.to_string())?;
    let decoded = pdf
        .first_image_samples(0)
        .map_err(|e| e.to_string())?
        .ok_or("PDFium does not draw the image")?;
    if (decoded.width, decoded.height, decoded.channels) != (width, height, 3) {
        return Err("PDFium decoded the image at another size".into());
    }
    Ok(decoded.samples)
}
