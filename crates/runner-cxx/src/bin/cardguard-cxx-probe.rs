//! The example C++ host program as a cargo binary: its `main` is C++ (`cxx/probe_main.cc`,
//! linked into this binary alone by `build.rs`), so this file has none of its own. It only links
//! the library, whose bridge the program calls.

#![no_main]

use runner_cxx as _;
