//! The values that cross the ledger's SQL edge, the same on both engines.
//!
//! SQLite's five storage classes are the common ground: the ledger binds
//! and reads integers, reals, text, blobs and NULL. On PostgreSQL a value
//! is typed at the edge, by the column or parameter type the server
//! reports (`postgres.rs`), so the ledger's SQL and its Rust types stay one
//! set for both engines.

use super::Error;

/// An owned value read from a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Null => ValueRef::Null,
            Value::Integer(v) => ValueRef::Integer(*v),
            Value::Real(v) => ValueRef::Real(*v),
            Value::Text(v) => ValueRef::Text(v),
            Value::Blob(v) => ValueRef::Blob(v),
        }
    }
}

/// A value borrowed from a parameter or a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueRef<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

impl ValueRef<'_> {
    /// The storage class's name, for conversion errors.
    pub fn type_name(&self) -> &'static str {
        match self {
            ValueRef::Null => "NULL",
            ValueRef::Integer(_) => "INTEGER",
            ValueRef::Real(_) => "REAL",
            ValueRef::Text(_) => "TEXT",
            ValueRef::Blob(_) => "BLOB",
        }
    }
}

/// A Rust value bound as a statement parameter.
pub trait ToSql {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error>;
}

/// A Rust value read from a column.
pub trait FromSql: Sized {
    fn column_result(value: ValueRef<'_>) -> Result<Self, String>;
}

impl<T: ToSql + ?Sized> ToSql for &T {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        (**self).to_sql()
    }
}

impl<T: ToSql> ToSql for Option<T> {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        match self {
            Some(value) => value.to_sql(),
            None => Ok(ValueRef::Null),
        }
    }
}

impl ToSql for str {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        Ok(ValueRef::Text(self))
    }
}

impl ToSql for String {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        Ok(ValueRef::Text(self))
    }
}

impl ToSql for [u8] {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        Ok(ValueRef::Blob(self))
    }
}

impl ToSql for Vec<u8> {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        Ok(ValueRef::Blob(self))
    }
}

impl<const N: usize> ToSql for [u8; N] {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        Ok(ValueRef::Blob(self))
    }
}

impl ToSql for f64 {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        Ok(ValueRef::Real(*self))
    }
}

impl ToSql for bool {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        Ok(ValueRef::Integer(i64::from(*self)))
    }
}

impl ToSql for Value {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        Ok(self.as_ref())
    }
}

impl ToSql for ValueRef<'_> {
    fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
        Ok(*self)
    }
}

macro_rules! integer {
    ($($ty:ty)*) => {$(
        impl ToSql for $ty {
            fn to_sql(&self) -> Result<ValueRef<'_>, Error> {
                i64::try_from(*self).map(ValueRef::Integer).map_err(|_| {
                    Error::ToSqlConversionFailure(format!(
                        "{} does not fit a 64-bit signed integer",
                        self
                    ))
                })
            }
        }

        impl FromSql for $ty {
            fn column_result(value: ValueRef<'_>) -> Result<Self, String> {
                match value {
                    ValueRef::Integer(v) => <$ty>::try_from(v)
                        .map_err(|_| format!("{v} is out of range for {}", stringify!($ty))),
                    other => Err(format!("{} where an integer was expected", other.type_name())),
                }
            }
        }
    )*};
}

integer!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

impl FromSql for bool {
    fn column_result(value: ValueRef<'_>) -> Result<Self, String> {
        i64::column_result(value).map(|v| v != 0)
    }
}

impl FromSql for f64 {
    fn column_result(value: ValueRef<'_>) -> Result<Self, String> {
        match value {
            ValueRef::Real(v) => Ok(v),
            // Integral values read as reals, as SQLite's own conversion does.
            ValueRef::Integer(v) => Ok(v as f64),
            other => Err(format!("{} where a real was expected", other.type_name())),
        }
    }
}

impl FromSql for String {
    fn column_result(value: ValueRef<'_>) -> Result<Self, String> {
        match value {
            ValueRef::Text(v) => Ok(v.to_owned()),
            other => Err(format!("{} where text was expected", other.type_name())),
        }
    }
}

impl FromSql for Vec<u8> {
    fn column_result(value: ValueRef<'_>) -> Result<Self, String> {
        match value {
            ValueRef::Blob(v) => Ok(v.to_vec()),
            // Text reads as its bytes, as SQLite's own conversion does.
            ValueRef::Text(v) => Ok(v.as_bytes().to_vec()),
            other => Err(format!("{} where a blob was expected", other.type_name())),
        }
    }
}

impl<T: FromSql> FromSql for Option<T> {
    fn column_result(value: ValueRef<'_>) -> Result<Self, String> {
        match value {
            ValueRef::Null => Ok(None),
            other => T::column_result(other).map(Some),
        }
    }
}

impl FromSql for Value {
    fn column_result(value: ValueRef<'_>) -> Result<Self, String> {
        Ok(match value {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(v) => Value::Integer(v),
            ValueRef::Real(v) => Value::Real(v),
            ValueRef::Text(v) => Value::Text(v.to_owned()),
            ValueRef::Blob(v) => Value::Blob(v.to_vec()),
        })
    }
}

/// A statement's parameters: `params![…]`, an array of one type, or `[]`.
pub trait Params {
    fn values(&self) -> Result<Vec<ValueRef<'_>>, Error>;
}

impl Params for [&dyn ToSql; 0] {
    fn values(&self) -> Result<Vec<ValueRef<'_>>, Error> {
        Ok(Vec::new())
    }
}

impl<T: ToSql> Params for &[T] {
    fn values(&self) -> Result<Vec<ValueRef<'_>>, Error> {
        self.iter().map(|value| value.to_sql()).collect()
    }
}

macro_rules! arrays {
    ($($n:literal)*) => {$(
        impl<T: ToSql> Params for [T; $n] {
            fn values(&self) -> Result<Vec<ValueRef<'_>>, Error> {
                self.iter().map(|value| value.to_sql()).collect()
            }
        }
    )*};
}

arrays!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);

/// Parameters of mixed types, bound in order: `params![a, b, c]`.
#[macro_export]
macro_rules! params {
    () => {
        &[] as &[&dyn $crate::store::sql::ToSql]
    };
    ($($param:expr),+ $(,)?) => {
        &[$(&$param as &dyn $crate::store::sql::ToSql),+] as &[&dyn $crate::store::sql::ToSql]
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_out_of_range_are_refused_not_wrapped() {
        assert!(u64::MAX.to_sql().is_err());
        assert_eq!(
            u8::column_result(ValueRef::Integer(300)).unwrap_err(),
            "300 is out of range for u8"
        );
        assert_eq!(i64::column_result(ValueRef::Integer(-5)), Ok(-5));
    }

    #[test]
    fn null_reads_as_none_and_a_wrong_class_names_itself() {
        assert_eq!(Option::<i64>::column_result(ValueRef::Null), Ok(None));
        assert_eq!(
            String::column_result(ValueRef::Integer(1)).unwrap_err(),
            "INTEGER where text was expected"
        );
    }
}
