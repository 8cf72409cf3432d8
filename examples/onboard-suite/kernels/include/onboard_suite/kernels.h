/* The kernels of the onboard-suite example, and their argument ABI.
 *
 * Each kernel is one C++ source in examples/onboard-suite/kernels/, built by the crate's build.rs
 * with kernel-build into a blob per arch (<OUT_DIR>/kernels/<arch>/<name>.so), against the
 * cardguard kernel ABI (cardguard/kernel.h, version 2: a kernel takes u64 arguments, buffers as
 * device addresses and scalars by value, and checks every buffer against the sizes it is given
 * before it touches memory). The host side (src/*.rs) passes the arguments in exactly the order
 * below; a case names the kernel by its file stem.
 *
 * scale: y[i] = alpha * x[i] + beta for i in [0, n), f32.
 *   arg 0 x:     const f32 *, n elements            (input)
 *   arg 1 y:     f32 *, n elements                  (output; may not alias x)
 *   arg 2 n:     element count
 *   arg 3 alpha: f32, its bits in the low 32 bits
 *   arg 4 beta:  f32, its bits in the low 32 bits
 *   Written for up to 8 blocks; blocks split [0, n) into contiguous ranges. A buffer shorter than
 *   n elements is refused with CG_KERNEL_BAD_ARGS before any access (on a simulated card the op
 *   then fails with 507015 and poisons the context, as an out-of-bounds access does on a card).
 */
#ifndef ONBOARD_SUITE_KERNELS_H
#define ONBOARD_SUITE_KERNELS_H

#define ONBOARD_SCALE_ARGS 5u
#define ONBOARD_SCALE_BLOCKS 8u

enum onboard_scale_arg {
    ONBOARD_SCALE_X = 0,
    ONBOARD_SCALE_Y = 1,
    ONBOARD_SCALE_N = 2,
    ONBOARD_SCALE_ALPHA = 3,
    ONBOARD_SCALE_BETA = 4,
};

#endif /* ONBOARD_SUITE_KERNELS_H */
