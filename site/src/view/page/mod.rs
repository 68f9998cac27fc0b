//! The dashboard's files, compiled into the binary so the view does not
//! depend on `--www` (which is the handhelds' PWA): the page, its script
//! and styles, its words (one Fluent catalogue a locale, `locales/`), and
//! the Fluent library that reads them (`site/vendor/fluent-bundle.js`, the
//! UMD build of the npm package `@fluent/bundle` at the version
//! `xtask/npm/package.json` pins for the handheld; the end-to-end suite
//! checks the two are the same bytes).

use std::sync::OnceLock;

use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource};

pub const INDEX_HTML: &str = include_str!("index.html");
pub const DASHBOARD_JS: &str = include_str!("dashboard.js");
pub const L10N_JS: &str = include_str!("l10n.js");
pub const DASHBOARD_CSS: &str = include_str!("dashboard.css");
/// `@fluent/bundle`'s UMD build (Apache-2.0), byte for byte as the npm
/// package ships it (a file of its own, outside the sources, at
/// `site/vendor/`).
pub const FLUENT_BUNDLE_JS: &str = include_str!("../../../vendor/fluent-bundle.js");

pub use locales::CATALOGUES;

pub mod locales;

/// The locales written right to left.
const RIGHT_TO_LEFT: [&str; 1] = ["ar"];

/// The most `Accept-Language` ranges read, in the order sent: a browser
/// sends a handful; a longer header is not a person's choice.
const MAX_LANGUAGE_RANGES: usize = 32;

/// The catalogue of `locale`, if the view speaks it.
pub fn catalogue(locale: &str) -> Option<&'static str> {
    CATALOGUES
        .iter()
        .find(|(name, _)| *name == locale)
        .map(|(_, text)| *text)
}

/// The view's locale for an `Accept-Language` header: the first range
/// (by weight, then order) whose language the view speaks, else English.
/// Each range is read as a BCP 47 tag; a range the parser refuses, `*`
/// and a weight of 0 are passed over.
pub fn negotiate(accept_language: Option<&str>) -> &'static str {
    let Some(header) = accept_language else {
        return CATALOGUES[0].0;
    };
    let mut ranges: Vec<(u16, usize, &'static str)> = header
        .split(',')
        .take(MAX_LANGUAGE_RANGES)
        .enumerate()
        .filter_map(|(order, range)| {
            let mut parts = range.split(';');
            let tag = parts.next()?.trim();
            let weight = parts
                .find_map(|param| param.trim().strip_prefix("q="))
                .map_or(Some(1000), quality)?;
            let language = icu_locale_core::Locale::try_from_str(tag).ok()?.id.language;
            let locale = CATALOGUES
                .iter()
                .map(|(name, _)| *name)
                .find(|name| *name == language.as_str())?;
            (weight > 0).then_some((weight, order, locale))
        })
        .collect();
    ranges.sort_by_key(|(weight, order, _)| (std::cmp::Reverse(*weight), *order));
    ranges
        .first()
        .map_or(CATALOGUES[0].0, |(_, _, locale)| locale)
}

/// A `q=` weight in thousandths (`0.8` is 800); `None` when it is not one.
fn quality(text: &str) -> Option<u16> {
    let value: f32 = text.trim().parse().ok()?;
    (0.0..=1.0)
        .contains(&value)
        .then(|| (value * 1000.0).round() as u16)
}

/// The page in the locale `Accept-Language` asks for: its root's `lang`
/// and `dir` set before the first paint (the script then reads that
/// catalogue, or the one chosen on the page and remembered).
pub fn index(headers: &HeaderMap) -> Response {
    let locale = negotiate(
        headers
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|value| value.to_str().ok()),
    );
    let dir = if RIGHT_TO_LEFT.contains(&locale) {
        "rtl"
    } else {
        "ltr"
    };
    let html = INDEX_HTML.replacen(
        "<html lang=\"en\">",
        &format!("<html lang=\"{locale}\" dir=\"{dir}\">"),
        1,
    );
    let mut response = file("text/html; charset=utf-8", html);
    response
        .headers_mut()
        .insert(header::VARY, HeaderValue::from_static("accept-language"));
    response
}

/// The catalogues read once, a bundle a locale, for the words the server
/// draws (the chart's): Fluent isolates the values a message holds only in
/// a right-to-left locale, as the page does.
fn bundles() -> &'static [(&'static str, FluentBundle<FluentResource>)] {
    static BUNDLES: OnceLock<Vec<(&'static str, FluentBundle<FluentResource>)>> = OnceLock::new();
    BUNDLES.get_or_init(|| {
        CATALOGUES
            .iter()
            .map(|(locale, text)| {
                let id = locale.parse().expect("a shipped locale is a language tag");
                let mut bundle = FluentBundle::new_concurrent(vec![id]);
                bundle.set_use_isolating(RIGHT_TO_LEFT.contains(locale));
                // A shipped catalogue parses (the end-to-end suite checks
                // every one); what does is used.
                let resource = FluentResource::try_new((*text).to_owned())
                    .unwrap_or_else(|(partial, _)| partial);
                bundle.add_resource_overriding(resource);
                (*locale, bundle)
            })
            .collect()
    })
}

/// Message `id` of the view's catalogue in `locale` (English when the view
/// does not speak it or the locale lacks the message), with `args`.
pub fn tr_args(id: &str, locale: &str, args: Option<&FluentArgs>) -> String {
    let all = bundles();
    let chosen = all.iter().find(|(name, _)| *name == locale);
    for (_, bundle) in chosen.into_iter().chain(all.first()) {
        if let Some(pattern) = bundle.get_message(id).and_then(|message| message.value()) {
            let mut errors = Vec::new();
            return bundle
                .format_pattern(pattern, args, &mut errors)
                .into_owned();
        }
    }
    id.to_owned()
}

/// Message `id` of the view's catalogue in `locale`, without arguments.
pub fn tr(id: &str, locale: &str) -> String {
    tr_args(id, locale, None)
}

/// The view's locale named `lang` (a query's), English when it speaks no
/// such language.
pub fn locale_named(lang: Option<&str>) -> &'static str {
    lang.and_then(|lang| {
        CATALOGUES
            .iter()
            .map(|(name, _)| *name)
            .find(|name| *name == lang)
    })
    .unwrap_or(CATALOGUES[0].0)
}

/// A file of the page, revalidated on every load (a new binary, a new page).
pub fn file(content_type: &'static str, body: impl IntoResponse) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_speaks_the_first_language_asked_for_that_it_has() {
        assert_eq!(negotiate(None), "en");
        assert_eq!(negotiate(Some("de")), "de");
        assert_eq!(negotiate(Some("de-AT,de;q=0.9,en;q=0.8")), "de");
        assert_eq!(negotiate(Some("fr-FR,fr;q=0.9,pl;q=0.5,en;q=0.4")), "pl");
        assert_eq!(negotiate(Some("en;q=0.2, ar-EG")), "ar");
        assert_eq!(negotiate(Some("es;q=0, de;q=0.1")), "de");
        assert_eq!(negotiate(Some("fr, *")), "en");
        assert_eq!(negotiate(Some("not a tag!, es-419")), "es");
        assert_eq!(
            negotiate(Some("de;q=2")),
            "en",
            "a weight past 1 is no weight"
        );
    }

    #[test]
    fn the_server_reads_the_views_words_in_each_locale_and_falls_back_to_english() {
        assert_eq!(tr("trend-growing", "de"), "Wächst");
        assert_eq!(tr("trend-growing", "fr"), "Growing");
        let mut args = FluentArgs::new();
        args.set("zone", "Europe/Berlin");
        assert_eq!(
            tr_args("chart-site-time", "en", Some(&args)),
            "site time (Europe/Berlin)"
        );
        // Arabic isolates the zone, a code, inside its words.
        assert!(
            tr_args("chart-site-time", "ar", Some(&args)).contains("\u{2068}Europe/Berlin\u{2069}")
        );
        assert_eq!(locale_named(Some("pl")), "pl");
        assert_eq!(locale_named(Some("xx")), "en");
        assert_eq!(locale_named(None), "en");
    }
}
