/* VectorizeLoop and UnrollLoop through the JIT: the kernels of
 * tests/models/vectorize_kernels.rx (T.vectorized / T.unroll loops, float32 and
 * float16) run on random inputs and must match the reference interpreter bit for bit
 * (within a few ulps for libm functions) and the same kernel compiled with every loop
 * serial bit for bit. Each kernel must lower to vector stores, except those named
 * *_fallback, whose vectorized loop must stay serial (and still compute the right
 * numbers). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/text/parse.h"
#include "ir/visit.h"
#include "jit/jit.h"
#include "runtime/kernel.h"
#include "support/alloc.h"
#include "testutil.h"
#include "transforms/tir/lower.h"

enum { MAX_PARAMS = 8 };

static tj_jit_t *jit;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void fill_random(void *data, tj_dtype_t dt, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double r = (double)(next_u64() >> 11) / 9007199254740992.0 * 4.0 - 2.0; /* [-2, 2) */
    if (dt.code == TJ_DT_FLOAT && dt.bits == 16) ((uint16_t *)data)[i] = tj_float_to_half((float)r);
    else if (dt.code == TJ_DT_FLOAT && dt.bits == 32) ((float *)data)[i] = (float)r;
    else if (dt.code == TJ_DT_INT && dt.bits == 32) ((int32_t *)data)[i] = (int32_t)(next_u64() % 7);
    else ck_abort_msg("fill_random: unexpected dtype");
  }
}

/* ---- what a lowered function contains ---- */

typedef struct census {
  int vector_stores, scalar_stores, vectorized_loops, unrolled_loops;
} census_t;

static bool census_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  census_t *c = v->ctx;
  if (s->kind == TJ_TIR_BUFFER_STORE) {
    if (s->store.value->dtype.lanes > 1) c->vector_stores++;
    else c->scalar_stores++;
  }
  if (s->kind == TJ_TIR_FOR && s->loop.kind == TJ_FOR_VECTORIZED) c->vectorized_loops++;
  if (s->kind == TJ_TIR_FOR && s->loop.kind == TJ_FOR_UNROLLED) c->unrolled_loops++;
  return true;
}

static census_t lowered_census(tj_arena_t *a, const tj_prim_func_t *f, const char *name) {
  const tj_prim_func_t *low = NULL;
  TU_OK(tj_tir_lower(a, f, name, &low));
  census_t c = {0};
  tj_tir_visitor_t v = {.stmt = census_stmt, .ctx = &c};
  tj_tir_visit_stmt(&v, low->body);
  return c;
}

/* ---- the same function with every loop serial: the second reference ---- */

static const tj_tir_stmt_t *serial_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_FOR || s->loop.kind == TJ_FOR_SERIAL) return NULL;
  const tj_tir_stmt_t *body = tj_tir_mutate_stmt(m, s->loop.body);
  return body ? tj_tir_for(m->arena, s->loop.var, s->loop.min, s->loop.extent, TJ_FOR_SERIAL, body) : NULL;
}

static const tj_prim_func_t *all_serial(tj_arena_t *a, const tj_prim_func_t *f) {
  tj_tir_mutator_t m = {.arena = a, .stmt = serial_stmt};
  tj_prim_func_t *nf = TJ_ARENA_NEW(a, tj_prim_func_t);
  ck_assert_ptr_nonnull(nf);
  *nf = *f;
  nf->body = tj_tir_mutate_stmt(&m, f->body);
  ck_assert(!m.failed && nf->body);
  return nf;
}

/* ---- running ---- */

static void run_jit(const tj_prim_func_t *f, const char *name, void **buffers) {
  tj_jit_kernel_t jk;
  tj_jit_options_t opts = {.opt_level = 2};
  TU_OK(tj_jit_compile_prim_func(jit, f, name, &opts, &jk));
  ck_assert_int_le(jk.n_buffers, MAX_PARAMS);
  ck_assert_int_eq(jk.n_scalars, 0);
  tj_kernel_t k;
  void *argv[MAX_PARAMS];
  TU_OK(tj_kernel_init(&k, name, jk.fn, jk.n_buffers, 0));
  tj_kernel_call(&k, buffers, NULL, argv);
  tj_kernel_release(&k);
}

static bool uses_libm(const tj_tir_stmt_t *body);

/* Elements of `got` that differ from `want`: bit for bit, or within a few ulps. */
static int64_t mismatches(const void *got, const void *want, tj_dtype_t dt, int64_t n, bool loose) {
  if (!loose || dt.code != TJ_DT_FLOAT) return memcmp(got, want, (size_t)n * tj_dtype_bytes(dt)) ? n : 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double x, y, tol;
    if (dt.bits == 16) x = tj_half_to_float(((const uint16_t *)got)[i]), y = tj_half_to_float(((const uint16_t *)want)[i]), tol = 2e-3;
    else x = ((const float *)got)[i], y = ((const float *)want)[i], tol = 1e-6;
    if (!(fabs(x - y) <= tol * fmax(1.0, fabs(y)))) bad++;
  }
  return bad;
}

/* Runs f three ways (interpreter, JIT as written, JIT all serial) on one random input. */
static void check_function(tj_arena_t *a, const char *name, const tj_prim_func_t *f) {
  ck_assert_int_le(f->n_params, MAX_PARAMS);
  void *ref[MAX_PARAMS], *vec[MAX_PARAMS], *ser[MAX_PARAMS];
  int64_t elems[MAX_PARAMS];
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *b = f->buffer_map[i];
    ck_assert(b && tj_buffer_static_size(b, &elems[i]));
    size_t bytes = (size_t)elems[i] * tj_dtype_bytes(b->dtype);
    ref[i] = tj_aligned_alloc(bytes);
    vec[i] = tj_aligned_alloc(bytes);
    ser[i] = tj_aligned_alloc(bytes);
    ck_assert(ref[i] && vec[i] && ser[i]);
    fill_random(ref[i], b->dtype, elems[i]);
    memcpy(vec[i], ref[i], bytes);
    memcpy(ser[i], ref[i], bytes);
  }
  TU_OK(tj_interp_run_named(name, f, f->n_params, ref, NULL));
  run_jit(f, name, vec);
  run_jit(all_serial(a, f), name, ser);
  bool loose = uses_libm(f->body);
  for (int i = 0; i < f->n_params; i++) {
    tj_dtype_t dt = f->buffer_map[i]->dtype;
    ck_assert_msg(mismatches(vec[i], ser[i], dt, elems[i], false) == 0,
                  "%s: buffer %d: vectorized and serial JIT results differ", name, i);
    ck_assert_msg(mismatches(vec[i], ref[i], dt, elems[i], loose) == 0,
                  "%s: buffer %d: JIT and interpreter differ", name, i);
    tj_aligned_free(ref[i]);
    tj_aligned_free(vec[i]);
    tj_aligned_free(ser[i]);
  }
}

static bool libm_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  static const char *const exact[] = {"tir.if_then_else", "tir.sqrt", "tir.rsqrt", "tir.fabs"};
  if (e->kind != TJ_TIR_CALL) return true;
  bool is_exact = false;
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) is_exact |= strcmp(e->call.op, exact[i]) == 0;
  if (!is_exact) *(bool *)v->ctx = true;
  return true;
}

static bool uses_libm(const tj_tir_stmt_t *body) {
  bool found = false;
  tj_tir_visitor_t v = {.expr = libm_expr, .ctx = &found};
  tj_tir_visit_stmt(&v, body);
  return found;
}

static tj_module_t *load_kernels(tj_arena_t *a) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/models/vectorize_kernels.rx", tu_source_dir());
  tj_module_t *m = NULL;
  TU_OK(tj_parse_file(a, path, &m));
  return m;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

START_TEST(kernels_match_interpreter_and_serial_jit) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = load_kernels(a);
  ck_assert_ptr_null(tj_jit_create(&jit));
  int checked = 0;
  for (int i = 0; i < m->n_funcs; i++) {
    if (!m->funcs[i].is_prim) continue;
    const char *name = m->funcs[i].name;
    const tj_prim_func_t *f = m->funcs[i].prim;
    census_t c = lowered_census(a, f, name);
    /* No vectorized or unrolled loop survives lowering. */
    ck_assert_int_eq(c.vectorized_loops, 0);
    ck_assert_int_eq(c.unrolled_loops, 0);
    if (ends_with(name, "_fallback"))
      ck_assert_msg(c.vector_stores == 0, "%s: expected to stay serial, has %d vector stores", name, c.vector_stores);
    else
      ck_assert_msg(c.vector_stores > 0 && c.scalar_stores == 0, "%s: %d vector and %d scalar stores", name,
                    c.vector_stores, c.scalar_stores);
    for (int rep = 0; rep < 3; rep++) check_function(a, name, f);
    checked++;
  }
  ck_assert_int_ge(checked, 25);
  tj_jit_free(jit);
  tj_arena_free(a);
}
END_TEST

static const tj_prim_func_t *find(tj_module_t *m, const char *name) {
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i].is_prim && strcmp(m->funcs[i].name, name) == 0) return m->funcs[i].prim;
  ck_abort_msg("no function %s", name);
  return NULL;
}

/* The padding pattern keeps its bounds test a scalar branch around vector arms. */
typedef struct ite_scan {
  int scalar_cond_vector_arms, vector_cond;
} ite_scan_t;

static bool ite_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  ite_scan_t *s = v->ctx;
  if (e->kind == TJ_TIR_CALL && strcmp(e->call.op, "tir.if_then_else") == 0) {
    if (e->call.args[0]->dtype.lanes > 1) s->vector_cond++;
    else if (e->dtype.lanes > 1) s->scalar_cond_vector_arms++;
  }
  return true;
}

START_TEST(padding_stays_a_scalar_branch_with_vector_arms) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = load_kernels(a);
  const tj_prim_func_t *low = NULL;
  TU_OK(tj_tir_lower(a, find(m, "pad_f16"), "pad_f16", &low));
  ite_scan_t s = {0};
  tj_tir_visitor_t v = {.expr = ite_expr, .ctx = &s};
  tj_tir_visit_stmt(&v, low->body);
  ck_assert_int_eq(s.scalar_cond_vector_arms, 1);
  ck_assert_int_eq(s.vector_cond, 0);
  tj_arena_free(a);
}
END_TEST

/* Vector IR reaches LLVM: <16 x half> loads and stores, not 16 scalar ones. */
START_TEST(float16_vectors_stay_half_vectors_in_llvm_ir) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = load_kernels(a);
  const tj_prim_func_t *low = NULL;
  TU_OK(tj_tir_lower(a, find(m, "bias_add_f16"), "bias_add_f16", &low));
  char *ir = NULL;
  TU_OK(tj_jit_llvm_ir(low, "bias_add_f16", 0, &ir));
  ck_assert_msg(strstr(ir, "load <16 x half>") && strstr(ir, "store <16 x half>"), "unexpected LLVM IR");
  ck_assert_msg(strstr(ir, "fadd <16 x half>"), "unexpected LLVM IR");
  tj_free(ir);
  tj_arena_free(a);
}
END_TEST

/* LLVM 19 scalarises compares and sqrt of half vectors (a vucomiss per lane); codegen
 * does them on float lanes, and they must stay there after O2. */
START_TEST(float16_vector_compares_and_sqrt_run_on_float_lanes) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = load_kernels(a);
  const char *names[] = {"relu_f16", "math_f16"};
  const char *want[] = {"fcmp ogt <32 x float>", "@llvm.sqrt.v16f32"};
  const char *not_want[] = {"fcmp ogt <32 x half>", "@llvm.sqrt.v16f16"};
  for (int i = 0; i < 2; i++) {
    const tj_prim_func_t *low = NULL;
    TU_OK(tj_tir_lower(a, find(m, names[i]), names[i], &low));
    char *ir = NULL;
    TU_OK(tj_jit_llvm_ir(low, names[i], 2, &ir));
    ck_assert_msg(strstr(ir, want[i]) && !strstr(ir, not_want[i]), "%s: want %s, not %s", names[i], want[i], not_want[i]);
    tj_free(ir);
  }
  tj_arena_free(a);
}
END_TEST

/* After unrolling, the local accumulator tile has constant indices and O2 keeps it in
 * registers: no alloca survives. */
START_TEST(unrolled_register_tile_is_promoted_to_registers) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = load_kernels(a);
  const tj_prim_func_t *low = NULL;
  TU_OK(tj_tir_lower(a, find(m, "unroll_tile_f32"), "unroll_tile_f32", &low));
  char *ir = NULL;
  TU_OK(tj_jit_llvm_ir(low, "unroll_tile_f32", 2, &ir));
  ck_assert_msg(!strstr(ir, "alloca"), "unexpected LLVM IR");
  ck_assert_msg(strstr(ir, "fmul <16 x float>"), "unexpected LLVM IR");
  tj_free(ir);
  tj_arena_free(a);
}
END_TEST

/* A load with a small constant stride (a stride-2 depthwise conv vectorized along x) is
 * read as the span it covers and a shuffle, not a scalar load per lane. With a
 * power-of-two lane count the span is vector loads of the lanes' width (stride 3, 16
 * half lanes: 46 elements as loads at offsets 0, 16 and 30, the last one ending at the
 * last lane's element, so nothing past the span is read) joined by shuffles; not one
 * load of the odd-sized span, which LLVM splits into power-of-two pieces, inserts and
 * spills. Other lane counts keep the one span load (14 lanes at stride 2: <27 x
 * float>, fewer pieces than two <14 x float>). */
START_TEST(short_stride_load_is_vector_loads_and_a_shuffle) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = load_kernels(a);
  const char *names[] = {"stride2_f32", "stride3_f16"};
  const char *want[] = {"load <27 x float>", "load <16 x half>"};
  const char *not_want[] = {"load <14 x float>", "<46 x half>"};
  for (int i = 0; i < 2; i++) {
    const tj_prim_func_t *low = NULL;
    TU_OK(tj_tir_lower(a, find(m, names[i]), names[i], &low));
    char *ir = NULL;
    TU_OK(tj_jit_llvm_ir(low, names[i], 0, &ir));
    ck_assert_msg(strstr(ir, want[i]) && strstr(ir, "shufflevector") && !strstr(ir, not_want[i]), "%s:\n%s", names[i],
                  ir);
    ck_assert_msg(!strstr(ir, "insertelement"), "%s: a load per lane", names[i]);
    tj_free(ir);
  }
  tj_arena_free(a);
}
END_TEST

/* A padding fill vectorized along the padded dim reads with a mask: the lanes in the
 * padding (index -1, and 14 past A's rows in the strided one) read nothing. */
START_TEST(guarded_loads_are_masked_loads) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = load_kernels(a);
  static const char *const names[] = {"guarded_load_f16", "guarded_stride2_f32"};
  for (int i = 0; i < 2; i++) {
    const tj_prim_func_t *low = NULL;
    TU_OK(tj_tir_lower(a, find(m, names[i]), names[i], &low));
    char *ir = NULL;
    TU_OK(tj_jit_llvm_ir(low, names[i], 0, &ir));
    ck_assert_msg(strstr(ir, "@llvm.masked.load"), "%s: unexpected LLVM IR", names[i]);
    tj_free(ir);
  }
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("vectorize");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, kernels_match_interpreter_and_serial_jit);
  tcase_add_test(tc, padding_stays_a_scalar_branch_with_vector_arms);
  tcase_add_test(tc, float16_vectors_stay_half_vectors_in_llvm_ir);
  tcase_add_test(tc, unrolled_register_tile_is_promoted_to_registers);
  tcase_add_test(tc, float16_vector_compares_and_sqrt_run_on_float_lanes);
  tcase_add_test(tc, short_stride_load_is_vector_loads_and_a_shuffle);
  tcase_add_test(tc, guarded_loads_are_masked_loads);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
