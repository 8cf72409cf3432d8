//! A panic in a case body: caught on the thread that runs the case, and told as one line.
//!
//! [`catch`] runs a body under `catch_unwind` and gives back its panic as a [`Panic`]: the
//! payload's text and, when the hook [`install_hook`] is in place (a lane installs it at its
//! start), where it panicked. The hook records the location on the panicking thread and then
//! calls the hook that was there before (the default one prints the usual `thread ... panicked
//! at ...` lines to stderr, which the dispatcher captures as the attempt's output; the lane's
//! protocol has a channel of its own, so nothing a panic prints can break it). This file never
//! judges an attempt.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Where the last panic on this thread happened (`file:line:column`).
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A caught panic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panic {
    /// The payload as text (`panic!`'s message), or a note that it was not text.
    pub message: String,
    /// Where it happened, when the hook saw it.
    pub location: Option<String>,
}

impl std::fmt::Display for Panic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.location {
            Some(at) => write!(f, "the body panicked at {at}: {}", self.message),
            None => write!(f, "the body panicked: {}", self.message),
        }
    }
}

/// Installs (once per process) a panic hook that records each panic's location for [`catch`],
/// then calls the hook that was installed before it.
pub fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let at = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            LOCATION.with(|slot| *slot.borrow_mut() = at);
            previous(info);
        }));
    });
}

/// Runs `f`, catching a panic. The closure is asserted unwind-safe: after a panic the caller only
/// reads what the device runner reports (whose every call leaves its state consistent) and frees
/// the body's buffers.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Panic> {
    LOCATION.with(|slot| slot.borrow_mut().take());
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| Panic {
        message: payload_text(payload.as_ref()),
        location: LOCATION.with(|slot| slot.borrow_mut().take()),
    })
}

/// A panic payload as text.
pub fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic payload that is not text)".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_with_its_message_and_location() {
        install_hook();
        let caught = catch(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
        assert_eq!(caught.message, "boom 7");
        let at = caught.location.clone().expect("the hook saw where");
        assert!(at.contains("panic.rs:"), "{at}");
        assert!(
            caught.to_string().starts_with("the body panicked at "),
            "{caught}"
        );
        assert_eq!(catch(|| 3), Ok(3));
        let odd = catch(|| std::panic::panic_any(5u8)).unwrap_err();
        assert!(odd.message.contains("not text"), "{}", odd.message);
    }
}
