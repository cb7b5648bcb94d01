/* NN operators end to end (parse, default pipeline, JIT, run through the public API),
 * checked against reference loops written here in double precision: max/avg pooling
 * (strides, padding, dilation, ceil_mode, count_include_pad), adaptive average pooling
 * (1x1, divisible and non-divisible windows), gelu, gelu_tanh, silu, leakyrelu,
 * log_softmax, batch_norm (TVM's LegalizeOps form: batch statistics, a tuple of three),
 * and the inference errors TVM reports. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/module.h"
#include "ir/op.h"
#include "ir/text/parse.h"
#include "ir/visit.h"
#include "support/arena.h"
#include "relax_model.h"
#include "passes.h"
#include "testutil.h"
#include "transforms/pass_manager.h"
#include "transforms/tir/schedule.h"
#include "tvmjit.h"

#define TOL 1e-4


/* Loads `body` (the main function from `def main` on) and runs it on n_in float32
 * inputs; returns n_out outputs (converted to float32). */
static void run_model(const char *body, int n_in, float *const *in, const int *in_ndim, const int64_t *const *in_shape,
                      int n_out, tvmjit_tensor_t **outs) {
  tvmjit_tensor_t *ts[8];
  for (int i = 0; i < n_in; i++) ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, in_ndim[i], in_shape[i], in[i], &ts[i]));
  tu_run_model(body, n_in, ts, n_out, outs);
  for (int i = 0; i < n_in; i++) tvmjit_tensor_free(ts[i]);
}


static void expect_close(const char *what, int i, double got, double want, double tol) {
  ck_assert_msg(fabs(got - want) <= tol * (1 + fabs(want)), "%s[%d] = %.9g, want %.9g", what, i, got, want);
}

static void check_shape(const tvmjit_tensor_t *t, int ndim, const int64_t *shape) {
  ck_assert_int_eq(tvmjit_tensor_ndim(t), ndim);
  for (int i = 0; i < ndim; i++) ck_assert_int_eq(tvmjit_tensor_shape(t)[i], shape[i]);
}

/* A deterministic ramp with a sign pattern, so that max and means are not trivial. */
static void fill(float *x, int n, int seed) {
  for (int i = 0; i < n; i++) x[i] = (float)(((i * 37 + seed * 11) % 23) - 11) * 0.25f + 0.01f * (float)(i % 7);
}

/* ---------------- pooling reference (NCHW) ---------------- */

typedef struct pool_cfg {
  int N, C, H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  int ceil_mode, count_include_pad, is_max;
} pool_cfg_t;

static int pool_out(int in, int k, int s, int d, int p0, int p1, int ceil_mode) {
  int num = in + p0 + p1 - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  return num / s + 1;
}

static double pool_ref(const pool_cfg_t *c, const float *x, int n, int ch, int oh, int ow) {
  double acc = c->is_max ? -INFINITY : 0;
  int cnt = 0;
  for (int i = 0; i < c->kh; i++)
    for (int j = 0; j < c->kw; j++) {
      int h = oh * c->sh + i * c->dh - c->pt, w = ow * c->sw + j * c->dw - c->pl;
      if (h < 0 || w < 0 || h >= c->H || w >= c->W) {
        if (c->is_max && acc < -3.4028234663852886e38) acc = -3.4028234663852886e38; /* padded with lowest */
        continue;
      }
      double v = x[((n * c->C + ch) * c->H + h) * c->W + w];
      if (c->is_max) acc = v > acc ? v : acc;
      else acc += v;
      cnt++;
    }
  if (c->is_max) return acc;
  if (c->count_include_pad) {
    /* TOPI: padded cells count, ceil_mode's extra cells do not */
    int n_el = 1;
    int st[2] = {oh * c->sh - c->pt, ow * c->sw - c->pl}, ext[2] = {c->H + c->pb, c->W + c->pr};
    int k[2] = {c->kh, c->kw}, d[2] = {c->dh, c->dw};
    for (int a = 0; a < 2; a++) {
      int end = st[a] + (k[a] - 1) * d[a];
      if (end > ext[a] - 1) end = ext[a] - 1;
      n_el *= (end - st[a]) / d[a] + 1;
    }
    return acc / n_el;
  }
  return acc / (cnt > 0 ? cnt : 1);
}

static void check_pool(const pool_cfg_t *c) {
  char body[2048];
  int OH = pool_out(c->H, c->kh, c->sh, c->dh, c->pt, c->pb, c->ceil_mode);
  int OW = pool_out(c->W, c->kw, c->sw, c->dw, c->pl, c->pr, c->ceil_mode);
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor((%d, %d, %d, %d), dtype=\"float32\")):\n"
           "        gv = R.nn.%s(x, pool_size=[%d, %d], strides=[%d, %d], dilation=[%d, %d], "
           "padding=[%d, %d, %d, %d], ceil_mode=%s, count_include_pad=%s)\n"
           "        return gv\n",
           c->N, c->C, c->H, c->W, c->is_max ? "max_pool2d" : "avg_pool2d", c->kh, c->kw, c->sh, c->sw, c->dh, c->dw,
           c->pt, c->pl, c->pb, c->pr, c->ceil_mode ? "True" : "False", c->count_include_pad ? "True" : "False");
  int n = c->N * c->C * c->H * c->W;
  float x[4096];
  ck_assert_int_le(n, 4096);
  fill(x, n, c->kh + c->sh);
  int64_t shape[4] = {c->N, c->C, c->H, c->W};
  float *ins[1] = {x};
  int nd[1] = {4};
  const int64_t *shapes[1] = {shape};
  tvmjit_tensor_t *out = NULL;
  run_model(body, 1, ins, nd, shapes, 1, &out);
  int64_t oshape[4] = {c->N, c->C, OH, OW};
  check_shape(out, 4, oshape);
  const float *y = tvmjit_tensor_data(out);
  for (int b = 0; b < c->N; b++)
    for (int ch = 0; ch < c->C; ch++)
      for (int oh = 0; oh < OH; oh++)
        for (int ow = 0; ow < OW; ow++) {
          int i = ((b * c->C + ch) * OH + oh) * OW + ow;
          expect_close(c->is_max ? "max_pool2d" : "avg_pool2d", i, y[i], pool_ref(c, x, b, ch, oh, ow), TOL);
        }
  tvmjit_tensor_free(out);
}

START_TEST(max_pool2d_matches_reference) {
  /* 3x3 s2 p1 (ResNet stem), no padding, dilation 2, ceil_mode with padding, odd sizes */
  pool_cfg_t cases[] = {
      {.N = 2, .C = 3, .H = 9, .W = 11, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .is_max = 1},
      {.N = 1, .C = 2, .H = 8, .W = 8, .kh = 2, .kw = 2, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .is_max = 1},
      {.N = 1, .C = 2, .H = 10, .W = 9, .kh = 3, .kw = 2, .sh = 1, .sw = 2, .dh = 2, .dw = 2, .pt = 1, .pl = 0, .pb = 2, .pr = 1, .is_max = 1},
      {.N = 1, .C = 3, .H = 10, .W = 10, .kh = 3, .kw = 3, .sh = 3, .sw = 3, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .ceil_mode = 1, .is_max = 1},
      {.N = 1, .C = 1, .H = 7, .W = 6, .kh = 2, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .ceil_mode = 1, .is_max = 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_pool(&cases[i]);
}
END_TEST

START_TEST(avg_pool2d_matches_reference) {
  pool_cfg_t cases[] = {
      {.N = 2, .C = 3, .H = 9, .W = 11, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1},
      {.N = 2, .C = 3, .H = 9, .W = 11, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .count_include_pad = 1},
      {.N = 1, .C = 2, .H = 8, .W = 7, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1},
      {.N = 1, .C = 3, .H = 10, .W = 10, .kh = 3, .kw = 3, .sh = 3, .sw = 3, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .ceil_mode = 1},
      {.N = 1, .C = 3, .H = 10, .W = 10, .kh = 3, .kw = 3, .sh = 3, .sw = 3, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .ceil_mode = 1, .count_include_pad = 1},
      {.N = 1, .C = 2, .H = 10, .W = 9, .kh = 3, .kw = 2, .sh = 1, .sw = 2, .dh = 2, .dw = 2, .pt = 1, .pl = 0, .pb = 2, .pr = 1},
      /* padding larger than the window: some windows see only padding (count 0 -> 1) */
      {.N = 1, .C = 1, .H = 4, .W = 4, .kh = 2, .kw = 2, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 2, .pl = 2, .pb = 2, .pr = 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_pool(&cases[i]);
}
END_TEST

static void check_adaptive(int H, int W, int OH, int OW, bool give_size) {
  char body[1024];
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor((2, 3, %d, %d), dtype=\"float32\")):\n"
           "        gv = R.nn.adaptive_avg_pool2d(x%s)\n"
           "        return gv\n",
           H, W, give_size ? (OH == 1 && OW == 1 ? ", output_size=[1, 1]" : "") : "");
  if (give_size && !(OH == 1 && OW == 1))
    snprintf(body, sizeof body,
             "    def main(x: R.Tensor((2, 3, %d, %d), dtype=\"float32\")):\n"
             "        gv = R.nn.adaptive_avg_pool2d(x, output_size=[%d, %d])\n"
             "        return gv\n",
             H, W, OH, OW);
  int n = 6 * H * W;
  float x[2048];
  fill(x, n, H);
  int64_t shape[4] = {2, 3, H, W};
  float *ins[1] = {x};
  int nd[1] = {4};
  const int64_t *shapes[1] = {shape};
  tvmjit_tensor_t *out = NULL;
  run_model(body, 1, ins, nd, shapes, 1, &out);
  int64_t oshape[4] = {2, 3, OH, OW};
  check_shape(out, 4, oshape);
  const float *y = tvmjit_tensor_data(out);
  for (int b = 0; b < 6; b++)
    for (int i = 0; i < OH; i++)
      for (int j = 0; j < OW; j++) {
        int h0 = i * H / OH, h1 = ((i + 1) * H + OH - 1) / OH, w0 = j * W / OW, w1 = ((j + 1) * W + OW - 1) / OW;
        double s = 0;
        for (int h = h0; h < h1; h++)
          for (int w = w0; w < w1; w++) s += x[(b * H + h) * W + w];
        int k = (b * OH + i) * OW + j;
        expect_close("adaptive_avg_pool2d", k, y[k], s / ((h1 - h0) * (w1 - w0)), TOL);
      }
  tvmjit_tensor_free(out);
}

START_TEST(adaptive_avg_pool2d_matches_reference) {
  check_adaptive(7, 7, 1, 1, true);   /* the global pool of a ResNet head */
  check_adaptive(8, 6, 4, 3, true);   /* divisible windows */
  check_adaptive(5, 7, 3, 4, true);   /* overlapping, varying windows */
  check_adaptive(5, 4, 5, 4, false);  /* output_size None keeps H, W: identity */
}
END_TEST

/* ---------------- activations ---------------- */

static double gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double gelu_tanh(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
static double silu(double x) { return x / (1 + exp(-x)); }
static double leaky(double x) { return x > 0 ? x : 0.03 * x; }

START_TEST(activations_match_libm) {
  const char *body =
      "    def main(x: R.Tensor((3, 37), dtype=\"float32\")):\n"
      "        with R.dataflow():\n"
      "            a = R.nn.gelu(x)\n"
      "            b = R.nn.gelu_tanh(x)\n"
      "            c = R.nn.silu(x)\n"
      "            d = R.nn.leakyrelu(x, 0.03)\n"
      "            e = R.nn.leakyrelu(x)\n"
      "            gv = (a, b, c, d, e)\n"
      "            R.output(gv)\n"
      "        return gv\n";
  float x[111];
  for (int i = 0; i < 111; i++) x[i] = -8.0f + 16.0f * (float)i / 110.0f;
  x[0] = 0.0f;
  x[1] = -30.0f;
  x[2] = 30.0f;
  int64_t shape[2] = {3, 37};
  float *ins[1] = {x};
  int nd[1] = {2};
  const int64_t *shapes[1] = {shape};
  tvmjit_tensor_t *outs[5] = {NULL};
  run_model(body, 1, ins, nd, shapes, 5, outs);
  const float *a = tvmjit_tensor_data(outs[0]), *b = tvmjit_tensor_data(outs[1]), *c = tvmjit_tensor_data(outs[2]);
  const float *d = tvmjit_tensor_data(outs[3]), *e = tvmjit_tensor_data(outs[4]);
  for (int i = 0; i < 111; i++) {
    expect_close("gelu", i, a[i], gelu(x[i]), TOL);
    expect_close("gelu_tanh", i, b[i], gelu_tanh(x[i]), TOL);
    expect_close("silu", i, c[i], silu(x[i]), TOL);
    expect_close("leakyrelu", i, d[i], leaky(x[i]), TOL);
    expect_close("leakyrelu default", i, e[i], x[i] > 0 ? x[i] : 0.01 * x[i], TOL);
  }
  for (int i = 0; i < 5; i++) tvmjit_tensor_free(outs[i]);
}
END_TEST

START_TEST(log_softmax_matches_reference) {
  /* axis -2 of a 3-D tensor (not the innermost) and axis -1 */
  const char *body =
      "    def main(x: R.Tensor((2, 5, 7), dtype=\"float32\")):\n"
      "        with R.dataflow():\n"
      "            a = R.nn.log_softmax(x, axis=-2)\n"
      "            b = R.nn.log_softmax(x)\n"
      "            gv = (a, b)\n"
      "            R.output(gv)\n"
      "        return gv\n";
  float x[70];
  fill(x, 70, 3);
  x[5] = 60.0f; /* large logit: the max subtraction keeps it finite */
  int64_t shape[3] = {2, 5, 7};
  float *ins[1] = {x};
  int nd[1] = {3};
  const int64_t *shapes[1] = {shape};
  tvmjit_tensor_t *outs[2] = {NULL};
  run_model(body, 1, ins, nd, shapes, 2, outs);
  const float *a = tvmjit_tensor_data(outs[0]), *b = tvmjit_tensor_data(outs[1]);
  for (int n = 0; n < 2; n++)
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 7; j++) {
        int k = (n * 5 + i) * 7 + j;
        double m = -INFINITY, s = 0;
        for (int t = 0; t < 5; t++) m = fmax(m, x[(n * 5 + t) * 7 + j]);
        for (int t = 0; t < 5; t++) s += exp(x[(n * 5 + t) * 7 + j] - m);
        expect_close("log_softmax axis=-2", k, a[k], x[k] - m - log(s), TOL);
        m = -INFINITY, s = 0;
        for (int t = 0; t < 7; t++) m = fmax(m, x[(n * 5 + i) * 7 + t]);
        for (int t = 0; t < 7; t++) s += exp(x[(n * 5 + i) * 7 + t] - m);
        expect_close("log_softmax axis=-1", k, b[k], x[k] - m - log(s), TOL);
      }
  for (int i = 0; i < 2; i++) tvmjit_tensor_free(outs[i]);
}
END_TEST

/* ---------------- batch_norm ---------------- */

START_TEST(batch_norm_matches_tvm_legalization) {
  /* TVM's LegalizeOps computes the training form: normalise with the batch mean and
   * biased variance; outputs 1 and 2 are 0.9 * moving + 0.1 * batch statistic. The
   * first output is also taken with TupleGetItem and passed through relu. */
  const char *body =
      "    def main(x: R.Tensor((2, 3, 4, 5), dtype=\"float32\"), g: R.Tensor((3,), dtype=\"float32\"),"
      " b: R.Tensor((3,), dtype=\"float32\"), mm: R.Tensor((3,), dtype=\"float32\"),"
      " mv: R.Tensor((3,), dtype=\"float32\")):\n"
      "        with R.dataflow():\n"
      "            bn = R.nn.batch_norm(x, g, b, mm, mv, axis=1, epsilon=1e-3)\n"
      "            y = bn[0]\n"
      "            r = R.nn.relu(y)\n"
      "            gv = (r, bn[1], bn[2])\n"
      "            R.output(gv)\n"
      "        return gv\n";
  float x[120], g[3] = {1.5f, -0.5f, 2.0f}, b[3] = {0.1f, 0.2f, -0.3f}, mm[3] = {0.5f, -1.0f, 2.0f},
                mv[3] = {1.0f, 2.0f, 0.25f};
  fill(x, 120, 5);
  int64_t xs[4] = {2, 3, 4, 5}, cs[1] = {3};
  float *ins[5] = {x, g, b, mm, mv};
  int nd[5] = {4, 1, 1, 1, 1};
  const int64_t *shapes[5] = {xs, cs, cs, cs, cs};
  tvmjit_tensor_t *outs[3] = {NULL};
  run_model(body, 5, ins, nd, shapes, 3, outs);
  check_shape(outs[0], 4, xs);
  check_shape(outs[1], 1, cs);
  check_shape(outs[2], 1, cs);
  const float *y = tvmjit_tensor_data(outs[0]), *m1 = tvmjit_tensor_data(outs[1]), *v1 = tvmjit_tensor_data(outs[2]);
  for (int c = 0; c < 3; c++) {
    double mean = 0, var = 0;
    for (int n = 0; n < 2; n++)
      for (int i = 0; i < 20; i++) mean += x[(n * 3 + c) * 20 + i];
    mean /= 40;
    for (int n = 0; n < 2; n++)
      for (int i = 0; i < 20; i++) var += pow(x[(n * 3 + c) * 20 + i] - mean, 2);
    var /= 40;
    for (int n = 0; n < 2; n++)
      for (int i = 0; i < 20; i++) {
        int k = (n * 3 + c) * 20 + i;
        double want = (x[k] - mean) / sqrt(var + 1e-3) * g[c] + b[c];
        expect_close("batch_norm[0]", k, y[k], want > 0 ? want : 0, TOL);
      }
    expect_close("batch_norm[1]", c, m1[c], 0.9 * mm[c] + 0.1 * mean, TOL);
    expect_close("batch_norm[2]", c, v1[c], 0.9 * mv[c] + 0.1 * var, TOL);
  }
  for (int i = 0; i < 3; i++) tvmjit_tensor_free(outs[i]);
}
END_TEST


/* ---------------- conv2d (NCHW/OIHW) vs a direct loop ---------------- */

typedef struct conv_cfg {
  int N, C, H, W, O, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, groups;
} conv_cfg_t;

static tvmjit_tensor_t *to_dtype(const float *x, int ndim, const int64_t *shape, tvmjit_dtype_t dt) {
  tvmjit_tensor_t *src = NULL, *dst = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, ndim, shape, (void *)x, &src));
  ck_assert_ptr_null(tvmjit_tensor_new(dt, ndim, shape, &dst));
  ck_assert_ptr_null(tvmjit_tensor_convert(src, dst));
  tvmjit_tensor_free(src);
  return dst;
}

static void check_conv(const conv_cfg_t *c, bool f16) {
  const char *dt = f16 ? "float16" : "float32";
  int OH = (c->H + c->pt + c->pb - c->dh * (c->kh - 1) - 1) / c->sh + 1;
  int OW = (c->W + c->pl + c->pr - c->dw * (c->kw - 1) - 1) / c->sw + 1;
  int IC = c->C / c->groups;
  char body[2048];
  snprintf(body, sizeof body,
           "    def main(x: R.Tensor((%d, %d, %d, %d), dtype=\"%s\"), w: R.Tensor((%d, %d, %d, %d), dtype=\"%s\")):\n"
           "        gv = R.nn.conv2d(x, w, strides=[%d, %d], padding=[%d, %d, %d, %d], dilation=[%d, %d], groups=%d)\n"
           "        return gv\n",
           c->N, c->C, c->H, c->W, dt, c->O, IC, c->kh, c->kw, dt, c->sh, c->sw, c->pt, c->pl, c->pb, c->pr, c->dh,
           c->dw, c->groups);
  int nx = c->N * c->C * c->H * c->W, nw = c->O * IC * c->kh * c->kw;
  static float x[16384], w[16384];
  ck_assert_int_le(nx, 16384);
  ck_assert_int_le(nw, 16384);
  for (int i = 0; i < nx; i++) x[i] = (float)((i * 7919) % 41 - 20) / 20.0f;
  for (int i = 0; i < nw; i++) w[i] = (float)((i * 104729) % 37 - 18) / 36.0f;
  int64_t xs[4] = {c->N, c->C, c->H, c->W}, ws[4] = {c->O, IC, c->kh, c->kw};
  tvmjit_tensor_t *xt = to_dtype(x, 4, xs, f16 ? TVMJIT_FLOAT16 : TVMJIT_FLOAT32);
  tvmjit_tensor_t *wt = to_dtype(w, 4, ws, f16 ? TVMJIT_FLOAT16 : TVMJIT_FLOAT32);
  /* the reference reads the values actually passed (float16-rounded) */
  tvmjit_tensor_t *x32 = NULL, *w32 = NULL;
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, 4, xs, &x32));
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, 4, ws, &w32));
  ck_assert_ptr_null(tvmjit_tensor_convert(xt, x32));
  ck_assert_ptr_null(tvmjit_tensor_convert(wt, w32));
  const float *xr = tvmjit_tensor_data(x32), *wr = tvmjit_tensor_data(w32);

  char src[8192];
  snprintf(src, sizeof src, "%s", tu_model_source(body));
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_module_options_t opts;
  tvmjit_module_options_init(&opts);
  opts.passes = "default";
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "conv.rx", src, strlen(src), &opts, &mod);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
  const tvmjit_tensor_t *ins[2] = {xt, wt};
  tvmjit_tensor_t *out = NULL;
  st = tvmjit_function_call(fn, 2, ins, 1, &out);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  int64_t os[4] = {c->N, c->O, OH, OW};
  check_shape(out, 4, os);
  tvmjit_tensor_t *y32 = NULL;
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, 4, os, &y32));
  ck_assert_ptr_null(tvmjit_tensor_convert(out, y32));
  const float *y = tvmjit_tensor_data(y32);
  int OPG = c->O / c->groups;
  for (int n = 0; n < c->N; n++)
    for (int o = 0; o < c->O; o++)
      for (int oh = 0; oh < OH; oh++)
        for (int ow = 0; ow < OW; ow++) {
          double acc = 0;
          int g = o / OPG;
          for (int ic = 0; ic < IC; ic++)
            for (int i = 0; i < c->kh; i++)
              for (int j = 0; j < c->kw; j++) {
                int h = oh * c->sh + i * c->dh - c->pt, ww = ow * c->sw + j * c->dw - c->pl;
                if (h < 0 || ww < 0 || h >= c->H || ww >= c->W) continue;
                acc += (double)xr[((n * c->C + g * IC + ic) * c->H + h) * c->W + ww] *
                       wr[((o * IC + ic) * c->kh + i) * c->kw + j];
              }
          int k = ((n * c->O + o) * OH + oh) * OW + ow;
          double got = y[k];
          double tol = f16 ? 5e-2 + 1e-2 * fabs(acc) : 1e-4 * (1 + fabs(acc));
          ck_assert_msg(fabs(got - acc) <= tol, "conv2d %s groups=%d k=%dx%d s=%d [%d] = %.6g, want %.6g", dt, c->groups,
                        c->kh, c->kw, c->sh, k, got, acc);
        }
  tvmjit_tensor_free(y32);
  tvmjit_tensor_free(out);
  tvmjit_tensor_free(x32);
  tvmjit_tensor_free(w32);
  tvmjit_tensor_free(xt);
  tvmjit_tensor_free(wt);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
}

static const conv_cfg_t k_convs[] = {
    /* 7x7 stride 2 pad 3 (ResNet stem) */
    {.N = 1, .C = 3, .H = 17, .W = 15, .O = 8, .kh = 7, .kw = 7, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 3, .pl = 3, .pb = 3, .pr = 3, .groups = 1},
    /* 1x1 stride 2 projection */
    {.N = 2, .C = 8, .H = 9, .W = 9, .O = 16, .kh = 1, .kw = 1, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .groups = 1},
    /* 3x3 pad 1 */
    {.N = 1, .C = 5, .H = 8, .W = 11, .O = 6, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .groups = 1},
    /* grouped, asymmetric padding, dilation */
    {.N = 1, .C = 8, .H = 10, .W = 9, .O = 12, .kh = 3, .kw = 2, .sh = 2, .sw = 1, .dh = 2, .dw = 1, .pt = 2, .pl = 0, .pb = 1, .pr = 1, .groups = 4},
    /* depthwise 3x3 stride 2 (groups == channels) and stride 1 */
    {.N = 2, .C = 16, .H = 12, .W = 12, .O = 16, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .groups = 16},
    {.N = 1, .C = 6, .H = 7, .W = 9, .O = 6, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .groups = 6},
    /* depthwise with a channel multiplier of 2 */
    {.N = 1, .C = 4, .H = 8, .W = 8, .O = 8, .kh = 5, .kw = 5, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = 2, .pl = 2, .pb = 2, .pr = 2, .groups = 4},
};

START_TEST(conv2d_float32_matches_reference) {
  for (size_t i = 0; i < sizeof k_convs / sizeof k_convs[0]; i++) check_conv(&k_convs[i], false);
}
END_TEST

START_TEST(conv2d_float16_matches_reference) {
  for (size_t i = 0; i < sizeof k_convs / sizeof k_convs[0]; i++) check_conv(&k_convs[i], true);
}
END_TEST



/* float16: the pools accumulate in float16 (as topi), gelu's erf runs in float32; the
 * reference reads the float16-rounded inputs. Tolerance: rtol 1e-2, atol 5e-2. */
START_TEST(float16_ops_match_reference) {
  const char *body =
      "    def main(x: R.Tensor((1, 2, 6, 7), dtype=\"float16\")):\n"
      "        with R.dataflow():\n"
      "            a = R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], ceil_mode=True)\n"
      "            b = R.nn.avg_pool2d(x, pool_size=[2, 2], strides=[2, 2], padding=[1, 1, 1, 1])\n"
      "            c = R.nn.adaptive_avg_pool2d(x, output_size=[1, 1])\n"
      "            d = R.nn.gelu(x)\n"
      "            e = R.nn.gelu_tanh(x)\n"
      "            f = R.nn.silu(x)\n"
      "            g = R.nn.leakyrelu(x, 0.1)\n"
      "            h = R.nn.log_softmax(x, axis=-1)\n"
      "            gv = (a, b, c, d, e, f, g, h)\n"
      "            R.output(gv)\n"
      "        return gv\n";
  float x[84];
  for (int i = 0; i < 84; i++) x[i] = -3.0f + 6.0f * (float)((i * 29) % 84) / 83.0f;
  int64_t xs[4] = {1, 2, 6, 7};
  tvmjit_tensor_t *xh = to_dtype(x, 4, xs, TVMJIT_FLOAT16), *xr = NULL;
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, 4, xs, &xr));
  ck_assert_ptr_null(tvmjit_tensor_convert(xh, xr));
  const float *v = tvmjit_tensor_data(xr);
  char src[8192];
  snprintf(src, sizeof src, "%s", tu_model_source(body));
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_module_options_t opts;
  tvmjit_module_options_init(&opts);
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "f16.rx", src, strlen(src), &opts, &mod);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
  const tvmjit_tensor_t *ins[1] = {xh};
  tvmjit_tensor_t *o[8] = {NULL}, *o32[8] = {NULL};
  st = tvmjit_function_call(fn, 1, ins, 8, o);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  const float *y[8];
  for (int k = 0; k < 8; k++) {
    ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, tvmjit_tensor_ndim(o[k]), tvmjit_tensor_shape(o[k]), &o32[k]));
    ck_assert_ptr_null(tvmjit_tensor_convert(o[k], o32[k]));
    y[k] = tvmjit_tensor_data(o32[k]);
  }
#define CLOSE16(what, i, got, want) \
  ck_assert_msg(fabs((got) - (want)) <= 5e-2 + 1e-2 * fabs(want), "%s[%d] = %g, want %g", what, i, (double)(got), (double)(want))
  pool_cfg_t mp = {.N = 1, .C = 2, .H = 6, .W = 7, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .ceil_mode = 1, .is_max = 1};
  pool_cfg_t ap = {.N = 1, .C = 2, .H = 6, .W = 7, .kh = 2, .kw = 2, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1};
  int mh = pool_out(6, 3, 2, 1, 1, 1, 1), mw = pool_out(7, 3, 2, 1, 1, 1, 1);
  int ah = pool_out(6, 2, 2, 1, 1, 1, 0), aw = pool_out(7, 2, 2, 1, 1, 1, 0);
  check_shape(o[0], 4, (int64_t[]){1, 2, mh, mw});
  check_shape(o[1], 4, (int64_t[]){1, 2, ah, aw});
  for (int c = 0; c < 2; c++) {
    for (int i = 0; i < mh; i++)
      for (int j = 0; j < mw; j++) CLOSE16("max_pool2d f16", (c * mh + i) * mw + j, y[0][(c * mh + i) * mw + j], pool_ref(&mp, v, 0, c, i, j));
    for (int i = 0; i < ah; i++)
      for (int j = 0; j < aw; j++) CLOSE16("avg_pool2d f16", (c * ah + i) * aw + j, y[1][(c * ah + i) * aw + j], pool_ref(&ap, v, 0, c, i, j));
    double s = 0;
    for (int i = 0; i < 42; i++) s += v[c * 42 + i];
    CLOSE16("adaptive_avg_pool2d f16", c, y[2][c], s / 42);
  }
  for (int i = 0; i < 84; i++) {
    CLOSE16("gelu f16", i, y[3][i], gelu(v[i]));
    CLOSE16("gelu_tanh f16", i, y[4][i], gelu_tanh(v[i]));
    CLOSE16("silu f16", i, y[5][i], silu(v[i]));
    CLOSE16("leakyrelu f16", i, y[6][i], v[i] > 0 ? v[i] : 0.1 * v[i]);
    int row = i / 7;
    double m = -INFINITY, s = 0;
    for (int t = 0; t < 7; t++) m = fmax(m, v[row * 7 + t]);
    for (int t = 0; t < 7; t++) s += exp(v[row * 7 + t] - m);
    CLOSE16("log_softmax f16", i, y[7][i], v[i] - m - log(s));
  }
#undef CLOSE16
  for (int k = 0; k < 8; k++) {
    tvmjit_tensor_free(o[k]);
    tvmjit_tensor_free(o32[k]);
  }
  tvmjit_tensor_free(xh);
  tvmjit_tensor_free(xr);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
}
END_TEST

/* ---------------- schedules ---------------- */

/* Every nest of each legalized op is rewritten by a CPU schedule rule (no scalar loop
 * nest left on a hot path). */
START_TEST(every_nest_gets_a_schedule) {
  const char *ops[] = {
      "R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])",
      "R.nn.avg_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], ceil_mode=True)",
      "R.nn.adaptive_avg_pool2d(x, output_size=[1, 1])",
      "R.nn.adaptive_avg_pool2d(x, output_size=[3, 5])",
      "R.nn.gelu(x)",
      "R.nn.gelu_tanh(x)",
      "R.nn.silu(x)",
      "R.nn.leakyrelu(x)",
      "R.nn.log_softmax(x, axis=1)",
      "R.nn.batch_norm(x, g, g, g, g, axis=1)",
      "R.split(x, [3, 9], axis=1)",
      "R.concat((x, x), axis=1)",
      "R.strided_slice(x, axes=[2], begin=[1], end=[12], strides=[2])",
      "R.take(x, R.prim_value(3), axis=1)",
      "R.expand_dims(x, axis=[0])",
      "R.squeeze(g, axis=None)",
      "R.flatten(x)",
      "R.broadcast_to(g, (3, 16))",
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    char src[2048];
    snprintf(src, sizeof src,
             "    def main(x: R.Tensor((2, 16, 14, 14), dtype=\"float32\"), g: R.Tensor((16,), dtype=\"float32\")):\n"
             "        gv = %s\n"
             "        return gv\n",
             ops[i]);
    tu_check_every_nest_scheduled(src, ops[i], true);
  }
}
END_TEST


/* ToMixedPrecision's policies, as TVM registers them (tvm-ops.md §0.4). */
START_TEST(mixed_precision_policies_follow_tvm) {
  const char *follow[] = {"relax.nn.max_pool2d", "relax.nn.avg_pool2d", "relax.nn.adaptive_avg_pool2d",
                          "relax.nn.gelu", "relax.nn.gelu_tanh", "relax.nn.silu", "relax.flatten", "relax.squeeze",
                          "relax.expand_dims", "relax.broadcast_to", "relax.concat", "relax.split",
                          "relax.strided_slice"};
  const char *never[] = {"relax.nn.leakyrelu", "relax.nn.log_softmax", "relax.nn.batch_norm", "relax.take"};
  for (size_t i = 0; i < sizeof follow / sizeof follow[0]; i++) {
    const tj_op_def_t *d = tj_op_lookup(follow[i]);
    ck_assert_msg(d && d->mp_policy == TJ_MP_FOLLOW, "%s", follow[i]);
  }
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
    const tj_op_def_t *d = tj_op_lookup(never[i]);
    ck_assert_msg(d && d->mp_policy == TJ_MP_NEVER, "%s", never[i]);
  }
}
END_TEST

/* ---------------- inference errors ---------------- */

static void expect_error(const char *body, const char *needle) {
  const char *msg = tu_model_error(body);
  ck_assert_msg(msg != NULL, "expected an error containing '%s'", needle);
  ck_assert_msg(strstr(msg, needle) != NULL, "error '%s' lacks '%s'", msg, needle);
}

START_TEST(inference_errors) {
  expect_error("    def main(x: R.Tensor((2, 3, 4), dtype=\"float32\")):\n"
               "        gv = R.nn.max_pool2d(x, pool_size=[2, 2])\n"
               "        return gv\n",
               "must be 4-D");
  expect_error("    def main(x: R.Tensor((1, 1, 2, 2), dtype=\"float32\")):\n"
               "        gv = R.nn.avg_pool2d(x, pool_size=[5, 5])\n"
               "        return gv\n",
               "empty");
  expect_error("    def main(x: R.Tensor((1, 1, 4, 4), dtype=\"float32\")):\n"
               "        gv = R.nn.max_pool2d(x, pool_size=[2, 2], layout=\"NCD\")\n"
               "        return gv\n",
               "layout");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"int32\")):\n"
               "        gv = R.nn.gelu(x)\n"
               "        return gv\n",
               "float");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"int32\")):\n"
               "        gv = R.nn.leakyrelu(x)\n"
               "        return gv\n",
               "float");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
               "        gv = R.nn.log_softmax(x, axis=2)\n"
               "        return gv\n",
               "axis");
  expect_error("    def main(x: R.Tensor((2, 3, 4), dtype=\"float32\"), g: R.Tensor((4,), dtype=\"float32\")):\n"
               "        gv = R.nn.batch_norm(x, g, g, g, g, axis=1)\n"
               "        return gv\n",
               "channels");
  expect_error("    def main(x: R.Tensor((2, 3, 4), dtype=\"float32\"), g: R.Tensor((3,), dtype=\"float16\")):\n"
               "        gv = R.nn.batch_norm(x, g, g, g, g, axis=1)\n"
               "        return gv\n",
               "dtype");
  /* The normalisations share their data and axes checks (ir/op/nn.c). */
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"int32\"), g: R.Tensor((3,), dtype=\"int32\")):\n"
               "        gv = R.nn.layer_norm(x, g, g, axes=[-1])\n"
               "        return gv\n",
               "layer_norm: data must be a float tensor, got int32");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\"), g: R.Tensor((2, 3), dtype=\"float32\")):\n"
               "        gv = R.nn.layer_norm(x, g, g, axes=[1, -1])\n"
               "        return gv\n",
               "layer_norm: axis 1 appears twice in axes");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\"), g: R.Tensor((2, 3), dtype=\"float32\")):\n"
               "        gv = R.nn.rms_norm(x, g, axes=[0, -2])\n"
               "        return gv\n",
               "rms_norm: axis 0 appears twice in axes");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\"), g: R.Tensor((4,), dtype=\"float32\")):\n"
               "        gv = R.nn.rms_norm(x, g, axes=[-1])\n"
               "        return gv\n",
               "rms_norm: weight has shape");
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"int32\")):\n"
               "        gv = R.nn.softmax(x)\n"
               "        return gv\n",
               "softmax: data must be a float tensor");
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_nn");
  TCase *tc = tcase_create("nn");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, max_pool2d_matches_reference);
  tcase_add_test(tc, avg_pool2d_matches_reference);
  tcase_add_test(tc, adaptive_avg_pool2d_matches_reference);
  tcase_add_test(tc, activations_match_libm);
  tcase_add_test(tc, log_softmax_matches_reference);
  tcase_add_test(tc, batch_norm_matches_tvm_legalization);
  tcase_add_test(tc, conv2d_float32_matches_reference);
  tcase_add_test(tc, conv2d_float16_matches_reference);
  tcase_add_test(tc, every_nest_gets_a_schedule);
  tcase_add_test(tc, float16_ops_match_reference);
  tcase_add_test(tc, mixed_precision_policies_follow_tvm);
  tcase_add_test(tc, inference_errors);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
