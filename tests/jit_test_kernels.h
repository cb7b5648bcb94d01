/* Small PrimFuncs built with the IR constructors, in the form LegalizeOps produces
 * (root block, T.grid loops, one block per computation with remapped iter vars), shared
 * by test_lower, test_codegen and test_jit. */
#ifndef TJ_TESTS_JIT_TEST_KERNELS_H
#define TJ_TESTS_JIT_TEST_KERNELS_H

#include <stdio.h>

#include "ir/tir.h"

static inline const tj_tir_expr_t *tk_i64(tj_arena_t *a, int64_t v) { return tj_tir_i64(a, v); }

static inline const tj_buffer_t *tk_buffer(tj_arena_t *a, const char *name, tj_dtype_t dt, int ndim,
                                           const int64_t *dims) {
  const tj_tir_expr_t *shape[8];
  for (int i = 0; i < ndim; i++) shape[i] = tk_i64(a, dims[i]);
  return tj_buffer_new(a, name, dt, ndim, shape, NULL);
}

/* A block named `name` with one iter var per loop (kinds "S"/"R" per char), realized
 * inside a perfect loop nest over `dims`; `make_body` builds the body from the iter vars. */
typedef struct tk_block_parts {
  const tj_tir_stmt_t *init, *body;
} tk_block_parts_t;
typedef tk_block_parts_t (*tk_body_fn)(tj_arena_t *a, const tj_tir_expr_t *const *iv, void *ctx);

static inline const tj_tir_stmt_t *tk_grid_block(tj_arena_t *a, const char *name, int n, const int64_t *dims,
                                                 const char *kinds, tk_body_fn make_body, void *ctx) {
  const tj_tir_expr_t *loops[8], *ivars[8];
  tj_iter_var_t ivs[8];
  char buf[32];
  for (int i = 0; i < n; i++) {
    snprintf(buf, sizeof buf, "i%d", i);
    loops[i] = tj_tir_var(a, buf, TJ_I64);
    snprintf(buf, sizeof buf, "v_i%d", i);
    ivars[i] = tj_tir_var(a, buf, TJ_I64);
    ivs[i] = (tj_iter_var_t){ivars[i], {tk_i64(a, 0), tk_i64(a, dims[i])},
                             kinds[i] == 'R' ? TJ_ITER_REDUCE : TJ_ITER_SPATIAL};
  }
  tk_block_parts_t parts = make_body(a, ivars, ctx);
  tj_block_t *blk = tj_block_new(a, name);
  blk->n_iter_vars = n;
  blk->iter_vars = tj_arena_memdup(a, ivs, sizeof(ivs[0]) * (size_t)n);
  blk->init = parts.init;
  blk->body = parts.body;
  const tj_tir_stmt_t *s = tj_tir_realize(a, n, loops, NULL, blk);
  for (int i = n - 1; i >= 0; i--) s = tj_tir_for(a, loops[i], tk_i64(a, 0), tk_i64(a, dims[i]), TJ_FOR_SERIAL, s);
  return s;
}

/* The function: params are buffers; body wrapped in a root block owning `allocs`. */
static inline tj_prim_func_t *tk_func(tj_arena_t *a, int n_params, const tj_buffer_t *const *bufs, int n_stmts,
                                      const tj_tir_stmt_t *const *stmts, int n_allocs,
                                      const tj_buffer_t *const *allocs) {
  tj_block_t *root = tj_block_new(a, "root");
  root->body = tj_tir_seq(a, n_stmts, stmts);
  root->n_alloc_buffers = n_allocs;
  root->alloc_buffers = n_allocs ? tj_arena_memdup(a, allocs, sizeof(allocs[0]) * (size_t)n_allocs) : NULL;
  tj_prim_func_t *f = TJ_ARENA_NEW(a, tj_prim_func_t);
  const tj_tir_expr_t **params = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, n_params);
  for (int i = 0; i < n_params; i++) params[i] = bufs[i]->data;
  f->n_params = n_params;
  f->params = params;
  f->buffer_map = tj_arena_memdup(a, bufs, sizeof(bufs[0]) * (size_t)n_params);
  f->body = tj_tir_realize(a, 0, NULL, NULL, root);
  return f;
}

/* ---- unary / binary elementwise over a 2-D shape ---- */
typedef struct tk_ew_ctx {
  const tj_buffer_t *a, *b, *out;
  tj_tir_expr_kind_t op; /* TJ_TIR_MAX with b == NULL: relu */
} tk_ew_ctx_t;

static inline tk_block_parts_t tk_ew_body(tj_arena_t *a, const tj_tir_expr_t *const *iv, void *vctx) {
  tk_ew_ctx_t *c = vctx;
  const tj_tir_expr_t *x = tj_tir_load(a, c->a, 2, iv);
  const tj_tir_expr_t *y = c->b ? tj_tir_load(a, c->b, 2, iv) : tj_tir_float(a, c->a->dtype, 0.0);
  tk_block_parts_t p = {NULL, tj_tir_store(a, c->out, 2, iv, tj_tir_binary(a, c->op, x, y))};
  return p;
}

/* relu (b == false) or out = a <op> b over [d0, d1]. */
static inline tj_prim_func_t *tk_elementwise(tj_arena_t *a, tj_dtype_t dt, int64_t d0, int64_t d1,
                                             tj_tir_expr_kind_t op, bool binary) {
  int64_t dims[2] = {d0, d1};
  tk_ew_ctx_t c = {tk_buffer(a, "A", dt, 2, dims), binary ? tk_buffer(a, "B", dt, 2, dims) : NULL,
                   tk_buffer(a, "C", dt, 2, dims), op};
  const tj_tir_stmt_t *s = tk_grid_block(a, "compute", 2, dims, "SS", tk_ew_body, &c);
  const tj_buffer_t *bufs[3] = {c.a, binary ? c.b : c.out, c.out};
  return tk_func(a, binary ? 3 : 2, bufs, 1, &s, 0, NULL);
}

/* ---- row sum through a root-allocated f32 temp, then scaled copy ----
 *   tmp[i] = sum_k A[i, k]   (T.init: tmp[i] = 0)
 *   Out[i] = tmp[i] * 0.5                                                          */
typedef struct tk_sum_ctx {
  const tj_buffer_t *a, *tmp, *out;
} tk_sum_ctx_t;

static inline tk_block_parts_t tk_sum_body(tj_arena_t *a, const tj_tir_expr_t *const *iv, void *vctx) {
  tk_sum_ctx_t *c = vctx;
  const tj_tir_expr_t *acc = tj_tir_load(a, c->tmp, 1, iv);
  const tj_tir_expr_t *x = tj_tir_load(a, c->a, 2, iv);
  tk_block_parts_t p = {tj_tir_store(a, c->tmp, 1, iv, tj_tir_float(a, TJ_F32, 0.0)),
                        tj_tir_store(a, c->tmp, 1, iv, tj_tir_binary(a, TJ_TIR_ADD, acc, x))};
  return p;
}

static inline tk_block_parts_t tk_scale_body(tj_arena_t *a, const tj_tir_expr_t *const *iv, void *vctx) {
  tk_sum_ctx_t *c = vctx;
  const tj_tir_expr_t *v = tj_tir_binary(a, TJ_TIR_MUL, tj_tir_load(a, c->tmp, 1, iv), tj_tir_float(a, TJ_F32, 0.5));
  tk_block_parts_t p = {NULL, tj_tir_store(a, c->out, 1, iv, v)};
  return p;
}

static inline tj_prim_func_t *tk_row_sum(tj_arena_t *a, int64_t rows, int64_t cols) {
  int64_t dims[2] = {rows, cols};
  tk_sum_ctx_t c = {tk_buffer(a, "A", TJ_F32, 2, dims), tk_buffer(a, "tmp", TJ_F32, 1, dims),
                    tk_buffer(a, "Out", TJ_F32, 1, dims)};
  const tj_tir_stmt_t *s[2] = {tk_grid_block(a, "red", 2, dims, "SR", tk_sum_body, &c),
                               tk_grid_block(a, "scale", 1, dims, "S", tk_scale_body, &c)};
  const tj_buffer_t *bufs[2] = {c.a, c.out};
  return tk_func(a, 2, bufs, 2, s, 1, &c.tmp);
}

/* ---- 1-D zero padding by `pad` on each side, the conv2d pad_temp pattern:
 *   Out[i] = if_then_else(pad <= i && i < n + pad, A[i - pad], 0)                   */
typedef struct tk_pad_ctx {
  const tj_buffer_t *a, *out;
  int64_t n, pad;
} tk_pad_ctx_t;

static inline tk_block_parts_t tk_pad_body(tj_arena_t *a, const tj_tir_expr_t *const *iv, void *vctx) {
  tk_pad_ctx_t *c = vctx;
  const tj_tir_expr_t *i = iv[0];
  const tj_tir_expr_t *cond = tj_tir_binary(a, TJ_TIR_AND, tj_tir_binary(a, TJ_TIR_LE, tk_i64(a, c->pad), i),
                                            tj_tir_binary(a, TJ_TIR_LT, i, tk_i64(a, c->n + c->pad)));
  const tj_tir_expr_t *src = tj_tir_binary(a, TJ_TIR_SUB, i, tk_i64(a, c->pad));
  const tj_tir_expr_t *args[3] = {cond, tj_tir_load(a, c->a, 1, &src), tj_tir_float(a, c->a->dtype, 0.0)};
  tk_block_parts_t p = {NULL, tj_tir_store(a, c->out, 1, iv, tj_tir_call(a, c->a->dtype, "tir.if_then_else", 3, args))};
  return p;
}

static inline tj_prim_func_t *tk_pad1d(tj_arena_t *a, tj_dtype_t dt, int64_t n, int64_t pad) {
  int64_t in_dim = n, out_dim = n + 2 * pad;
  tk_pad_ctx_t c = {tk_buffer(a, "A", dt, 1, &in_dim), tk_buffer(a, "Out", dt, 1, &out_dim), n, pad};
  const tj_tir_stmt_t *s = tk_grid_block(a, "pad", 1, &out_dim, "S", tk_pad_body, &c);
  const tj_buffer_t *bufs[2] = {c.a, c.out};
  return tk_func(a, 2, bufs, 1, &s, 0, NULL);
}

#endif
