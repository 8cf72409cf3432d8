//! Output marks: how the lane's stdout and stderr, which arrive on pipes of their own, are split
//! between cases exactly.
//!
//! Before each `started` and `finished` message the lane flushes its output buffers and writes a
//! mark on fd 1 and on fd 2: a short escape sequence holding a nonce the dispatcher chose for that
//! lane ([`ENV_OUTPUT_MARK`]) and the mark's number, which the message then carries. A mark is
//! written before its message, so when the dispatcher reads the message, everything written before
//! the mark is already in the pipe: reading the pipe up to the mark gives the bytes before the
//! message, the rest come after it. The marks are stripped; the nonce keeps a case's own output
//! from ever looking like one.
//!
//! This file owns the mark's format (written by the lane) and [`MarkScanner`] (the dispatcher's
//! reader, across chunk boundaries). It never reads a pipe and never attributes output to a case.

/// The variable holding the nonce of a lane's marks (unset: the lane writes none).
pub const ENV_OUTPUT_MARK: &str = "ONBOARD_OUTPUT_MARK";

/// The most digits of a mark's number.
const MAX_DIGITS: usize = 20;

/// A new random nonce for one lane's marks.
pub fn new_nonce() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// The bytes of mark `k` with `nonce`: `ESC _ cgmark:<nonce>:<k> ESC \` (an APC sequence, which
/// terminals do not show).
pub fn mark_bytes(nonce: &str, k: u64) -> Vec<u8> {
    format!("{}{k}\x1b\\", prefix(nonce)).into_bytes()
}

fn prefix(nonce: &str) -> String {
    format!("\x1b_cgmark:{nonce}:")
}

/// A piece of a captured stream: output, or a mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Output bytes, marks removed.
    Bytes(Vec<u8>),
    /// Mark number `k` was here.
    Mark(u64),
}

/// Finds the marks of one nonce in a stream read in chunks.
#[derive(Debug)]
pub struct MarkScanner {
    prefix: Vec<u8>,
    /// Bytes that may begin a mark, kept until the next chunk says.
    pending: Vec<u8>,
}

/// What follows a mark's prefix.
enum Tail {
    /// A whole mark: its number and the tail's length.
    Mark(u64, usize),
    /// Not all here yet.
    Incomplete,
    /// Not a mark.
    Invalid,
}

impl MarkScanner {
    /// A scanner for the marks of `nonce`.
    pub fn new(nonce: &str) -> Self {
        Self {
            prefix: prefix(nonce).into_bytes(),
            pending: Vec::new(),
        }
    }

    /// Scans the next chunk; its output and marks go to `out`, in order. Bytes that may begin a
    /// mark are held until the next chunk (or [`finish`](Self::finish)).
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Piece>) {
        self.pending.extend_from_slice(chunk);
        let data = std::mem::take(&mut self.pending);
        let mut emitted = 0;
        let mut from = 0;
        loop {
            let Some(at) = find(&data[from..], &self.prefix).map(|p| from + p) else {
                let keep = partial_prefix_len(&data[from..], &self.prefix);
                bytes(out, &data[emitted..data.len() - keep]);
                self.pending = data[data.len() - keep..].to_vec();
                return;
            };
            match tail(&data[at + self.prefix.len()..]) {
                Tail::Mark(k, len) => {
                    bytes(out, &data[emitted..at]);
                    out.push(Piece::Mark(k));
                    from = at + self.prefix.len() + len;
                    emitted = from;
                }
                Tail::Incomplete => {
                    bytes(out, &data[emitted..at]);
                    self.pending = data[at..].to_vec();
                    return;
                }
                Tail::Invalid => from = at + 1,
            }
        }
    }

    /// The stream ended: whatever was held is output.
    pub fn finish(&mut self, out: &mut Vec<Piece>) {
        let rest = std::mem::take(&mut self.pending);
        bytes(out, &rest);
    }
}

/// Appends output bytes to `out`, merged with output just before them.
fn bytes(out: &mut Vec<Piece>, b: &[u8]) {
    if b.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(Piece::Bytes(v)) => v.extend_from_slice(b),
        _ => out.push(Piece::Bytes(b.to_vec())),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The length of the longest end of `data` that is a proper beginning of `prefix`.
fn partial_prefix_len(data: &[u8], prefix: &[u8]) -> usize {
    (1..prefix.len().min(data.len() + 1))
        .rev()
        .find(|&n| data.ends_with(&prefix[..n]))
        .unwrap_or(0)
}

fn tail(rest: &[u8]) -> Tail {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > MAX_DIGITS {
        return Tail::Invalid;
    }
    let after = &rest[digits..];
    if after.is_empty() || after == b"\x1b" {
        return Tail::Incomplete;
    }
    if digits == 0 || !after.starts_with(b"\x1b\\") {
        return Tail::Invalid;
    }
    match std::str::from_utf8(&rest[..digits])
        .ok()
        .and_then(|d| d.parse().ok())
    {
        Some(k) => Tail::Mark(k, digits + 2),
        None => Tail::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONCE: &str = "00ff";

    fn mark(k: u64) -> Vec<u8> {
        mark_bytes(NONCE, k)
    }

    fn b(s: &str) -> Piece {
        Piece::Bytes(s.as_bytes().to_vec())
    }

    /// Scans `chunks` one after the other, then finishes.
    fn scan(chunks: &[Vec<u8>]) -> Vec<Piece> {
        let mut s = MarkScanner::new(NONCE);
        let mut out = Vec::new();
        for c in chunks {
            s.push(c, &mut out);
        }
        s.finish(&mut out);
        out
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn marks_split_the_stream_and_are_removed() {
        let stream = cat(&[b"before", &mark(1), b"during", &mark(2), b"after"]);
        let want = vec![
            b("before"),
            Piece::Mark(1),
            b("during"),
            Piece::Mark(2),
            b("after"),
        ];
        assert_eq!(scan(std::slice::from_ref(&stream)), want);
        // Cut at every byte: the same pieces.
        for cut in 0..=stream.len() {
            let (a, z) = stream.split_at(cut);
            assert_eq!(scan(&[a.to_vec(), z.to_vec()]), want, "cut at {cut}");
        }
        // One byte per chunk.
        let bytes: Vec<Vec<u8>> = stream.iter().map(|x| vec![*x]).collect();
        assert_eq!(scan(&bytes), want);
    }

    #[test]
    fn what_only_looks_like_a_mark_is_output() {
        let other_nonce = mark_bytes("1234", 1);
        let rows: Vec<(&str, Vec<u8>)> = vec![
            ("another lane's nonce", other_nonce.clone()),
            ("no number", cat(&[prefix(NONCE).as_bytes(), b"\x1b\\"])),
            ("no terminator", cat(&[prefix(NONCE).as_bytes(), b"7x"])),
            (
                "too many digits",
                cat(&[prefix(NONCE).as_bytes(), &[b'9'; 21], b"\x1b\\"]),
            ),
            ("a prefix cut by the end", prefix(NONCE).as_bytes()[..5].to_vec()),
            ("a mark cut by the end", mark(3)[..mark(3).len() - 1].to_vec()),
        ];
        for (what, stream) in rows {
            let out = scan(std::slice::from_ref(&stream));
            assert_eq!(out, [Piece::Bytes(stream)], "{what}");
        }
        // Junk right before a real mark does not hide it.
        let stream = cat(&[b"\x1b_cg", &prefix(NONCE).into_bytes()[..4], &mark(5), b"x"]);
        let out = scan(&[stream]);
        assert_eq!(out[1], Piece::Mark(5), "{out:?}");
        assert_eq!(out[2], b("x"));
    }

    #[test]
    fn a_nonce_is_long_and_fresh() {
        let (a, z) = (new_nonce(), new_nonce());
        assert_eq!(a.len(), 32);
        assert_ne!(a, z);
    }
}
