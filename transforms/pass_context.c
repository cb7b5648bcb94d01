/* STUB: replaced by the pass implementation. */
#include "transforms/transforms.h"
void tj_pass_context_init(tj_pass_context_t *ctx, tj_arena_t *arena) {
  ctx->arena = arena;
  ctx->opt_level = 2;
  ctx->fuse_max_depth = 256;
}
