//! The demo report, screenshotted by headless Chromium, really has colour
//! where each chart is: the page's script records every chart's position
//! (`data-rect`), and this test counts saturated pixels (the palette's
//! colours; background, grid and text are grey) inside those rectangles.
//! Chromium is required, not optional: CI installs it (`.ci/run`).

#[path = "../../testkit/src/report/chromium.rs"]
mod chromium;

use std::path::Path;

use stampede_report::{html, DEMO_RESULTS};

struct ChartRect {
    id: String,
    x: u32,
    y: u32,
    w: u32,
    h: u32,
}

/// Every `<svg class="chart" …>` with its `id` and `data-rect`.
fn chart_rects(dom: &str) -> Vec<ChartRect> {
    let mut rects = Vec::new();
    for piece in dom.split("<svg ").skip(1) {
        let tag = &piece[..piece.find('>').unwrap()];
        let attr = |name: &str| {
            let key = format!("{name}=\"");
            tag.find(&key).map(|at| {
                let rest = &tag[at + key.len()..];
                rest[..rest.find('"').unwrap()].to_owned()
            })
        };
        if !tag.contains("class=\"chart\"") {
            continue;
        }
        let (Some(id), Some(rect)) = (attr("id"), attr("data-rect")) else {
            continue;
        };
        let n: Vec<i64> = rect.split(',').map(|v| v.parse().unwrap()).collect();
        if n[2] <= 0 || n[3] <= 0 {
            continue; // folded away in a closed <details>
        }
        rects.push(ChartRect { id, x: n[0] as u32, y: n[1] as u32, w: n[2] as u32, h: n[3] as u32 });
    }
    rects
}

fn decode(path: &Path) -> (u32, u32, Vec<u8>, usize) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf, channels)
}

#[test]
fn every_visible_chart_of_the_demo_has_coloured_pixels_in_the_screenshot() {
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-pixels");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let page = work.join("demo.html");
    let results = stampede_report::schema::parse(DEMO_RESULTS).unwrap();
    std::fs::write(&page, html::render(&results)).unwrap();

    let rendered = chromium::render_in_chromium(&page, &work, 1280, 2600);
    let (width, height, pixels, channels) = decode(&rendered.screenshot);
    assert_eq!((width, height), (1280, 2600));
    assert!(channels >= 3, "unexpected PNG colour type");

    let rects = chart_rects(&rendered.dom);
    let mut checked = Vec::new();
    for rect in rects.iter().filter(|r| r.y + r.h <= height && r.x + r.w <= width) {
        let mut coloured = 0;
        for y in rect.y..rect.y + rect.h {
            for x in rect.x..rect.x + rect.w {
                let i = ((y * width + x) as usize) * channels;
                let (r, g, b) = (pixels[i], pixels[i + 1], pixels[i + 2]);
                if r.max(g).max(b) - r.min(g).min(b) > 60 {
                    coloured += 1;
                }
            }
        }
        assert!(coloured > 300, "{} has only {coloured} coloured pixels: nothing drawn?", rect.id);
        eprintln!("{}: {coloured} coloured pixels", rect.id);
        checked.push(rect.id.clone());
    }
    for id in ["chart-efficiency", "chart-spectrum-0", "chart-timeline-0"] {
        assert!(checked.iter().any(|c| c == id), "{id} was not in the screenshot: {checked:?}");
    }
    eprintln!("checked {checked:?} in {}", rendered.screenshot.display());
}
