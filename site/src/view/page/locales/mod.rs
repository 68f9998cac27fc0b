//! The page's words: one Project Fluent catalogue a locale
//! (`<locale>/view.ftl`), with the glossary its translation keeps
//! (`<locale>/GLOSSARY.md`, not served). English is the reference and the
//! fallback for a message a locale lacks.

pub mod ar;
pub mod de;
pub mod en;
pub mod es;
pub mod pl;

/// The locales the view speaks, English first, each with its catalogue.
pub const CATALOGUES: [(&str, &str); 5] = [
    ("en", en::VIEW_FTL),
    ("de", de::VIEW_FTL),
    ("es", es::VIEW_FTL),
    ("pl", pl::VIEW_FTL),
    ("ar", ar::VIEW_FTL),
];
