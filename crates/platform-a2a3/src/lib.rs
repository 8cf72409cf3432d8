//! The a2a3 DeviceRunner. (Being built.)
