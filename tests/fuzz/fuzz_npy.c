/* libFuzzer target: .npy loading from memory (runtime/npy.h). A loaded tensor is
 * encoded again and the encoding must load back to the same shape and bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "runtime/npy.h"
#include "support/alloc.h"

#include "fuzz_limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const tj_tensor_t *t) {
  void *bytes = NULL;
  size_t len = 0;
  tj_status_t *s = tj_npy_encode(t, &bytes, &len);
  if (s) {
    fuzz_check_status(s, TJ_ERR_OUT_OF_MEMORY);
    return;
  }
  tj_tensor_t *back = NULL;
  s = tj_npy_load_bytes(bytes, len, "re-encoded.npy", &back);
  if (s) fuzz_fail("a tensor tvmjit encoded does not load back", tj_status_text(s));
  fuzz_check_same_tensor(t, back);
  tj_tensor_free(back);
  tj_free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > TJ_FUZZ_MAX_ARRAY_FILE) return 0;
  tj_tensor_t *t = NULL;
  tj_status_t *s = tj_npy_load_bytes(data, size, "fuzz.npy", &t);
  if (s) {
    fuzz_check_npy_status(s);
    return 0;
  }
  check_round_trip(t);
  tj_tensor_free(t);
  return 0;
}
