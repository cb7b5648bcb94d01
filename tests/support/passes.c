#include "passes.h"

#include <check.h>
#include <string.h>

#include "ir/module.h"
#include "ir/text/parse.h"
#include "relax_model.h"
#include "support/arena.h"
#include "testutil.h"
#include "transforms/pass_manager.h"
#include "transforms/tir/schedule.h"

static int root_nests(const tj_prim_func_t *f) {
  const tj_tir_stmt_t *body = f->body->realize.block->body;
  return body->kind == TJ_TIR_SEQ ? body->seq.n : 1;
}

const tj_module_t *tu_run_passes(tj_arena_t *a, const char *pipeline, const tj_module_t *m) {
  tj_pipeline_t p;
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, a);
  const tj_module_t *out = NULL;
  TU_OK(tj_pipeline_parse(a, pipeline, &p));
  TU_OK(tj_pipeline_run(&ctx, &p, NULL, m, &out, NULL));
  return out;
}

const tj_module_t *tu_legalize_main(tj_arena_t *a, const char *main_text) {
  const char *full = tu_model_source(main_text);
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(a, "m.rx", full, strlen(full), &m));
  return tu_run_passes(a, "LegalizeOps", m);
}

void tu_check_every_nest_scheduled(const char *main_text, const char *what, bool count_moved) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *out = tu_legalize_main(a, main_text);
  int n_prims = 0;
  for (int f = 0; f < out->n_funcs; f++) {
    if (!out->funcs[f].is_prim) continue;
    n_prims++;
    tj_tir_schedule_options_t o = {.enabled = true, .vector_bits = 256};
    tj_tir_schedule_stats_t st;
    const tj_prim_func_t *sf = NULL;
    TU_OK(tj_tir_schedule(a, out->funcs[f].prim, "f", &o, &sf, &st));
    int nests = root_nests(out->funcs[f].prim);
    int scheduled = st.injective + st.reduction + st.conv + st.fused_epilogues + st.windowed + st.inlined +
                    (count_moved ? st.moved : 0);
    ck_assert_msg(scheduled >= nests, "%s: %d of %d nests scheduled (conv %d, windowed %d, injective %d, reduction %d, fused %d)",
                  what, scheduled, nests, st.conv, st.windowed, st.injective, st.reduction, st.fused_epilogues);
  }
  ck_assert_msg(n_prims == 1, "%s: %d PrimFuncs after LegalizeOps", what, n_prims);
  tj_arena_free(a);
}
