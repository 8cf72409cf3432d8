//! Loading kernel blobs and running their blocks through the C ABI (`kernel.h`, version
//! [`ABI_VERSION`]).
//!
//! This file owns the FFI: opening a blob, checking its metadata, and building the `cg_kernel_ctx`
//! of one block. It never checks that buffer addresses are valid: [`KernelBlob::run_block`] is
//! `unsafe` and its caller (the simulator's AICore, a test harness) promises it; the kernel then
//! checks its size scalars against the byte lengths it is given.

use std::ffi::{c_void, CStr};
use std::fmt;
use std::os::raw::c_char;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::arch::Arch;

/// The ABI version this loader speaks.
pub const ABI_VERSION: u32 = 2;

/// The status a kernel returns for arguments it refuses (`CG_KERNEL_BAD_ARGS`), and
/// [`KernelBlob::run_block`] returns for argument and length lists of different lengths.
pub const KERNEL_BAD_ARGS: i32 = 1;

const CG_WAIT_WOKEN: i32 = 0;
const CG_WAIT_REAPED: i32 = 1;

#[repr(C)]
struct RawMeta {
    abi_version: u32,
    name: *const c_char,
    arch: *const c_char,
    block_dim: u32,
    num_args: u32,
}

#[repr(C)]
struct RawApi {
    wait: extern "C" fn(token: *mut c_void, timeout_us: u64) -> i32,
}

#[repr(C)]
struct RawCtx {
    block_idx: u32,
    block_dim: u32,
    args: *const u64,
    arg_bytes: *const u64,
    num_args: u32,
    api: *const RawApi,
    token: *mut c_void,
}

type MetaFn = unsafe extern "C" fn() -> *const RawMeta;
type MainFn = unsafe extern "C" fn(ctx: *const RawCtx) -> i32;

/// What a blob says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelMeta {
    /// Kernel name, e.g. `vector_add`.
    pub name: String,
    /// The arch the blob was built for.
    pub arch: Arch,
    /// The block dim the kernel is written for.
    pub block_dim: u32,
    /// How many u64 arguments it takes.
    pub num_args: u32,
}

/// The outcome of one call of the kernel wait API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOutcome {
    /// Woken, or the requested time passed: the kernel goes on.
    Woken,
    /// The op-execute timeout reaped this kernel: it must return.
    Reaped,
}

/// Decides what a kernel's wait call does (the simulator's reaper implements it).
pub trait Waiter: Sync {
    /// Called when a block waits for up to `timeout`.
    fn wait(&self, timeout: Duration) -> WaitOutcome;
}

/// A blob that cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// The file could not be opened as a shared object.
    #[error("cannot load kernel blob {}: {source}", path.display())]
    Open {
        /// The blob.
        path: PathBuf,
        /// The loader's error.
        #[source]
        source: libloading::Error,
    },
    /// A required symbol is missing.
    #[error("kernel blob {} lacks symbol {symbol}", path.display())]
    Symbol {
        /// The blob.
        path: PathBuf,
        /// The symbol.
        symbol: &'static str,
    },
    /// The metadata is malformed or of another ABI version.
    #[error("kernel blob {} has bad metadata: {reason}", path.display())]
    Meta {
        /// The blob.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The blob was built for another arch than the one asked for.
    #[error("kernel blob {} is built for {found}, not {expected}", path.display())]
    WrongArch {
        /// The blob.
        path: PathBuf,
        /// The arch asked for.
        expected: Arch,
        /// The arch in the blob's metadata.
        found: Arch,
    },
    /// The kernel registry has no binary of that kernel for the platform.
    #[error("kernel {name:?}: {reason}")]
    Missing {
        /// Kernel name.
        name: String,
        /// What was looked for, where.
        reason: String,
    },
    /// A device-binary manifest that cannot be read, parsed, or names a file that is not there.
    #[error("kernel manifest {}: {reason}", path.display())]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// No blob of that name for that arch.
    #[error("no kernel blob {name:?} for {arch} in {}", dir.display())]
    NotFound {
        /// Kernel name.
        name: String,
        /// Arch.
        arch: Arch,
        /// Where it was looked for.
        dir: PathBuf,
    },
}

/// A kernel blob: a host blob loaded from its shared object (runnable on the simulated AICore),
/// or a device binary for real AICore (its bytes are registered with the driver, never run on
/// the host; its metadata comes from a manifest or the host blob of the same source). Cheap to
/// clone; a host blob's library stays loaded while any clone lives.
#[derive(Clone)]
pub struct KernelBlob {
    path: PathBuf,
    meta: KernelMeta,
    image: Image,
}

/// What a blob's bytes are.
#[derive(Clone)]
enum Image {
    /// A shared object of this ABI, loaded: its entry point.
    Host {
        main: MainFn,
        _lib: Arc<libloading::Library>,
    },
    /// A device binary: only its file (the driver reads its bytes at registration).
    Device,
}

impl fmt::Debug for KernelBlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelBlob")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .field("host", &self.is_host())
            .finish()
    }
}

impl KernelBlob {
    /// Opens a blob and reads its metadata.
    pub fn load(path: &Path) -> Result<Self, KernelError> {
        // SAFETY: loading a kernel blob runs its static initialisers; blobs are built by this
        // project from kernels/ and have none beyond the C++ runtime's.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|source| KernelError::Open {
            path: path.to_owned(),
            source,
        })?;
        let sym_err = |symbol| KernelError::Symbol {
            path: path.to_owned(),
            symbol,
        };
        // SAFETY: the symbol is declared in kernel.h with exactly this signature.
        let meta_fn: MetaFn = unsafe { lib.get::<MetaFn>(b"cg_kernel_metadata\0") }
            .map(|s| *s)
            .map_err(|_| sym_err("cg_kernel_metadata"))?;
        // SAFETY: as above.
        let main: MainFn = unsafe { lib.get::<MainFn>(b"cg_kernel_main\0") }
            .map(|s| *s)
            .map_err(|_| sym_err("cg_kernel_main"))?;
        let bad = |reason: &str| KernelError::Meta {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        // SAFETY: `cg_kernel_metadata` takes nothing and returns a pointer to a static struct.
        let raw = unsafe { meta_fn() };
        if raw.is_null() {
            return Err(bad("cg_kernel_metadata returned null"));
        }
        // SAFETY: non-null, points to a static `cg_kernel_meta` that lives as long as `lib`.
        let raw = unsafe { &*raw };
        if raw.abi_version != ABI_VERSION {
            return Err(bad(&format!(
                "ABI version {} (loader speaks {ABI_VERSION})",
                raw.abi_version
            )));
        }
        let text = |p: *const c_char, what: &str| -> Result<String, KernelError> {
            if p.is_null() {
                return Err(bad(&format!("{what} is null")));
            }
            // SAFETY: non-null static NUL-terminated string in the blob's rodata.
            let s = unsafe { CStr::from_ptr(p) };
            s.to_str()
                .map(str::to_owned)
                .map_err(|_| bad(&format!("{what} is not UTF-8")))
        };
        let name = text(raw.name, "name")?;
        let arch = text(raw.arch, "arch")?
            .parse::<Arch>()
            .map_err(|e| bad(&e.to_string()))?;
        let meta = KernelMeta {
            name,
            arch,
            block_dim: raw.block_dim,
            num_args: raw.num_args,
        };
        Ok(Self {
            path: path.to_owned(),
            meta,
            image: Image::Host {
                main,
                _lib: Arc::new(lib),
            },
        })
    }

    /// A device binary at `path` described by `meta` (from a manifest, or from the host blob
    /// of the same source). Nothing is opened: the driver reads the file when it registers it.
    pub fn device_binary(path: &Path, meta: KernelMeta) -> Self {
        Self {
            path: path.to_owned(),
            meta,
            image: Image::Device,
        }
    }

    /// Whether this is a host blob (runnable on the simulated AICore), not a device binary.
    pub fn is_host(&self) -> bool {
        matches!(self.image, Image::Host { .. })
    }

    /// Where the blob was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The blob's metadata.
    pub fn meta(&self) -> &KernelMeta {
        &self.meta
    }

    /// Runs block `block_idx` of `block_dim` with `args` (buffers as host addresses, scalars by
    /// value) and `arg_bytes` (for each argument, the bytes valid from its address on; 0 for a
    /// scalar). Returns the kernel's status (0 = ok; [`KERNEL_BAD_ARGS`] when the kernel refuses
    /// its arguments, or at once when `args` and `arg_bytes` differ in length or the blob is a
    /// device binary, which has no host entry point).
    ///
    /// # Safety
    ///
    /// For every `i` where `arg_bytes[i]` is non-zero and `args[i]` is not null, `args[i]` must be
    /// an address valid for reads and writes of `arg_bytes[i]` bytes for the whole call, and no
    /// other code may access those bytes non-atomically while the call runs (blocks of one launch
    /// may share them, as the kernels' contracts allow). The kernels check their size scalars
    /// against these lengths and touch nothing else, so lengths that overstate a buffer are the
    /// one way to make them access memory out of bounds. The simulator guarantees this by passing
    /// each buffer's length from the address to the end of its live allocation, which the queued
    /// op keeps alive.
    pub unsafe fn run_block(
        &self,
        block_idx: u32,
        block_dim: u32,
        args: &[u64],
        arg_bytes: &[u64],
        waiter: &dyn Waiter,
    ) -> i32 {
        let Image::Host { main, .. } = &self.image else {
            return KERNEL_BAD_ARGS;
        };
        if args.len() != arg_bytes.len() {
            return KERNEL_BAD_ARGS;
        }
        extern "C" fn wait_trampoline(token: *mut c_void, timeout_us: u64) -> i32 {
            // SAFETY: `token` is the `&&dyn Waiter` built below, alive for the whole kernel call.
            let waiter: &&dyn Waiter = unsafe { &*(token as *const &dyn Waiter) };
            match waiter.wait(Duration::from_micros(timeout_us)) {
                WaitOutcome::Woken => CG_WAIT_WOKEN,
                WaitOutcome::Reaped => CG_WAIT_REAPED,
            }
        }
        let api = RawApi {
            wait: wait_trampoline,
        };
        let token: *const &dyn Waiter = &waiter;
        let ctx = RawCtx {
            block_idx,
            block_dim,
            args: args.as_ptr(),
            arg_bytes: arg_bytes.as_ptr(),
            num_args: u32::try_from(args.len()).unwrap_or(u32::MAX),
            api: &api,
            token: token as *mut c_void,
        };
        // SAFETY: `ctx` and everything it points to live for the call; `args` and `arg_bytes` have
        // `num_args` entries; each buffer address is valid for its length per this method's
        // contract, and the kernel checks its sizes against those lengths; it returns only
        // through its status.
        unsafe { main(&ctx) }
    }
}
