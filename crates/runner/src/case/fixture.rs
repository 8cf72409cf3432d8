//! Class fixtures: a setup that builds host data once per lane (weights, reference tensors),
//! handed to every case of the class, and optionally device resources made from it on the
//! chip worker (e.g. the weights uploaded once), which belong to that worker.
//!
//! A [`Fixture`] is declared typed (`Fixture::new(setup).device(upload)`, the device part taking
//! the host data's type) and kept erased in its class ([`ClassFixture`]). What happens at run
//! time is the lane's and the executor's (`crate::exec::fixture`): the host part is built at the
//! first case of the class in a lane and kept for the lane's life; the device part is built on a
//! worker at its first case of the class and dies with that worker, so a worker rebuilt after a
//! heal rebuilds it and no case ever sees a dead context's buffers. A host setup failure fails
//! every case of the class in that lane (class `infrastructure`), reported once. This file owns
//! the declarations; it never runs a setup.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use platform_common::Arch;

use super::ctx::CaseCtx;
use super::failure::CaseFailure;
pub use crate::worker::FixtureData;

/// What a host setup is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupInfo {
    /// The run's arch.
    pub arch: Arch,
    /// The class.
    pub class: String,
    /// A fixed seed of the class (a stable hash of its name): the same data in every lane.
    pub seed: u64,
}

/// Why a host setup failed: any error (`?` on any `std::error::Error`, or `"text".into()`).
pub type SetupError = Box<dyn std::error::Error + Send + Sync>;

/// An erased host setup.
pub type HostSetup = Arc<dyn Fn(&SetupInfo) -> Result<FixtureData, SetupError> + Send + Sync>;

/// An erased device setup: the host data in, the device resources out.
pub type DeviceSetup =
    Arc<dyn Fn(&mut CaseCtx<'_>, &FixtureData) -> Result<FixtureData, CaseFailure> + Send + Sync>;

/// A class fixture with host data of type `T`.
pub struct Fixture<T> {
    host: HostSetup,
    device: Option<DeviceSetup>,
    _data: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Fixture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fixture")
            .field("data", &std::any::type_name::<T>())
            .field("device", &self.device.is_some())
            .finish()
    }
}

impl<T: Any + Send + Sync> Fixture<T> {
    /// A fixture whose host data `setup` builds (once per lane; cases get it with
    /// [`CaseCtx::fixture`]).
    pub fn new(setup: impl Fn(&SetupInfo) -> Result<T, SetupError> + Send + Sync + 'static) -> Self {
        Self {
            host: Arc::new(move |info| setup(info).map(|t| Arc::new(t) as FixtureData)),
            device: None,
            _data: PhantomData,
        }
    }

    /// Adds device resources `make` builds from the host data on a worker (once per worker;
    /// cases get them with [`CaseCtx::device_fixture`]). Buffers it allocates belong to the
    /// worker, not to the case: they live until the worker closes. It may launch the kernels of
    /// the case it runs in. A device error in it fails that case as a device fault (retired,
    /// retried); another failure fails it with class `infrastructure`.
    pub fn device<D: Any + Send + Sync>(
        mut self,
        make: impl Fn(&mut CaseCtx<'_>, &T) -> Result<D, CaseFailure> + Send + Sync + 'static,
    ) -> Self {
        self.device = Some(Arc::new(move |ctx, data| {
            let host = data.downcast_ref::<T>().ok_or_else(|| {
                CaseFailure::usage(format!(
                    "the device fixture takes {} but the host data is of another type",
                    std::any::type_name::<T>()
                ))
            })?;
            make(ctx, host).map(|d| Arc::new(d) as FixtureData)
        }));
        self
    }
}

/// A class's fixture, erased.
#[derive(Clone)]
pub struct ClassFixture {
    /// Builds the host data.
    pub host: HostSetup,
    /// Builds the device resources, if any.
    pub device: Option<DeviceSetup>,
    /// The host data's type, for messages.
    pub data_type: &'static str,
}

impl fmt::Debug for ClassFixture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassFixture")
            .field("data", &self.data_type)
            .field("device", &self.device.is_some())
            .finish()
    }
}

impl<T: Any + Send + Sync> From<Fixture<T>> for ClassFixture {
    fn from(f: Fixture<T>) -> Self {
        Self {
            host: f.host,
            device: f.device,
            data_type: std::any::type_name::<T>(),
        }
    }
}
