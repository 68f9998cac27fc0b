//! The view's words in Polish.

pub const VIEW_FTL: &str = include_str!("view.ftl");
