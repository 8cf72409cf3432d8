//! [`RuntimeMessage`]: what the runtime itself said of a failed call (`aclGetRecentErrMsg`), as a
//! `Copy` handle so a [`crate::DriverError`] stays a `Copy` value.
//!
//! This file owns the process's table of those texts: each distinct text is kept once (interned)
//! and lives until the process ends. The table is bounded ([`MAX_MESSAGES`] texts of at most
//! [`MAX_MESSAGE_BYTES`] bytes each); a text beyond the bound is not kept (the error then carries
//! no message, never a wrong one). It never reads or classifies a text: they are words for people.

use std::fmt;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How many distinct texts a process keeps.
pub const MAX_MESSAGES: usize = 512;
/// The longest text kept, in bytes (longer ones are cut at a character boundary).
pub const MAX_MESSAGE_BYTES: usize = 2048;

static TABLE: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// A message the runtime gave for a failed call; its text is [`RuntimeMessage::as_str`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RuntimeMessage(u32);

impl RuntimeMessage {
    /// The handle of `text` (trimmed); `None` when it is blank or the table is full.
    pub fn intern(text: &str) -> Option<Self> {
        let mut text = text.trim();
        if text.is_empty() {
            return None;
        }
        if text.len() > MAX_MESSAGE_BYTES {
            let mut cut = MAX_MESSAGE_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text = &text[..cut];
        }
        let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = table.iter().position(|t| *t == text) {
            return u32::try_from(i).ok().map(Self);
        }
        if table.len() >= MAX_MESSAGES {
            tracing::debug!("runtime message table full; message not kept");
            return None;
        }
        // Kept for the life of the process, once per distinct text, within the bound above.
        table.push(Box::leak(text.to_owned().into_boxed_str()));
        u32::try_from(table.len() - 1).ok().map(Self)
    }

    /// The text.
    pub fn as_str(self) -> &'static str {
        let table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
        table.get(self.0 as usize).copied().unwrap_or("")
    }
}

impl fmt::Debug for RuntimeMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for RuntimeMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RuntimeMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Serde for an `Option<RuntimeMessage>` field: the text, interned on the way in (a text the
/// table cannot keep reads as `None`).
pub mod serde_opt {
    use super::*;

    /// Writes the text or nothing.
    pub fn serialize<S: Serializer>(m: &Option<RuntimeMessage>, s: S) -> Result<S::Ok, S::Error> {
        m.serialize(s)
    }

    /// Reads a text and interns it.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RuntimeMessage>, D::Error> {
        let text = Option::<String>::deserialize(d)?;
        Ok(text.as_deref().and_then(RuntimeMessage::intern))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_kept_once_and_blank_is_none() {
        let a = RuntimeMessage::intern("  EZ9999: Inner Error!  ").unwrap();
        let b = RuntimeMessage::intern("EZ9999: Inner Error!").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.as_str(), "EZ9999: Inner Error!");
        assert!(RuntimeMessage::intern(" \n").is_none());
        let long = "é".repeat(MAX_MESSAGE_BYTES);
        let cut = RuntimeMessage::intern(&long).unwrap();
        assert!(cut.as_str().len() <= MAX_MESSAGE_BYTES);
        assert!(cut.as_str().chars().all(|c| c == 'é'));
    }
}
