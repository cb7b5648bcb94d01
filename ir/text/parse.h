/* The TVMScript reader (docs/semantics.md §7).
 *
 * Two steps, like TVM's own parser: the Python-subset text becomes a syntax tree
 * (ir/parse_lex.c, ir/parse_ast.c), which is evaluated into IR (ir/parse_tir*.c,
 * ir/parse_relax.c, module level in ir/parse.c) with TVM's meaning: TVM's operator
 * type matching and constant folding for TIR arithmetic, the implicit root block and
 * T.reads/T.writes completion of script_complete.cc, ANF normalisation of nested Relax
 * calls, Relax ops built through the operator registry (ir/op.h), struct info inferred
 * for every binding.
 *
 * Parse-time errors, as TVM's parser: chained assignment, bindings after R.output,
 * R.output outside a dataflow block or naming a var not bound in it, dataflow vars used
 * outside their block, branch vars used after an if, if branches binding different
 * names, if inside a dataflow block, a missing or non-final return, an unassigned
 * call, an unannotated parameter, wrong arity of T.* intrinsics, R.Tensor argument
 * errors, unknown names and operators, and a binding annotation of another kind than
 * its value (Tensor annotated as Shape). dtype/ndim/shape disagreements of annotations
 * parse (as at the corpus commit) and are left to the verifier. */
#ifndef TJ_IR_PARSE_H
#define TJ_IR_PARSE_H

#include <stddef.h>

#include "ir/module.h"
#include "support/status.h"

/* Parses `text` (len bytes, need not be NUL-terminated) into a module allocated in
 * `arena`. `filename` is used in messages only. Accepts `@I.ir_module` /
 * `@tvm.script.ir_module` classes and bare `@R.function` / `@T.prim_func` (which give
 * a one-function module). On error returns a TJ_ERR_PARSE status (TJ_ERR_UNSUPPORTED for
 * well-formed text that uses an operator tvmjit does not have) whose message is
 *   file:line:col: message
 *       <the source line>
 *       <caret under the token>
 * and *out_module is untouched. Never crashes on malformed text. */
tj_status_t *tj_parse_module(tj_arena_t *arena, const char *filename, const char *text, size_t len,
                             tj_module_t **out_module);

/* Reads a whole file and parses it. */
tj_status_t *tj_parse_file(tj_arena_t *arena, const char *path, tj_module_t **out_module);

#endif
