//! The a5 DeviceRunner. (Being built.)
