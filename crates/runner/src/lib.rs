//! cardguard runner. (Being built.)
