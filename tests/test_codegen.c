/* jit/: codegen of lowered TIR, object emission and the LLJIT engine, checked by
 * calling kernels against C reference loops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ir/visit.h"
#include "jit/jit.h"
#include "jit_test_kernels.h"
#include "support/alloc.h"
#include "testutil.h"
#include "transforms/tir/lower.h"

typedef void (*kernel2_t)(void *, void *);
typedef void (*kernel3_t)(void *, void *, void *);

/* Lower + emit + add: the kernel's address. */
static void (*compile(tj_jit_t *jit, tj_arena_t *a, const tj_prim_func_t *f, const char *name))(void) {
  const tj_prim_func_t *low = NULL;
  TU_OK(tj_tir_lower(a, f, name, &low));
  tj_jit_object_t obj;
  TU_OK(tj_jit_emit_object(low, name, 3, &obj));
  ck_assert_uint_gt(obj.size, 0);
  ck_assert_int_eq(obj.n_buffers, f->n_params);
  ck_assert_int_eq(obj.n_scalars, 0);
  void (*fn)(void) = NULL;
  TU_OK(tj_jit_add_object(jit, &obj, &fn));
  tj_jit_object_free(&obj);
  ck_assert_ptr_nonnull(fn);
  return fn;
}

static bool half_is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0; }

START_TEST(relu_f16_is_bit_exact_on_every_half) {
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_arena_t *a = tj_arena_create();
  kernel2_t k = (kernel2_t)compile(jit, a, tk_elementwise(a, TJ_F16, 256, 256, TJ_TIR_MAX, false), "relu_f16");
  uint16_t *in = malloc(65536 * 2), *out = malloc(65536 * 2);
  for (int i = 0; i < 65536; i++) in[i] = (uint16_t)i;
  k(in, out);
  int mismatches = 0;
  for (int i = 0; i < 65536; i++) {
    float x = tj_half_to_float(in[i]);
    uint16_t ref = x > 0.0f ? in[i] : tj_float_to_half(0.0f); /* T.max(x, 0) = x > 0 ? x : 0 */
    if (out[i] != ref) mismatches++;
  }
  ck_assert_int_eq(mismatches, 0);
  free(in);
  free(out);
  tj_arena_free(a);
  tj_jit_free(jit);
}
END_TEST

START_TEST(add_f16_rounds_every_operation_to_half) {
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_arena_t *a = tj_arena_create();
  kernel3_t k = (kernel3_t)compile(jit, a, tk_elementwise(a, TJ_F16, 64, 1024, TJ_TIR_ADD, true), "add_f16");
  enum { N = 64 * 1024 };
  uint16_t *x = malloc(N * 2), *y = malloc(N * 2), *out = malloc(N * 2);
  srand(7);
  for (int i = 0; i < N; i++) {
    x[i] = (uint16_t)i; /* every half (NaN, inf, subnormals) against random ones */
    y[i] = (uint16_t)(rand() & 0xffff);
  }
  k(x, y, out);
  int mismatches = 0;
  for (int i = 0; i < N; i++) {
    uint16_t ref = tj_float_to_half(tj_half_to_float(x[i]) + tj_half_to_float(y[i]));
    if (half_is_nan(ref) ? !half_is_nan(out[i]) : out[i] != ref) mismatches++;
  }
  ck_assert_int_eq(mismatches, 0);
  free(x);
  free(y);
  free(out);
  tj_arena_free(a);
  tj_jit_free(jit);
}
END_TEST

START_TEST(float32_elementwise_matches_c) {
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_arena_t *a = tj_arena_create();
  kernel3_t mul = (kernel3_t)compile(jit, a, tk_elementwise(a, TJ_F32, 7, 33, TJ_TIR_MUL, true), "mul_f32");
  kernel2_t relu = (kernel2_t)compile(jit, a, tk_elementwise(a, TJ_F32, 7, 33, TJ_TIR_MAX, false), "relu_f32");
  float x[7 * 33], y[7 * 33], m[7 * 33], r[7 * 33];
  for (int i = 0; i < 7 * 33; i++) {
    x[i] = (float)(i - 100) * 0.37f;
    y[i] = 1.0f / (float)(i + 1);
  }
  mul(x, y, m);
  relu(x, r);
  for (int i = 0; i < 7 * 33; i++) {
    ck_assert_float_eq(m[i], x[i] * y[i]);
    ck_assert_float_eq(r[i], x[i] > 0.0f ? x[i] : 0.0f);
  }
  tj_arena_free(a);
  tj_jit_free(jit);
}
END_TEST

static void check_row_sum(int64_t rows, int64_t cols) {
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_arena_t *a = tj_arena_create();
  kernel2_t k = (kernel2_t)compile(jit, a, tk_row_sum(a, rows, cols), "row_sum");
  float *in = malloc(sizeof(float) * (size_t)(rows * cols)), *out = malloc(sizeof(float) * (size_t)rows);
  for (int64_t i = 0; i < rows * cols; i++) in[i] = (float)((i * 7919) % 1000) / 64.0f - 7.0f;
  for (int rep = 0; rep < 2; rep++) { /* the init must reset the accumulator each call */
    k(in, out);
    for (int64_t i = 0; i < rows; i++) {
      float acc = 0.0f;
      for (int64_t j = 0; j < cols; j++) acc += in[i * cols + j];
      ck_assert_float_eq(out[i], acc * 0.5f);
    }
  }
  ck_assert_int_eq(tj_kernel_take_alloc_failures(), 0);
  free(in);
  free(out);
  tj_arena_free(a);
  tj_jit_free(jit);
}

START_TEST(reduction_with_init_on_stack_temp) { check_row_sum(5, 9); }
END_TEST

START_TEST(reduction_with_init_on_heap_temp) {
  int64_t rows = 20000; /* 80 KB temp: over the stack limit */
  tj_arena_t *a = tj_arena_create();
  ck_assert(!tj_tir_alloc_on_stack(tk_buffer(a, "t", TJ_F32, 1, &rows)));
  tj_arena_free(a);
  check_row_sum(rows, 3);
}
END_TEST

/* A page of floats between two PROT_NONE pages: reading A[-1] or A[n] faults. */
START_TEST(if_then_else_evaluates_only_the_chosen_branch) {
  long page = sysconf(_SC_PAGESIZE);
  char *region = mmap(NULL, (size_t)page * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(region, MAP_FAILED);
  ck_assert_int_eq(mprotect(region, (size_t)page, PROT_NONE), 0);
  ck_assert_int_eq(mprotect(region + 2 * page, (size_t)page, PROT_NONE), 0);
  float *in = (float *)(region + page);
  int64_t n = page / (long)sizeof(float), pad = 3;
  for (int64_t i = 0; i < n; i++) in[i] = (float)i + 0.5f;
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_arena_t *a = tj_arena_create();
  kernel2_t k = (kernel2_t)compile(jit, a, tk_pad1d(a, TJ_F32, n, pad), "pad1d");
  float *out = malloc(sizeof(float) * (size_t)(n + 2 * pad));
  k(in, out);
  for (int64_t i = 0; i < n + 2 * pad; i++)
    ck_assert_float_eq(out[i], (i >= pad && i < n + pad) ? in[i - pad] : 0.0f);
  free(out);
  munmap(region, (size_t)page * 3);
  tj_arena_free(a);
  tj_jit_free(jit);
}
END_TEST

/* Out[i] = A[i] // B[i] and A[i] % B[i] (floor semantics) on int64. */
typedef struct tk_floor_ctx {
  const tj_buffer_t *a, *b, *q, *r;
} tk_floor_ctx_t;

static tk_block_parts_t floor_body(tj_arena_t *a, const tj_tir_expr_t *const *iv, void *vctx) {
  tk_floor_ctx_t *c = vctx;
  const tj_tir_expr_t *x = tj_tir_load(a, c->a, 1, iv), *y = tj_tir_load(a, c->b, 1, iv);
  const tj_tir_stmt_t *st[2] = {tj_tir_store(a, c->q, 1, iv, tj_tir_binary(a, TJ_TIR_FLOOR_DIV, x, y)),
                                tj_tir_store(a, c->r, 1, iv, tj_tir_binary(a, TJ_TIR_FLOOR_MOD, x, y))};
  tk_block_parts_t p = {NULL, tj_tir_seq(a, 2, st)};
  return p;
}

START_TEST(int64_floor_div_and_mod_round_toward_minus_infinity) {
  enum { N = 8 };
  int64_t n = N;
  tj_arena_t *a = tj_arena_create();
  tk_floor_ctx_t c = {tk_buffer(a, "A", TJ_I64, 1, &n), tk_buffer(a, "B", TJ_I64, 1, &n),
                      tk_buffer(a, "Q", TJ_I64, 1, &n), tk_buffer(a, "R", TJ_I64, 1, &n)};
  const tj_tir_stmt_t *s = tk_grid_block(a, "floor", 1, &n, "S", floor_body, &c);
  const tj_buffer_t *bufs[4] = {c.a, c.b, c.q, c.r};
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  void (*k)(void *, void *, void *, void *) =
      (void (*)(void *, void *, void *, void *))compile(jit, a, tk_func(a, 4, bufs, 1, &s, 0, NULL), "floordiv");
  int64_t x[N] = {7, -7, 7, -7, 6, -6, 0, -1}, y[N] = {2, 2, -2, -2, 3, 3, 5, 4}, q[N], r[N];
  int64_t eq[N] = {3, -4, -4, 3, 2, -2, 0, -1}, er[N] = {1, 1, -1, -1, 0, 0, 0, 3};
  k(x, y, q, r);
  for (int i = 0; i < N; i++) {
    ck_assert_int_eq(q[i], eq[i]);
    ck_assert_int_eq(r[i], er[i]);
  }
  tj_arena_free(a);
  tj_jit_free(jit);
}
END_TEST

START_TEST(ir_uses_half_ops_and_noalias_params) {
  tj_arena_t *a = tj_arena_create();
  const tj_prim_func_t *low = NULL;
  TU_OK(tj_tir_lower(a, tk_elementwise(a, TJ_F16, 4, 4, TJ_TIR_ADD, true), "add", &low));
  char *ir = NULL;
  TU_OK(tj_jit_llvm_ir(low, "add_f16_ir", 0, &ir));
  ck_assert_ptr_nonnull(strstr(ir, "fadd half"));
  ck_assert_ptr_nonnull(strstr(ir, "define void @add_f16_ir(ptr noalias"));
  ck_assert_ptr_null(strstr(ir, "float")); /* no silent widening of the arithmetic */
  tj_free(ir);
  tj_arena_free(a);
}
END_TEST

START_TEST(unsupported_intrinsic_and_unlowered_function_give_statuses) {
  tj_arena_t *a = tj_arena_create();
  tj_prim_func_t *f = tk_pad1d(a, TJ_F32, 4, 1);
  tj_jit_object_t obj;
  /* Not lowered: a block reaches codegen. */
  tj_status_t *s = tj_jit_emit_object(f, "unlowered_kernel", 3, &obj);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INTERNAL);
  ck_assert_ptr_nonnull(strstr(tj_status_text(s), "unlowered_kernel"));
  tj_status_free(s);
  /* An intrinsic the JIT does not know. */
  int64_t n = 4;
  const tj_buffer_t *A = tk_buffer(a, "A", TJ_F32, 1, &n);
  const tj_tir_expr_t *i = tj_tir_var(a, "i", TJ_I64);
  const tj_tir_expr_t *arg = tj_tir_load(a, A, 1, &i);
  const tj_tir_stmt_t *body =
      tj_tir_for(a, i, tk_i64(a, 0), tk_i64(a, n), TJ_FOR_SERIAL,
                 tj_tir_store(a, A, 1, &i, tj_tir_call(a, TJ_F32, "tir.frobnicate", 1, &arg)));
  tj_prim_func_t g = {1, &A->data, &A, NULL, body};
  s = tj_jit_emit_object(&g, "frob_kernel", 3, &obj);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(tj_status_text(s), "frob_kernel"));
  ck_assert_ptr_nonnull(strstr(tj_status_text(s), "tir.frobnicate"));
  tj_status_free(s);
  tj_arena_free(a);
}
END_TEST

START_TEST(canonical_text_ignores_names_but_not_content) {
  tj_arena_t *a = tj_arena_create();
  const tj_prim_func_t *l1, *l2, *l3;
  TU_OK(tj_tir_lower(a, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_ADD, true), "x", &l1));
  TU_OK(tj_tir_lower(a, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_ADD, true), "y", &l2));
  TU_OK(tj_tir_lower(a, tk_elementwise(a, TJ_F16, 4, 8, TJ_TIR_SUB, true), "z", &l3));
  char *t1 = tj_jit_kernel_text(l1), *t2 = tj_jit_kernel_text(l2), *t3 = tj_jit_kernel_text(l3);
  ck_assert_str_eq(t1, t2);
  ck_assert_str_ne(t1, t3);
  tj_free(t1);
  tj_free(t2);
  tj_free(t3);
  tj_arena_free(a);
}
END_TEST

START_TEST(host_target_has_cpu_and_features) {
  ck_assert_ptr_nonnull(strstr(tj_jit_host_triple(), "x86_64"));
  ck_assert_int_gt(strlen(tj_jit_host_cpu()), 0);
  ck_assert_ptr_nonnull(strstr(tj_jit_host_features(), "+f16c"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("codegen");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, relu_f16_is_bit_exact_on_every_half);
  tcase_add_test(tc, add_f16_rounds_every_operation_to_half);
  tcase_add_test(tc, float32_elementwise_matches_c);
  tcase_add_test(tc, reduction_with_init_on_stack_temp);
  tcase_add_test(tc, reduction_with_init_on_heap_temp);
  tcase_add_test(tc, if_then_else_evaluates_only_the_chosen_branch);
  tcase_add_test(tc, int64_floor_div_and_mod_round_toward_minus_infinity);
  tcase_add_test(tc, ir_uses_half_ops_and_noalias_params);
  tcase_add_test(tc, unsupported_intrinsic_and_unlowered_function_give_statuses);
  tcase_add_test(tc, canonical_text_ignores_names_but_not_content);
  tcase_add_test(tc, host_target_has_cpu_and_features);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
