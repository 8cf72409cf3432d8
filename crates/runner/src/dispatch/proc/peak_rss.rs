//! A process's peak resident set size (`VmHWM` of `/proc/<pid>/status`), for the figures a run
//! writes with `--stats-out` (`cargo xtask bench scale`).
//!
//! This file owns reading that one line. It never judges a figure and is never on a path that
//! decides anything: a process without the line (gone, a zombie, no `/proc`) reads as `None`.

/// The peak RSS in KiB of `pid` (`"self"` for this process), if `/proc` tells it.
pub fn peak_rss_kib(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_peak_and_a_missing_one_has_none() {
        let own = peak_rss_kib("self").expect("VmHWM of this process");
        assert!(own > 0);
        assert_eq!(peak_rss_kib(&u32::MAX.to_string()), None);
    }
}
