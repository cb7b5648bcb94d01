/* runtime/npz: numpy's archives (stored and deflated), lookups, round trips, errors. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/npy.h"
#include "runtime/npz.h"
#include "support/alloc.h"
#include "testutil.h"

static void fixture(char *buf, size_t len, const char *rel) { snprintf(buf, len, "%s/%s", tu_source_dir(), rel); }

/* make_fixtures.py's pattern: (i % 5) - 2, bool i % 2. */
static void check_pattern(const tj_tensor_t *t) {
  for (int64_t i = 0; i < tj_tensor_numel(t); i++) {
    double want = t->dtype.code == TJ_DT_BOOL ? (double)(i % 2) : (double)(i % 5) - 2;
    ck_assert_msg(tj_tensor_get_f64(t, i) == want, "element %lld", (long long)i);
  }
}

START_TEST(numpy_archives_load_stored_and_deflated) {
  const char *files[] = {"tests/fixtures/npz/stored.npz", "tests/fixtures/npz/deflated.npz"};
  for (int f = 0; f < 2; f++) {
    char path[1024];
    fixture(path, sizeof path, files[f]);
    tj_npz_t *npz;
    TU_OK(tj_npz_load(path, &npz));
    ck_assert_int_eq(tj_npz_count(npz), 3);
    ck_assert_str_eq(tj_npz_name(npz, 0), "a");
    ck_assert_str_eq(tj_npz_name(npz, 1), "b");
    ck_assert_str_eq(tj_npz_name(npz, 2), "flag");
    const tj_tensor_t *a;
    TU_OK(tj_npz_get(npz, "a", &a));
    ck_assert(tj_dtype_eq(a->dtype, TJ_F32));
    ck_assert_int_eq(a->ndim, 2);
    ck_assert_int_eq(a->shape[0], 2);
    ck_assert_int_eq(a->shape[1], 3);
    check_pattern(a);
    ck_assert(tj_dtype_eq(tj_npz_find(npz, "b")->dtype, TJ_I64));
    check_pattern(tj_npz_find(npz, "b"));
    check_pattern(tj_npz_find(npz, "flag"));
    ck_assert_ptr_null(tj_npz_find(npz, "a.npy"));
    tj_npz_free(npz);
  }
}
END_TEST

START_TEST(seed_params_have_the_parameter_names) {
  char path[1024];
  fixture(path, sizeof path, "examples/seed/params.npz");
  tj_npz_t *npz;
  TU_OK(tj_npz_load(path, &npz));
  const char *names[] = {"weight1", "weight2", "weight3", "gamma", "beta"};
  ck_assert_int_eq(tj_npz_count(npz), 5);
  for (int i = 0; i < 5; i++) {
    const tj_tensor_t *t;
    TU_OK(tj_npz_get(npz, names[i], &t));
    ck_assert(tj_dtype_eq(t->dtype, TJ_F16));
    ck_assert_int_eq(t->ndim, i < 3 ? 4 : 1);
    ck_assert_int_eq(t->shape[0], 16);
  }
  tj_npz_free(npz);
}
END_TEST

START_TEST(missing_key_lists_the_keys) {
  char path[1024];
  fixture(path, sizeof path, "tests/fixtures/npz/stored.npz");
  tj_npz_t *npz;
  TU_OK(tj_npz_load(path, &npz));
  const tj_tensor_t *t = NULL;
  tj_status_t *s = tj_npz_get(npz, "weight4", &t);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_null(t);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_NOT_FOUND);
  char want[1200];
  snprintf(want, sizeof want, "%s: no array named 'weight4'; the archive holds: a, b, flag", path);
  ck_assert_str_eq(tj_status_message(s), want);
  tj_status_free(s);
  tj_npz_free(npz);
}
END_TEST

START_TEST(round_trip_stored_and_compressed) {
  const char *dir = tu_make_tmp_dir("tj_npz");
  int64_t s1[2] = {64, 64}, s2[1] = {3}, s0[1] = {0};
  tj_tensor_t *a, *b, *c;
  TU_OK(tj_tensor_new(TJ_F16, 2, s1, &a));
  TU_OK(tj_tensor_new(TJ_I32, 1, s2, &b));
  TU_OK(tj_tensor_new(TJ_BOOL, 0, s0, &c));
  for (int64_t i = 0; i < tj_tensor_numel(a); i++) tj_tensor_set_f64(a, i, (double)(i % 7) * 0.25);
  tj_tensor_set_f64(b, 2, -9);
  tj_tensor_set_f64(c, 0, 1);
  const char *names[] = {"weight", "idx", "flag"};
  const tj_tensor_t *ts[] = {a, b, c};
  size_t sizes[2];
  for (int compress = 0; compress < 2; compress++) {
    char path[512];
    snprintf(path, sizeof path, "%s/out%d.npz", dir, compress);
    TU_OK(tj_npz_save(path, 3, names, ts, compress));
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    sizes[compress] = (size_t)st.st_size;
    tj_npz_t *npz;
    TU_OK(tj_npz_load(path, &npz));
    ck_assert_int_eq(tj_npz_count(npz), 3);
    for (int i = 0; i < 3; i++) {
      ck_assert_str_eq(tj_npz_name(npz, i), names[i]);
      const tj_tensor_t *t = tj_npz_tensor(npz, i);
      ck_assert(tj_dtype_eq(t->dtype, ts[i]->dtype));
      ck_assert_int_eq(t->ndim, ts[i]->ndim);
      ck_assert_int_eq(memcmp(t->data, ts[i]->data, tj_tensor_nbytes(t)), 0);
    }
    /* take moves ownership out of the archive. */
    tj_tensor_t *taken = tj_npz_take(npz, 0);
    ck_assert_ptr_nonnull(taken);
    ck_assert_ptr_null(tj_npz_tensor(npz, 0));
    ck_assert_ptr_null(tj_npz_find(npz, "weight"));
    tj_npz_free(npz);
    ck_assert_int_eq(memcmp(taken->data, a->data, tj_tensor_nbytes(a)), 0);
    tj_tensor_free(taken);
  }
  ck_assert_msg(sizes[1] < sizes[0] / 2, "deflate should shrink a repetitive array (%zu vs %zu)", sizes[1], sizes[0]);
  ck_assert_int_eq(tu_count_entries(dir), 2);
  /* An empty archive is valid. */
  char path[512];
  snprintf(path, sizeof path, "%s/empty.npz", dir);
  TU_OK(tj_npz_save(path, 0, NULL, NULL, false));
  tj_npz_t *npz;
  TU_OK(tj_npz_load(path, &npz));
  ck_assert_int_eq(tj_npz_count(npz), 0);
  const tj_tensor_t *t;
  tj_status_t *s = tj_npz_get(npz, "x", &t);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "the archive holds: (nothing)"));
  tj_status_free(s);
  tj_npz_free(npz);
  tj_tensor_free(a);
  tj_tensor_free(b);
  tj_tensor_free(c);
  tu_remove_tree(dir);
}
END_TEST

START_TEST(bad_saves_write_nothing) {
  const char *dir = tu_make_tmp_dir("tj_npz");
  int64_t shape[1] = {2};
  tj_tensor_t *a;
  TU_OK(tj_tensor_new(TJ_F32, 1, shape, &a));
  const tj_tensor_t *ts[] = {a, a};
  char path[512];
  snprintf(path, sizeof path, "%s/x.npz", dir);
  const char *dup[] = {"w", "w"};
  tj_status_t *s = tj_npz_save(path, 2, dup, ts, false);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "two arrays are named 'w'"));
  tj_status_free(s);
  const char *slash[] = {"a/b"};
  s = tj_npz_save(path, 1, slash, ts, false);
  ck_assert_ptr_nonnull(s);
  tj_status_free(s);
  tj_tensor_t vec = *a;
  vec.dtype = TJ_HANDLE;
  vec.owns_data = false;
  const tj_tensor_t *bad[] = {a, &vec};
  const char *names[] = {"ok", "bad"};
  s = tj_npz_save(path, 2, names, bad, true);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_text(s), "array 'bad'"));
  tj_status_free(s);
  ck_assert_int_eq(tu_count_entries(dir), 0);
  snprintf(path, sizeof path, "%s/no/such/dir.npz", dir);
  s = tj_npz_save(path, 1, names, ts, false);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_IO);
  tj_status_free(s);
  ck_assert_int_eq(tu_count_entries(dir), 0);
  tj_tensor_free(a);
  tu_remove_tree(dir);
}
END_TEST

START_TEST(bad_archives_fail_cleanly) {
  char path[1024];
  tj_npz_t *npz = NULL;
  fixture(path, sizeof path, "tests/fixtures/npz/bad_member.npz");
  tj_status_t *s = tj_npz_load(path, &npz);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_null(npz);
  /* The message names the archive and the member. */
  char want[1200];
  snprintf(want, sizeof want, "%s:x.npy: not a .npy file", path);
  ck_assert_msg(strstr(tj_status_text(s), want) != NULL, "%s", tj_status_text(s));
  tj_status_free(s);
  fixture(path, sizeof path, "tests/fixtures/npz/truncated.npz");
  s = tj_npz_load(path, &npz);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_IO);
  tj_status_free(s);
  fixture(path, sizeof path, "tests/fixtures/npy/f32_4.npy"); /* a .npy is not an archive */
  s = tj_npz_load(path, &npz);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "cannot open as a .npz (zip) archive"));
  tj_status_free(s);
  s = tj_npz_load("/nonexistent/p.npz", &npz);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_IO);
  tj_status_free(s);
  ck_assert_ptr_null(npz);
}
END_TEST

/* Found by fuzzing: a member whose compressed size is larger than the whole archive is
 * refused before its declared 1.9 GB are allocated, from a file and from memory. */
START_TEST(member_larger_than_archive_is_refused) {
  char path[1024];
  fixture(path, sizeof path, "tests/fuzz/regressions/npz/comp_size_beyond_archive.npz");
  tj_npz_t *npz = NULL;
  tj_status_t *s = tj_npz_load(path, &npz);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_IO);
  ck_assert_msg(strstr(tj_status_message(s), "b.npy: corrupt archive member (implausible or missing size)"), "%s",
                tj_status_message(s));
  tj_status_free(s);
  size_t len;
  char *bytes = tu_read_file(path, &len);
  ck_assert_ptr_nonnull(bytes);
  s = tj_npz_load_bytes(bytes, len, "mem.npz", &npz);
  ck_assert_ptr_nonnull(s);
  ck_assert_str_eq(tj_status_message(s), "mem.npz:b.npy: corrupt archive member (implausible or missing size)");
  tj_status_free(s);
  ck_assert_ptr_null(npz);
  free(bytes);
}
END_TEST

/* A flipped bit in a stored member's array data leaves every size and header intact:
 * only the CRC tells, and the load must fail naming the member (members are streamed
 * into their tensors, and the CRC is compared when the member's end is read). */
START_TEST(stored_member_data_corruption_fails_the_crc) {
  char path[1024];
  fixture(path, sizeof path, "tests/fixtures/npz/stored.npz");
  size_t len;
  char *data = tu_read_file(path, &len);
  ck_assert_ptr_nonnull(data);
  const float first[3] = {-2.0f, -1.0f, 0.0f}; /* member a's pattern: (i % 5) - 2 */
  char *at = NULL;
  for (size_t i = 0; i + sizeof first <= len && !at; i++)
    if (memcmp(data + i, first, sizeof first) == 0) at = data + i;
  ck_assert_msg(at != NULL, "a's data not found in %s", path);
  at[5] = (char)(at[5] ^ 0x01); /* -1.0f's mantissa: still a valid float */
  tj_npz_t *npz = NULL;
  tj_status_t *s = tj_npz_load_bytes(data, len, "flip.npz", &npz);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_null(npz);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_IO);
  ck_assert_msg(strstr(tj_status_message(s), "flip.npz:a.npy: CRC error"), "%s", tj_status_message(s));
  tj_status_free(s);
  free(data);
}
END_TEST

/* The CRC the central directory records for member `name` (offset 16 of its entry),
 * or NULL. */
static unsigned char *central_crc_of(char *zip, size_t len, const char *name) {
  size_t nlen = strlen(name);
  for (size_t i = 0; i + 46 + nlen <= len; i++) {
    unsigned char *e = (unsigned char *)zip + i;
    if (memcmp(e, "PK\x01\x02", 4) != 0) continue;
    size_t fnlen = (size_t)e[28] | (size_t)e[29] << 8;
    if (fnlen == nlen && memcmp(e + 46, name, nlen) == 0) return e + 16;
  }
  return NULL;
}

/* A damaged CRC field (the data intact) must fail the load naming the member, for a
 * stored member (read raw, CRC checked by npz.c) and a deflated one (libzip's check). */
static void check_damaged_crc_fails(const char *fixture_name, const char *want) {
  char path[1024];
  fixture(path, sizeof path, fixture_name);
  size_t len;
  char *data = tu_read_file(path, &len);
  ck_assert_ptr_nonnull(data);
  tj_npz_t *npz = NULL;
  tj_status_t *s = tj_npz_load_bytes(data, len, "crc.npz", &npz); /* intact: loads */
  ck_assert_msg(s == NULL, "%s", s ? tj_status_message(s) : "");
  tj_npz_free(npz);
  npz = NULL;
  unsigned char *crc = central_crc_of(data, len, "b.npy");
  ck_assert_ptr_nonnull(crc);
  crc[0] ^= 0x40;
  s = tj_npz_load_bytes(data, len, "crc.npz", &npz);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_null(npz);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_IO);
  ck_assert_msg(strstr(tj_status_message(s), want), "%s", tj_status_message(s));
  tj_status_free(s);
  free(data);
}

START_TEST(damaged_crc_of_stored_member_names_it) {
  check_damaged_crc_fails("tests/fixtures/npz/stored.npz", "crc.npz:b.npy: CRC error");
}
END_TEST

START_TEST(damaged_crc_of_deflated_member_names_it) {
  check_damaged_crc_fails("tests/fixtures/npz/deflated.npz", "crc.npz:b.npy: cannot read member: CRC error");
}
END_TEST

/* Writes `len` bytes to dir/name and returns the path (static buffer). */
static const char *write_tmp(const char *dir, const char *name, const void *data, size_t len) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(data, 1, len, f), len);
  ck_assert_int_eq(fclose(f), 0);
  return path;
}

static void check_load_fails(const char *path, const char *want) {
  tj_npz_t *npz = NULL;
  tj_status_t *s = tj_npz_load(path, &npz);
  ck_assert_msg(s != NULL, "%s loaded", path);
  ck_assert_ptr_null(npz);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_IO);
  if (want) ck_assert_msg(strstr(tj_status_message(s), want), "%s", tj_status_message(s));
  tj_status_free(s);
}

/* Archives read from a file go through the pread source (npz_file_source.c), not the
 * memory source the tests above use: a damaged CRC field, flipped data and every
 * truncation must fail there too, naming the member where one is at fault. */
START_TEST(damaged_archive_files_fail_cleanly) {
  const char *dir = tu_make_tmp_dir("tj_npz_file");
  const char *fixtures[] = {"tests/fixtures/npz/stored.npz", "tests/fixtures/npz/deflated.npz"};
  const char *crc_wants[] = {":b.npy: CRC error", ":b.npy: cannot read member: CRC error"};
  for (int f = 0; f < 2; f++) {
    char path[1024];
    fixture(path, sizeof path, fixtures[f]);
    size_t len;
    char *data = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(data);
    tj_npz_t *npz = NULL;
    TU_OK(tj_npz_load(write_tmp(dir, "ok.npz", data, len), &npz)); /* intact: loads */
    ck_assert_int_eq(tj_npz_count(npz), 3); /* a, b, flag (as np.load lists them) */
    tj_npz_free(npz);
    for (size_t cut = 0; cut < len; cut += 5) check_load_fails(write_tmp(dir, "cut.npz", data, cut), NULL);
    unsigned char *crc = central_crc_of(data, len, "b.npy");
    ck_assert_ptr_nonnull(crc);
    crc[0] ^= 0x40;
    check_load_fails(write_tmp(dir, "crc.npz", data, len), crc_wants[f]);
    crc[0] ^= 0x40;
    if (f == 0) { /* stored: a flipped bit of a's data (pattern (i % 5) - 2) */
      const float first[3] = {-2.0f, -1.0f, 0.0f};
      char *at = NULL;
      for (size_t i = 0; i + sizeof first <= len && !at; i++)
        if (memcmp(data + i, first, sizeof first) == 0) at = data + i;
      ck_assert_ptr_nonnull(at);
      at[5] = (char)(at[5] ^ 0x01);
      check_load_fails(write_tmp(dir, "flip.npz", data, len), "flip.npz:a.npy: CRC error");
    }
    free(data);
  }
  check_load_fails(dir, "cannot open as a .npz (zip) archive"); /* a directory */
  tu_remove_tree(dir);
}
END_TEST

/* Members large enough to be prefaulted (64 KiB and more) and backed by huge pages
 * (4 MiB and more) hold every value after a load from a file, twice in one process (the
 * second load gets blocks the allocator kept, already mapped). */
START_TEST(large_members_load_from_a_file) {
  const char *dir = tu_make_tmp_dir("tj_npz_large");
  int64_t s1[1] = {100 * 1000 + 3}, s2[2] = {1300, 1001};
  tj_tensor_t *a, *b;
  TU_OK(tj_tensor_new(TJ_F32, 1, s1, &a));
  TU_OK(tj_tensor_new(TJ_F32, 2, s2, &b));
  float *pa = a->data, *pb = b->data;
  for (int64_t i = 0; i < s1[0]; i++) pa[i] = (float)(i % 1009) - 500.0f;
  for (int64_t i = 0; i < s2[0] * s2[1]; i++) pb[i] = (float)(i % 8191) * 0.125f;
  const char *names[] = {"a", "b"};
  const tj_tensor_t *ts[] = {a, b};
  char path[1024];
  snprintf(path, sizeof path, "%s/large.npz", dir);
  TU_OK(tj_npz_save(path, 2, names, ts, false));
  tj_tensor_free(a);
  tj_tensor_free(b);
  for (int round = 0; round < 2; round++) {
    tj_npz_t *npz = NULL;
    TU_OK(tj_npz_load(path, &npz));
    const tj_tensor_t *la = tj_npz_find(npz, "a"), *lb = tj_npz_find(npz, "b");
    ck_assert_ptr_nonnull(la);
    ck_assert_ptr_nonnull(lb);
    ck_assert_int_eq(tj_tensor_numel(la), s1[0]);
    ck_assert_int_eq(tj_tensor_numel(lb), s2[0] * s2[1]);
    ck_assert_uint_eq((uintptr_t)la->data % 64, 0);
    ck_assert_uint_eq((uintptr_t)lb->data % 64, 0);
    const float *qa = la->data, *qb = lb->data;
    for (int64_t i = 0; i < s1[0]; i++) ck_assert_msg(qa[i] == (float)(i % 1009) - 500.0f, "a[%lld]", (long long)i);
    for (int64_t i = 0; i < s2[0] * s2[1]; i++)
      ck_assert_msg(qb[i] == (float)(i % 8191) * 0.125f, "b[%lld]", (long long)i);
    tj_npz_free(npz);
  }
  tu_remove_tree(dir);
}
END_TEST

/* Every single-byte corruption of a small archive loads or fails: never a crash. */
START_TEST(corrupted_archives_never_crash) {
  const char *files[] = {"tests/fixtures/npz/stored.npz", "tests/fixtures/npz/deflated.npz"};
  for (int f = 0; f < 2; f++) {
    char path[1024];
    fixture(path, sizeof path, files[f]);
    size_t len;
    char *data = tu_read_file(path, &len);
    ck_assert_ptr_nonnull(data);
    char *copy = malloc(len);
    for (size_t pos = 0; pos < len; pos += 3) {
      memcpy(copy, data, len);
      copy[pos] = (char)(copy[pos] ^ 0x5a);
      tj_npz_t *npz = NULL;
      tj_status_t *s = tj_npz_load_bytes(copy, len, "mut.npz", &npz);
      if (s) {
        ck_assert_ptr_null(npz);
        tj_status_free(s);
      } else {
        tj_npz_free(npz);
      }
    }
    for (size_t cut = 0; cut < len; cut += 7) {
      tj_npz_t *npz = NULL;
      tj_status_t *s = tj_npz_load_bytes(data, cut, "cut.npz", &npz);
      if (s) tj_status_free(s);
      else tj_npz_free(npz);
    }
    free(copy);
    free(data);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("npz");
  TCase *tc = tcase_create("npz");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, numpy_archives_load_stored_and_deflated);
  tcase_add_test(tc, seed_params_have_the_parameter_names);
  tcase_add_test(tc, missing_key_lists_the_keys);
  tcase_add_test(tc, round_trip_stored_and_compressed);
  tcase_add_test(tc, bad_saves_write_nothing);
  tcase_add_test(tc, bad_archives_fail_cleanly);
  tcase_add_test(tc, corrupted_archives_never_crash);
  tcase_add_test(tc, stored_member_data_corruption_fails_the_crc);
  tcase_add_test(tc, damaged_crc_of_stored_member_names_it);
  tcase_add_test(tc, damaged_crc_of_deflated_member_names_it);
  tcase_add_test(tc, member_larger_than_archive_is_refused);
  tcase_add_test(tc, damaged_archive_files_fail_cleanly);
  tcase_add_test(tc, large_members_load_from_a_file);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
