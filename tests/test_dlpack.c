/* The DLPack side of the public API: calls on DLTensors (by position and by name,
 * strided inputs, outputs written into the caller's memory, dense or strided), tensors
 * handed over in both directions, and the errors for what tvmjit cannot take. */
#include <string.h>

#include "testutil.h"
#include "tvmjit.h"

/* out = x * 2 - y on (4, 6) float32: the two parameters are not interchangeable, so a
 * wrong binding by name shows in the numbers. */
static const char *model_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((4, 6), dtype=\"float32\"), y: R.Tensor((4, 6), dtype=\"float32\")) -> R.Tensor((4, 6), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            lv = R.add(x, x)\n"
    "            gv = R.subtract(lv, y)\n"
    "            R.output(gv)\n"
    "        return gv\n";

enum { ROWS = 4, COLS = 6, N = ROWS * COLS };

static tvmjit_instance_t *inst;
static tvmjit_module_t *mod;
static tvmjit_function_t *fn;
static int64_t shape[2] = {ROWS, COLS};
static float xs[N], ys[N];

static void setup(void) {
  TU_OK(tvmjit_instance_create(NULL, &inst));
  TU_OK(tvmjit_module_load_string(inst, "dlpack.rx", model_text, strlen(model_text), NULL, &mod));
  TU_OK(tvmjit_module_get_function(mod, "main", &fn));
  for (int i = 0; i < N; i++) xs[i] = (float)i * 0.5f, ys[i] = (float)(i % 5) - 2.0f;
}

static void teardown(void) {
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
}

static DLTensor dense(float *data) {
  return (DLTensor){.data = data, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = shape};
}

static void expect_result(const float *out, const int64_t *strides) {
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++) {
      int64_t at = strides ? r * strides[0] + c * strides[1] : r * COLS + c;
      ck_assert_float_eq(out[at], xs[r * COLS + c] * 2 - ys[r * COLS + c]);
    }
}

START_TEST(dense_inputs_and_output_in_place) {
  float out[N] = {0};
  DLTensor x = dense(xs), y = dense(ys), o = dense(out);
  const DLTensor *in[] = {&x, &y};
  DLTensor *outs[] = {&o};
  TU_OK(tvmjit_function_call_dlpack(fn, 2, NULL, in, 1, outs));
  expect_result(out, NULL);
}
END_TEST

START_TEST(inputs_by_name_in_any_order) {
  float out[N] = {0};
  DLTensor x = dense(xs), y = dense(ys), o = dense(out);
  const DLTensor *in[] = {&y, &x};
  const char *names[] = {"y", "x"};
  DLTensor *outs[] = {&o};
  ck_assert_int_eq(tvmjit_function_input_index(fn, "y"), 1);
  ck_assert_int_eq(tvmjit_function_input_index(fn, "z"), -1);
  TU_OK(tvmjit_function_call_dlpack(fn, 2, names, in, 1, outs));
  expect_result(out, NULL);

  const char *twice[] = {"x", "x"};
  tvmjit_status_t *st = tvmjit_function_call_dlpack(fn, 2, twice, in, 1, outs);
  ck_assert_ptr_nonnull(st);
  ck_assert_ptr_nonnull(strstr(tvmjit_status_message(st), "given twice"));
  tvmjit_status_free(st);
  const char *unknown[] = {"x", "z"};
  st = tvmjit_function_call_dlpack(fn, 2, unknown, in, 1, outs);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_NOT_FOUND);
  ck_assert_ptr_nonnull(strstr(tvmjit_status_message(st), "no parameter 'z'"));
  tvmjit_status_free(st);
}
END_TEST

/* x given as the transpose of a (6, 4) array: strides (1, 4); the output written
 * into every other float of a buffer: strides (12, 2). */
START_TEST(strided_input_and_strided_output) {
  float xt[N], out[2 * N];
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++) xt[c * ROWS + r] = xs[r * COLS + c];
  for (int i = 0; i < 2 * N; i++) out[i] = -1000.0f;
  int64_t in_strides[2] = {1, ROWS}, out_strides[2] = {2 * COLS, 2};
  DLTensor x = dense(xt), y = dense(ys), o = dense(out);
  x.strides = in_strides;
  o.strides = out_strides;
  const DLTensor *in[] = {&x, &y};
  DLTensor *outs[] = {&o};
  TU_OK(tvmjit_function_call_dlpack(fn, 2, NULL, in, 1, outs));
  expect_result(out, out_strides);
  for (int i = 1; i < 2 * N; i += 2) ck_assert_float_eq(out[i], -1000.0f); /* the gaps are untouched */
}
END_TEST

START_TEST(byte_offset_is_honoured) {
  float padded[N + 3], out[N];
  memcpy(padded + 3, xs, sizeof xs);
  DLTensor x = dense(padded), y = dense(ys), o = dense(out);
  x.byte_offset = 3 * sizeof(float);
  const DLTensor *in[] = {&x, &y};
  DLTensor *outs[] = {&o};
  TU_OK(tvmjit_function_call_dlpack(fn, 2, NULL, in, 1, outs));
  expect_result(out, NULL);
}
END_TEST

static void expect_error(const DLTensor *x, DLTensor *o, tvmjit_code_t code, const char *text) {
  DLTensor y = dense(ys);
  const DLTensor *in[] = {x, &y};
  DLTensor *outs[] = {o};
  tvmjit_status_t *st = tvmjit_function_call_dlpack(fn, 2, NULL, in, 1, outs);
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(tvmjit_status_code(st) == code, "code %d: %s", tvmjit_status_code(st), tvmjit_status_message(st));
  ck_assert_msg(strstr(tvmjit_status_message(st), text), "'%s' lacks '%s'", tvmjit_status_message(st), text);
  tvmjit_status_free(st);
}

START_TEST(what_tvmjit_cannot_take_is_refused_clearly) {
  float out[N];
  DLTensor o = dense(out);
  DLTensor gpu = dense(xs);
  gpu.device.device_type = kDLCUDA;
  expect_error(&gpu, &o, TVMJIT_UNSUPPORTED, "tensor.cpu()");
  DLTensor bf16 = dense(xs);
  bf16.dtype = (DLDataType){kDLBfloat, 16, 1};
  expect_error(&bf16, &o, TVMJIT_INVALID_ARGUMENT, "expected float32[4, 6], got bfloat16[4, 6]");
  DLTensor c64 = dense(xs);
  c64.dtype = (DLDataType){kDLComplex, 64, 1};
  expect_error(&c64, &o, TVMJIT_UNSUPPORTED, "complex64");
  DLTensor f64 = dense(xs);
  f64.dtype = (DLDataType){kDLFloat, 64, 1};
  expect_error(&f64, &o, TVMJIT_INVALID_ARGUMENT, "float64");
  DLTensor x = dense(xs), small = dense(out);
  int64_t small_shape[2] = {4, 5};
  small.shape = small_shape;
  expect_error(&x, &small, TVMJIT_INVALID_ARGUMENT, "output 0");
  expect_error(NULL, &o, TVMJIT_INVALID_ARGUMENT, "NULL");
}
END_TEST

static int deleted;
static void count_delete(DLManagedTensor *m) { deleted++; (void)m; }

START_TEST(tensors_cross_in_both_directions_without_copies) {
  DLManagedTensor producer = {.dl_tensor = dense(xs), .deleter = count_delete};
  tvmjit_tensor_t *t;
  deleted = 0;
  TU_OK(tvmjit_tensor_from_dlpack(&producer, &t));
  ck_assert_ptr_eq(tvmjit_tensor_data(t), xs);
  ck_assert_int_eq(tvmjit_tensor_dtype(t), TVMJIT_FLOAT32);
  ck_assert_int_eq(deleted, 0);
  tvmjit_tensor_free(t);
  ck_assert_int_eq(deleted, 1);

  int64_t strides[2] = {1, ROWS};
  DLManagedTensor strided = {.dl_tensor = dense(xs), .deleter = count_delete};
  strided.dl_tensor.strides = strides;
  tvmjit_status_t *st = tvmjit_tensor_from_dlpack(&strided, &t);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_UNSUPPORTED);
  tvmjit_status_free(st);
  ck_assert_int_eq(deleted, 1); /* on error the caller keeps it */

  tvmjit_tensor_t *owned;
  TU_OK(tvmjit_tensor_new(TVMJIT_BOOL, 2, shape, &owned));
  void *data = tvmjit_tensor_data(owned);
  DLManagedTensor *m;
  TU_OK(tvmjit_tensor_to_dlpack(owned, &m));
  ck_assert_ptr_eq(m->dl_tensor.data, data);
  ck_assert_int_eq(m->dl_tensor.dtype.code, TVMJIT_DL_BOOL);
  ck_assert_int_eq(m->dl_tensor.dtype.bits, 8);
  ck_assert_int_eq(m->dl_tensor.shape[1], COLS);
  m->deleter(m); /* frees the tensor: ASan checks that nothing leaks */
}
END_TEST

START_TEST(dtype_mapping_round_trips) {
  for (int d = TVMJIT_FLOAT16; d <= TVMJIT_BFLOAT16; d++) {
    tvmjit_dtype_t back;
    ck_assert_int_eq(tvmjit_dtype_from_dlpack(tvmjit_dtype_to_dlpack((tvmjit_dtype_t)d), &back), 0);
    ck_assert_int_eq(back, d);
  }
  tvmjit_dtype_t b;
  ck_assert_int_eq(tvmjit_dtype_from_dlpack((DLDataType){kDLUInt, 1, 1}, &b), 0); /* TVM's bool */
  ck_assert_int_eq(b, TVMJIT_BOOL);
  ck_assert_int_eq(tvmjit_dtype_from_dlpack((DLDataType){kDLFloat, 32, 4}, &b), -1);
  ck_assert_int_eq(tvmjit_dtype_from_dlpack((DLDataType){kDLBfloat, 16, 1}, &b), 0);
  ck_assert_int_eq(b, TVMJIT_BFLOAT16);
  ck_assert_int_eq(tvmjit_dtype_from_dlpack((DLDataType){kDLComplex, 64, 1}, &b), -1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("dlpack");
  TCase *calls = tcase_create("calls");
  tcase_set_timeout(calls, 300);
  tcase_add_unchecked_fixture(calls, setup, teardown);
  tcase_add_test(calls, dense_inputs_and_output_in_place);
  tcase_add_test(calls, inputs_by_name_in_any_order);
  tcase_add_test(calls, strided_input_and_strided_output);
  tcase_add_test(calls, byte_offset_is_honoured);
  tcase_add_test(calls, what_tvmjit_cannot_take_is_refused_clearly);
  suite_add_tcase(s, calls);
  TCase *tensors = tcase_create("tensors");
  tcase_add_test(tensors, tensors_cross_in_both_directions_without_copies);
  tcase_add_test(tensors, dtype_mapping_round_trips);
  suite_add_tcase(s, tensors);
  return tu_run_suite(s);
}
