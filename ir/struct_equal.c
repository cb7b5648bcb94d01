/* STUB: replaced by the structural equality implementation. */
#include "ir/struct_equal.h"
bool tj_struct_equal_module(const tj_module_t *a, const tj_module_t *b, char *why, size_t why_len) { return false; }
bool tj_struct_equal_prim_func(const tj_prim_func_t *a, const tj_prim_func_t *b, char *why, size_t why_len) { return a == b; }
bool tj_struct_equal_rx_func(const tj_rx_func_t *a, const tj_rx_func_t *b, char *why, size_t why_len) { return a == b; }
bool tj_struct_equal_tir_expr(const tj_tir_expr_t *a, const tj_tir_expr_t *b) { return a == b; }
bool tj_struct_equal_sinfo(const tj_sinfo_t *a, const tj_sinfo_t *b) { return a == b; }
uint64_t tj_struct_hash_prim_func(const tj_prim_func_t *f) { return 0; }
uint64_t tj_struct_hash_rx_func(const tj_rx_func_t *f) { return 0; }
