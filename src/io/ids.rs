//! Vertex fields of text inputs: integer ids, or names for string-keyed stores.

use super::lines::{parse_id, show};
use crate::keys::{KeyKind, NameSet, Names};

/// Turns a vertex field into a record id: the integer itself, or (with string keys) the
/// name's position in the batch's names, which [`Ids::take_names`] hands out with it.
pub(crate) enum Ids {
    /// Fields are unsigned 64-bit integers.
    U64,
    /// Fields are names, numbered per batch in first-seen order.
    Names(NameSet),
}

impl Ids {
    /// The field parser for `keys`.
    pub(crate) fn new(keys: KeyKind) -> Ids {
        match keys {
            KeyKind::U64 => Ids::U64,
            KeyKind::String => Ids::Names(NameSet::new()),
        }
    }

    /// Whether fields are integers (parsers take their fast paths only then).
    pub(crate) fn is_u64(&self) -> bool {
        matches!(self, Ids::U64)
    }

    /// The record id of `field`; `what` names the field in messages.
    #[inline]
    pub(crate) fn id(&mut self, field: &[u8], what: &str) -> Result<u64, String> {
        match self {
            Ids::U64 => parse_id(field, what).map_err(|m| {
                if field.iter().any(u8::is_ascii_alphabetic) {
                    format!("{m} (vertex names need a store created with --keys string)")
                } else {
                    m
                }
            }),
            Ids::Names(set) => {
                let name = std::str::from_utf8(field)
                    .map_err(|_| format!("{what} '{}' is not UTF-8", show(field)))?;
                let (i, _) = set.insert(name).map_err(|m| format!("{what}: {m}"))?;
                Ok(u64::from(i))
            }
        }
    }

    /// The names met since the last call (`None` with integer keys).
    pub(crate) fn take_names(&mut self) -> Option<Names> {
        match self {
            Ids::U64 => None,
            Ids::Names(set) => Some(set.take()),
        }
    }
}
