/* FoldConstant's direct evaluator (transforms/fold_direct.h) against the reference
 * interpreter: every PrimFunc LegalizeOps makes for a set of elementwise, broadcast and
 * data movement ops is run both ways on the same random inputs, special values included
 * (NaN with payloads, infinities, -0, denormals, the largest floats), and the outputs
 * must be the same bits. The functions it must leave to the interpreter (exp, a
 * reduction, float16 arithmetic) are named, so the test also checks the fast path is
 * taken where it should be. Then FoldConstant over a whole model both ways. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "api/driver.h"
#include "ir/interp.h"
#include "support/alloc.h"
#include "testutil.h"
#include "transforms/fold_direct.h"

static const char *model_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(a: R.Tensor((2, 3, 40), dtype=\"float32\"), b: R.Tensor((3, 1), dtype=\"float32\"),\n"
    "             c: R.Tensor((40,), dtype=\"float32\"), d: R.Tensor((2, 3, 40), dtype=\"float64\"),\n"
    "             h: R.Tensor((8, 6), dtype=\"float16\"), k: R.Tensor((4, 5), dtype=\"int64\"),\n"
    "             e: R.Tensor((70, 45), dtype=\"float32\")):\n"
    "        with R.dataflow():\n"
    "            v0 = R.add(a, b)\n"
    "            v1 = R.subtract(a, c)\n"
    "            v2 = R.multiply(b, a)\n"
    "            v3 = R.divide(a, c)\n"
    "            v4 = R.sqrt(a)\n"
    "            v5 = R.rsqrt(a)\n"
    "            v6 = R.maximum(a, b)\n"
    "            v7 = R.minimum(a, c)\n"
    "            v8 = R.clip(a, -1.0, 2.5)\n"
    "            v9 = R.add(a, R.const(1e-5, \"float32\"))\n"
    "            v10 = R.permute_dims(a, axes=[2, 0, 1])\n"
    "            v11 = R.reshape(a, R.shape([6, 40]))\n"
    "            v12 = R.expand_dims(c, axis=[0, 2])\n"
    "            v13 = R.broadcast_to(b, R.shape([2, 3, 40]))\n"
    "            v14 = R.astype(a, \"float64\")\n"
    "            v15 = R.astype(d, \"float32\")\n"
    "            v16 = R.multiply(d, d)\n"
    "            v17 = R.permute_dims(h, axes=[1, 0])\n"
    "            v18 = R.permute_dims(k, axes=[1, 0])\n"
    "            v19 = R.negative(a)\n"
    "            v20 = R.square(a)\n"
    "            v21 = R.exp(a)\n"
    "            v22 = R.sum(a, axis=[1])\n"
    "            v23 = R.add(h, h)\n"
    "            v24 = R.permute_dims(e, axes=[1, 0])\n"
    "            v25 = R.divide(R.multiply(R.subtract(c, R.const(0.5, \"float32\")), R.sqrt(c)), R.add(c, c))\n"
    "            gv = (v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15, v16, v17, v18, v19,\n"
    "                  v20, v21, v22, v23, v24, v25)\n"
    "            R.output(gv)\n"
    "        return gv\n";

/* The legalized functions the direct evaluator leaves to the interpreter. */
static const char *const not_direct[] = {"tir_exp", "sum", "add2"};

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t next_random(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

static const uint32_t f32_special[] = {
    0x7fc00000u, 0xffc12345u, 0x7f800001u /* signalling */, 0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u,
    0x00000001u, 0x807fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu, 0x3f800000u, 0xbf800000u, 0x00400000u};
static const uint64_t f64_special[] = {0x7ff8000000000000ull, 0xfff8000000000abcull, 0x7ff0000000000000ull,
                                       0xfff0000000000000ull, 0, 0x8000000000000000ull, 1, 0x000fffffffffffffull,
                                       0x7fefffffffffffffull, 0x3ff0000000000000ull};
static const uint16_t f16_special[] = {0x7e00, 0xfe01, 0x7c00, 0xfc00, 0x0000, 0x8000, 0x0001, 0x03ff, 0x7bff, 0x3c00};

/* One element of a random input: a special value one time in three, else a value
 * in [-4, 4) (float16: a random finite pattern; int64: random bits). */
static void random_element(tj_dtype_t dt, char *p) {
  uint64_t r = next_random();
  bool special = r % 3 == 0;
  r >>= 8;
  if (dt.code == TJ_DT_FLOAT && dt.bits == 32) {
    float f = special ? tu_bits_float(f32_special[r % (sizeof f32_special / 4)]) : (float)((double)(r % 8000000) / 1e6 - 4.0);
    memcpy(p, &f, 4);
  } else if (dt.code == TJ_DT_FLOAT && dt.bits == 64) {
    double f = (double)(r % 8000000) / 1e6 - 4.0;
    uint64_t bits = f64_special[r % (sizeof f64_special / 8)];
    if (special) memcpy(&f, &bits, 8);
    memcpy(p, &f, 8);
  } else if (dt.bits == 16) {
    uint16_t h = special ? f16_special[r % (sizeof f16_special / 2)] : (uint16_t)(r & 0x7bff);
    memcpy(p, &h, 2);
  } else {
    memcpy(p, &r, (size_t)dt.bits / 8);
  }
}

static size_t buffer_bytes(const tj_buffer_t *b) {
  size_t n = tj_dtype_bytes(b->dtype);
  for (int d = 0; d < b->ndim; d++) {
    int64_t e;
    ck_assert(tj_tir_is_const_int(b->shape[d], &e));
    n *= (size_t)e;
  }
  return n;
}

/* Same bits, except that two NaNs are the same whatever their payload and sign: which
 * operand's payload a binary operation keeps is IEEE's "one of them", and C compilers
 * (and LLVM) swap the operands of commutative operations freely, so neither the
 * interpreter nor a kernel promises one. Every other value, -0 and denormals included,
 * must match bit for bit. */
static bool same_element(tj_dtype_t dt, const unsigned char *x, const unsigned char *y) {
  size_t n = tj_dtype_bytes(dt);
  if (!memcmp(x, y, n)) return true;
  if (dt.code != TJ_DT_FLOAT) return false;
  if (n == 4) {
    float a, b;
    memcpy(&a, x, 4), memcpy(&b, y, 4);
    return isnan(a) && isnan(b);
  }
  if (n == 8) {
    double a, b;
    memcpy(&a, x, 8), memcpy(&b, y, 8);
    return isnan(a) && isnan(b);
  }
  return false;
}

static bool expected_direct(const char *name) {
  for (size_t i = 0; i < sizeof not_direct / sizeof not_direct[0]; i++)
    if (!strcmp(name, not_direct[i])) return false;
  return true;
}

static const tj_module_t *legalized(tj_arena_t *arena, const char *passes) {
  tj_module_t *parsed;
  TU_OK(tj_driver_parse(arena, "fold_direct.rx", model_text, strlen(model_text), &parsed));
  tj_driver_passes_t o = {.passes = passes};
  const tj_module_t *out;
  TU_OK(tj_driver_run_passes(arena, &o, parsed, &out, NULL));
  return out;
}

/* Runs f both ways on fresh random inputs; true when the direct evaluator took it. */
static bool same_bits_both_ways(const char *name, const tj_prim_func_t *f) {
  int n = f->n_params;
  void *bufs[8], *direct_bufs[8];
  ck_assert_int_le(n, 8);
  for (int i = 0; i < n; i++) {
    size_t bytes = buffer_bytes(f->buffer_map[i]);
    bufs[i] = tj_calloc(1, bytes + 1);
    if (i < n - 1)
      for (size_t j = 0; j < bytes; j += tj_dtype_bytes(f->buffer_map[i]->dtype))
        random_element(f->buffer_map[i]->dtype, (char *)bufs[i] + j);
    direct_bufs[i] = bufs[i];
  }
  size_t out_bytes = buffer_bytes(f->buffer_map[n - 1]);
  direct_bufs[n - 1] = tj_calloc(1, out_bytes + 1);
  TU_OK(tj_interp_run_named(name, f, n, bufs, NULL));
  bool taken = tj_fold_direct(f, n, direct_bufs);
  tj_dtype_t dt = f->buffer_map[n - 1]->dtype;
  size_t elem = tj_dtype_bytes(dt);
  const unsigned char *ref = bufs[n - 1], *got = direct_bufs[n - 1];
  for (size_t j = 0; taken && j < out_bytes; j += elem)
    ck_assert_msg(same_element(dt, ref + j, got + j), "%s: element %zu of the output differs", name, j / elem);
  for (int i = 0; i < n; i++) tj_free(bufs[i]);
  tj_free(direct_bufs[n - 1]);
  return taken;
}

START_TEST(each_direct_fold_gives_the_interpreters_bits) {
  tj_arena_t *arena = tj_arena_create();
  const tj_module_t *m = legalized(arena, "LegalizeOps");
  int n_prims = 0, n_direct = 0;
  for (int i = 0; i < m->n_funcs; i++) {
    if (!m->funcs[i].is_prim) continue;
    n_prims++;
    for (int round = 0; round < 4; round++) {
      bool taken = same_bits_both_ways(m->funcs[i].name, m->funcs[i].prim);
      ck_assert_msg(taken == expected_direct(m->funcs[i].name), "%s: direct evaluation %s", m->funcs[i].name,
                    taken ? "taken but not expected" : "expected but not taken");
      n_direct += taken && round == 0;
    }
  }
  ck_assert_int_eq(n_prims, 30);
  ck_assert_int_eq(n_direct, 27);
  tj_arena_free(arena);
}
END_TEST

/* The fallback's error names an index out of bounds: the direct evaluator declines a
 * function whose load is out of bounds instead of reading past the buffer. */
START_TEST(out_of_bounds_loads_are_left_to_the_interpreter) {
  static const char *text =
      "from tvm.script import tir as T\n"
      "@T.prim_func\n"
      "def shifted(A: T.Buffer((T.int64(8),), \"float32\"), B: T.Buffer((T.int64(8),), \"float32\")):\n"
      "    for i in range(T.int64(8)):\n"
      "        with T.block(\"B\"):\n"
      "            v = T.axis.remap(\"S\", [i])\n"
      "            B[v] = A[(v + T.int64(1)) % T.int64(9)] * T.float32(2)\n";
  tj_arena_t *arena = tj_arena_create();
  tj_module_t *m;
  TU_OK(tj_driver_parse(arena, "shifted.py", text, strlen(text), &m));
  const tj_prim_func_t *f = m->funcs[0].prim;
  float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8];
  void *bufs[] = {a, b};
  ck_assert(!tj_fold_direct(f, 2, bufs));
  tj_status_t *st = tj_interp_run_named("shifted", f, 2, bufs, NULL);
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(strstr(tj_status_text(st), "out of bounds"), "%s", tj_status_text(st));
  tj_status_free(st);
  tj_arena_free(arena);
}
END_TEST

/* A model's FoldConstant with and without the direct evaluator: the same constants. */
START_TEST(fold_constant_gives_the_same_constants_both_ways) {
  tj_arena_t *arena = tj_arena_create();
  tj_module_t *parsed;
  TU_OK(tj_driver_parse(arena, "fold_direct.rx", model_text, strlen(model_text), &parsed));
  const char *names[] = {"a", "b", "c", "d", "h", "k", "e"};
  const tj_rx_func_t *main_fn = tj_module_find_relax(parsed, "main");
  tj_bound_param_t params[7];
  for (int i = 0; i < 7; i++) {
    const tj_sinfo_t *si = main_fn->params[i]->sinfo;
    int ndim;
    int64_t *dims = tj_arena_alloc(arena, sizeof(int64_t) * 8);
    ck_assert(tj_sinfo_static_shape(si, &ndim, dims));
    size_t n = tj_dtype_bytes(si->tensor.dtype);
    for (int d = 0; d < ndim; d++) n *= (size_t)dims[d];
    char *data = tj_arena_alloc(arena, n);
    for (size_t j = 0; j < n; j += tj_dtype_bytes(si->tensor.dtype)) random_element(si->tensor.dtype, data + j);
    params[i] = (tj_bound_param_t){names[i], si->tensor.dtype, ndim, dims, data, n};
  }
  const tj_rx_expr_t *consts[2][32];
  int n_consts[2] = {0, 0};
  for (int way = 0; way < 2; way++) {
    tj_driver_passes_t o = {.passes = "LegalizeOps,FoldConstant", .n_bound = 7, .bound = params,
                            .fold_no_direct = way == 1};
    const tj_module_t *out;
    TU_OK(tj_driver_run_passes(arena, &o, parsed, &out, NULL));
    const tj_rx_expr_t *ret = tj_module_find_relax(out, "main")->body->seq.body;
    if (ret->kind == TJ_RX_VAR) { /* the tuple is bound: find its binding */
      const tj_rx_expr_t *body = tj_module_find_relax(out, "main")->body;
      for (int b = 0; b < body->seq.n_blocks; b++)
        for (int i = 0; i < body->seq.blocks[b].n_bindings; i++)
          if (body->seq.blocks[b].bindings[i].var == ret) ret = body->seq.blocks[b].bindings[i].value;
    }
    ck_assert_int_eq(ret->kind, TJ_RX_TUPLE);
    for (int i = 0; i < ret->tuple.n && i < 32; i++)
      if (ret->tuple.fields[i]->kind == TJ_RX_CONSTANT) consts[way][n_consts[way]++] = ret->tuple.fields[i];
  }
  ck_assert_int_eq(n_consts[0], n_consts[1]);
  ck_assert_int_ge(n_consts[0], 20);
  for (int i = 0; i < n_consts[0]; i++) {
    ck_assert_int_eq(consts[0][i]->constant.nbytes, consts[1][i]->constant.nbytes);
    tj_dtype_t dt = consts[0][i]->constant.dtype;
    const unsigned char *x = consts[0][i]->constant.data, *y = consts[1][i]->constant.data;
    for (size_t j = 0; j < consts[0][i]->constant.nbytes; j += tj_dtype_bytes(dt))
      ck_assert_msg(same_element(dt, x + j, y + j), "constant %d element %zu differs", i, j / tj_dtype_bytes(dt));
  }
  tj_arena_free(arena);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fold_direct");
  TCase *tc = tcase_create("fold_direct");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, each_direct_fold_gives_the_interpreters_bits);
  tcase_add_test(tc, out_of_bounds_loads_are_left_to_the_interpreter);
  tcase_add_test(tc, fold_constant_gives_the_same_constants_both_ways);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
