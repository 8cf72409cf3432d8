//! The lane's private channel: one Unix stream socket per lane, the dispatcher's end in the
//! dispatcher, the lane's end handed down at a descriptor that [`ENV_PROTOCOL_FD`] names (as the
//! card's lease is handed down at the one `ONBOARD_LEASE_FD` names).
//!
//! Nothing but the protocol is ever written on it: a kernel's `printf` or a vendor library's log
//! goes to the lane's stdout and stderr, which the dispatcher captures apart. Assignments flow
//! down, events up; the dispatcher shuts its writing half down to tell a lane to finish (the lane
//! reads end of file and still sends its last events), and a dispatcher that dies closes it
//! whole, so the lane notices at once.
//!
//! This is the runner's one place that adopts a raw file descriptor: an inherited descriptor is an
//! OS-level hand-off, so it is treated as FFI (as the lease's hand-off in `platform-common` is).
//! The adoption is checked before (the number is open, names a socket, and this process never
//! adopted a channel) and after (it is a stream socket); the adopted descriptor is made
//! close-on-exec. This file never changes the environment.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::sync::{Mutex, PoisonError};

use command_fds::{CommandFdExt, FdMapping};
use rustix::io::{fcntl_dupfd_cloexec, fcntl_getfd, fcntl_setfd, FdFlags};
use rustix::net::sockopt::get_socket_type;
use rustix::net::SocketType;

/// The variable naming the descriptor a lane finds its channel at.
pub const ENV_PROTOCOL_FD: &str = "ONBOARD_PROTOCOL_FD";

/// Whether this process adopted its channel (a descriptor is adopted once, so two owners never
/// close it twice). Held for the whole adoption.
static ADOPTED: Mutex<bool> = Mutex::new(false);

/// The lane could not take its channel: the message names [`ENV_PROTOCOL_FD`] and its value.
#[derive(Debug, thiserror::Error)]
#[error("{ENV_PROTOCOL_FD}={value:?}: {reason}")]
pub struct ChannelError {
    /// The variable's value.
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Creates a lane's channel and arranges for the child `cmd` spawns to get its end at `child_fd`
/// (named in [`ENV_PROTOCOL_FD`]); returns the dispatcher's end.
///
/// Call it after every other descriptor mapping of `cmd` (the card's leases), with a `child_fd`
/// above theirs: the lane's end is first duplicated to `child_fd` or above, where the earlier
/// mappings (which write only below `child_fd`) cannot overwrite it before it is mapped.
pub fn hand_to(cmd: &mut Command, child_fd: RawFd) -> io::Result<UnixStream> {
    let (ours, theirs) = UnixStream::pair()?;
    let above = fcntl_dupfd_cloexec(&theirs, child_fd)?;
    drop(theirs);
    cmd.fd_mappings(vec![FdMapping {
        parent_fd: above,
        child_fd,
    }])
    .map_err(io::Error::other)?;
    cmd.env(ENV_PROTOCOL_FD, child_fd.to_string());
    Ok(ours)
}

/// The channel a dispatcher handed down through [`ENV_PROTOCOL_FD`], checked and adopted (once
/// per process).
pub fn inherited() -> Result<UnixStream, ChannelError> {
    let value = std::env::var(ENV_PROTOCOL_FD).map_err(|e| ChannelError {
        value: String::new(),
        reason: match e {
            std::env::VarError::NotPresent => "not set: a lane is started by the dispatcher".into(),
            std::env::VarError::NotUnicode(_) => "not UTF-8".into(),
        },
    })?;
    adopt(&value)
}

/// Adopts descriptor `value` (a number) as this process's channel, checked.
fn adopt(value: &str) -> Result<UnixStream, ChannelError> {
    let bad = |reason: &str| ChannelError {
        value: value.to_owned(),
        reason: reason.to_owned(),
    };
    let raw: RawFd = value.trim().parse().map_err(|_| bad("not a descriptor number"))?;
    if raw < 3 {
        return Err(bad("the descriptor must be 3 or above"));
    }
    // Open, and a socket? Checked without touching the number: the kernel names every open
    // descriptor here, a socket as `socket:[inode]`.
    let target =
        std::fs::read_link(format!("/proc/self/fd/{raw}")).map_err(|_| bad("the descriptor is not open"))?;
    if !target.to_string_lossy().starts_with("socket:") {
        return Err(bad("the descriptor is not a socket"));
    }
    let mut adopted = ADOPTED.lock().unwrap_or_else(PoisonError::into_inner);
    if *adopted {
        return Err(bad("this process already adopted its channel"));
    }
    // SAFETY: the descriptor is open (its /proc entry exists, checked just above) and was handed
    // down for this purpose through ENV_PROTOCOL_FD; nothing else in this process owns it, since
    // this process adopts one channel at most (`ADOPTED`, locked for the whole adoption), and the
    // check below gives it back unclosed if it is not a stream socket.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    if get_socket_type(&fd).ok() != Some(SocketType::STREAM) {
        // Not ours to own: give it back unclosed.
        std::mem::forget(fd);
        return Err(bad("the descriptor is not a stream socket"));
    }
    *adopted = true;
    // The processes the lane spawns must not inherit the channel.
    let flags = fcntl_getfd(&fd).map_err(|e| bad(&format!("cannot read its flags: {e}")))?;
    fcntl_setfd(&fd, flags | FdFlags::CLOEXEC)
        .map_err(|e| bad(&format!("cannot make it close-on-exec: {e}")))?;
    Ok(UnixStream::from(fd))
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, IntoRawFd};

    use super::*;

    #[test]
    fn bad_values_name_the_variable_and_the_reason() {
        let file = tempfile::tempfile().unwrap();
        let file_fd = file.as_raw_fd().to_string();
        let rows = [
            ("x", "not a descriptor number"),
            ("1", "3 or above"),
            ("987654", "not open"),
            (file_fd.as_str(), "not a socket"),
        ];
        for (value, reason) in rows {
            let e = adopt(value).unwrap_err().to_string();
            assert!(e.starts_with("ONBOARD_PROTOCOL_FD="), "{e}");
            assert!(e.contains(reason), "{value}: {e}");
        }
        // The file was given back unclosed.
        assert!(std::fs::read_link(format!("/proc/self/fd/{file_fd}")).is_ok());
    }

    /// The one adoption of this test process: a socket handed over by number works both ways,
    /// is made close-on-exec, and a second adoption is refused.
    #[test]
    fn a_stream_socket_is_adopted_once() {
        let (mut ours, theirs) = UnixStream::pair().unwrap();
        let raw = theirs.into_raw_fd();
        let mut lane = adopt(&raw.to_string()).unwrap();
        assert!(fcntl_getfd(&lane).unwrap().contains(FdFlags::CLOEXEC));
        lane.write_all(b"up\n").unwrap();
        ours.write_all(b"down\n").unwrap();
        let mut got = [0; 5];
        lane.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"down\n");
        let mut got = [0; 3];
        ours.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"up\n");
        let (_a, b) = UnixStream::pair().unwrap();
        let e = adopt(&b.as_raw_fd().to_string()).unwrap_err().to_string();
        assert!(e.contains("already adopted"), "{e}");
    }
}
