/* Struct-info relations (TVM's StructInfoBaseCheck, IsBaseOf, StructInfoLCA) and a
 * short formatter for messages. Pure functions over immutable sinfo; thread-safe. */
#ifndef TJ_IR_SINFO_H
#define TJ_IR_SINFO_H

#include <stdbool.h>

#include "ir/relax.h"
#include "support/strbuf.h"

/* How far `derived` is from being an instance of `base`, as TVM's BaseCheckResult:
 * PASS: every value of derived is a value of base.
 * FAIL_L2: may hold, but only a runtime check (symbolic shapes) can tell.
 * FAIL_L1: fails statically on shapes/values, or derived is coarser (e.g. Object
 *          where base wants a Tensor); a match_cast could still make it hold.
 * FAIL_L0: fundamentally incompatible: kind, dtype or ndim differ.
 * TVM's parser (and tvmjit's verifier) reject a binding annotation only at FAIL_L0. */
typedef enum tj_sinfo_check {
  TJ_SINFO_PASS = 0,
  TJ_SINFO_FAIL_L2 = 1,
  TJ_SINFO_FAIL_L1 = 2,
  TJ_SINFO_FAIL_L0 = 3,
} tj_sinfo_check_t;

/* NULL sinfo on either side is treated as Object. */
tj_sinfo_check_t tj_sinfo_base_check(const tj_sinfo_t *base, const tj_sinfo_t *derived);
/* TVM's IsBaseOf: base is the same or less constrained (unknown dtype/ndim/shape, Object). */
bool tj_sinfo_is_base_of(const tj_sinfo_t *base, const tj_sinfo_t *derived);
/* Structural equality; dims compare by value when constant (int32 and int64 alike),
 * else structurally with variables by identity. */
bool tj_sinfo_equal_static(const tj_sinfo_t *a, const tj_sinfo_t *b);
/* Least upper bound (TVM's StructInfoLCA), e.g. for If branches: equal parts are kept,
 * differing parts become unknown, different kinds give Object. NULL on out of memory. */
const tj_sinfo_t *tj_sinfo_lub(tj_arena_t *arena, const tj_sinfo_t *a, const tj_sinfo_t *b);

/* The struct info of calling a function of struct info `func` with arguments of
 * `arg_sinfo` (TVM's DeriveCallRetStructInfo): the callee's symbolic variables take the
 * arguments' values, and parts that stay in the callee's terms become unknown. NULL on
 * out of memory. */
const tj_sinfo_t *tj_sinfo_derive_call_ret(tj_arena_t *a, const tj_sinfo_t *func, int n_args,
                                           const tj_sinfo_t *const *arg_sinfo);

/* Two TIR dims/values equal: constants by value, otherwise same structure with the
 * same variables. */
/* s with every symbolic variable the parameters' struct info does not define erased to
 * unknown: TVM's Function takes its body's struct info as return only so (EraseToWellDefined;
 * a var that a match_cast in the body binds is not in scope outside). s itself when
 * nothing is erased; NULL when out of memory. */
const tj_sinfo_t *tj_sinfo_erase_to_params(tj_arena_t *a, const tj_sinfo_t *s, int n_params,
                                           const tj_sinfo_t *const *param_sinfo);

bool tj_sinfo_prim_expr_equal(const tj_tir_expr_t *a, const tj_tir_expr_t *b);

/* Short forms for messages: "float16[16, 32, 32, 16]", "float32[n, 4]", "float16[?]"
 * (unknown shape of known ndim 1 prints "float16[?]"), "float16[...]" (unknown ndim),
 * "?[2]" (unknown dtype), "Object", "Shape[2, 3]", "Prim(int64)", "(float16[2], Object)",
 * "Callable". Dims print as integers, or as their TIR expression ("n * 2"). */
void tj_sinfo_format_short(tj_strbuf_t *sb, const tj_sinfo_t *s);
/* Same for a TIR buffer ("float16[16, 32]"). */
void tj_sinfo_format_buffer(tj_strbuf_t *sb, const tj_buffer_t *b);
/* A TIR index expression in the compact form used above. */
void tj_sinfo_format_dim(tj_strbuf_t *sb, const tj_tir_expr_t *e);

#endif
