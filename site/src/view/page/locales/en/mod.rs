//! The view's words in English.

pub const VIEW_FTL: &str = include_str!("view.ftl");
