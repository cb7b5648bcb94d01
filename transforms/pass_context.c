/* The defaults every pass run starts from (tj_pass_context_t, transforms/transforms.h):
 * opt level 2 as TVM's PassContext, and FuseOps' max_depth as TVM's relax.FuseOps. */
#include "transforms/transforms.h"

#include <string.h>
void tj_pass_context_init(tj_pass_context_t *ctx, tj_arena_t *arena) {
  memset(ctx, 0, sizeof *ctx);
  ctx->arena = arena;
  ctx->opt_level = 2;
  ctx->fuse_max_depth = 256;
}
