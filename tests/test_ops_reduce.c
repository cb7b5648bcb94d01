/* Reductions end to end (parse, default pipeline, JIT, run through the public API)
 * against a reference written here in double precision: sum, mean, max, min, prod,
 * variance (population), std with axis None / int / list / negative and keepdims, on
 * float32, float16 and int32 (integer mean truncates, as TVM's T.Div); large reductions to a
 * scalar and over leading axes (the full-reduction schedule); and the struct-info
 * errors TVM reports (axis out of range, repeated axis). Also the search ops: argmax,
 * argmin (ties, axis None, keepdims) and where with broadcasting. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "relax_model.h"
#include "testutil.h"
#include "tvmjit.h"

#define MAX_NDIM 6



/* Runs `body` on one input tensor; returns the output (caller frees). */
static tvmjit_tensor_t *run1(const char *body, tvmjit_dtype_t dt, int ndim, const int64_t *shape, void *data) {
  tvmjit_tensor_t *x = NULL, *out = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(dt, ndim, shape, data, &x));
  tu_run_model(body, 1, &x, 1, &out);
  tvmjit_tensor_free(x);
  return out;
}


/* ---------------- the reference ---------------- */

typedef enum op { SUM, MEAN, MAX, MIN, PROD, VARIANCE, STD } op_t;
static const char *const op_names[] = {"sum", "mean", "max", "min", "prod", "variance", "std"};

typedef struct red_case {
  op_t op;
  int ndim;
  int64_t shape[MAX_NDIM];
  const char *axis; /* script text: "None", "1", "[0, -1]" */
  bool reduced[MAX_NDIM];
  bool keepdims;
} red_case_t;

static int64_t count(int n, const int64_t *shape) {
  int64_t c = 1;
  for (int i = 0; i < n; i++) c *= shape[i];
  return c;
}

/* Output shape and, for every input element, its output index. */
static int out_shape(const red_case_t *c, int64_t *oshape) {
  int n = 0;
  for (int d = 0; d < c->ndim; d++) {
    if (!c->reduced[d]) oshape[n++] = c->shape[d];
    else if (c->keepdims) oshape[n++] = 1;
  }
  return n;
}

static int64_t out_index(const red_case_t *c, int64_t flat) {
  int64_t idx[MAX_NDIM], o = 0;
  for (int d = c->ndim - 1; d >= 0; d--) {
    idx[d] = flat % c->shape[d];
    flat /= c->shape[d];
  }
  for (int d = 0; d < c->ndim; d++)
    if (!c->reduced[d]) o = o * c->shape[d] + idx[d];
  return o;
}

/* numpy semantics in double: population variance, std = sqrt(variance). */
static void reference(const red_case_t *c, const double *x, double *y, int64_t n_out) {
  int64_t n = count(c->ndim, c->shape), per = n / n_out;
  for (int64_t o = 0; o < n_out; o++) y[o] = c->op == PROD ? 1 : c->op == MAX ? -INFINITY : c->op == MIN ? INFINITY : 0;
  for (int64_t i = 0; i < n; i++) {
    double *acc = &y[out_index(c, i)];
    if (c->op == PROD) *acc *= x[i];
    else if (c->op == MAX) *acc = fmax(*acc, x[i]);
    else if (c->op == MIN) *acc = fmin(*acc, x[i]);
    else *acc += x[i];
  }
  if (c->op == SUM || c->op == PROD || c->op == MAX || c->op == MIN) return;
  for (int64_t o = 0; o < n_out; o++) y[o] /= (double)per;
  if (c->op == MEAN) return;
  double mean[4096];
  ck_assert_int_le(n_out, 4096);
  memcpy(mean, y, sizeof(double) * (size_t)n_out);
  for (int64_t o = 0; o < n_out; o++) y[o] = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = x[i] - mean[out_index(c, i)];
    y[out_index(c, i)] += d * d;
  }
  for (int64_t o = 0; o < n_out; o++) y[o] = c->op == STD ? sqrt(y[o] / (double)per) : y[o] / (double)per;
}

static void input(double *x, int64_t n, bool small) {
  /* a sign pattern and a spread of magnitudes; `small` keeps products in range */
  for (int64_t i = 0; i < n; i++)
    x[i] = small ? 1.0 + (double)((i * 7) % 5 - 2) * 0.125 : (double)((i * 37 + 11) % 23 - 11) * 0.25 + 0.01 * (double)(i % 7);
}

static void format_shape(char *buf, size_t size, int n, const int64_t *shape) {
  size_t len = (size_t)snprintf(buf, size, "(");
  for (int i = 0; i < n; i++) len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "", (long long)shape[i]);
  snprintf(buf + len, size - len, "%s)", n == 1 ? "," : "");
}

static void check_f32(const red_case_t *c) {
  char body[1024], sh[128];
  format_shape(sh, sizeof sh, c->ndim, c->shape);
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor(%s, dtype=\"float32\")):\n"
           "        gv = R.%s(x, axis=%s, keepdims=%s)\n"
           "        return gv\n",
           sh, op_names[c->op], c->axis, c->keepdims ? "True" : "False");
  int64_t n = count(c->ndim, c->shape);
  static double xd[1 << 20], yd[1 << 16];
  static float xf[1 << 20];
  ck_assert_int_le(n, 1 << 20);
  input(xd, n, c->op == PROD);
  for (int64_t i = 0; i < n; i++) {
    xf[i] = (float)xd[i];
    xd[i] = xf[i];
  }
  int64_t oshape[MAX_NDIM];
  int on = out_shape(c, oshape);
  int64_t n_out = count(on, oshape);
  reference(c, xd, yd, n_out);
  tvmjit_tensor_t *out = run1(body, TVMJIT_FLOAT32, c->ndim, c->shape, xf);
  ck_assert_int_eq(tvmjit_tensor_ndim(out), on);
  for (int i = 0; i < on; i++) ck_assert_int_eq(tvmjit_tensor_shape(out)[i], oshape[i]);
  const float *y = tvmjit_tensor_data(out);
  for (int64_t o = 0; o < n_out; o++)
    ck_assert_msg(fabs(y[o] - yd[o]) <= 1e-4 * (1 + fabs(yd[o])), "%s axis=%s keepdims=%d [%lld] = %.9g, want %.9g",
                  op_names[c->op], c->axis, c->keepdims, (long long)o, y[o], yd[o]);
  tvmjit_tensor_free(out);
}

#define CASE(o, nd, sh, ax, red, kd) \
  { .op = o, .ndim = nd, .shape = sh, .axis = ax, .reduced = red, .keepdims = kd }
#define S(...) {__VA_ARGS__}

START_TEST(float32_reductions_match_numpy) {
  for (int op = SUM; op <= STD; op++) {
    red_case_t cases[] = {
        CASE((op_t)op, 4, S(2, 3, 4, 5), "None", S(1, 1, 1, 1), false),
        CASE((op_t)op, 4, S(2, 3, 4, 5), "None", S(1, 1, 1, 1), true),
        CASE((op_t)op, 4, S(2, 3, 4, 5), "[0, 3]", S(1, 0, 0, 1), false),
        CASE((op_t)op, 4, S(2, 3, 4, 5), "[-1, 1]", S(0, 1, 0, 1), true),
        CASE((op_t)op, 3, S(3, 4, 6), "-1", S(0, 0, 1), false),
        CASE((op_t)op, 3, S(3, 4, 6), "1", S(0, 1, 0), true),
        CASE((op_t)op, 2, S(7, 9), "[0]", S(1, 0), false),
        CASE((op_t)op, 1, S(13), "[0]", S(1), false),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_f32(&cases[i]);
  }
}
END_TEST

/* Reductions large enough for the parallel schedules: to a scalar and over the
 * leading axes (a column sum), where float32 rounding must stay within tolerance. */
START_TEST(large_reductions_match_numpy) {
  red_case_t cases[] = {
      CASE(SUM, 2, S(512, 1024), "None", S(1, 1), false),
      CASE(MEAN, 2, S(512, 1024), "None", S(1, 1), false),
      CASE(MAX, 2, S(512, 1024), "None", S(1, 1), true),
      CASE(SUM, 3, S(64, 32, 256), "[0, 1]", S(1, 1, 0), false),
      CASE(MEAN, 2, S(1000, 64), "0", S(1, 0), false),
      CASE(VARIANCE, 2, S(300, 200), "None", S(1, 1), false),
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_f32(&cases[i]);
}
END_TEST

/* float16 accumulates in float16 (TVM's topi reductions keep the input dtype): against
 * the double reference of the float16 inputs, float16 tolerances (rtol 1e-2, atol 5e-2). */
START_TEST(float16_reductions_match_numpy) {
  for (int op = SUM; op <= STD; op++) {
    red_case_t cases[] = {
        CASE((op_t)op, 2, S(8, 33), "[-1]", S(0, 1), false),
        CASE((op_t)op, 3, S(4, 6, 16), "[0, 1]", S(1, 1, 0), true),
        CASE((op_t)op, 2, S(5, 7), "None", S(1, 1), false),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      const red_case_t *c = &cases[i];
      char body[1024], sh[128];
      format_shape(sh, sizeof sh, c->ndim, c->shape);
      snprintf(body, sizeof body,
               "    def main(x: R.Tensor(%s, dtype=\"float16\")):\n"
               "        gv = R.%s(x, axis=%s, keepdims=%s)\n"
               "        return gv\n",
               sh, op_names[c->op], c->axis, c->keepdims ? "True" : "False");
      int64_t n = count(c->ndim, c->shape);
      double xd[512], yd[512];
      _Float16 xh[512];
      input(xd, n, c->op == PROD);
      for (int64_t k = 0; k < n; k++) {
        xh[k] = (_Float16)(xd[k] * 0.5);
        xd[k] = (double)xh[k];
      }
      int64_t oshape[MAX_NDIM];
      int on = out_shape(c, oshape);
      int64_t n_out = count(on, oshape);
      reference(c, xd, yd, n_out);
      tvmjit_tensor_t *out = run1(body, TVMJIT_FLOAT16, c->ndim, c->shape, xh);
      ck_assert_int_eq(tvmjit_tensor_dtype(out), TVMJIT_FLOAT16);
      const _Float16 *y = tvmjit_tensor_data(out);
      for (int64_t o = 0; o < n_out; o++)
        ck_assert_msg(fabs((double)y[o] - yd[o]) <= 5e-2 + 1e-2 * fabs(yd[o]), "float16 %s axis=%s [%lld] = %g, want %g",
                      op_names[c->op], c->axis, (long long)o, (double)y[o], yd[o]);
      tvmjit_tensor_free(out);
    }
  }
}
END_TEST

START_TEST(int32_reductions_are_exact) {
  /* x = i % 7 - 3 over (4, 6): sums, max/min, and mean truncating toward zero */
  int32_t x[24];
  for (int i = 0; i < 24; i++) x[i] = i % 7 - 3;
  int64_t shape[2] = {4, 6};
  const char *ops[] = {"sum", "max", "min", "mean"};
  for (int k = 0; k < 4; k++) {
    char body[512];
    snprintf(body, sizeof body,
             "    def main(x: R.Tensor((4, 6), dtype=\"int32\")):\n"
             "        gv = R.%s(x, axis=[1])\n"
             "        return gv\n",
             ops[k]);
    tvmjit_tensor_t *out = run1(body, TVMJIT_INT32, 2, shape, x);
    ck_assert_int_eq(tvmjit_tensor_dtype(out), TVMJIT_INT32);
    const int32_t *y = tvmjit_tensor_data(out);
    for (int r = 0; r < 4; r++) {
      int32_t s = 0, mx = INT32_MIN, mn = INT32_MAX;
      for (int j = 0; j < 6; j++) {
        int32_t v = x[r * 6 + j];
        s += v;
        mx = v > mx ? v : mx;
        mn = v < mn ? v : mn;
      }
      int32_t want = k == 0 ? s : k == 1 ? mx : k == 2 ? mn : s / 6;
      ck_assert_msg(y[r] == want, "int32 %s row %d = %d, want %d", ops[k], r, y[r], want);
    }
    tvmjit_tensor_free(out);
  }
}
END_TEST

START_TEST(struct_info_errors) {
  const char *e = tu_model_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
                             "        gv = R.sum(x, axis=[2])\n"
                             "        return gv\n");
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(strstr(e, "sum: axis 2 is out of range for a 2-d tensor"), "%s", e);
  e = tu_model_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
                 "        gv = R.mean(x, axis=[1, -1])\n"
                 "        return gv\n");
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(strstr(e, "mean: axis 1 appears twice"), "%s", e);
  e = tu_model_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
                 "        gv = R.max(x, axes=[1])\n"
                 "        return gv\n");
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(strstr(e, "axes"), "%s", e);
}
END_TEST

/* argmax/argmin against a scan written here: ties keep the first index, axis=None
 * indexes the flattened tensor, keepdims keeps a unit axis; the result is int64. */
static void check_arg(bool is_max, const char *axis, int ax, bool keepdims) {
  char body[512];
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor((3, 4, 5), dtype=\"float32\")):\n"
           "        gv = R.%s(x, axis=%s, keepdims=%s)\n"
           "        return gv\n",
           is_max ? "argmax" : "argmin", axis, keepdims ? "True" : "False");
  float x[60];
  for (int i = 0; i < 60; i++) x[i] = (float)((i * 7) % 11); /* repeated values: ties */
  int64_t shape[3] = {3, 4, 5};
  tvmjit_tensor_t *out = run1(body, TVMJIT_FLOAT32, 3, shape, x);
  ck_assert_int_eq(tvmjit_tensor_dtype(out), TVMJIT_INT64);
  const int64_t *y = tvmjit_tensor_data(out);
  if (ax < 0) {
    int64_t best = 0;
    for (int i = 1; i < 60; i++)
      if (is_max ? x[i] > x[best] : x[i] < x[best]) best = i;
    ck_assert_int_eq(tvmjit_tensor_ndim(out), keepdims ? 3 : 0);
    ck_assert_int_eq(y[0], best);
  } else {
    ck_assert_int_eq(tvmjit_tensor_ndim(out), keepdims ? 3 : 2);
    int stride = ax == 2 ? 1 : ax == 1 ? 5 : 20, ext = (int)shape[ax];
    int o = 0;
    for (int i = 0; i < 60; i++) {
      if ((i / stride) % ext != 0) continue; /* first element of each reduced line */
      int best = 0;
      for (int k = 1; k < ext; k++)
        if (is_max ? x[i + k * stride] > x[i + best * stride] : x[i + k * stride] < x[i + best * stride]) best = k;
      ck_assert_msg(y[o] == best, "%s axis=%s [%d] = %lld, want %d", is_max ? "argmax" : "argmin", axis, o,
                    (long long)y[o], best);
      o++;
    }
  }
  tvmjit_tensor_free(out);
}

START_TEST(argmax_argmin_match_reference) {
  for (int m = 0; m < 2; m++) {
    check_arg(m, "None", -1, false);
    check_arg(m, "None", -1, true);
    check_arg(m, "1", 1, false);
    check_arg(m, "-1", 2, true);
    check_arg(m, "0", 0, false);
  }
}
END_TEST

/* where broadcasts condition (3, 1), x1 (3, 4) and x2 (4,). */
START_TEST(where_broadcasts) {
  const char *body = "    def main(c: R.Tensor((3, 1), dtype=\"bool\"), a: R.Tensor((3, 4), dtype=\"float32\"), "
                     "b: R.Tensor((4,), dtype=\"float32\")):\n"
                     "        gv = R.where(c, a, b)\n"
                     "        return gv\n";
  bool c[3] = {true, false, true};
  float a[12], b[4] = {-1, -2, -3, -4};
  for (int i = 0; i < 12; i++) a[i] = (float)i;
  int64_t cs[2] = {3, 1}, as[2] = {3, 4}, bs[1] = {4};
  tvmjit_tensor_t *in[3], *out = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_BOOL, 2, cs, c, &in[0]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, as, a, &in[1]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 1, bs, b, &in[2]));
  tu_run_model(body, 3, in, 1, &out);
  const float *y = tvmjit_tensor_data(out);
  for (int i = 0; i < 12; i++) ck_assert_float_eq(y[i], c[i / 4] ? a[i] : b[i % 4]);
  for (int i = 0; i < 3; i++) tvmjit_tensor_free(in[i]);
  tvmjit_tensor_free(out);
}
END_TEST

START_TEST(search_errors) {
  const char *e = tu_model_error("    def main(c: R.Tensor((3,), dtype=\"int32\"), a: R.Tensor((3,), dtype=\"float32\")):\n"
                             "        gv = R.where(c, a, a)\n"
                             "        return gv\n");
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(strstr(e, "where: condition must be a bool tensor, got int32"), "%s", e);
  e = tu_model_error("    def main(x: R.Tensor((3, 4), dtype=\"float32\")):\n"
                 "        gv = R.argmax(x, axis=2)\n"
                 "        return gv\n");
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(strstr(e, "argmax: axis 2 is out of range for a 2-d tensor"), "%s", e);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_reduce");
  TCase *tc = tcase_create("reduce");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, float32_reductions_match_numpy);
  tcase_add_test(tc, large_reductions_match_numpy);
  tcase_add_test(tc, float16_reductions_match_numpy);
  tcase_add_test(tc, int32_reductions_are_exact);
  tcase_add_test(tc, struct_info_errors);
  tcase_add_test(tc, argmax_argmin_match_reference);
  tcase_add_test(tc, where_broadcasts);
  tcase_add_test(tc, search_errors);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
