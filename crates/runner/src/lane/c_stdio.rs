//! The lane's one call into the C library: `fflush(NULL)`, so what a kernel or a vendor library
//! printed through C's `stdio` (fully buffered when stdout is a pipe, as a lane's is) reaches the
//! lane's fd 1 and fd 2 before the lane marks a case boundary there.
//!
//! This is an FFI module: it owns that one `unsafe` call and nothing else.

/// Flushes every open output stream of the C library (errors are ignored: a stream that cannot be
/// flushed keeps its bytes for later, and they are attributed to whatever runs then).
pub fn flush_all() {
    // SAFETY: `fflush(NULL)` takes no pointer of ours (NULL asks for every open output stream),
    // touches only the C library's own stream state, and is thread-safe (it locks each stream).
    let _ = unsafe { libc::fflush(std::ptr::null_mut()) };
}
