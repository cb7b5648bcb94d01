/* Constant weights packed once, at load (transforms/tir/schedule_prepack.c,
 * runtime/prepack.c, the compile driver's pack_constants): the kernel reads the packed
 * copy instead of making its own; the outputs are the same bits as with per-call
 * repacking (no_prepack) and agree with a double-precision reference computed here;
 * packing happens when the function is compiled, never per call; the kernel cache keeps
 * packed kernels (and a damaged entry is recompiled with a warning, same bits). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/driver.h"
#include "ir/visit.h"
#include "runtime/prepack.h"
#include "support/winograd.h"
#include "testutil.h"
#include "transforms/tir/lower.h"
#include "tvmjit.h"

/* An instance without the disk cache, so every load compiles and packs afresh;
 * threads 0 takes the library's default. */
static tvmjit_instance_t *uncached_instance(int threads) {
  tvmjit_instance_options_t io;
  tvmjit_instance_options_init(&io);
  io.cache.enable = 0;
  io.num_threads = threads;
  tvmjit_instance_t *inst;
  ck_assert_ptr_null(tvmjit_instance_create(&io, &inst));
  return inst;
}

/* An NCHW conv (weights OIHW: repacked to O/L I H W L) and a linear layer whose
 * 1024 x 1024 weight (4 MB, rows of 4 KB, 16 rows of input: packed [N/L, K, L]) is
 * transposed by FoldConstant first, as PyTorch's Linear imports. */
static const char *model_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 8, 12, 12), dtype=\"float32\"), w: R.Tensor((32, 8, 3, 3), dtype=\"float32\"),\n"
    "             a: R.Tensor((16, 1024), dtype=\"float32\"), v: R.Tensor((1024, 1024), dtype=\"float32\"))"
    " -> R.Tuple(R.Tensor((1, 32, 10, 10), dtype=\"float32\"), R.Tensor((16, 1024), dtype=\"float32\")):\n"
    "        with R.dataflow():\n"
    "            y = R.nn.conv2d(x, w, strides=[1, 1], padding=[0, 0, 0, 0])\n"
    "            vt = R.permute_dims(v, axes=[1, 0])\n"
    "            z = R.matmul(a, vt)\n"
    "            gv = (y, z)\n"
    "            R.output(gv)\n"
    "        return gv\n";

enum { X_N = 8 * 12 * 12, W_N = 32 * 8 * 9, Y_N = 32 * 10 * 10, A_N = 16 * 1024, V_N = 1024 * 1024, Z_N = 16 * 1024 };
static const int64_t x_shape[] = {1, 8, 12, 12}, w_shape[] = {32, 8, 3, 3}, a_shape[] = {16, 1024},
                     v_shape[] = {1024, 1024};
static float *x_data, *w_data, *a_data, *v_data;

static void fill(float *p, int n, int mul, int mod) {
  for (int i = 0; i < n; i++) p[i] = (float)((i * mul) % mod) / (float)mod - 0.5f;
}

static void make_data(void) {
  if (x_data) return;
  x_data = malloc(sizeof(float) * X_N), w_data = malloc(sizeof(float) * W_N);
  a_data = malloc(sizeof(float) * A_N), v_data = malloc(sizeof(float) * V_N);
  ck_assert(x_data && w_data && a_data && v_data);
  fill(x_data, X_N, 7, 11), fill(w_data, W_N, 5, 13), fill(a_data, A_N, 3, 17), fill(v_data, V_N, 11, 19);
}

static tvmjit_tensor_t *wrap(int ndim, const int64_t *shape, float *data) {
  tvmjit_tensor_t *t = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, ndim, shape, data, &t));
  return t;
}

/* The model with w and v bound. `w` and `v` are the caller's tensors (borrowed). */
static tvmjit_module_t *load(tvmjit_instance_t *inst, int no_prepack, tvmjit_tensor_t *w, tvmjit_tensor_t *v) {
  tvmjit_module_options_t o;
  tvmjit_module_options_init(&o);
  const char *names[] = {"w", "v"};
  tvmjit_tensor_t *bound[] = {w, v};
  o.n_bind_params = 2;
  o.bind_param_names = names;
  o.bind_params = (const tvmjit_tensor_t *const *)bound;
  o.no_prepack = no_prepack;
  tvmjit_module_t *m = NULL;
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "prepack.rx", model_text, strlen(model_text), &o, &m);
  ck_assert_msg(!st, "%s", st ? tvmjit_status_message(st) : "");
  return m;
}

/* Runs main on x and a; out[0] = conv, out[1] = linear (caller frees). */
static void call(tvmjit_module_t *m, tvmjit_tensor_t **out) {
  tvmjit_function_t *fn;
  tvmjit_status_t *st = tvmjit_module_get_function(m, "main", &fn);
  ck_assert_msg(!st, "%s", st ? tvmjit_status_message(st) : "");
  tvmjit_tensor_t *in[] = {wrap(4, x_shape, x_data), wrap(2, a_shape, a_data)};
  st = tvmjit_function_call(fn, 2, (const tvmjit_tensor_t *const *)in, 2, out);
  ck_assert_msg(!st, "%s", st ? tvmjit_status_message(st) : "");
  tvmjit_tensor_free(in[0]), tvmjit_tensor_free(in[1]);
}

static void expect_same_bits(tvmjit_tensor_t *const *a, tvmjit_tensor_t *const *b) {
  for (int i = 0; i < 2; i++) {
    ck_assert_uint_eq(tvmjit_tensor_nbytes(a[i]), tvmjit_tensor_nbytes(b[i]));
    ck_assert_msg(memcmp(tvmjit_tensor_data(a[i]), tvmjit_tensor_data(b[i]), tvmjit_tensor_nbytes(a[i])) == 0,
                  "output %d differs", i);
  }
}

/* Both outputs against sums in double (the JIT's float32 sums within 1e-5 of the
 * output's scale). */
static void expect_reference(tvmjit_tensor_t *const *out) {
  const float *y = tvmjit_tensor_data(out[0]), *z = tvmjit_tensor_data(out[1]);
  for (int o = 0; o < 32; o++)
    for (int r = 0; r < 10; r++)
      for (int c = 0; c < 10; c++) {
        double s = 0;
        for (int i = 0; i < 8; i++)
          for (int kh = 0; kh < 3; kh++)
            for (int kw = 0; kw < 3; kw++)
              s += (double)x_data[(i * 12 + r + kh) * 12 + c + kw] * w_data[((o * 8 + i) * 3 + kh) * 3 + kw];
        ck_assert_double_eq_tol(y[(o * 10 + r) * 10 + c], s, 1e-5);
      }
  for (int m = 0; m < 16; m += 5)
    for (int n = 0; n < 1024; n += 7) {
      double s = 0;
      for (int k = 0; k < 1024; k++) s += (double)a_data[m * 1024 + k] * v_data[n * 1024 + k];
      ck_assert_double_eq_tol(z[m * 1024 + n], s, 1e-3);
    }
}

/* The instance's pool packs the weights when main is compiled (in pieces, on every
 * thread): 1, 2 and 3 threads pack each weight once and give the same bits. */
START_TEST(weights_packed_on_any_number_of_threads_give_the_same_bits) {
  make_data();
  tvmjit_tensor_t *w = wrap(4, w_shape, w_data), *v = wrap(2, v_shape, v_data), *first[2] = {NULL, NULL};
  for (int threads = 1; threads <= 3; threads++) {
    tvmjit_instance_t *inst = uncached_instance(threads);
    tvmjit_module_t *m = load(inst, 0, w, v);
    tvmjit_tensor_t *out[2];
    long before = tj_prepack_runs();
    call(m, out);
    ck_assert_int_eq(tj_prepack_runs() - before, 2);
    if (threads == 1) {
      expect_reference(out);
      first[0] = out[0], first[1] = out[1];
    } else {
      expect_same_bits(first, out);
      tvmjit_tensor_free(out[0]), tvmjit_tensor_free(out[1]);
    }
    tvmjit_module_free(m);
    tvmjit_instance_free(inst);
  }
  tvmjit_tensor_free(first[0]), tvmjit_tensor_free(first[1]);
  tvmjit_tensor_free(w), tvmjit_tensor_free(v);
}
END_TEST

START_TEST(packed_weights_give_the_bits_of_per_call_repacking) {
  make_data();
  tvmjit_instance_t *inst = uncached_instance(0);
  tvmjit_tensor_t *w = wrap(4, w_shape, w_data), *v = wrap(2, v_shape, v_data);
  tvmjit_module_t *packed = load(inst, 0, w, v), *repacking = load(inst, 1, w, v);
  tvmjit_tensor_t *a[2], *b[2];
  long before = tj_prepack_runs();
  call(packed, a);
  long after_load = tj_prepack_runs();
  /* Compiling main packed the conv weight and the folded linear weight, once each. */
  ck_assert_int_eq(after_load - before, 2);
  call(repacking, b);
  ck_assert_int_eq(tj_prepack_runs(), after_load);
  expect_same_bits(a, b);
  expect_reference(a);
  /* More calls pack nothing and give the same bits. */
  for (int r = 0; r < 3; r++) {
    tvmjit_tensor_t *c[2];
    call(packed, c);
    expect_same_bits(a, c);
    tvmjit_tensor_free(c[0]), tvmjit_tensor_free(c[1]);
  }
  ck_assert_int_eq(tj_prepack_runs(), after_load);
  for (int i = 0; i < 2; i++) tvmjit_tensor_free(a[i]), tvmjit_tensor_free(b[i]);
  tvmjit_module_free(packed), tvmjit_module_free(repacking);
  tvmjit_tensor_free(w), tvmjit_tensor_free(v);
  tvmjit_instance_free(inst);
}
END_TEST

START_TEST(a_weight_only_folded_is_not_used_after_load) {
  make_data();
  tvmjit_instance_t *inst;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  float *v_copy = malloc(sizeof(float) * V_N);
  ck_assert_ptr_nonnull(v_copy);
  memcpy(v_copy, v_data, sizeof(float) * V_N);
  tvmjit_tensor_t *w = wrap(4, w_shape, w_data), *v = wrap(2, v_shape, v_copy);
  tvmjit_module_t *m = load(inst, 0, w, v);
  /* The conv reads w itself; v was only transposed (FoldConstant). */
  ck_assert_int_eq(tvmjit_module_uses_tensor(m, w), 1);
  ck_assert_int_eq(tvmjit_module_uses_tensor(m, v), 0);
  /* So it may go, and the model still computes the same. */
  memset(v_copy, 0xff, sizeof(float) * V_N);
  tvmjit_tensor_free(v);
  free(v_copy);
  tvmjit_tensor_t *out[2];
  call(m, out);
  expect_reference(out);
  tvmjit_tensor_free(out[0]), tvmjit_tensor_free(out[1]);
  tvmjit_module_free(m);
  tvmjit_tensor_free(w);
  tvmjit_instance_free(inst);
}
END_TEST

/* Flips a byte in the middle of every file under dir (the cache's entries). */
static int damage_all(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "find '%s' -type f", dir);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  char path[512];
  int n = 0;
  while (fgets(path, sizeof path, p)) {
    path[strcspn(path, "\n")] = 0;
    size_t len;
    char *b = tu_read_file(path, &len);
    if (!b || len < 128) {
      free(b);
      continue;
    }
    b[len / 2] ^= 0x5a;
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, len, f), len);
    fclose(f);
    free(b);
    n++;
  }
  pclose(p);
  return n;
}

typedef struct sink {
  int warnings;
} sink_t;

static void on_message(void *user, tvmjit_message_kind_t kind, const char *text) {
  (void)text;
  if (kind == TVMJIT_MESSAGE_WARNING) ((sink_t *)user)->warnings++;
}

/* One load through the cache in `dir`: the report's "N compiled, M loaded" into report. */
static void cached_run(const char *dir, sink_t *sink, char *report, size_t cap, tvmjit_tensor_t **out) {
  tvmjit_instance_options_t io;
  tvmjit_instance_options_init(&io);
  io.cache.enable = 1; /* ctest sets TVMJIT_CACHE=0 */
  io.cache.directory = dir;
  tvmjit_instance_t *inst;
  ck_assert_ptr_null(tvmjit_instance_create(&io, &inst));
  tvmjit_tensor_t *w = wrap(4, w_shape, w_data), *v = wrap(2, v_shape, v_data);
  tvmjit_module_options_t o;
  tvmjit_module_options_init(&o);
  const char *names[] = {"w", "v"};
  tvmjit_tensor_t *bound[] = {w, v};
  o.n_bind_params = 2, o.bind_param_names = names, o.bind_params = (const tvmjit_tensor_t *const *)bound;
  o.on_message = on_message, o.message_user = sink;
  tvmjit_module_t *m = NULL;
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "prepack.rx", model_text, strlen(model_text), &o, &m);
  ck_assert_msg(!st, "%s", st ? tvmjit_status_message(st) : "");
  long before = tj_prepack_runs();
  call(m, out);
  ck_assert_int_eq(tj_prepack_runs() - before, 2); /* a cached kernel still gets its packed weights */
  snprintf(report, cap, "%s", tvmjit_module_report(m));
  tvmjit_module_free(m);
  tvmjit_tensor_free(w), tvmjit_tensor_free(v);
  tvmjit_instance_free(inst);
}

START_TEST(the_cache_keeps_packed_kernels_and_recompiles_damaged_ones) {
  make_data();
  const char *tmp = tu_make_tmp_dir("tj_prepack_cache");
  char dir[256], report[4096];
  snprintf(dir, sizeof dir, "%s", tmp);
  sink_t s1 = {0}, s2 = {0}, s3 = {0};
  tvmjit_tensor_t *a[2], *b[2], *c[2];
  cached_run(dir, &s1, report, sizeof report, a);
  ck_assert_ptr_nonnull(strstr(report, "0 loaded from cache"));
  cached_run(dir, &s2, report, sizeof report, b);
  ck_assert_msg(strstr(report, " 0 compiled"), "%s", report);
  ck_assert_int_eq(s2.warnings, 0);
  expect_same_bits(a, b);
  ck_assert_int_ge(damage_all(dir), 1);
  cached_run(dir, &s3, report, sizeof report, c);
  ck_assert_int_ge(s3.warnings, 1);
  ck_assert_msg(!strstr(report, " 0 compiled"), "%s", report);
  expect_same_bits(a, c);
  expect_reference(c);
  for (int i = 0; i < 2; i++) tvmjit_tensor_free(a[i]), tvmjit_tensor_free(b[i]), tvmjit_tensor_free(c[i]);
  tu_remove_tree(dir);
}
END_TEST

/* A tensor of its own (tvmjit_tensor_new) holding a copy of `data`. */
static tvmjit_tensor_t *owned_copy(int ndim, const int64_t *shape, const float *data) {
  tvmjit_tensor_t *t = NULL;
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, ndim, shape, &t));
  memcpy(tvmjit_tensor_data(t), data, tvmjit_tensor_nbytes(t));
  return t;
}

/* Weights handed to the module (tvmjit_module_adopt_tensor): the one FoldConstant
 * transposed goes at once, the conv weight the kernel reads only packed goes once
 * packed (the report counts it), and the outputs are the bits of a load that keeps
 * both, in the reference's tolerance. */
START_TEST(adopted_weights_are_freed_once_packed_with_the_same_bits) {
  make_data();
  tvmjit_instance_t *inst = uncached_instance(0);
  tvmjit_tensor_t *w = wrap(4, w_shape, w_data), *v = wrap(2, v_shape, v_data), *kept[2], *got[2], *again[2];
  tvmjit_module_t *m = load(inst, 0, w, v);
  call(m, kept);
  ck_assert_ptr_null(strstr(tvmjit_module_report(m), "freed once packed"));
  tvmjit_module_free(m);
  tvmjit_tensor_t *w2 = owned_copy(4, w_shape, w_data), *v2 = owned_copy(2, v_shape, v_data);
  tvmjit_status_t *st = tvmjit_module_adopt_tensor(NULL, w2); /* an error: w2 stays ours */
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_INVALID_ARGUMENT);
  tvmjit_status_free(st);
  m = load(inst, 0, w2, v2);
  ck_assert_int_eq(tvmjit_module_uses_tensor(m, v2), 0);
  ck_assert_ptr_null(tvmjit_module_adopt_tensor(m, w2));
  ck_assert_ptr_null(tvmjit_module_adopt_tensor(m, v2)); /* freed here: an ASan build checks nothing reads it */
  call(m, got);
  ck_assert_msg(strstr(tvmjit_module_report(m), "weights: 1 bound weights (0.0 MB) freed once packed"), "%s",
                tvmjit_module_report(m));
  expect_same_bits(kept, got);
  expect_reference(got);
  call(m, again); /* later calls read the packed copy only */
  expect_same_bits(kept, again);
  tvmjit_module_free(m);
  for (int i = 0; i < 2; i++) tvmjit_tensor_free(kept[i]), tvmjit_tensor_free(got[i]), tvmjit_tensor_free(again[i]);
  tvmjit_tensor_free(w), tvmjit_tensor_free(v);
  tvmjit_instance_free(inst);
}
END_TEST

/* ---- the schedule: which kernels read their weight packed ---- */

typedef struct packed_alloc {
  int n;
} packed_alloc_t;

static bool count_packed_allocs(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  if (s->kind == TJ_TIR_ALLOCATE && strstr(s->allocate.buffer->name, "_packed")) ((packed_alloc_t *)v->ctx)->n++;
  return true;
}

static int packed_allocs(const tj_prim_func_t *f) {
  packed_alloc_t c = {0};
  tj_tir_visitor_t v = {.stmt = count_packed_allocs, .ctx = &c};
  tj_tir_visit_stmt(&v, f->body);
  return c.n;
}

/* `name` of the module `text` after LegalizeOps. */
static const tj_prim_func_t *legalized_prim(tj_arena_t *arena, const char *text, const char *name) {
  tj_module_t *parsed;
  TU_OK(tj_driver_parse(arena, "prepack.rx", text, strlen(text), &parsed));
  tj_driver_passes_t o = {.passes = "LegalizeOps"};
  const tj_module_t *legal;
  TU_OK(tj_driver_run_passes(arena, &o, parsed, &legal, NULL));
  const tj_prim_func_t *f = tj_module_find_prim(legal, name);
  ck_assert_ptr_nonnull(f);
  return f;
}

START_TEST(a_constant_weight_becomes_a_packed_parameter) {
  tj_arena_t *arena = tj_arena_create();
  const tj_prim_func_t *conv = legalized_prim(arena, model_text, "conv2d");
  ck_assert_int_eq(conv->n_params, 3); /* x, w, out */
  for (int vector_bits = 256; vector_bits <= 512; vector_bits += 256) {
    tj_tir_prepacks_t packs = {0};
    tj_tir_schedule_options_t s = {.enabled = true, .vector_bits = vector_bits, .prepacked = &packs};
    const tj_prim_func_t *low;
    /* w not constant: the kernel repacks it itself, on every call. */
    TU_OK(tj_tir_lower_scheduled(arena, conv, "conv2d", &s, &low));
    ck_assert_int_eq(packs.n, 0);
    ck_assert_int_eq(low->n_params, 3);
    ck_assert_int_eq(packed_allocs(low), 1);
    /* w constant: one more parameter, and no repack inside. */
    s.constant_params = 1u << 1;
    TU_OK(tj_tir_lower_scheduled(arena, conv, "conv2d", &s, &low));
    ck_assert_int_eq(packs.n, 1);
    ck_assert_int_eq(packs.items[0].param, 1);
    ck_assert_int_eq(packs.items[0].packed_param, 3);
    ck_assert(packs.items[0].source_unread);
    /* L: the tile's channel block, whole vectors (several at 512 bits: channel_tile). */
    ck_assert_int_gt(packs.items[0].lanes, 0);
    ck_assert_int_eq(packs.items[0].lanes % (vector_bits / 32), 0);
    ck_assert_int_eq(low->n_params, 4);
    ck_assert_int_eq(packed_allocs(low), 0);
    /* The packed layout is O/L I H W L. */
    const int want_perm[] = {1, 2, 3, 0};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(packs.items[0].perm[i], want_perm[i]);
  }
  tj_arena_free(arena);
}
END_TEST

static void expect_error(tj_status_t *st, const char *part) {
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(strstr(tj_status_text(st), part), "%s", tj_status_text(st));
  tj_status_free(st);
}

START_TEST(packing_copies_each_element_to_its_place) {
  /* A float16 [5, 2, 8] weight, vector dim 2 (8 = 2 x 4 lanes), widened to float32. */
  enum { D0 = 5, D1 = 2, D2 = 8, L = 4 };
  uint16_t w[D0 * D1 * D2];
  for (int i = 0; i < D0 * D1 * D2; i++) w[i] = tj_float_to_half((float)i * 0.5f);
  tj_prepack_desc_t d = {.ndim = 3, .shape = {D0, D1, D2}, .perm = {0, 1, 2}, .lanes = L,
                         .from = tj_dtype_make(TJ_DT_FLOAT, 16, 1), .to = tj_dtype_make(TJ_DT_FLOAT, 32, 1)};
  size_t bytes;
  TU_OK(tj_prepack_bytes(&d, &bytes));
  ck_assert_uint_eq(bytes, sizeof(float) * D0 * D1 * D2);
  float out[D0 * D1 * D2];
  TU_OK(tj_prepack_run(&d, w, out));
  for (int fv = 0; fv < D2 / L; fv++)
    for (int a = 0; a < D0; a++)
      for (int b = 0; b < D1; b++)
        for (int fi = 0; fi < L; fi++)
          ck_assert_float_eq(out[((fv * D0 + a) * D1 + b) * L + fi], (float)((a * D1 + b) * D2 + fv * L + fi) * 0.5f);
  /* Vector dim 0 ([5, ...] with 5 lanes), float32 to float32: perm {1, 2, 0}. */
  float src[D0 * D1 * D2], dst[D0 * D1 * D2];
  for (int i = 0; i < D0 * D1 * D2; i++) src[i] = (float)i;
  tj_prepack_desc_t e = {.ndim = 3, .shape = {D0, D1, D2}, .perm = {1, 2, 0}, .lanes = D0,
                         .from = tj_dtype_make(TJ_DT_FLOAT, 32, 1), .to = tj_dtype_make(TJ_DT_FLOAT, 32, 1)};
  TU_OK(tj_prepack_run(&e, src, dst));
  for (int b = 0; b < D1; b++)
    for (int c = 0; c < D2; c++)
      for (int fi = 0; fi < D0; fi++) ck_assert_float_eq(dst[(b * D2 + c) * D0 + fi], src[(fi * D1 + b) * D2 + c]);
  /* Descriptions it cannot pack are errors, not crashes. */
  e.lanes = 3;
  expect_error(tj_prepack_bytes(&e, &bytes), "do not divide");
  e.lanes = D0, e.perm[0] = 2;
  expect_error(tj_prepack_bytes(&e, &bytes), "permutation");
}
END_TEST

/* Every element at the place prepack.h's formula gives, for the layouts the blocked
 * transposes take (the vector dim first, in the middle or last; lanes and row lengths
 * that are and are not multiples of the 4x4 register transpose and of a cache line; 1-,
 * 2-, 4- and 8-byte elements) and for a permutation that reorders the other dims (the
 * element by element path). The reference walks the packed tensor and computes each
 * source index from the formula; elements are distinct bit patterns. */
static void check_packing(int ndim, const int64_t *shape, const int *perm, int64_t lanes, int elem) {
  tj_prepack_desc_t d;
  memset(&d, 0, sizeof d);
  d.ndim = ndim;
  for (int i = 0; i < ndim; i++) d.shape[i] = shape[i], d.perm[i] = perm[i];
  d.lanes = lanes;
  d.from = d.to = elem == 1 ? tj_dtype_make(TJ_DT_UINT, 8, 1)
                  : elem == 2 ? tj_dtype_make(TJ_DT_INT, 16, 1)
                  : elem == 4 ? TJ_F32
                              : tj_dtype_make(TJ_DT_INT, 64, 1);
  size_t bytes;
  TU_OK(tj_prepack_bytes(&d, &bytes));
  size_t n = bytes / (size_t)elem;
  unsigned char *src = malloc(bytes), *dst = malloc(bytes);
  ck_assert(src && dst);
  for (size_t i = 0; i < bytes; i++) src[i] = (unsigned char)((i * 131 + i / 251) & 0xff);
  memset(dst, 0xee, bytes);
  TU_OK(tj_prepack_run(&d, src, dst));
  int64_t stride[TJ_MAX_NDIM];
  stride[ndim - 1] = 1;
  for (int i = ndim - 2; i >= 0; i--) stride[i] = stride[i + 1] * shape[i + 1];
  int64_t ext[TJ_MAX_NDIM + 1], idx[TJ_MAX_NDIM + 1] = {0}; /* packed index: fv, j0..j{n-2}, fi */
  ext[0] = shape[perm[ndim - 1]] / lanes;
  for (int q = 0; q + 1 < ndim; q++) ext[1 + q] = shape[perm[q]];
  ext[ndim] = lanes;
  for (size_t at = 0; at < n; at++) {
    int64_t from = (idx[0] * lanes + idx[ndim]) * stride[perm[ndim - 1]];
    for (int q = 0; q + 1 < ndim; q++) from += idx[1 + q] * stride[perm[q]];
    ck_assert_msg(memcmp(dst + at * (size_t)elem, src + (size_t)from * (size_t)elem, (size_t)elem) == 0,
                  "rank %d, %lld lanes, %d-byte elements: packed element %zu is not source element %lld", ndim,
                  (long long)lanes, elem, at, (long long)from);
    for (int q = ndim; q >= 0 && ++idx[q] == ext[q]; q--) idx[q] = 0;
  }
  /* In parts, as threads pack them (the last third first): the same bytes, one run. */
  unsigned char *parts = malloc(bytes);
  ck_assert(parts);
  memset(parts, 0x11, bytes);
  int64_t np = tj_prepack_parts(&d), cut[] = {0, np / 3, 2 * np / 3, np};
  long before = tj_prepack_runs();
  for (int k = 2; k >= 0; k--) TU_OK(tj_prepack_run_parts(&d, src, parts, cut[k], cut[k + 1]));
  ck_assert_int_eq(tj_prepack_runs() - before, 1);
  ck_assert(memcmp(parts, dst, bytes) == 0);
  free(parts);
  free(src);
  free(dst);
}

START_TEST(blocked_packing_puts_each_element_at_its_place) {
  const int conv[] = {1, 2, 3, 0}, mid[] = {0, 2, 1}, last[] = {0, 1, 2}, reorder[] = {2, 0, 1};
  check_packing(4, (const int64_t[]){64, 20, 3, 3}, conv, 32, 4);  /* 4x4 transposes, 180-element rows */
  check_packing(4, (const int64_t[]){64, 7, 3, 3}, conv, 32, 4);   /* 63-element rows: the scalar tiles */
  check_packing(4, (const int64_t[]){12, 5, 1, 1}, conv, 6, 4);    /* lanes not a multiple of 4 */
  check_packing(3, (const int64_t[]){3, 16, 20}, mid, 8, 4);       /* the vector dim in the middle */
  check_packing(3, (const int64_t[]){3, 5, 16}, last, 8, 4);       /* last: contiguous runs of lanes */
  check_packing(3, (const int64_t[]){3, 16, 36}, mid, 4, 1);
  check_packing(3, (const int64_t[]){3, 16, 36}, mid, 16, 2);
  check_packing(3, (const int64_t[]){3, 16, 36}, mid, 8, 8);
  check_packing(3, (const int64_t[]){6, 4, 5}, reorder, 2, 4);     /* the other dims reordered */
}
END_TEST

/* The load-time transform (8 kernels at a time, in vector registers) gives
 * tj_winograd_weight's bits kernel by kernel, for F(2x2) and F(4x4), one and several
 * lanes, channel counts that are and are not multiples of 8, and weights holding -0,
 * infinities, NaN, denormals and FLT_MAX; from OIHW and from the same weight as OHWI
 * (perm {0, 3, 1, 2}, schedule_winograd_nhwc.c). */
START_TEST(winograd_packing_gives_the_bits_of_the_one_kernel_transform) {
  static const float specials[] = {-0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -3e-39f, 3.4028235e38f, 0.0f};
  const int ms[] = {2, 4}, channels[] = {8, 13, 3}, lanes[] = {1, 4};
  for (int mi = 0; mi < 2; mi++)
    for (int ci = 0; ci < 3; ci++)
      for (int li = 0; li < 4; li++) {
        int64_t F = 8, C = channels[ci], L = lanes[li % 2];
        bool channels_last = li >= 2;
        const tj_winograd_t *wt = tj_winograd(ms[mi]);
        int P = wt->alpha * wt->alpha;
        float *w = malloc(sizeof(float) * (size_t)(F * C * 9)), *u = malloc(sizeof(float) * (size_t)(F * C * P));
        float *wl = malloc(sizeof(float) * (size_t)(F * C * 9));
        ck_assert(w && u && wl);
        for (int64_t i = 0; i < F * C * 9; i++)
          w[i] = i % 29 == 5 ? specials[(i / 29) % 8] : (float)((i * 7919) % 1009) / 97.0f - 5.0f;
        for (int64_t f = 0; f < F; f++) /* wl[f, e / 3, e % 3, c] = w[f, c, e / 3, e % 3] */
          for (int64_t c = 0; c < C; c++)
            for (int e = 0; e < 9; e++) wl[(f * 9 + e) * C + c] = w[(f * C + c) * 9 + e];
        tj_prepack_desc_t d = {.ndim = 4, .shape = {F, C, 3, 3}, .perm = {0, 1, 2, 3}, .lanes = L, .from = TJ_F32,
                               .to = TJ_F32, .winograd_m = ms[mi]};
        if (channels_last)
          d = (tj_prepack_desc_t){.ndim = 4, .shape = {F, 3, 3, C}, .perm = {0, 3, 1, 2}, .lanes = L, .from = TJ_F32,
                                  .to = TJ_F32, .winograd_m = ms[mi]};
        /* in two parts, the second first, as two threads may write them */
        TU_OK(tj_prepack_run_parts(&d, channels_last ? wl : w, u, 3, tj_prepack_parts(&d)));
        TU_OK(tj_prepack_run_parts(&d, channels_last ? wl : w, u, 0, 3));
        for (int64_t f = 0; f < F; f++)
          for (int64_t c = 0; c < C; c++) {
            float want[TJ_WINOGRAD_MAX_ALPHA * TJ_WINOGRAD_MAX_ALPHA];
            tj_winograd_weight(wt, w + (f * C + c) * 9, want);
            for (int p = 0; p < P; p++) {
              float got = u[((f / L * P + p) * C + c) * L + f % L];
              ck_assert_msg(memcmp(&got, &want[p], 4) == 0 || (isnan(got) && isnan(want[p])),
                            "F(%d) C=%lld L=%lld OHWI=%d: kernel (%lld, %lld) position %d: %a, want %a", ms[mi],
                            (long long)C, (long long)L, channels_last, (long long)f, (long long)c, p, got, want[p]);
            }
          }
        free(w);
        free(wl);
        free(u);
      }
}
END_TEST

/* The Winograd kind: U[fb, p, c, w] = (G g G^T)[p] of the weight g[fb * L + w, c], G the
 * F(2x2, 3x3) matrix of Lavin & Gray (written here from the paper), in double. */
START_TEST(winograd_packing_transforms_each_kernel) {
  enum { F = 8, C = 3, L = 4, P = 16 };
  static const double g2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  float w[F * C * 9], u[F * C * P];
  for (int i = 0; i < F * C * 9; i++) w[i] = (float)((i * 7) % 23) / 23.0f - 0.5f;
  tj_prepack_desc_t d = {.ndim = 4, .shape = {F, C, 3, 3}, .perm = {0, 1, 2, 3}, .lanes = L, .from = TJ_F32,
                         .to = TJ_F32, .winograd_m = 2};
  size_t bytes;
  TU_OK(tj_prepack_bytes(&d, &bytes));
  ck_assert_uint_eq(bytes, sizeof u);
  ck_assert_int_eq(tj_prepack_ndim(&d), 4);
  int64_t shape[4];
  tj_prepack_shape(&d, shape);
  ck_assert(shape[0] == F / L && shape[1] == P && shape[2] == C && shape[3] == L);
  long before = tj_prepack_runs();
  TU_OK(tj_prepack_run(&d, w, u));
  ck_assert_int_eq(tj_prepack_runs() - before, 1);
  for (int f = 0; f < F; f++)
    for (int c = 0; c < C; c++)
      for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
          double want = 0;
          for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) want += g2[a][i] * w[((f * C + c) * 3 + i) * 3 + j] * g2[b][j];
          ck_assert_double_eq_tol(u[(((f / L) * P + a * 4 + b) * C + c) * L + f % L], want, 1e-6);
        }
  /* Descriptions it cannot transform are errors. */
  d.winograd_m = 3;
  expect_error(tj_prepack_bytes(&d, &bytes), "Winograd");
  d.winograd_m = 2, d.shape[2] = 5;
  expect_error(tj_prepack_bytes(&d, &bytes), "Winograd");
  /* neither OIHW nor OHWI */
  d.shape[2] = 3, d.perm[1] = 2, d.perm[2] = 1;
  expect_error(tj_prepack_bytes(&d, &bytes), "Winograd");
}
END_TEST

/* A 3x3 conv (32 -> 32 channels at 10x10, padded) with its weight bound and the Winograd
 * rule asked for (TVMJIT_WINOGRAD=1): the weight transform runs once, at load, never per
 * call; the output agrees with a double-precision direct conv, and with the kernel that
 * transforms the weight itself on every call (no_prepack). */
static const char *winograd_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 32, 10, 10), dtype=\"float32\"), w: R.Tensor((32, 32, 3, 3), dtype=\"float32\"))"
    " -> R.Tensor((1, 32, 10, 10), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            y = R.nn.conv2d(x, w, strides=[1, 1], padding=[1, 1, 1, 1])\n"
    "            R.output(y)\n"
    "        return y\n";

static tvmjit_tensor_t *winograd_call(tvmjit_instance_t *inst, int no_prepack, int strict, float *x, float *w,
                                      long *packs) {
  static const int64_t xs[] = {1, 32, 10, 10}, ws[] = {32, 32, 3, 3};
  tvmjit_tensor_t *wt = wrap(4, ws, w), *xt = wrap(4, xs, x), *out = NULL;
  tvmjit_module_options_t o;
  tvmjit_module_options_init(&o);
  const char *names[] = {"w"};
  o.n_bind_params = 1, o.bind_param_names = names, o.bind_params = (const tvmjit_tensor_t *const *)&wt;
  o.no_prepack = no_prepack;
  o.strict_float = strict;
  tvmjit_module_t *m = NULL;
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "winograd.rx", winograd_text, strlen(winograd_text), &o, &m);
  ck_assert_msg(!st, "%s", st ? tvmjit_status_message(st) : "");
  long before = tj_prepack_runs();
  tvmjit_function_t *fn; /* compiled here: the weight is transformed now */
  ck_assert_ptr_null(tvmjit_module_get_function(m, "main", &fn));
  for (int r = 0; r < 3; r++) {
    if (out) tvmjit_tensor_free(out);
    st = tvmjit_function_call(fn, 1, (const tvmjit_tensor_t *const *)&xt, 1, &out);
    ck_assert_msg(!st, "%s", st ? tvmjit_status_message(st) : "");
  }
  *packs = tj_prepack_runs() - before;
  tvmjit_module_free(m);
  tvmjit_tensor_free(xt), tvmjit_tensor_free(wt);
  return out;
}

START_TEST(winograd_weights_are_transformed_once_at_load) {
  enum { XN = 32 * 100, WN = 32 * 32 * 9 };
  float *x = malloc(sizeof(float) * XN), *w = malloc(sizeof(float) * WN);
  ck_assert(x && w);
  fill(x, XN, 7, 11), fill(w, WN, 5, 13);
  ck_assert_int_eq(setenv("TVMJIT_WINOGRAD", "1", 1), 0);
  tvmjit_instance_t *inst = uncached_instance(0);
  long packed_runs, per_call_runs, direct_runs;
  tvmjit_tensor_t *a = winograd_call(inst, 0, 0, x, w, &packed_runs), *b = winograd_call(inst, 1, 0, x, w, &per_call_runs);
  tvmjit_tensor_t *d = winograd_call(inst, 0, 1, x, w, &direct_runs);
  ck_assert_int_eq(unsetenv("TVMJIT_WINOGRAD"), 0);
  ck_assert_int_eq(packed_runs, 1); /* when main is compiled, then never */
  ck_assert_int_eq(per_call_runs, 0);
  ck_assert_int_eq(direct_runs, 1); /* the strict mode's direct conv packs its own layout */
  /* the strict mode keeps the direct conv: other bits than Winograd's */
  ck_assert(memcmp(tvmjit_tensor_data(a), tvmjit_tensor_data(d), tvmjit_tensor_nbytes(a)) != 0);
  const float *ya = tvmjit_tensor_data(a), *yb = tvmjit_tensor_data(b);
  for (int o = 0; o < 32; o++)
    for (int r = 0; r < 10; r++)
      for (int c = 0; c < 10; c++) {
        double s = 0;
        for (int i = 0; i < 32; i++)
          for (int kh = 0; kh < 3; kh++)
            for (int kw = 0; kw < 3; kw++) {
              int y = r + kh - 1, xx = c + kw - 1;
              if (y >= 0 && y < 10 && xx >= 0 && xx < 10)
                s += (double)x[(i * 10 + y) * 10 + xx] * w[((o * 32 + i) * 3 + kh) * 3 + kw];
            }
        ck_assert_double_eq_tol(ya[(o * 10 + r) * 10 + c], s, 2e-5);
        ck_assert_double_eq_tol(yb[(o * 10 + r) * 10 + c], s, 2e-5);
      }
  tvmjit_tensor_free(a), tvmjit_tensor_free(b), tvmjit_tensor_free(d);
  tvmjit_instance_free(inst);
  free(x), free(w);
}
END_TEST

static bool same_bits(const tvmjit_tensor_t *a, const tvmjit_tensor_t *b) {
  return tvmjit_tensor_nbytes(a) == tvmjit_tensor_nbytes(b) &&
         memcmp(tvmjit_tensor_data(a), tvmjit_tensor_data(b), tvmjit_tensor_nbytes(a)) == 0;
}

/* The Winograd rule is on by default in the default float mode (jit/target.c): with
 * TVMJIT_WINOGRAD unset the conv gives the bits it gives with TVMJIT_WINOGRAD=1, not
 * those of TVMJIT_WINOGRAD=0 (the direct conv); --strict-float never uses it (the same
 * bits whatever the variable says). */
START_TEST(winograd_is_the_default_float_mode_and_never_strict) {
  enum { XN = 32 * 100, WN = 32 * 32 * 9 };
  float *x = malloc(sizeof(float) * XN), *w = malloc(sizeof(float) * WN);
  ck_assert(x && w);
  fill(x, XN, 7, 11), fill(w, WN, 5, 13);
  tvmjit_instance_t *inst = uncached_instance(0);
  long packs;
  const char *modes[3] = {NULL, "1", "0"};
  tvmjit_tensor_t *def[3], *strict[3];
  for (int i = 0; i < 3; i++) {
    if (modes[i]) ck_assert_int_eq(setenv("TVMJIT_WINOGRAD", modes[i], 1), 0);
    else ck_assert_int_eq(unsetenv("TVMJIT_WINOGRAD"), 0);
    def[i] = winograd_call(inst, 0, 0, x, w, &packs);
    strict[i] = winograd_call(inst, 0, 1, x, w, &packs);
  }
  ck_assert_int_eq(unsetenv("TVMJIT_WINOGRAD"), 0);
  ck_assert(same_bits(def[0], def[1]));
  ck_assert(!same_bits(def[0], def[2]));
  ck_assert(same_bits(strict[0], strict[1]) && same_bits(strict[0], strict[2]));
  ck_assert(!same_bits(strict[0], def[0]));
  for (int i = 0; i < 3; i++) tvmjit_tensor_free(def[i]), tvmjit_tensor_free(strict[i]);
  tvmjit_instance_free(inst);
  free(x), free(w);
}
END_TEST

/* A 768x768 weight (2.25 MB, rows of 3 KB) read by 16 rows: not worth a copy per call,
 * worth one at load. */
static const char *small_matmul_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(a: R.Tensor((16, 768), dtype=\"float32\"), v: R.Tensor((768, 768), dtype=\"float32\"))"
    " -> R.Tensor((16, 768), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            z = R.matmul(a, v)\n"
    "            R.output(z)\n"
    "        return z\n";

/* The tir.prefetch calls of a lowered kernel, and whether each reads the packed weight
 * (its address a load of the parameter named "*_packed"). */
typedef struct prefetches {
  int n, of_packed;
} prefetches_t;

static bool count_prefetch(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  prefetches_t *p = v->ctx;
  if (e->kind != TJ_TIR_CALL || strcmp(e->call.op, "tir.prefetch")) return true;
  p->n++;
  const tj_tir_expr_t *addr = e->call.args[0];
  if (addr->kind == TJ_TIR_CALL && addr->call.args[0]->kind == TJ_TIR_BUFFER_LOAD &&
      strstr(addr->call.args[0]->load.buffer->name, "_packed"))
    p->of_packed++;
  return true;
}

static prefetches_t prefetches(const tj_prim_func_t *f) {
  prefetches_t c = {0, 0};
  tj_tir_visitor_t v = {.expr = count_prefetch, .ctx = &c};
  tj_tir_visit_stmt(&v, f->body);
  return c;
}

START_TEST(a_constant_matmul_weight_is_packed_below_the_per_call_threshold) {
  tj_arena_t *arena = tj_arena_create();
  const tj_prim_func_t *mm = legalized_prim(arena, small_matmul_text, "matmul");
  tj_tir_prepacks_t packs = {0};
  tj_tir_schedule_options_t s = {.enabled = true, .vector_bits = 512, .prepacked = &packs};
  const tj_prim_func_t *low;
  TU_OK(tj_tir_lower_scheduled(arena, mm, "matmul", &s, &low));
  ck_assert_int_eq(packs.n, 0);
  ck_assert_int_eq(packed_allocs(low), 0); /* read in place, as before */
  ck_assert_int_eq(prefetches(low).n, 0);  /* rows 3 KB apart: no prefetch */
  s.constant_params = 1u << 1;
  TU_OK(tj_tir_lower_scheduled(arena, mm, "matmul", &s, &low));
  ck_assert_int_eq(packs.n, 1);
  ck_assert_int_eq(packs.items[0].param, 1);
  ck_assert_int_eq(low->n_params, 4);
  /* Packed, each k step prefetches a line of the next column block's panel. */
  prefetches_t p = prefetches(low);
  ck_assert_int_eq(p.n, 1);
  ck_assert_int_eq(p.of_packed, 1);
  tj_arena_free(arena);
}
END_TEST

/* main(a, v[, bias]) of `text` with v bound (a M x K, v K x N, bias N or none), run
 * with the weight packed at load and with no_prepack (read in place): the same bits,
 * and a double-precision reference a @ v + bias. */
static void expect_packed_matches_in_place(const char *text, int M, int K, int N, bool bias) {
  const int64_t a_dims[] = {M, K}, v_dims[] = {K, N}, b_dims[] = {N};
  float *a = malloc(sizeof(float) * M * K), *v = malloc(sizeof(float) * K * N), *b = malloc(sizeof(float) * N);
  ck_assert(a && v && b);
  fill(a, M * K, 3, 17), fill(v, K * N, 11, 19), fill(b, N, 5, 7);
  tvmjit_instance_t *inst = uncached_instance(2);
  tvmjit_tensor_t *vt = wrap(2, v_dims, v), *in[2] = {wrap(2, a_dims, a), wrap(1, b_dims, b)}, *out[2];
  for (int no_prepack = 0; no_prepack < 2; no_prepack++) {
    tvmjit_module_options_t o;
    tvmjit_module_options_init(&o);
    const char *names[] = {"v"};
    o.n_bind_params = 1, o.bind_param_names = names, o.bind_params = (const tvmjit_tensor_t *const *)&vt;
    o.no_prepack = no_prepack;
    tvmjit_module_t *m = NULL;
    tvmjit_function_t *fn;
    ck_assert_ptr_null(tvmjit_module_load_string(inst, "mm.rx", text, strlen(text), &o, &m));
    ck_assert_ptr_null(tvmjit_module_get_function(m, "main", &fn));
    ck_assert_ptr_null(
        tvmjit_function_call(fn, bias ? 2 : 1, (const tvmjit_tensor_t *const *)in, 1, &out[no_prepack]));
    tvmjit_module_free(m);
  }
  ck_assert(!memcmp(tvmjit_tensor_data(out[0]), tvmjit_tensor_data(out[1]), sizeof(float) * M * N));
  const float *z = tvmjit_tensor_data(out[0]);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double sum = bias ? b[j] : 0;
      for (int k = 0; k < K; k++) sum += (double)a[i * K + k] * v[k * N + j];
      ck_assert_double_eq_tol(z[i * N + j], sum, 1e-3);
    }
  for (int i = 0; i < 2; i++) tvmjit_tensor_free(out[i]), tvmjit_tensor_free(in[i]);
  tvmjit_tensor_free(vt);
  tvmjit_instance_free(inst);
  free(a), free(v), free(b);
}

/* The 16x768 by 768x768 matmul with its weight bound: packed at load (and prefetched
 * panel by panel) it gives the bits of the kernel that reads the weight in place
 * (no_prepack), and both agree with a double-precision sum. */
START_TEST(a_prefetched_packed_matmul_gives_the_bits_of_the_unpacked_one) {
  expect_packed_matches_in_place(small_matmul_text, 16, 768, 768, false);
}
END_TEST

/* 1x1 convs of the pointwise rule (schedule_pointwise.c) with their weights bound:
 * 20 -> 30 channels at 7x9 (63 pixels: the last block of pixels masked) with a clip,
 * and 704 -> 64 at 5x5 (input channels in blocks, sums kept between blocks). Packed at
 * load in tile order ([F / ROWS, C, 1, 1, ROWS]) they give the bits of the kernels that
 * read OIHW in place (no_prepack), and agree with sums in double. */
static const char *pointwise_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 20, 7, 9), dtype=\"float32\"), w: R.Tensor((30, 20, 1, 1), dtype=\"float32\"),\n"
    "             u: R.Tensor((1, 704, 5, 5), dtype=\"float32\"), v: R.Tensor((64, 704, 1, 1), dtype=\"float32\")):\n"
    "        with R.dataflow():\n"
    "            y = R.nn.conv2d(x, w, strides=[1, 1], padding=[0, 0, 0, 0])\n"
    "            r = R.clip(y, R.prim_value(-0.25), R.prim_value(0.25))\n"
    "            z = R.nn.conv2d(u, v, strides=[1, 1], padding=[0, 0, 0, 0])\n"
    "            gv = (r, z)\n"
    "            R.output(gv)\n"
    "        return gv\n";

static void expect_pointwise_reference(const float *out, const float *x, const float *w, int F, int C, int P,
                                       double lo, double hi) {
  for (int f = 0; f < F; f++)
    for (int p = 0; p < P; p++) {
      double s = 0;
      for (int c = 0; c < C; c++) s += (double)x[c * P + p] * w[f * C + c];
      s = s < lo ? lo : s > hi ? hi : s;
      ck_assert_double_eq_tol(out[f * P + p], s, 1e-4);
    }
}

START_TEST(a_pointwise_conv_weight_packed_in_tile_order_keeps_the_bits) {
  const int64_t x_dims[] = {1, 20, 7, 9}, w_dims[] = {30, 20, 1, 1}, u_dims[] = {1, 704, 5, 5},
                v_dims[] = {64, 704, 1, 1};
  enum { XN = 20 * 63, WN = 30 * 20, UN = 704 * 25, VN = 64 * 704 };
  float *x = malloc(sizeof(float) * XN), *w = malloc(sizeof(float) * WN), *u = malloc(sizeof(float) * UN),
        *v = malloc(sizeof(float) * VN);
  ck_assert(x && w && u && v);
  fill(x, XN, 7, 11), fill(w, WN, 5, 13), fill(u, UN, 3, 17), fill(v, VN, 11, 19);
  tvmjit_instance_t *inst = uncached_instance(2);
  tvmjit_tensor_t *bound[2] = {wrap(4, w_dims, w), wrap(4, v_dims, v)};
  tvmjit_tensor_t *in[2] = {wrap(4, x_dims, x), wrap(4, u_dims, u)}, *out[2][2];
  for (int no_prepack = 0; no_prepack < 2; no_prepack++) {
    tvmjit_module_options_t o;
    tvmjit_module_options_init(&o);
    const char *names[] = {"w", "v"};
    o.n_bind_params = 2, o.bind_param_names = names, o.bind_params = (const tvmjit_tensor_t *const *)bound;
    o.no_prepack = no_prepack;
    tvmjit_module_t *m = NULL;
    tvmjit_function_t *fn;
    ck_assert_ptr_null(tvmjit_module_load_string(inst, "pw.rx", pointwise_text, strlen(pointwise_text), &o, &m));
    long before = tj_prepack_runs();
    ck_assert_ptr_null(tvmjit_module_get_function(m, "main", &fn));
    /* both weights packed once when main is compiled (none without prepacking) */
    ck_assert_int_eq(tj_prepack_runs() - before, no_prepack ? 0 : 2);
    ck_assert_ptr_null(tvmjit_function_call(fn, 2, (const tvmjit_tensor_t *const *)in, 2, out[no_prepack]));
    tvmjit_module_free(m);
  }
  for (int i = 0; i < 2; i++)
    ck_assert_msg(!memcmp(tvmjit_tensor_data(out[0][i]), tvmjit_tensor_data(out[1][i]), tvmjit_tensor_nbytes(out[0][i])),
                  "output %d differs", i);
  expect_pointwise_reference(tvmjit_tensor_data(out[0][0]), x, w, 30, 20, 63, -0.25, 0.25);
  expect_pointwise_reference(tvmjit_tensor_data(out[0][1]), u, v, 64, 704, 25, -1e30, 1e30);
  for (int i = 0; i < 2; i++)
    tvmjit_tensor_free(out[0][i]), tvmjit_tensor_free(out[1][i]), tvmjit_tensor_free(in[i]), tvmjit_tensor_free(bound[i]);
  tvmjit_instance_free(inst);
  free(x), free(w), free(u), free(v);
}
END_TEST

/* A 1x1 conv at 7x7 (49 pixels: the pointwise rule's last vector 1/16 full), 40 -> 64
 * channels with a clip, its weight bound. On a host whose FP units are half its vector
 * width (datapath_bits 256: Zen 4) the conv rule's channel tile takes it, its weight
 * packed at load; at full width (Ice Lake) the pointwise rule keeps it. Both tiles take
 * each output's terms in order from zero: the same bits, and sums in double agree. */
static const char *pointwise_7x7_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 40, 7, 7), dtype=\"float32\"), w: R.Tensor((64, 40, 1, 1), dtype=\"float32\")):\n"
    "        with R.dataflow():\n"
    "            y = R.nn.conv2d(x, w, strides=[1, 1], padding=[0, 0, 0, 0])\n"
    "            r = R.clip(y, R.prim_value(-0.25), R.prim_value(0.25))\n"
    "            R.output(r)\n"
    "        return r\n";

START_TEST(half_width_fp_units_take_the_channel_tile_for_7x7_pointwise_convs) {
  tj_arena_t *arena = tj_arena_create();
  const tj_prim_func_t *conv = legalized_prim(arena, pointwise_7x7_text, "conv2d");
  const int want_pointwise[] = {1, 0, 1}; /* datapath 0 (full width), 256, 512 */
  for (int i = 0; i < 3; i++) {
    tj_tir_prepacks_t packs = {0};
    tj_tir_schedule_options_t s = {
        .enabled = true, .vector_bits = 512, .datapath_bits = 256 * i, .constant_params = 1u << 1, .prepacked = &packs};
    const tj_prim_func_t *out;
    tj_tir_schedule_stats_t st;
    TU_OK(tj_tir_schedule(arena, conv, "conv2d", &s, &out, &st));
    ck_assert_msg(st.conv == 1 && st.pointwise == want_pointwise[i], "datapath %d: conv %d pointwise %d", 256 * i,
                  st.conv, st.pointwise);
    ck_assert_int_eq(packs.n, 1);
    /* the weight not constant: a per-call repack of 10 KB, pointwise rule either way */
    tj_tir_schedule_options_t in = {.enabled = true, .vector_bits = 512, .datapath_bits = 256 * i};
    TU_OK(tj_tir_schedule(arena, conv, "conv2d", &in, &out, &st));
    ck_assert_int_eq(st.pointwise, 1);
  }
  tj_arena_free(arena);

  const int64_t x_dims[] = {1, 40, 7, 7}, w_dims[] = {64, 40, 1, 1};
  enum { XN = 40 * 49, WN = 64 * 40 };
  float *x = malloc(sizeof(float) * XN), *w = malloc(sizeof(float) * WN);
  ck_assert(x && w);
  fill(x, XN, 7, 11), fill(w, WN, 5, 13);
  tvmjit_tensor_t *bound = wrap(4, w_dims, w), *in = wrap(4, x_dims, x), *out[2];
  const char *bits[] = {"256", "512"};
  for (int i = 0; i < 2; i++) {
    setenv("TVMJIT_DATAPATH_BITS", bits[i], 1);
    tvmjit_instance_t *inst = uncached_instance(2);
    tvmjit_module_options_t o;
    tvmjit_module_options_init(&o);
    const char *names[] = {"w"};
    o.n_bind_params = 1, o.bind_param_names = names, o.bind_params = (const tvmjit_tensor_t *const *)&bound;
    tvmjit_module_t *m = NULL;
    tvmjit_function_t *fn;
    ck_assert_ptr_null(
        tvmjit_module_load_string(inst, "pw7.rx", pointwise_7x7_text, strlen(pointwise_7x7_text), &o, &m));
    ck_assert_ptr_null(tvmjit_module_get_function(m, "main", &fn));
    ck_assert_ptr_null(tvmjit_function_call(fn, 1, (const tvmjit_tensor_t *const *)&in, 1, &out[i]));
    tvmjit_module_free(m);
    tvmjit_instance_free(inst);
  }
  unsetenv("TVMJIT_DATAPATH_BITS");
  ck_assert(!memcmp(tvmjit_tensor_data(out[0]), tvmjit_tensor_data(out[1]), tvmjit_tensor_nbytes(out[0])));
  expect_pointwise_reference(tvmjit_tensor_data(out[0]), x, w, 64, 40, 49, -0.25, 0.25);
  tvmjit_tensor_free(out[0]), tvmjit_tensor_free(out[1]), tvmjit_tensor_free(in), tvmjit_tensor_free(bound);
  free(x), free(w);
}
END_TEST

/* Per-channel epilogues applied in the conv rule's accumulators (schedule_conv.c, "the
 * epilogue in the accumulators"): a batch norm (bound parameters, folded to per-channel
 * constants) and a clip after a 1x1 conv 40 -> 96 at 7x5 (35 pixels: no multiple of a
 * vector; at datapath 256 the channel tile of 5 pixels x 3 vectors, at 512 the
 * pointwise rule's masked tail) and a 3x3 conv 24 -> 48 at 9x6 (padding 1; the channel
 * tile of 6 x-positions, the conv rule at both widths). Each width and both float modes
 * agree with sums in double; the strict mode is the same bits at both widths. */
static const char *bn_epilogue_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 40, 7, 5), dtype=\"float32\"), w: R.Tensor((96, 40, 1, 1), dtype=\"float32\"),\n"
    "             g: R.Tensor((96,), dtype=\"float32\"), b: R.Tensor((96,), dtype=\"float32\"),\n"
    "             m: R.Tensor((96,), dtype=\"float32\"), v: R.Tensor((96,), dtype=\"float32\"),\n"
    "             u: R.Tensor((1, 24, 9, 6), dtype=\"float32\"), k: R.Tensor((48, 24, 3, 3), dtype=\"float32\"),\n"
    "             g2: R.Tensor((48,), dtype=\"float32\"), b2: R.Tensor((48,), dtype=\"float32\"),\n"
    "             m2: R.Tensor((48,), dtype=\"float32\"), v2: R.Tensor((48,), dtype=\"float32\")):\n"
    "        with R.dataflow():\n"
    "            y = R.nn.conv2d(x, w, strides=[1, 1], padding=[0, 0, 0, 0])\n"
    "            y1 = R.nn.batch_norm(y, g, b, m, v, axis=1, epsilon=1e-05, center=True, scale=True)\n"
    "            y2 = y1[0]\n"
    "            r = R.clip(y2, R.prim_value(-0.25), R.prim_value(0.25))\n"
    "            z = R.nn.conv2d(u, k, strides=[1, 1], padding=[1, 1, 1, 1])\n"
    "            z1 = R.nn.batch_norm(z, g2, b2, m2, v2, axis=1, epsilon=1e-05, center=True, scale=True)\n"
    "            z2 = z1[0]\n"
    "            t = R.clip(z2, R.prim_value(0), R.prim_value(6))\n"
    "            gv = (r, t)\n"
    "            R.output(gv)\n"
    "        return gv\n";

/* out[f, y, x] against conv (in double) of x [C, H, W] by w [F, C, K, K] (padding K / 2),
 * then (s - m) / sqrt(v + 1e-5) * g + b, clipped to [lo, hi] */
static void expect_bn_reference(const float *out, const float *x, const float *w, const float *const prm[4], int F,
                                int C, int H, int W, int K, double lo, double hi) {
  for (int f = 0; f < F; f++)
    for (int y = 0; y < H; y++)
      for (int xx = 0; xx < W; xx++) {
        double s = 0;
        for (int c = 0; c < C; c++)
          for (int ry = 0; ry < K; ry++)
            for (int rx = 0; rx < K; rx++) {
              int iy = y + ry - K / 2, ix = xx + rx - K / 2;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                s += (double)x[(c * H + iy) * W + ix] * w[((f * C + c) * K + ry) * K + rx];
            }
        s = (s - prm[2][f]) / sqrt((double)prm[3][f] + 1e-5) * prm[0][f] + prm[1][f];
        s = s < lo ? lo : s > hi ? hi : s;
        ck_assert_double_eq_tol(out[(f * H + y) * W + xx], s, 1e-4);
      }
}

START_TEST(per_channel_epilogues_in_the_accumulators_agree_with_double) {
  enum { XN = 40 * 35, WN = 96 * 40, UN = 24 * 54, KN = 48 * 24 * 9 };
  const int64_t x_dims[] = {1, 40, 7, 5}, w_dims[] = {96, 40, 1, 1}, c1[] = {96}, u_dims[] = {1, 24, 9, 6},
                k_dims[] = {48, 24, 3, 3}, c2[] = {48};
  float *x = malloc(sizeof(float) * XN), *w = malloc(sizeof(float) * WN), *u = malloc(sizeof(float) * UN),
        *k = malloc(sizeof(float) * KN), *prm[8];
  ck_assert(x && w && u && k);
  fill(x, XN, 7, 11), fill(w, WN, 5, 13), fill(u, UN, 3, 17), fill(k, KN, 11, 19);
  tvmjit_tensor_t *bound[10];
  bound[0] = wrap(4, w_dims, w), bound[1] = wrap(4, k_dims, k);
  for (int i = 0; i < 8; i++) {
    int n = i < 4 ? 96 : 48;
    ck_assert(prm[i] = malloc(sizeof(float) * n));
    fill(prm[i], n, 3 + 2 * i, 7 + i);
    if (i % 4 == 0 || i % 4 == 3) /* scale and variance: positive, away from 0 */
      for (int j = 0; j < n; j++) prm[i][j] += 1.0f;
    bound[2 + i] = wrap(1, i < 4 ? c1 : c2, prm[i]);
  }
  const char *names[] = {"w", "k", "g", "b", "m", "v", "g2", "b2", "m2", "v2"};
  tvmjit_tensor_t *in[2] = {wrap(4, x_dims, x), wrap(4, u_dims, u)}, *out[2][2][2];
  const char *bits[] = {"256", "512"};
  for (int i = 0; i < 2; i++)
    for (int strict = 0; strict < 2; strict++) {
      setenv("TVMJIT_DATAPATH_BITS", bits[i], 1);
      tvmjit_instance_t *inst = uncached_instance(2);
      tvmjit_module_options_t o;
      tvmjit_module_options_init(&o);
      o.n_bind_params = 10, o.bind_param_names = names, o.bind_params = (const tvmjit_tensor_t *const *)bound;
      o.strict_float = strict;
      /* as bench/models runs the models: batch_norm in inference form */
      o.passes =
          "DecomposeOpsForInference,CanonicalizeBindings,LegalizeOps,AnnotateTIROpPattern,FoldConstant,"
          "DeadCodeElimination,FuseOps,FuseTIR";
      tvmjit_module_t *m = NULL;
      tvmjit_function_t *fn;
      ck_assert_ptr_null(tvmjit_module_load_string(inst, "bn.rx", bn_epilogue_text, strlen(bn_epilogue_text), &o, &m));
      ck_assert_ptr_null(tvmjit_module_get_function(m, "main", &fn));
      ck_assert_ptr_null(tvmjit_function_call(fn, 2, (const tvmjit_tensor_t *const *)in, 2, out[i][strict]));
      tvmjit_module_free(m);
      tvmjit_instance_free(inst);
      expect_bn_reference(tvmjit_tensor_data(out[i][strict][0]), x, w, (const float *const *)prm, 96, 40, 7, 5, 1,
                          -0.25, 0.25);
      expect_bn_reference(tvmjit_tensor_data(out[i][strict][1]), u, k, (const float *const *)prm + 4, 48, 24, 9, 6, 3,
                          0, 6);
    }
  unsetenv("TVMJIT_DATAPATH_BITS");
  for (int j = 0; j < 2; j++)
    ck_assert_msg(!memcmp(tvmjit_tensor_data(out[0][1][j]), tvmjit_tensor_data(out[1][1][j]),
                          tvmjit_tensor_nbytes(out[0][1][j])),
                  "strict output %d differs between widths", j);
  for (int i = 0; i < 2; i++)
    for (int st = 0; st < 2; st++)
      for (int j = 0; j < 2; j++) tvmjit_tensor_free(out[i][st][j]);
  for (int i = 0; i < 10; i++) tvmjit_tensor_free(bound[i]);
  for (int i = 0; i < 8; i++) free(prm[i]);
  tvmjit_tensor_free(in[0]), tvmjit_tensor_free(in[1]);
  free(x), free(w), free(u), free(k);
}
END_TEST

/* 64x4500 by 4500x576 + bias: A is 1.15 MB, so the reduction runs in K blocks (500 deep:
 * 4500 is no multiple of 512), partial sums in a buffer of the output's shape, the bias
 * added after the last block: with the weight packed at load, and with it repacked per
 * call (no_prepack), where each parallel iteration copies only the K block's rows of
 * its panels. */
static const char *k_blocked_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(a: R.Tensor((64, 4500), dtype=\"float32\"), bias: R.Tensor((576,), dtype=\"float32\"),"
    " v: R.Tensor((4500, 576), dtype=\"float32\")) -> R.Tensor((64, 576), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            z = R.matmul(a, v)\n"
    "            y = R.add(z, bias)\n"
    "            R.output(y)\n"
    "        return y\n";

/* GEMVs (fewer than 4 rows) with the weight bound: packed at load as [N / W, K, W], W
 * the parallel block's columns, so each block streams one contiguous run. 1x768 by
 * 768x768 (12 blocks of 64 columns), and 2x1280 by 1280x1000 + bias (MobileNetV2's
 * classifier shape with two rows; 1000 columns are no multiple of 16). */
static const char *gemv_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(a: R.Tensor((1, 768), dtype=\"float32\"), v: R.Tensor((768, 768), dtype=\"float32\"))"
    " -> R.Tensor((1, 768), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            z = R.matmul(a, v)\n"
    "            R.output(z)\n"
    "        return z\n";

static const char *gemv_bias_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(a: R.Tensor((2, 1280), dtype=\"float32\"), bias: R.Tensor((1000,), dtype=\"float32\"),"
    " v: R.Tensor((1280, 1000), dtype=\"float32\")) -> R.Tensor((2, 1000), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            z = R.matmul(a, v)\n"
    "            y = R.add(z, bias)\n"
    "            R.output(y)\n"
    "        return y\n";

START_TEST(a_constant_gemv_weight_is_packed_in_column_blocks) {
  tj_arena_t *arena = tj_arena_create();
  const tj_prim_func_t *mm = legalized_prim(arena, gemv_text, "matmul");
  for (int constant = 0; constant < 2; constant++) {
    tj_tir_prepacks_t packs = {0};
    tj_tir_schedule_options_t s = {.enabled = true, .vector_bits = 512, .prepacked = &packs};
    s.constant_params = constant ? 1u << 1 : 0;
    const tj_prim_func_t *low;
    TU_OK(tj_tir_lower_scheduled(arena, mm, "matmul", &s, &low));
    ck_assert_int_eq(packs.n, constant); /* an input weight is read in place: no copy per call */
    ck_assert_int_eq(packed_allocs(low), 0);
    if (constant) {
      ck_assert_int_eq(packs.items[0].param, 1);
      ck_assert_int_eq(packs.items[0].lanes, 64);
      ck_assert_int_eq(packs.items[0].perm[0], 0);
      ck_assert_int_eq(packs.items[0].perm[1], 1);
    }
  }
  tj_arena_free(arena);
  expect_packed_matches_in_place(gemv_text, 1, 768, 768, false);
  expect_packed_matches_in_place(gemv_bias_text, 2, 1280, 1000, true);
}
END_TEST

typedef struct partial_allocs {
  int n;
} partial_allocs_t;

static bool count_partial(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  if (s->kind == TJ_TIR_ALLOCATE && strstr(s->allocate.buffer->name, "_partial")) ((partial_allocs_t *)v->ctx)->n++;
  return true;
}

START_TEST(a_k_blocked_matmul_gives_the_bits_of_the_unblocked_one) {
  tj_arena_t *arena = tj_arena_create();
  const tj_prim_func_t *mm = legalized_prim(arena, k_blocked_text, "matmul");
  for (int constant = 0; constant < 2; constant++) {
    tj_tir_prepacks_t packs = {0};
    tj_tir_schedule_options_t s = {.enabled = true, .vector_bits = 512, .prepacked = &packs};
    s.constant_params = constant ? 1u << 1 : 0;
    const tj_prim_func_t *low;
    TU_OK(tj_tir_lower_scheduled(arena, mm, "matmul", &s, &low));
    partial_allocs_t c = {0};
    tj_tir_visitor_t v = {.stmt = count_partial, .ctx = &c};
    tj_tir_visit_stmt(&v, low->body);
    ck_assert_int_eq(c.n, 1); /* K blocks with the weight packed at load or copied per panel group */
    /* Packed at load: the next column block's panel is prefetched. Copied per group:
     * the next group's rows of the input itself (2304-byte rows spread over 256 L2
     * sets: a 500-row K block puts 2 lines in a set). */
    prefetches_t p = prefetches(low);
    ck_assert_int_eq(p.n, 1);
    ck_assert_int_eq(p.of_packed, constant);
  }
  tj_arena_free(arena);
  expect_packed_matches_in_place(k_blocked_text, 64, 4500, 576, true);
}
END_TEST

/* 128x768 by an input 768x3072 (BERT's FFN in): rows 12 KB apart start at only 16 L2
 * sets, so the next group's 768 rows would put 48 lines in each, more than the ways:
 * copied per group with no prefetch (the prefetched lines would evict each other). */
START_TEST(an_input_weight_with_12_kb_rows_is_not_group_prefetched) {
  static const char *text =
      "from tvm.script import ir as I\n"
      "from tvm.script import relax as R\n"
      "@I.ir_module\n"
      "class Module:\n"
      "    @R.function\n"
      "    def main(a: R.Tensor((128, 768), dtype=\"float32\"), v: R.Tensor((768, 3072), dtype=\"float32\"))"
      " -> R.Tensor((128, 3072), dtype=\"float32\"):\n"
      "        with R.dataflow():\n"
      "            z = R.matmul(a, v)\n"
      "            R.output(z)\n"
      "        return z\n";
  tj_arena_t *arena = tj_arena_create();
  const tj_prim_func_t *mm = legalized_prim(arena, text, "matmul");
  tj_tir_prepacks_t packs = {0};
  tj_tir_schedule_options_t s = {.enabled = true, .vector_bits = 512, .prepacked = &packs};
  const tj_prim_func_t *low;
  TU_OK(tj_tir_lower_scheduled(arena, mm, "matmul", &s, &low));
  ck_assert_int_eq(packs.n, 0);
  ck_assert_int_eq(packed_allocs(low), 1); /* the group's panels, copied per iteration */
  ck_assert_int_eq(prefetches(low).n, 0);
  tj_arena_free(arena);
}
END_TEST

int main(void) {
  Suite *s = suite_create("prepack");
  TCase *tc = tcase_create("prepack");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, packing_copies_each_element_to_its_place);
  tcase_add_test(tc, a_constant_weight_becomes_a_packed_parameter);
  tcase_add_test(tc, a_constant_matmul_weight_is_packed_below_the_per_call_threshold);
  tcase_add_test(tc, a_prefetched_packed_matmul_gives_the_bits_of_the_unpacked_one);
  tcase_add_test(tc, a_pointwise_conv_weight_packed_in_tile_order_keeps_the_bits);
  tcase_add_test(tc, half_width_fp_units_take_the_channel_tile_for_7x7_pointwise_convs);
  tcase_add_test(tc, per_channel_epilogues_in_the_accumulators_agree_with_double);
  tcase_add_test(tc, a_k_blocked_matmul_gives_the_bits_of_the_unblocked_one);
  tcase_add_test(tc, an_input_weight_with_12_kb_rows_is_not_group_prefetched);
  tcase_add_test(tc, packed_weights_give_the_bits_of_per_call_repacking);
  tcase_add_test(tc, a_weight_only_folded_is_not_used_after_load);
  tcase_add_test(tc, the_cache_keeps_packed_kernels_and_recompiles_damaged_ones);
  tcase_add_test(tc, adopted_weights_are_freed_once_packed_with_the_same_bits);
  tcase_add_test(tc, winograd_packing_transforms_each_kernel);
  tcase_add_test(tc, blocked_packing_puts_each_element_at_its_place);
  tcase_add_test(tc, weights_packed_on_any_number_of_threads_give_the_same_bits);
  tcase_add_test(tc, winograd_packing_gives_the_bits_of_the_one_kernel_transform);
  tcase_add_test(tc, winograd_weights_are_transformed_once_at_load);
  tcase_add_test(tc, winograd_is_the_default_float_mode_and_never_strict);
  tcase_add_test(tc, a_constant_gemv_weight_is_packed_in_column_blocks);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
