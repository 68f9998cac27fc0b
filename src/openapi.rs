//! The OpenAPI schemas of the wire's own scalar types, for the site's
//! document (the `openapi` feature; the handheld's module never has it):
//! both travel as strings.

use std::borrow::Cow;

use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::RefOr;

use crate::key::IdempotencyKey;
use crate::time::UnixMs;

fn string(format: KnownFormat, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(format)))
        .description(Some(description))
        .into()
}

impl utoipa::PartialSchema for UnixMs {
    fn schema() -> RefOr<Schema> {
        string(
            KnownFormat::DateTime,
            "An instant, RFC 3339 in UTC to the millisecond (2026-03-01T08:00:00.000Z)",
        )
    }
}

impl utoipa::ToSchema for UnixMs {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Instant")
    }
}

impl utoipa::PartialSchema for IdempotencyKey {
    fn schema() -> RefOr<Schema> {
        string(
            KnownFormat::Uuid,
            "An idempotency key: a lower-case hyphenated UUID the handheld minted for the item",
        )
    }
}

impl utoipa::ToSchema for IdempotencyKey {}
