//! The view's words in Arabic (right to left).

pub const VIEW_FTL: &str = include_str!("view.ftl");
