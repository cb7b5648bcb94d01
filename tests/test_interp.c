/* ir/interp: the reference TIR interpreter on hand-built PrimFuncs (reductions, padding,
 * float16 rounding, integer division, intrinsics, lets, allocations, errors) and on the
 * seed's conv2d2/relu/layer_norm against the numpy reference fixtures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/text/parse.h"
#include "runtime/npy.h"
#include "runtime/npz.h"
#include "support/alloc.h"
#include "project.h"
#include "testutil.h"

/* ---- builders ---- */

static tj_arena_t *A;

static void setup(void) { A = tj_arena_create(); }
static void teardown(void) { tj_arena_free(A); }

#define I64(v) tj_tir_i64(A, (v))
#define BIN(k, x, y) tj_tir_binary(A, TJ_TIR_##k, (x), (y))

static const tj_buffer_t *buffer(const char *name, tj_dtype_t dt, int ndim, const int64_t *dims) {
  const tj_tir_expr_t *shape[8];
  for (int i = 0; i < ndim; i++) shape[i] = I64(dims[i]);
  return tj_buffer_new(A, name, dt, ndim, shape, NULL);
}

static const tj_buffer_t *buffer1(const char *name, tj_dtype_t dt, int64_t n) { return buffer(name, dt, 1, &n); }

static const tj_tir_expr_t *load1(const tj_buffer_t *b, const tj_tir_expr_t *i) { return tj_tir_load(A, b, 1, &i); }
static const tj_tir_stmt_t *store1(const tj_buffer_t *b, const tj_tir_expr_t *i, const tj_tir_expr_t *v) {
  return tj_tir_store(A, b, 1, &i, v);
}

/* Loops l_k over [0, ext[k]) around a block `name` whose iter vars `vars` (kinds "S"/"R")
 * are bound to the loops. */
static const tj_tir_stmt_t *grid_block(const char *name, int n, const int64_t *ext, const char *kinds,
                                       const tj_tir_expr_t *const *vars, const tj_tir_stmt_t *init,
                                       const tj_tir_stmt_t *body, int n_alloc, const tj_buffer_t *const *allocs) {
  tj_block_t *blk = tj_block_new(A, name);
  tj_iter_var_t *ivs = TJ_ARENA_ARRAY(A, tj_iter_var_t, n + 1);
  const tj_tir_expr_t *loops[8];
  for (int k = 0; k < n; k++) {
    ivs[k] = (tj_iter_var_t){vars[k], {I64(0), I64(ext[k])}, kinds[k] == 'R' ? TJ_ITER_REDUCE : TJ_ITER_SPATIAL};
    loops[k] = tj_tir_var(A, "l", TJ_I64);
  }
  blk->n_iter_vars = n;
  blk->iter_vars = ivs;
  blk->init = init;
  blk->body = body;
  blk->n_alloc_buffers = n_alloc;
  blk->alloc_buffers = n_alloc ? tj_arena_memdup(A, allocs, sizeof *allocs * (size_t)n_alloc) : NULL;
  const tj_tir_stmt_t *s = tj_tir_realize(A, n, loops, NULL, blk);
  for (int k = n - 1; k >= 0; k--) s = tj_tir_for(A, loops[k], I64(0), I64(ext[k]), TJ_FOR_SERIAL, s);
  return s;
}

static const tj_tir_stmt_t *root(const tj_tir_stmt_t *body, int n_alloc, const tj_buffer_t *const *allocs) {
  return grid_block("root", 0, NULL, "", NULL, NULL, body, n_alloc, allocs);
}

/* A PrimFunc over `bufs` (NULL entries are the scalar params taken from `scalars`). */
static const tj_prim_func_t *prim_func(int n, const tj_buffer_t *const *bufs, const tj_tir_expr_t *const *scalars,
                                       const tj_tir_stmt_t *body) {
  tj_prim_func_t *f = TJ_ARENA_NEW(A, tj_prim_func_t);
  const tj_tir_expr_t **params = TJ_ARENA_ARRAY(A, const tj_tir_expr_t *, n);
  const tj_buffer_t **map = TJ_ARENA_ARRAY(A, const tj_buffer_t *, n);
  for (int i = 0; i < n; i++) {
    map[i] = bufs[i];
    params[i] = bufs[i] ? tj_tir_var(A, bufs[i]->name, TJ_HANDLE) : scalars[i];
  }
  f->n_params = n;
  f->params = params;
  f->buffer_map = map;
  f->body = body;
  return f;
}

static const tj_tir_expr_t *f32(double v) { return tj_tir_float(A, TJ_F32, v); }

static uint16_t h(float f) { return tj_float_to_half(f); }
static float hf(uint16_t x) { return tj_half_to_float(x); }

static void expect_error(tj_status_t *s, tj_code_t code, const char *part) {
  ck_assert_msg(s != NULL, "expected an error containing '%s'", part);
  ck_assert_msg(tj_status_code(s) == code, "code %s: %s", tj_code_name(tj_status_code(s)), tj_status_text(s));
  ck_assert_msg(strstr(tj_status_text(s), part) != NULL, "'%s' not in '%s'", part, tj_status_text(s));
  tj_status_free(s);
}

/* ---- reductions ---- */

/* B[i] = sum_k A[i, k] with T.init, inside a root block. */
static const tj_prim_func_t *row_sum(tj_dtype_t dt, int64_t rows, int64_t cols) {
  int64_t dims[2] = {rows, cols};
  const tj_buffer_t *a = buffer("A", dt, 2, dims), *b = buffer1("B", dt, rows);
  const tj_tir_expr_t *vi = tj_tir_var(A, "vi", TJ_I64), *vk = tj_tir_var(A, "vk", TJ_I64);
  const tj_tir_expr_t *idx[2] = {vi, vk};
  const tj_tir_stmt_t *init = store1(b, vi, tj_tir_float(A, dt, 0));
  const tj_tir_stmt_t *body = store1(b, vi, BIN(ADD, load1(b, vi), tj_tir_load(A, a, 2, idx)));
  const tj_tir_expr_t *vars[2] = {vi, vk};
  const tj_tir_stmt_t *s = grid_block("B", 2, dims, "SR", vars, init, body, 0, NULL);
  const tj_buffer_t *params[2] = {a, b};
  return prim_func(2, params, NULL, root(s, 0, NULL));
}

START_TEST(reduction_runs_init_once_per_output) {
  const tj_prim_func_t *f = row_sum(TJ_F32, 3, 4);
  float a[12], b[3] = {100, 100, 100}; /* init must overwrite the garbage */
  for (int i = 0; i < 12; i++) a[i] = (float)i;
  void *bufs[2] = {a, b};
  TU_OK(tj_interp_run_prim_func(f, 2, bufs, NULL));
  ck_assert_float_eq(b[0], 0 + 1 + 2 + 3);
  ck_assert_float_eq(b[1], 4 + 5 + 6 + 7);
  ck_assert_float_eq(b[2], 8 + 9 + 10 + 11);
}
END_TEST

/* float16 accumulation rounds after every add: 2048 + 1 rounds back to 2048 (ties to
 * even), so four more ones change nothing, while float32 gets 2052. */
START_TEST(float16_rounds_after_every_operation) {
  const tj_prim_func_t *f = row_sum(TJ_F16, 1, 5);
  uint16_t a[5] = {h(2048), h(1), h(1), h(1), h(1)}, b[1];
  void *bufs[2] = {a, b};
  TU_OK(tj_interp_run_prim_func(f, 2, bufs, NULL));
  ck_assert_float_eq(hf(b[0]), 2048.0f);
  const tj_prim_func_t *g = row_sum(TJ_F32, 1, 5);
  float a32[5] = {2048, 1, 1, 1, 1}, b32[1];
  void *bufs32[2] = {a32, b32};
  TU_OK(tj_interp_run_prim_func(g, 2, bufs32, NULL));
  ck_assert_float_eq(b32[0], 2052.0f);
  /* 3 ones first, then 2048: 3 + 2048 = 2051 -> 2052 (even), + 1 = 2053 -> 2052. */
  uint16_t c[5] = {h(1), h(1), h(1), h(2048), h(1)};
  bufs[0] = c;
  TU_OK(tj_interp_run_prim_func(f, 2, bufs, NULL));
  ck_assert_float_eq(hf(b[0]), 2052.0f);
}
END_TEST

/* Products round too: a float16 multiply gives the exact product rounded once to half
 * (the product of two 11-bit significands is exact in float32), and casts round the same
 * way; overflow goes to inf and tiny results to zero. */
START_TEST(float16_multiply_and_cast_round) {
  const tj_buffer_t *x = buffer1("x", TJ_F16, 4), *y = buffer1("y", TJ_F16, 4), *out = buffer1("out", TJ_F32, 4);
  const tj_buffer_t *out16 = buffer1("out16", TJ_F16, 4);
  const tj_tir_expr_t *v = tj_tir_var(A, "v", TJ_I64);
  const tj_tir_expr_t *prod = BIN(MUL, load1(x, v), load1(y, v));
  /* out = float32(x*y) (rounded product); out16 = float16(float32(x) * float32(y)) (one rounding). */
  const tj_tir_stmt_t *stores[2] = {
      store1(out, v, tj_tir_cast(A, TJ_F32, prod)),
      store1(out16, v,
             tj_tir_cast(A, TJ_F16, BIN(MUL, tj_tir_cast(A, TJ_F32, load1(x, v)), tj_tir_cast(A, TJ_F32, load1(y, v))))),
  };
  int64_t n = 4;
  const tj_tir_expr_t *vars[1] = {v};
  const tj_tir_stmt_t *s = grid_block("mul", 1, &n, "S", vars, NULL, tj_tir_seq(A, 2, stores), 0, NULL);
  const tj_buffer_t *params[4] = {x, y, out, out16};
  const tj_prim_func_t *f = prim_func(4, params, NULL, root(s, 0, NULL));
  float xs[4] = {0.1f, 3.14159f, 1000.0f, 1e-4f}, ys[4] = {0.1f, 2.71828f, 70.0f, 1e-4f};
  uint16_t xh[4], yh[4], o16[4];
  float o[4];
  for (int i = 0; i < 4; i++) {
    xh[i] = h(xs[i]);
    yh[i] = h(ys[i]);
  }
  void *bufs[4] = {xh, yh, o, o16};
  TU_OK(tj_interp_run_prim_func(f, 4, bufs, NULL));
  for (int i = 0; i < 4; i++) {
    float exact = hf(xh[i]) * hf(yh[i]); /* exact in float32: 11-bit operands */
    ck_assert_float_eq(o[i], hf(h(exact)));
    ck_assert_uint_eq(o16[i], h(exact));
  }
  ck_assert_msg(isinf(o[2]), "1000 * 70 overflows float16 to inf, got %g", o[2]);
  ck_assert_float_eq(o[3], 0.0f); /* 1e-8 is below half the smallest subnormal (2.98e-8) */
}
END_TEST

/* ---- padding: if_then_else evaluates only the chosen branch ---- */

static const tj_prim_func_t *pad_func(bool use_select) {
  const tj_buffer_t *a = buffer1("data", TJ_F32, 4), *p = buffer1("pad_temp", TJ_F32, 6);
  const tj_tir_expr_t *v = tj_tir_var(A, "v_i1", TJ_I64);
  const tj_tir_expr_t *cond = BIN(AND, BIN(LE, I64(1), v), BIN(LT, v, I64(5)));
  const tj_tir_expr_t *in = load1(a, BIN(SUB, v, I64(1)));
  const tj_tir_expr_t *args[3] = {cond, in, f32(0)};
  const tj_tir_expr_t *value =
      use_select ? tj_tir_select(A, cond, in, f32(0)) : tj_tir_call(A, TJ_F32, "tir.if_then_else", 3, args);
  int64_t n = 6;
  const tj_tir_expr_t *vars[1] = {v};
  const tj_tir_stmt_t *s = grid_block("pad_temp", 1, &n, "S", vars, NULL, store1(p, v, value), 0, NULL);
  const tj_buffer_t *params[2] = {a, p};
  return prim_func(2, params, NULL, root(s, 0, NULL));
}

START_TEST(padding_reads_only_inside_the_input) {
  float a[4] = {1, 2, 3, 4}, p[6] = {9, 9, 9, 9, 9, 9};
  void *bufs[2] = {a, p};
  TU_OK(tj_interp_run_named("pad", pad_func(false), 2, bufs, NULL));
  float want[6] = {0, 1, 2, 3, 4, 0};
  for (int i = 0; i < 6; i++) ck_assert_float_eq(p[i], want[i]);
  /* T.Select evaluates both sides, so the same padding reads data[-1]: an error, not a crash. */
  expect_error(tj_interp_run_named("pad", pad_func(true), 2, bufs, NULL), TJ_ERR_INVALID_ARGUMENT,
               "pad: block 'pad_temp': index -1 is out of bounds for dimension 0 of buffer 'data' (extent 4)");
}
END_TEST

/* ---- integers, intrinsics, logic, lets ---- */

START_TEST(integer_floor_and_truncating_division) {
  const tj_buffer_t *a = buffer1("a", TJ_I64, 4), *b = buffer1("b", TJ_I64, 4), *out = buffer("out", TJ_I64, 2,
                                                                                               (int64_t[]){4, 4});
  const tj_tir_expr_t *v = tj_tir_var(A, "v", TJ_I64);
  tj_tir_expr_kind_t kinds[4] = {TJ_TIR_FLOOR_DIV, TJ_TIR_FLOOR_MOD, TJ_TIR_DIV, TJ_TIR_MOD};
  const tj_tir_stmt_t *stores[4];
  for (int k = 0; k < 4; k++) {
    const tj_tir_expr_t *idx[2] = {I64(k), v};
    stores[k] = tj_tir_store(A, out, 2, idx, tj_tir_binary(A, kinds[k], load1(a, v), load1(b, v)));
  }
  int64_t n = 4;
  const tj_tir_expr_t *vars[1] = {v};
  const tj_tir_stmt_t *s = grid_block("div", 1, &n, "S", vars, NULL, tj_tir_seq(A, 4, stores), 0, NULL);
  const tj_buffer_t *params[3] = {a, b, out};
  const tj_prim_func_t *f = prim_func(3, params, NULL, root(s, 0, NULL));
  int64_t av[4] = {-7, 7, -7, 7}, bv[4] = {3, -3, -3, 3}, o[16];
  void *bufs[3] = {av, bv, o};
  TU_OK(tj_interp_run_prim_func(f, 3, bufs, NULL));
  int64_t floordiv[4] = {-3, -3, 2, 2}, floormod[4] = {2, -2, -1, 1}, div[4] = {-2, -2, 2, 2}, mod[4] = {-1, 1, -1, 1};
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(o[0 * 4 + i], floordiv[i]);
    ck_assert_int_eq(o[1 * 4 + i], floormod[i]);
    ck_assert_int_eq(o[2 * 4 + i], div[i]);
    ck_assert_int_eq(o[3 * 4 + i], mod[i]);
  }
  /* Division by zero is defined as in compiled kernels (docs/numerics.md): every result 0. */
  bv[2] = 0;
  TU_OK(tj_interp_run_prim_func(f, 3, bufs, NULL));
  for (int k = 0; k < 4; k++) ck_assert_int_eq(o[k * 4 + 2], 0);
  ck_assert_int_eq(o[0 * 4 + 1], -3);
}
END_TEST

START_TEST(intrinsics_follow_libm_rounded_to_the_dtype) {
  static const char *ops[] = {"tir.exp", "tir.log", "tir.sqrt", "tir.rsqrt", "tir.tanh", "tir.sigmoid"};
  enum { NOPS = 6, N = 5 };
  const tj_buffer_t *x = buffer1("x", TJ_F32, N), *out = buffer("out", TJ_F32, 2, (int64_t[]){NOPS + 3, N});
  const tj_tir_expr_t *v = tj_tir_var(A, "v", TJ_I64);
  const tj_tir_stmt_t *stores[NOPS + 3];
  for (int k = 0; k < NOPS; k++) {
    const tj_tir_expr_t *arg = load1(x, v), *idx[2] = {I64(k), v};
    stores[k] = tj_tir_store(A, out, 2, idx, tj_tir_call(A, TJ_F32, ops[k], 1, &arg));
  }
  const tj_tir_expr_t *pargs[2] = {load1(x, v), f32(1.5)};
  const tj_tir_expr_t *i6[2] = {I64(NOPS), v}, *i7[2] = {I64(NOPS + 1), v}, *i8[2] = {I64(NOPS + 2), v};
  stores[NOPS] = tj_tir_store(A, out, 2, i6, tj_tir_call(A, TJ_F32, "tir.pow", 2, pargs));
  stores[NOPS + 1] = tj_tir_store(A, out, 2, i7, BIN(MAX, load1(x, v), f32(1.0)));
  stores[NOPS + 2] = tj_tir_store(A, out, 2, i8, BIN(MIN, load1(x, v), f32(1.0)));
  int64_t n = N;
  const tj_tir_expr_t *vars[1] = {v};
  const tj_tir_stmt_t *s = grid_block("math", 1, &n, "S", vars, NULL, tj_tir_seq(A, NOPS + 3, stores), 0, NULL);
  const tj_buffer_t *params[2] = {x, out};
  const tj_prim_func_t *f = prim_func(2, params, NULL, root(s, 0, NULL));
  float xs[N] = {0.25f, 0.5f, 1.0f, 2.0f, 7.5f}, o[(NOPS + 3) * N];
  void *bufs[2] = {xs, o};
  TU_OK(tj_interp_run_prim_func(f, 2, bufs, NULL));
  for (int i = 0; i < N; i++) {
    double xv = xs[i];
    double want[NOPS + 3] = {exp(xv), log(xv), sqrt(xv), 1.0 / (double)(float)sqrt(xv), tanh(xv), 1 / (1 + exp(-xv)),
                             pow(xv, 1.5), xv > 1 ? xv : 1, xv < 1 ? xv : 1};
    for (int k = 0; k < NOPS + 3; k++)
      ck_assert_msg(o[k * N + i] == (float)want[k], "op %d at x=%g: %.9g vs %.9g", k, xv, o[k * N + i], want[k]);
  }
}
END_TEST

START_TEST(logic_select_lets_and_scalar_params) {
  /* out[i] = let t = x[i] * 2 in select(t > 0 && !(t > 10), t, -1), for i < n (a scalar param). */
  const tj_buffer_t *x = buffer1("x", TJ_I32, 8), *out = buffer1("out", TJ_I32, 8);
  const tj_tir_expr_t *n = tj_tir_var(A, "n", TJ_I64), *i = tj_tir_var(A, "i", TJ_I64),
                      *t = tj_tir_var(A, "t", TJ_I32);
  const tj_tir_expr_t *two = tj_tir_int(A, TJ_I32, 2), *zero = tj_tir_int(A, TJ_I32, 0),
                      *ten = tj_tir_int(A, TJ_I32, 10), *minus1 = tj_tir_int(A, TJ_I32, -1);
  const tj_tir_expr_t *cond = BIN(AND, BIN(GT, t, zero), tj_tir_not(A, BIN(GT, t, ten)));
  const tj_tir_expr_t *value = tj_tir_let(A, t, BIN(MUL, load1(x, i), two), tj_tir_select(A, cond, t, minus1));
  /* Plain loops and a LetStmt, no blocks: the lowered form runs too. */
  const tj_tir_expr_t *j = tj_tir_var(A, "j", TJ_I64);
  const tj_tir_stmt_t *body = tj_tir_let_stmt(A, j, BIN(ADD, i, I64(0)), store1(out, j, value));
  const tj_tir_stmt_t *loop = tj_tir_for(A, i, I64(0), n, TJ_FOR_SERIAL, body);
  const tj_buffer_t *params[3] = {x, out, NULL};
  const tj_tir_expr_t *scalars[3] = {NULL, NULL, n};
  const tj_prim_func_t *f = prim_func(3, params, scalars, loop);
  int32_t xs[8] = {-3, 0, 1, 5, 6, 2, 2, 2}, o[8] = {0};
  int64_t nval = 5;
  void *bufs[2] = {xs, o};
  TU_OK(tj_interp_run_prim_func(f, 3, bufs, &nval));
  int32_t want[8] = {-1, -1, 2, 10, -1, 0, 0, 0};
  for (int k = 0; k < 8; k++) ck_assert_int_eq(o[k], want[k]);
}
END_TEST

/* Two stages through a block-local alloc_buffer: tmp = x * 2 (int8 wraps), out = tmp + 1. */
START_TEST(alloc_buffers_are_block_local_and_wrap_integers) {
  tj_dtype_t i8 = tj_dtype_make(TJ_DT_INT, 8, 1);
  const tj_buffer_t *x = buffer1("x", i8, 4), *out = buffer1("out", i8, 4), *tmp = buffer1("tmp", i8, 4);
  const tj_tir_expr_t *v = tj_tir_var(A, "v", TJ_I64), *w = tj_tir_var(A, "w", TJ_I64);
  int64_t n = 4;
  const tj_tir_expr_t *vars1[1] = {v}, *vars2[1] = {w};
  const tj_tir_stmt_t *stages[2] = {
      grid_block("tmp", 1, &n, "S", vars1, NULL, store1(tmp, v, BIN(MUL, load1(x, v), tj_tir_int(A, i8, 2))), 0, NULL),
      grid_block("out", 1, &n, "S", vars2, NULL, store1(out, w, BIN(ADD, load1(tmp, w), tj_tir_int(A, i8, 1))), 0,
                 NULL),
  };
  const tj_buffer_t *allocs[1] = {tmp};
  const tj_buffer_t *params[2] = {x, out};
  const tj_prim_func_t *f = prim_func(2, params, NULL, root(tj_tir_seq(A, 2, stages), 1, allocs));
  int8_t xs[4] = {1, -3, 64, 100}, o[4];
  void *bufs[2] = {xs, o};
  TU_OK(tj_interp_run_prim_func(f, 2, bufs, NULL));
  int8_t want[4] = {3, -5, -127, -55}; /* 128 wraps to -128, 200 to -56 */
  for (int k = 0; k < 4; k++) ck_assert_int_eq(o[k], want[k]);
  /* Using tmp outside the root block that allocates it is an error. */
  const tj_tir_stmt_t *outside[2] = {root(tj_tir_seq(A, 0, NULL), 1, allocs), stages[1]};
  const tj_prim_func_t *g = prim_func(2, params, NULL, tj_tir_seq(A, 2, outside));
  expect_error(tj_interp_run_prim_func(g, 2, bufs, NULL), TJ_ERR_INVALID_ARGUMENT,
               "block 'out': buffer 'tmp' is used outside the scope that allocates it");
}
END_TEST

/* A block-level match_buffer views a 2x2 region of a 4x4 buffer with the source's strides. */
START_TEST(match_buffer_views_a_region) {
  int64_t dims[2] = {4, 4}, sub_dims[2] = {2, 2};
  const tj_buffer_t *x = buffer("x", TJ_F32, 2, dims), *sub = buffer("sub", TJ_F32, 2, sub_dims);
  const tj_tir_expr_t *i = tj_tir_var(A, "i", TJ_I64), *j = tj_tir_var(A, "j", TJ_I64);
  const tj_tir_expr_t *idx[2] = {i, j};
  const tj_tir_stmt_t *inner = tj_tir_store(A, sub, 2, idx, BIN(ADD, tj_tir_cast(A, TJ_F32, BIN(MUL, i, I64(2))),
                                                                tj_tir_cast(A, TJ_F32, BIN(ADD, j, I64(1)))));
  inner = tj_tir_for(A, j, I64(0), I64(2), TJ_FOR_SERIAL, inner);
  inner = tj_tir_for(A, i, I64(0), I64(2), TJ_FOR_SERIAL, inner);
  tj_block_t *blk = tj_block_new(A, "tile");
  tj_range_t *ranges = TJ_ARENA_ARRAY(A, tj_range_t, 2);
  ranges[0] = (tj_range_t){I64(1), I64(2)};
  ranges[1] = (tj_range_t){I64(1), I64(2)};
  tj_match_buffer_t *m = TJ_ARENA_NEW(A, tj_match_buffer_t);
  *m = (tj_match_buffer_t){sub, {x, 2, ranges}};
  blk->n_match_buffers = 1;
  blk->match_buffers = m;
  blk->body = inner;
  const tj_buffer_t *params[1] = {x};
  const tj_prim_func_t *f = prim_func(1, params, NULL, root(tj_tir_realize(A, 0, NULL, NULL, blk), 0, NULL));
  float xs[16] = {0};
  void *bufs[1] = {xs};
  TU_OK(tj_interp_run_prim_func(f, 1, bufs, NULL));
  float want[16] = {0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0};
  for (int k = 0; k < 16; k++) ck_assert_float_eq(xs[k], want[k]);
}
END_TEST

/* ---- errors ---- */

START_TEST(errors_name_function_and_block) {
  const tj_buffer_t *x = buffer1("x", TJ_F32, 4);
  const tj_tir_expr_t *v = tj_tir_var(A, "v_i", TJ_I64);
  const tj_tir_expr_t *arg = load1(x, v);
  int64_t n = 4;
  const tj_tir_expr_t *vars[1] = {v};
  const tj_tir_stmt_t *s =
      grid_block("compute", 1, &n, "S", vars, NULL, store1(x, v, tj_tir_call(A, TJ_F32, "tir.frobnicate", 1, &arg)), 0,
                 NULL);
  const tj_buffer_t *params[1] = {x};
  const tj_prim_func_t *f = prim_func(1, params, NULL, root(s, 0, NULL));
  float xs[4] = {0};
  void *bufs[1] = {xs};
  expect_error(tj_interp_run_named("fused_relu", f, 1, bufs, NULL), TJ_ERR_UNSUPPORTED,
               "fused_relu: block 'compute': unknown intrinsic 'tir.frobnicate'");
  /* Out of bounds store: the loop runs to 5 over a 4-element buffer. */
  n = 5;
  const tj_tir_stmt_t *s2 = grid_block("compute", 1, &n, "S", vars, NULL, store1(x, v, f32(1)), 0, NULL);
  /* The iter var domain says [0, 5): the store at 4 is out of bounds of x. */
  expect_error(tj_interp_run_named("f", prim_func(1, params, NULL, root(s2, 0, NULL)), 1, bufs, NULL),
               TJ_ERR_INVALID_ARGUMENT, "f: block 'compute': index 4 is out of bounds for dimension 0 of buffer 'x' (extent 4)");
  ck_assert_float_eq(xs[3], 1.0f); /* earlier iterations ran */
  /* Iter value outside its domain. */
  tj_block_t *blk = tj_block_new(A, "b");
  tj_iter_var_t *iv = TJ_ARENA_NEW(A, tj_iter_var_t);
  *iv = (tj_iter_var_t){v, {I64(0), I64(2)}, TJ_ITER_SPATIAL};
  blk->n_iter_vars = 1;
  blk->iter_vars = iv;
  blk->body = store1(x, v, f32(2));
  const tj_tir_expr_t *three = I64(3);
  const tj_tir_stmt_t *r = tj_tir_realize(A, 1, &three, NULL, blk);
  expect_error(tj_interp_run_named("f", prim_func(1, params, NULL, r), 1, bufs, NULL), TJ_ERR_INVALID_ARGUMENT,
               "f: block 'b': iter var 'v_i' = 3 is outside its domain [0, 2)");
  /* Unbound variable, wrong argument count, vector types. */
  const tj_tir_expr_t *ghost = tj_tir_var(A, "ghost", TJ_I64);
  expect_error(tj_interp_run_named("f", prim_func(1, params, NULL, store1(x, ghost, f32(0))), 1, bufs, NULL),
               TJ_ERR_INVALID_ARGUMENT, "f: variable 'ghost' is used where it has no value");
  expect_error(tj_interp_run_named("f", f, 2, bufs, NULL), TJ_ERR_INVALID_ARGUMENT,
               "f: takes 1 arguments (1 buffers, 0 scalars), got 2");
  const tj_tir_expr_t *ramp = tj_tir_ramp(A, I64(0), I64(1), 4);
  const tj_tir_stmt_t *vec = tj_tir_store(A, x, 1, &ramp, tj_tir_broadcast(A, f32(1), 4));
  expect_error(tj_interp_run_named("f", prim_func(1, params, NULL, vec), 1, bufs, NULL), TJ_ERR_UNSUPPORTED,
               "scalar TIR only");
  const tj_tir_expr_t *idx2[2] = {I64(0), I64(0)};
  expect_error(tj_interp_run_named("f", prim_func(1, params, NULL, tj_tir_store(A, x, 2, idx2, f32(0))), 1, bufs, NULL),
               TJ_ERR_INVALID_ARGUMENT, "buffer 'x' has 1 dimension but is indexed with 2");
}
END_TEST

START_TEST(allocation_failures_are_clean) {
  const tj_prim_func_t *f = row_sum(TJ_F32, 3, 4);
  float a[12] = {0}, b[3];
  void *bufs[2] = {a, b};
  for (long n = 0; n < 6; n++) {
    tj_alloc_fail_after(n);
    tj_status_t *s = tj_interp_run_prim_func(f, 2, bufs, NULL);
    tj_alloc_fail_reset();
    if (s) {
      ck_assert_int_eq(tj_status_code(s), TJ_ERR_OUT_OF_MEMORY);
      tj_status_free(s);
    }
  }
}
END_TEST

/* ---- the seed's PrimFuncs against numpy ---- */

typedef struct seed {
  tj_module_t *module;
  tj_tensor_t *data;
  tj_npz_t *params;
} seed_t;

/* Loads the seed module (examples/seed/model.rx) and its inputs. */
static void load_seed(seed_t *s) {
  TU_OK(tj_parse_file(A, tu_project_path(TU_SEED_MODEL), &s->module));
  TU_OK(tj_npy_load(tu_project_path("examples/seed/data.npy"), &s->data));
  TU_OK(tj_npz_load(tu_project_path("examples/seed/params.npz"), &s->params));
}

static tj_tensor_t *new_nhwc(void) {
  int64_t shape[4] = {16, 32, 32, 16};
  tj_tensor_t *t;
  TU_OK(tj_tensor_new(TJ_F16, 4, shape, &t));
  return t;
}

static void run(const seed_t *s, const char *name, int n, tj_tensor_t *const *ts) {
  void *bufs[4];
  for (int i = 0; i < n; i++) bufs[i] = ts[i]->data;
  TU_OK(tj_interp_run_named(name, tj_module_find_prim(s->module, name), n, bufs, NULL));
}

static const tj_tensor_t *param(const seed_t *s, const char *name) {
  const tj_tensor_t *t;
  TU_OK(tj_npz_get(s->params, name, &t));
  return t;
}

/* Compares with a fixture: counts elements that differ at all and beyond the float16
 * tolerance (atol 5e-2 + rtol 1e-2). */
static void compare_fixture(const tj_tensor_t *got, const char *fixture, int64_t *out_differ, double *out_max) {
  char path[2048];
  snprintf(path, sizeof path, "%s/tests/fixtures/%s", tu_source_dir(), fixture);
  tj_tensor_t *want;
  TU_OK(tj_npy_load(path, &want));
  ck_assert_int_eq(tj_tensor_numel(want), tj_tensor_numel(got));
  int64_t differ = 0, beyond = 0;
  double max = 0;
  for (int64_t i = 0; i < tj_tensor_numel(want); i++) {
    double g = tj_tensor_get_f64(got, i), w = tj_tensor_get_f64(want, i), d = fabs(g - w);
    differ += g != w;
    beyond += !(d <= 5e-2 + 1e-2 * fabs(w));
    if (d > max) max = d;
  }
  tj_tensor_free(want);
  ck_assert_msg(beyond == 0, "%s: %lld elements beyond tolerance (max abs diff %g)", fixture, (long long)beyond, max);
  *out_differ = differ;
  *out_max = max;
}

/* conv2d2 then relu keep TVM's order (ry, rx, rc) and round every operation, exactly as
 * the numpy float16-accumulation reference does: bit-exact. */
START_TEST(seed_conv2d2_relu_match_numpy_bit_exactly) {
  seed_t s = {0};
  load_seed(&s);
  tj_tensor_t *lv = new_nhwc(), *conv1 = new_nhwc();
  tj_tensor_t *args1[3] = {s.data, (tj_tensor_t *)param(&s, "weight1"), lv};
  run(&s, "conv2d2", 3, args1);
  tj_tensor_t *args2[2] = {lv, conv1};
  run(&s, "relu", 2, args2);
  int64_t differ;
  double max;
  compare_fixture(conv1, "conv1_f16_acc16.npy", &differ, &max);
  ck_assert_msg(differ == 0, "%lld elements differ from numpy (max %g)", (long long)differ, max);
  tj_tensor_free(lv);
  tj_tensor_free(conv1);
  tj_tensor_free(s.data);
  tj_npz_free(s.params);
}
END_TEST

START_TEST(seed_layer_norm_matches_numpy_bit_exactly) {
  seed_t s = {0};
  load_seed(&s);
  char path[2048];
  snprintf(path, sizeof path, "%s/tests/fixtures/conv1_f16_acc16.npy", tu_source_dir());
  tj_tensor_t *conv1, *out = new_nhwc();
  TU_OK(tj_npy_load(path, &conv1));
  tj_tensor_t *args[4] = {conv1, (tj_tensor_t *)param(&s, "gamma"), (tj_tensor_t *)param(&s, "beta"), out};
  run(&s, "layer_norm", 4, args);
  int64_t differ;
  double max;
  compare_fixture(out, "ln_conv1_f16.npy", &differ, &max);
  ck_assert_msg(differ == 0, "%lld elements differ from numpy (max %g)", (long long)differ, max);
  tj_tensor_free(conv1);
  tj_tensor_free(out);
  tj_tensor_free(s.data);
  tj_npz_free(s.params);
}
END_TEST

/* The whole network, call by call as main does (three convolutions: about a minute of
 * CPU, so only with TVMJIT_SLOW_TESTS=1; conv2d2, relu and layer_norm are each checked
 * bit-exactly above). */
START_TEST(seed_network_matches_numpy) {
  const char *slow = getenv("TVMJIT_SLOW_TESTS");
  if (!slow || strcmp(slow, "1") != 0) {
    fprintf(stderr, "test_interp: the full seed network runs only with TVMJIT_SLOW_TESTS=1\n");
    return;
  }
  seed_t s = {0};
  load_seed(&s);
  tj_tensor_t *a = new_nhwc(), *b = new_nhwc();
  tj_tensor_t *w1 = (tj_tensor_t *)param(&s, "weight1"), *w2 = (tj_tensor_t *)param(&s, "weight2"),
              *w3 = (tj_tensor_t *)param(&s, "weight3"), *gamma = (tj_tensor_t *)param(&s, "gamma"),
              *beta = (tj_tensor_t *)param(&s, "beta");
  run(&s, "conv2d2", 3, (tj_tensor_t *[]){s.data, w1, a});
  run(&s, "relu", 2, (tj_tensor_t *[]){a, b});
  run(&s, "conv2d2", 3, (tj_tensor_t *[]){b, w2, a});
  run(&s, "relu", 2, (tj_tensor_t *[]){a, b});
  run(&s, "layer_norm", 4, (tj_tensor_t *[]){b, gamma, beta, a});
  run(&s, "conv2d2", 3, (tj_tensor_t *[]){a, w3, b});
  run(&s, "relu", 2, (tj_tensor_t *[]){b, a});
  int64_t differ;
  double max;
  compare_fixture(a, "y_f16_acc16.npy", &differ, &max);
  fprintf(stderr, "test_interp: seed network vs y_f16_acc16.npy: %lld of %d elements differ, max abs diff %g\n",
          (long long)differ, 16 * 32 * 32 * 16, max);
  /* The reference computes 1/sqrt as numpy does; the TIR's rsqrt matches it step by step. */
  ck_assert_msg(differ == 0, "%lld elements differ (max %g)", (long long)differ, max);
  compare_fixture(a, "y_f16_acc32.npy", &differ, &max);
  tj_tensor_free(a);
  tj_tensor_free(b);
  tj_tensor_free(s.data);
  tj_npz_free(s.params);
}
END_TEST

int main(void) {
  Suite *s = suite_create("interp");
  TCase *tc = tcase_create("interp");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, reduction_runs_init_once_per_output);
  tcase_add_test(tc, float16_rounds_after_every_operation);
  tcase_add_test(tc, float16_multiply_and_cast_round);
  tcase_add_test(tc, padding_reads_only_inside_the_input);
  tcase_add_test(tc, integer_floor_and_truncating_division);
  tcase_add_test(tc, intrinsics_follow_libm_rounded_to_the_dtype);
  tcase_add_test(tc, logic_select_lets_and_scalar_params);
  tcase_add_test(tc, alloc_buffers_are_block_local_and_wrap_integers);
  tcase_add_test(tc, match_buffer_views_a_region);
  tcase_add_test(tc, errors_name_function_and_block);
  tcase_add_test(tc, allocation_failures_are_clean);
  tcase_add_test(tc, seed_conv2d2_relu_match_numpy_bit_exactly);
  tcase_add_test(tc, seed_layer_norm_matches_numpy_bit_exactly);
  tcase_add_test(tc, seed_network_matches_numpy);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
