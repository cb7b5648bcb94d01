/* runtime/npy: round trips for every dtype, numpy's own files (versions 1, 2, 3), every
 * malformed or unsupported header, atomic writes. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/npy.h"
#include "support/alloc.h"
#include "testutil.h"

/* ---- helpers ---- */

/* A .npy image: magic, version, header length (2 or 4 bytes), header text, data. */
static size_t build_npy(unsigned char *out, int major, const char *header, const void *data, size_t n) {
  size_t hlen = strlen(header), pos = 0;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)major;
  out[7] = 0;
  pos = 8;
  out[pos++] = (unsigned char)(hlen & 0xff);
  out[pos++] = (unsigned char)((hlen >> 8) & 0xff);
  if (major >= 2) {
    out[pos++] = (unsigned char)((hlen >> 16) & 0xff);
    out[pos++] = (unsigned char)((hlen >> 24) & 0xff);
  }
  memcpy(out + pos, header, hlen);
  pos += hlen;
  if (n) memcpy(out + pos, data, n);
  return pos + n;
}

/* Loads an in-memory image expecting failure with `code` and every fragment in `parts`. */
static void expect_error(const unsigned char *buf, size_t len, tj_code_t code, const char *part1, const char *part2) {
  tj_tensor_t *t = NULL;
  tj_status_t *s = tj_npy_load_bytes(buf, len, "data.npy", &t);
  ck_assert_msg(s != NULL, "expected an error containing '%s'", part1);
  ck_assert_ptr_null(t);
  const char *msg = tj_status_text(s);
  ck_assert_msg(tj_status_code(s) == code, "code %s for: %s", tj_code_name(tj_status_code(s)), msg);
  ck_assert_msg(strncmp(msg, "data.npy: ", 10) == 0, "message must start with the file name: %s", msg);
  ck_assert_msg(strstr(msg, part1) != NULL, "'%s' not in: %s", part1, msg);
  if (part2) ck_assert_msg(strstr(msg, part2) != NULL, "'%s' not in: %s", part2, msg);
  tj_status_free(s);
}

static void expect_header_error(const char *header, size_t data_len, tj_code_t code, const char *part1,
                                const char *part2) {
  static unsigned char buf[1 << 16];
  static unsigned char zeros[4096];
  size_t len = build_npy(buf, 1, header, zeros, data_len);
  expect_error(buf, len, code, part1, part2);
}

/* ---- round trips ---- */

START_TEST(round_trip_every_dtype) {
  static const char *names[] = {"float16", "float32", "float64", "int8",   "int16",  "int32",  "int64",
                                "uint8",   "uint16",  "uint32",  "uint64", "bool",   "bfloat16"};
  static const char *descrs[] = {"<f2", "<f4", "<f8", "|i1", "<i2", "<i4", "<i8",
                                 "|u1", "<u2", "<u4", "<u8", "|b1", "<V2"};
  const char *dir = tu_make_tmp_dir("tj_npy");
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    tj_dtype_t dt;
    ck_assert(tj_dtype_parse(names[k], &dt));
    ck_assert_str_eq(tj_npy_descr(dt), descrs[k]);
    int64_t shapes[3][3] = {{0}, {7}, {2, 3, 5}};
    int ndims[3] = {0, 1, 3};
    for (int v = 0; v < 3; v++) {
      tj_tensor_t *t;
      TU_OK(tj_tensor_new(dt, ndims[v], shapes[v], &t));
      for (int64_t i = 0; i < tj_tensor_numel(t); i++) tj_tensor_set_f64(t, i, dt.code == TJ_DT_BOOL ? i % 2 : i % 100);
      char path[512];
      snprintf(path, sizeof path, "%s/%s_%d.npy", dir, names[k], v);
      TU_OK(tj_npy_save(path, t));
      tj_tensor_t *back;
      TU_OK(tj_npy_load(path, &back));
      ck_assert(tj_dtype_eq(back->dtype, dt));
      ck_assert_int_eq(back->ndim, ndims[v]);
      for (int d = 0; d < ndims[v]; d++) ck_assert_int_eq(back->shape[d], shapes[v][d]);
      ck_assert_uint_eq((uintptr_t)back->data % 64, 0);
      ck_assert_int_eq(memcmp(back->data, t->data, tj_tensor_nbytes(t)), 0);
      tj_tensor_free(back);
      tj_tensor_free(t);
    }
  }
  /* Nothing but the saved files (no temporary leftovers). */
  ck_assert_int_eq(tu_count_entries(dir), 39);
  tu_remove_tree(dir);
}
END_TEST

/* bfloat16 as ml_dtypes' np.save writes it ('<V2'), a plain void array ('|V2') and the
 * name: the raw patterns, unchanged (0x3fc0 = 1.5, 0xc020 = -2.5, 0x7fc0 = NaN). */
START_TEST(bfloat16_void_arrays_load_as_bfloat16) {
  const char *headers[] = {"{'descr': '<V2', 'fortran_order': False, 'shape': (3,), }\n",
                           "{'descr': '|V2', 'fortran_order': False, 'shape': (3,), }\n",
                           "{'descr': 'bfloat16', 'fortran_order': False, 'shape': (3,), }\n"};
  const uint16_t bits[3] = {0x3fc0, 0xc020, 0x7fc0};
  for (int k = 0; k < 3; k++) {
    static unsigned char buf[256];
    size_t len = build_npy(buf, 1, headers[k], bits, sizeof bits);
    tj_tensor_t *t;
    TU_OK(tj_npy_load_bytes(buf, len, "bf16.npy", &t));
    ck_assert(tj_dtype_eq(t->dtype, TJ_BF16));
    ck_assert_int_eq(memcmp(t->data, bits, sizeof bits), 0);
    ck_assert(tj_tensor_get_f64(t, 0) == 1.5 && tj_tensor_get_f64(t, 1) == -2.5);
    tj_tensor_free(t);
  }
}
END_TEST

START_TEST(encoded_header_matches_numpy) {
  int64_t shape[2] = {2, 3};
  tj_tensor_t *t;
  TU_OK(tj_tensor_new(TJ_F16, 2, shape, &t));
  void *buf;
  size_t len;
  TU_OK(tj_npy_encode(t, &buf, &len));
  const unsigned char *b = buf;
  ck_assert_int_eq(memcmp(b, "\x93NUMPY\x01\x00", 8), 0);
  size_t hlen = b[8] | (size_t)b[9] << 8;
  ck_assert_uint_eq((10 + hlen) % 64, 0);
  ck_assert_uint_eq(len, 10 + hlen + 12);
  const char *want = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }";
  ck_assert_int_eq(memcmp(b + 10, want, strlen(want)), 0);
  ck_assert_int_eq(b[10 + hlen - 1], '\n');
  for (size_t i = 10 + strlen(want); i < 10 + hlen - 1; i++) ck_assert_int_eq(b[i], ' ');
  tj_free(buf);
  tj_tensor_free(t);
  /* One-dimensional shapes keep Python's trailing comma. */
  int64_t one[1] = {5};
  TU_OK(tj_tensor_new(TJ_I32, 1, one, &t));
  TU_OK(tj_npy_encode(t, &buf, &len));
  ck_assert_ptr_nonnull(strstr((char *)buf + 10, "'shape': (5,), }"));
  tj_free(buf);
  tj_tensor_free(t);
}
END_TEST

START_TEST(versions_2_and_3_headers_load) {
  static unsigned char buf[4096];
  int32_t data[4] = {1, -2, 3, -4};
  for (int major = 2; major <= 3; major++) {
    size_t len = build_npy(buf, major, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }   \n", data,
                           sizeof data);
    tj_tensor_t *t;
    TU_OK(tj_npy_load_bytes(buf, len, "v.npy", &t));
    ck_assert(tj_dtype_eq(t->dtype, TJ_I32));
    ck_assert_int_eq(t->ndim, 2);
    ck_assert_int_eq(memcmp(t->data, data, sizeof data), 0);
    tj_tensor_free(t);
  }
  /* Keys in another order, double quotes, no trailing comma: still the same dict. */
  size_t len = build_npy(buf, 1, "{\"shape\": (4,), \"fortran_order\": False, \"descr\": \"<i4\"}\n", data, sizeof data);
  tj_tensor_t *t;
  TU_OK(tj_npy_load_bytes(buf, len, "v.npy", &t));
  ck_assert_int_eq(t->shape[0], 4);
  tj_tensor_free(t);
}
END_TEST

/* Files written by numpy itself (tools/make_fixtures.py): np.save and explicit versions. */
START_TEST(numpy_written_files_load) {
  static const struct {
    const char *file;
    const char *dtype;
    int ndim;
    int64_t shape[3];
  } cases[] = {
      {"f16_2x3.npy", "float16", 2, {2, 3}},     {"f32_4.npy", "float32", 1, {4}},
      {"f64_scalar.npy", "float64", 0, {0}},     {"i8_2x2.npy", "int8", 2, {2, 2}},
      {"i64_3.npy", "int64", 1, {3}},            {"u16_2x3.npy", "uint16", 2, {2, 3}},
      {"bool_5.npy", "bool", 1, {5}},            {"v2_i32_2x3.npy", "int32", 2, {2, 3}},
      {"v3_u8_2x3x1.npy", "uint8", 3, {2, 3, 1}}, {"fortran_1d_f32.npy", "float32", 1, {4}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/npy/%s", tu_source_dir(), cases[k].file);
    tj_tensor_t *t;
    TU_OK(tj_npy_load(path, &t));
    tj_dtype_t dt;
    ck_assert(tj_dtype_parse(cases[k].dtype, &dt));
    ck_assert_msg(tj_dtype_eq(t->dtype, dt), "%s dtype", cases[k].file);
    ck_assert_int_eq(t->ndim, cases[k].ndim);
    for (int d = 0; d < t->ndim; d++) ck_assert_int_eq(t->shape[d], cases[k].shape[d]);
    /* make_fixtures.py stores (i % 5) - 2 (bool: i % 2) in each element i. */
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) {
      double want = dt.code == TJ_DT_BOOL ? (double)(i % 2) : (double)(i % 5) - 2;
      if (dt.code == TJ_DT_UINT) want = (double)(i % 5);
      ck_assert_msg(tj_tensor_get_f64(t, i) == want, "%s[%lld] = %g, want %g", cases[k].file, (long long)i,
                    tj_tensor_get_f64(t, i), want);
    }
    tj_tensor_free(t);
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/fixtures/npy/fortran_f32_2x3.npy", tu_source_dir());
  tj_tensor_t *t = NULL;
  tj_status_t *s = tj_npy_load(path, &t);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "Fortran-order arrays are not supported; save with np.ascontiguousarray(a)"));
  tj_status_free(s);
  snprintf(path, sizeof path, "%s/tests/fixtures/npy/big_endian_f4.npy", tu_source_dir());
  s = tj_npy_load(path, &t);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "big-endian arrays ('>f4') are not supported"));
  tj_status_free(s);
}
END_TEST

/* ---- errors ---- */

START_TEST(unsupported_contents_are_explained) {
  expect_header_error("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n", 24, TJ_ERR_INVALID_ARGUMENT,
                      "data.npy: Fortran-order arrays are not supported; save with np.ascontiguousarray(a)", NULL);
  expect_header_error("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8, TJ_ERR_INVALID_ARGUMENT,
                      "big-endian arrays ('>f4') are not supported", "save with a.astype('<f4')");
  expect_header_error("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }\n", 16, TJ_ERR_INVALID_ARGUMENT,
                      "object arrays ('|O') are not supported", "Python objects");
  expect_header_error("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }\n", 16, TJ_ERR_INVALID_ARGUMENT,
                      "dtype '<c8' is not supported", "float16/32/64, bfloat16 ('<V2', ml_dtypes), int8/16/32/64");
  expect_header_error("{'descr': '<U5', 'fortran_order': False, 'shape': (2,), }\n", 40, TJ_ERR_INVALID_ARGUMENT,
                      "dtype '<U5' is not supported", NULL);
  expect_header_error("{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }\n", 8, TJ_ERR_INVALID_ARGUMENT,
                      "dtype '|f4' is not supported", NULL);
  expect_header_error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", 8,
                      TJ_ERR_INVALID_ARGUMENT, "structured (record) arrays are not supported", NULL);
  expect_header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }\n", 4,
                      TJ_ERR_INVALID_ARGUMENT, "more than 8 dimensions", NULL);
  /* Single-byte types do not care about the byte order mark. */
  static unsigned char buf[256];
  size_t len = build_npy(buf, 1, "{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }\n", "\x01\x02", 2);
  tj_tensor_t *t;
  TU_OK(tj_npy_load_bytes(buf, len, "data.npy", &t));
  ck_assert_double_eq(tj_tensor_get_f64(t, 1), 2);
  tj_tensor_free(t);
}
END_TEST

START_TEST(malformed_headers_are_rejected) {
  expect_header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }\n", 0, TJ_ERR_IO,
                      "negative dimension", NULL);
  expect_header_error("{'descr': '<f4', 'fortran_order': False}\n", 0, TJ_ERR_IO, "missing key 'shape'", NULL);
  expect_header_error("{'fortran_order': False, 'shape': (2,)}\n", 8, TJ_ERR_IO, "missing key 'descr'", NULL);
  expect_header_error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\n", 8, TJ_ERR_IO,
                      "duplicate key", NULL);
  expect_header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}\n", 8, TJ_ERR_IO,
                      "unexpected key", NULL);
  expect_header_error("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}\n", 8, TJ_ERR_IO,
                      "'fortran_order' must be True or False", NULL);
  expect_header_error("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}\n", 8, TJ_ERR_IO,
                      "'shape' must be a tuple", NULL);
  expect_header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}\n", 8, TJ_ERR_IO,
                      "expected ',' or ')'", NULL);
  expect_header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk\n", 8, TJ_ERR_IO,
                      "unexpected text after the dict", NULL);
  expect_header_error("{'descr': '<f4", 0, TJ_ERR_IO, "unterminated string", NULL);
  expect_header_error("not a dict at all", 0, TJ_ERR_IO, "malformed .npy header: expected '{'", "not a dict at all");
  expect_header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}\n", 0, TJ_ERR_IO,
                      "does not fit in 64 bits", NULL);
}
END_TEST

START_TEST(lying_sizes_are_rejected) {
  /* Shape promises more data than the file holds. */
  expect_header_error("{'descr': '<f4', 'fortran_order': False, 'shape': (16, 32, 32, 16), }\n", 100, TJ_ERR_IO,
                      "truncated .npy file: shape (16, 32, 32, 16) of float32 needs 1048576 bytes of data but only 100",
                      NULL);
  /* More data than the shape says. */
  expect_header_error("{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }\n", 10, TJ_ERR_IO,
                      "4 unexpected bytes after the array", NULL);
  /* Dimensions whose product overflows. */
  expect_header_error(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }\n", 0, TJ_ERR_IO,
      "too large to address", NULL);
  /* Header length beyond the end of the file, for version 1 and 2 prefixes. */
  unsigned char buf[256];
  size_t len = build_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", NULL, 0);
  buf[8] = 0xff;
  buf[9] = 0x7f;
  expect_error(buf, len, TJ_ERR_IO, "header length 32767 goes beyond the end of the file", NULL);
  len = build_npy(buf, 2, "{}", NULL, 0);
  buf[11] = 0xff;
  expect_error(buf, len, TJ_ERR_IO, "goes beyond the end of the file", NULL);
  /* Bad magic, unsupported version, too short. */
  expect_error((const unsigned char *)"PK\x03\x04 this is a zip", 20, TJ_ERR_IO, "not a .npy file", NULL);
  len = build_npy(buf, 4, "{}", NULL, 0);
  expect_error(buf, len, TJ_ERR_INVALID_ARGUMENT,
               "unsupported .npy format version 4.0; tvmjit reads versions 1.0, 2.0 and 3.0", NULL);
  expect_error((const unsigned char *)"\x93NUMPY\x01\x00", 8, TJ_ERR_IO, "truncated .npy file (8 bytes", NULL);
  expect_error((const unsigned char *)"\x93NUM", 4, TJ_ERR_IO, "truncated .npy file (4 bytes", NULL);
  expect_error((const unsigned char *)"\x93NUMPY\x02\x00\x05\x00", 10, TJ_ERR_IO, "truncated", NULL);
  expect_error((const unsigned char *)"", 0, TJ_ERR_IO, "empty file", NULL);
}
END_TEST

/* Every prefix of a valid file and every single-byte corruption of its header fails
 * cleanly (or, for harmless changes, loads): never a crash, never a leak. */
START_TEST(truncations_and_corruptions_never_crash) {
  int64_t shape[2] = {3, 4};
  tj_tensor_t *t;
  TU_OK(tj_tensor_new(TJ_F32, 2, shape, &t));
  void *buf;
  size_t len;
  TU_OK(tj_npy_encode(t, &buf, &len));
  tj_tensor_free(t);
  for (size_t cut = 0; cut < len; cut++) {
    tj_tensor_t *out = NULL;
    tj_status_t *s = tj_npy_load_bytes(buf, cut, "cut.npy", &out);
    ck_assert_msg(s != NULL, "a file cut to %zu of %zu bytes must not load", cut, len);
    ck_assert_ptr_null(out);
    tj_status_free(s);
  }
  unsigned char *copy = malloc(len);
  static const unsigned char values[] = {0, ' ', '(', ')', ',', '9', '\'', 0xff, '{', '}', '-', 'L'};
  for (size_t pos = 0; pos < 128 && pos < len; pos++) {
    for (size_t v = 0; v < sizeof values; v++) {
      memcpy(copy, buf, len);
      copy[pos] = values[v];
      tj_tensor_t *out = NULL;
      tj_status_t *s = tj_npy_load_bytes(copy, len, "mut.npy", &out);
      if (s) {
        ck_assert_ptr_null(out);
        tj_status_free(s);
      } else {
        ck_assert_uint_eq(tj_tensor_nbytes(out), 48);
        tj_tensor_free(out);
      }
    }
  }
  free(copy);
  tj_free(buf);
}
END_TEST

START_TEST(file_errors_name_the_file) {
  tj_tensor_t *t = NULL;
  tj_status_t *s = tj_npy_load("/nonexistent/dir/x.npy", &t);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_IO);
  ck_assert_str_eq(tj_status_message(s), "/nonexistent/dir/x.npy: cannot open: No such file or directory");
  tj_status_free(s);
  const char *dir = tu_make_tmp_dir("tj_npy");
  s = tj_npy_load(dir, &t);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "is a directory; give a .npy file"));
  tj_status_free(s);
  /* A file on disk with a lying shape fails the same way as in memory. */
  char path[512];
  snprintf(path, sizeof path, "%s/short.npy", dir);
  unsigned char buf[256];
  size_t len = build_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }\n", "abcd", 4);
  FILE *f = fopen(path, "wb");
  fwrite(buf, 1, len, f);
  fclose(f);
  s = tj_npy_load(path, &t);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "needs 400 bytes of data but only 4 follow the header"));
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), path));
  tj_status_free(s);
  ck_assert_ptr_null(t);
  tu_remove_tree(dir);
}
END_TEST

START_TEST(failed_saves_leave_no_files) {
  const char *dir = tu_make_tmp_dir("tj_npy");
  char path[512];
  int64_t shape[1] = {4};
  tj_tensor_t *t;
  TU_OK(tj_tensor_new(TJ_F32, 1, shape, &t));
  /* Directory does not exist. */
  snprintf(path, sizeof path, "%s/missing/out.npy", dir);
  tj_status_t *s = tj_npy_save(path, t);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_IO);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "cannot create the file: No such file or directory"));
  tj_status_free(s);
  /* The rename fails (the target is a non-empty directory): the temp file must go. */
  snprintf(path, sizeof path, "%s/out.npy", dir);
  ck_assert_int_eq(mkdir(path, 0755), 0);
  char inner[600];
  snprintf(inner, sizeof inner, "%s/keep", path);
  fclose(fopen(inner, "w"));
  s = tj_npy_save(path, t);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "cannot rename into place"));
  tj_status_free(s);
  ck_assert_int_eq(tu_count_entries(dir), 1);
  /* A dtype .npy cannot hold: nothing is written. */
  tj_tensor_t vec = *t;
  vec.dtype = tj_dtype_make(TJ_DT_FLOAT, 32, 4);
  vec.owns_data = false;
  snprintf(path, sizeof path, "%s/vec.npy", dir);
  s = tj_npy_save(path, &vec);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_text(s), "float32x4 cannot be stored in a .npy file"));
  tj_status_free(s);
  ck_assert_int_eq(tu_count_entries(dir), 1);
  /* Overwriting replaces the file whole. */
  snprintf(path, sizeof path, "%s/ok.npy", dir);
  TU_OK(tj_npy_save(path, t));
  tj_tensor_set_f64(t, 3, 42);
  TU_OK(tj_npy_save(path, t));
  tj_tensor_t *back;
  TU_OK(tj_npy_load(path, &back));
  ck_assert_double_eq(tj_tensor_get_f64(back, 3), 42);
  tj_tensor_free(back);
  ck_assert_int_eq(tu_count_entries(dir), 2);
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0644);
  tj_tensor_free(t);
  tu_remove_tree(dir);
}
END_TEST

START_TEST(allocation_failures_are_clean) {
  int64_t shape[2] = {3, 4};
  tj_tensor_t *t;
  TU_OK(tj_tensor_new(TJ_F32, 2, shape, &t));
  void *buf;
  size_t len;
  TU_OK(tj_npy_encode(t, &buf, &len));
  for (long n = 0; n < 8; n++) {
    tj_tensor_t *out = NULL;
    tj_alloc_fail_after(n);
    tj_status_t *s = tj_npy_load_bytes(buf, len, "oom.npy", &out);
    tj_alloc_fail_reset();
    if (s) {
      ck_assert_int_eq(tj_status_code(s), TJ_ERR_OUT_OF_MEMORY);
      ck_assert_ptr_null(out);
      tj_status_free(s);
    } else {
      tj_tensor_free(out);
    }
  }
  tj_free(buf);
  tj_tensor_free(t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("npy");
  TCase *tc = tcase_create("npy");
  tcase_add_test(tc, round_trip_every_dtype);
  tcase_add_test(tc, encoded_header_matches_numpy);
  tcase_add_test(tc, bfloat16_void_arrays_load_as_bfloat16);
  tcase_add_test(tc, versions_2_and_3_headers_load);
  tcase_add_test(tc, numpy_written_files_load);
  tcase_add_test(tc, unsupported_contents_are_explained);
  tcase_add_test(tc, malformed_headers_are_rejected);
  tcase_add_test(tc, lying_sizes_are_rejected);
  tcase_add_test(tc, truncations_and_corruptions_never_crash);
  tcase_add_test(tc, file_errors_name_the_file);
  tcase_add_test(tc, failed_saves_leave_no_files);
  tcase_add_test(tc, allocation_failures_are_clean);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
