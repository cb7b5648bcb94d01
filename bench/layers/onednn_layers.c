/* onednn_layers: one layer of bench/layers with oneDNN 2.6's C API, float32, timed.
 *
 * usage: onednn_layers KIND key=value... --dir DIR [--threads N] [--warmup N] [--runs N]
 *                      [--output Y.npy]
 *   conv       layout=nchw|nhwc n= ic= h= w= oc= k= stride= pad= [groups=1] [post=bn_relu]
 *              DIR/x.npy, w.npy (OIHW for nchw, OHWI for nhwc: what the Relax model
 *              takes); post=bn_relu also gamma, beta, mean, var (eps 1e-5)
 *   matmul     batch= m= k= n=        DIR/a.npy (batch x m x k), b.npy (batch x k x n);
 *                                      batch=0 means 2-D operands
 *   softmax    shape=AxBx...           DIR/x.npy, over the last axis
 *   layer_norm shape=AxBx...           DIR/x.npy, gamma, beta; over the last axis, eps 1e-5
 *   gelu       shape=AxBx...           DIR/x.npy (the erf form, as R.nn.gelu)
 *   max_pool   n= c= h= w= k= stride= pad=    DIR/x.npy, NCHW
 *   avg_pool   n= c= h= w= k= stride= pad=    DIR/x.npy, NCHW (padding excluded)
 * bench/layers/catalog.py writes DIR and these arguments (catalog.onednn). Prints one
 * JSON object: latencies and the implementation oneDNN chose.
 *
 * Activations are in the same plain layout as the Relax model (NCHW or NHWC, row-major
 * matrices) at the primitive's input and output: no blocked-layout reorder is inside the
 * timing, as tvmjit pays none. Constant weights (conv weights, a 2-D matmul's right
 * operand) are reordered once, before timing, into the layout oneDNN picks (format
 * "any"), as an inference deployment does. conv+batch_norm+relu is one convolution with
 * post-ops: a per-channel multiply and add (the batch norm's scale and shift, computed
 * once from gamma, beta, mean and var) and an eltwise relu.
 * oneDNN uses OpenMP here: --threads N sets OMP_NUM_THREADS and re-executes itself, since
 * the OpenMP runtime reads it once when the library loads.
 * build: cc -O2 bench/layers/onednn_layers.c -ldnnl -lm -o onednn_layers */
#define _POSIX_C_SOURCE 200809L /* strndup, setenv */
#include <dnnl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../harness_util.h"

#define CHECK(call)                                                                                   \
  do {                                                                                                \
    dnnl_status_t s_ = (call);                                                                        \
    if (s_ != dnnl_success) {                                                                         \
      fprintf(stderr, "onednn_layers: %s failed (status %d) at line %d\n", #call, (int)s_, __LINE__); \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)

enum { MAX_KV = 16, MAX_ARGS = 8, MAX_DIMS = 6 };

static void fail(const char *msg, const char *detail) {
  fprintf(stderr, "onednn_layers: %s%s\n", msg, detail ? detail : "");
  exit(2);
}

/* A missing or malformed input file: the layer is fine, its data is not (exit 1). */
static void bad_input(const char *msg, const char *path) {
  fprintf(stderr, "onednn_layers: %s%s\n", msg, path);
  exit(1);
}

/* ---- the layer description: key=value pairs ---- */

typedef struct kv {
  const char *key[MAX_KV], *val[MAX_KV];
  int n;
} kv_t;

static const char *get_str(const kv_t *kv, const char *key, const char *dflt) {
  for (int i = 0; i < kv->n; i++)
    if (strcmp(kv->key[i], key) == 0) return kv->val[i];
  if (!dflt) fail("missing attribute ", key);
  return dflt;
}

static long get_int(const kv_t *kv, const char *key, long dflt, long lo) {
  char d[32];
  snprintf(d, sizeof d, "%ld", dflt);
  const char *v = get_str(kv, key, dflt < 0 ? NULL : d);
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || end == v || n < lo) {
    fprintf(stderr, "onednn_layers: %s=%s: expected an integer >= %ld\n", key, v, lo);
    exit(2);
  }
  return n;
}

/* Every given key must be one the kind reads: a typo is an error, not a default. */
static void only_keys(const kv_t *kv, const char *const *allowed) {
  for (int i = 0; i < kv->n; i++) {
    int ok = 0;
    for (const char *const *a = allowed; *a; a++) ok |= strcmp(*a, kv->key[i]) == 0;
    if (!ok) fail("unknown attribute for this layer kind: ", kv->key[i]);
  }
}

/* shape=12x128x128 */
static int get_shape(const kv_t *kv, dnnl_dims_t dims) {
  const char *s = get_str(kv, "shape", NULL);
  int nd = 0;
  while (*s) {
    char *end;
    long d = strtol(s, &end, 10);
    if (end == s || d < 1 || nd == MAX_DIMS || (*end && *end != 'x')) fail("shape=AxBx...: bad shape ", s);
    dims[nd++] = d;
    s = *end ? end + 1 : end;
  }
  if (nd == 0) fail("shape= is empty", NULL);
  return nd;
}

/* ---- .npy float32 files ---- */

static size_t count(int nd, const dnnl_dims_t d) {
  size_t n = 1;
  for (int i = 0; i < nd; i++) n *= (size_t)d[i];
  return n;
}

static float *load_npy(const char *dir, const char *name, size_t want) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) bad_input("cannot open ", path);
  unsigned char pre[10];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) bad_input("not a .npy file: ", path);
  size_t hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
  if (pre[6] != 1) { /* versions 2 and 3: 4-byte header length */
    unsigned char more[2];
    if (fread(more, 1, 2, f) != 2) bad_input("truncated .npy header: ", path);
    hlen |= (size_t)more[0] << 16 | (size_t)more[1] << 24;
  }
  char *header = calloc(hlen + 1, 1);
  if (!header || fread(header, 1, hlen, f) != hlen || !strstr(header, "'<f4'") ||
      strstr(header, "'fortran_order': True"))
    bad_input("must be float32 ('<f4') in C order: ", path);
  free(header);
  float *data = malloc(want * sizeof(float));
  if (!data || fread(data, sizeof(float), want, f) != want || fgetc(f) != EOF) {
    fprintf(stderr, "onednn_layers: %s does not hold %zu float32 values (wrong shape for this layer?)\n", path, want);
    exit(1);
  }
  fclose(f);
  return data;
}

static void save_npy(const char *path, const float *data, int nd, const dnnl_dims_t dims) {
  char shape[256] = "", header[512];
  for (int i = 0; i < nd; i++)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%ld,%s", (long)dims[i], i + 1 < nd ? " " : "");
  int n = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
  int pad = (64 - (10 + n + 1) % 64) % 64;
  unsigned hlen = (unsigned)(n + pad + 1);
  unsigned char pre[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 255), (unsigned char)(hlen >> 8)};
  FILE *f = fopen(path, "wb");
  if (!f) bad_input("cannot write ", path);
  fwrite(pre, 1, 10, f);
  fwrite(header, 1, (size_t)n, f);
  for (int i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
  fwrite(data, sizeof(float), count(nd, dims), f);
  if (fclose(f) != 0) bad_input("writing failed: ", path);
}

/* ---- primitives ---- */

typedef struct layer {
  dnnl_engine_t eng;
  dnnl_stream_t stream;
  dnnl_primitive_t prim;
  dnnl_exec_arg_t args[MAX_ARGS];
  int nargs;
  float *out; /* the output, in the Relax model's layout */
  int out_nd;
  dnnl_dims_t out_dims;
  char impl[128];
} layer_t;

static dnnl_format_tag_t plain_tag(int nd) {
  static const dnnl_format_tag_t tags[] = {dnnl_a, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
  return tags[nd];
}

static dnnl_memory_desc_t desc(int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag) {
  dnnl_memory_desc_t md;
  CHECK(dnnl_memory_desc_init_by_tag(&md, nd, dims, dnnl_f32, tag));
  return md;
}

static void arg(layer_t *L, int which, const dnnl_memory_desc_t *md, void *data) {
  dnnl_memory_t m;
  CHECK(dnnl_memory_create(&m, md, L->eng, data));
  L->args[L->nargs++] = (dnnl_exec_arg_t){which, m};
}

/* The output buffer and its shape as the Relax model writes it. */
static float *output(layer_t *L, int nd, const dnnl_dims_t dims) {
  L->out_nd = nd;
  memcpy(L->out_dims, dims, sizeof(dnnl_dim_t) * (size_t)nd);
  L->out = malloc(count(nd, dims) * sizeof(float));
  if (!L->out) fail("out of memory", NULL);
  return L->out;
}

static void make_primitive(layer_t *L, const void *op_desc, const_dnnl_primitive_attr_t attr,
                           dnnl_primitive_desc_t *pd) {
  CHECK(dnnl_primitive_desc_create(pd, op_desc, attr, L->eng, NULL));
  CHECK(dnnl_primitive_create(&L->prim, *pd));
  const char *impl = NULL;
  CHECK(dnnl_primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &impl));
  snprintf(L->impl, sizeof L->impl, "%s", impl ? impl : "?");
}

/* user_md/data reordered once into the primitive's weights layout; the weights argument. */
static void weights_arg(layer_t *L, const dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *user_md, float *data) {
  const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  dnnl_memory_t user, packed;
  CHECK(dnnl_memory_create(&user, user_md, L->eng, data));
  CHECK(dnnl_memory_create(&packed, want, L->eng, DNNL_MEMORY_ALLOCATE));
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t reorder;
  CHECK(dnnl_reorder_primitive_desc_create(&rpd, user_md, L->eng, want, L->eng, NULL));
  CHECK(dnnl_primitive_create(&reorder, rpd));
  dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, packed}};
  CHECK(dnnl_primitive_execute(reorder, L->stream, 2, rargs));
  CHECK(dnnl_stream_wait(L->stream));
  dnnl_primitive_destroy(reorder);
  dnnl_primitive_desc_destroy(rpd);
  dnnl_memory_destroy(user);
  L->args[L->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, packed};
}

static const char *const CONV_KEYS[] = {"layout", "n",      "ic",  "h",      "w",    "oc",
                                        "k",      "stride", "pad", "groups", "post", NULL};

static void make_conv(layer_t *L, const kv_t *kv, const char *dir) {
  only_keys(kv, CONV_KEYS);
  const char *layout = get_str(kv, "layout", NULL), *post = get_str(kv, "post", "");
  int nhwc = strcmp(layout, "nhwc") == 0, bn_relu = strcmp(post, "bn_relu") == 0;
  if (!nhwc && strcmp(layout, "nchw") != 0) fail("layout= takes nchw or nhwc, not ", layout);
  if (*post && !bn_relu) fail("post= takes bn_relu, not ", post);
  long n = get_int(kv, "n", -1, 1), ic = get_int(kv, "ic", -1, 1), h = get_int(kv, "h", -1, 1);
  long w = get_int(kv, "w", -1, 1), oc = get_int(kv, "oc", -1, 1), k = get_int(kv, "k", -1, 1);
  long s = get_int(kv, "stride", -1, 1), p = get_int(kv, "pad", -1, 0), g = get_int(kv, "groups", 1, 1);
  if (ic % g || oc % g) fail("groups= must divide ic and oc", NULL);
  long oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
  if (oh < 1 || ow < 1) fail("the kernel is larger than the padded input", NULL);
  dnnl_format_tag_t act_tag = nhwc ? dnnl_nhwc : dnnl_nchw;
  dnnl_dims_t src = {n, ic, h, w}, dst = {n, oc, oh, ow}, strides = {s, s}, pad = {p, p};
  /* Logical weights (g, oc/g, ic/g, kh, kw): OIHW / OHWI memory with oc split as (g, oc/g). */
  dnnl_dims_t wdims = {g, oc / g, ic / g, k, k};
  int wnd = g > 1 ? 5 : 4;
  if (g == 1) memmove(wdims, wdims + 1, 4 * sizeof(dnnl_dim_t));
  dnnl_format_tag_t wtag = g > 1 ? (nhwc ? dnnl_gohwi : dnnl_goihw) : (nhwc ? dnnl_ohwi : dnnl_oihw);
  dnnl_memory_desc_t src_md = desc(4, src, act_tag), dst_md = desc(4, dst, act_tag);
  dnnl_memory_desc_t w_user = desc(wnd, wdims, wtag), w_any = desc(wnd, wdims, dnnl_format_tag_any);
  dnnl_convolution_desc_t cd;
  CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src_md, &w_any, NULL,
                                           &dst_md, strides, pad, pad));
  dnnl_primitive_attr_t attr = NULL;
  dnnl_dims_t cdim = {1, oc, 1, 1};
  dnnl_memory_desc_t chan_md = desc(4, cdim, dnnl_abcd);
  float *scale = NULL, *shift = NULL;
  if (bn_relu) {
    float *gamma = load_npy(dir, "gamma", oc), *beta = load_npy(dir, "beta", oc);
    float *mean = load_npy(dir, "mean", oc), *var = load_npy(dir, "var", oc);
    scale = malloc(oc * sizeof(float)), shift = malloc(oc * sizeof(float));
    if (!scale || !shift) fail("out of memory", NULL);
    for (long c = 0; c < oc; c++) {
      scale[c] = gamma[c] / sqrtf(var[c] + 1e-5f);
      shift[c] = beta[c] - mean[c] * scale[c];
    }
    dnnl_post_ops_t ops;
    CHECK(dnnl_post_ops_create(&ops));
    CHECK(dnnl_post_ops_append_binary(ops, dnnl_binary_mul, &chan_md));
    CHECK(dnnl_post_ops_append_binary(ops, dnnl_binary_add, &chan_md));
    CHECK(dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
    CHECK(dnnl_primitive_attr_create(&attr));
    CHECK(dnnl_primitive_attr_set_post_ops(attr, ops));
  }
  dnnl_primitive_desc_t pd;
  make_primitive(L, &cd, attr, &pd);
  arg(L, DNNL_ARG_SRC, &src_md, load_npy(dir, "x", (size_t)n * ic * h * w));
  weights_arg(L, pd, &w_user, load_npy(dir, "w", count(wnd, wdims)));
  dnnl_dims_t out_dims = {n, oc, oh, ow};
  if (nhwc) out_dims[1] = oh, out_dims[2] = ow, out_dims[3] = oc;
  arg(L, DNNL_ARG_DST, &dst_md, output(L, 4, out_dims));
  if (bn_relu) {
    arg(L, DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, &chan_md, scale);
    arg(L, DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, &chan_md, shift);
  }
}

static void make_matmul(layer_t *L, const kv_t *kv, const char *dir) {
  static const char *const keys[] = {"batch", "m", "k", "n", NULL};
  only_keys(kv, keys);
  long b = get_int(kv, "batch", -1, 0), m = get_int(kv, "m", -1, 1), k = get_int(kv, "k", -1, 1);
  long n = get_int(kv, "n", -1, 1);
  /* batch=0: 2-D operands, the same dims without the leading batch. */
  dnnl_dims_t a, w, c;
  int nd = 0;
  if (b) a[0] = w[0] = c[0] = b, nd = 1;
  a[nd] = m, a[nd + 1] = k;
  w[nd] = k, w[nd + 1] = n;
  c[nd] = m, c[nd + 1] = n;
  nd += 2;
  dnnl_memory_desc_t a_md = desc(nd, a, plain_tag(nd)), w_md = desc(nd, w, plain_tag(nd)),
                     c_md = desc(nd, c, plain_tag(nd));
  /* A 2-D right operand is a weight matrix: packed once. A batched one (attention's K^T)
   * is an activation, plain like the left operand. */
  dnnl_memory_desc_t w_prim = b ? w_md : desc(nd, w, dnnl_format_tag_any);
  dnnl_matmul_desc_t md;
  CHECK(dnnl_matmul_desc_init(&md, &a_md, &w_prim, NULL, &c_md));
  dnnl_primitive_desc_t pd;
  make_primitive(L, &md, NULL, &pd);
  arg(L, DNNL_ARG_SRC, &a_md, load_npy(dir, "a", count(nd, a)));
  if (b) arg(L, DNNL_ARG_WEIGHTS, &w_md, load_npy(dir, "b", count(nd, w)));
  else weights_arg(L, pd, &w_md, load_npy(dir, "b", count(nd, w)));
  arg(L, DNNL_ARG_DST, &c_md, output(L, nd, c));
}

/* softmax, layer_norm, gelu: one plain tensor in and out, over the last axis. */
static void make_rowwise(layer_t *L, const char *kind, const kv_t *kv, const char *dir) {
  static const char *const keys[] = {"shape", NULL};
  only_keys(kv, keys);
  dnnl_dims_t dims;
  int nd = get_shape(kv, dims);
  dnnl_memory_desc_t md = desc(nd, dims, plain_tag(nd));
  dnnl_primitive_desc_t pd;
  if (strcmp(kind, "softmax") == 0) {
    dnnl_softmax_desc_t sd;
    CHECK(dnnl_softmax_forward_desc_init(&sd, dnnl_forward_inference, &md, nd - 1));
    make_primitive(L, &sd, NULL, &pd);
  } else if (strcmp(kind, "gelu") == 0) {
    dnnl_eltwise_desc_t ed;
    CHECK(dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, dnnl_eltwise_gelu_erf, &md, 0.0f, 0.0f));
    make_primitive(L, &ed, NULL, &pd);
  } else {
    dnnl_layer_normalization_desc_t ld;
    CHECK(dnnl_layer_normalization_forward_desc_init(&ld, dnnl_forward_inference, &md, NULL, 1e-5f,
                                                     dnnl_use_scale | dnnl_use_shift));
    make_primitive(L, &ld, NULL, &pd);
    dnnl_dims_t cdim = {dims[nd - 1]};
    dnnl_memory_desc_t c_md = desc(1, cdim, dnnl_a);
    arg(L, DNNL_ARG_SCALE, &c_md, load_npy(dir, "gamma", (size_t)cdim[0]));
    arg(L, DNNL_ARG_SHIFT, &c_md, load_npy(dir, "beta", (size_t)cdim[0]));
  }
  arg(L, DNNL_ARG_SRC, &md, load_npy(dir, "x", count(nd, dims)));
  arg(L, DNNL_ARG_DST, &md, output(L, nd, dims));
}

static void make_pool(layer_t *L, const char *kind, const kv_t *kv, const char *dir) {
  static const char *const keys[] = {"n", "c", "h", "w", "k", "stride", "pad", NULL};
  only_keys(kv, keys);
  long n = get_int(kv, "n", -1, 1), c = get_int(kv, "c", -1, 1), h = get_int(kv, "h", -1, 1);
  long w = get_int(kv, "w", -1, 1), k = get_int(kv, "k", -1, 1), s = get_int(kv, "stride", -1, 1);
  long p = get_int(kv, "pad", -1, 0);
  long oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
  if (oh < 1 || ow < 1) fail("the window is larger than the padded input", NULL);
  dnnl_dims_t src = {n, c, h, w}, dst = {n, c, oh, ow}, strides = {s, s}, kernel = {k, k}, dil = {0, 0}, pad = {p, p};
  dnnl_memory_desc_t src_md = desc(4, src, dnnl_nchw), dst_md = desc(4, dst, dnnl_nchw);
  dnnl_alg_kind_t alg = strcmp(kind, "max_pool") == 0 ? dnnl_pooling_max : dnnl_pooling_avg_exclude_padding;
  dnnl_pooling_v2_desc_t pdsc;
  CHECK(dnnl_pooling_v2_forward_desc_init(&pdsc, dnnl_forward_inference, alg, &src_md, &dst_md, strides, kernel, dil,
                                          pad, pad));
  dnnl_primitive_desc_t pd;
  make_primitive(L, &pdsc, NULL, &pd);
  arg(L, DNNL_ARG_SRC, &src_md, load_npy(dir, "x", count(4, src)));
  arg(L, DNNL_ARG_DST, &dst_md, output(L, 4, dst));
}

/* ---- main ---- */

static const char USAGE[] =
    "usage: onednn_layers KIND key=value... --dir DIR [--threads N] [--warmup N] [--runs N] "
    "[--output Y.npy]\n  KIND: conv matmul softmax layer_norm gelu max_pool avg_pool\n";

int main(int argc, char **argv) {
  const char *kind = NULL, *dir = NULL, *output_path = NULL;
  long threads = 0, warmup = 5, runs = 20;
  kv_t kv = {.n = 0};
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *eq = strchr(argv[i], '=');
    if (strcmp(argv[i], "--threads") == 0) threads = harness_count_arg("onednn_layers", argv[i], v, 1), i++;
    else if (strcmp(argv[i], "--warmup") == 0) warmup = harness_count_arg("onednn_layers", argv[i], v, 0), i++;
    else if (strcmp(argv[i], "--runs") == 0) runs = harness_count_arg("onednn_layers", argv[i], v, 1), i++;
    else if (strcmp(argv[i], "--output") == 0 && v) output_path = v, i++;
    else if (strcmp(argv[i], "--dir") == 0 && v) dir = v, i++;
    else if (argv[i][0] != '-' && !kind && !eq) kind = argv[i];
    else if (argv[i][0] != '-' && eq && eq > argv[i] && kv.n < MAX_KV) {
      kv.key[kv.n] = strndup(argv[i], (size_t)(eq - argv[i])), kv.val[kv.n++] = eq + 1;
    } else {
      fprintf(stderr, "onednn_layers: unexpected argument '%s'\n%s", argv[i], USAGE);
      return 2;
    }
  }
  if (!kind || !dir) {
    fprintf(stderr, "onednn_layers: %s\n%s", !kind ? "no layer kind" : "no --dir", USAGE);
    return 2;
  }
  if (threads > 0) {
    char want[32];
    snprintf(want, sizeof want, "%ld", threads);
    const char *have = getenv("OMP_NUM_THREADS");
    if (!have || strcmp(have, want) != 0) {
      setenv("OMP_NUM_THREADS", want, 1);
      execv("/proc/self/exe", argv);
      fprintf(stderr, "onednn_layers: cannot re-execute with OMP_NUM_THREADS=%s\n", want);
      return 1;
    }
  }

  layer_t L = {.nargs = 0};
  CHECK(dnnl_engine_create(&L.eng, dnnl_cpu, 0));
  CHECK(dnnl_stream_create(&L.stream, L.eng, dnnl_stream_default_flags));
  if (strcmp(kind, "conv") == 0) make_conv(&L, &kv, dir);
  else if (strcmp(kind, "matmul") == 0) make_matmul(&L, &kv, dir);
  else if (!strcmp(kind, "softmax") || !strcmp(kind, "layer_norm") || !strcmp(kind, "gelu"))
    make_rowwise(&L, kind, &kv, dir);
  else if (!strcmp(kind, "max_pool") || !strcmp(kind, "avg_pool")) make_pool(&L, kind, &kv, dir);
  else {
    fprintf(stderr, "onednn_layers: unknown layer kind '%s'\n%s", kind, USAGE);
    return 2;
  }

  double *ms = malloc(sizeof(double) * (size_t)runs);
  if (!ms) fail("out of memory", NULL);
  for (long r = -warmup; r < runs; r++) {
    double t0 = harness_now_ms();
    CHECK(dnnl_primitive_execute(L.prim, L.stream, L.nargs, L.args));
    CHECK(dnnl_stream_wait(L.stream));
    if (r >= 0) ms[r] = harness_now_ms() - t0;
  }
  if (output_path) save_npy(output_path, L.out, L.out_nd, L.out_dims);

  qsort(ms, (size_t)runs, sizeof(double), harness_cmp_double);
  double median = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
  const dnnl_version_t *ver = dnnl_version();
  printf(
      "{\"runtime\": \"oneDNN %d.%d.%d\", \"threads\": %ld, \"impl\": \"%s\", \"warmup\": %ld, \"runs\": %ld, "
      "\"latency_ms\": {\"min\": %.6f, \"median\": %.6f, \"max\": %.6f}}\n",
      ver->major, ver->minor, ver->patch, threads, L.impl, warmup, runs, ms[0], median, ms[runs - 1]);
  return 0;
}
