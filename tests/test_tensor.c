/* runtime/tensor: storage, wrapping, sizes, type strings, element access per dtype. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/tensor.h"
#include "support/alloc.h"
#include "testutil.h"

START_TEST(new_tensor_is_zeroed_aligned_and_sized) {
  int64_t shape[4] = {16, 32, 32, 16};
  tj_tensor_t *t;
  TU_OK(tj_tensor_new(TJ_F16, 4, shape, &t));
  ck_assert_int_eq(tj_tensor_numel(t), 16 * 32 * 32 * 16);
  ck_assert_uint_eq(tj_tensor_nbytes(t), 16 * 32 * 32 * 16 * 2);
  ck_assert_uint_eq((uintptr_t)t->data % 64, 0);
  ck_assert(t->owns_data);
  const unsigned char *p = t->data;
  size_t nonzero = 0;
  for (size_t i = 0; i < tj_tensor_nbytes(t); i++) nonzero += p[i] != 0;
  ck_assert_uint_eq(nonzero, 0);
  tj_tensor_free(t);
}
END_TEST

START_TEST(scalar_and_empty_tensors) {
  tj_tensor_t *t;
  TU_OK(tj_tensor_new(TJ_F32, 0, NULL, &t));
  ck_assert_int_eq(tj_tensor_numel(t), 1);
  ck_assert_uint_eq(tj_tensor_nbytes(t), 4);
  tj_tensor_free(t);
  int64_t shape[2] = {3, 0};
  TU_OK(tj_tensor_new(TJ_I64, 2, shape, &t));
  ck_assert_int_eq(tj_tensor_numel(t), 0);
  ck_assert_uint_eq(tj_tensor_nbytes(t), 0);
  tj_tensor_free(t);
}
END_TEST

START_TEST(wrap_borrows_caller_memory) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  tj_tensor_t *t;
  TU_OK(tj_tensor_wrap(TJ_F32, 2, shape, data, &t));
  ck_assert_ptr_eq(t->data, data);
  ck_assert(!t->owns_data);
  ck_assert_double_eq(tj_tensor_get_f64(t, 4), 5.0);
  tj_tensor_set_f64(t, 0, -7.5);
  ck_assert_float_eq(data[0], -7.5f);
  tj_tensor_free(t); /* must not free `data` (stack memory: ASan would catch it) */
  ck_assert_float_eq(data[5], 6.0f);
}
END_TEST

START_TEST(bad_shapes_are_rejected) {
  int64_t neg[2] = {2, -1};
  tj_tensor_t *t = NULL;
  tj_status_t *s = tj_tensor_new(TJ_F32, 2, neg, &t);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_null(t);
  tj_status_free(s);
  int64_t shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  s = tj_tensor_new(TJ_F32, 9, shape, &t);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "0 to 8 dimensions"));
  tj_status_free(s);
  int64_t huge[3] = {INT64_MAX / 2, 4, 4};
  s = tj_tensor_new(TJ_F32, 3, huge, &t);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INVALID_ARGUMENT);
  tj_status_free(s);
  s = tj_tensor_wrap(TJ_F32, 1, shape, NULL, &t);
  ck_assert_ptr_nonnull(s);
  tj_status_free(s);
}
END_TEST

START_TEST(allocation_failure_is_reported) {
  int64_t shape[1] = {10};
  tj_tensor_t *t = NULL;
  for (long n = 0; n < 2; n++) {
    tj_alloc_fail_after(n);
    tj_status_t *s = tj_tensor_new(TJ_F32, 1, shape, &t);
    tj_alloc_fail_reset();
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(tj_status_code(s), TJ_ERR_OUT_OF_MEMORY);
    ck_assert_ptr_null(t);
    tj_status_free(s);
  }
}
END_TEST

START_TEST(type_strings) {
  char buf[128];
  int64_t shape[4] = {16, 32, 32, 16};
  ck_assert_str_eq(tj_tensor_type_str(TJ_F16, 4, shape, buf, sizeof buf), "float16[16, 32, 32, 16]");
  ck_assert_str_eq(tj_tensor_type_str(TJ_F32, 0, shape, buf, sizeof buf), "float32[]");
  ck_assert_str_eq(tj_tensor_type_str(TJ_BOOL, 1, shape, buf, sizeof buf), "bool[16]");
  /* A small buffer truncates instead of overflowing. */
  char small[8];
  tj_tensor_type_str(TJ_F16, 4, shape, small, sizeof small);
  ck_assert_uint_eq(strlen(small), 7);
  ck_assert_int_eq(strncmp(small, "float16", 7), 0);
}
END_TEST

/* Every dtype stores what it can represent exactly and converts the rest by its rules. */
START_TEST(element_access_for_every_dtype) {
  static const char *names[] = {"float16", "float32", "float64", "int8",   "int16",  "int32",
                                "int64",   "uint8",   "uint16",  "uint32", "uint64", "bool"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    tj_dtype_t dt;
    ck_assert(tj_dtype_parse(names[k], &dt));
    int64_t shape[1] = {4};
    tj_tensor_t *t;
    TU_OK(tj_tensor_new(dt, 1, shape, &t));
    ck_assert_uint_eq(tj_tensor_nbytes(t), 4 * tj_dtype_bytes(dt));
    double v = dt.code == TJ_DT_BOOL ? 1.0 : 100.0;
    tj_tensor_set_f64(t, 2, v);
    ck_assert_msg(tj_tensor_get_f64(t, 2) == v, "%s round trip", names[k]);
    ck_assert_msg(tj_tensor_get_f64(t, 1) == 0.0, "%s neighbour untouched", names[k]);
    ck_assert_msg(tj_tensor_get_f64(t, 3) == 0.0, "%s neighbour untouched", names[k]);
    tj_tensor_free(t);
  }
}
END_TEST

START_TEST(element_conversions_follow_each_type) {
  int64_t shape[1] = {2};
  tj_tensor_t *t;
  TU_OK(tj_tensor_new(TJ_F16, 1, shape, &t));
  tj_tensor_set_f64(t, 0, 0.1);
  ck_assert_uint_eq(((uint16_t *)t->data)[0], 0x2e66); /* nearest half to 0.1 */
  ck_assert_double_eq(tj_tensor_get_f64(t, 0), 0.0999755859375);
  tj_tensor_set_f64(t, 1, 1e6);
  ck_assert(isinf(tj_tensor_get_f64(t, 1)));
  tj_tensor_free(t);

  tj_dtype_t u8, i8;
  ck_assert(tj_dtype_parse("uint8", &u8) && tj_dtype_parse("int8", &i8));
  TU_OK(tj_tensor_new(u8, 1, shape, &t));
  tj_tensor_set_f64(t, 0, 255);
  tj_tensor_set_f64(t, 1, -3); /* negative into unsigned saturates at 0 */
  ck_assert_double_eq(tj_tensor_get_f64(t, 0), 255);
  ck_assert_double_eq(tj_tensor_get_f64(t, 1), 0);
  tj_tensor_free(t);
  TU_OK(tj_tensor_new(i8, 1, shape, &t));
  tj_tensor_set_f64(t, 0, -128);
  tj_tensor_set_f64(t, 1, 2.9); /* truncates toward zero, like a C cast */
  ck_assert_double_eq(tj_tensor_get_f64(t, 0), -128);
  ck_assert_double_eq(tj_tensor_get_f64(t, 1), 2);
  tj_tensor_free(t);
  TU_OK(tj_tensor_new(TJ_I64, 1, shape, &t));
  tj_tensor_set_f64(t, 0, NAN); /* no undefined behaviour: NaN becomes 0 */
  tj_tensor_set_f64(t, 1, 1e300);
  ck_assert_int_eq(((int64_t *)t->data)[0], 0);
  ck_assert_int_eq(((int64_t *)t->data)[1], INT64_MAX);
  tj_tensor_free(t);
  TU_OK(tj_tensor_new(TJ_BOOL, 1, shape, &t));
  tj_tensor_set_f64(t, 0, -0.5);
  ck_assert_uint_eq(((uint8_t *)t->data)[0], 1);
  tj_tensor_free(t);
}
END_TEST

/* Found by fuzzing (a .npy header): an empty shape whose leading dimensions multiply past
 * INT64_MAX is refused, so tj_tensor_numel never overflows. */
START_TEST(element_count_must_fit_int64) {
  const int64_t shape[] = {1, 12, 399999999999999999LL, 3, 1, 0, 3};
  tj_tensor_t *t = NULL;
  tj_status_t *s = tj_tensor_new(tj_dtype_make(TJ_DT_UINT, 8, 1), 7, shape, &t);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INVALID_ARGUMENT);
  ck_assert_str_eq(tj_status_message(s), "tensor of type uint8 with 7 dimensions is too large to address");
  tj_status_free(s);
  ck_assert_ptr_null(t);
  const int64_t fits[] = {1, 12, 399999999999999999LL, 0, 3}; /* 4.8e18 < INT64_MAX */
  TU_OK(tj_tensor_new(tj_dtype_make(TJ_DT_UINT, 8, 1), 5, fits, &t));
  ck_assert_int_eq(tj_tensor_numel(t), 0);
  tj_tensor_free(t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tensor");
  TCase *tc = tcase_create("tensor");
  tcase_add_test(tc, new_tensor_is_zeroed_aligned_and_sized);
  tcase_add_test(tc, scalar_and_empty_tensors);
  tcase_add_test(tc, wrap_borrows_caller_memory);
  tcase_add_test(tc, bad_shapes_are_rejected);
  tcase_add_test(tc, element_count_must_fit_int64);
  tcase_add_test(tc, allocation_failure_is_reported);
  tcase_add_test(tc, type_strings);
  tcase_add_test(tc, element_access_for_every_dtype);
  tcase_add_test(tc, element_conversions_follow_each_type);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
