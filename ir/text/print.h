/* The TVMScript printer. Output reads back (tj_parse_module) to a structurally equal
 * module and follows TVM's printing conventions (`T.int64(n)`, `T.Buffer((...), "float16")`,
 * `# with T.block("root"):`, `cls = Module`, `R.func_attr(...)`). */
#ifndef TJ_IR_PRINT_H
#define TJ_IR_PRINT_H

#include "ir/module.h"
#include "support/strbuf.h"

/* Whole module as `@I.ir_module class Module:`; returns a string owned by the caller
 * (tj_free), NULL on out of memory. */
char *tj_print_module(const tj_module_t *m);
/* Pieces, for messages and debugging. They append to sb. */
void tj_print_prim_func(tj_strbuf_t *sb, const char *name, const tj_prim_func_t *f);
void tj_print_tir_expr(tj_strbuf_t *sb, const tj_tir_expr_t *e);
void tj_print_tir_stmt(tj_strbuf_t *sb, const tj_tir_stmt_t *s, int indent);
void tj_print_sinfo(tj_strbuf_t *sb, const tj_sinfo_t *s);
void tj_print_rx_expr(tj_strbuf_t *sb, const tj_rx_expr_t *e);
/* Short tensor type for messages: "float16[16, 32, 32, 16]". */
void tj_print_sinfo_short(tj_strbuf_t *sb, const tj_sinfo_t *s);

#endif
