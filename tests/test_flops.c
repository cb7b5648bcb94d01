/* ir/flops: FLOP counts of the seed's kernels and main, counted by hand from the TIR
 * in examples/seed/model.rx; unknown counts (symbolic loops, operators not lowered);
 * and tvmjit_function_flops through the public API. */
#include <string.h>

#include "ir/flops.h"
#include "ir/text/parse.h"
#include "testutil.h"
#include "tvmjit.h"

/* One output element of the seed is 16*32*32*16 = 262144 elements. */
enum { ELEMS = 16 * 32 * 32 * 16 };
/* conv2d2: acc = acc + pad_temp * weight over ry, rx, rc (3*3*16 = 144): a multiply
 * and an add per MAC; the pad_temp block only selects (if_then_else on int64 compares). */
static const double CONV = 2.0 * ELEMS * 144;
/* relu: one max per element. */
static const double RELU = ELEMS;
/* layer_norm, per element: the reduction block adds x (1) and x*x (2); T_layer_norm has
 * x - v0*c (2), rsqrt(1) of v1*c - v0*c*(v0*c) + eps (5), the product of the two (1),
 * * gamma (1) and + beta (1): 3 + 12 = 15. Casts count nothing. */
static const double LAYER_NORM = 15.0 * ELEMS;

static tj_arena_t *A;
static tj_module_t *seed;

static void setup(void) {
  A = tj_arena_create();
  char path[4096];
  snprintf(path, sizeof path, "%s/examples/seed/model.rx", tu_source_dir());
  TU_OK(tj_parse_file(A, path, &seed));
}
static void teardown(void) { tj_arena_free(A); }

static double prim_flops(const char *name) {
  const tj_prim_func_t *f = tj_module_find_prim(seed, name);
  ck_assert_ptr_nonnull(f);
  double n = -1;
  ck_assert(tj_flops_prim_func(f, &n));
  return n;
}

START_TEST(seed_kernels_counted_by_hand) {
  ck_assert_double_eq(prim_flops("conv2d2"), CONV);
  ck_assert_double_eq(CONV * 3, 226492416.0); /* the "226.5 MFLOP" of the issue */
  ck_assert_double_eq(prim_flops("relu"), RELU);
  ck_assert_double_eq(prim_flops("layer_norm"), LAYER_NORM);
}
END_TEST

START_TEST(seed_main_is_the_sum_of_its_calls) {
  double n = -1;
  ck_assert(tj_flops_relax_func(seed, "main", &n));
  ck_assert_double_eq(n, 3 * CONV + 3 * RELU + LAYER_NORM);
  ck_assert(!tj_flops_relax_func(seed, "no_such_function", &n));
}
END_TEST

START_TEST(symbolic_loop_is_unknown) {
  const tj_tir_expr_t *i = tj_tir_var(A, "i", TJ_I64), *n = tj_tir_var(A, "n", TJ_I64);
  int64_t dims[1] = {8};
  const tj_tir_expr_t *shape[1] = {tj_tir_i64(A, dims[0])};
  const tj_buffer_t *b = tj_buffer_new(A, "b", TJ_F32, 1, shape, NULL);
  const tj_tir_expr_t *x = tj_tir_load(A, b, 1, &i);
  const tj_tir_stmt_t *store = tj_tir_store(A, b, 1, &i, tj_tir_binary(A, TJ_TIR_ADD, x, x));
  tj_prim_func_t f = {0};
  double flops = -1;
  f.body = tj_tir_for(A, i, tj_tir_i64(A, 0), tj_tir_i64(A, 8), TJ_FOR_SERIAL, store);
  ck_assert(tj_flops_prim_func(&f, &flops));
  ck_assert_double_eq(flops, 8);
  f.body = tj_tir_for(A, i, tj_tir_i64(A, 0), n, TJ_FOR_SERIAL, store);
  ck_assert(!tj_flops_prim_func(&f, &flops));
  /* Integer arithmetic is index math, not work. */
  const tj_tir_expr_t *j = tj_tir_binary(A, TJ_TIR_ADD, i, tj_tir_i64(A, 1));
  f.body = tj_tir_for(A, i, tj_tir_i64(A, 0), tj_tir_i64(A, 7), TJ_FOR_SERIAL, tj_tir_store(A, b, 1, &j, x));
  ck_assert(tj_flops_prim_func(&f, &flops));
  ck_assert_double_eq(flops, 0);
}
END_TEST

START_TEST(public_api_reports_flops_or_unknown) {
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  char path[4096];
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  /* The float32 seed in high-level operators, after the default pipeline (fused kernels). */
  snprintf(path, sizeof path, "%s/tests/models/seed_f32_ops.rx", tu_source_dir());
  ck_assert_ptr_null(tvmjit_module_load_file(inst, path, NULL, &mod));
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
  ck_assert_double_eq(tvmjit_function_flops(fn), 3 * CONV + 3 * RELU + LAYER_NORM);
  tvmjit_module_free(mod);
  /* relu_f16.rx: max over a 4x8 tensor. */
  snprintf(path, sizeof path, "%s/tests/models/relu_f16.rx", tu_source_dir());
  ck_assert_ptr_null(tvmjit_module_load_file(inst, path, NULL, &mod));
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
  ck_assert_double_eq(tvmjit_function_flops(fn), 32);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
}
END_TEST

int main(void) {
  Suite *s = suite_create("flops");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, seed_kernels_counted_by_hand);
  tcase_add_test(tc, seed_main_is_the_sum_of_its_calls);
  tcase_add_test(tc, symbolic_loop_is_unknown);
  tcase_add_test(tc, public_api_reports_flops_or_unknown);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
