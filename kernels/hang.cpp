// hang: waits forever through ctx->api->wait, in slices of kWaitSliceUs, and returns
// CG_KERNEL_REAPED as soon as a wait reports CG_WAIT_REAPED (the op-execute timeout reaped it).
// Every block does the same. It never touches memory.
//
// Arguments: none (any that are passed are ignored).
#include "cardguard/kernel_util.hpp"

static const cg_kernel_meta kMeta = {CG_KERNEL_ABI_VERSION, "hang", CG_ARCH, 1, 0};

// How long one wait asks for; the simulator wakes a reaped kernel at once, whatever this is.
static const uint64_t kWaitSliceUs = 1000;

extern "C" const cg_kernel_meta *cg_kernel_metadata(void) { return &kMeta; }

extern "C" int32_t cg_kernel_main(const cg_kernel_ctx *ctx) {
    if (ctx == nullptr || ctx->api == nullptr || ctx->api->wait == nullptr) {
        return CG_KERNEL_BAD_ARGS;
    }
    for (;;) {
        if (ctx->api->wait(ctx->token, kWaitSliceUs) == CG_WAIT_REAPED) {
            return CG_KERNEL_REAPED;
        }
    }
}
