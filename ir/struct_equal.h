/* Structural equality and hashing with TVM's meaning: variables and buffers bound
 * inside the compared objects (params, loop vars, block iter vars, let vars, Relax
 * binding vars, alloc buffers) are equal up to renaming, mapped by binding position;
 * names of bound things are ignored; GlobalVar names, attrs and literals are
 * compared. Free variables must be the same node. */
#ifndef TJ_IR_STRUCT_EQUAL_H
#define TJ_IR_STRUCT_EQUAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/module.h"

/* When `why` is non-NULL and the result is false, a short description of the first
 * difference (with a path, e.g. "main: binding 'lv': call args[1]: dtype float16 vs
 * float32") is written into why (why_len bytes). */
bool tj_struct_equal_module(const tj_module_t *a, const tj_module_t *b, char *why, size_t why_len);
bool tj_struct_equal_prim_func(const tj_prim_func_t *a, const tj_prim_func_t *b, char *why, size_t why_len);
bool tj_struct_equal_rx_func(const tj_rx_func_t *a, const tj_rx_func_t *b, char *why, size_t why_len);
bool tj_struct_equal_tir_expr(const tj_tir_expr_t *a, const tj_tir_expr_t *b);
bool tj_struct_equal_sinfo(const tj_sinfo_t *a, const tj_sinfo_t *b);

/* Block names: TVM's BlockNode::SEqualReduce does not compare name_hint, and TVM's
 * own expected outputs rely on it (legalize_ops__test_divide_primvalue expects a block
 * 'T_add'), so the functions above ignore block names. The _ex variants take
 * TJ_SEQ_BLOCK_NAMES to compare them too (tests of FuseTIR's block naming). */
enum { TJ_SEQ_BLOCK_NAMES = 1u };
/* Integer literals compare by value whatever their dtype (shape dims: `4` as int32
 * and as int64 are the same extent), as struct info equality wants. */
enum { TJ_SEQ_INT_VALUES = 2u };
/* The one TIR expression equality; flags: TJ_SEQ_INT_VALUES. */
bool tj_struct_equal_tir_expr_ex(const tj_tir_expr_t *a, const tj_tir_expr_t *b, unsigned flags);
bool tj_struct_equal_module_ex(const tj_module_t *a, const tj_module_t *b, unsigned flags, char *why, size_t why_len);
bool tj_struct_equal_prim_func_ex(const tj_prim_func_t *a, const tj_prim_func_t *b, unsigned flags, char *why,
                                  size_t why_len);

/* Hashes consistent with the equalities above (equal => same hash). */
uint64_t tj_struct_hash_prim_func(const tj_prim_func_t *f);
uint64_t tj_struct_hash_rx_func(const tj_rx_func_t *f);

#endif
