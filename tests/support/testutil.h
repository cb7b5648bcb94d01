/* Shared helpers for the Check suites. */
#ifndef TJ_TESTS_TESTUTIL_H
#define TJ_TESTS_TESTUTIL_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ir/module.h"
#include "support/status.h"

/* Path of ../shared (TVMJIT_SHARED_DIR), or NULL when it does not exist: tests that
 * need it then skip. */
const char *tu_shared_dir(void);
/* Path of the source tree (TVMJIT_SOURCE_DIR, else "."). */
const char *tu_source_dir(void);
/* Reads a whole file; NULL if missing. Free with free(). */
char *tu_read_file(const char *path, size_t *out_len);
/* A new empty directory under /tmp (prefix names the suite); removed with
 * tu_remove_tree. Returns a static buffer, overwritten by the next call. */
const char *tu_make_tmp_dir(const char *prefix);
/* Removes a file or a directory tree. */
void tu_remove_tree(const char *path);
/* Number of entries in a directory, "." and ".." not counted. */
int tu_count_entries(const char *dir);

/* Fails the test with the status text when status is not NULL (and frees it). */
#define TU_OK(expr)                                                                        \
  do {                                                                                     \
    tj_status_t *tu_s_ = (expr);                                                           \
    if (tu_s_) {                                                                           \
      const char *tu_t_ = tj_status_text(tu_s_);                                           \
      ck_abort_msg("%s failed: %s", #expr, tu_t_);                                         \
    }                                                                                      \
  } while (0)
/* Runs a suite made of one test case per function given; returns the exit code.
 * Honours SKIP (77) when the whole suite needs ../shared and it is absent. */
int tu_run_suite(Suite *suite);

/* A float's bit pattern, and back (for tests that sweep or compare bit patterns). */
static inline uint32_t tu_float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float tu_bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

#endif
