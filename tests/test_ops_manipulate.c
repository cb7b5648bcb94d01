/* Data-movement operators end to end (parse, default pipeline, JIT, run through the
 * public API), checked against index arithmetic written here: flatten, squeeze,
 * expand_dims, broadcast_to, concat, split (sections, indices, empty and clamped
 * pieces; the tuple and its TupleGetItems; concat of a tuple-typed var), strided_slice (negative axes, negative and
 * out-of-range bounds, negative steps), take (axis, negative axis, PrimValue index),
 * and the inference errors TVM reports. */
#include <stdio.h>
#include <string.h>

#include "relax_model.h"
#include "testutil.h"
#include "tvmjit.h"


/* Runs main(x: float32 x_shape[, idx: int64 i_shape]) and returns n_out outputs. */
static void run(const char *body, const float *x, int xnd, const int64_t *xshape, const int64_t *idx, int ind,
                const int64_t *ishape, int n_out, tvmjit_tensor_t **outs) {
  tvmjit_tensor_t *ts[2] = {NULL, NULL};
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, xnd, xshape, (void *)x, &ts[0]));
  int n_in = 1;
  if (idx) {
    ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_INT64, ind, ishape, (void *)idx, &ts[1]));
    n_in = 2;
  }
  tu_run_model(body, n_in, ts, n_out, outs);
  for (int i = 0; i < n_in; i++) tvmjit_tensor_free(ts[i]);
}


static void check_shape(const tvmjit_tensor_t *t, int ndim, const int64_t *shape) {
  ck_assert_int_eq(tvmjit_tensor_ndim(t), ndim);
  for (int i = 0; i < ndim; i++)
    ck_assert_msg(tvmjit_tensor_shape(t)[i] == shape[i], "dim %d: %lld, want %lld", i,
                  (long long)tvmjit_tensor_shape(t)[i], (long long)shape[i]);
}

/* x[i] = i: every output element names the input element it copied. */
static void iota(float *x, int n) {
  for (int i = 0; i < n; i++) x[i] = (float)i;
}

START_TEST(flatten_squeeze_expand_dims_broadcast_to) {
  const char *body =
      "    def main(x: R.Tensor((2, 1, 3, 1), dtype=\"float32\")):\n"
      "        with R.dataflow():\n"
      "            a = R.flatten(x)\n"
      "            b = R.squeeze(x, axis=[-1])\n"
      "            c = R.squeeze(x)\n"
      "            d = R.expand_dims(x, axis=[0, -1])\n"
      "            e = R.broadcast_to(x, (4, 2, 5, 3, 2))\n"
      "            gv = (a, b, c, d, e)\n"
      "            R.output(gv)\n"
      "        return gv\n";
  float x[6];
  iota(x, 6);
  int64_t xs[4] = {2, 1, 3, 1};
  tvmjit_tensor_t *o[5] = {NULL};
  run(body, x, 4, xs, NULL, 0, NULL, 5, o);
  check_shape(o[0], 1, (int64_t[]){6});
  check_shape(o[1], 3, (int64_t[]){2, 1, 3});
  check_shape(o[2], 2, (int64_t[]){2, 3});
  check_shape(o[3], 6, (int64_t[]){1, 2, 1, 3, 1, 1});
  check_shape(o[4], 5, (int64_t[]){4, 2, 5, 3, 2});
  for (int k = 0; k < 4; k++) {
    const float *y = tvmjit_tensor_data(o[k]);
    for (int i = 0; i < 6; i++) ck_assert_msg(y[i] == (float)i, "output %d [%d] = %g", k, i, y[i]);
  }
  const float *e = tvmjit_tensor_data(o[4]);
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 2; b++)
      for (int c = 0; c < 5; c++)
        for (int d = 0; d < 3; d++)
          for (int f = 0; f < 2; f++) {
            int i = (((a * 2 + b) * 5 + c) * 3 + d) * 2 + f;
            ck_assert_msg(e[i] == x[b * 3 + d], "broadcast_to[%d] = %g, want %g", i, e[i], x[b * 3 + d]);
          }
  for (int k = 0; k < 5; k++) tvmjit_tensor_free(o[k]);
}
END_TEST

START_TEST(concat_and_split_round_trip) {
  /* split by sections and by indices (with an empty piece and an index past the end,
   * clamped), the pieces taken by TupleGetItem and concatenated back. */
  const char *body =
      "    def main(x: R.Tensor((2, 10, 3), dtype=\"float32\")):\n"
      "        with R.dataflow():\n"
      "            s = R.split(x, 2, axis=1)\n"
      "            t = R.split(x, [3, 3, 7, 12], axis=-2)\n"
      "            a = s[0]\n"
      "            b = s[1]\n"
      "            c = R.concat((b, a), axis=1)\n"
      "            t0 = t[0]\n"
      "            t2 = t[2]\n"
      "            t3 = t[3]\n"
      "            d = R.concat((t0, t2, t3), axis=-2)\n"
      "            gv = (c, d, t[1], t[4], t2)\n"
      "            R.output(gv)\n"
      "        return gv\n";
  float x[60];
  iota(x, 60);
  int64_t xs[3] = {2, 10, 3};
  tvmjit_tensor_t *o[5] = {NULL};
  run(body, x, 3, xs, NULL, 0, NULL, 5, o);
  check_shape(o[0], 3, (int64_t[]){2, 10, 3});
  check_shape(o[1], 3, (int64_t[]){2, 10, 3});
  check_shape(o[2], 3, (int64_t[]){2, 0, 3}); /* [3, 3): empty */
  check_shape(o[3], 3, (int64_t[]){2, 0, 3}); /* [12 -> 10, 10): empty */
  check_shape(o[4], 3, (int64_t[]){2, 4, 3}); /* [3, 7) */
  const float *c = tvmjit_tensor_data(o[0]), *d = tvmjit_tensor_data(o[1]), *t2 = tvmjit_tensor_data(o[4]);
  for (int n = 0; n < 2; n++)
    for (int i = 0; i < 10; i++)
      for (int j = 0; j < 3; j++) {
        int k = (n * 10 + i) * 3 + j;
        int src = (n * 10 + (i + 5) % 10) * 3 + j; /* halves swapped */
        ck_assert_msg(c[k] == x[src], "concat(split)[%d] = %g, want %g", k, c[k], x[src]);
        ck_assert_msg(d[k] == x[k], "concat(split indices)[%d] = %g, want %g", k, d[k], x[k]);
      }
  for (int n = 0; n < 2; n++)
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++) {
        int k = (n * 4 + i) * 3 + j;
        ck_assert_msg(t2[k] == x[(n * 10 + i + 3) * 3 + j], "split piece [3,7) [%d] = %g", k, t2[k]);
      }
  for (int k = 0; k < 5; k++) tvmjit_tensor_free(o[k]);
}
END_TEST

/* numpy's slice of one axis: the list of source indices. */
static int slice_indices(int64_t e, int64_t b, int64_t en, int64_t s, int64_t *out) {
  if (b < 0) b += e;
  if (en < 0) en += e;
  int n = 0;
  if (s > 0) {
    b = b < 0 ? 0 : b > e ? e : b;
    en = en < 0 ? 0 : en > e ? e : en;
    for (int64_t i = b; i < en; i += s) out[n++] = i;
  } else {
    b = b < -1 ? -1 : b > e - 1 ? e - 1 : b;
    en = en < -1 ? -1 : en > e - 1 ? e - 1 : en;
    for (int64_t i = b; i > en; i += s) out[n++] = i;
  }
  return n;
}

START_TEST(strided_slice_matches_numpy_slicing) {
  /* axis 0: [1:8:2]; axis -1 (3): [8:0:-3]; axis 2: [-3:100] (negative begin,
   * end past the extent) */
  const char *body =
      "    def main(x: R.Tensor((8, 9, 10, 10), dtype=\"float32\")):\n"
      "        gv = R.strided_slice(x, axes=[0, -1, 2], begin=[1, 8, -3], end=[8, 0, 100], strides=[2, -3, 1])\n"
      "        return gv\n";
  static float x[8 * 9 * 10 * 10];
  iota(x, 8 * 9 * 10 * 10);
  int64_t xs[4] = {8, 9, 10, 10};
  int64_t i0[16], i2[16], i3[16];
  int n0 = slice_indices(8, 1, 8, 2, i0), n2 = slice_indices(10, -3, 100, 1, i2), n3 = slice_indices(10, 8, 0, -3, i3);
  tvmjit_tensor_t *o = NULL;
  run(body, x, 4, xs, NULL, 0, NULL, 1, &o);
  check_shape(o, 4, (int64_t[]){n0, 9, n2, n3});
  const float *y = tvmjit_tensor_data(o);
  for (int a = 0; a < n0; a++)
    for (int b = 0; b < 9; b++)
      for (int c = 0; c < n2; c++)
        for (int d = 0; d < n3; d++) {
          int k = ((a * 9 + b) * n2 + c) * n3 + d;
          float want = x[((i0[a] * 9 + b) * 10 + i2[c]) * 10 + i3[d]];
          ck_assert_msg(y[k] == want, "strided_slice[%d] = %g, want %g", k, y[k], want);
        }
  tvmjit_tensor_free(o);

  /* no strides; begin past end gives an empty axis; begin below -extent clamps to 0 */
  const char *body2 =
      "    def main(x: R.Tensor((8, 9, 10, 10), dtype=\"float32\")):\n"
      "        with R.dataflow():\n"
      "            a = R.strided_slice(x, axes=[1], begin=[-100], end=[2])\n"
      "            b = R.strided_slice(x, axes=[3], begin=[7], end=[3])\n"
      "            gv = (a, b)\n"
      "            R.output(gv)\n"
      "        return gv\n";
  tvmjit_tensor_t *o2[2] = {NULL};
  run(body2, x, 4, xs, NULL, 0, NULL, 2, o2);
  check_shape(o2[0], 4, (int64_t[]){8, 2, 10, 10});
  check_shape(o2[1], 4, (int64_t[]){8, 9, 10, 0});
  const float *a = tvmjit_tensor_data(o2[0]);
  for (int p = 0; p < 8; p++)
    for (int q = 0; q < 2; q++)
      for (int r = 0; r < 100; r++) {
        int k = (p * 2 + q) * 100 + r;
        ck_assert_msg(a[k] == x[(p * 9 + q) * 100 + r], "strided_slice clamp [%d] = %g", k, a[k]);
      }
  tvmjit_tensor_free(o2[0]);
  tvmjit_tensor_free(o2[1]);
}
END_TEST

START_TEST(take_matches_numpy) {
  const char *body =
      "    def main(x: R.Tensor((3, 4, 5), dtype=\"float32\"), idx: R.Tensor((2, 3), dtype=\"int64\")):\n"
      "        with R.dataflow():\n"
      "            a = R.take(x, idx, axis=1)\n"
      "            b = R.take(x, idx, axis=-1)\n"
      "            c = R.take(x, R.prim_value(2), axis=0)\n"
      "            gv = (a, b, c)\n"
      "            R.output(gv)\n"
      "        return gv\n";
  float x[60];
  iota(x, 60);
  int64_t idx[6] = {3, 0, 1, 2, 2, 0};
  int64_t xs[3] = {3, 4, 5}, is[2] = {2, 3};
  tvmjit_tensor_t *o[3] = {NULL};
  run(body, x, 3, xs, idx, 2, is, 3, o);
  check_shape(o[0], 4, (int64_t[]){3, 2, 3, 5});
  check_shape(o[1], 4, (int64_t[]){3, 4, 2, 3});
  check_shape(o[2], 2, (int64_t[]){4, 5});
  const float *a = tvmjit_tensor_data(o[0]), *b = tvmjit_tensor_data(o[1]), *c = tvmjit_tensor_data(o[2]);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 6; j++)
      for (int k = 0; k < 5; k++) {
        int at = (i * 6 + j) * 5 + k;
        ck_assert_msg(a[at] == x[(i * 4 + idx[j]) * 5 + k], "take axis=1 [%d] = %g", at, a[at]);
      }
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 6; j++)
      ck_assert_msg(b[i * 6 + j] == x[i * 5 + idx[j]], "take axis=-1 [%d] = %g", i * 6 + j, b[i * 6 + j]);
  for (int i = 0; i < 20; i++) ck_assert_msg(c[i] == x[40 + i], "take prim [%d] = %g", i, c[i]);
  for (int k = 0; k < 3; k++) tvmjit_tensor_free(o[k]);
}
END_TEST

static void expect_error(const char *body, const char *needle) {
  const char *msg = tu_model_error(body);
  ck_assert_msg(msg != NULL, "expected an error containing '%s'", needle);
  ck_assert_msg(strstr(msg, needle) != NULL, "error '%s' lacks '%s'", msg, needle);
}

START_TEST(inference_errors) {
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
               "        gv = R.squeeze(x, axis=[1])\n"
               "        return gv\n",
               "only unit dimensions");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
               "        gv = R.expand_dims(x, axis=[3])\n"
               "        return gv\n",
               "axis");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
               "        gv = R.broadcast_to(x, (4, 2, 5))\n"
               "        return gv\n",
               "cannot broadcast");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\"), y: R.Tensor((3, 3), dtype=\"float32\")):\n"
               "        gv = R.concat((x, y), axis=1)\n"
               "        return gv\n",
               "may differ only at axis 1");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\"), y: R.Tensor((2, 3), dtype=\"float16\")):\n"
               "        gv = R.concat((x, y), axis=0)\n"
               "        return gv\n",
               "same dtype");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
               "        gv = R.split(x, 0, axis=1)\n"
               "        return gv\n",
               "positive");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
               "        gv = R.split(x, 2, axis=2)\n"
               "        return gv\n",
               "axis");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
               "        gv = R.strided_slice(x, axes=[0, 1], begin=[0], end=[1, 1])\n"
               "        return gv\n",
               "same length");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\"), i: R.Tensor((2,), dtype=\"float32\")):\n"
               "        gv = R.take(x, i, axis=0)\n"
               "        return gv\n",
               "integer");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\"), i: R.Tensor((2,), dtype=\"int64\")):\n"
               "        gv = R.take(x, i)\n"
               "        return gv\n",
               "1-D");
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_manipulate");
  TCase *tc = tcase_create("manipulate");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, flatten_squeeze_expand_dims_broadcast_to);
  tcase_add_test(tc, concat_and_split_round_trip);
  tcase_add_test(tc, strided_slice_matches_numpy_slicing);
  tcase_add_test(tc, take_matches_numpy);
  tcase_add_test(tc, inference_errors);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
