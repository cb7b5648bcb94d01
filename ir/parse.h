/* The TVMScript reader (docs/tvm-semantics.md §7). */
#ifndef TJ_IR_PARSE_H
#define TJ_IR_PARSE_H

#include <stddef.h>

#include "ir/module.h"
#include "support/status.h"

/* Parses `text` (len bytes, need not be NUL-terminated) into a module allocated in
 * `arena`. `filename` is used in messages only. Accepts `@I.ir_module` /
 * `@tvm.script.ir_module` classes and bare `@R.function` / `@T.prim_func` (which give
 * a one-function module). On error returns a TJ_ERR_PARSE status whose message is
 *   file:line:col: message
 *       <the source line>
 *       <caret under the token>
 * and *out_module is untouched. Never crashes on malformed text. */
tj_status_t *tj_parse_module(tj_arena_t *arena, const char *filename, const char *text, size_t len,
                             tj_module_t **out_module);

/* Reads a whole file and parses it. */
tj_status_t *tj_parse_file(tj_arena_t *arena, const char *path, tj_module_t **out_module);

#endif
