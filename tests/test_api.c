/* The public API (include/tvmjit.h): load, call, errors, and concurrent calls. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tvmjit.h"

/* y = relu(x) + x, in float32, from two PrimFuncs: exercises an intermediate. */
static const char *model_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import tir as T\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((8, 16), dtype=\"float32\")) -> R.Tensor((8, 16), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            lv = R.nn.relu(x)\n"
    "            gv = R.add(lv, x)\n"
    "            R.output(gv)\n"
    "        return gv\n";

static tvmjit_instance_t *inst;
static tvmjit_module_t *mod;
static tvmjit_function_t *fn;

static void load(void) {
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "relu_add.rx", model_text, strlen(model_text), NULL, &mod);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
}

static void unload(void) {
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
}

static float expected(float x) { return (x > 0 ? x : 0) + x; }

START_TEST(call_wraps_caller_memory_and_returns_owned_output) {
  load();
  ck_assert_int_eq(tvmjit_function_num_inputs(fn), 1);
  ck_assert_int_eq(tvmjit_function_num_outputs(fn), 1);
  const char *name;
  tvmjit_dtype_t dt;
  int ndim;
  const int64_t *shape;
  ck_assert_int_eq(tvmjit_function_input_info(fn, 0, &name, &dt, &ndim, &shape), 0);
  ck_assert_str_eq(name, "x");
  ck_assert_int_eq(dt, TVMJIT_FLOAT32);
  ck_assert_int_eq(ndim, 2);
  ck_assert_int_eq(shape[1], 16);
  ck_assert_int_eq(tvmjit_function_input_info(fn, 1, &name, &dt, &ndim, &shape), -1);

  float data[8 * 16];
  for (int i = 0; i < 128; i++) data[i] = (float)(i - 64) * 0.25f;
  int64_t dims[2] = {8, 16};
  tvmjit_tensor_t *x, *y = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, dims, data, &x));
  ck_assert_ptr_eq(tvmjit_tensor_data(x), data);
  ck_assert_ptr_null(tvmjit_function_call(fn, 1, (const tvmjit_tensor_t *const *)&x, 1, &y));
  const float *out = tvmjit_tensor_data(y);
  for (int i = 0; i < 128; i++) ck_assert_float_eq(out[i], expected(data[i]));
  ck_assert_float_eq(data[0], -16.0f); /* the input is untouched */
  tvmjit_tensor_free(y);
  tvmjit_tensor_free(x);
  unload();
}
END_TEST

/* Without FuseOps the two operators stay two kernel calls, each timed. */
START_TEST(profiled_call_times_each_kernel_call) {
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_module_options_t opts;
  tvmjit_module_options_init(&opts);
  opts.passes = "LegalizeOps";
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "relu_add.rx", model_text, strlen(model_text), &opts, &mod);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
  ck_assert_int_eq(tvmjit_function_num_kernel_calls(fn), 2);
  ck_assert_str_eq(tvmjit_function_kernel_call_name(fn, 0), "relu");
  ck_assert_str_eq(tvmjit_function_kernel_call_name(fn, 1), "add");
  ck_assert_ptr_null(tvmjit_function_kernel_call_name(fn, 2));
  ck_assert_ptr_null(tvmjit_function_kernel_call_name(fn, -1));

  float data[8 * 16];
  for (int i = 0; i < 128; i++) data[i] = (float)(i - 64) * 0.5f;
  int64_t dims[2] = {8, 16};
  tvmjit_tensor_t *x, *y = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, dims, data, &x));
  double call_ms[3] = {-1, -1, -7};
  ck_assert_ptr_null(tvmjit_function_call_profiled(fn, 1, (const tvmjit_tensor_t *const *)&x, 1, &y, call_ms));
  ck_assert(call_ms[0] >= 0 && call_ms[1] >= 0);
  ck_assert(call_ms[2] == -7); /* nothing written past the calls */
  const float *out = tvmjit_tensor_data(y);
  for (int i = 0; i < 128; i++) ck_assert_float_eq(out[i], expected(data[i]));
  tvmjit_tensor_free(y);
  tvmjit_tensor_free(x);
  unload();
}
END_TEST

START_TEST(bad_calls_return_clear_statuses) {
  load();
  int64_t dims[2] = {8, 16}, wrong[2] = {8, 15};
  tvmjit_tensor_t *x16, *x15, *y = NULL;
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT16, 2, dims, &x16));
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, 2, wrong, &x15));
  tvmjit_status_t *st = tvmjit_function_call(fn, 1, (const tvmjit_tensor_t *const *)&x16, 1, &y);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_INVALID_ARGUMENT);
  ck_assert_msg(strstr(tvmjit_status_message(st), "input 'x': expected float32[8, 16], got float16[8, 16]"), "%s",
                tvmjit_status_message(st));
  tvmjit_status_free(st);
  st = tvmjit_function_call(fn, 1, (const tvmjit_tensor_t *const *)&x15, 1, &y);
  ck_assert_msg(st && strstr(tvmjit_status_message(st), "got float32[8, 15]"), "shape mismatch");
  tvmjit_status_free(st);
  st = tvmjit_function_call(fn, 0, NULL, 1, &y);
  ck_assert_ptr_nonnull(st);
  tvmjit_status_free(st);
  ck_assert_ptr_null(y); /* outputs untouched on failure */

  tvmjit_function_t *none;
  st = tvmjit_module_get_function(mod, "nope", &none);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_NOT_FOUND);
  tvmjit_status_free(st);
  st = tvmjit_tensor_new((tvmjit_dtype_t)99, 1, dims, &x16 /* not overwritten */);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_INVALID_ARGUMENT);
  tvmjit_status_free(st);
  tvmjit_tensor_free(x16);
  tvmjit_tensor_free(x15);
  unload();
}
END_TEST

START_TEST(bad_models_are_reported_not_loaded) {
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_module_t *m = NULL;
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "broken.rx", "def main(:\n", 11, NULL, &m);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_PARSE_ERROR);
  ck_assert_msg(strstr(tvmjit_status_message(st), "broken.rx:1:"), "%s", tvmjit_status_message(st));
  tvmjit_status_free(st);
  ck_assert_ptr_null(m);
  tvmjit_module_options_t opts;
  tvmjit_module_options_init(&opts);
  opts.passes = "LegalizeOps,NoSuchPass";
  st = tvmjit_module_load_string(inst, "m.rx", model_text, strlen(model_text), &opts, &m);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_INVALID_ARGUMENT);
  tvmjit_status_free(st);
  st = tvmjit_module_load_file(inst, "/nonexistent/model.rx", NULL, &m);
  ck_assert_ptr_nonnull(st);
  tvmjit_status_free(st);
  tvmjit_instance_free(inst);
}
END_TEST

enum { N_THREADS = 8, N_CALLS = 25 };

static void *call_many(void *arg) {
  float *data = arg;
  int64_t dims[2] = {8, 16};
  tvmjit_tensor_t *x;
  if (tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, dims, data, &x)) return (void *)1;
  for (int k = 0; k < N_CALLS; k++) {
    tvmjit_tensor_t *y;
    tvmjit_status_t *st = tvmjit_function_call(fn, 1, (const tvmjit_tensor_t *const *)&x, 1, &y);
    if (st) return tvmjit_status_free(st), (void *)1;
    const float *out = tvmjit_tensor_data(y);
    for (int i = 0; i < 128; i++)
      if (out[i] != expected(data[i])) return (void *)1;
    tvmjit_tensor_free(y);
  }
  tvmjit_tensor_free(x);
  return NULL;
}

START_TEST(eight_threads_call_one_function) {
  load();
  static float data[N_THREADS][128];
  pthread_t threads[N_THREADS];
  for (int t = 0; t < N_THREADS; t++) {
    for (int i = 0; i < 128; i++) data[t][i] = (float)((i * 7 + t * 13) % 50 - 25);
    ck_assert_int_eq(pthread_create(&threads[t], NULL, call_many, data[t]), 0);
  }
  for (int t = 0; t < N_THREADS; t++) {
    void *r;
    pthread_join(threads[t], &r);
    ck_assert_msg(r == NULL, "thread %d saw a wrong result or an error", t);
  }
  unload();
}
END_TEST

START_TEST(tensor_convert_and_dtype_names) {
  int64_t dims[1] = {4};
  tvmjit_tensor_t *a, *b;
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, 1, dims, &a));
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT16, 1, dims, &b));
  float *fa = tvmjit_tensor_data(a);
  fa[0] = 1.0f; fa[1] = 1.0f + 1.0f / 2048; fa[2] = -65504.0f; fa[3] = 70000.0f;
  ck_assert_ptr_null(tvmjit_tensor_convert(a, b));
  const uint16_t *hb = tvmjit_tensor_data(b);
  ck_assert_uint_eq(hb[0], 0x3c00);
  ck_assert_uint_eq(hb[1], 0x3c00); /* ties round to even */
  ck_assert_uint_eq(hb[2], 0xfbff);
  ck_assert_uint_eq(hb[3], 0x7c00); /* overflow to inf */
  tvmjit_dtype_t d;
  ck_assert_int_eq(tvmjit_dtype_from_name("uint16", &d), 0);
  ck_assert_str_eq(tvmjit_dtype_name(d), "uint16");
  ck_assert_int_eq(tvmjit_dtype_from_name("float8", &d), -1);
  tvmjit_tensor_free(a);
  tvmjit_tensor_free(b);
}
END_TEST

/* The same model with a symbolic batch n: one function serves every n; the signature
 * shows n as -1; its kernels compile once, at lookup, and no size compiles anything
 * more; a bad n is an INVALID_ARGUMENT naming the var. */
static const char *symbolic_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import tir as T\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((\"n\", 16), dtype=\"float32\"), y: R.Tensor((\"n\", 16), dtype=\"float32\")) -> R.Tensor((\"n\", 16), dtype=\"float32\"):\n"
    "        n = T.int64()\n"
    "        with R.dataflow():\n"
    "            lv = R.nn.relu(x)\n"
    "            gv = R.add(lv, y)\n"
    "            R.output(gv)\n"
    "        return gv\n";

static int count_compiled(const char *report) {
  int total = 0, n;
  for (const char *p = report; (p = strstr(p, "requested, ")); p++)
    if (sscanf(p, "requested, %d compiled", &n) == 1) total += n;
  return total;
}

static void call_symbolic(tvmjit_function_t *f, int64_t n) {
  int64_t dims[2] = {n, 16};
  tvmjit_tensor_t *in[2], *y = NULL;
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, 2, dims, &in[0]));
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, 2, dims, &in[1]));
  float *x = tvmjit_tensor_data(in[0]), *b = tvmjit_tensor_data(in[1]);
  for (int64_t i = 0; i < n * 16; i++) x[i] = (float)(i % 7) - 3.0f, b[i] = (float)i * 0.5f;
  tvmjit_status_t *st = tvmjit_function_call(f, 2, (const tvmjit_tensor_t *const *)in, 1, &y);
  ck_assert_msg(st == NULL, "n=%lld: %s", (long long)n, st ? tvmjit_status_message(st) : "");
  ck_assert_int_eq(tvmjit_tensor_shape(y)[0], n);
  const float *o = tvmjit_tensor_data(y);
  for (int64_t i = 0; i < n * 16; i++) ck_assert_float_eq(o[i], (x[i] > 0 ? x[i] : 0) + b[i]);
  tvmjit_tensor_free(y);
  tvmjit_tensor_free(in[0]);
  tvmjit_tensor_free(in[1]);
}

START_TEST(symbolic_batch_runs_at_every_size) {
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_module_options_t o;
  tvmjit_module_options_init(&o);
  o.use_cache = 0;
  ck_assert_ptr_null(tvmjit_module_load_string(inst, "sym.rx", symbolic_text, strlen(symbolic_text), &o, &mod));
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
  const int64_t *shape;
  int ndim;
  ck_assert_int_eq(tvmjit_function_input_info(fn, 1, NULL, NULL, &ndim, &shape), 0);
  ck_assert_int_eq(ndim, 2);
  ck_assert_int_eq(shape[0], -1);
  ck_assert_int_eq(shape[1], 16);
  int at_lookup = count_compiled(tvmjit_module_report(mod));
  ck_assert_int_ge(at_lookup, 1); /* one kernel for every n, compiled when looked up */
  call_symbolic(fn, 3);
  call_symbolic(fn, 3);
  call_symbolic(fn, 1);
  call_symbolic(fn, 33);
  ck_assert_int_eq(count_compiled(tvmjit_module_report(mod)), at_lookup);
  ck_assert_int_gt(tvmjit_function_num_kernel_calls(fn), 0);

  int64_t d3[2] = {3, 16}, d4[2] = {4, 16};
  tvmjit_tensor_t *in[2], *y = NULL;
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, 2, d3, &in[0]));
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT32, 2, d4, &in[1]));
  tvmjit_status_t *st = tvmjit_function_call(fn, 2, (const tvmjit_tensor_t *const *)in, 1, &y);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_INVALID_ARGUMENT);
  ck_assert_msg(strstr(tvmjit_status_message(st), "input 'y': dim 0 is 4, but n = 3 from dim 0 of input 'x'"), "%s",
                tvmjit_status_message(st));
  ck_assert_ptr_null(y);
  tvmjit_status_free(st);
  tvmjit_tensor_free(in[0]);
  tvmjit_tensor_free(in[1]);
  unload();
}
END_TEST

int main(void) {
  Suite *s = suite_create("api");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, call_wraps_caller_memory_and_returns_owned_output);
  tcase_add_test(tc, profiled_call_times_each_kernel_call);
  tcase_add_test(tc, bad_calls_return_clear_statuses);
  tcase_add_test(tc, bad_models_are_reported_not_loaded);
  tcase_add_test(tc, eight_threads_call_one_function);
  tcase_add_test(tc, tensor_convert_and_dtype_names);
  tcase_add_test(tc, symbolic_batch_runs_at_every_size);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
