/* Data-movement and index operators added by the ops-data branch, end to end (parse,
 * default pipeline, JIT, run through the public API), checked against references
 * written here from each operator's definition (numpy / ONNX ScatterElements, numpy's
 * cumsum/cumprod), and the memory-safety rule for indices read from tensors: an
 * out-of-range index never reads or writes out of bounds. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "relax_model.h"
#include "testutil.h"
#include "tvmjit.h"

#define TOL 1e-5

static void expect_error(const char *body, const char *needle) {
  const char *msg = tu_model_error(body);
  ck_assert_msg(msg != NULL, "expected an error containing '%s'", needle);
  ck_assert_msg(strstr(msg, needle) != NULL, "error '%s' lacks '%s'", msg, needle);
}

static void expect_close(const char *what, int i, double got, double want) {
  ck_assert_msg(fabs(got - want) <= TOL * (1 + fabs(want)), "%s[%d] = %.9g, want %.9g", what, i, got, want);
}

/* ---------------- scatter_elements ---------------- */

enum { SR = 3, SC = 5, SK = 4 };

/* ONNX ScatterElements along axis 1 of a 3x5 float32 data with 3x4 int32 indices,
 * applied in TOPI's order (row by row, k ascending), one wrap of a negative index. An
 * index still outside [0, dim) lands where TOPI's flat offset row * dim + index points
 * when that is inside the tensor, and is skipped otherwise (tvmjit's rule: TVM writes
 * out of bounds there). */
static void scatter_reference(const char *red, const float *x, const int32_t *idx, const float *upd, double *out) {
  for (int i = 0; i < SR * SC; i++) out[i] = x[i];
  for (int r = 0; r < SR; r++)
    for (int k = 0; k < SK; k++) {
      int64_t c = idx[r * SK + k];
      if (c < 0) c += SC;
      int64_t flat = r * SC + c;
      if (flat < 0 || flat >= SR * SC) continue;
      double *o = &out[flat], u = upd[r * SK + k];
      if (!strcmp(red, "update")) *o = u;
      else if (!strcmp(red, "add")) *o += u;
      else if (!strcmp(red, "mul")) *o *= u;
      else if (!strcmp(red, "mean")) *o = (*o + u) / 2;
      else if (!strcmp(red, "min")) *o = fmin(*o, u);
      else *o = fmax(*o, u);
    }
}

static void run_scatter(const char *red) {
  static float x[SR * SC], upd[SR * SK];
  /* duplicates (1, 1), a negative index (-1 -> 4, -5 -> 0) and out-of-range ones
   * (5, -6, 1000000) that must not touch memory */
  static const int32_t idx[SR * SK] = {1, 1, -1, 3, 0, 5, -5, 2, -6, 4, 1000000, 4};
  for (int i = 0; i < SR * SC; i++) x[i] = (float)(i % 7) - 2.5f;
  for (int i = 0; i < SR * SK; i++) upd[i] = 0.5f * (float)i - 1.75f;
  const int64_t xs[] = {SR, SC}, is[] = {SR, SK};
  tvmjit_tensor_t *in[3], *out = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, xs, x, &in[0]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_INT32, 2, is, (void *)idx, &in[1]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, is, upd, &in[2]));
  char body[512];
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor((3, 5), \"float32\"), i: R.Tensor((3, 4), \"int32\"), "
           "u: R.Tensor((3, 4), \"float32\")):\n"
           "        gv = R.scatter_elements(x, i, u, axis=-1, reduction=\"%s\")\n"
           "        return gv\n",
           red);
  tu_run_model(body, 3, in, 1, &out);
  double want[SR * SC];
  scatter_reference(red, x, idx, upd, want);
  const float *y = tvmjit_tensor_data(out);
  ck_assert_int_eq(tvmjit_tensor_shape(out)[1], SC);
  for (int i = 0; i < SR * SC; i++) expect_close(red, i, y[i], want[i]);
  tvmjit_tensor_free(out);
  for (int i = 0; i < 3; i++) tvmjit_tensor_free(in[i]);
}

START_TEST(scatter_elements_reductions_match_onnx) {
  static const char *const reds[] = {"update", "add", "mul", "mean", "min", "max"};
  for (size_t i = 0; i < sizeof reds / sizeof reds[0]; i++) run_scatter(reds[i]);
}
END_TEST

/* axis 0 of a 3-d tensor with int64 indices smaller than data (ONNX allows it). */
START_TEST(scatter_elements_axis0_3d) {
  enum { A = 4, B = 2, C = 3, IA = 2 };
  static float x[A * B * C], upd[IA * B * C];
  static int64_t idx[IA * B * C];
  for (int i = 0; i < A * B * C; i++) x[i] = (float)i;
  for (int i = 0; i < IA * B * C; i++) upd[i] = -1.0f - (float)i, idx[i] = (i * 3 + 1) % A;
  const int64_t xs[] = {A, B, C}, is[] = {IA, B, C};
  tvmjit_tensor_t *in[3], *out = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 3, xs, x, &in[0]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_INT64, 3, is, idx, &in[1]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 3, is, upd, &in[2]));
  tu_run_model("    def main(x: R.Tensor((4, 2, 3), \"float32\"), i: R.Tensor((2, 2, 3), \"int64\"), "
               "u: R.Tensor((2, 2, 3), \"float32\")):\n"
               "        gv = R.scatter_elements(x, i, u)\n"
               "        return gv\n",
               3, in, 1, &out);
  double want[A * B * C];
  for (int i = 0; i < A * B * C; i++) want[i] = x[i];
  for (int a = 0; a < IA; a++)
    for (int b = 0; b < B; b++)
      for (int c = 0; c < C; c++) {
        int j = (a * B + b) * C + c;
        want[(idx[j] * B + b) * C + c] = upd[j];
      }
  const float *y = tvmjit_tensor_data(out);
  for (int i = 0; i < A * B * C; i++) expect_close("scatter axis 0", i, y[i], want[i]);
  tvmjit_tensor_free(out);
  for (int i = 0; i < 3; i++) tvmjit_tensor_free(in[i]);
}
END_TEST

START_TEST(scatter_elements_inference_errors) {
  expect_error("    def main(x: R.Tensor((3, 5), \"float32\"), i: R.Tensor((3,), \"int64\"), "
               "u: R.Tensor((3,), \"float32\")):\n"
               "        gv = R.scatter_elements(x, i, u)\n"
               "        return gv\n",
               "same rank");
  expect_error("    def main(x: R.Tensor((3, 5), \"float32\"), i: R.Tensor((3, 2), \"float32\"), "
               "u: R.Tensor((3, 2), \"float32\")):\n"
               "        gv = R.scatter_elements(x, i, u)\n"
               "        return gv\n",
               "integer dtype");
  expect_error("    def main(x: R.Tensor((3, 5), \"float32\"), i: R.Tensor((3, 2), \"int64\"), "
               "u: R.Tensor((3, 2), \"float16\")):\n"
               "        gv = R.scatter_elements(x, i, u)\n"
               "        return gv\n",
               "same dtype");
  expect_error("    def main(x: R.Tensor((3, 5), \"float32\"), i: R.Tensor((3, 2), \"int64\"), "
               "u: R.Tensor((3, 3), \"float32\")):\n"
               "        gv = R.scatter_elements(x, i, u)\n"
               "        return gv\n",
               "same shape");
  expect_error("    def main(x: R.Tensor((3, 5), \"float32\"), i: R.Tensor((3, 2), \"int64\"), "
               "u: R.Tensor((3, 2), \"float32\")):\n"
               "        gv = R.scatter_elements(x, i, u, reduction=\"sum\")\n"
               "        return gv\n",
               "reduction 'sum'");
}
END_TEST

/* ---------------- take: indices out of range ---------------- */

/* TVM's take (mode="fast") reads out of bounds for such indices; tvmjit clamps an index
 * read from a tensor into [0, dim) per dimension (numpy's mode="clip"). */
START_TEST(take_out_of_range_index_is_clamped) {
  enum { R = 4, C = 3, N = 5 };
  static float x[R * C];
  static const int64_t idx[N] = {2, -1, 4, 1000000, -1000000};
  for (int i = 0; i < R * C; i++) x[i] = (float)i * 1.5f;
  const int64_t xs[] = {R, C}, is[] = {N};
  tvmjit_tensor_t *in[2], *out = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, xs, x, &in[0]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_INT64, 1, is, (void *)idx, &in[1]));
  tu_run_model("    def main(x: R.Tensor((4, 3), \"float32\"), i: R.Tensor((5,), \"int64\")):\n"
               "        gv = R.take(x, i, axis=0)\n"
               "        return gv\n",
               2, in, 1, &out);
  const float *y = tvmjit_tensor_data(out);
  for (int n = 0; n < N; n++) {
    int64_t r = idx[n] < 0 ? 0 : idx[n] >= R ? R - 1 : idx[n];
    for (int c = 0; c < C; c++) expect_close("take", n * C + c, y[n * C + c], x[r * C + c]);
  }
  tvmjit_tensor_free(out);
  for (int i = 0; i < 2; i++) tvmjit_tensor_free(in[i]);
}
END_TEST

/* ---------------- cumsum / cumprod ---------------- */

/* numpy.cumsum / cumprod over `axis` of a 2x3x4 float32 tensor (axis -9 = None:
 * flattened), exclusive shifting by one with the identity first. */
static void scan_reference(bool prod, int axis, bool exclusive, const float *x, double *out) {
  enum { A = 2, B = 3, C = 4 };
  const int dims[3] = {A, B, C};
  int len = axis < 0 ? A * B * C : dims[axis], after = 1, before = 1;
  for (int d = 0; axis >= 0 && d < 3; d++) {
    if (d < axis) before *= dims[d];
    if (d > axis) after *= dims[d];
  }
  for (int b = 0; b < before; b++)
    for (int j = 0; j < after; j++) {
      double acc = prod ? 1 : 0;
      for (int k = 0; k < len; k++) {
        int at = (b * len + k) * after + j;
        if (exclusive) out[at] = acc;
        acc = prod ? acc * x[at] : acc + x[at];
        if (!exclusive) out[at] = acc;
      }
    }
}

static void run_scan(const char *op, int axis, bool exclusive) {
  static float x[24];
  for (int i = 0; i < 24; i++) x[i] = 0.75f + 0.125f * (float)((i * 5) % 7) - (i % 3 == 0 ? 1.5f : 0.0f);
  const int64_t xs[] = {2, 3, 4};
  tvmjit_tensor_t *in = NULL, *out = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 3, xs, x, &in));
  char body[512], ax[32];
  if (axis < 0) snprintf(ax, sizeof ax, "None");
  else snprintf(ax, sizeof ax, "%d", axis - 3); /* negative spelling */
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor((2, 3, 4), \"float32\")):\n"
           "        gv = R.%s(x, axis=%s, exclusive=%s)\n"
           "        return gv\n",
           op, ax, exclusive ? "True" : "False");
  tu_run_model(body, 1, &in, 1, &out);
  ck_assert_int_eq(tvmjit_tensor_ndim(out), axis < 0 ? 1 : 3);
  double want[24];
  scan_reference(op[3] == 'p', axis, exclusive, x, want);
  const float *y = tvmjit_tensor_data(out);
  for (int i = 0; i < 24; i++) expect_close(op, i, y[i], want[i]);
  tvmjit_tensor_free(out);
  tvmjit_tensor_free(in);
}

START_TEST(cumsum_cumprod_match_numpy) {
  static const char *const ops[] = {"cumsum", "cumprod"};
  for (int o = 0; o < 2; o++)
    for (int axis = -1; axis < 3; axis++) {
      run_scan(ops[o], axis, false);
      run_scan(ops[o], axis, true);
    }
}
END_TEST

/* dtype="int64" of an int32 input: every element is cast before it is added. */
START_TEST(cumsum_dtype_casts_elements) {
  static const int32_t x[6] = {2147483647, 1, 2147483647, -5, 7, 1};
  const int64_t xs[] = {6};
  tvmjit_tensor_t *in = NULL, *out = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_INT32, 1, xs, (void *)x, &in));
  tu_run_model("    def main(x: R.Tensor((6,), \"int32\")):\n"
               "        gv = R.cumsum(x, axis=0, dtype=\"int64\")\n"
               "        return gv\n",
               1, &in, 1, &out);
  ck_assert_int_eq(tvmjit_tensor_dtype(out), TVMJIT_INT64);
  const int64_t *y = tvmjit_tensor_data(out);
  int64_t acc = 0;
  for (int i = 0; i < 6; i++) {
    acc += x[i];
    ck_assert_int_eq(y[i], acc);
  }
  tvmjit_tensor_free(out);
  tvmjit_tensor_free(in);
}
END_TEST

/* ---------------- einsum ---------------- */

/* numpy.einsum written out: out[o] = sum over the other labels of the product. Shapes
 * are per label (a..z), operands at most 3-d. */
typedef struct einsum_case {
  const char *eq, *script_shapes[2];
  int n_ops;
  const char *subs[2], *out;
} einsum_case_t;

static int label_ext(char c) { return 2 + (c - 'a') % 3; } /* a=2, b=3, c=4, d=2, ... */

static double einsum_ref(const einsum_case_t *t, const float *const *ops, const int *pos) {
  /* pos: value of every label; sum over the labels not in the output */
  char red[16] = "";
  for (int i = 0; i < t->n_ops; i++)
    for (const char *p = t->subs[i]; *p; p++)
      if (!strchr(t->out, *p) && !strchr(red, *p)) red[strlen(red)] = *p, red[strlen(red) + 1] = 0;
  int nr = (int)strlen(red), v[256];
  memcpy(v, pos, sizeof v);
  double acc = 0;
  int total = 1;
  for (int r = 0; r < nr; r++) total *= label_ext(red[r]);
  for (int it = 0; it < total; it++) {
    int rem = it;
    for (int r = nr - 1; r >= 0; r--) v[(int)red[r]] = rem % label_ext(red[r]), rem /= label_ext(red[r]);
    double prod = 1;
    for (int i = 0; i < t->n_ops; i++) {
      int off = 0;
      for (const char *p = t->subs[i]; *p; p++) off = off * label_ext(*p) + v[(int)*p];
      prod *= ops[i][off];
    }
    acc += prod;
  }
  return acc;
}

static void run_einsum(const einsum_case_t *t) {
  static float data[2][64];
  tvmjit_tensor_t *in[2], *out = NULL;
  const float *ops[2];
  char sig[256] = "", names[16] = "";
  for (int i = 0; i < t->n_ops; i++) {
    int64_t shape[4];
    int nd = (int)strlen(t->subs[i]), n = 1;
    for (int d = 0; d < nd; d++) shape[d] = label_ext(t->subs[i][d]), n *= (int)shape[d];
    for (int k = 0; k < n; k++) data[i][k] = 0.25f * (float)((k * 7 + i * 3) % 11) - 1.0f;
    ops[i] = data[i];
    ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, nd, shape, data[i], &in[i]));
    snprintf(sig + strlen(sig), sizeof sig - strlen(sig), "%sx%d: R.Tensor(%s, \"float32\")", i ? ", " : "", i,
             t->script_shapes[i]);
    snprintf(names + strlen(names), sizeof names - strlen(names), "%sx%d", i ? ", " : "", i);
  }
  char body[640];
  snprintf(body, sizeof body, "    def main(%s):\n        gv = R.einsum((%s%s), subscripts=\"%s\")\n        return gv\n",
           sig, names, t->n_ops == 1 ? "," : "", t->eq);
  tu_run_model(body, t->n_ops, in, 1, &out);
  int no = (int)strlen(t->out), total = 1;
  ck_assert_int_eq(tvmjit_tensor_ndim(out), no);
  for (int d = 0; d < no; d++) total *= label_ext(t->out[d]);
  const float *y = tvmjit_tensor_data(out);
  for (int it = 0; it < total; it++) {
    int pos[256] = {0}, rem = it;
    for (int d = no - 1; d >= 0; d--) pos[(int)t->out[d]] = rem % label_ext(t->out[d]), rem /= label_ext(t->out[d]);
    expect_close(t->eq, it, y[it], einsum_ref(t, ops, pos));
  }
  tvmjit_tensor_free(out);
  for (int i = 0; i < t->n_ops; i++) tvmjit_tensor_free(in[i]);
}

START_TEST(einsum_matches_numpy) {
  static const einsum_case_t cases[] = {
      {"ab,bc->ac", {"(2, 3)", "(3, 4)"}, 2, {"ab", "bc"}, "ac"},      /* matmul */
      {"abc,acd->abd", {"(2, 3, 4)", "(2, 4, 2)"}, 2, {"abc", "acd"}, "abd"}, /* batched matmul */
      {"ab,cb", {"(2, 3)", "(4, 3)"}, 2, {"ab", "cb"}, "ac"},          /* implicit output, x @ y.T */
      {"ab->ba", {"(2, 3)"}, 1, {"ab"}, "ba"},                         /* transpose */
      {"a,c->ac", {"(2,)", "(4,)"}, 2, {"a", "c"}, "ac"},              /* outer */
      {"abc->b", {"(2, 3, 4)"}, 1, {"abc"}, "b"},                      /* reduce */
      {"ab->", {"(2, 3)"}, 1, {"ab"}, ""},                             /* full sum */
      {"dd->d", {"(2, 2)"}, 1, {"dd"}, "d"},                           /* diagonal */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_einsum(&cases[i]);
}
END_TEST

START_TEST(einsum_inference_errors) {
  expect_error("    def main(x: R.Tensor((2, 3), \"float32\"), y: R.Tensor((4, 5), \"float32\")):\n"
               "        gv = R.einsum((x, y), subscripts=\"ij,jk->ik\")\n"
               "        return gv\n",
               "cannot be broadcast");
  expect_error("    def main(x: R.Tensor((2, 3), \"float32\"), y: R.Tensor((3, 4), \"float16\")):\n"
               "        gv = R.einsum((x, y), subscripts=\"ij,jk->ik\")\n"
               "        return gv\n",
               "same dtype");
  expect_error("    def main(x: R.Tensor((2, 3), \"float32\")):\n"
               "        gv = R.einsum((x,), subscripts=\"...j->j\")\n"
               "        return gv\n",
               "ellipsis");
  expect_error("    def main(x: R.Tensor((2, 3), \"float32\")):\n"
               "        gv = R.einsum((x,), subscripts=\"ijk->i\")\n"
               "        return gv\n",
               "has 3 labels");
}
END_TEST

/* ---------------- sort / argsort / topk ---------------- */

/* numpy.argsort(kind="stable") of one row (descending: the stable order of the keys
 * negated, which keeps equal keys in position order, as torch.sort(stable=True)); NaN
 * after every number, or before when descending. */
static bool comes_before(double a, int ia, double b, int ib, bool desc) {
  bool na = isnan(a), nb = isnan(b);
  if (na || nb) {
    if (na && nb) return ia < ib;
    return desc ? na : nb;
  }
  if (a != b) return desc ? a > b : a < b;
  return ia < ib;
}

static void argsort_row(const double *x, int n, bool desc, int *order) {
  for (int i = 0; i < n; i++) order[i] = i;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && comes_before(x[order[j]], order[j], x[order[j - 1]], order[j - 1], desc); j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
}

enum { QR = 3, QC = 6 };
static const float sort_x[QR * QC] = {3, 1, 2, 1, -7, 0.5f, NAN, 2, -1, NAN, 2, 9, 4, 4, 4, -4, 4, 0};

/* Runs `op_line` on sort_x (3x6 float32) and returns the outputs. */
static void run_sort_model(const char *op_line, const char *ret_sig, int n_out, tvmjit_tensor_t **outs) {
  const int64_t xs[] = {QR, QC};
  tvmjit_tensor_t *in = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, xs, (void *)sort_x, &in));
  char body[512];
  snprintf(body, sizeof body, "    def main(x: R.Tensor((3, 6), \"float32\"))%s:\n        gv = %s\n        return gv\n",
           ret_sig, op_line);
  tu_run_model(body, 1, &in, n_out, outs);
  tvmjit_tensor_free(in);
}

static bool same_value(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

START_TEST(sort_and_argsort_match_numpy_stable) {
  for (int desc = 0; desc < 2; desc++) {
    for (int axis = 0; axis < 2; axis++) {
      char line[160];
      tvmjit_tensor_t *vals = NULL, *idx = NULL;
      snprintf(line, sizeof line, "R.sort(x, axis=%d, descending=%s)", axis - 2, desc ? "True" : "False");
      run_sort_model(line, "", 1, &vals);
      snprintf(line, sizeof line, "R.argsort(x, axis=%d, descending=%s, dtype=\"int64\")", axis, desc ? "True" : "False");
      run_sort_model(line, "", 1, &idx);
      ck_assert_int_eq(tvmjit_tensor_dtype(idx), TVMJIT_INT64);
      const float *v = tvmjit_tensor_data(vals);
      const int64_t *ix = tvmjit_tensor_data(idx);
      int rows = axis ? QR : QC, len = axis ? QC : QR;
      for (int r = 0; r < rows; r++) {
        double line_x[QC];
        int order[QC];
        for (int k = 0; k < len; k++) line_x[k] = sort_x[axis ? r * QC + k : k * QC + r];
        argsort_row(line_x, len, desc, order);
        for (int k = 0; k < len; k++) {
          int at = axis ? r * QC + k : k * QC + r;
          ck_assert_msg(ix[at] == order[k], "argsort desc=%d axis=%d [%d] = %lld, want %d", desc, axis, at,
                        (long long)ix[at], order[k]);
          ck_assert_msg(same_value(v[at], line_x[order[k]]), "sort desc=%d axis=%d [%d] = %g, want %g", desc, axis,
                        at, v[at], line_x[order[k]]);
        }
      }
      tvmjit_tensor_free(vals);
      tvmjit_tensor_free(idx);
    }
  }
}
END_TEST

START_TEST(topk_matches_torch_topk) {
  /* largest k=2 along the last axis, both outputs (int32 indices, the default) */
  tvmjit_tensor_t *outs[2] = {NULL, NULL};
  run_sort_model("R.topk(x, k=2)", "", 2, outs);
  ck_assert_int_eq(tvmjit_tensor_shape(outs[0])[1], 2);
  ck_assert_int_eq(tvmjit_tensor_dtype(outs[1]), TVMJIT_INT32);
  const float *v = tvmjit_tensor_data(outs[0]);
  const int32_t *ix = tvmjit_tensor_data(outs[1]);
  for (int r = 0; r < QR; r++) {
    double line_x[QC];
    int order[QC];
    for (int k = 0; k < QC; k++) line_x[k] = sort_x[r * QC + k];
    argsort_row(line_x, QC, true, order);
    for (int k = 0; k < 2; k++) {
      ck_assert_int_eq(ix[r * 2 + k], order[k]);
      ck_assert(same_value(v[r * 2 + k], line_x[order[k]]));
    }
  }
  tvmjit_tensor_free(outs[0]);
  tvmjit_tensor_free(outs[1]);
  /* smallest k=1 along axis 0, indices only */
  tvmjit_tensor_t *only = NULL;
  run_sort_model("R.topk(x, k=1, axis=0, ret_type=\"indices\", largest=False, dtype=\"int64\")", "", 1, &only);
  ck_assert_int_eq(tvmjit_tensor_shape(only)[0], 1);
  const int64_t *oi = tvmjit_tensor_data(only);
  for (int c = 0; c < QC; c++) {
    double col[QR];
    int order[QR];
    for (int r = 0; r < QR; r++) col[r] = sort_x[r * QC + c];
    argsort_row(col, QR, false, order);
    ck_assert_int_eq(oi[c], order[0]);
  }
  tvmjit_tensor_free(only);
  /* smallest k=4 along the last axis: ties in position order, NaN never before a number */
  tvmjit_tensor_t *small[2] = {NULL, NULL};
  run_sort_model("R.topk(x, k=4, largest=False, dtype=\"int64\")", "", 2, small);
  const float *sv = tvmjit_tensor_data(small[0]);
  const int64_t *si = tvmjit_tensor_data(small[1]);
  for (int r = 0; r < QR; r++) {
    double line_x[QC];
    int order[QC];
    for (int k = 0; k < QC; k++) line_x[k] = sort_x[r * QC + k];
    argsort_row(line_x, QC, false, order);
    for (int k = 0; k < 4; k++) {
      ck_assert_int_eq(si[r * 4 + k], order[k]);
      ck_assert(same_value(sv[r * 4 + k], line_x[order[k]]));
    }
  }
  tvmjit_tensor_free(small[0]);
  tvmjit_tensor_free(small[1]);
}
END_TEST

START_TEST(sorting_inference) {
  expect_error("    def main(x: R.Tensor((3, 6), \"float32\")):\n"
               "        gv = R.sort(x, axis=2)\n"
               "        return gv\n",
               "axis 2 is out of range");
  expect_error("    def main(x: R.Tensor((3, 6), \"float32\")):\n"
               "        gv = R.topk(x, k=2, ret_type=\"all\")\n"
               "        return gv\n",
               "ret_type 'all'");
  /* k >= dim keeps the whole axis */
  tvmjit_tensor_t *v = NULL;
  run_sort_model("R.topk(x, k=10, ret_type=\"values\")", "", 1, &v);
  ck_assert_int_eq(tvmjit_tensor_shape(v)[1], QC);
  tvmjit_tensor_free(v);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_data");
  TCase *tc = tcase_create("data");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, scatter_elements_reductions_match_onnx);
  tcase_add_test(tc, scatter_elements_axis0_3d);
  tcase_add_test(tc, scatter_elements_inference_errors);
  tcase_add_test(tc, take_out_of_range_index_is_clamped);
  tcase_add_test(tc, cumsum_cumprod_match_numpy);
  tcase_add_test(tc, cumsum_dtype_casts_elements);
  tcase_add_test(tc, einsum_matches_numpy);
  tcase_add_test(tc, einsum_inference_errors);
  tcase_add_test(tc, sort_and_argsort_match_numpy_stable);
  tcase_add_test(tc, topk_matches_torch_topk);
  tcase_add_test(tc, sorting_inference);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
