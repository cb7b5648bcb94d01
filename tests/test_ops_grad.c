/* The gradient operators (R.grad.*) end to end: parse, default pipeline, JIT, run
 * through the public API, against references written here in double precision from
 * each gradient's derivation:
 *   nll_loss_backward: loss = sum_i -w[t_i] * p[i, t_i] (divided by sum_i w[t_i] for
 *     mean), so d loss / d p[i, c] = -w[t_i] * [c == t_i] * g (/ sum_i w[t_i]), with
 *     w[ignore_index] = 0 when ignore_index >= 0;
 *   take_backward: the adjoint of take, out[.., idx[l], ..] += g[.., l, ..];
 *   avg_pool2d_backward: each output's gradient spread over the cells of its window,
 *     divided by the window's in-bounds count (or kh*kw with count_include_pad, as
 *     TOPI's pool_grad divides);
 *   max_pool2d_backward: each output's gradient added at its window's maximum.
 * Also the struct info TVM gives them (the input they are the gradient of), and
 * annotated nll_loss calls, which TVM's parser does not infer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/module.h"
#include "ir/text/print.h"
#include "passes.h"
#include "relax_model.h"
#include "support/arena.h"
#include "support/strbuf.h"
#include "testutil.h"
#include "transforms/tir/lower.h"
#include "tvmjit.h"

#define TOL 1e-4

static void expect_close(const char *what, int i, double got, double want) {
  ck_assert_msg(fabs(got - want) <= TOL * (1 + fabs(want)), "%s[%d] = %.9g, want %.9g", what, i, got, want);
}

static void fill(float *x, int n, int seed) {
  for (int i = 0; i < n; i++) x[i] = (float)(((i * 37 + seed * 11) % 23) - 11) * 0.25f + 0.01f * (float)(i % 7);
}

static tvmjit_tensor_t *wrap(tvmjit_dtype_t dt, int ndim, const int64_t *shape, void *data) {
  tvmjit_tensor_t *t = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(dt, ndim, shape, data, &t));
  return t;
}

static tvmjit_tensor_t *run(const char *body, int n_in, tvmjit_tensor_t **in) {
  tvmjit_tensor_t *out = NULL;
  tu_run_model(body, n_in, in, 1, &out);
  for (int i = 0; i < n_in; i++) tvmjit_tensor_free(in[i]);
  return out;
}

/* ---------------- nll_loss_backward ---------------- */

enum { NB = 2, NC = 4, ND = 3 };

/* The reference gradient of (N, C, D) predictions for targets t (N, D). */
static void nll_grad_ref(const char *reduction, const float *w, const int64_t *t, int64_t ignore, const float *og,
                         double *out) {
  double wt[NB * ND], wsum = 0;
  for (int i = 0; i < NB * ND; i++) {
    wt[i] = (ignore >= 0 && t[i] == ignore) ? 0 : (w ? w[t[i]] : 1.0);
    wsum += wt[i];
  }
  for (int n = 0; n < NB; n++)
    for (int c = 0; c < NC; c++)
      for (int d = 0; d < ND; d++) {
        int i = n * ND + d;
        double g = strcmp(reduction, "none") == 0 ? og[i] : strcmp(reduction, "sum") == 0 ? og[0] : og[0] / wsum;
        out[(n * NC + c) * ND + d] = c == t[i] ? -wt[i] * g : 0;
      }
}

static void check_nll_backward(const char *reduction, bool weighted, int64_t ignore) {
  static float pred[NB * NC * ND], w[NC], og[NB * ND];
  static int64_t tgt[NB * ND] = {0, 3, 1, 2, 1, 1};
  fill(pred, NB * NC * ND, 5);
  fill(og, NB * ND, 2);
  for (int c = 0; c < NC; c++) w[c] = 0.5f + 0.25f * (float)c;
  bool none = strcmp(reduction, "none") == 0;
  char body[1024];
  snprintf(body, sizeof body,
           "    def main(g: R.Tensor(%s, \"float32\"), p: R.Tensor((2, 4, 3), \"float32\"),"
           " t: R.Tensor((2, 3), \"int64\")%s):\n"
           "        gv = R.grad.nll_loss_backward(g, p, t%s, reduction=\"%s\", ignore_index=%lld)\n"
           "        return gv\n",
           none ? "(2, 3)" : "()", weighted ? ", w: R.Tensor((4,), \"float32\")" : "", weighted ? ", w" : "", reduction,
           (long long)ignore);
  const int64_t ps[] = {NB, NC, ND}, ts[] = {NB, ND}, wsh[] = {NC};
  tvmjit_tensor_t *in[4] = {wrap(TVMJIT_FLOAT32, none ? 2 : 0, ts, og), wrap(TVMJIT_FLOAT32, 3, ps, pred),
                            wrap(TVMJIT_INT64, 2, ts, tgt), wrap(TVMJIT_FLOAT32, 1, wsh, w)};
  int n_in = weighted ? 4 : 3;
  if (!weighted) tvmjit_tensor_free(in[3]);
  tvmjit_tensor_t *out = run(body, n_in, in);
  ck_assert_int_eq(tvmjit_tensor_ndim(out), 3);
  double want[NB * NC * ND];
  nll_grad_ref(reduction, weighted ? w : NULL, tgt, ignore, og, want);
  const float *y = tvmjit_tensor_data(out);
  for (int i = 0; i < NB * NC * ND; i++) expect_close(reduction, i, y[i], want[i]);
  tvmjit_tensor_free(out);
}

START_TEST(nll_loss_backward_matches_derivation) {
  const char *reductions[] = {"mean", "sum", "none"};
  for (int r = 0; r < 3; r++)
    for (int wt = 0; wt < 2; wt++) {
      check_nll_backward(reductions[r], wt, -100);
      check_nll_backward(reductions[r], wt, 1); /* class 1 masked: weights_new */
    }
}
END_TEST

/* (C,) predictions with a () target: the gradient is -w[t] * g / w[t] = -g at t. */
START_TEST(nll_loss_backward_without_batch) {
  static float pred[NC] = {0.1f, 0.2f, 0.3f, 0.4f}, w[NC] = {1, 2, 3, 4}, og[1] = {1.5f};
  static int64_t tgt[1] = {2};
  const int64_t ps[] = {NC};
  tvmjit_tensor_t *in[4] = {wrap(TVMJIT_FLOAT32, 0, ps, og), wrap(TVMJIT_FLOAT32, 1, ps, pred),
                            wrap(TVMJIT_INT64, 0, ps, tgt), wrap(TVMJIT_FLOAT32, 1, ps, w)};
  tvmjit_tensor_t *out =
      run("    def main(g: R.Tensor((), \"float32\"), p: R.Tensor((4,), \"float32\"),"
          " t: R.Tensor((), \"int64\"), w: R.Tensor((4,), \"float32\")):\n"
          "        gv = R.grad.nll_loss_backward(g, p, t, w, reduction=\"mean\")\n"
          "        return gv\n",
          4, in);
  const float *y = tvmjit_tensor_data(out);
  const double want[NC] = {0, 0, -1.5, 0};
  for (int i = 0; i < NC; i++) expect_close("no batch", i, y[i], want[i]);
  tvmjit_tensor_free(out);
}
END_TEST

/* ---------------- take_backward ---------------- */

START_TEST(take_backward_accumulates_repeated_indices) {
  enum { A = 3, X = 4, L = 5, B = 2 };
  static float g[A * L * B];
  static int32_t idx[L] = {1, 3, 1, 0, 1}; /* row 1 three times, row 2 never */
  fill(g, A * L * B, 7);
  const int64_t gs[] = {A, L, B}, xs[] = {A, X, B}, is[] = {L};
  static float x[A * X * B];
  tvmjit_tensor_t *in[3] = {wrap(TVMJIT_FLOAT32, 3, gs, g), wrap(TVMJIT_FLOAT32, 3, xs, x),
                            wrap(TVMJIT_INT32, 1, is, idx)};
  tvmjit_tensor_t *out =
      run("    def main(g: R.Tensor((3, 5, 2), \"float32\"), x: R.Tensor((3, 4, 2), \"float32\"),"
          " i: R.Tensor((5,), \"int32\")):\n"
          "        gv = R.grad.take_backward(g, x, i, axis=1)\n"
          "        return gv\n",
          3, in);
  double want[A * X * B] = {0};
  for (int a = 0; a < A; a++)
    for (int l = 0; l < L; l++)
      for (int b = 0; b < B; b++) want[(a * X + idx[l]) * B + b] += g[(a * L + l) * B + b];
  const float *y = tvmjit_tensor_data(out);
  for (int i = 0; i < A * X * B; i++) expect_close("take_backward axis=1", i, y[i], want[i]);
  tvmjit_tensor_free(out);
}
END_TEST

/* Without an axis the indices address the flattened x; an index out of range is
 * skipped (TVM would write out of bounds). */
START_TEST(take_backward_flat_skips_out_of_range) {
  static float g[4] = {1, 2, 4, 8}, x[6];
  static int64_t idx[4] = {5, 0, 5, 6};
  const int64_t gs[] = {4}, xs[] = {2, 3};
  tvmjit_tensor_t *in[3] = {wrap(TVMJIT_FLOAT32, 1, gs, g), wrap(TVMJIT_FLOAT32, 2, xs, x),
                            wrap(TVMJIT_INT64, 1, gs, idx)};
  tvmjit_tensor_t *out =
      run("    def main(g: R.Tensor((4,), \"float32\"), x: R.Tensor((2, 3), \"float32\"),"
          " i: R.Tensor((4,), \"int64\")):\n"
          "        gv = R.grad.take_backward(g, x, i)\n"
          "        return gv\n",
          3, in);
  const double want[6] = {2, 0, 0, 0, 0, 5};
  const float *y = tvmjit_tensor_data(out);
  for (int i = 0; i < 6; i++) expect_close("take_backward flat", i, y[i], want[i]);
  tvmjit_tensor_free(out);
}
END_TEST

/* ---------------- avg_pool2d_backward ---------------- */

typedef struct pool_grad_case {
  int64_t h, w, k[2], s[2], pad[4];
  bool ceil_mode, count_include_pad;
} pool_grad_case_t;

static int64_t out_extent(const pool_grad_case_t *c, int i) {
  int64_t in = i == 0 ? c->h : c->w;
  return (in - c->k[i] + c->pad[i] + c->pad[i + 2] + (c->ceil_mode ? c->s[i] - 1 : 0)) / c->s[i] + 1;
}

/* In-bounds cells of window o along axis i. */
static int64_t window_cells(const pool_grad_case_t *c, int i, int64_t o) {
  int64_t in = i == 0 ? c->h : c->w, start = o * c->s[i] - c->pad[i], end = start + c->k[i];
  return (end < in ? end : in) - (start > 0 ? start : 0);
}

/* Runs `gv = CALL` on g (the output gradient, [2, 3, oh, ow]) and x ([2, 3, h, w]). */
static tvmjit_tensor_t *run_pool_grad(const pool_grad_case_t *c, const char *call, float *og, float *x) {
  int64_t oh = out_extent(c, 0), ow = out_extent(c, 1);
  char body[1024];
  snprintf(body, sizeof body,
           "    def main(g: R.Tensor((2, 3, %lld, %lld), \"float32\"), x: R.Tensor((2, 3, %lld, %lld), \"float32\")):\n"
           "        gv = %s\n"
           "        return gv\n",
           (long long)oh, (long long)ow, (long long)c->h, (long long)c->w, call);
  const int64_t gs[] = {2, 3, oh, ow}, xs[] = {2, 3, c->h, c->w};
  tvmjit_tensor_t *in[2] = {wrap(TVMJIT_FLOAT32, 4, gs, og), wrap(TVMJIT_FLOAT32, 4, xs, x)};
  return run(body, 2, in);
}

static void check_avg_pool_grad(const pool_grad_case_t *c) {
  enum { N = 2, C = 3 };
  int64_t oh = out_extent(c, 0), ow = out_extent(c, 1);
  static float og[N * C * 64], x[N * C * 256];
  ck_assert_int_le(oh * ow, 64);
  ck_assert_int_le(c->h * c->w, 256);
  fill(og, (int)(N * C * oh * ow), 4);
  char call[512];
  snprintf(call, sizeof call,
           "R.grad.avg_pool2d_backward(g, x, pool_size=(%lld, %lld), strides=(%lld, %lld),"
           " padding=(%lld, %lld, %lld, %lld), ceil_mode=%s, count_include_pad=%s)",
           (long long)c->k[0], (long long)c->k[1], (long long)c->s[0], (long long)c->s[1], (long long)c->pad[0],
           (long long)c->pad[1], (long long)c->pad[2], (long long)c->pad[3], c->ceil_mode ? "True" : "False",
           c->count_include_pad ? "True" : "False");
  tvmjit_tensor_t *out = run_pool_grad(c, call, og, x);
  static double want[N * C * 256];
  memset(want, 0, sizeof want);
  for (int nc = 0; nc < N * C; nc++)
    for (int64_t i = 0; i < oh; i++)
      for (int64_t j = 0; j < ow; j++) {
        int64_t cells = window_cells(c, 0, i) * window_cells(c, 1, j);
        double div = c->count_include_pad ? (double)(c->k[0] * c->k[1]) : (double)(cells > 1 ? cells : 1);
        double share = og[(nc * oh + i) * ow + j] / div;
        for (int64_t u = i * c->s[0] - c->pad[0]; u < i * c->s[0] - c->pad[0] + c->k[0]; u++)
          for (int64_t v = j * c->s[1] - c->pad[1]; v < j * c->s[1] - c->pad[1] + c->k[1]; v++)
            if (u >= 0 && u < c->h && v >= 0 && v < c->w) want[(nc * c->h + u) * c->w + v] += share;
      }
  const float *y = tvmjit_tensor_data(out);
  for (int i = 0; i < N * C * c->h * c->w; i++) expect_close("avg_pool2d_backward", i, y[i], want[i]);
  tvmjit_tensor_free(out);
}

START_TEST(avg_pool2d_backward_matches_adjoint) {
  const pool_grad_case_t cases[] = {
      {10, 10, {5, 5}, {2, 2}, {2, 1, 2, 1}, true, false}, /* TVM's test case */
      {7, 9, {3, 2}, {2, 3}, {1, 0, 0, 1}, false, false},
      {8, 8, {3, 3}, {3, 2}, {1, 1, 1, 1}, true, true},
      {6, 5, {2, 2}, {2, 2}, {0, 0, 0, 0}, false, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_avg_pool_grad(&cases[i]);
}
END_TEST

/* ---------------- max_pool2d_backward ---------------- */

/* The gradient of max pooling: each output's gradient goes to its window's maximum,
 * the first one in row-major window order on ties (TOPI's argmax reducer keeps the
 * smaller raveled index); a window whose maximum is padding passes nothing on. */
static void check_max_pool_grad(const pool_grad_case_t *c, bool ties) {
  enum { N = 2, C = 3 };
  int64_t oh = out_extent(c, 0), ow = out_extent(c, 1);
  static float og[N * C * 64], x[N * C * 256];
  ck_assert_int_le(oh * ow, 64);
  ck_assert_int_le(c->h * c->w, 256);
  fill(og, (int)(N * C * oh * ow), 6);
  fill(x, (int)(N * C * c->h * c->w), 8);
  if (ties)
    for (int i = 0; i < N * C * c->h * c->w; i++) x[i] = (float)(i % 3); /* many equal maxima */
  char call[512];
  snprintf(call, sizeof call,
           "R.grad.max_pool2d_backward(g, x, (%lld, %lld), (%lld, %lld), (%lld, %lld, %lld, %lld), (1, 1), %s)",
           (long long)c->k[0], (long long)c->k[1], (long long)c->s[0], (long long)c->s[1], (long long)c->pad[0],
           (long long)c->pad[1], (long long)c->pad[2], (long long)c->pad[3], c->ceil_mode ? "True" : "False");
  tvmjit_tensor_t *out = run_pool_grad(c, call, og, x);
  static double want[N * C * 256];
  memset(want, 0, sizeof want);
  for (int nc = 0; nc < N * C; nc++)
    for (int64_t i = 0; i < oh; i++)
      for (int64_t j = 0; j < ow; j++) {
        double best = -INFINITY;
        int64_t at = -1; /* flat input offset, -1 = padding */
        for (int64_t u = i * c->s[0] - c->pad[0]; u < i * c->s[0] - c->pad[0] + c->k[0]; u++)
          for (int64_t v = j * c->s[1] - c->pad[1]; v < j * c->s[1] - c->pad[1] + c->k[1]; v++) {
            bool inside = u >= 0 && u < c->h && v >= 0 && v < c->w;
            double val = inside ? x[(nc * c->h + u) * c->w + v] : -3.4028234663852886e38;
            if (val > best) best = val, at = inside ? (nc * c->h + u) * c->w + v : -1;
          }
        if (at >= 0) want[at] += og[(nc * oh + i) * ow + j];
      }
  const float *y = tvmjit_tensor_data(out);
  for (int i = 0; i < N * C * c->h * c->w; i++) expect_close("max_pool2d_backward", i, y[i], want[i]);
  tvmjit_tensor_free(out);
}

START_TEST(max_pool2d_backward_routes_to_the_maximum) {
  const pool_grad_case_t cases[] = {
      {10, 10, {5, 5}, {2, 2}, {2, 1, 2, 1}, true, false}, /* TVM's test case: windows out of range */
      {7, 9, {3, 2}, {2, 3}, {1, 0, 0, 1}, false, false},  {8, 8, {3, 3}, {3, 2}, {1, 1, 1, 1}, true, false},
      {6, 5, {2, 2}, {2, 2}, {0, 0, 0, 0}, false, false}, /* no pad_temp */
      {6, 6, {3, 3}, {1, 1}, {1, 1, 1, 1}, false, false}, /* overlapping windows */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    check_max_pool_grad(&cases[i], false);
    check_max_pool_grad(&cases[i], true);
  }
}
END_TEST

/* TVM's max pool gradient reads argmax and out_grad at windows below 0 and past the
 * output: lowering guards exactly those loads (guard_loads.c), and leaves kernels
 * without loads in if_then_else conditions alone. */
static char *guarded_text(tj_arena_t *a, const char *main_text, const char *func, bool *out_changed) {
  const tj_module_t *m = tu_legalize_main(a, main_text);
  const tj_prim_func_t *f = tj_module_find_prim(m, func), *g = NULL;
  ck_assert_ptr_nonnull(f);
  TU_OK(tj_tir_guard_loads(a, f, func, &g));
  *out_changed = g != f;
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_print_prim_func(&sb, func, g);
  return sb.data;
}

START_TEST(lowering_guards_the_out_of_range_window_reads) {
  tj_arena_t *a = tj_arena_create();
  bool changed = false;
  char *text =
      guarded_text(a,
                   "    def main(g: R.Tensor((3, 2, 6, 5), \"float32\"), x: R.Tensor((3, 2, 10, 10), \"float32\")):\n"
                   "        gv = R.grad.max_pool2d_backward(g, x, (5, 5), (2, 2), (2, 1, 2, 1), (1, 1), True)\n"
                   "        return gv\n",
                   "max_pool2d_backward", &changed);
  ck_assert(changed);
  /* o_h = (h + 2) // 2 - wh is in [-1, 5] (argmax has 6 rows), o_w in [-2, 5] (5 columns) */
  const char *o_h = "T.Div(v_ax2 + T.int64(2), T.int64(2)) - v_wh",
             *o_w = "T.Div(v_ax3 + T.int64(1), T.int64(2)) - v_ww";
  char want[512];
  snprintf(want, sizeof want,
           "T.if_then_else(T.int64(0) <= %s and %s < T.int64(6) and (T.int64(0) <= %s and %s < T.int64(5)), "
           "maxpool_grad_argmax_v0[",
           o_h, o_h, o_w, o_w);
  ck_assert_msg(strstr(text, want) != NULL, "no guarded argmax read in:\n%s", text);
  /* the padding and argmax stages read provably in bounds: unchanged */
  ck_assert_msg(strstr(text, "T.if_then_else(T.int64(0) <= v_ax2") == NULL, "%s", text);
  free(text);
  text =
      guarded_text(a,
                   "    def main(g: R.Tensor((3, 2, 6, 5), \"float32\"), x: R.Tensor((3, 2, 10, 10), \"float32\")):\n"
                   "        gv = R.grad.avg_pool2d_backward(g, x, (5, 5), (2, 2), (2, 1, 2, 1), (1, 1), True)\n"
                   "        return gv\n",
                   "avg_pool2d_backward", &changed);
  ck_assert_msg(!changed, "a kernel without loads in conditions was rewritten:\n%s", text);
  free(text);
  tj_arena_free(a);
}
END_TEST

/* ---------------- struct info ---------------- */

/* TVM infers the gradient's struct info as that of the input it belongs to, whatever
 * the other arguments are. */
START_TEST(gradients_take_the_inputs_struct_info) {
  const char *srcs[] = {
      "    def main(g: R.Tensor((), \"float32\"), p: R.Tensor((2, 3, 4), \"float32\"), t: R.Tensor((2, 4), \"int64\"))"
      " -> R.Tensor((2, 3, 4), \"float32\"):\n"
      "        gv = R.grad.nll_loss_backward(g, p, t)\n"
      "        return gv\n",
      "    def main(g: R.Tensor((1, 2, 3, 3), \"float32\"), x: R.Tensor((1, 2, 6, 6), \"float32\"))"
      " -> R.Tensor((1, 2, 6, 6), \"float32\"):\n"
      "        gv = R.grad.max_pool2d_backward(g, x, (2, 2), (2, 2))\n"
      "        return gv\n",
  };
  for (int i = 0; i < 2; i++) ck_assert_msg(tu_model_error(srcs[i]) == NULL, "%s", tu_model_error(srcs[i]));
  const char *bad =
      "    def main(g: R.Tensor((3, 2), \"float32\"), x: R.Tensor((3, 4), \"float32\"))"
      " -> R.Tensor((3, 4), \"float32\"):\n"
      "        gv = R.grad.take_backward(g, x, axis=1)\n"
      "        return gv\n";
  const char *msg = tu_model_error(bad);
  ck_assert_ptr_nonnull(msg);
  ck_assert_msg(strstr(msg, "take_backward") != NULL, "%s", msg);
}
END_TEST

/* ---------------- inference errors ---------------- */

/* TVM's parser at the corpus commit never inferred a call whose binding is annotated
 * (legalize_ops' test_nll_loss has 3-class predictions and 4 weights); tvmjit's verifier
 * re-infers every op call (as later TVM's well_formed does), so the mismatch is an error
 * with or without the annotation; only `tvmjit conformance` uses the older rule. */
START_TEST(nll_loss_rejects_weights_of_another_class_count) {
  const char *forms[] = {"        gv: R.Tensor((), \"float32\") = R.nn.nll_loss(p, t, w)\n",
                         "        gv = R.nn.nll_loss(p, t, w)\n"};
  for (int i = 0; i < 2; i++) {
    char src[512];
    snprintf(src, sizeof src,
             "    def main(p: R.Tensor((2, 3), \"float32\"), t: R.Tensor((2,), \"int64\"),"
             " w: R.Tensor((4,), \"float32\")):\n%s        return gv\n", forms[i]);
    const char *msg = tu_model_error(src);
    ck_assert_ptr_nonnull(msg);
    ck_assert_msg(strstr(msg, "classes of predictions and weights differ: 3 vs 4") != NULL, "%s", msg);
  }
  const char *msg;
  /* predictions and targets that disagree would be read out of bounds: rejected */
  msg = tu_model_error("    def main(p: R.Tensor((2, 3), \"float32\"), t: R.Tensor((3,), \"int64\")):\n"
                       "        gv: R.Tensor((), \"float32\") = R.nn.nll_loss(p, t)\n"
                       "        return gv\n");
  ck_assert_ptr_nonnull(msg);
  ck_assert_msg(strstr(msg, "batch sizes of predictions and targets differ: 2 vs 3") != NULL, "%s", msg);
  /* other ops keep their inference errors, annotated or not */
  msg = tu_model_error(
      "    def main(x: R.Tensor((3,), \"float32\"), y: R.Tensor((4,), \"float32\")):\n"
      "        gv: R.Tensor((3,), \"float32\") = R.add(x, y)\n"
      "        return gv\n");
  ck_assert_ptr_nonnull(msg);
  ck_assert_msg(strstr(msg, "do not broadcast") != NULL, "%s", msg);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_grad");
  TCase *tc = tcase_create("grad");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, nll_loss_backward_matches_derivation);
  tcase_add_test(tc, nll_loss_backward_without_batch);
  tcase_add_test(tc, take_backward_accumulates_repeated_indices);
  tcase_add_test(tc, take_backward_flat_skips_out_of_range);
  tcase_add_test(tc, avg_pool2d_backward_matches_adjoint);
  tcase_add_test(tc, max_pool2d_backward_routes_to_the_maximum);
  tcase_add_test(tc, lowering_guards_the_out_of_range_window_reads);
  tcase_add_test(tc, gradients_take_the_inputs_struct_info);
  tcase_add_test(tc, nll_loss_rejects_weights_of_another_class_count);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
