//! [`DeviceId`]: a card's number, as the driver calls and the leases name it. Below both (the
//! driver's force reset takes a lease, and a lease names its card), so neither imports the other
//! for it; `driver::DeviceId` re-exports it.
//!
//! This file owns that one name. It never maps one numbering to another (`visible` does).

/// A physical card number.
pub type DeviceId = u32;
