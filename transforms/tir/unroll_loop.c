/* UnrollLoop: a T.unroll loop with a constant extent becomes its body repeated, the loop
 * var replaced by min, min + 1, ... (TVM's explicit unroll, src/tir/transforms/
 * unroll_loop.cc). The point is register tiles: a small local accumulator indexed by
 * unrolled vars gets constant indices, so LLVM's SROA turns it into SSA values.
 * Statements keep their order, so results are unchanged. Loops whose extent is not
 * constant, or whose copies would exceed TJ_TIR_MAX_UNROLL_STMTS statements, stay
 * serial loops. Inner loops are unrolled first. */
#include "ir/visit.h"
#include "transforms/tir/lower.h"

static int64_t count_stmts(const tj_tir_stmt_t *s) {
  if (!s) return 0;
  switch (s->kind) {
    case TJ_TIR_FOR: return 1 + count_stmts(s->loop.body);
    case TJ_TIR_SEQ: {
      int64_t n = 0;
      for (int i = 0; i < s->seq.n; i++) n += count_stmts(s->seq.stmts[i]);
      return n;
    }
    case TJ_TIR_LET_STMT: return 1 + count_stmts(s->let.body);
    case TJ_TIR_IF: return 1 + count_stmts(s->if_.then_stmt) + count_stmts(s->if_.else_stmt);
    case TJ_TIR_ALLOCATE: return 1 + count_stmts(s->allocate.body);
    default: return 1;
  }
}

static const tj_tir_stmt_t *unrolled(tj_arena_t *a, const tj_tir_stmt_t *loop, const tj_tir_stmt_t *body, int64_t n) {
  const tj_tir_stmt_t **copies = TJ_ARENA_ARRAY(a, const tj_tir_stmt_t *, n > 0 ? n : 1);
  if (!copies) return NULL;
  const tj_tir_expr_t *var = loop->loop.var, *min = loop->loop.min;
  int64_t min_value;
  bool const_min = tj_tir_is_const_int(min, &min_value);
  for (int64_t i = 0; i < n; i++) {
    const tj_tir_expr_t *value =
        const_min ? tj_tir_int(a, var->dtype, min_value + i)
                  : tj_tir_binary(a, TJ_TIR_ADD, tj_dtype_eq(min->dtype, var->dtype) ? min : tj_tir_cast(a, var->dtype, min),
                                  tj_tir_int(a, var->dtype, i));
    if (!value || !(copies[i] = tj_tir_substitute_stmt(a, body, 1, &var, &value))) return NULL;
  }
  if (n == 0) return tj_tir_evaluate(a, tj_tir_int(a, TJ_I32, 0));
  return tj_tir_seq(a, (int)n, copies);
}

static const tj_tir_stmt_t *unroll_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_FOR || s->loop.kind != TJ_FOR_UNROLLED) return NULL;
  const tj_tir_stmt_t *body = tj_tir_mutate_stmt(m, s->loop.body);
  if (!body) return NULL;
  int64_t n;
  const tj_tir_stmt_t *r;
  if (tj_tir_is_const_int(s->loop.extent, &n) && n >= 0 && n <= INT32_MAX &&
      n * count_stmts(body) <= TJ_TIR_MAX_UNROLL_STMTS) {
    r = unrolled(m->arena, s, body, n);
  } else {
    tj_tir_stmt_t *loop = (tj_tir_stmt_t *)tj_tir_for(m->arena, s->loop.var, s->loop.min, s->loop.extent, TJ_FOR_SERIAL, body);
    if (loop) loop->loop.annotations = s->loop.annotations;
    r = loop;
  }
  if (!r) m->failed = true; /* reported as out of memory by tj_tir_mutate_prim_func_body */
  return r;
}

tj_status_t *tj_tir_unroll_loops(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                 const tj_prim_func_t **out) {
  tj_tir_mutator_t m = {.arena = arena, .stmt = unroll_stmt};
  return tj_tir_mutate_prim_func_body(&m, f, NULL, "UnrollLoop", name, out);
}
