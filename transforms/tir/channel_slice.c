/* A kernel restricted to a run of channels (channel_slice.h). */
#include "transforms/tir/channel_slice.h"

#include "ir/visit.h"
#include "transforms/tir/row_split.h"

enum { MAX_BUFFERS = 256 };

/* Replaces the constant `channels` by `to` in buffer shapes, loop extents and block iter
 * domains (and anywhere else it occurs, which the independence check then rejects). */
typedef struct slice_ctx {
  int64_t channels;
  const tj_tir_expr_t *to;
  const tj_buffer_t *from_buf[MAX_BUFFERS], *to_buf[MAX_BUFFERS];
  int n_map;
  bool overflow;
} slice_ctx_t;

static bool is_channels(const slice_ctx_t *c, const tj_tir_expr_t *e) {
  int64_t v;
  return e && tj_tir_is_const_int(e, &v) && v == c->channels;
}

static const tj_tir_expr_t *slice_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  slice_ctx_t *c = m->ctx;
  return is_channels(c, e) ? c->to : NULL;
}

static const tj_buffer_t *slice_buffer(tj_tir_mutator_t *m, const tj_buffer_t *b) {
  slice_ctx_t *c = m->ctx;
  for (int i = 0; i < c->n_map; i++)
    if (c->from_buf[i] == b) return c->to_buf[i];
  bool has = false;
  for (int d = 0; d < b->ndim; d++) has |= is_channels(c, b->shape[d]);
  if (!has) return NULL;
  if (c->n_map == MAX_BUFFERS) return c->overflow = true, NULL;
  tj_buffer_t *nb = (tj_buffer_t *)tj_buffer_copy(m->arena, b);
  const tj_tir_expr_t **shape = TJ_ARENA_ARRAY(m->arena, const tj_tir_expr_t *, b->ndim);
  if (!nb || !shape) return m->failed = true, NULL;
  for (int d = 0; d < b->ndim; d++) shape[d] = is_channels(c, b->shape[d]) ? c->to : b->shape[d];
  nb->shape = shape;
  c->from_buf[c->n_map] = b;
  c->to_buf[c->n_map++] = nb;
  return nb;
}

/* f with every `channels` replaced by `to`; NULL when out of memory or too many buffers. */
static const tj_prim_func_t *replace_channels(tj_arena_t *arena, const tj_prim_func_t *f, int64_t channels,
                                              const tj_tir_expr_t *to) {
  slice_ctx_t c = {.channels = channels, .to = to};
  const tj_buffer_t **bmap = TJ_ARENA_ARRAY(arena, const tj_buffer_t *, f->n_params + 1);
  tj_prim_func_t *nf = TJ_ARENA_NEW(arena, tj_prim_func_t);
  if (!to || !bmap || !nf || !f->buffer_map) return NULL;
  tj_tir_mutator_t m = {.arena = arena, .expr = slice_expr, .buffer = slice_buffer, .ctx = &c};
  for (int i = 0; i < f->n_params; i++) bmap[i] = f->buffer_map[i] ? tj_tir_mutate_buffer(&m, f->buffer_map[i]) : NULL;
  const tj_tir_stmt_t *body = tj_tir_mutate_stmt(&m, f->body);
  if (m.failed || !body || c.overflow) return NULL;
  *nf = *f;
  nf->buffer_map = bmap;
  nf->body = body;
  return nf;
}

bool tj_tir_channels_independent(tj_arena_t *arena, const tj_prim_func_t *f, int64_t channels) {
  if (channels < 2 || !f->buffer_map) return false;
  for (int i = 0; i < f->n_params; i++)
    if (!f->buffer_map[i]) return false;
  const tj_tir_expr_t *n = tj_tir_var(arena, "channels", TJ_I64);
  const tj_prim_func_t *g = n ? replace_channels(arena, f, channels, n) : NULL;
  return g && tj_tir_rows_independent(g, n);
}

tj_status_t *tj_tir_channel_slice(tj_arena_t *arena, const tj_prim_func_t *f, int64_t channels, int64_t count,
                                  const tj_prim_func_t **out) {
  const tj_prim_func_t *g = replace_channels(arena, f, channels, tj_tir_i64(arena, count));
  if (!g) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "channel slice: out of memory (or more than %d buffers)", MAX_BUFFERS);
  *out = g;
  return NULL;
}
