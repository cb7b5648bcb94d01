/* The operator tests' check that a legalized op leaves no scalar loop nest on a hot
 * path: every root nest of its PrimFunc is taken by a CPU schedule rule. */
#ifndef TU_SCHEDULE_CHECK_H
#define TU_SCHEDULE_CHECK_H

#include <stdbool.h>

/* Legalizes `main_text` (see relax_model.h), expects exactly one PrimFunc and fails the
 * test (naming `what`) unless the schedule rules took each of its root nests. With
 * count_moved, small parameter nests that the epilogue collector runs as plain loops
 * ahead of an epilogue count as taken. */
void tu_check_every_nest_scheduled(const char *main_text, const char *what, bool count_moved);

#endif
