/* libFuzzer target: the .rx reader (ir/text/parse.h). Any byte string either parses or
 * gives a TJ_ERR_PARSE status (TJ_ERR_UNSUPPORTED for an operator tvmjit lacks); a parsed
 * module must also print. */
#include <stddef.h>
#include <stdint.h>

#include "ir/text/parse.h"
#include "ir/text/print.h"
#include "support/alloc.h"
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
    tj_free(tj_print_module(m));
  }
  tj_arena_free(arena);
  return 0;
}
