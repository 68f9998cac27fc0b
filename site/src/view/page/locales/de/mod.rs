//! The view's words in German.

pub const VIEW_FTL: &str = include_str!("view.ftl");
