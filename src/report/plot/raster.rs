//! A plot's SVG as a PNG, for the figure files (`report::figure_files`): resvg draws it on
//! white at a chosen width. Text is set in the DejaVu Sans bundled in the binary and nothing
//! else, so a bare machine (no fontconfig, no system fonts) draws the same letters as a desktop;
//! the SVG's `sans-serif` is mapped to it.
use resvg::{tiny_skia, usvg};
use std::sync::{Arc, OnceLock};

/// DejaVu Sans (Bitstream Vera licence, assets/fonts/LICENSE-DejaVu.txt): it has the µ, ±, ×
/// and … the figures' labels use.
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
const FAMILY: &str = "DejaVu Sans";

/// The font database, built once per process: parsing the face is the costly part.
fn fonts() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_font_data(FONT.to_vec());
        db.set_sans_serif_family(FAMILY);
        Arc::new(db)
    })
    .clone()
}

/// `svg` rasterized to `width` pixels wide (the height keeps its aspect) on a white ground,
/// encoded as PNG; the error says what resvg or the encoder refused.
pub fn png(svg: &str, width: u32) -> Result<Vec<u8>, String> {
    let options = usvg::Options {
        font_family: FAMILY.into(),
        fontdb: fonts(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| format!("SVG not read: {e}"))?;
    let size = tree.size();
    let scale = width as f32 / size.width();
    let height = (size.height() * scale).ceil() as u32;
    let mut pixmap = tiny_skia::Pixmap::new(width, height)
        .ok_or_else(|| format!("no {width}×{height} pixel canvas"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| format!("PNG not encoded: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Width, height and the RGBA pixels of a PNG.
    fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::normalize_to_color8());
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buf = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buf).expect("a frame");
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    /// Pixels darker than mid-grey in a row band.
    fn dark_pixels(width: u32, pixels: &[u8], rows: std::ops::Range<u32>) -> usize {
        let row = width as usize * 4;
        pixels[rows.start as usize * row..rows.end as usize * row]
            .chunks_exact(4)
            .filter(|px| px[0] < 128 && px[3] > 0)
            .count()
    }

    #[test]
    fn a_plot_is_drawn_at_the_width_asked_on_white() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"50\">\
                   <rect x=\"10\" y=\"10\" width=\"20\" height=\"20\" fill=\"#000\"/></svg>";
        let (w, h, pixels) = decode(&png(svg, 400).unwrap());
        assert_eq!((w, h), (400, 200));
        assert_eq!(&pixels[..4], [255, 255, 255, 255], "the ground is white");
        // The square, scaled by 4: 80 × 80 black pixels.
        assert_eq!(dark_pixels(w, &pixels, 0..h), 80 * 80);
    }

    #[test]
    fn text_is_drawn_with_the_bundled_font() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"40\" \
                   font-family=\"sans-serif\"><text x=\"5\" y=\"30\" font-size=\"24\" \
                   fill=\"#000\">µs ± 1</text></svg>";
        let (w, h, pixels) = decode(&png(svg, 200).unwrap());
        assert!(
            dark_pixels(w, &pixels, 0..h) > 100,
            "no glyphs drawn: the font was not found"
        );
    }

    #[test]
    fn what_is_not_svg_is_refused_with_the_reason() {
        assert!(png("<html/>", 100).unwrap_err().starts_with("SVG not read"));
    }
}
