/* bfloat16 pairs (schedule_conv.c "bfloat16 pairs", jit/codegen_bf16.c): convs and
 * matmuls of bfloat16 operands with float32 accumulation, odd and even reduction lengths,
 * NHWC and NCHW, GEMM, 4-row and GEMV matmul tiles.
 *  - the schedule (any host: the options are given) takes the reduction in pairs,
 *    tir.tvmjit.bf16_dot2, only with bf16_dot, and never under strict float; NCHW convs
 *    (whose input pairs lie in two channel planes) are left widened;
 *  - where the host has AVX512-BF16 the kernel's optimised LLVM IR calls vdpbf16ps
 *    (llvm.x86.avx512bf16.dpbf16ps.512); elsewhere that part says so and checks the
 *    IR does not;
 *  - values, in the default float mode, against an independent reference: the exact sum
 *    of the same bfloat16 products in double, within the float32 bound of any summation
 *    order, 2 * K * 2^-24 * sum |a * w| per output (Higham's gamma_K, doubled for the
 *    pair's own rounding); in strict float bit for bit the IR's order in float32
 *    (products of bfloat16 values are exact in float32, then one rounding per add). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/text/parse.h"
#include "ir/text/print.h"
#include "ir/visit.h"
#include "jit/jit.h"
#include "passes.h"
#include "relax_model.h"
#include "runtime/kernel.h"
#include "support/alloc.h"
#include "support/strbuf.h"
#include "testutil.h"
#include "transforms/tir/lower.h"
#include "transforms/tir/schedule.h"

/* One case: main's text and the contraction's geometry, for the reference. */
typedef enum { MATMUL, CONV_NHWC, CONV_NCHW } kind_t;
typedef struct dot_case {
  const char *what;
  kind_t kind;
  int64_t m, k, n;    /* matmul [m, k] x [k, n] */
  int64_t c, h, w, o; /* conv: c input channels, h x w, o outputs; 3x3, padding 1 */
  bool paired;        /* the schedule pairs it (NCHW convs keep the widened path) */
} dot_case_t;

static const dot_case_t k_cases[] = {
    {"matmul 16x37x48 (GEMM tile, odd K)", MATMUL, 16, 37, 48, 0, 0, 0, 0, true},
    {"matmul 4x70x64 (4-row tile, K = 70)", MATMUL, 4, 70, 64, 0, 0, 0, 0, true},
    {"matmul 1x33x64 (GEMV, odd K)", MATMUL, 1, 33, 64, 0, 0, 0, 0, true},
    {"conv NHWC 5 -> 16 channels (odd C)", CONV_NHWC, 0, 0, 0, 5, 9, 9, 16, true},
    {"conv NHWC 32 -> 32 channels", CONV_NHWC, 0, 0, 0, 32, 8, 8, 32, true},
    {"conv NCHW 7 -> 32 channels (odd C)", CONV_NCHW, 0, 0, 0, 7, 10, 10, 32, false},
    {"conv NCHW 18 -> 16 channels", CONV_NCHW, 0, 0, 0, 18, 6, 6, 16, false},
};
enum { N_CASES = sizeof k_cases / sizeof k_cases[0] };

static const char *main_text(const dot_case_t *d) {
  static char text[2048];
  if (d->kind == MATMUL)
    snprintf(
        text, sizeof text,
        "    def main(x: R.Tensor((%lld, %lld), dtype=\"bfloat16\"), w: R.Tensor((%lld, %lld), dtype=\"bfloat16\"))"
        " -> R.Tensor((%lld, %lld), dtype=\"float32\"):\n"
        "        with R.dataflow():\n"
        "            y = R.matmul(x, w, out_dtype=\"float32\")\n"
        "            R.output(y)\n"
        "        return y\n",
        (long long)d->m, (long long)d->k, (long long)d->k, (long long)d->n, (long long)d->m, (long long)d->n);
  else if (d->kind == CONV_NHWC)
    snprintf(text, sizeof text,
             "    def main(x: R.Tensor((1, %lld, %lld, %lld), dtype=\"bfloat16\"), w: R.Tensor((%lld, 3, 3, %lld), "
             "dtype=\"bfloat16\")) -> R.Tensor((1, %lld, %lld, %lld), dtype=\"float32\"):\n"
             "        with R.dataflow():\n"
             "            y = R.nn.conv2d(x, w, padding=[1, 1, 1, 1], data_layout=\"NHWC\", kernel_layout=\"OHWI\", "
             "out_dtype=\"float32\")\n"
             "            R.output(y)\n"
             "        return y\n",
             (long long)d->h, (long long)d->w, (long long)d->c, (long long)d->o, (long long)d->c, (long long)d->h,
             (long long)d->w, (long long)d->o);
  else
    snprintf(text, sizeof text,
             "    def main(x: R.Tensor((1, %lld, %lld, %lld), dtype=\"bfloat16\"), w: R.Tensor((%lld, %lld, 3, 3), "
             "dtype=\"bfloat16\")) -> R.Tensor((1, %lld, %lld, %lld), dtype=\"float32\"):\n"
             "        with R.dataflow():\n"
             "            y = R.nn.conv2d(x, w, padding=[1, 1, 1, 1], out_dtype=\"float32\")\n"
             "            R.output(y)\n"
             "        return y\n",
             (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->o, (long long)d->c, (long long)d->o,
             (long long)d->h, (long long)d->w);
  return text;
}

static float bf(uint16_t b) { return tu_bits_float((uint32_t)b << 16); }

/* ---- the reference ---- */

typedef struct terms {
  int n;
  float a[4096], w[4096]; /* the output's products' operands, in the IR's order */
} terms_t;

/* The terms of output `idx` (row-major over the output shape), in the IR's reduction
 * order (matmul: k; NHWC: ry, rx, rc; NCHW: rc, ry, rx); padding terms are 0 * w. */
static void output_terms(const dot_case_t *d, const uint16_t *x, const uint16_t *w, int64_t idx, terms_t *t) {
  t->n = 0;
  if (d->kind == MATMUL) {
    int64_t i = idx / d->n, j = idx % d->n;
    for (int64_t k = 0; k < d->k; k++, t->n++) t->a[t->n] = bf(x[i * d->k + k]), t->w[t->n] = bf(w[k * d->n + j]);
    return;
  }
  int64_t f, y, xx;
  if (d->kind == CONV_NHWC) f = idx % d->o, xx = idx / d->o % d->w, y = idx / d->o / d->w;
  else xx = idx % d->w, y = idx / d->w % d->h, f = idx / d->w / d->h;
  for (int64_t outer = 0; outer < (d->kind == CONV_NHWC ? 9 : d->c); outer++)
    for (int64_t inner = 0; inner < (d->kind == CONV_NHWC ? d->c : 9); inner++, t->n++) {
      int64_t rc = d->kind == CONV_NHWC ? inner : outer, r = d->kind == CONV_NHWC ? outer : inner;
      int64_t ry = r / 3, rx = r % 3, iy = y + ry - 1, ix = xx + rx - 1;
      bool in = iy >= 0 && iy < d->h && ix >= 0 && ix < d->w;
      float a = 0, wv;
      if (d->kind == CONV_NHWC) {
        if (in) a = bf(x[(iy * d->w + ix) * d->c + rc]);
        wv = bf(w[((f * 3 + ry) * 3 + rx) * d->c + rc]);
      } else {
        if (in) a = bf(x[(rc * d->h + iy) * d->w + ix]);
        wv = bf(w[((f * d->c + rc) * 3 + ry) * 3 + rx]);
      }
      t->a[t->n] = a, t->w[t->n] = wv;
    }
}

static int64_t numel(const tvmjit_tensor_t *t) {
  int64_t n = 1;
  for (int i = 0; i < tvmjit_tensor_ndim(t); i++) n *= tvmjit_tensor_shape(t)[i];
  return n;
}

static tvmjit_tensor_t *random_bf16(int ndim, const int64_t *shape, unsigned *seed) {
  tvmjit_tensor_t *t = NULL;
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_BFLOAT16, ndim, shape, &t));
  uint16_t *p = tvmjit_tensor_data(t);
  for (int64_t i = 0; i < numel(t); i++) {
    /* mixed signs (cancellation) and magnitudes 2^-4..2^5, so that sums round */
    float v = ldexpf((float)(rand_r(seed) % 2001 - 1000) / 250.0f, rand_r(seed) % 8 - 4);
    p[i] = (uint16_t)(tu_float_bits(v) >> 16); /* truncation: still a bfloat16 value */
  }
  return t;
}

/* Runs main on inputs (x, w), default float mode or strict; the output tensor. */
static tvmjit_tensor_t *run(const char *text, tvmjit_tensor_t *x, tvmjit_tensor_t *w, bool strict) {
  const char *src = tu_model_source(text);
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  tvmjit_tensor_t *out = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_module_options_t opts;
  tvmjit_module_options_init(&opts);
  opts.passes = "default";
  opts.strict_float = strict;
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "model.rx", src, strlen(src), &opts, &mod);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
  const tvmjit_tensor_t *in[2] = {x, w};
  st = tvmjit_function_call(fn, 2, in, 1, &out);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
  return out;
}

static void input_shapes(const dot_case_t *d, int64_t *xs, int64_t *ws) {
  if (d->kind == MATMUL) {
    xs[0] = d->m, xs[1] = d->k, ws[0] = d->k, ws[1] = d->n;
  } else if (d->kind == CONV_NHWC) {
    xs[0] = 1, xs[1] = d->h, xs[2] = d->w, xs[3] = d->c;
    ws[0] = d->o, ws[1] = 3, ws[2] = 3, ws[3] = d->c;
  } else {
    xs[0] = 1, xs[1] = d->c, xs[2] = d->h, xs[3] = d->w;
    ws[0] = d->o, ws[1] = d->c, ws[2] = 3, ws[3] = 3;
  }
}

START_TEST(values_against_reference) {
  const dot_case_t *d = &k_cases[_i];
  unsigned seed = 7u + (unsigned)_i;
  int64_t xs[4], ws[4];
  input_shapes(d, xs, ws);
  int nd = d->kind == MATMUL ? 2 : 4;
  tvmjit_tensor_t *x = random_bf16(nd, xs, &seed), *w = random_bf16(nd, ws, &seed);
  tvmjit_tensor_t *fast = run(main_text(d), x, w, false), *strict = run(main_text(d), x, w, true);
  const float *yf = tvmjit_tensor_data(fast), *ys = tvmjit_tensor_data(strict);
  static terms_t t;
  int64_t n = numel(fast), differ = 0;
  for (int64_t i = 0; i < n; i++) {
    output_terms(d, tvmjit_tensor_data(x), tvmjit_tensor_data(w), i, &t);
    double exact = 0, mag = 0;
    float ordered = 0;
    for (int j = 0; j < t.n; j++) {
      double p = (double)t.a[j] * (double)t.w[j];
      exact += p, mag += fabs(p);
      ordered = ordered + t.a[j] * t.w[j]; /* exact product, one rounding per add */
    }
    double bound = 2.0 * t.n * ldexp(1.0, -24) * mag;
    ck_assert_msg(fabs(yf[i] - exact) <= bound, "%s: output %lld is %.9g, exact sum %.9g (bound %.3g)", d->what,
                  (long long)i, (double)yf[i], exact, bound);
    ck_assert_msg(tu_float_bits(ys[i]) == tu_float_bits(ordered),
                  "%s, strict float: output %lld is %a, IR order gives %a", d->what, (long long)i, (double)ys[i],
                  (double)ordered);
    differ += tu_float_bits(yf[i]) != tu_float_bits(ys[i]);
  }
  if (tj_jit_host_bf16() && d->paired) /* the pairs sum in another order: some outputs round otherwise */
    ck_assert_msg(differ > 0, "%s: the default float mode gave strict float's bits everywhere", d->what);
  tvmjit_tensor_free(fast);
  tvmjit_tensor_free(strict);
  tvmjit_tensor_free(x);
  tvmjit_tensor_free(w);
}
END_TEST

/* The case's one PrimFunc after LegalizeOps. */
static const tj_prim_func_t *legalized(tj_arena_t *a, const dot_case_t *d, const char **name) {
  const tj_module_t *m = tu_legalize_main(a, main_text(d));
  for (int f = 0; f < m->n_funcs; f++)
    if (m->funcs[f].is_prim) return *name = m->funcs[f].name, m->funcs[f].prim;
  ck_abort_msg("%s: no PrimFunc", d->what);
  return NULL;
}

static bool scheduled_has_pairs(tj_arena_t *a, const tj_prim_func_t *f, const tj_tir_schedule_options_t *o) {
  const tj_prim_func_t *sf = NULL;
  tj_tir_schedule_stats_t st;
  TU_OK(tj_tir_schedule(a, f, "f", o, &sf, &st));
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_print_prim_func(&sb, "f", sf);
  char *text = tj_strbuf_take(&sb);
  bool has = strstr(text, "T.tvmjit.bf16_dot2(") != NULL;
  tj_free(text);
  return has;
}

START_TEST(schedule_pairs_only_with_bf16_dot) {
  const dot_case_t *d = &k_cases[_i];
  tj_arena_t *a = tj_arena_create();
  const char *name;
  const tj_prim_func_t *f = legalized(a, d, &name);
  tj_tir_schedule_options_t on = {
      .enabled = true, .vector_bits = 512, .fp_contract = true, .reorder_reductions = true, .bf16_dot = true};
  tj_tir_schedule_options_t off = on;
  off.bf16_dot = false;
  ck_assert_msg(scheduled_has_pairs(a, f, &on) == d->paired, "%s: tir.tvmjit.bf16_dot2 with bf16_dot: %s, want %s",
                d->what, d->paired ? "no" : "yes", d->paired ? "yes" : "no");
  ck_assert_msg(!scheduled_has_pairs(a, f, &off), "%s: tir.tvmjit.bf16_dot2 without bf16_dot", d->what);
  /* strict float: the host's options leave the pairs out */
  tj_tir_schedule_options_t strict = tj_jit_schedule_options(true, false);
  ck_assert_msg(!strict.bf16_dot && !scheduled_has_pairs(a, f, &strict), "%s: pairs under strict float", d->what);
  tj_arena_free(a);
}
END_TEST

START_TEST(llvm_ir_calls_vdpbf16ps_on_hosts_with_it) {
  const dot_case_t *d = &k_cases[_i];
  tj_arena_t *a = tj_arena_create();
  const char *name;
  const tj_prim_func_t *f = legalized(a, d, &name);
  tj_tir_schedule_options_t so = tj_jit_schedule_options(true, true);
  const tj_prim_func_t *low = NULL;
  TU_OK(tj_tir_lower_scheduled(a, f, name, &so, &low));
  char *ir = NULL;
  TU_OK(tj_jit_llvm_ir(low, name, 2, &ir));
  bool has = strstr(ir, "@llvm.x86.avx512bf16.dpbf16ps.512(") != NULL;
  if (tj_jit_host_bf16()) {
    ck_assert_msg(has == d->paired, "%s: vdpbf16ps in the optimised IR: %s", d->what, has ? "yes" : "no");
  } else {
    if (_i == 0)
      printf("note: host without AVX512-BF16 (or TVMJIT_BF16_DOT=0): vdpbf16ps not expected, checked absent\n");
    ck_assert_msg(!has, "%s: vdpbf16ps on a host without AVX512-BF16", d->what);
  }
  tj_free(ir);
  tj_arena_free(a);
}
END_TEST

/* ---- the intrinsic alone: tir.tvmjit.bf16_dot2 compiled at 16 lanes (vdpbf16ps where
 * the host has it), 8 lanes and scalar (the plain float32 form), each against
 * acc + a1 * b1 + a0 * b0 in float32 in that order (odd term first, as the SDM's
 * pseudo-code and Zen 4 measure it; products of bfloat16 values are exact). Values
 * keep every product above 2^-126, where vdpbf16ps's flushing does not apply. */
static const char *k_unit =
    "from tvm.script import ir as I\n"
    "from tvm.script import tir as T\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func\n"
    "    def lanes16(acc: T.Buffer((256,), \"float32\"), a0: T.Buffer((256,), \"bfloat16\"), a1: T.Buffer((256,), "
    "\"bfloat16\"), b0: T.Buffer((256,), \"bfloat16\"), b1: T.Buffer((256,), \"bfloat16\"), y: T.Buffer((256,), "
    "\"float32\")):\n"
    "        for o in range(16):\n"
    "            for i in T.vectorized(16):\n"
    "                y[o * 16 + i] = acc[o * 16 + i]\n"
    "    @T.prim_func\n"
    "    def lanes8(acc: T.Buffer((256,), \"float32\"), a0: T.Buffer((256,), \"bfloat16\"), a1: T.Buffer((256,), "
    "\"bfloat16\"), b0: T.Buffer((256,), \"bfloat16\"), b1: T.Buffer((256,), \"bfloat16\"), y: T.Buffer((256,), "
    "\"float32\")):\n"
    "        for o in range(32):\n"
    "            for i in T.vectorized(8):\n"
    "                y[o * 8 + i] = acc[o * 8 + i]\n"
    "    @T.prim_func\n"
    "    def scalar(acc: T.Buffer((256,), \"float32\"), a0: T.Buffer((256,), \"bfloat16\"), a1: T.Buffer((256,), "
    "\"bfloat16\"), b0: T.Buffer((256,), \"bfloat16\"), b1: T.Buffer((256,), \"bfloat16\"), y: T.Buffer((256,), "
    "\"float32\")):\n"
    "        for i in range(256):\n"
    "            y[i] = acc[i]\n";

/* y[idx] = acc[idx] becomes y[idx] = tir.tvmjit.bf16_dot2(acc, a0, a1, b0, b1)[idx]: the
 * call cannot be written in TVMScript (it is tvmjit's own, made by the schedule). */
static const tj_tir_stmt_t *to_dot2(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  const tj_prim_func_t *f = m->ctx;
  if (s->kind != TJ_TIR_BUFFER_STORE || s->store.buffer != f->buffer_map[5]) return NULL;
  const tj_tir_expr_t *args[5];
  for (int i = 0; i < 5; i++) args[i] = tj_tir_load(m->arena, f->buffer_map[i], s->store.n_indices, s->store.indices);
  return tj_tir_store(m->arena, s->store.buffer, s->store.n_indices, s->store.indices,
                      tj_tir_call(m->arena, TJ_F32, "tir.tvmjit.bf16_dot2", 5, args));
}

START_TEST(intrinsic_sums_odd_term_first) {
  static const char *const names[] = {"lanes16", "lanes8", "scalar"};
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(a, "unit.rx", k_unit, strlen(k_unit), &m));
  const tj_prim_func_t *f = NULL;
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i].is_prim && !strcmp(m->funcs[i].name, names[_i])) f = m->funcs[i].prim;
  ck_assert_ptr_nonnull(f);
  tj_tir_mutator_t mut = {.arena = a, .stmt = to_dot2, .ctx = (void *)f};
  const tj_prim_func_t *g = NULL;
  TU_OK(tj_tir_mutate_prim_func_body(&mut, f, NULL, "test", names[_i], &g));
  enum { E = 256 };
  float acc[E], y[E];
  uint16_t x[4][E];
  unsigned seed = 11;
  for (int e = 0; e < E; e++) {
    acc[e] = ldexpf((float)(rand_r(&seed) % 2001 - 1000) / 500.0f, rand_r(&seed) % 16 - 8);
    for (int j = 0; j < 4; j++) {
      float v = ldexpf((float)(rand_r(&seed) % 2001 - 1000) / 250.0f, rand_r(&seed) % 16 - 8);
      x[j][e] = (uint16_t)(tu_float_bits(v) >> 16);
    }
  }
  /* lane 0: acc 1, even term 2^-24, odd term -1: 2^-24 odd first, 0 even first */
  acc[0] = 1.0f;
  x[0][0] = 0x3380, x[2][0] = 0x3f80; /* a0 = 2^-24, b0 = 1 */
  x[1][0] = 0xbf80, x[3][0] = 0x3f80; /* a1 = -1, b1 = 1 */
  tj_jit_t *jit = NULL;
  TU_OK(tj_jit_create(&jit));
  tj_jit_kernel_t jk;
  tj_jit_options_t opts = {.opt_level = 2, .relaxed_float = false};
  TU_OK(tj_jit_compile_prim_func(jit, g, names[_i], &opts, &jk));
  tj_kernel_t k;
  void *argv[8], *bufs[6] = {acc, x[0], x[1], x[2], x[3], y};
  TU_OK(tj_kernel_init(&k, names[_i], jk.fn, jk.n_buffers, 0));
  tj_kernel_call(&k, bufs, NULL, argv);
  tj_kernel_release(&k);
  for (int e = 0; e < E; e++) {
    float want = acc[e] + bf(x[1][e]) * bf(x[3][e]);
    want = want + bf(x[0][e]) * bf(x[2][e]);
    ck_assert_msg(tu_float_bits(y[e]) == tu_float_bits(want), "%s lane %d: %a, want %a", names[_i], e, (double)y[e],
                  (double)want);
  }
  ck_assert_float_eq(y[0], 0x1p-24f);
  tj_jit_free(jit);
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("bf16_dot");
  TCase *tc = tcase_create("bf16_dot");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, values_against_reference, 0, N_CASES);
  tcase_add_loop_test(tc, schedule_pairs_only_with_bf16_dot, 0, N_CASES);
  tcase_add_loop_test(tc, llvm_ir_calls_vdpbf16ps_on_hosts_with_it, 0, N_CASES);
  tcase_add_loop_test(tc, intrinsic_sums_odd_term_first, 0, 3);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
