/* What the pass and operator tests share: running a pipeline on a parsed module,
 * legalizing a small `main` (see relax_model.h), and the check that a legalized op
 * leaves no scalar loop nest on a hot path. Each fails the test on any error. */
#ifndef TU_PASSES_H
#define TU_PASSES_H

#include <stdbool.h>

#include "ir/module.h"
#include "support/arena.h"

/* `m` after the passes `pipeline` (TVM's spelling, e.g. "LegalizeOps"). */
const tj_module_t *tu_run_passes(tj_arena_t *a, const char *pipeline, const tj_module_t *m);
/* The module of `main_text` (relax_model.h's tu_model_source) after LegalizeOps. */
const tj_module_t *tu_legalize_main(tj_arena_t *a, const char *main_text);

/* Legalizes `main_text`, expects exactly one PrimFunc and fails the test (naming `what`)
 * unless the schedule rules took each of its root nests. With count_moved, small
 * parameter nests that the epilogue collector runs as plain loops ahead of an epilogue
 * count as taken. */
void tu_check_every_nest_scheduled(const char *main_text, const char *what, bool count_moved);

#endif
