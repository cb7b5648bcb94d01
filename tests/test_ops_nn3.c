/* Operators of issue 16 added by the ops-nn3 branch, end to end (parse, default
 * pipeline, JIT, run through the public API), checked against references written here
 * in double precision from each operator's definition: the 1-d and 3-d pools (TVM's
 * window rules: ceil_mode adds stride - 1 to the tail padding, count_include_pad counts
 * the padded cells but not that extra), adaptive pooling windows
 * [floor(i*I/O), ceil((i+1)*I/O)), conv3d as the direct sum over the window, the losses
 * as PyTorch defines them (nll_loss mean = sum(w[t]*loss) / sum(w[t]) over the kept
 * targets, cross_entropy_with_logits = -sum(x*y)/N). Also: every nest of each new op gets a CPU
 * schedule, and the inference errors. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/module.h"
#include "ir/text/parse.h"
#include "ir/text/print.h"
#include "relax_model.h"
#include "passes.h"
#include "support/arena.h"
#include "testutil.h"
#include "transforms/pass_manager.h"
#include "transforms/tir/schedule.h"
#include "tvmjit.h"

#define TOL 1e-4

static tvmjit_tensor_t *run_model(const char *body, int n_in, float *const *in, const int *ndim,
                                  const int64_t *const *shape) {
  tvmjit_tensor_t *ts[4], *out = NULL;
  for (int i = 0; i < n_in; i++) ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, ndim[i], shape[i], in[i], &ts[i]));
  tu_run_model(body, n_in, ts, 1, &out);
  for (int i = 0; i < n_in; i++) tvmjit_tensor_free(ts[i]);
  return out;
}

static void expect_error(const char *body, const char *needle) {
  const char *msg = tu_model_error(body);
  ck_assert_msg(msg != NULL, "expected an error containing '%s'", needle);
  ck_assert_msg(strstr(msg, needle) != NULL, "error '%s' lacks '%s'", msg, needle);
}

static void expect_close(const char *what, int i, double got, double want) {
  ck_assert_msg(fabs(got - want) <= TOL * (1 + fabs(want)), "%s[%d] = %.9g, want %.9g", what, i, got, want);
}

static void fill(float *x, int n, int seed) {
  for (int i = 0; i < n; i++) x[i] = (float)(((i * 37 + seed * 11) % 23) - 11) * 0.25f + 0.01f * (float)(i % 7);
}

/* ---------------- max/avg pool 1d and 3d ---------------- */

/* One pooling case: N=2, C=3, nsp spatial dims, channels first or last. */
typedef struct pool_case {
  const char *op; /* "max_pool1d" */
  int nsp;
  bool channels_last, is_max, ceil_mode, count_include_pad;
  int64_t in[3], k[3], s[3], d[3], pb[3], pa[3];
} pool_case_t;

static int64_t out_extent(const pool_case_t *c, int i) {
  int64_t extra = c->ceil_mode ? c->s[i] - 1 : 0;
  return (c->in[i] + c->pb[i] + c->pa[i] + extra - c->d[i] * (c->k[i] - 1) - 1) / c->s[i] + 1;
}

/* Flat offset of (n, ch, sp...) in a tensor of spatial extents ext. */
static int64_t offset(const pool_case_t *c, const int64_t *ext, int n, int ch, const int64_t *sp) {
  int64_t o = n;
  if (!c->channels_last) o = o * 3 + ch;
  for (int i = 0; i < c->nsp; i++) o = o * ext[i] + sp[i];
  if (c->channels_last) o = o * 3 + ch;
  return o;
}

/* TVM's pool at one output position, from the definition: taps t = o*s - pb + r*d. */
static double pool_ref(const pool_case_t *c, const float *x, int n, int ch, const int64_t *o) {
  int64_t r[3] = {0, 0, 0}, taps = 1;
  for (int i = 0; i < c->nsp; i++) taps *= c->k[i];
  double acc = c->is_max ? -DBL_MAX : 0;
  int64_t inside = 0, padded = 0;
  for (int64_t t = 0; t < taps; t++) {
    int64_t rem = t, pos[3];
    bool in_bounds = true, in_padded = true;
    for (int i = c->nsp - 1; i >= 0; i--) {
      r[i] = rem % c->k[i];
      rem /= c->k[i];
      pos[i] = o[i] * c->s[i] - c->pb[i] + r[i] * c->d[i];
      in_bounds = in_bounds && pos[i] >= 0 && pos[i] < c->in[i];
      in_padded = in_padded && pos[i] < c->in[i] + c->pa[i];
    }
    padded += in_padded;
    if (!in_bounds) {
      if (c->is_max) acc = fmax(acc, -FLT_MAX); /* pad_temp holds the lowest float */
      continue;
    }
    inside++;
    double v = x[offset(c, c->in, n, ch, pos)];
    acc = c->is_max ? fmax(acc, v) : acc + v;
  }
  if (c->is_max) return acc;
  return acc / (double)(c->count_include_pad ? padded : (inside > 0 ? inside : 1));
}

static const char *int_list(char *buf, int n, const int64_t *v) {
  int len = sprintf(buf, "[");
  for (int i = 0; i < n; i++) len += sprintf(buf + len, "%s%lld", i ? ", " : "", (long long)v[i]);
  sprintf(buf + len, "]");
  return buf;
}

static void check_pool(const pool_case_t *c) {
  static const char *const layouts[2][4] = {{"", "NCW", "NCHW", "NCDHW"}, {"", "NWC", "NHWC", "NDHWC"}};
  int64_t shape[5], oext[3], total = 2 * 3, ototal = 2 * 3;
  shape[0] = 2;
  for (int i = 0; i < c->nsp; i++) {
    oext[i] = out_extent(c, i);
    total *= c->in[i];
    ototal *= oext[i];
    shape[c->channels_last ? 1 + i : 2 + i] = c->in[i];
  }
  shape[c->channels_last ? c->nsp + 1 : 1] = 3;
  static float x[4096];
  ck_assert_int_le(total, 4096);
  fill(x, (int)total, c->nsp);
  char tshape[64] = "", ks[32], ss[32], ds[32], ps[64], body[1024];
  int64_t pads[6];
  for (int i = 0; i < c->nsp; i++) pads[i] = c->pb[i], pads[c->nsp + i] = c->pa[i];
  for (int i = 0; i < c->nsp + 2; i++) sprintf(tshape + strlen(tshape), "%s%lld", i ? ", " : "", (long long)shape[i]);
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor((%s), dtype=\"float32\")):\n"
           "        gv = R.nn.%s(x, pool_size=%s, strides=%s, dilation=%s, padding=%s, ceil_mode=%s,"
           " count_include_pad=%s, layout=\"%s\")\n"
           "        return gv\n",
           tshape, c->op, int_list(ks, c->nsp, c->k), int_list(ss, c->nsp, c->s), int_list(ds, c->nsp, c->d),
           int_list(ps, 2 * c->nsp, pads), c->ceil_mode ? "True" : "False", c->count_include_pad ? "True" : "False",
           layouts[c->channels_last][c->nsp]);
  float *in[] = {x};
  const int nd[] = {c->nsp + 2};
  const int64_t *sh[] = {shape};
  tvmjit_tensor_t *out = run_model(body, 1, in, nd, sh);
  ck_assert_int_eq(tvmjit_tensor_ndim(out), c->nsp + 2);
  const int64_t *os = tvmjit_tensor_shape(out);
  for (int i = 0; i < c->nsp; i++) ck_assert_int_eq(os[c->channels_last ? 1 + i : 2 + i], oext[i]);
  const float *y = tvmjit_tensor_data(out);
  for (int n = 0; n < 2; n++)
    for (int ch = 0; ch < 3; ch++)
      for (int64_t f = 0; f < ototal / 6; f++) {
        int64_t o[3], rem = f;
        for (int i = c->nsp - 1; i >= 0; i--) o[i] = rem % oext[i], rem /= oext[i];
        int64_t k = offset(c, oext, n, ch, o);
        expect_close(c->op, (int)k, y[k], pool_ref(c, x, n, ch, o));
      }
  tvmjit_tensor_free(out);
}

START_TEST(pool1d_matches_reference) {
  const pool_case_t cases[] = {
      {"max_pool1d", 1, false, true, false, false, {11}, {3}, {2}, {1}, {1}, {1}},
      {"max_pool1d", 1, true, true, true, false, {10}, {3}, {2}, {2}, {1}, {0}},
      {"avg_pool1d", 1, false, false, false, false, {9}, {3}, {1}, {1}, {1}, {2}},
      {"avg_pool1d", 1, false, false, true, true, {10}, {3}, {3}, {1}, {1}, {1}},
      {"avg_pool1d", 1, true, false, true, false, {12}, {2}, {3}, {2}, {0}, {1}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_pool(&cases[i]);
}
END_TEST

START_TEST(pool3d_matches_reference) {
  const pool_case_t cases[] = {
      {"max_pool3d", 3, false, true, false, false, {4, 5, 6}, {2, 2, 3}, {2, 1, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
      {"max_pool3d", 3, true, true, true, false, {5, 4, 5}, {3, 2, 2}, {2, 2, 2}, {1, 1, 2}, {1, 0, 1}, {1, 0, 0}},
      {"avg_pool3d", 3, false, false, false, false, {4, 6, 5}, {2, 3, 2}, {1, 2, 2}, {1, 1, 1}, {1, 1, 0}, {0, 1, 1}},
      {"avg_pool3d", 3, false, false, true, true, {5, 5, 4}, {3, 3, 2}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}},
      {"avg_pool3d", 3, true, false, false, true, {4, 4, 4}, {2, 2, 2}, {2, 2, 2}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_pool(&cases[i]);
}
END_TEST

/* ---------------- adaptive_avg_pool1d / 3d ---------------- */

/* Mean of x (C=3 channels-first, spatial extents in) over the adaptive window of o. */
static double adaptive_ref(const float *x, int nsp, const int64_t *in, const int64_t *osz, int ch, const int64_t *o) {
  int64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, ext[3] = {1, 1, 1};
  for (int i = 0; i < nsp; i++) {
    lo[i] = o[i] * in[i] / osz[i];
    hi[i] = ((o[i] + 1) * in[i] + osz[i] - 1) / osz[i];
    ext[i] = in[i];
  }
  double s = 0;
  int64_t cnt = 0;
  for (int64_t a = lo[0]; a < hi[0]; a++)
    for (int64_t b = lo[1]; b < hi[1]; b++)
      for (int64_t c = lo[2]; c < hi[2]; c++) {
        s += x[((ch * ext[0] + a) * ext[1] + b) * ext[2] + c];
        cnt++;
      }
  return s / (double)cnt;
}

static void check_adaptive(int nsp, const int64_t *in, const int64_t *osz) {
  static float x[4096];
  int64_t shape[5] = {1, 3}, total = 3, ototal = 3;
  char tshape[64] = "1, 3", os[32], body[512];
  for (int i = 0; i < nsp; i++) {
    shape[2 + i] = in[i];
    total *= in[i];
    ototal *= osz[i];
    sprintf(tshape + strlen(tshape), ", %lld", (long long)in[i]);
  }
  fill(x, (int)total, 5);
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor((%s), dtype=\"float32\")):\n"
           "        gv = R.nn.adaptive_avg_pool%dd(x, output_size=%s)\n"
           "        return gv\n",
           tshape, nsp, int_list(os, nsp, osz));
  float *inp[] = {x};
  const int nd[] = {nsp + 2};
  const int64_t *sh[] = {shape};
  tvmjit_tensor_t *out = run_model(body, 1, inp, nd, sh);
  for (int i = 0; i < nsp; i++) ck_assert_int_eq(tvmjit_tensor_shape(out)[2 + i], osz[i]);
  const float *y = tvmjit_tensor_data(out);
  for (int64_t f = 0; f < ototal; f++) {
    int64_t o[3] = {0, 0, 0}, rem = f, full_o[3] = {1, 1, 1}, full_in[3] = {1, 1, 1};
    for (int i = nsp - 1; i >= 0; i--) o[i] = rem % osz[i], rem /= osz[i];
    for (int i = 0; i < nsp; i++) full_o[i] = osz[i], full_in[i] = in[i];
    expect_close("adaptive_avg_pool", (int)f, y[f], adaptive_ref(x, 3, full_in, full_o, (int)rem, o));
  }
  tvmjit_tensor_free(out);
}

START_TEST(adaptive_pool1d_3d_match_reference) {
  check_adaptive(1, (const int64_t[]){12}, (const int64_t[]){4}); /* even windows */
  check_adaptive(1, (const int64_t[]){7}, (const int64_t[]){3});  /* overlapping windows */
  check_adaptive(3, (const int64_t[]){4, 6, 8}, (const int64_t[]){2, 3, 1});
  check_adaptive(3, (const int64_t[]){5, 7, 3}, (const int64_t[]){2, 3, 2});
}
END_TEST


/* ---------------- conv3d ---------------- */

/* out[n, o, z, y, x] = sum_c,kd,kh,kw pad(x)[n, g*C/G + c, z*s + kd*d, ...] * w[o, c, kd, kh, kw] */
static void check_conv3d(bool channels_last, int64_t groups, const int64_t *st, const int64_t *dl,
                         const int64_t *pad /* 6: befores then afters */) {
  enum { N = 2, C = 4, O = 6, D = 5, H = 6, W = 5, K0 = 2, K1 = 3, K2 = 2 };
  static float x[N * C * D * H * W], w[O * C * K0 * K1 * K2];
  const int64_t in[3] = {D, H, W}, k[3] = {K0, K1, K2};
  int64_t ci = C / groups, od[3];
  fill(x, N * C * D * H * W, 7);
  fill(w, (int)(O * ci * K0 * K1 * K2), 8);
  for (int i = 0; i < 3; i++) od[i] = (in[i] + pad[i] + pad[3 + i] - dl[i] * (k[i] - 1) - 1) / st[i] + 1;
  char body[1024], s1[32], s2[32], s3[64];
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor(%s, dtype=\"float32\"), w: R.Tensor((%d, %lld, %d, %d, %d), dtype=\"float32\")):\n"
           "        gv = R.nn.conv3d(x, w, strides=%s, dilation=%s, padding=%s, groups=%lld, data_layout=\"%s\")\n"
           "        return gv\n",
           channels_last ? "(2, 5, 6, 5, 4)" : "(2, 4, 5, 6, 5)", O, (long long)ci, K0, K1, K2, int_list(s1, 3, st),
           int_list(s2, 3, dl), int_list(s3, 6, pad), (long long)groups, channels_last ? "NDHWC" : "NCDHW");
  /* the input in the model's layout */
  static float xl[N * C * D * H * W];
  for (int n = 0; n < N; n++)
    for (int c = 0; c < C; c++)
      for (int i = 0; i < D * H * W; i++)
        xl[channels_last ? (n * D * H * W + i) * C + c : (n * C + c) * D * H * W + i] = x[(n * C + c) * D * H * W + i];
  const int64_t xs_first[] = {N, C, D, H, W}, xs_last[] = {N, D, H, W, C}, ws[] = {O, ci, K0, K1, K2};
  float *inp[] = {xl, w};
  const int nd[] = {5, 5};
  const int64_t *sh[] = {channels_last ? xs_last : xs_first, ws};
  tvmjit_tensor_t *out = run_model(body, 2, inp, nd, sh);
  const float *y = tvmjit_tensor_data(out);
  int64_t plane = od[0] * od[1] * od[2];
  for (int n = 0; n < N; n++)
    for (int o = 0; o < O; o++)
      for (int64_t f = 0; f < plane; f++) {
        int64_t z = f / (od[1] * od[2]), yy = f / od[2] % od[1], xx = f % od[2];
        int64_t g = o / (O / groups);
        double acc = 0;
        for (int64_t c = 0; c < ci; c++)
          for (int a = 0; a < K0; a++)
            for (int b = 0; b < K1; b++)
              for (int e = 0; e < K2; e++) {
                int64_t p0 = z * st[0] - pad[0] + a * dl[0], p1 = yy * st[1] - pad[1] + b * dl[1],
                        p2 = xx * st[2] - pad[2] + e * dl[2];
                if (p0 < 0 || p0 >= D || p1 < 0 || p1 >= H || p2 < 0 || p2 >= W) continue;
                acc += (double)x[(((n * C + g * ci + c) * D + p0) * H + p1) * W + p2] *
                       w[(((o * ci + c) * K0 + a) * K1 + b) * K2 + e];
              }
        int64_t idx = channels_last ? (n * plane + f) * O + o : (n * O + o) * plane + f;
        expect_close("conv3d", (int)idx, y[idx], acc);
      }
  tvmjit_tensor_free(out);
}

START_TEST(conv3d_matches_reference) {
  check_conv3d(false, 1, (const int64_t[]){1, 1, 1}, (const int64_t[]){1, 1, 1}, (const int64_t[]){0, 0, 0, 0, 0, 0});
  check_conv3d(false, 2, (const int64_t[]){2, 1, 2}, (const int64_t[]){1, 2, 1}, (const int64_t[]){1, 1, 0, 0, 2, 1});
  check_conv3d(true, 1, (const int64_t[]){1, 2, 1}, (const int64_t[]){2, 1, 1}, (const int64_t[]){1, 1, 1, 1, 1, 1});
}
END_TEST

/* ---------------- losses ---------------- */

static tvmjit_tensor_t *run_typed(const char *body, int n_in, tvmjit_tensor_t *const *in) {
  tvmjit_tensor_t *out = NULL;
  tu_run_model(body, n_in, in, 1, &out);
  return out;
}

START_TEST(cross_entropy_matches_definition) {
  enum { N = 3, K = 5 };
  static float x[N * K], y[N * K];
  fill(x, N * K, 3);
  fill(y, N * K, 4);
  const int64_t s2[] = {N, K}, s1[] = {K};
  tvmjit_tensor_t *in[2];
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, s2, x, &in[0]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, s2, y, &in[1]));
  tvmjit_tensor_t *out = run_typed("    def main(x: R.Tensor((3, 5), \"float32\"), y: R.Tensor((3, 5), \"float32\")):\n"
                                   "        gv = R.nn.cross_entropy_with_logits(x, y)\n"
                                   "        return gv\n",
                                   2, in);
  double want = 0;
  for (int i = 0; i < N * K; i++) want -= (double)x[i] * y[i];
  ck_assert_int_eq(tvmjit_tensor_ndim(out), 0);
  expect_close("cross_entropy_with_logits", 0, ((const float *)tvmjit_tensor_data(out))[0], want / N);
  tvmjit_tensor_free(out);
  tvmjit_tensor_free(in[0]);
  tvmjit_tensor_free(in[1]);
  /* 1-D: no division */
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 1, s1, x, &in[0]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 1, s1, y, &in[1]));
  out = run_typed("    def main(x: R.Tensor((5,), \"float32\"), y: R.Tensor((5,), \"float32\")):\n"
                  "        gv = R.nn.cross_entropy_with_logits(x, y)\n"
                  "        return gv\n",
                  2, in);
  want = 0;
  for (int i = 0; i < K; i++) want -= (double)x[i] * y[i];
  expect_close("cross_entropy_with_logits 1-D", 0, ((const float *)tvmjit_tensor_data(out))[0], want);
  tvmjit_tensor_free(out);
  tvmjit_tensor_free(in[0]);
  tvmjit_tensor_free(in[1]);
}
END_TEST

/* PyTorch's nll_loss: loss[n, d] = -w[t] * pred[n, t, d] (0 where t == ignore_index);
 * mean divides by the sum of w[t] over the kept targets. */
static void check_nll(const char *reduction, bool weighted, bool batched) {
  enum { N = 2, C = 4, D = 3 };
  static float pred[N * C * D], w[C];
  static int64_t tgt[N * D] = {0, 3, -1, 2, 1, -1};
  fill(pred, N * C * D, 9);
  for (int c = 0; c < C; c++) w[c] = 0.5f + 0.25f * (float)c;
  char body[1024];
  snprintf(body, sizeof body,
           "    def main(p: R.Tensor(%s, \"float32\"), t: R.Tensor(%s, \"int64\")%s):\n"
           "        gv = R.nn.nll_loss(p, t%s, reduction=\"%s\", ignore_index=-1)\n"
           "        return gv\n",
           batched ? "(2, 4, 3)" : "(4,)", batched ? "(2, 3)" : "()", weighted ? ", w: R.Tensor((4,), \"float32\")" : "",
           weighted ? ", w" : "", reduction);
  const int64_t ps[] = {N, C, D}, ts[] = {N, D}, wsh[] = {C};
  tvmjit_tensor_t *in[3];
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, batched ? 3 : 1, batched ? ps : (const int64_t[]){C}, pred, &in[0]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_INT64, batched ? 2 : 0, ts, batched ? tgt : &tgt[1], &in[1]));
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 1, wsh, w, &in[2]));
  tvmjit_tensor_t *out = run_typed(body, weighted ? 3 : 2, in);
  const float *y = tvmjit_tensor_data(out);
  double sum = 0, wsum = 0, loss[N * D];
  int cells = batched ? N * D : 1;
  for (int i = 0; i < cells; i++) {
    int64_t t = batched ? tgt[i] : tgt[1];
    double wt = t == -1 ? 0 : weighted ? w[t] : 1.0;
    double pv = t == -1 ? 0 : batched ? pred[((i / D) * C + t) * D + i % D] : pred[t];
    loss[i] = -wt * pv;
    sum += loss[i];
    wsum += wt;
  }
  if (strcmp(reduction, "none") == 0) {
    ck_assert_int_eq(tvmjit_tensor_ndim(out), batched ? 2 : 0);
    for (int i = 0; i < cells; i++) expect_close("nll_loss none", i, y[i], loss[i]);
  } else {
    ck_assert_int_eq(tvmjit_tensor_ndim(out), 0);
    expect_close(reduction, 0, y[0], strcmp(reduction, "sum") == 0 ? sum : sum / wsum);
  }
  tvmjit_tensor_free(out);
  for (int i = 0; i < 3; i++) tvmjit_tensor_free(in[i]);
}

START_TEST(nll_loss_matches_pytorch_definition) {
  const char *reductions[] = {"mean", "sum", "none"};
  for (int r = 0; r < 3; r++)
    for (int wt = 0; wt < 2; wt++) {
      check_nll(reductions[r], wt, true);
      check_nll(reductions[r], wt, false);
    }
}
END_TEST

/* dropout: TVM's (output, mask) tuple of the data's struct info; LegalizeOps keeps it. */
START_TEST(dropout_infers_a_tuple_and_is_kept) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *out = tu_legalize_main(a, "    def main(x: R.Tensor((2, 3), dtype=\"float16\")):\n"
                                               "        gv = R.nn.dropout(x, rate=0.25)\n"
                                               "        return gv\n");
  char *text = tj_print_module(out);
  ck_assert_ptr_nonnull(text);
  ck_assert_msg(strstr(text, "R.nn.dropout(x, rate=0.25") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "R.Tuple(R.Tensor((2, 3), dtype=\"float16\"), R.Tensor((2, 3), dtype=\"float16\"))") != NULL,
                "%s", text);
  free(text);
  tj_arena_free(a);
}
END_TEST


/* ---------------- attention ---------------- */

/* softmax(q k^T * scale + bias, keys j > i + offset masked out) v, per batch and head,
 * in BSNH; offset |Sq - Skv| for BottomRight. */
static void check_attention(const char *mask, bool with_bias, bool with_scale) {
  enum { B = 2, SQ = 5, SK = 7, N = 3, H = 4, HV = 5 };
  static float q[B * SQ * N * H], k[B * SK * N * H], v[B * SK * N * HV], bias[N * SK];
  fill(q, B * SQ * N * H, 11);
  fill(k, B * SK * N * H, 12);
  fill(v, B * SK * N * HV, 13);
  fill(bias, N * SK, 14);
  for (int i = 0; i < B * SQ * N * H; i++) q[i] *= 0.3f;
  char body[1024], attrs[128] = "";
  if (with_scale) strcat(attrs, ", scale=0.25");
  if (mask) sprintf(attrs + strlen(attrs), ", causal_mask=\"%s\"", mask);
  snprintf(body, sizeof body,
           "    def main(q: R.Tensor((2, 5, 3, 4), \"float32\"), k: R.Tensor((2, 7, 3, 4), \"float32\"),"
           " v: R.Tensor((2, 7, 3, 5), \"float32\"), b: R.Tensor((1, 3, 1, 7), \"float32\")):\n"
           "        gv = R.nn.attention(q, k, v%s%s)\n"
           "        return gv\n",
           with_bias ? ", b" : "", attrs);
  const int64_t qs[] = {B, SQ, N, H}, ks[] = {B, SK, N, H}, vs[] = {B, SK, N, HV}, bs[] = {1, N, 1, SK};
  float *in[] = {q, k, v, bias};
  const int nd[] = {4, 4, 4, 4};
  const int64_t *sh[] = {qs, ks, vs, bs};
  tvmjit_tensor_t *out = run_model(body, 4, in, nd, sh);
  const float *y = tvmjit_tensor_data(out);
  double scale = with_scale ? 0.25 : 1.0 / sqrt((double)H);
  int off = mask && strcmp(mask, "BottomRight") == 0 ? SK - SQ : 0;
  for (int b = 0; b < B; b++)
    for (int h = 0; h < N; h++)
      for (int i = 0; i < SQ; i++) {
        double sc[SK], mx = -INFINITY, sum = 0;
        for (int j = 0; j < SK; j++) {
          double d = 0;
          for (int e = 0; e < H; e++) d += (double)q[((b * SQ + i) * N + h) * H + e] * k[((b * SK + j) * N + h) * H + e];
          sc[j] = d * scale + (with_bias ? bias[h * SK + j] : 0);
          bool masked = mask && j > i + off;
          if (masked) sc[j] = -INFINITY;
          if (sc[j] > mx) mx = sc[j];
        }
        for (int j = 0; j < SK; j++) sum += exp(sc[j] - mx);
        for (int e = 0; e < HV; e++) {
          double o = 0;
          for (int j = 0; j < SK; j++) o += exp(sc[j] - mx) / sum * v[((b * SK + j) * N + h) * HV + e];
          int idx = ((b * SQ + i) * N + h) * HV + e;
          expect_close("attention", idx, y[idx], o);
        }
      }
  tvmjit_tensor_free(out);
}

START_TEST(attention_matches_masked_softmax) {
  check_attention(NULL, false, false);
  check_attention(NULL, true, true);
  check_attention("TopLeft", true, true);
  check_attention("BottomRight", false, true);
  check_attention("BottomRight", true, false);
}
END_TEST

/* ---------------- schedules ---------------- */

/* Every nest of each legalized op is rewritten by a CPU schedule rule (no scalar loop
 * nest left on a hot path). */
START_TEST(every_nest_gets_a_schedule) {
  const char *ops[] = {
      "R.nn.max_pool1d(x, pool_size=3, strides=2, padding=1)",
      "R.nn.avg_pool1d(x, pool_size=3, strides=2, padding=1, ceil_mode=True)",
      "R.nn.adaptive_avg_pool1d(x, output_size=5)",
      "R.nn.max_pool3d(y, pool_size=2, strides=2)",
      "R.nn.avg_pool3d(y, pool_size=3, strides=1, padding=1)",
      "R.nn.adaptive_avg_pool3d(y, output_size=1)",
      "R.nn.conv3d(y, k, padding=1)",
      "R.nn.conv3d(y, k, strides=2, dilation=[1, 2, 1])",
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    char src[2048];
    snprintf(src, sizeof src,
             "    def main(x: R.Tensor((2, 16, 32), dtype=\"float32\"), y: R.Tensor((1, 8, 6, 8, 8), dtype=\"float32\"),"
             " k: R.Tensor((16, 8, 3, 3, 3), dtype=\"float32\")):\n"
             "        gv = %s\n"
             "        return gv\n",
             ops[i]);
    tu_check_every_nest_scheduled(src, ops[i], false);
  }
}
END_TEST

START_TEST(inference_errors) {
  expect_error("    def main(x: R.Tensor((2, 3, 4, 4), dtype=\"float32\")):\n"
               "        gv = R.nn.max_pool1d(x, pool_size=2)\n"
               "        return gv\n",
               "must be 3-D");
  expect_error("    def main(x: R.Tensor((2, 3, 4), dtype=\"float32\")):\n"
               "        gv = R.nn.avg_pool1d(x, pool_size=7)\n"
               "        return gv\n",
               "empty");
  expect_error("    def main(x: R.Tensor((2, 3, 4, 4, 4), dtype=\"float32\")):\n"
               "        gv = R.nn.max_pool3d(x, pool_size=2, layout=\"NCHW\")\n"
               "        return gv\n",
               "layout");
  expect_error("    def main(x: R.Tensor((2, 3, 4, 4, 4), dtype=\"float32\")):\n"
               "        gv = R.nn.avg_pool3d(x, pool_size=[2, 2])\n"
               "        return gv\n",
               "'pool_size' needs 1 or 3 values");
  expect_error("    def main(x: R.Tensor((2, 3, 4), dtype=\"float32\")):\n"
               "        gv = R.nn.max_pool1d(x, padding=[1, 1, 1])\n"
               "        return gv\n",
               "'padding' needs");
  expect_error("    def main(x: R.Tensor((2, 4, 4, 4, 4), dtype=\"float32\"), w: R.Tensor((8, 3, 3, 3, 3), dtype=\"float32\")):\n"
               "        gv = R.nn.conv3d(x, w)\n"
               "        return gv\n",
               "conv3d: data has 4 input channels but the weight (OIDHW 8x3x3x3x3) expects 3 x groups 1");
  expect_error("    def main(x: R.Tensor((2, 4, 4, 4), dtype=\"float32\"), w: R.Tensor((8, 4, 3, 3, 3), dtype=\"float32\")):\n"
               "        gv = R.nn.conv3d(x, w)\n"
               "        return gv\n",
               "data must be 5-D");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\"), y: R.Tensor((2, 4), dtype=\"float32\")):\n"
               "        gv = R.nn.cross_entropy_with_logits(x, y)\n"
               "        return gv\n",
               "same shape");
  expect_error("    def main(p: R.Tensor((2, 3), dtype=\"float32\"), t: R.Tensor((2,), dtype=\"float32\")):\n"
               "        gv = R.nn.nll_loss(p, t)\n"
               "        return gv\n",
               "int or uint");
  expect_error("    def main(p: R.Tensor((2, 3), dtype=\"float32\"), t: R.Tensor((2,), dtype=\"int64\")):\n"
               "        gv = R.nn.nll_loss(p, t, reduction=\"avg\")\n"
               "        return gv\n",
               "'reduction'");
  expect_error("    def main(p: R.Tensor((2, 3, 4), dtype=\"float32\"), t: R.Tensor((2, 5), dtype=\"int64\")):\n"
               "        gv = R.nn.nll_loss(p, t)\n"
               "        return gv\n",
               "extra dims");
  const char *qkv = "    def main(q: R.Tensor((2, 5, 4, 8), \"float32\"), k: R.Tensor((2, 6, 4, 8), \"float32\"),"
                    " v: R.Tensor((2, 6, 4, 3), \"float32\"), b: R.Tensor(%s, \"float32\"), k3: R.Tensor((2, 6, 3, 8), \"float32\"),"
                    " k7: R.Tensor((2, 7, 4, 8), \"float32\")):\n"
                    "        gv = %s\n"
                    "        return gv\n";
  struct {
    const char *bias, *call, *needle;
  } att[] = {
      {"(2, 4, 5, 6)", "R.nn.attention(q, k3, v)", "number of heads should be a multiple of"},
      {"(2, 4, 5, 6)", "R.nn.attention(q, k7, v)", "key sequence length should be the same as the value"},
      {"(2, 4, 5, 6)", "R.nn.attention(q, k, v, b, causal_mask=\"Top\")", "'causal_mask'"},
      {"(2, 3, 5, 6)", "R.nn.attention(q, k, v, b)", "number of heads should be the same as or broadcastable"},
      {"(2, 4, 5, 5)", "R.nn.attention(q, k, v, b)", "key sequence length should be the same as the bias"},
      {"(4, 5, 6)", "R.nn.attention(q, k, v, b)", "bias must be 4-D"},
      {"(3, 5, 4, 8)", "R.nn.attention(b, k, v)", "query batch size"},
  };
  for (size_t i = 0; i < sizeof att / sizeof att[0]; i++) {
    char body[1024];
    snprintf(body, sizeof body, qkv, att[i].bias, att[i].call);
    expect_error(body, att[i].needle);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_nn3");
  TCase *tc = tcase_create("nn3");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, pool1d_matches_reference);
  tcase_add_test(tc, pool3d_matches_reference);
  tcase_add_test(tc, adaptive_pool1d_3d_match_reference);
  tcase_add_test(tc, conv3d_matches_reference);
  tcase_add_test(tc, cross_entropy_matches_definition);
  tcase_add_test(tc, nll_loss_matches_pytorch_definition);
  tcase_add_test(tc, dropout_infers_a_tuple_and_is_kept);
  tcase_add_test(tc, attention_matches_masked_softmax);
  tcase_add_test(tc, every_nest_gets_a_schedule);
  tcase_add_test(tc, inference_errors);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
