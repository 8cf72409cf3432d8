//! Bounds on the simulated card, through `SimDriver`: a kernel is told how many bytes each buffer
//! argument has from its address to the end of its allocation and refuses sizes that do not fit
//! (the op fails 507015 and poisons, as an out-of-bounds AICore access raises an AICore exception
//! on a card); an address outside every live allocation is refused at launch (100000); and device
//! memory is finite (207001 past the card's capacity or what the host can back).

#![cfg(feature = "sim")]

mod sim_support;

use platform_common::driver::{DevicePtr, DriverCall, KernelArg, LaunchOrigin};
use platform_common::error::codes;
use platform_common::sim::{card_state, SimDriver};
use platform_common::{Arch, Driver};
use sim_support::{bytes_f32, err, f32_bytes, Machine, Session};

const PATTERN: u8 = 0x5c;

/// A buffer of `bytes` bytes on the current device, every byte `PATTERN`.
fn patterned(drv: &SimDriver, bytes: usize) -> DevicePtr {
    let p = drv.malloc(bytes).unwrap();
    drv.memcpy_to_device(p, &vec![PATTERN; bytes]).unwrap();
    p
}

/// A bystander on card 1 of the same process: its memory must come through any fault on card 0.
struct Bystander {
    buf: DevicePtr,
    bytes: usize,
}

impl Bystander {
    fn new(drv: &SimDriver) -> Self {
        drv.set_device(1).unwrap();
        let bytes = 1 << 16;
        let buf = patterned(drv, bytes);
        Self { buf, bytes }
    }

    fn assert_intact(&self, drv: &SimDriver) {
        drv.set_device(1).unwrap();
        let mut back = vec![0u8; self.bytes];
        drv.memcpy_to_host(&mut back, self.buf).unwrap();
        assert!(
            back.iter().all(|&b| b == PATTERN),
            "a bystander buffer was written"
        );
    }
}

/// Runs vector_add with `args` on card 0 and checks that the sync fails with the refused kernel's
/// AICore exception and that the context is poisoned with it.
fn refused_vector_add(drv: &SimDriver, s: &Session, args: impl Fn(&SimDriver) -> [KernelArg; 4]) {
    drv.set_device(0).unwrap();
    let k = Session::register(drv, "vector_add").unwrap();
    let args = args(drv);
    // The launch is queued (the sim cannot know the kernel's sizes); the kernel refuses them.
    drv.launch_aicore(s.aicore, k, 8, &args, LaunchOrigin::Case)
        .unwrap();
    let e = drv
        .synchronize_stream_with_timeout(s.aicore, s.sync_ms)
        .unwrap_err();
    assert_eq!(
        e,
        err(
            DriverCall::SynchronizeStreamWithTimeout,
            codes::RT_AICORE_EXCEPTION
        )
    );
    assert_eq!(drv.sticky_error(0), Some(codes::RT_AICORE_EXCEPTION));
}

#[test]
fn an_undersized_output_with_a_huge_size_scalar_fails_the_op_without_writing() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        let bystander = Bystander::new(&drv);
        let s = Session::init(&drv, 0).unwrap();
        // The review's case: 4-byte buffers and n = 1 << 22 (16 MiB past their ends).
        refused_vector_add(&drv, &s, |drv| {
            [
                KernelArg::Input(patterned(drv, 4)),
                KernelArg::Input(patterned(drv, 4)),
                KernelArg::Output(patterned(drv, 4)),
                KernelArg::Scalar(1 << 22),
            ]
        });
        bystander.assert_intact(&drv);
    }
}

#[test]
fn an_output_one_element_short_fails_the_op() {
    let m = Machine::new(Arch::A2a3);
    let drv = m.driver();
    let bystander = Bystander::new(&drv);
    let s = Session::init(&drv, 0).unwrap();
    refused_vector_add(&drv, &s, |drv| {
        [
            KernelArg::Input(patterned(drv, 64)),
            KernelArg::Input(patterned(drv, 64)),
            KernelArg::Output(patterned(drv, 60)),
            KernelArg::Scalar(16),
        ]
    });
    bystander.assert_intact(&drv);
}

#[test]
fn a_scalar_in_a_buffer_slot_fails_the_op() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        let bystander = Bystander::new(&drv);
        let s = Session::init(&drv, 0).unwrap();
        refused_vector_add(&drv, &s, |drv| {
            let a = patterned(drv, 64);
            [
                KernelArg::Input(a),
                // The address of a real buffer, passed as a scalar: no length comes with it.
                KernelArg::Scalar(patterned(drv, 64).0),
                KernelArg::Output(patterned(drv, 64)),
                KernelArg::Scalar(16),
            ]
        });
        bystander.assert_intact(&drv);
    }
}

#[test]
fn an_address_inside_an_allocation_gets_the_bytes_left_to_its_end() {
    let m = Machine::new(Arch::A5);
    let drv = m.driver();
    let s = Session::init(&drv, 0).unwrap();
    let k = Session::register(&drv, "vector_add").unwrap();
    let a = drv.malloc(16).unwrap();
    drv.memcpy_to_device(a, &f32_bytes(&[1.0, 2.0, 3.0, 4.0]))
        .unwrap();
    // Output: the last 16 of 32 bytes; the first 16 must stay as they were.
    let c = patterned(&drv, 32);
    let tail = DevicePtr(c.0 + 16);
    let args = |n| {
        [
            KernelArg::Input(a),
            KernelArg::Input(a),
            KernelArg::Output(tail),
            KernelArg::Scalar(n),
        ]
    };
    s.run(&drv, k, 2, &args(4), LaunchOrigin::Case).unwrap();
    let mut back = [0u8; 32];
    drv.memcpy_to_host(&mut back, c).unwrap();
    assert!(
        back[..16].iter().all(|&b| b == PATTERN),
        "wrote before the address"
    );
    assert_eq!(bytes_f32(&back[16..]), [2.0, 4.0, 6.0, 8.0]);
    // Five elements do not fit in the 16 bytes left.
    let e = s.run(&drv, k, 2, &args(5), LaunchOrigin::Case).unwrap_err();
    assert_eq!(e.code, codes::RT_AICORE_EXCEPTION);
}

#[test]
fn an_address_outside_every_allocation_is_refused_at_launch() {
    let m = Machine::new(Arch::A2a3);
    let drv = m.driver();
    let s = Session::init(&drv, 0).unwrap();
    let k = Session::register(&drv, "vector_add").unwrap();
    let a = drv.malloc(16).unwrap();
    for bad in [DevicePtr(a.0 + 16), DevicePtr(0), DevicePtr(a.0 - 8)] {
        let args = [
            KernelArg::Input(a),
            KernelArg::Input(a),
            KernelArg::Output(bad),
            KernelArg::Scalar(4),
        ];
        assert_eq!(
            drv.launch_aicore(s.aicore, k, 1, &args, LaunchOrigin::Case),
            Err(err(DriverCall::LaunchAicore, codes::INVALID_PARAM)),
            "{bad:?}"
        );
    }
    assert_eq!(card_state(&m.cfg, 0).unwrap().counters.case_launches, 0);
    assert_eq!(drv.sticky_error(0), None);
}

#[test]
fn device_memory_is_finite_and_an_impossible_allocation_is_a_typed_error() {
    let m = Machine::new(Arch::A5);
    let no_memory = err(DriverCall::Malloc, codes::RT_MEMORY_ALLOCATION);
    // The default card: far more than it has.
    let drv = m.driver();
    drv.set_device(0).unwrap();
    assert_eq!(drv.malloc(1 << 62), Err(no_memory));
    assert_eq!(drv.malloc(usize::MAX), Err(no_memory));
    // A small card: its capacity is shared by its allocations and comes back when freed.
    let drv = SimDriver::new(m.cfg.clone().with_card_memory(1 << 20));
    drv.set_device(0).unwrap();
    let big = drv.malloc(768 << 10).unwrap();
    assert_eq!(drv.malloc(512 << 10), Err(no_memory));
    drv.free(big).unwrap();
    drv.malloc(512 << 10).unwrap();
    // A card as large as the address space: the host cannot back it, and says so.
    let drv = SimDriver::new(m.cfg.clone().with_card_memory(u64::MAX));
    drv.set_device(0).unwrap();
    assert_eq!(drv.malloc(1 << 62), Err(no_memory));
    // None of it poisons the context.
    assert_eq!(drv.sticky_error(0), None);
    drv.malloc(64).unwrap();
}
