//! The protocol's line framing, bounded: a lane's message is one line, and no line is longer than
//! [`MAX_LINE`]. A lane that writes more without a newline is broken (or hostile); the
//! dispatcher's reader stops at the bound instead of holding the line whole in memory.
//!
//! This file owns splitting a byte stream into lines under the bound. It never decodes a line and
//! never acts on a violation (the dispatcher kills the lane).

/// The longest protocol line, without its newline: 1 MiB.
pub const MAX_LINE: usize = 1 << 20;

/// A line went past its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("lane protocol line over {} MiB", limit >> 20)]
pub struct LineTooLong {
    /// The bound, in bytes.
    pub limit: usize,
}

/// Splits bytes into lines of at most `limit` bytes (newline not counted).
#[derive(Debug)]
pub struct LineBuf {
    buf: Vec<u8>,
    limit: usize,
}

impl LineBuf {
    /// Lines of at most `limit` bytes (the protocol's: [`MAX_LINE`]).
    pub fn new(limit: usize) -> Self {
        Self {
            buf: Vec::new(),
            limit,
        }
    }

    /// Appends `bytes`; every line they complete goes to `lines` (without its newline). Past the
    /// bound it fails, and the partial line is dropped: nothing more is kept of it.
    pub fn push(&mut self, mut bytes: &[u8], lines: &mut Vec<Vec<u8>>) -> Result<(), LineTooLong> {
        while let Some(nl) = bytes.iter().position(|b| *b == b'\n') {
            self.check(nl)?;
            self.buf.extend_from_slice(&bytes[..nl]);
            lines.push(std::mem::take(&mut self.buf));
            bytes = &bytes[nl + 1..];
        }
        self.check(bytes.len())?;
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Whether a line is begun but not ended (at end of file: a torn line).
    pub fn partial(&self) -> bool {
        !self.buf.is_empty()
    }

    fn check(&mut self, more: usize) -> Result<(), LineTooLong> {
        if self.buf.len() + more > self.limit {
            self.buf = Vec::new();
            return Err(LineTooLong { limit: self.limit });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_pushes_and_within_one() {
        let mut b = LineBuf::new(8);
        let mut lines = Vec::new();
        b.push(b"ab", &mut lines).unwrap();
        assert!(lines.is_empty() && b.partial());
        b.push(b"c\nd\n\nef", &mut lines).unwrap();
        assert_eq!(lines, [b"abc".to_vec(), b"d".to_vec(), Vec::new()]);
        assert!(b.partial());
        b.push(b"\n", &mut lines).unwrap();
        assert_eq!(lines.last().unwrap(), b"ef");
        assert!(!b.partial());
    }

    #[test]
    fn a_line_at_the_bound_passes_and_one_byte_more_fails() {
        let mut b = LineBuf::new(4);
        let mut lines = Vec::new();
        b.push(b"abcd\n", &mut lines).unwrap();
        assert_eq!(lines, [b"abcd".to_vec()]);
        b.push(b"ab", &mut lines).unwrap();
        b.push(b"cd", &mut lines).unwrap();
        assert_eq!(b.push(b"e", &mut lines), Err(LineTooLong { limit: 4 }));
        assert!(!b.partial(), "the overlong line is dropped, not kept");
        // An overlong line inside one push, before its newline, fails too.
        let mut b = LineBuf::new(4);
        assert!(b.push(b"abcdef\nok\n", &mut Vec::new()).is_err());
    }

    #[test]
    fn the_protocol_bound_is_one_mib_and_says_so() {
        let mut b = LineBuf::new(MAX_LINE);
        let chunk = vec![b'x'; 64 * 1024];
        let mut lines = Vec::new();
        for _ in 0..16 {
            b.push(&chunk, &mut lines).unwrap();
        }
        let e = b.push(b"x", &mut lines).unwrap_err();
        assert_eq!(e.to_string(), "lane protocol line over 1 MiB");
        assert!(lines.is_empty());
    }
}
