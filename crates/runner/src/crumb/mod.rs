//! The breadcrumb of a lane: what its card thread is doing now, readable from another thread
//! while that one is stuck (issue 9 item 2, "a hung case says where it hangs").
//!
//! - `record`: [`Breadcrumb`], a struct of atomics (the case as an index into the lane's case
//!   table, the case launch in flight, the driver call in flight and since when), and
//!   [`Crumb`], one reading of it;
//! - `driver`: [`StampedDriver`], the [`Driver`](platform_common::Driver) wrapper that stamps the
//!   breadcrumb around every driver call.
//!
//! Nothing here allocates on the hot path, and nothing here talks to the dispatcher (the lane's
//! channel reader answers its questions).

mod driver;
mod record;

pub use driver::StampedDriver;
pub use record::{Breadcrumb, Crumb, NO_CASE};
