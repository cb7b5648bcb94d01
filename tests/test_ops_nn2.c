/* Operators of issue 16 added by the ops-nn2 branch, end to end (parse, default
 * pipeline, JIT, run through the public API), checked against reference loops written
 * here in double precision from the operators' definitions (numpy's for pad, tile,
 * repeat and flip; the RMSNorm formula y = x / sqrt(mean(x²) + eps) · w), plus the
 * inference errors. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "tvmjit.h"

#define TOL 1e-4

static const char *k_header =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n";

/* Loads `body` (from `def main` on), runs it on one or two float32 inputs, returns
 * the single output. */
static tvmjit_tensor_t *run_model(const char *body, int n_in, float *const *in, const int *ndim,
                                  const int64_t *const *shape) {
  char src[8192];
  snprintf(src, sizeof src, "%s%s", k_header, body);
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_module_options_t opts;
  tvmjit_module_options_init(&opts);
  opts.passes = "default";
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "nn2.rx", src, strlen(src), &opts, &mod);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
  tvmjit_tensor_t *ts[4], *out = NULL;
  for (int i = 0; i < n_in; i++) ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, ndim[i], shape[i], in[i], &ts[i]));
  st = tvmjit_function_call(fn, n_in, (const tvmjit_tensor_t *const *)ts, 1, &out);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  for (int i = 0; i < n_in; i++) tvmjit_tensor_free(ts[i]);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
  return out;
}

static const char *load_error(const char *body) {
  static char msg[1024];
  char src[8192];
  snprintf(src, sizeof src, "%s%s", k_header, body);
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_module_options_t opts;
  tvmjit_module_options_init(&opts);
  opts.passes = "default";
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "bad.rx", src, strlen(src), &opts, &mod);
  const char *r = NULL;
  if (st) {
    snprintf(msg, sizeof msg, "%s", tvmjit_status_message(st));
    tvmjit_status_free(st);
    r = msg;
  } else {
    tvmjit_module_free(mod);
  }
  tvmjit_instance_free(inst);
  return r;
}

static void expect_error(const char *body, const char *needle) {
  const char *msg = load_error(body);
  ck_assert_msg(msg != NULL, "expected an error containing '%s'", needle);
  ck_assert_msg(strstr(msg, needle) != NULL, "error '%s' lacks '%s'", msg, needle);
}

static void expect_close(const char *what, int i, double got, double want) {
  ck_assert_msg(fabs(got - want) <= TOL * (1 + fabs(want)), "%s[%d] = %.9g, want %.9g", what, i, got, want);
}

static void check_shape(const tvmjit_tensor_t *t, int ndim, const int64_t *shape) {
  ck_assert_int_eq(tvmjit_tensor_ndim(t), ndim);
  for (int i = 0; i < ndim; i++) ck_assert_int_eq(tvmjit_tensor_shape(t)[i], shape[i]);
}

static void fill(float *x, int n, int seed) {
  for (int i = 0; i < n; i++) x[i] = (float)(((i * 37 + seed * 11) % 23) - 11) * 0.25f + 0.01f * (float)(i % 7);
}

/* ---------------- rms_norm ---------------- */

START_TEST(rms_norm_matches_formula) {
  enum { A = 2, B = 3, C = 4, D = 5 };
  static float x[A * B * C * D], w[C * D];
  fill(x, A * B * C * D, 1);
  fill(w, C * D, 2);
  const int64_t xs[] = {A, B, C, D}, ws[] = {C, D};
  float *in[] = {x, w};
  const int nd[] = {4, 2};
  const int64_t *sh[] = {xs, ws};
  tvmjit_tensor_t *out = run_model("    def main(x: R.Tensor((2, 3, 4, 5), \"float32\"), w: R.Tensor((4, 5), \"float32\")):\n"
                                   "        gv = R.nn.rms_norm(x, w, axes=[-2, -1], epsilon=1e-5)\n"
                                   "        return gv\n",
                                   2, in, nd, sh);
  check_shape(out, 4, xs);
  const float *y = tvmjit_tensor_data(out);
  for (int r = 0; r < A * B; r++) {
    double ss = 0;
    for (int k = 0; k < C * D; k++) ss += (double)x[r * C * D + k] * x[r * C * D + k];
    double inv = 1.0 / sqrt(ss / (C * D) + 1e-5);
    for (int k = 0; k < C * D; k++) expect_close("rms_norm", r * C * D + k, y[r * C * D + k], x[r * C * D + k] * inv * w[k]);
  }
  tvmjit_tensor_free(out);
}
END_TEST

/* Default axes ([-1]) over a 2-D input. */
START_TEST(rms_norm_default_axis) {
  enum { R = 3, K = 8 };
  static float x[R * K], w[K];
  fill(x, R * K, 3);
  fill(w, K, 4);
  const int64_t xs[] = {R, K}, ws[] = {K};
  float *in[] = {x, w};
  const int nd[] = {2, 1};
  const int64_t *sh[] = {xs, ws};
  tvmjit_tensor_t *out = run_model("    def main(x: R.Tensor((3, 8), \"float32\"), w: R.Tensor((8,), \"float32\")):\n"
                                   "        gv = R.nn.rms_norm(x, w)\n"
                                   "        return gv\n",
                                   2, in, nd, sh);
  const float *y = tvmjit_tensor_data(out);
  for (int r = 0; r < R; r++) {
    double ss = 0;
    for (int k = 0; k < K; k++) ss += (double)x[r * K + k] * x[r * K + k];
    double inv = 1.0 / sqrt(ss / K + 1e-5);
    for (int k = 0; k < K; k++) expect_close("rms_norm", r * K + k, y[r * K + k], x[r * K + k] * inv * w[k]);
  }
  tvmjit_tensor_free(out);
}
END_TEST

/* ---------------- pad ---------------- */

/* numpy.pad's source index for output index o on an axis of length n. */
static int pad_source(const char *mode, int o, int before, int n) {
  int j = o - before;
  if (strcmp(mode, "edge") == 0) return j < 0 ? 0 : j >= n ? n - 1 : j;
  if (strcmp(mode, "reflect") == 0) return j < 0 ? -j : j >= n ? 2 * (n - 1) - j : j;
  return j < 0 || j >= n ? -1 : j;
}

static void check_pad(const char *mode, double value) {
  enum { H = 3, W = 4 };
  const int pb[2] = {1, 2}, pa[2] = {2, 3}; /* before / after per axis */
  static float x[H * W];
  fill(x, H * W, 5);
  char body[1024];
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor((3, 4), \"float32\")):\n"
           "        gv = R.nn.pad(x, (1, 2, 2, 3), pad_value=%g, pad_mode=\"%s\")\n"
           "        return gv\n",
           value, mode);
  const int64_t xs[] = {H, W}, ys[] = {H + pb[0] + pa[0], W + pb[1] + pa[1]};
  float *in[] = {x};
  const int nd[] = {2};
  const int64_t *sh[] = {xs};
  tvmjit_tensor_t *out = run_model(body, 1, in, nd, sh);
  check_shape(out, 2, ys);
  const float *y = tvmjit_tensor_data(out);
  for (int i = 0; i < ys[0]; i++)
    for (int j = 0; j < ys[1]; j++) {
      int si = pad_source(mode, i, pb[0], H), sj = pad_source(mode, j, pb[1], W);
      double want = si < 0 || sj < 0 ? value : x[si * W + sj];
      expect_close(mode, (int)(i * ys[1] + j), y[i * ys[1] + j], want);
    }
  tvmjit_tensor_free(out);
}

START_TEST(pad_constant_edge_reflect_match_numpy) {
  check_pad("constant", 0.0);
  check_pad("constant", -2.5);
  check_pad("edge", 0.0);
  check_pad("reflect", 0.0);
}
END_TEST

/* ---------------- tile, repeat, flip ---------------- */

/* Runs a one-input model on x (2, 3, 4) and compares with want (n values, shape). */
static void check_copy(const char *call, const float *x, int ndim, const int64_t *shape, const double *want) {
  char body[1024];
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor((2, 3, 4), \"float32\")):\n"
           "        gv = %s\n"
           "        return gv\n",
           call);
  const int64_t xs[] = {2, 3, 4};
  float *in[] = {(float *)x};
  const int nd[] = {3};
  const int64_t *sh[] = {xs};
  tvmjit_tensor_t *out = run_model(body, 1, in, nd, sh);
  check_shape(out, ndim, shape);
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  const float *y = tvmjit_tensor_data(out);
  for (int64_t i = 0; i < n; i++) expect_close(call, (int)i, y[i], want[i]);
  tvmjit_tensor_free(out);
}

#define X_AT(i, j, k) x[((i) * 3 + (j)) * 4 + (k)]

START_TEST(tile_repeat_flip_match_numpy) {
  static float x[24];
  static double want[24 * 12];
  fill(x, 24, 7);
  /* numpy.tile(x, (2, 1, 1, 2)): shape (2, 2, 3, 8) */
  const int64_t tshape[] = {2, 2, 3, 8};
  for (int a = 0, n = 0; a < 2; a++)
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 8; k++) want[n++] = X_AT(i, j, k % 4);
  check_copy("R.tile(x, (2, 1, 1, 2))", x, 4, tshape, want);
  /* numpy.tile(x, (3,)): the last axis only */
  const int64_t t2shape[] = {2, 3, 12};
  for (int i = 0, n = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 12; k++) want[n++] = X_AT(i, j, k % 4);
  check_copy("R.tile(x, (3,))", x, 3, t2shape, want);
  /* numpy.repeat(x, 2, axis=1) and with a negative axis */
  const int64_t rshape[] = {2, 6, 4};
  for (int i = 0, n = 0; i < 2; i++)
    for (int j = 0; j < 6; j++)
      for (int k = 0; k < 4; k++) want[n++] = X_AT(i, j / 2, k);
  check_copy("R.repeat(x, 2, 1)", x, 3, rshape, want);
  check_copy("R.repeat(x, 2, axis=-2)", x, 3, rshape, want);
  /* numpy.repeat(x, 3): flattened */
  const int64_t fshape[] = {72};
  for (int i = 0; i < 72; i++) want[i] = x[i / 3];
  check_copy("R.repeat(x, 3)", x, 1, fshape, want);
  /* numpy.flip(x, axis) for each axis */
  const int64_t xshape[] = {2, 3, 4};
  for (int axis = 0; axis < 3; axis++) {
    for (int i = 0, n = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++) want[n++] = X_AT(axis == 0 ? 1 - i : i, axis == 1 ? 2 - j : j, axis == 2 ? 3 - k : k);
    char call[64];
    snprintf(call, sizeof call, "R.flip(x, axis=%d)", axis - 3 * (axis == 2)); /* axis 2 written as -1 */
    check_copy(call, x, 3, xshape, want);
  }
}
END_TEST

START_TEST(inference_errors) {
  expect_error("    def main(x: R.Tensor((2, 3), \"float32\"), w: R.Tensor((4,), \"float32\")):\n"
               "        gv = R.nn.rms_norm(x, w)\n"
               "        return gv\n",
               "weight");
  expect_error("    def main(x: R.Tensor((2, 3), \"int32\"), w: R.Tensor((3,), \"int32\")):\n"
               "        gv = R.nn.rms_norm(x, w)\n"
               "        return gv\n",
               "float");
  expect_error("    def main(x: R.Tensor((2, 3), \"float32\")):\n"
               "        gv = R.nn.pad(x, (1, 1))\n"
               "        return gv\n",
               "pad_width has 2 values but data is 2-D");
  expect_error("    def main(x: R.Tensor((2, 3), \"float32\")):\n"
               "        gv = R.nn.pad(x, (1, 1, 1, 1), pad_mode=\"wrap\")\n"
               "        return gv\n",
               "pad_mode");
  expect_error("    def main(x: R.Tensor((2, 3), \"float32\")):\n"
               "        gv = R.flip(x, axis=2)\n"
               "        return gv\n",
               "axis");
  expect_error("    def main(x: R.Tensor((2, 3), \"float32\")):\n"
               "        gv = R.repeat(x, 0, 1)\n"
               "        return gv\n",
               "positive");
  expect_error("    def main(x: R.Tensor((2, 3), \"float32\")):\n"
               "        gv = R.tile(x, (2, -1))\n"
               "        return gv\n",
               "positive");
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_nn2");
  TCase *tc = tcase_create("nn2");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, rms_norm_matches_formula);
  tcase_add_test(tc, rms_norm_default_axis);
  tcase_add_test(tc, pad_constant_edge_reflect_match_numpy);
  tcase_add_test(tc, tile_repeat_flip_match_numpy);
  tcase_add_test(tc, inference_errors);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
