/* Creation ops end to end (parse, default pipeline, JIT, run through the public API),
 * checked against values computed here: full (literal and tensor fill, with a dtype
 * change), full_like, ones/zeros(_like) in float32 and int32, arange (numpy.arange's
 * values for int and float arguments, R.arange(end)), tril/triu for k = 0, 1, -2 on a
 * batch of matrices; and the struct-info errors TVM reports. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "relax_model.h"
#include "testutil.h"
#include "tvmjit.h"



/* Runs `body` on n_in inputs; returns the single output (caller frees). */
static tvmjit_tensor_t *run(const char *body, int n_in, tvmjit_tensor_t **in) {
  tvmjit_tensor_t *out = NULL;
  tu_run_model(body, n_in, in, 1, &out);
  return out;
}


static void check_shape(const tvmjit_tensor_t *t, tvmjit_dtype_t dt, int ndim, const int64_t *shape) {
  ck_assert_int_eq(tvmjit_tensor_dtype(t), dt);
  ck_assert_int_eq(tvmjit_tensor_ndim(t), ndim);
  for (int i = 0; i < ndim; i++) ck_assert_int_eq(tvmjit_tensor_shape(t)[i], shape[i]);
}

START_TEST(full_fills) {
  int64_t shape[2] = {2, 3};
  /* a literal fill converted to the output dtype: 3.5 as int32 is 3 */
  tvmjit_tensor_t *y = run("    def main():\n"
                           "        gv = R.full((2, 3), R.const(3.5, \"float32\"), dtype=\"int32\")\n"
                           "        return gv\n",
                           0, NULL);
  check_shape(y, TVMJIT_INT32, 2, shape);
  for (int i = 0; i < 6; i++) ck_assert_int_eq(((const int32_t *)tvmjit_tensor_data(y))[i], 3);
  tvmjit_tensor_free(y);
  /* a tensor fill, int32 -> float32 */
  int32_t v = -7;
  tvmjit_tensor_t *in = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_INT32, 0, NULL, &v, &in));
  y = run("    def main(v: R.Tensor((), \"int32\")):\n"
          "        gv = R.full((2, 3), v, dtype=\"float32\")\n"
          "        return gv\n",
          1, &in);
  check_shape(y, TVMJIT_FLOAT32, 2, shape);
  for (int i = 0; i < 6; i++) ck_assert_float_eq(((const float *)tvmjit_tensor_data(y))[i], -7.0f);
  tvmjit_tensor_free(y);
  tvmjit_tensor_free(in);
}
END_TEST

START_TEST(like_ops_take_the_shape) {
  float x[12] = {0};
  int64_t shape[2] = {3, 4};
  float v = 2.5f;
  tvmjit_tensor_t *in[2];
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, shape, x, &in[0]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 0, NULL, &v, &in[1]));
  tvmjit_tensor_t *y = run("    def main(x: R.Tensor((3, 4), \"float32\"), v: R.Tensor((), \"float32\")):\n"
                           "        gv = R.full_like(x, v)\n"
                           "        return gv\n",
                           2, in);
  check_shape(y, TVMJIT_FLOAT32, 2, shape);
  for (int i = 0; i < 12; i++) ck_assert_float_eq(((const float *)tvmjit_tensor_data(y))[i], 2.5f);
  tvmjit_tensor_free(y);
  const char *ops[] = {"ones_like(x, \"int32\")", "zeros_like(x)", "ones((3, 4), \"float32\")", "zeros((3, 4), \"int32\")"};
  for (int k = 0; k < 4; k++) {
    char body[256];
    snprintf(body, sizeof body, "    def main(x: R.Tensor((3, 4), \"float32\")):\n        gv = R.%s\n        return gv\n",
             ops[k]);
    y = run(body, 1, in);
    bool is_int = k == 0 || k == 3;
    check_shape(y, is_int ? TVMJIT_INT32 : TVMJIT_FLOAT32, 2, shape);
    double want = k == 0 || k == 2 ? 1 : 0;
    for (int i = 0; i < 12; i++) {
      double got = is_int ? ((const int32_t *)tvmjit_tensor_data(y))[i] : ((const float *)tvmjit_tensor_data(y))[i];
      ck_assert_msg(got == want, "R.%s[%d] = %g, want %g", ops[k], i, got, want);
    }
    tvmjit_tensor_free(y);
  }
  tvmjit_tensor_free(in[0]);
  tvmjit_tensor_free(in[1]);
}
END_TEST

START_TEST(arange_matches_numpy) {
  /* numpy.arange(1, 10, 2) = [1 3 5 7 9]; numpy.arange(4) = [0 1 2 3];
   * numpy.arange(10, 1, -3) = [10 7 4]; numpy.arange(0.5, 2.0, 0.5, float32) = [0.5 1 1.5] */
  struct { const char *call; int n; double want[5]; bool is_float; } cases[] = {
      {"R.arange(1, 10, 2)", 5, {1, 3, 5, 7, 9}, false},
      {"R.arange(4)", 4, {0, 1, 2, 3}, false},
      {"R.arange(0.5, 2.0, 0.5)", 3, {0.5, 1.0, 1.5}, true},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char body[256];
    /* doubled with R.add: the executor returns call_tir results, not a folded constant */
    snprintf(body, sizeof body, "    def main():\n        a = %s\n        gv = R.add(a, a)\n        return gv\n",
             cases[k].call);
    tvmjit_tensor_t *y = run(body, 0, NULL);
    int64_t n = cases[k].n;
    check_shape(y, cases[k].is_float ? TVMJIT_FLOAT32 : TVMJIT_INT64, 1, &n);
    for (int i = 0; i < cases[k].n; i++) {
      double got = cases[k].is_float ? ((const float *)tvmjit_tensor_data(y))[i]
                                     : (double)((const int64_t *)tvmjit_tensor_data(y))[i];
      ck_assert_msg(got == 2 * cases[k].want[i], "2 * %s[%d] = %g, want %g", cases[k].call, i, got, 2 * cases[k].want[i]);
    }
    tvmjit_tensor_free(y);
  }
}
END_TEST

START_TEST(tril_triu_match_numpy) {
  float x[2 * 3 * 4];
  for (int i = 0; i < 24; i++) x[i] = (float)(i + 1);
  int64_t shape[3] = {2, 3, 4};
  int ks[3] = {0, 1, -2};
  for (int upper = 0; upper < 2; upper++)
    for (int t = 0; t < 3; t++) {
      char body[256];
      snprintf(body, sizeof body,
               "    def main(x: R.Tensor((2, 3, 4), \"float32\")):\n        gv = R.%s(x, k=%d)\n        return gv\n",
               upper ? "triu" : "tril", ks[t]);
      tvmjit_tensor_t *in = NULL;
      ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 3, shape, x, &in));
      tvmjit_tensor_t *y = run(body, 1, &in);
      check_shape(y, TVMJIT_FLOAT32, 3, shape);
      const float *yd = tvmjit_tensor_data(y);
      for (int i = 0; i < 24; i++) {
        int row = (i / 4) % 3, col = i % 4;
        bool keep = upper ? col - row >= ks[t] : col - row <= ks[t]; /* numpy.triu / numpy.tril */
        ck_assert_msg(yd[i] == (keep ? x[i] : 0.0f), "%s k=%d [%d] = %g", upper ? "triu" : "tril", ks[t], i, yd[i]);
      }
      tvmjit_tensor_free(y);
      tvmjit_tensor_free(in);
    }
}
END_TEST

START_TEST(struct_info_errors) {
  const char *e = tu_model_error("    def main(x: R.Tensor((4,), \"float32\")):\n"
                             "        gv = R.tril(x)\n"
                             "        return gv\n");
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(strstr(e, "tril: x must have at least 2 dimensions, got 1"), "%s", e);
  e = tu_model_error("    def main(v: R.Tensor((2,), \"float32\")):\n"
                 "        gv = R.full((2, 3), v)\n"
                 "        return gv\n");
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(strstr(e, "full: fill_value must be a 0-d tensor"), "%s", e);
  e = tu_model_error("    def main():\n"
                 "        gv = R.arange(1, 5, 0)\n"
                 "        return gv\n");
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(strstr(e, "arange: step must not be 0"), "%s", e);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_create");
  TCase *tc = tcase_create("create");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, full_fills);
  tcase_add_test(tc, like_ops_take_the_shape);
  tcase_add_test(tc, arange_matches_numpy);
  tcase_add_test(tc, tril_triu_match_numpy);
  tcase_add_test(tc, struct_info_errors);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
