/* libFuzzer target: what `tvmjit run` does before LLVM, on small modules: read,
 * verify, then the default pass pipeline and ToMixedPrecision(float16) + default, each
 * with the verifier after every pass, and TIR lowering (tj_tir_lower) of every PrimFunc
 * before and after the passes. Inputs over TJ_FUZZ_MAX_PIPELINE bytes are skipped so
 * each execution stays fast. Errors are fine (any code but TJ_ERR_INTERNAL); crashes,
 * leaks, UB and hangs are not. */
#include <stddef.h>
#include <stdint.h>

#include "api/driver.h"
#include "ir/verify/verify.h"
#include "support/arena.h"
#include "transforms/tir/lower.h"

#include "fuzz_limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void lower_all(tj_arena_t *arena, const tj_module_t *m) {
  for (int i = 0; i < m->n_funcs; i++) {
    if (!m->funcs[i].is_prim) continue;
    const tj_prim_func_t *low = NULL;
    tj_status_t *s = tj_tir_lower(arena, m->funcs[i].prim, m->funcs[i].name, &low);
    if (s) fuzz_check_any_status(s);
  }
}

/* The default pipeline as the API and the tools build it (api/driver.h), with
 * ToMixedPrecision first when `mixed_precision` is set. */
static void run_pipeline(tj_arena_t *arena, const char *mixed_precision, const tj_module_t *in) {
  tj_pass_instruments_t ins = {.verify_each = true};
  tj_driver_passes_t passes = {"default", mixed_precision, &ins};
  tj_pipeline_t pipeline;
  tj_status_t *s = tj_driver_pipeline(arena, &passes, &pipeline);
  if (s) fuzz_fail("the fuzz pipeline does not parse", tj_status_text(s));
  const tj_module_t *out = NULL;
  s = tj_driver_run_passes(arena, &passes, in, &out, NULL);
  if (s) {
    fuzz_check_any_status(s);
    return;
  }
  lower_all(arena, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > TJ_FUZZ_MAX_PIPELINE) return 0;
  tj_arena_t *arena = tj_arena_create();
  if (!arena) return 0;
  tj_module_t *m = NULL;
  tj_status_t *s = tj_driver_parse(arena, "fuzz.rx", (const char *)data, size, &m);
  if (!s) s = tj_verify_module(m);
  if (s) {
    fuzz_check_any_status(s);
  } else {
    lower_all(arena, m);
    run_pipeline(arena, NULL, m);
    run_pipeline(arena, "float16", m);
  }
  tj_arena_free(arena);
  return 0;
}
