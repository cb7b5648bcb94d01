/* onednn_seed: the seed network with oneDNN 2.6's C API, float32 or bfloat16, NHWC, for
 * bench/compare.
 *
 *   x(16,32,32,16) -> conv(w1)+relu -> conv(w2)+relu -> layer_norm(C, gamma, beta)
 *                  -> conv(w3)+relu
 * (3x3 convs, pad 1, stride 1, no bias; weights OHWI; layer_norm over the channels,
 * eps 1e-5), as examples/seed/model.rx and tests/models/seed_f32_ops.rx.
 *
 * Each conv is one primitive with the relu as a fused eltwise post-op; layer_norm is
 * the layer_normalization primitive on the same memory seen as (N*H*W, C). The
 * weights are reordered once, before timing, into the layout oneDNN picks for the
 * conv (format "any"), as an inference deployment would; activations stay NHWC.
 *
 * --dtype bf16: activations and weights bfloat16, float32 accumulation (what oneDNN
 * picks for bfloat16 convs: avx512_core_bf16 kernels where the host has AVX512-BF16),
 * layer_normalization on bfloat16 with float32 scale and shift. The input is float32
 * and reordered to bfloat16 inside each timed run, the output back to float32, as
 * tvmjit's --mixed-precision=bfloat16 casts at the graph's edges.
 *
 * usage: onednn_seed DIR [--threads N] [--warmup N] [--runs N] [--output Y.npy] [--dtype f32|bf16]
 *   DIR holds data.npy weight1.npy weight2.npy weight3.npy gamma.npy beta.npy, all
 *   float32 little-endian C order. Prints one JSON object with the latencies.
 * oneDNN here uses OpenMP: --threads N sets OMP_NUM_THREADS and re-executes itself,
 * since the OpenMP runtime reads it once when the library loads.
 * build: cc -O2 bench/onednn_seed.c -ldnnl -o onednn_seed */
#include <dnnl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness_util.h"

enum { N = 16, H = 32, W = 32, C = 16, K = 3 };

#define CHECK(call)                                                                        \
  do {                                                                                     \
    dnnl_status_t s_ = (call);                                                             \
    if (s_ != dnnl_success) {                                                              \
      fprintf(stderr, "onednn_seed: %s failed (status %d) at line %d\n", #call, (int)s_, \
              __LINE__);                                                                   \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

/* ---- .npy float32 files ---- */

static float *load_npy(const char *dir, const char *name, size_t want) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "onednn_seed: cannot open %s\n", path);
    exit(1);
  }
  unsigned char pre[10];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "onednn_seed: %s is not a .npy file\n", path);
    exit(1);
  }
  size_t hlen = pre[6] == 1 ? (size_t)(pre[8] | pre[9] << 8) : 0;
  if (pre[6] != 1) { /* versions 2 and 3: 4-byte header length */
    unsigned char more[2];
    if (fread(more, 1, 2, f) != 2) hlen = 0;
    else hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)more[0] << 16 | (size_t)more[1] << 24;
  }
  char *header = calloc(hlen + 1, 1);
  if (!header || fread(header, 1, hlen, f) != hlen || !strstr(header, "'<f4'") ||
      strstr(header, "'fortran_order': True")) {
    fprintf(stderr, "onednn_seed: %s must be float32 ('<f4') in C order\n", path);
    exit(1);
  }
  free(header);
  float *data = malloc(want * sizeof(float));
  if (!data || fread(data, sizeof(float), want, f) != want || fgetc(f) != EOF) {
    fprintf(stderr, "onednn_seed: %s does not hold %zu float32 values\n", path, want);
    exit(1);
  }
  fclose(f);
  return data;
}

static void save_npy(const char *path, const float *data) {
  char header[128];
  int n = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d, %d), }",
                   N, H, W, C);
  int total = 10 + n + 1;
  int pad = (64 - total % 64) % 64;
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "onednn_seed: cannot write %s\n", path);
    exit(1);
  }
  unsigned hlen = (unsigned)(n + pad + 1);
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 255), (unsigned char)(hlen >> 8)};
  fwrite(pre, 1, 10, f);
  fwrite(header, 1, (size_t)n, f);
  for (int i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
  fwrite(data, sizeof(float), (size_t)N * H * W * C, f);
  if (fclose(f) != 0) {
    fprintf(stderr, "onednn_seed: writing %s failed\n", path);
    exit(1);
  }
}

/* ---- the network ---- */

static dnnl_data_type_t act_dt = dnnl_f32; /* activations and weights (--dtype) */

typedef struct conv {
  dnnl_primitive_t prim;
  dnnl_memory_t weights; /* in the conv's preferred layout */
} conv_t;

static dnnl_memory_t typed_memory(dnnl_engine_t eng, int ndims, const dnnl_dims_t dims, dnnl_data_type_t dt,
                                  dnnl_format_tag_t tag, void *data) {
  dnnl_memory_desc_t md;
  dnnl_memory_t m;
  CHECK(dnnl_memory_desc_init_by_tag(&md, ndims, dims, dt, tag));
  CHECK(dnnl_memory_create(&m, &md, eng, data));
  return m;
}

static dnnl_memory_t user_memory(dnnl_engine_t eng, int ndims, const dnnl_dims_t dims, dnnl_format_tag_t tag,
                                 void *data) {
  return typed_memory(eng, ndims, dims, dnnl_f32, tag, data);
}

/* A reorder from one memory to another (a dtype conversion here). */
static dnnl_primitive_t make_reorder(dnnl_engine_t eng, dnnl_memory_t from, dnnl_memory_t to) {
  const dnnl_memory_desc_t *fmd, *tmd;
  CHECK(dnnl_memory_get_memory_desc(from, &fmd));
  CHECK(dnnl_memory_get_memory_desc(to, &tmd));
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t p;
  CHECK(dnnl_reorder_primitive_desc_create(&pd, fmd, eng, tmd, eng, NULL));
  CHECK(dnnl_primitive_create(&p, pd));
  dnnl_primitive_desc_destroy(pd);
  return p;
}

/* conv(3x3, pad 1) + fused relu; OHWI weights reordered to the primitive's layout. */
static conv_t make_conv(dnnl_engine_t eng, dnnl_stream_t stream, float *ohwi) {
  dnnl_dims_t act = {N, C, H, W}; /* logical order is always N, C, H, W */
  dnnl_dims_t wdims = {C, C, K, K}, strides = {1, 1}, pad = {1, 1};
  dnnl_memory_desc_t src_md, dst_md, w_any;
  CHECK(dnnl_memory_desc_init_by_tag(&src_md, 4, act, act_dt, dnnl_nhwc));
  CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 4, act, act_dt, dnnl_nhwc));
  CHECK(dnnl_memory_desc_init_by_tag(&w_any, 4, wdims, act_dt, dnnl_format_tag_any));
  dnnl_convolution_desc_t cd;
  CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src_md, &w_any,
                                           NULL, &dst_md, strides, pad, pad));
  dnnl_post_ops_t ops;
  dnnl_primitive_attr_t attr;
  CHECK(dnnl_post_ops_create(&ops));
  CHECK(dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
  CHECK(dnnl_primitive_attr_create(&attr));
  CHECK(dnnl_primitive_attr_set_post_ops(attr, ops));
  dnnl_primitive_desc_t pd;
  CHECK(dnnl_primitive_desc_create(&pd, &cd, attr, eng, NULL));
  conv_t c;
  CHECK(dnnl_primitive_create(&c.prim, pd));
  const dnnl_memory_desc_t *w_md = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  CHECK(dnnl_memory_create(&c.weights, w_md, eng, DNNL_MEMORY_ALLOCATE));
  dnnl_memory_t user_w = user_memory(eng, 4, wdims, dnnl_ohwi, ohwi);
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t reorder;
  dnnl_memory_desc_t user_w_md;
  CHECK(dnnl_memory_desc_init_by_tag(&user_w_md, 4, wdims, dnnl_f32, dnnl_ohwi));
  CHECK(dnnl_reorder_primitive_desc_create(&rpd, &user_w_md, eng, w_md, eng, NULL));
  CHECK(dnnl_primitive_create(&reorder, rpd));
  dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, user_w}, {DNNL_ARG_TO, c.weights}};
  CHECK(dnnl_primitive_execute(reorder, stream, 2, rargs));
  CHECK(dnnl_stream_wait(stream));
  dnnl_primitive_destroy(reorder);
  dnnl_primitive_desc_destroy(rpd);
  dnnl_memory_destroy(user_w);
  dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  dnnl_post_ops_destroy(ops);
  return c;
}

/* layer_norm over the last logical axis of (N*H*W, C): the channels of NHWC. */
static dnnl_primitive_t make_layer_norm(dnnl_engine_t eng) {
  dnnl_dims_t dims = {(dnnl_dim_t)N * H * W, C};
  dnnl_memory_desc_t md;
  CHECK(dnnl_memory_desc_init_by_tag(&md, 2, dims, act_dt, dnnl_ab));
  dnnl_layer_normalization_desc_t ld;
  CHECK(dnnl_layer_normalization_forward_desc_init(&ld, dnnl_forward_inference, &md, NULL, 1e-5f,
                                                   dnnl_use_scale | dnnl_use_shift));
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t p;
  CHECK(dnnl_primitive_desc_create(&pd, &ld, NULL, eng, NULL));
  CHECK(dnnl_primitive_create(&p, pd));
  dnnl_primitive_desc_destroy(pd);
  return p;
}

int main(int argc, char **argv) {
  const char *dir = NULL, *output = NULL;
  long threads = 0, warmup = 5, runs = 50;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--threads") == 0) threads = harness_count_arg("onednn_seed", argv[i], v, 1), i++;
    else if (strcmp(argv[i], "--warmup") == 0) warmup = harness_count_arg("onednn_seed", argv[i], v, 0), i++;
    else if (strcmp(argv[i], "--runs") == 0) runs = harness_count_arg("onednn_seed", argv[i], v, 1), i++;
    else if (strcmp(argv[i], "--output") == 0 && v) output = v, i++;
    else if (strcmp(argv[i], "--dtype") == 0 && v && (!strcmp(v, "f32") || !strcmp(v, "bf16")))
      act_dt = strcmp(v, "bf16") ? dnnl_f32 : dnnl_bf16, i++;
    else if (argv[i][0] == '-' || dir) {
      fprintf(stderr,
              "onednn_seed: unexpected argument '%s'\n"
              "usage: onednn_seed DIR [--threads N] [--warmup N] [--runs N] [--output Y.npy] [--dtype f32|bf16]\n",
              argv[i]);
      return 2;
    } else dir = argv[i];
  }
  if (!dir) {
    fprintf(stderr,
            "usage: onednn_seed DIR [--threads N] [--warmup N] [--runs N] [--output Y.npy] [--dtype f32|bf16]\n");
    return 2;
  }
  if (threads > 0) {
    char want[32];
    snprintf(want, sizeof want, "%ld", threads);
    const char *have = getenv("OMP_NUM_THREADS");
    if (!have || strcmp(have, want) != 0) {
      setenv("OMP_NUM_THREADS", want, 1);
      execv("/proc/self/exe", argv);
      fprintf(stderr, "onednn_seed: cannot re-execute with OMP_NUM_THREADS=%s\n", want);
      return 1;
    }
  }
  size_t act = (size_t)N * H * W * C, wsz = (size_t)C * K * K * C;
  float *x = load_npy(dir, "data", act), *w1 = load_npy(dir, "weight1", wsz), *w2 = load_npy(dir, "weight2", wsz),
        *w3 = load_npy(dir, "weight3", wsz), *gamma = load_npy(dir, "gamma", C), *beta = load_npy(dir, "beta", C);
  float *y = malloc(act * sizeof(float));
  float *t1 = malloc(act * sizeof(float)), *t2 = malloc(act * sizeof(float)), *t3 = malloc(act * sizeof(float));
  if (!y || !t1 || !t2 || !t3) {
    fprintf(stderr, "onednn_seed: out of memory\n");
    return 1;
  }

  dnnl_engine_t eng;
  dnnl_stream_t stream;
  CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
  CHECK(dnnl_stream_create(&stream, eng, dnnl_stream_default_flags));
  conv_t c1 = make_conv(eng, stream, w1), c2 = make_conv(eng, stream, w2), c3 = make_conv(eng, stream, w3);
  dnnl_primitive_t ln = make_layer_norm(eng);

  dnnl_dims_t act4 = {N, C, H, W}, rows = {(dnnl_dim_t)N * H * W, C}, cdim = {C};
  /* bfloat16: x and y are float32 at the edges, converted by a reorder each run */
  bool bf16 = act_dt == dnnl_bf16;
  dnnl_memory_t m_x32 = user_memory(eng, 4, act4, dnnl_nhwc, x), m_y32 = user_memory(eng, 4, act4, dnnl_nhwc, y);
  dnnl_memory_t m_x = bf16 ? typed_memory(eng, 4, act4, act_dt, dnnl_nhwc, DNNL_MEMORY_ALLOCATE) : m_x32,
                m_t1 = typed_memory(eng, 4, act4, act_dt, dnnl_nhwc, t1),
                m_t2 = typed_memory(eng, 4, act4, act_dt, dnnl_nhwc, t2),
                m_t3 = typed_memory(eng, 4, act4, act_dt, dnnl_nhwc, t3),
                m_y = bf16 ? typed_memory(eng, 4, act4, act_dt, dnnl_nhwc, DNNL_MEMORY_ALLOCATE) : m_y32;
  dnnl_memory_t r_t2 = typed_memory(eng, 2, rows, act_dt, dnnl_ab, t2),
                r_t3 = typed_memory(eng, 2, rows, act_dt, dnnl_ab, t3);
  dnnl_primitive_t to_bf16 = bf16 ? make_reorder(eng, m_x32, m_x) : NULL,
                   to_f32 = bf16 ? make_reorder(eng, m_y, m_y32) : NULL;
  dnnl_exec_arg_t ax[2] = {{DNNL_ARG_FROM, m_x32}, {DNNL_ARG_TO, m_x}},
                  ay[2] = {{DNNL_ARG_FROM, m_y}, {DNNL_ARG_TO, m_y32}};
  dnnl_memory_t m_gamma = user_memory(eng, 1, cdim, dnnl_a, gamma), m_beta = user_memory(eng, 1, cdim, dnnl_a, beta);

  dnnl_exec_arg_t a1[3] = {{DNNL_ARG_SRC, m_x}, {DNNL_ARG_WEIGHTS, c1.weights}, {DNNL_ARG_DST, m_t1}};
  dnnl_exec_arg_t a2[3] = {{DNNL_ARG_SRC, m_t1}, {DNNL_ARG_WEIGHTS, c2.weights}, {DNNL_ARG_DST, m_t2}};
  dnnl_exec_arg_t al[4] = {{DNNL_ARG_SRC, r_t2}, {DNNL_ARG_SCALE, m_gamma}, {DNNL_ARG_SHIFT, m_beta}, {DNNL_ARG_DST, r_t3}};
  dnnl_exec_arg_t a3[3] = {{DNNL_ARG_SRC, m_t3}, {DNNL_ARG_WEIGHTS, c3.weights}, {DNNL_ARG_DST, m_y}};

  double *ms = malloc(sizeof(double) * (size_t)runs);
  if (!ms) return 1;
  for (long r = -warmup; r < runs; r++) {
    double t0 = harness_now_ms();
    if (bf16) CHECK(dnnl_primitive_execute(to_bf16, stream, 2, ax));
    CHECK(dnnl_primitive_execute(c1.prim, stream, 3, a1));
    CHECK(dnnl_primitive_execute(c2.prim, stream, 3, a2));
    CHECK(dnnl_primitive_execute(ln, stream, 4, al));
    CHECK(dnnl_primitive_execute(c3.prim, stream, 3, a3));
    if (bf16) CHECK(dnnl_primitive_execute(to_f32, stream, 2, ay));
    CHECK(dnnl_stream_wait(stream));
    if (r >= 0) ms[r] = harness_now_ms() - t0;
  }
  if (output) save_npy(output, y);

  qsort(ms, (size_t)runs, sizeof(double), harness_cmp_double);
  double median = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
  const dnnl_version_t *ver = dnnl_version();
  char threads_json[32] = "null";
  if (threads > 0) snprintf(threads_json, sizeof threads_json, "%ld", threads);
  printf(
      "{\"runtime\": \"oneDNN %d.%d.%d\", \"dtype\": \"%s\", \"threads\": %s, \"warmup\": %ld, \"runs\": %ld, "
      "\"latency_ms\": {\"min\": %.6f, \"median\": %.6f, \"max\": %.6f}}\n",
      ver->major, ver->minor, ver->patch, bf16 ? "bf16" : "f32", threads_json, warmup, runs, ms[0], median,
      ms[runs - 1]);
  return 0;
}
