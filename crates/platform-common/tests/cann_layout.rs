//! The layout of every CANN runtime and HAL struct the `acl` driver passes (size, alignment and
//! each field's offset) and the enum values it uses, as CANN's public sources have them. The
//! torch-npu wheel carries only the ACL headers, so these facts are written here, each with the
//! file and line it was read from (hicann/runtime at 681ef7610df1, hicann/driver at
//! ef377e950a32); `cargo xtask cann-check` compiles the same comparison against an installed
//! CANN. Offsets follow from the C rules (natural alignment, 64-bit pointers) on the Linux
//! targets CANN supports.
#![cfg(feature = "onboard")]

use std::mem::{align_of, offset_of, size_of};

use platform_common::acl::bindings::*;

/// (field, offset) pairs of `$ty`, asserted with the struct's size and alignment.
macro_rules! layout {
    ($ty:ty, size $size:expr, align $align:expr, $source:expr, { $($field:ident: $off:expr),* $(,)? }) => {{
        assert_eq!(size_of::<$ty>(), $size, "size of {} ({})", stringify!($ty), $source);
        assert_eq!(align_of::<$ty>(), $align, "alignment of {} ({})", stringify!($ty), $source);
        $(assert_eq!(
            offset_of!($ty, $field),
            $off,
            "offset of {}.{} ({})",
            stringify!($ty),
            stringify!($field),
            $source
        );)*
    }};
}

#[test]
fn rt_dev_binary_matches_cann() {
    layout!(rtDevBinary_t, size 24, align 8,
        "hicann/runtime pkg_inc/runtime/rt_external_kernel.h:85", {
        magic: 0, version: 4, data: 8, length: 16,
    });
}

#[test]
fn rt_args_ex_is_40_bytes_with_every_field() {
    layout!(rtHostInputInfo_t, size 8, align 4,
        "hicann/runtime pkg_inc/runtime/rt_external_kernel.h:111", {
        addrOffset: 0, dataOffset: 4,
    });
    layout!(rtArgsEx_t, size 40, align 8,
        "hicann/runtime pkg_inc/runtime/rt_external_kernel.h:120", {
        args: 0, hostInputInfoPtr: 8, argsSize: 16, tilingAddrOffset: 20, tilingDataOffset: 24,
        hostInputInfoNum: 28, hasTiling: 30, isNoNeedH2DCopy: 31, reserved: 32,
    });
}

#[test]
fn rt_aicpu_args_ex_is_48_bytes_with_every_field() {
    layout!(rtAicpuArgsEx_t, size 48, align 8,
        "hicann/runtime pkg_inc/runtime/rt_external_kernel.h:133", {
        args: 0, hostInputInfoPtr: 8, kernelOffsetInfoPtr: 16, argsSize: 24,
        hostInputInfoNum: 28, kernelOffsetInfoNum: 30, soNameAddrOffset: 32,
        kernelNameAddrOffset: 36, isNoNeedH2DCopy: 40, timeout: 42, reserved: 44,
    });
}

#[test]
fn res_map_info_has_its_reserved_word() {
    layout!(res_map_info, size 20, align 4,
        "hicann/driver pkg_inc/hal_pkg/dpa_pkg.h:34", {
        target_proc_type: 0, res_type: 4, res_id: 8, flag: 12, rsv: 16,
    });
    assert_eq!(
        RES_MAP_INFO_RSV_LEN, 1,
        "hicann/driver pkg_inc/hal_pkg/dpa_pkg.h:33"
    );
}

#[test]
fn addr_map_request_and_reply_match_cann() {
    layout!(AddrMapInPara, size 8, align 4,
        "hicann/runtime pkg_inc/driver/ascend_hal_define.h:943", {
        addr_type: 0, devid: 4,
    });
    layout!(AddrMapOutPara, size 16, align 8,
        "hicann/runtime pkg_inc/driver/ascend_hal_define.h:948", {
        ptr: 0, len: 8,
    });
}

#[test]
fn the_enum_values_used_match_cann() {
    let facts: &[(&str, i64, i64, &str)] = &[
        (
            "KERNEL_TYPE_AICPU",
            KERNEL_TYPE_AICPU.into(),
            2,
            "hicann/runtime pkg_inc/runtime/runtime/kernel.h:139",
        ),
        (
            "KERNEL_TYPE_AICPU_KFC",
            KERNEL_TYPE_AICPU_KFC.into(),
            5,
            "hicann/runtime pkg_inc/runtime/runtime/kernel.h:141",
        ),
        (
            "RES_AICORE",
            RES_AICORE.into(),
            0,
            "hicann/driver pkg_inc/hal_pkg/dpa_pkg.h:24",
        ),
        (
            "PROCESS_CP1",
            PROCESS_CP1.into(),
            0,
            "hicann/runtime pkg_inc/driver/hal_pkg/common_pkg.h:129",
        ),
        (
            "CTRL_TYPE_ADDR_MAP",
            CTRL_TYPE_ADDR_MAP.into(),
            0,
            "hicann/runtime pkg_inc/driver/ascend_hal_define.h:891",
        ),
        (
            "ADDR_MAP_TYPE_REG_AIC_CTRL",
            ADDR_MAP_TYPE_REG_AIC_CTRL.into(),
            2,
            "hicann/runtime pkg_inc/driver/ascend_hal_define.h:938",
        ),
        (
            "MODULE_TYPE_AICORE",
            MODULE_TYPE_AICORE.into(),
            4,
            "hicann/runtime pkg_inc/driver/ascend_hal_base.h:337",
        ),
        (
            "INFO_TYPE_OCCUPY",
            INFO_TYPE_OCCUPY.into(),
            8,
            "hicann/runtime pkg_inc/driver/ascend_hal_base.h:364",
        ),
        (
            "DRV_ERROR_NO_PROCESS",
            DRV_ERROR_NO_PROCESS.into(),
            62,
            "hicann/runtime pkg_inc/driver/ascend_hal_error.h:106",
        ),
        (
            "DRV_ERROR_NOT_SUPPORT",
            DRV_ERROR_NOT_SUPPORT.into(),
            0xfffe,
            "hicann/runtime pkg_inc/driver/ascend_hal_error.h:144",
        ),
        (
            "RT_DEV_BINARY_MAGIC_ELF",
            RT_DEV_BINARY_MAGIC_ELF.into(),
            0x4355_4245,
            "hicann/runtime pkg_inc/runtime/rt_external_kernel.h:65",
        ),
    ];
    for &(name, ours, cann, source) in facts {
        assert_eq!(ours, cann, "{name} ({source})");
    }
}

#[test]
fn the_aicpu_scheduler_launch_names_its_so_and_kernel_inside_its_arguments() {
    use platform_common::acl::aicpu_args::{
        aicpu_scheduler_args, AICPU_KERNEL_NAME, AICPU_KERNEL_TYPE, AICPU_SO_NAME,
    };
    assert_eq!(AICPU_KERNEL_TYPE, KERNEL_TYPE_AICPU_KFC);
    let block = aicpu_scheduler_args(0x1234);
    assert_eq!(block.aicoreStream, 0x1234);
    let text = |field: &[std::ffi::c_char]| -> Vec<u8> {
        field.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect()
    };
    assert_eq!(text(&block.kernelName), AICPU_KERNEL_NAME);
    assert_eq!(text(&block.soName), AICPU_SO_NAME);
    assert_eq!(size_of::<cgAicpuSchedulerArgs>(), 72);
}
