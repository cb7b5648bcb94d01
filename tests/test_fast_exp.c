/* float32 exp in the default float mode (jit/codegen_exp.c): a 16-lane vector kernel and
 * a scalar one, JIT-compiled as the default mode compiles them, against libm's expf over
 * a sweep of float32 values (every 97th bit pattern in (-110, 90)) and the edge values:
 * within 2 ulp of expf; +-inf, NaN, overflow to inf, denormal and zero results exact
 * where expf's are. In strict mode exp stays libm's expf, bit for bit. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "ir/text/parse.h"
#include "jit/jit.h"
#include "runtime/kernel.h"
#include "support/alloc.h"
#include "testutil.h"

#define N 65536

static const char *k_model =
    "from tvm.script import ir as I\n"
    "from tvm.script import tir as T\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func\n"
    "    def exp_vec(x: T.Buffer((65536,), \"float32\"), y: T.Buffer((65536,), \"float32\")):\n"
    "        for o in range(4096):\n"
    "            for i in T.vectorized(16):\n"
    "                y[o * 16 + i] = T.exp(x[o * 16 + i])\n"
    "    @T.prim_func\n"
    "    def exp_scalar(x: T.Buffer((65536,), \"float32\"), y: T.Buffer((65536,), \"float32\")):\n"
    "        for i in range(65536):\n"
    "            y[i] = T.exp(x[i])\n";

static int32_t ordered(float f) {
  int32_t i;
  memcpy(&i, &f, sizeof i);
  return i < 0 ? INT32_MIN - i : i;
}

/* Distance in ulps between two finite floats (as ordered integers). */
static int64_t ulps(float a, float b) { return llabs((int64_t)ordered(a) - (int64_t)ordered(b)); }

/* Runs `name` from the model on x[0..N) into y. */
static void run(tj_jit_t *jit, const char *name, bool relaxed, const float *x, float *y) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(a, "fast_exp.rx", k_model, strlen(k_model), &m));
  const tj_prim_func_t *f = NULL;
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i].is_prim && strcmp(m->funcs[i].name, name) == 0) f = m->funcs[i].prim;
  ck_assert_ptr_nonnull(f);
  tj_jit_kernel_t jk;
  tj_jit_options_t opts = {.opt_level = 2, .relaxed_float = relaxed};
  TU_OK(tj_jit_compile_prim_func(jit, f, name, &opts, &jk));
  tj_kernel_t k;
  void *bufs[2] = {(void *)x, y}, *argv[4];
  TU_OK(tj_kernel_init(&k, name, jk.fn, jk.n_buffers, 0));
  tj_kernel_call(&k, bufs, NULL, argv);
  tj_kernel_release(&k);
  tj_arena_free(a);
}

/* The edge values first, then the sweep. */
static void inputs(float *x, int *n_edges) {
  const float edges[] = {INFINITY, -INFINITY, NAN, -NAN, 0.0f, -0.0f, 88.72283f, 88.72284f, 88.7229f, 89.0f, 100.0f,
                         1e30f, FLT_MAX, -87.33654f, -87.4f, -100.0f, -103.27893f, -103.97208f, -103.9721f, -104.0f,
                         -110.0f, -1e30f, -FLT_MAX, 1e-30f, -1e-30f, 1e-45f, 0.5f, -0.5f, 0.34657359f, -0.34657359f,
                         1.0f, -1.0f, 10.0f, -10.0f};
  int ne = (int)(sizeof edges / sizeof edges[0]);
  memcpy(x, edges, sizeof edges);
  /* Every 97th bit pattern of the positive and the negative floats in range. */
  uint32_t u = 0;
  for (int i = ne; i < N; i++) {
    float v;
    do {
      u += 97 * 1031;
      v = tu_bits_float(u);
    } while (!(v > -110.0f && v < 90.0f));
    x[i] = v;
  }
  *n_edges = ne;
}

static void check_close(const char *name, const float *x, const float *y) {
  int64_t worst = 0;
  for (int i = 0; i < N; i++) {
    float want = expf(x[i]);
    if (isnan(want)) {
      ck_assert_msg(isnan(y[i]), "%s: exp(%a) = %a, want NaN", name, x[i], y[i]);
      continue;
    }
    if (isinf(want) || want == 0.0f || isinf(y[i])) {
      ck_assert_msg(y[i] == want, "%s: exp(%a) = %a, want %a", name, x[i], y[i], want);
      continue;
    }
    int64_t d = ulps(y[i], want);
    ck_assert_msg(d <= 2, "%s: exp(%a) = %a, expf gives %a (%lld ulp)", name, x[i], y[i], want, (long long)d);
    if (d > worst) worst = d;
  }
  ck_assert_int_le(worst, 2);
}

START_TEST(fast_exp_within_two_ulp_of_expf) {
  tj_jit_t *jit = NULL;
  TU_OK(tj_jit_create(&jit));
  float *x = tj_aligned_alloc(N * sizeof(float)), *y = tj_aligned_alloc(N * sizeof(float));
  int ne;
  inputs(x, &ne);
  run(jit, "exp_vec", true, x, y);
  check_close("exp_vec", x, y);
  run(jit, "exp_scalar", true, x, y);
  check_close("exp_scalar", x, y);
  tj_aligned_free(x);
  tj_aligned_free(y);
  tj_jit_free(jit);
}
END_TEST

START_TEST(strict_exp_is_expf) {
  tj_jit_t *jit = NULL;
  TU_OK(tj_jit_create(&jit));
  float *x = tj_aligned_alloc(N * sizeof(float)), *y = tj_aligned_alloc(N * sizeof(float));
  int ne;
  inputs(x, &ne);
  run(jit, "exp_vec", false, x, y);
  for (int i = 0; i < N; i++) {
    float want = expf(x[i]);
    ck_assert_msg(memcmp(&want, &y[i], sizeof want) == 0 || (isnan(want) && isnan(y[i])),
                  "strict exp(%a) = %a, expf gives %a", x[i], y[i], want);
  }
  tj_aligned_free(x);
  tj_aligned_free(y);
  tj_jit_free(jit);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fast_exp");
  TCase *tc = tcase_create("exp");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, fast_exp_within_two_ulp_of_expf);
  tcase_add_test(tc, strict_exp_is_expf);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
