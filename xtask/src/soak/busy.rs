//! Busy loops that load every core for the length of a soak.
//!
//! This module owns the load: one spinning thread per core of this process, started together and
//! stopped together when the [`BusyLoops`] value is dropped, so they end with the soak whatever
//! happens (a normal end, an error, a panic unwinding through it; and as threads of this process
//! they cannot outlive it). It never runs tests.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Spinning threads; dropping the value stops and joins them.
#[derive(Debug)]
pub struct BusyLoops {
    stop: Arc<AtomicBool>,
    /// Blocks of 2^20 spins done by all threads together (it moves only while they spin).
    spins: Arc<AtomicU64>,
    threads: Vec<JoinHandle<()>>,
}

impl BusyLoops {
    /// Starts `n` spinning threads.
    pub fn start(n: usize) -> std::io::Result<Self> {
        let mut loops = Self {
            stop: Arc::new(AtomicBool::new(false)),
            spins: Arc::new(AtomicU64::new(0)),
            threads: Vec::with_capacity(n),
        };
        for i in 0..n {
            let stop = Arc::clone(&loops.stop);
            let spins = Arc::clone(&loops.spins);
            // On an error the loops started so far are stopped by `loops`' drop.
            let t = std::thread::Builder::new()
                .name(format!("soak-busy-{i}"))
                .spawn(move || {
                    let mut local = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                        local = local.wrapping_add(1);
                        if local % (1 << 20) == 0 {
                            spins.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })?;
            loops.threads.push(t);
        }
        Ok(loops)
    }

    /// How many threads spin.
    pub fn len(&self) -> usize {
        self.threads.len()
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The number of cores this process may run on (1 when it cannot be told).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_spin_until_dropped_and_drop_joins_them() {
        let loops = BusyLoops::start(2).unwrap();
        assert_eq!(loops.len(), 2);
        let stop = Arc::clone(&loops.stop);
        let spins = Arc::clone(&loops.spins);
        // Wait for the spinning itself (the counter moves only inside the loop).
        while spins.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        drop(loops);
        assert!(stop.load(Ordering::Relaxed));
        // Joined: every thread has returned and dropped its handle on the counter.
        assert_eq!(Arc::strong_count(&spins), 1, "a spinning thread is still running");
    }
}
