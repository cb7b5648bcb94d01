/* Shared by the fuzz targets (tests/fuzz/fuzz_*.c): input size caps that keep one
 * execution fast, and the checks that turn a broken contract into a crash libFuzzer
 * (or the replay driver) reports. The library never aborts; these harness checks do. */
#ifndef TJ_TESTS_FUZZ_LIMITS_H
#define TJ_TESTS_FUZZ_LIMITS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/tensor.h"
#include "support/status.h"

/* Larger inputs are skipped: the conformance modules are all under 4 KB, and the
 * pipeline target compiles every function twice. */
#define TJ_FUZZ_MAX_RX (64 * 1024)
#define TJ_FUZZ_MAX_PIPELINE (8 * 1024)
#define TJ_FUZZ_MAX_ARRAY_FILE (1024 * 1024)

static inline void fuzz_fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz: %s\n%s\n", what, detail ? detail : "");
  abort();
}

/* A failed call must report a status with a message; TJ_ERR_INTERNAL means the library
 * reached a state it considers a bug. `want` is the documented code; out of memory is
 * always allowed. Frees the status. */
static inline void fuzz_check_status(tj_status_t *s, tj_code_t want) {
  tj_code_t code = tj_status_code(s);
  const char *msg = tj_status_message(s);
  if (!msg || !*msg) fuzz_fail("error status without a message", tj_code_name(code));
  if (code != want && code != TJ_ERR_OUT_OF_MEMORY) {
    fprintf(stderr, "fuzz: expected %s, got %s\n", tj_code_name(want), tj_code_name(code));
    fuzz_fail("unexpected error code", tj_status_text(s));
  }
  tj_status_free(s);
}

/* The reader's errors: TJ_ERR_PARSE, or TJ_ERR_UNSUPPORTED for an operator tvmjit lacks
 * (ir/text/parse.h). Frees the status. */
static inline void fuzz_check_reader_status(tj_status_t *s) {
  fuzz_check_status(s, tj_status_code(s) == TJ_ERR_UNSUPPORTED ? TJ_ERR_UNSUPPORTED : TJ_ERR_PARSE);
}

/* Any code but TJ_ERR_INTERNAL, with a message. Frees the status. */
static inline void fuzz_check_any_status(tj_status_t *s) {
  tj_code_t code = tj_status_code(s);
  const char *msg = tj_status_message(s);
  if (!msg || !*msg) fuzz_fail("error status without a message", tj_code_name(code));
  if (code == TJ_ERR_INTERNAL) fuzz_fail("internal error", tj_status_text(s));
  tj_status_free(s);
}

/* .npy/.npz loading (runtime/npy.h): malformed = TJ_ERR_IO, well-formed but not
 * supported = TJ_ERR_INVALID_ARGUMENT. */
static inline void fuzz_check_npy_status(tj_status_t *s) {
  tj_code_t code = tj_status_code(s);
  if (code == TJ_ERR_INVALID_ARGUMENT || code == TJ_ERR_OUT_OF_MEMORY) {
    fuzz_check_status(s, code);
    return;
  }
  fuzz_check_status(s, TJ_ERR_IO);
}

static inline void fuzz_check_same_tensor(const tj_tensor_t *a, const tj_tensor_t *b) {
  if (!tj_dtype_eq(a->dtype, b->dtype) || a->ndim != b->ndim)
    fuzz_fail("round trip changed the dtype or rank", "");
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) fuzz_fail("round trip changed the shape", "");
  size_t n = tj_tensor_nbytes(a);
  if (n != tj_tensor_nbytes(b) || (n && memcmp(a->data, b->data, n) != 0))
    fuzz_fail("round trip changed the data", "");
}

#endif
