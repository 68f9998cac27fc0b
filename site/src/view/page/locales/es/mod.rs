//! The view's words in Spanish.

pub const VIEW_FTL: &str = include_str!("view.ftl");
