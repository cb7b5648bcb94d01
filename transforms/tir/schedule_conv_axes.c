/* Which output dims of a conv the register tile spans (schedule_rules.h, conv rule).
 *
 * The tile is one vector along the vector dim times T outputs along the tile dim. The
 * default, C's last dim as the vector and its second-to-last as the tile, suits NHWC
 * (f innermost, every input read contiguously or broadcast). For NCHW convs as PyTorch
 * models write them, C[n, f, y, x] = sum P[n, c, y*s + ry, x*s + rx] * W[f, c, ry, rx],
 * vectorizing x reads P with stride s (a gather for s = 2) and, for the widths ResNet
 * and MobileNet have (112, 56, 28, 14, 7), gives vectors of 14 or 7 lanes. Vectorizing
 * the output channels f instead reads P as one broadcast per tile element and W as a
 * contiguous vector once it is repacked with f innermost, whatever the stride; the tile
 * then runs along x (the oneDNN / TVM x86 NCHWc recipe without changing the layout
 * between layers; only the write-back is strided).
 *
 * A dim qualifies as the vector dim when full vectors divide its extent and every load
 * in the update reads it contiguously (its var as the last index), not at all, or
 * through a read-only parameter small enough to repack. The last dim is kept when it
 * qualifies; otherwise the innermost qualifying dim is taken, with the last dim (or,
 * when that is the vector, the second-to-last) as the tile. No qualifying dim: the
 * default stays. */
#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

typedef struct access_check {
  const tj_sched_ctx_t *c;
  const tj_buffer_t *out;    /* the accumulator: read at the store's own indices */
  const tj_tir_expr_t *var;  /* the candidate vector dim's iter var */
  bool ok;
} access_check_t;

typedef struct var_find {
  const tj_tir_expr_t *var;
  bool found;
} var_find_t;

static bool find_var(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  var_find_t *f = v->ctx;
  if (e == f->var) f->found = true;
  return !f->found;
}

static bool mentions(const tj_tir_expr_t *e, const tj_tir_expr_t *var) {
  var_find_t f = {var, false};
  tj_tir_visitor_t v = {.expr = find_var, .ctx = &f};
  tj_tir_visit_expr(&v, e);
  return f.found;
}

static bool repackable(const tj_sched_ctx_t *c, const tj_buffer_t *b) {
  int64_t elems;
  return tj_sched_is_param(c, b) && b->ndim >= 2 && !b->strides && !b->elem_offset && b->dtype.lanes == 1 &&
         tj_buffer_static_size(b, &elems) && elems <= TJ_SCHED_MAX_REPACK_ELEMS;
}

/* e = var, or var + (an expression without var) in either order: stride 1 along var. */
static bool unit_stride(const tj_tir_expr_t *e, const tj_tir_expr_t *var) {
  if (e == var) return true;
  if (e->kind != TJ_TIR_ADD) return false;
  return (unit_stride(e->binary.a, var) && !mentions(e->binary.b, var)) ||
         (unit_stride(e->binary.b, var) && !mentions(e->binary.a, var));
}

static bool check_load(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  access_check_t *a = v->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD || e->load.buffer == a->out || !a->ok) return a->ok;
  int n = e->load.n_indices;
  bool in_last = n > 0 && mentions(e->load.indices[n - 1], a->var), elsewhere = false;
  for (int d = 0; d + 1 < n; d++) elsewhere |= mentions(e->load.indices[d], a->var);
  if (!in_last && !elsewhere) return true;                            /* broadcast */
  if (in_last && !elsewhere && unit_stride(e->load.indices[n - 1], a->var)) return true; /* contiguous */
  if (!in_last && repackable(a->c, e->load.buffer)) return true;      /* repacked, then contiguous */
  a->ok = false;                                                      /* strided or gathered */
  return false;
}

/* Whether `extent` splits into vectors of at least `min_lanes` (of at most `lanes`). */
static bool divides_into_vectors(int64_t extent, int lanes, int min_lanes) {
  for (int l = lanes; l >= min_lanes && l >= 2; l--)
    if (extent % l == 0) return true;
  return false;
}

/* min_lanes: the narrowest vector the dim may be split into (a full one, or for the
 * channel dims of an NCHW conv, half of one: see tj_sched_conv_pick_axes). */
static bool qualifies(const tj_sched_ctx_t *c, const tj_sched_nest_t *nest, const tj_tir_stmt_t *store, int it,
                      bool half_vectors) {
  int64_t extent = nest->extent[nest->loop_of_iter[it]];
  int lanes = tj_sched_lanes(c, store->store.buffer->dtype);
  if (lanes < 2 || !divides_into_vectors(extent, lanes, half_vectors ? lanes / 2 : lanes)) return false;
  access_check_t a = {c, store->store.buffer, nest->block->iter_vars[it].var, true};
  tj_tir_visitor_t v = {.expr = check_load, .ctx = &a};
  tj_tir_visit_expr(&v, store->store.value);
  return a.ok;
}

void tj_sched_conv_pick_axes(const tj_sched_ctx_t *c, const tj_sched_nest_t *nest, const tj_tir_stmt_t *store,
                             int *vec_iter, int *tile_iter) {
  const tj_block_t *b = nest->block;
  int d = store->store.n_indices;
  if (d < 2 || qualifies(c, nest, store, *vec_iter, false)) return;
  /* Full vectors first; then an inner dim of vectors at least half full: MobileNetV2's
   * 1x1 projections to 24 channels (96 -> 24 and 144 -> 24 at 56x56) get 12-lane vectors
   * of output channels, where the default (x, 14 lanes, weights broadcast, the whole
   * input read once per output channel) took 1.4-1.7 ms for 22 MFLOP. The last dim is
   * never taken this way: x (56, 28, 14) would qualify everywhere. */
  for (int half = 0; half < 2; half++)
    for (int i = d - 2; i >= 0; i--) {
      int it = tj_sched_iter_index(b, store->store.indices[i]);
      if (it < 0 || !qualifies(c, nest, store, it, half)) continue;
      *vec_iter = it;
      *tile_iter = tj_sched_iter_index(b, store->store.indices[d - 1]);
      return;
    }
}

int64_t tj_sched_conv_weight_bytes(const tj_sched_ctx_t *c, const tj_sched_nest_t *nest, const tj_tir_stmt_t *store,
                                   int vec_iter) {
  const tj_tir_expr_t *var = nest->block->iter_vars[vec_iter].var;
  int64_t total = 0;
  for (int p = 0; p < c->func->n_params; p++) {
    const tj_buffer_t *w = c->func->buffer_map ? c->func->buffer_map[p] : NULL;
    int64_t elems;
    if (!w || w == store->store.buffer || !tj_buffer_static_size(w, &elems)) continue;
    const tj_tir_expr_t *load = tj_sched_single_load(store->store.value, w);
    bool indexed = false;
    for (int d = 0; load && d < load->load.n_indices; d++) indexed |= mentions(load->load.indices[d], var);
    if (indexed) total += elems * tj_dtype_bytes(w->dtype);
  }
  return total;
}
