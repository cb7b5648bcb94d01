/* libFuzzer target: .npz loading from memory (runtime/npz.h): every member is looked
 * up by name, and the missing-key message is built. */
#include <stddef.h>
#include <stdint.h>

#include "runtime/npz.h"

#include "fuzz_limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > TJ_FUZZ_MAX_ARRAY_FILE) return 0;
  tj_npz_t *npz = NULL;
  tj_status_t *s = tj_npz_load_bytes(data, size, "fuzz.npz", &npz);
  if (s) {
    fuzz_check_npy_status(s);
    return 0;
  }
  int n = tj_npz_count(npz);
  for (int i = 0; i < n; i++) {
    const char *name = tj_npz_name(npz, i);
    const tj_tensor_t *t = tj_npz_tensor(npz, i);
    if (!name || !t) fuzz_fail("a loaded member has no name or no tensor", "");
    const tj_tensor_t *found = NULL;
    s = tj_npz_get(npz, name, &found);
    if (s) fuzz_fail("a member is not found under its own name", tj_status_text(s));
  }
  const tj_tensor_t *none = NULL;
  s = tj_npz_get(npz, "no such key \x01", &none);
  if (s) fuzz_check_status(s, TJ_ERR_NOT_FOUND);
  if (n > 0) tj_tensor_free(tj_npz_take(npz, 0));
  tj_npz_free(npz);
  return 0;
}
