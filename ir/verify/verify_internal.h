/* Shared state of the verifier's parts (verify.c, verify_relax.c, verify_calls.c,
 * verify_tir.c). Not part of the IR interface. */
#ifndef TJ_IR_VERIFY_INTERNAL_H
#define TJ_IR_VERIFY_INTERNAL_H

#include <stdbool.h>

#include "ir/module.h"
#include "ir/op.h"
#include "support/map.h"
#include "support/strbuf.h"

/* Every problem found, one line each, in program order. */
typedef struct tj_verify_report {
  const tj_module_t *module;
  tj_arena_t *scratch;     /* inferred sinfo and formatted text; freed at the end */
  tj_infer_ctx_t infer;    /* inference with the module's function signatures */
  tj_strbuf_t lines;
  int n_problems;
  bool out_of_memory;
  bool trust_call_annotations; /* tj_verify_options_t */
} tj_verify_report_t;

/* tj_module_find that tolerates unnamed entries. */
const tj_func_entry_t *tj_verify_find_func(const tj_module_t *m, const char *name);

/* Appends one problem line (deduplicated: the same line is reported once). */
void tj_verify_problem(tj_verify_report_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Short forms for messages, allocated in the scratch arena (never NULL). */
const char *tj_verify_fmt_sinfo(tj_verify_report_t *r, const tj_sinfo_t *s);
const char *tj_verify_fmt_buffer(tj_verify_report_t *r, const tj_buffer_t *b);
const char *tj_verify_fmt_dtype(tj_verify_report_t *r, tj_dtype_t dt);

/* Where a Relax problem is: "main: binding 'lv'" or "main: return value". */
typedef struct tj_verify_site {
  const char *func;
  const char *where;
} tj_verify_site_t;

/* The sinfo of an expression: its own, else inferred; NULL when neither works
 * (`out_error` then gets the inference status, or NULL). */
const tj_sinfo_t *tj_verify_sinfo_of(tj_verify_report_t *r, const tj_rx_expr_t *e, tj_status_t **out_error);

/* call_tir against the callee PrimFunc (verify_calls.c). */
void tj_verify_call_tir(tj_verify_report_t *r, const tj_verify_site_t *site, const tj_rx_expr_t *call);
/* Calls of module Relax functions: arity and L0 compatibility of arguments. */
void tj_verify_call_global(tj_verify_report_t *r, const tj_verify_site_t *site, const tj_rx_expr_t *call);
/* The FuseTIR invariant and binding kinds of a Primitive function. */
void tj_verify_primitive_func(tj_verify_report_t *r, const char *name, const tj_rx_func_t *f);

/* Relax structure of one function (verify_relax.c); `all_params` collects params
 * across functions to detect sharing. */
typedef struct tj_verify_ptrset tj_verify_ptrset_t;
void tj_verify_relax_func(tj_verify_report_t *r, const char *name, const tj_rx_func_t *f, tj_verify_ptrset_t *all_params);
/* One PrimFunc (verify_tir.c). */
void tj_verify_prim_func(tj_verify_report_t *r, const char *name, const tj_prim_func_t *f);

/* A pointer -> int map over support/map.h, remembering an allocation failure. */
struct tj_verify_ptrset {
  tj_map_t map;
  bool failed;
};
void tj_verify_ptrset_init(tj_verify_ptrset_t *s);
void tj_verify_ptrset_free(tj_verify_ptrset_t *s);
/* Inserts or updates. */
void tj_verify_ptrset_put(tj_verify_ptrset_t *s, const void *key, int value);
/* The value, or `dflt` when absent. */
int tj_verify_ptrset_get(const tj_verify_ptrset_t *s, const void *key, int dflt);

#endif
