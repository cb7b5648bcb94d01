/* libFuzzer target: the .rx reader followed by the verifier (ir/verify/verify.h). A parsed
 * module is either well-formed or gets a TJ_ERR_VERIFY status. */
#include <stddef.h>
#include <stdint.h>

#include "ir/text/parse.h"
#include "ir/verify/verify.h"
#include "support/arena.h"

#include "fuzz_limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > TJ_FUZZ_MAX_RX) return 0;
  tj_arena_t *arena = tj_arena_create();
  if (!arena) return 0;
  tj_module_t *m = NULL;
  tj_status_t *s = tj_parse_module(arena, "fuzz.rx", (const char *)data, size, &m);
  if (s) {
    fuzz_check_reader_status(s);
  } else {
    s = tj_verify_module(m);
    if (s) fuzz_check_status(s, TJ_ERR_VERIFY);
  }
  tj_arena_free(arena);
  return 0;
}
