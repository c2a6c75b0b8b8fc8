//! The self-contained HTML report: one file with inline CSS, inline SVG
//! charts drawn at render time and a small embedded script for hover values,
//! so it opens offline and shows its data even with scripts disabled.

mod efficiency;
pub mod escape;
mod explain;
pub mod intervals;
mod microstates;
mod offcpu;
mod page;
mod palette;
mod profile;
mod spectrum;
mod svg;
mod tables;
mod timeline;

pub use page::render;
