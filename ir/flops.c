/* FLOP counts of PrimFuncs and Relax functions (what is counted: ir/flops.h). */
#include "ir/flops.h"

#include <string.h>

/* The floating-point operations of one evaluation of e. */
static double expr_flops(const tj_tir_expr_t *e) {
  if (!e) return 0;
  double lanes = e->dtype.lanes ? e->dtype.lanes : 1;
  switch (e->kind) {
    case TJ_TIR_ADD: case TJ_TIR_SUB: case TJ_TIR_MUL: case TJ_TIR_DIV: case TJ_TIR_MIN: case TJ_TIR_MAX:
      return (tj_dtype_is_float(e->dtype) ? lanes : 0) + expr_flops(e->binary.a) + expr_flops(e->binary.b);
    case TJ_TIR_EQ: case TJ_TIR_NE: case TJ_TIR_LT: case TJ_TIR_LE: case TJ_TIR_GT: case TJ_TIR_GE:
      /* The result is bool: the operands' dtype says whether it is a float compare. */
      return (tj_dtype_is_float(e->binary.a->dtype) ? lanes : 0) + expr_flops(e->binary.a) + expr_flops(e->binary.b);
    case TJ_TIR_MOD: case TJ_TIR_FLOOR_DIV: case TJ_TIR_FLOOR_MOD: case TJ_TIR_AND: case TJ_TIR_OR:
      return expr_flops(e->binary.a) + expr_flops(e->binary.b);
    case TJ_TIR_NOT: case TJ_TIR_CAST:
      return expr_flops(e->unary.operand);
    case TJ_TIR_SELECT:
      return expr_flops(e->select.cond) + expr_flops(e->select.true_value) + expr_flops(e->select.false_value);
    case TJ_TIR_BUFFER_LOAD: {
      double n = 0;
      for (int i = 0; i < e->load.n_indices; i++) n += expr_flops(e->load.indices[i]);
      return n;
    }
    case TJ_TIR_LET:
      return expr_flops(e->let.value) + expr_flops(e->let.body);
    case TJ_TIR_CALL: {
      /* A math intrinsic on floats is one operation; if_then_else only chooses. */
      double n = tj_dtype_is_float(e->dtype) && strcmp(e->call.op, "tir.if_then_else") ? lanes : 0;
      for (int i = 0; i < e->call.n_args; i++) n += expr_flops(e->call.args[i]);
      return n;
    }
    case TJ_TIR_RAMP:
      return expr_flops(e->ramp.base) + expr_flops(e->ramp.stride);
    case TJ_TIR_BROADCAST:
      return expr_flops(e->broadcast.value);
    default:
      return 0; /* literals and variables */
  }
}

/* Adds the operations of s, run `times` times, to *total; false on a symbolic loop. */
static bool stmt_flops(const tj_tir_stmt_t *s, double times, double *total) {
  if (!s) return true;
  switch (s->kind) {
    case TJ_TIR_FOR: {
      int64_t extent;
      if (!tj_tir_is_const_int(s->loop.extent, &extent)) return false;
      return stmt_flops(s->loop.body, times * (double)(extent > 0 ? extent : 0), total);
    }
    case TJ_TIR_BLOCK_REALIZE:
      /* The loops around the realize already iterate the block's domain. */
      *total += times * expr_flops(s->realize.predicate);
      return stmt_flops(s->realize.block->init, times, total) && stmt_flops(s->realize.block->body, times, total);
    case TJ_TIR_BUFFER_STORE: {
      double n = expr_flops(s->store.value);
      for (int i = 0; i < s->store.n_indices; i++) n += expr_flops(s->store.indices[i]);
      *total += times * n;
      return true;
    }
    case TJ_TIR_LET_STMT:
      *total += times * expr_flops(s->let.value);
      return stmt_flops(s->let.body, times, total);
    case TJ_TIR_IF:
      *total += times * expr_flops(s->if_.cond);
      return stmt_flops(s->if_.then_stmt, times, total) && stmt_flops(s->if_.else_stmt, times, total);
    case TJ_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++)
        if (!stmt_flops(s->seq.stmts[i], times, total)) return false;
      return true;
    case TJ_TIR_EVALUATE:
      *total += times * expr_flops(s->evaluate.value);
      return true;
    case TJ_TIR_ALLOCATE:
      return stmt_flops(s->allocate.body, times, total);
    default:
      return false;
  }
}

bool tj_flops_prim_func(const tj_prim_func_t *f, double *out_flops) {
  double total = 0;
  if (!stmt_flops(f->body, 1.0, &total)) return false;
  *out_flops = total;
  return true;
}

/* The operations of one binding's value; false when unknown. */
static bool binding_flops(const tj_module_t *m, const tj_rx_expr_t *v, double *total) {
  tj_call_tir_view_t view;
  if (tj_rx_as_call_tir(v, &view)) {
    const tj_prim_func_t *f =
        view.callee->kind == TJ_RX_GLOBAL_VAR ? tj_module_find_prim(m, view.callee->var.name) : NULL;
    double n;
    if (!f || !tj_flops_prim_func(f, &n)) return false;
    *total += n;
    return true;
  }
  /* Moving values around costs nothing; any other call or control flow is unknown. */
  return tj_rx_is_var(v) || v->kind == TJ_RX_TUPLE || v->kind == TJ_RX_TUPLE_GET_ITEM ||
         v->kind == TJ_RX_CONSTANT || v->kind == TJ_RX_SHAPE_EXPR || v->kind == TJ_RX_PRIM_VALUE;
}

bool tj_flops_relax_func(const tj_module_t *m, const char *name, double *out_flops) {
  const tj_rx_func_t *f = tj_module_find_relax(m, name);
  if (!f || !f->body || f->body->kind != TJ_RX_SEQ) return false;
  double total = 0;
  for (int b = 0; b < f->body->seq.n_blocks; b++) {
    const tj_rx_block_t *blk = &f->body->seq.blocks[b];
    for (int i = 0; i < blk->n_bindings; i++)
      if (!binding_flops(m, blk->bindings[i].value, &total)) return false;
  }
  *out_flops = total;
  return true;
}
