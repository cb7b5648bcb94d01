/* The state of TIR -> LLVM codegen, shared by codegen.c and the files that generate
 * parts of a kernel (codegen_parallel.c). jit/-internal. */
#ifndef TJ_JIT_CODEGEN_H
#define TJ_JIT_CODEGEN_H

#include <stdbool.h>

#include "jit/internal.h"

typedef struct var_binding {
  const tj_tir_expr_t *var;
  LLVMValueRef value;
} var_binding_t;

typedef struct cg {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMBuilderRef alloca_b; /* positioned before the entry block's branch */
  LLVMValueRef fn;
  const char *name;
  tj_status_t *err;
  var_binding_t *vars;
  int n_vars, cap_vars;
  LLVMTypeRef t_i1, t_i8, t_i32, t_i64, t_ptr, t_void;
  int n_parallel;   /* parallel loops outlined so far (names their body functions) */
  bool in_parallel; /* generating an outlined parallel body: nested parallel loops run serially */
  /* function attr TJ_ATTR_FP_CONTRACT, set in the default float mode (not strict): float32/64
   * a*b+c may become one FMA, and float32 exp is tj_cg_fast_exp_f32 instead of libm's expf */
  bool fp_contract;
} cg_t;

/* codegen.c, for the other codegen files: */
bool tj_cg_stmt(cg_t *c, const tj_tir_stmt_t *s);
LLVMValueRef tj_cg_expr(cg_t *c, const tj_tir_expr_t *e);
LLVMValueRef tj_cg_cast(cg_t *c, tj_dtype_t from, tj_dtype_t to, LLVMValueRef v);
bool tj_cg_bind(cg_t *c, const tj_tir_expr_t *var, LLVMValueRef v);
/* The value bound to var, or NULL with c->err set. */
LLVMValueRef tj_cg_lookup(cg_t *c, const tj_tir_expr_t *var);

/* codegen_exp.c: e^x for a float32 scalar or vector, within 1.01 ulp (libm: 0.5), vectorized
 * where llvm.exp is one libm call per lane. */
LLVMValueRef tj_cg_fast_exp_f32(cg_t *c, LLVMValueRef x);

/* codegen_bf16.c: a bfloat16 value is its bits in an i16 (vector); widen is exact, narrow
 * rounds a float32 to nearest even (NaN stays a quiet NaN), as tj_float_to_bfloat. */
LLVMValueRef tj_cg_bf16_widen(cg_t *c, LLVMValueRef bits);
LLVMValueRef tj_cg_bf16_narrow(cg_t *c, LLVMValueRef f);
/* tir.tvmjit.bf16_dot2(acc, a0, a1, b0, b1): vdpbf16ps where the host has it. */
LLVMValueRef tj_cg_bf16_dot2(cg_t *c, const tj_tir_expr_t *e);

/* codegen_parallel.c: a T.parallel loop outlined into a body function run by the
 * thread pool through TJ_KERNEL_HELPER_PARALLEL_FOR. */
bool tj_cg_parallel_for(cg_t *c, const tj_tir_stmt_t *loop);

#endif
