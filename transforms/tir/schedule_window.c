/* The padding of a convolution computed where it is used (schedule.h, conv rule):
 * instead of a padded copy of the whole input written by its own loop nest and read
 * back by the conv, each outer iteration of the conv (a block of output rows) fills a
 * small local buffer with the part of the padded input it reads, from the producer's
 * expression, and the conv reads that. For the seed's 3x3 conv the padded input is
 * 1.2 MB written once and read back from beyond L1; a window for 8 output rows is 10
 * padded rows (22 KB, in L1), 1.25 times the producer's work and no memory traffic.
 * (Measured on the float32 seed conv, bench_kernels thread CPU time, AMD Zen 5: 0.409 ->
 * 0.385 ms with one window per row; on an Intel Xeon with AVX-512, 0.43 -> 0.40 ms from
 * one row per window to 8.)
 *
 * Each dimension d of the padded buffer P, as the conv indexes it (e_d, in the conv
 * block's iter vars), is one of
 *   fixed   e_d uses only outer iter vars (batch n): one element per iteration;
 *   window  e_d = A + r, A over outer iter vars, r a reduce iter var of extent K
 *           (row y + ry): K elements starting at A, or K + rows - 1 when A is the
 *           row-blocked var itself (tj_sched_row_block_t);
 *   full    e_d uses no outer iter var (x + rx, channel c): the whole dimension.
 * The local buffer has the window and full dims; element (a, j, ...) is P at
 * (A + a, j, ...) computed by the producer's expression. Each value is computed by
 * the same expression as before, so results are bit-identical. */
#include "ir/visit.h"
#include "transforms/tir/lower.h"
#include "transforms/tir/schedule_rules.h"

/* At most this many times the producer's work: a window that is most of P per iteration
 * would recompute P over and over. */
#define MAX_RECOMPUTE 4

typedef struct var_use {
  const bool *outer; /* per iter var of the block */
  const tj_block_t *b;
  bool uses_outer, uses_inner;
} var_use_t;

static bool note_var(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  var_use_t *u = v->ctx;
  if (e->kind != TJ_TIR_VAR) return true;
  for (int k = 0; k < u->b->n_iter_vars; k++)
    if (u->b->iter_vars[k].var == e) {
      if (u->outer[k]) u->uses_outer = true;
      else u->uses_inner = true;
    }
  return true;
}

static var_use_t uses(const tj_block_t *b, const bool *outer, const tj_tir_expr_t *e) {
  var_use_t u = {outer, b, false, false};
  tj_tir_visitor_t v = {.expr = note_var, .ctx = &u};
  tj_tir_visit_expr(&v, e);
  return u;
}

static int reduce_iter(const tj_block_t *b, const tj_tir_expr_t *e) {
  for (int k = 0; k < b->n_iter_vars; k++)
    if (b->iter_vars[k].var == e && b->iter_vars[k].kind == TJ_ITER_REDUCE) return k;
  return -1;
}

/* e = A + r (either order) with A over outer vars only and r a reduce iter var. */
static bool split_window(const tj_block_t *b, const bool *outer, const tj_tir_expr_t *e, const tj_tir_expr_t **a,
                         int *r) {
  if (e->kind != TJ_TIR_ADD) return false;
  for (int swap = 0; swap < 2; swap++) {
    const tj_tir_expr_t *x = swap ? e->binary.b : e->binary.a, *y = swap ? e->binary.a : e->binary.b;
    var_use_t ux = uses(b, outer, x);
    if (!ux.uses_inner && (*r = reduce_iter(b, y)) >= 0) {
      *a = x;
      return true;
    }
  }
  return false;
}

/* e = v * s + r (either order, s >= 2 a constant) with v the consumer's vector iter var
 * and r a reduce iter var: the PHASED dim. */
static bool split_phased(const tj_sched_nest_t *nest, int vec_iter, const tj_tir_expr_t *e, tj_sched_window_dim_t *d) {
  const tj_block_t *b = nest->block;
  if (vec_iter < 0 || e->kind != TJ_TIR_ADD) return false;
  for (int swap = 0; swap < 2; swap++) {
    const tj_tir_expr_t *m = swap ? e->binary.b : e->binary.a, *y = swap ? e->binary.a : e->binary.b;
    int r = reduce_iter(b, y);
    int64_t s;
    if (r < 0 || m->kind != TJ_TIR_MUL || m->binary.a != b->iter_vars[vec_iter].var ||
        !tj_tir_is_const_int(m->binary.b, &s) || s < 2)
      continue;
    int64_t k = nest->extent[nest->loop_of_iter[r]], v = nest->extent[nest->loop_of_iter[vec_iter]];
    *d = (tj_sched_window_dim_t){TJ_WINDOW_PHASED, e, k * v, r, vec_iter, s, v};
    return true;
  }
  return false;
}

static bool classify(const tj_sched_nest_t *nest, const bool *outer, int vec_iter, const tj_tir_expr_t *e,
                     const tj_tir_expr_t *dim, tj_sched_window_dim_t *d) {
  const tj_block_t *cb = nest->block;
  var_use_t u = uses(cb, outer, e);
  int r;
  if (!u.uses_inner) {
    *d = (tj_sched_window_dim_t){TJ_WINDOW_FIXED, e, 1, -1};
  } else if (!u.uses_outer && split_phased(nest, vec_iter, e, d)) {
    return true;
  } else if (!u.uses_outer) {
    *d = (tj_sched_window_dim_t){TJ_WINDOW_FULL, e, 0, -1};
    if (!tj_tir_is_const_int(dim, &d->extent)) return false;
  } else if (split_window(cb, outer, e, &d->index, &r)) {
    d->mode = TJ_WINDOW_SLIDE;
    d->reduce_iter = r;
    d->extent = nest->extent[nest->loop_of_iter[r]];
  } else {
    return false;
  }
  return d->extent > 0;
}

bool tj_sched_window_plan(tj_sched_ctx_t *c, int producer, const tj_sched_nest_t *consumer,
                          const tj_tir_expr_t *value, const bool *outer, int64_t outer_iterations,
                          tj_dtype_t local_dtype, const tj_sched_row_block_t *block, int vec_iter,
                          tj_sched_window_t *w) {
  *w = (tj_sched_window_t){.block_dim = -1};
  tj_sched_nest_t pn;
  if (!tj_sched_collect_nest(c->stmts[producer], &pn) || pn.n_reduce) return false;
  const tj_tir_stmt_t *st = pn.block->body;
  if (pn.block->init || st->kind != TJ_TIR_BUFFER_STORE || !tj_sched_store_is_identity(pn.block, st) ||
      !tj_sched_pure_update(pn.block, st) || tj_sched_count_uses(st, st->store.buffer) != 1)
    return false;
  const tj_buffer_t *p = st->store.buffer;
  int64_t p_elems;
  if (p->strides || p->elem_offset || p->dtype.lanes != 1 || !tj_buffer_static_size(p, &p_elems) ||
      p->ndim > TJ_SCHED_MAX_NEST)
    return false;
  const tj_tir_expr_t *load = tj_sched_single_load(value, p);
  if (!load) return false;
  int64_t local_elems = 1;
  for (int d = 0; d < p->ndim; d++) {
    if (!classify(consumer, outer, vec_iter, load->load.indices[d], p->shape[d], &w->dims[d])) return false;
    if (block && block->rows > 1 && w->block_dim < 0 && w->dims[d].mode == TJ_WINDOW_SLIDE &&
        w->dims[d].index == consumer->block->iter_vars[block->row_iter].var) {
      w->dims[d].extent += block->rows - 1;
      w->block_dim = d;
    }
    local_elems *= w->dims[d].extent;
  }
  if (block && block->rows > 1 && w->block_dim < 0) return false;
  if (block) w->block = *block;
  /* A local buffer that stays on the stack (lower.h), and bounded recomputation. */
  if ((uint64_t)local_elems * tj_dtype_bytes(local_dtype) > TJ_TIR_STACK_ALLOC_LIMIT ||
      local_elems * outer_iterations > MAX_RECOMPUTE * p_elems)
    return false;
  w->from = p;
  w->producer = pn.block;
  w->consumer = consumer->block;
  const tj_tir_expr_t *shape[TJ_SCHED_MAX_NEST];
  int n = 0;
  for (int d = 0; d < p->ndim; d++) {
    const tj_sched_window_dim_t *dim = &w->dims[d];
    if (dim->mode == TJ_WINDOW_PHASED) {
      shape[n++] = tj_tir_i64(c->arena, dim->extent / dim->vec_extent);
      shape[n++] = tj_tir_i64(c->arena, dim->vec_extent);
    } else if (dim->mode != TJ_WINDOW_FIXED) {
      shape[n++] = tj_tir_i64(c->arena, dim->extent);
    }
  }
  w->local = tj_buffer_new(c->arena, tj_arena_printf(c->arena, "%s_window", p->name), local_dtype, n, shape, NULL);
  if (!w->local) return (void)(c->oom = true), false;
  ((tj_buffer_t *)w->local)->scope = "local";
  return true;
}

int tj_sched_window_row_iter(const tj_sched_window_t *w) {
  for (int d = 0; d < w->from->ndim; d++)
    if (w->dims[d].mode == TJ_WINDOW_SLIDE)
      for (int k = 0; k < w->consumer->n_iter_vars; k++)
        if (w->dims[d].index == w->consumer->iter_vars[k].var) return k;
  return -1;
}

bool tj_sched_window_bind(tj_sched_ctx_t *c, tj_sched_window_t *w, const tj_tir_expr_t *const *outer_values) {
  for (int d = 0; d < w->from->ndim; d++) {
    if (w->dims[d].mode == TJ_WINDOW_FULL || w->dims[d].mode == TJ_WINDOW_PHASED) continue;
    w->bound[d] = tj_sched_subst_expr(c, w->consumer, w->dims[d].index, outer_values);
    if (!w->bound[d]) return false;
  }
  return true;
}

/* local[l_idx] = the producer's value at the padded element l_idx stands for. */
static const tj_tir_stmt_t *fill_store(tj_sched_ctx_t *c, const tj_sched_window_t *w, const tj_tir_expr_t *const *l_idx) {
  const tj_buffer_t *p = w->from;
  int n = w->local->ndim;
  const tj_tir_expr_t *p_idx[TJ_SCHED_MAX_NEST];
  for (int q = 0; q < n; q++)
    if (!l_idx[q]) return NULL;
  for (int d = 0, q = 0; d < p->ndim; d++) {
    const tj_sched_window_dim_t *dim = &w->dims[d];
    if (dim->mode == TJ_WINDOW_FIXED) p_idx[d] = w->bound[d];
    else if (dim->mode == TJ_WINDOW_SLIDE) p_idx[d] = tj_sched_add(c, w->bound[d], l_idx[q++]);
    else if (dim->mode == TJ_WINDOW_PHASED) p_idx[d] = tj_sched_add(c, tj_sched_mul(c, l_idx[q + 1], dim->stride), l_idx[q]), q += 2;
    else if (q == n - 1 && w->col_offset) p_idx[d] = tj_sched_add(c, l_idx[q++], tj_tir_i64(c->arena, -w->col_offset));
    else p_idx[d] = l_idx[q++];
  }
  const tj_tir_expr_t *v = tj_sched_producer_value(c, w->producer, p_idx);
  if (v && !tj_dtype_eq(v->dtype, w->local->dtype)) v = tj_tir_cast(c->arena, w->local->dtype, v);
  return v ? tj_tir_store(c->arena, w->local, n, l_idx, v) : NULL;
}

/* The innermost dim of extent `ext` (at least one vector): full vectors, vectorized, then
 * the remainder serial, so the producer's branch on the border is taken once per vector
 * for all but ext % lanes elements (a 3x3 NCHW window row of 58 is 3 vectors and 10). */
static const tj_tir_stmt_t *fill_innermost(tj_sched_ctx_t *c, const tj_sched_window_t *w, const tj_tir_expr_t **l_idx,
                                           int64_t ext, int lanes, bool overlap) {
  int n = w->local->ndim;
  const tj_tir_expr_t *vo = tj_sched_var(c, "wo"), *vi = tj_sched_var(c, "wi"), *vt = tj_sched_var(c, "wt");
  if (!vo || !vi || !vt) return NULL;
  int64_t full = ext / lanes, tail = ext % lanes;
  l_idx[n - 1] = tj_sched_add(c, tj_sched_mul(c, vo, lanes), vi);
  const tj_tir_stmt_t *body = tj_sched_loop(c, vi, lanes, TJ_FOR_VECTORIZED, fill_store(c, w, l_idx));
  body = full > 1 ? tj_sched_loop(c, vo, full, TJ_FOR_SERIAL, body) : body ? tj_tir_let_stmt(c->arena, vo, tj_tir_i64(c->arena, 0), body) : NULL;
  if (!tail || !body) return body;
  l_idx[n - 1] = tj_sched_add(c, tj_tir_i64(c->arena, overlap ? ext - lanes : full * lanes), vt);
  const tj_tir_stmt_t *two[2] = {body, tj_sched_loop(c, vt, overlap ? lanes : tail,
                                                     overlap ? TJ_FOR_VECTORIZED : TJ_FOR_SERIAL, fill_store(c, w, l_idx))};
  return two[1] ? tj_tir_seq(c->arena, 2, two) : NULL;
}

/* Loops over the local buffer's dims, the innermost vectorized (fill_innermost). */
const tj_tir_stmt_t *tj_sched_window_fill(tj_sched_ctx_t *c, const tj_sched_window_t *w) {
  int n = w->local->ndim, lanes = tj_sched_lanes(c, w->local->dtype);
  const tj_tir_expr_t *vars[TJ_SCHED_MAX_NEST], *l_idx[TJ_SCHED_MAX_NEST];
  int64_t ext[TJ_SCHED_MAX_NEST];
  for (int q = 0; q < n; q++) {
    tj_tir_is_const_int(w->local->shape[q], &ext[q]);
    vars[q] = l_idx[q] = tj_sched_var(c, "w");
  }
  if (n > 0 && w->fill_inner > 0) ext[n - 1] = w->fill_inner;
  /* a divisor of the row of at least half a vector fills it without a tail (28: 2 x 14) */
  int hw = lanes;
  for (int64_t l = lanes; n > 0 && l >= lanes / 2 && l > 1 && ext[n - 1] > lanes; l--)
    if (ext[n - 1] % l == 0) {
      lanes = (int)l;
      break;
    }
  /* fill_overlap: full vectors and an overlapping last one rather than odd-sized ones
   * (LLVM splits a 15-lane vector into 8 + 4 + 2 + 1); with no such divisor the serial
   * tail stays, as it measured faster than the overlap at 58 and 114 wide. */
  bool overlap = w->fill_overlap && lanes < hw;
  if (overlap) lanes = hw;
  bool split = n > 0 && lanes > 1 && ext[n - 1] >= lanes;
  const tj_tir_stmt_t *s = split ? fill_innermost(c, w, l_idx, ext[n - 1], lanes, overlap) : fill_store(c, w, l_idx);
  for (int q = (split ? n - 1 : n) - 1; q >= 0; q--) {
    bool vec = !split && q == n - 1 && ext[q] >= 2; /* a short innermost dim: one vector */
    s = tj_sched_loop(c, vars[q], ext[q], vec ? TJ_FOR_VECTORIZED : TJ_FOR_SERIAL, s);
  }
  if (!s) c->oom = true;
  return s;
}

const tj_tir_expr_t *tj_sched_window_load(tj_sched_ctx_t *c, const tj_sched_window_t *w,
                                          const tj_tir_expr_t *const *values) {
  const tj_tir_expr_t *idx[TJ_SCHED_MAX_NEST];
  int n = 0;
  for (int d = 0; d < w->from->ndim; d++) {
    const tj_sched_window_dim_t *dim = &w->dims[d];
    if (dim->mode == TJ_WINDOW_SLIDE && d == w->block_dim)
      idx[n++] = tj_sched_add(c, w->block.row_offset, values[dim->reduce_iter]);
    else if (dim->mode == TJ_WINDOW_SLIDE) idx[n++] = values[dim->reduce_iter];
    else if (dim->mode == TJ_WINDOW_FULL) idx[n++] = tj_sched_subst_expr(c, w->consumer, dim->index, values);
    else if (dim->mode == TJ_WINDOW_PHASED) idx[n++] = values[dim->reduce_iter], idx[n++] = values[dim->vec_iter];
  }
  for (int q = 0; q < n; q++)
    if (!idx[q]) return NULL;
  const tj_tir_expr_t *l = tj_tir_load(c->arena, w->local, n, idx);
  if (!l) c->oom = true;
  return l;
}
