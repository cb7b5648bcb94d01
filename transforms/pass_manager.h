/* The pass manager: a pipeline is one visible list of TVM passes with TVM's names and
 * option spelling, parsed from text such as
 *   ToMixedPrecision(out_dtype="float16", fp16_input_names=["x"]),LegalizeOps,FuseOps(fuse_opt_level=2)
 * (items separated by ',' or '->'; commas inside parentheses or brackets belong to the
 * options; `Name()` equals `Name`; `none` = no pass; `default` = LegalizeOps,
 * AnnotateTIROpPattern, FuseOps, FuseTIR) and run over a module with instruments:
 * IR printing before/after a named pass or all passes, a time per pass, and the
 * verifier after every pass. The library never prints by itself: printed IR goes to
 * the FILE* or callback the caller gives.
 *
 * Pipelines and reports live in the arena given at parse/run time; nothing to free.
 * Not thread-safe per arena (one compilation = one arena). */
#ifndef TJ_TRANSFORMS_PASS_MANAGER_H
#define TJ_TRANSFORMS_PASS_MANAGER_H

#include <stdbool.h>
#include <stdio.h>

#include "transforms/transforms.h"

typedef enum tj_pass_kind {
  TJ_PASS_BUILTIN, /* a row of the pass table in pass_manager.c */
  TJ_PASS_CUSTOM,  /* a caller-supplied function (tests, experiments) */
} tj_pass_kind_t;

typedef struct tj_pass tj_pass_t;

typedef tj_status_t *(*tj_custom_pass_fn)(const tj_pass_context_t *ctx, const tj_module_t *in, void *user,
                                          const tj_module_t **out);
/* Entry point of a pass without options (transforms/transforms.h). */
typedef tj_status_t *(*tj_pass_fn)(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out);
/* Entry point of a pass with options: reads them from `pass`. */
typedef tj_status_t *(*tj_pass_with_options_fn)(const tj_pass_context_t *ctx, const tj_pass_t *pass,
                                                const tj_module_t *in, const tj_module_t **out);

struct tj_pass {
  tj_pass_kind_t kind;
  const char *name; /* TVM's name: "ToMixedPrecision", ...; custom: the caller's */
  /* Builtin: the table row's entry point (one of the two), option names in TVM's
   * positional order (NULL-ended, NULL = none) and membership of `default`. */
  tj_pass_fn run;
  tj_pass_with_options_fn run_with_options;
  const char *const *options;
  bool in_default;
  /* ToMixedPrecision */
  const char *out_dtype; /* "float32" (default) or "float16" */
  /* tvmjit's option: the low-precision dtype, "float16" (default, TVM's only one) or
   * "bfloat16" (needs out_dtype="float32"). */
  const char *storage_dtype;
  int n_fp16_input_names;
  const char *const *fp16_input_names;
  /* FuseOps */
  int fuse_opt_level; /* -1 = the PassContext opt_level (TVM's default) */
  /* TJ_PASS_CUSTOM */
  tj_custom_pass_fn fn;
  void *user;
};

typedef struct tj_pipeline {
  int n;
  const tj_pass_t *passes;
} tj_pipeline_t;

/* Parses a pipeline. Unknown pass names and options, bad option values and syntax
 * errors are TJ_ERR_INVALID_ARGUMENT naming the item and listing what is valid. */
tj_status_t *tj_pipeline_parse(tj_arena_t *arena, const char *text, tj_pipeline_t *out_pipeline);
/* A pass with its defaults, by TVM name; NULL for an unknown name. */
const tj_pass_t *tj_pass_default(const char *name);
/* A pipeline with one more pass at the end (arena-allocated copy). */
tj_status_t *tj_pipeline_append(tj_arena_t *arena, const tj_pipeline_t *p, const tj_pass_t *pass,
                                tj_pipeline_t *out_pipeline);
/* Canonical text: `ToMixedPrecision(out_dtype="float16"), LegalizeOps`; options only
 * when they differ from the defaults; "none" for an empty pipeline. Arena-owned. */
const char *tj_pipeline_text(tj_arena_t *arena, const tj_pipeline_t *p);
const char *tj_pass_text(tj_arena_t *arena, const tj_pass_t *pass);
/* The table's pass names, "ToMixedPrecision, LegalizeOps, ..." (arena-owned). */
const char *tj_pass_valid_names(tj_arena_t *arena);

/* Runs one pass: its table entry point, or a custom pass's function. */
tj_status_t *tj_pass_run(const tj_pass_context_t *ctx, const tj_pass_t *pass, const tj_module_t *in,
                         const tj_module_t **out);

/* Receives printed IR: `when` is "before" or "after". */
typedef void (*tj_ir_print_fn)(void *user, const char *pass_name, const char *when, const char *module_text);

typedef struct tj_pass_instruments {
  /* A pass name whose input / output is printed; "*" = every pass; NULL = none. */
  const char *print_before;
  const char *print_after;
  /* Where printed IR goes: the callback if set, else the FILE* (each module preceded
   * by "# IR before|after pass '<name>'"); neither = nowhere. */
  FILE *print_file;
  tj_ir_print_fn print_fn;
  void *print_user;
  bool time_passes;  /* fill the report's per-pass times */
  bool verify_each;  /* tj_verify_module after every pass */
} tj_pass_instruments_t;

typedef struct tj_pass_timing {
  const char *name; /* canonical pass text */
  double ms;
} tj_pass_timing_t;

typedef struct tj_pass_report {
  int n;
  tj_pass_timing_t *timings; /* one per pass run, in order */
  double total_ms;
} tj_pass_report_t;

/* Runs the pipeline over `in`. instruments may be NULL (none); out_report may be NULL.
 * A failing pass returns its status annotated "in pass '<name>'"; a verifier failure
 * after a pass is TJ_ERR_VERIFY "after pass '<name>': <verifier message>". *out is
 * set only on success. */
tj_status_t *tj_pipeline_run(const tj_pass_context_t *ctx, const tj_pipeline_t *p,
                             const tj_pass_instruments_t *instruments, const tj_module_t *in,
                             const tj_module_t **out, tj_pass_report_t *out_report);

/* The report as a table: one line per pass "  <ms> ms  <pass>" and a total line.
 * Arena-owned. */
const char *tj_pass_report_text(tj_arena_t *arena, const tj_pass_report_t *r);

#endif
