/* runtime/kernel: the kernel call convention (pointers, then int64 scalars, through a
 * prepared libffi call), the helpers' allocation-failure count, and the executor turning
 * a kernel's failed temporary allocation into an out-of-memory status for that call.
 * Kernels are plain C functions with the kernel signature. */
#include <string.h>

#include "runtime/executable.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"
#include "support/alloc.h"
#include "testutil.h"

static void k_scale(void *in, void *out, int64_t n, int64_t c) {
  const float *a = in;
  float *o = out;
  for (int64_t i = 0; i < n; i++) o[i] = a[i] * (float)c;
}

/* Asks for temporaries the way a compiled kernel does; skips its body when refused. */
static void k_needs_temp(void *in, void *out, int64_t nbytes) {
  void *tmp = tj_kernel_helper_alloc(nbytes);
  if (!tmp) return;
  memcpy(out, in, sizeof(float));
  tj_kernel_helper_free(tmp);
}

START_TEST(call_passes_buffers_then_scalars) {
  tj_kernel_t k;
  TU_OK(tj_kernel_init(&k, "scale", (void (*)(void))k_scale, 2, 2));
  float in[4] = {1, 2, 3, 4}, out[4] = {0};
  void *bufs[2] = {in, out}, *argv[4];
  int64_t scalars[2] = {4, 3};
  tj_kernel_call(&k, bufs, scalars, argv);
  for (int i = 0; i < 4; i++) ck_assert_float_eq(out[i], in[i] * 3);
  ck_assert_str_eq(k.name, "scale");
  tj_kernel_release(&k);
}
END_TEST

START_TEST(init_refuses_bad_kernels) {
  tj_kernel_t k;
  tj_status_t *s = tj_kernel_init(&k, "none", NULL, 1, 0);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INVALID_ARGUMENT);
  tj_status_free(s);
  s = tj_kernel_init(&k, "wide", (void (*)(void))k_scale, TJ_KERNEL_MAX_ARGS, 1);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INVALID_ARGUMENT);
  tj_status_free(s);
}
END_TEST

START_TEST(failed_helper_allocations_are_counted_then_reset) {
  (void)tj_kernel_take_alloc_failures();
  ck_assert_ptr_null(tj_kernel_helper_alloc(-1));
  ck_assert_ptr_null(tj_kernel_helper_alloc(-2));
  ck_assert_int_eq(tj_kernel_take_alloc_failures(), 2);
  ck_assert_int_eq(tj_kernel_take_alloc_failures(), 0);
  void *p = tj_kernel_helper_alloc(0); /* zero bytes is a valid request */
  ck_assert_ptr_nonnull(p);
  tj_kernel_helper_free(p);
  ck_assert_int_eq(tj_kernel_take_alloc_failures(), 0);
}
END_TEST

/* Chunks of a parallel loop run on pool workers; their failures count on the caller. */
static void chunk_fails(int64_t begin, int64_t end, void *ctx) {
  for (int64_t i = begin; i < end; i++) ck_assert_ptr_null(tj_kernel_helper_alloc(-1));
}

START_TEST(parallel_loop_failures_count_on_the_caller) {
  tj_thread_pool_t *pool;
  TU_OK(tj_thread_pool_create(2, &pool));
  tj_thread_pool_t *prev = tj_thread_pool_set_current(pool);
  (void)tj_kernel_take_alloc_failures();
  tj_kernel_helper_parallel_for(64, chunk_fails, NULL);
  ck_assert_int_eq(tj_kernel_take_alloc_failures(), 64);
  tj_thread_pool_set_current(prev);
  tj_thread_pool_free(pool);
}
END_TEST

/* x -> t (needs a temporary of `nbytes`) -> out: the run fails at the first call when
 * the temporary cannot be had, and names that call. */
static tj_status_t *run_with_temp(int64_t nbytes) {
  tj_executable_t *exe;
  TU_OK(tj_executable_create(&exe));
  int k, x, out;
  tj_value_desc_t dx = {.name = "x", .dtype = TJ_F32, .ndim = 1, .shape = {1}, .kind = TJ_VALUE_INPUT};
  tj_value_desc_t dout = {.name = "y", .dtype = TJ_F32, .ndim = 1, .shape = {1}, .kind = TJ_VALUE_OUTPUT};
  TU_OK(tj_executable_add_kernel(exe, "needs_temp", (void (*)(void))k_needs_temp, 2, 1, &k));
  TU_OK(tj_executable_add_value(exe, &dx, &x));
  TU_OK(tj_executable_add_value(exe, &dout, &out));
  int args[2] = {x, out};
  TU_OK(tj_executable_add_call(exe, k, 2, args, &nbytes, "lv0"));
  TU_OK(tj_executable_plan_memory(exe));
  float xv = 5;
  int64_t shape[1] = {1};
  tj_tensor_t *in, *res = NULL;
  TU_OK(tj_tensor_wrap(TJ_F32, 1, shape, &xv, &in));
  const tj_tensor_t *ins[1] = {in};
  tj_status_t *s = tj_executable_run(exe, 1, ins, 1, &res);
  if (!s) ck_assert_float_eq(((float *)res->data)[0], 5);
  tj_tensor_free(res);
  tj_tensor_free(in);
  tj_executable_free(exe);
  return s;
}

START_TEST(executor_reports_a_kernels_failed_allocation) {
  TU_OK(run_with_temp(16));
  tj_status_t *s = run_with_temp(-1);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_OUT_OF_MEMORY);
  ck_assert_ptr_nonnull(strstr(tj_status_text(s), "kernel 'needs_temp' (binding 'lv0')"));
  tj_status_free(s);
  ck_assert_int_eq(tj_kernel_take_alloc_failures(), 0); /* the executor took the count */
  TU_OK(run_with_temp(16)); /* and a later run starts clean */
}
END_TEST

int main(void) {
  Suite *s = suite_create("kernel_abi");
  TCase *tc = tcase_create("kernel_abi");
  tcase_add_test(tc, call_passes_buffers_then_scalars);
  tcase_add_test(tc, init_refuses_bad_kernels);
  tcase_add_test(tc, failed_helper_allocations_are_counted_then_reset);
  tcase_add_test(tc, parallel_loop_failures_count_on_the_caller);
  tcase_add_test(tc, executor_reports_a_kernels_failed_allocation);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
