/* bfloat16 in compiled kernels (jit/codegen_bf16.c) and in the interpreter:
 *  - float32 -> bfloat16 casts, 16-lane vectors and scalars, against an independent
 *    round-to-nearest-even reference (the two neighbouring bfloat16 values compared in
 *    double, ties to the even one; IEEE overflow to infinity) over edge values (ties,
 *    the largest finite values, subnormals, NaNs) and a sweep of float32 bit patterns;
 *  - bfloat16 -> float32 of all 65536 patterns: exact (shift left 16);
 *  - bfloat16 arithmetic (one float32 op, then one rounding) against the same reference;
 *  - every kernel bit for bit against the interpreter, and the vector kernels stay
 *    <16 x i16> loads and stores in LLVM's IR after O2 (no per-lane libcalls). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/text/parse.h"
#include "jit/jit.h"
#include "runtime/kernel.h"
#include "support/alloc.h"
#include "support/dtype.h"
#include "testutil.h"
#include "transforms/tir/lower.h"

#define N 65536

static const char *k_model =
    "from tvm.script import ir as I\n"
    "from tvm.script import tir as T\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func\n"
    "    def narrow_vec(x: T.Buffer((65536,), \"float32\"), y: T.Buffer((65536,), \"bfloat16\")):\n"
    "        for o in range(4096):\n"
    "            for i in T.vectorized(16):\n"
    "                y[o * 16 + i] = T.Cast(\"bfloat16\", x[o * 16 + i])\n"
    "    @T.prim_func\n"
    "    def narrow_scalar(x: T.Buffer((65536,), \"float32\"), y: T.Buffer((65536,), \"bfloat16\")):\n"
    "        for i in range(65536):\n"
    "            y[i] = T.Cast(\"bfloat16\", x[i])\n"
    "    @T.prim_func\n"
    "    def widen_vec(x: T.Buffer((65536,), \"bfloat16\"), y: T.Buffer((65536,), \"float32\")):\n"
    "        for o in range(4096):\n"
    "            for i in T.vectorized(16):\n"
    "                y[o * 16 + i] = T.Cast(\"float32\", x[o * 16 + i])\n"
    "    @T.prim_func\n"
    "    def mul_add_vec(a: T.Buffer((65536,), \"bfloat16\"), b: T.Buffer((65536,), \"bfloat16\"),\n"
    "                    y: T.Buffer((65536,), \"bfloat16\")):\n"
    "        for o in range(4096):\n"
    "            for i in T.vectorized(16):\n"
    "                y[o * 16 + i] = a[o * 16 + i] * b[o * 16 + i] + a[o * 16 + i]\n"
    "    @T.prim_func\n"
    "    def math_scalar(a: T.Buffer((65536,), \"bfloat16\"), b: T.Buffer((65536,), \"bfloat16\"),\n"
    "                    y: T.Buffer((65536,), \"bfloat16\")):\n"
    "        for i in range(65536):\n"
    "            y[i] = T.max(T.sqrt(T.fabs(a[i])) / b[i], T.bfloat16(-0.5)) - T.exp(T.min(b[i], a[i]))\n";

/* The bfloat16 pattern's value in double; 0x7f80 / 0xff80 stand for +-2^128, the value
 * IEEE rounding compares against before overflowing to infinity. */
static double bf16_value(uint16_t b) {
  if ((b & 0x7fff) == 0x7f80) return (b & 0x8000) ? -ldexp(1.0, 128) : ldexp(1.0, 128);
  return (double)tu_bits_float((uint32_t)b << 16);
}

/* Independent round-to-nearest-even of a finite float32 to bfloat16: of the two
 * neighbours (truncated and next away from zero), the nearer; a tie takes the even one. */
static uint16_t reference_round(float f) {
  uint32_t u = tu_float_bits(f);
  uint16_t lo = (uint16_t)(u >> 16), hi = (uint16_t)(lo + 1);
  if ((u & 0xffff) == 0) return lo;
  double dlo = fabs((double)f - bf16_value(lo)), dhi = fabs(bf16_value(hi) - (double)f);
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  return (lo & 1) ? hi : lo;
}

static bool is_quiet_nan_of(uint16_t got, float f) {
  return (got & 0x7fc0) == 0x7fc0 && (got & 0x8000) == ((tu_float_bits(f) >> 16) & 0x8000);
}

static const tj_prim_func_t *find(tj_module_t *m, const char *name) {
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i].is_prim && strcmp(m->funcs[i].name, name) == 0) return m->funcs[i].prim;
  ck_abort_msg("no function %s", name);
  return NULL;
}

static tj_module_t *load(tj_arena_t *a) {
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(a, "bf16.rx", k_model, strlen(k_model), &m));
  return m;
}

/* Runs `name` JIT-compiled on bufs, and in the interpreter on copies (bytes each);
 * the last buffer is the output and the two must agree bit for bit. */
/* Equal bits, or (float32 outputs) both NaN: the interpreter holds values as doubles, and
 * float -> double conversion makes a signalling NaN quiet. */
static bool same_output(const void *a, const void *b, size_t bytes, bool float32) {
  if (!float32) return memcmp(a, b, bytes) == 0;
  const float *x = a, *y = b;
  for (size_t i = 0; i < bytes / 4; i++)
    if (tu_float_bits(x[i]) != tu_float_bits(y[i]) && !(isnan(x[i]) && isnan(y[i]))) return false;
  return true;
}

static void run_both(const char *name, int n, void **bufs, const size_t *bytes) {
  tj_arena_t *a = tj_arena_create();
  const tj_prim_func_t *f = find(load(a), name);
  void *copies[4];
  for (int i = 0; i < n; i++) {
    copies[i] = tj_aligned_alloc(bytes[i]);
    memcpy(copies[i], bufs[i], bytes[i]);
  }
  TU_OK(tj_interp_run_named(name, f, n, copies, NULL));
  tj_jit_t *jit = NULL;
  TU_OK(tj_jit_create(&jit));
  tj_jit_kernel_t jk;
  tj_jit_options_t opts = {.opt_level = 2, .relaxed_float = false};
  TU_OK(tj_jit_compile_prim_func(jit, f, name, &opts, &jk));
  tj_kernel_t k;
  void *argv[8];
  TU_OK(tj_kernel_init(&k, name, jk.fn, jk.n_buffers, 0));
  tj_kernel_call(&k, bufs, NULL, argv);
  tj_kernel_release(&k);
  bool float32 = f->buffer_map[n - 1]->dtype.code == TJ_DT_FLOAT;
  ck_assert_msg(same_output(copies[n - 1], bufs[n - 1], bytes[n - 1], float32), "%s: JIT and interpreter differ", name);
  for (int i = 0; i < n; i++) tj_aligned_free(copies[i]);
  tj_jit_free(jit);
  tj_arena_free(a);
}

/* Edge values first, then every 65537th float32 bit pattern (all exponents, both signs). */
static void narrow_inputs(float *x) {
  static const uint32_t edges[] = {
      0x3f808000, /* tie between 0x3f80 and 0x3f81: even 0x3f80 */
      0x3f818000, /* tie: even 0x3f82 */
      0x3f808001, 0x3f807fff, 0xbf818000, 0x00008000, 0x00018000, 0x00000001, 0x80000001,
      0x7f7f0000, 0x7f7f7fff, /* largest finite, and just below its half ulp */
      0x7f7f8000, 0x7f7fffff, 0xff7f8000, /* tie and above at the top: IEEE overflow to inf */
      0x7f800000, 0xff800000, 0x00000000, 0x80000000,
      0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff, 0x7fbfffff /* NaNs, quiet and signalling */
  };
  size_t ne = sizeof edges / sizeof edges[0];
  for (size_t i = 0; i < ne; i++) x[i] = tu_bits_float(edges[i]);
  uint32_t u = 12345;
  for (size_t i = ne; i < N; i++, u += 65537u) x[i] = tu_bits_float(u);
}

static void check_narrowed(const char *name, const float *x, const uint16_t *y) {
  for (int i = 0; i < N; i++) {
    if (isnan(x[i])) {
      ck_assert_msg(is_quiet_nan_of(y[i], x[i]), "%s: NaN %08x became %04x", name, tu_float_bits(x[i]), y[i]);
      continue;
    }
    uint16_t want = reference_round(x[i]);
    ck_assert_msg(y[i] == want, "%s: %08x (%a) -> %04x, want %04x", name, tu_float_bits(x[i]), (double)x[i], y[i], want);
  }
}

START_TEST(narrowing_rounds_to_nearest_even) {
  const char *names[] = {"narrow_vec", "narrow_scalar"};
  for (int k = 0; k < 2; k++) {
    float *x = tj_aligned_alloc(N * sizeof(float));
    uint16_t *y = tj_aligned_alloc(N * sizeof(uint16_t));
    narrow_inputs(x);
    void *bufs[2] = {x, y};
    size_t bytes[2] = {N * sizeof(float), N * sizeof(uint16_t)};
    run_both(names[k], 2, bufs, bytes);
    check_narrowed(names[k], x, y);
    tj_aligned_free(x);
    tj_aligned_free(y);
  }
}
END_TEST

START_TEST(widening_is_exact_for_every_pattern) {
  uint16_t *x = tj_aligned_alloc(N * sizeof(uint16_t));
  float *y = tj_aligned_alloc(N * sizeof(float));
  for (int i = 0; i < N; i++) x[i] = (uint16_t)i;
  void *bufs[2] = {x, y};
  size_t bytes[2] = {N * sizeof(uint16_t), N * sizeof(float)};
  run_both("widen_vec", 2, bufs, bytes);
  for (int i = 0; i < N; i++)
    if (!isnan(y[i]) || (i & 0x7fc0) == 0x7fc0) /* the interpreter's double quiets signalling NaNs */
      ck_assert_msg(tu_float_bits(y[i]) == (uint32_t)i << 16, "%04x widened to %08x", i, tu_float_bits(y[i]));
  tj_aligned_free(x);
  tj_aligned_free(y);
}
END_TEST

/* Random finite bfloat16 values in [-8, 8] and a few specials. */
static void arith_inputs(uint16_t *a, uint16_t *b) {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < N; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    a[i] = (uint16_t)(0x3800 + (s & 0x0fff)) | (uint16_t)((s >> 20) & 0x8000);
    b[i] = (uint16_t)(0x3800 + ((s >> 32) & 0x0fff)) | (uint16_t)((s >> 40) & 0x8000);
  }
  const uint16_t specials[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x7f7f, 0x3f80};
  for (int i = 0; i < 8; i++) a[i] = specials[i], b[i + 8] = specials[i];
}

START_TEST(arithmetic_is_one_float32_op_then_one_rounding) {
  uint16_t *a = tj_aligned_alloc(N * 2), *b = tj_aligned_alloc(N * 2), *y = tj_aligned_alloc(N * 2);
  arith_inputs(a, b);
  void *bufs[3] = {a, b, y};
  size_t bytes[3] = {N * 2, N * 2, N * 2};
  run_both("mul_add_vec", 3, bufs, bytes);
  for (int i = 0; i < N; i++) {
    float fa = tu_bits_float((uint32_t)a[i] << 16), fb = tu_bits_float((uint32_t)b[i] << 16);
    float prod = fa * fb; /* two 8-bit significands: exact in float32 unless it overflows */
    float p = isnan(prod) ? prod : tu_bits_float((uint32_t)reference_round(prod) << 16);
    float sum = p + fa;
    if (isnan(sum)) {
      ck_assert_msg((y[i] & 0x7fc0) == 0x7fc0, "%04x * %04x + %04x = %04x, want NaN", a[i], b[i], a[i], y[i]);
      continue;
    }
    uint16_t want = isinf(sum) ? (uint16_t)(tu_float_bits(sum) >> 16) : reference_round(sum);
    ck_assert_msg(y[i] == want, "%04x * %04x + %04x = %04x, want %04x", a[i], b[i], a[i], y[i], want);
  }
  /* math through float32 (sqrt, exp, min, max, a constant): the interpreter, bit for bit */
  run_both("math_scalar", 3, bufs, bytes);
  tj_aligned_free(a);
  tj_aligned_free(b);
  tj_aligned_free(y);
}
END_TEST

START_TEST(vector_kernels_stay_vectors_in_llvm_ir) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = load(a);
  const char *names[] = {"narrow_vec", "widen_vec", "mul_add_vec"};
  /* LLVM splits 16 lanes into two 8-lane halves where it prefers 256-bit vectors */
  const char *want[] = {"x i16> %", "load <", "fmul <"};
  for (int i = 0; i < 3; i++) {
    const tj_prim_func_t *low = NULL;
    TU_OK(tj_tir_lower(a, find(m, names[i]), names[i], &low));
    char *ir = NULL;
    TU_OK(tj_jit_llvm_ir(low, names[i], 2, &ir));
    ck_assert_msg(strstr(ir, want[i]) && strstr(ir, "store <") && !strstr(ir, "store i16"), "%s: want %s in the IR",
                  names[i], want[i]);
    ck_assert_msg(!strstr(ir, "call float @") && !strstr(ir, "bfloat"), "%s: a libcall or bfloat type", names[i]);
    tj_free(ir);
  }
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("bf16");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, narrowing_rounds_to_nearest_even);
  tcase_add_test(tc, widening_is_exact_for_every_pattern);
  tcase_add_test(tc, arithmetic_is_one_float32_op_then_one_rounding);
  tcase_add_test(tc, vector_kernels_stay_vectors_in_llvm_ir);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
