/* STUB: replaced by the printer. */
#include "ir/print.h"
#include "support/alloc.h"
char *tj_print_module(const tj_module_t *m) { return tj_strdup("# printer not built yet\n"); }
void tj_print_prim_func(tj_strbuf_t *sb, const char *name, const tj_prim_func_t *f) { tj_strbuf_append(sb, name); }
void tj_print_tir_expr(tj_strbuf_t *sb, const tj_tir_expr_t *e) { tj_strbuf_append(sb, "<expr>"); }
void tj_print_tir_stmt(tj_strbuf_t *sb, const tj_tir_stmt_t *s, int indent) { tj_strbuf_append(sb, "<stmt>"); }
void tj_print_sinfo(tj_strbuf_t *sb, const tj_sinfo_t *s) { tj_strbuf_append(sb, "<sinfo>"); }
void tj_print_rx_expr(tj_strbuf_t *sb, const tj_rx_expr_t *e) { tj_strbuf_append(sb, "<expr>"); }
void tj_print_sinfo_short(tj_strbuf_t *sb, const tj_sinfo_t *s) { tj_strbuf_append(sb, "<sinfo>"); }
