/* CanonicalizeBindings, TVM's pass (relax/transform/canonicalize_bindings.cc), the
 * part of it that concerns plain bindings:
 *  - `y = x[i]` where x is bound in the function to a tuple literal becomes `y = field`;
 *  - a trivial binding `y = x` of a dataflow var y is dropped and y's uses see x (a
 *    non-dataflow y is kept, as TVM keeps the vars a dataflow block exposes).
 * The other bindings stay, including ones left unused (DeadCodeElimination drops them).
 * Not done here (TVM also does): match_cast simplification and dataflow outputs that
 * are only returned.
 *
 * Why it matters: DecomposeOpsForInference turns batch_norm into a tuple
 * (out, mean, var) whose first item the model reads; FuseOps treats the tuple binding as
 * opaque, so without this the relu/clip after batch_norm is a kernel of its own instead
 * of part of the conv's group. */
#include "ir/rx_mutator.h"
#include "support/map.h"
#include "transforms/transforms.h"

typedef struct canon_state {
  tj_map_t tuples; /* var -> the tuple literal it is bound to */
} canon_state_t;

static const tj_rx_expr_t *known_item(canon_state_t *st, const tj_rx_expr_t *value) {
  if (value->kind != TJ_RX_TUPLE_GET_ITEM || !tj_rx_is_var(value->get_item.tuple)) return value;
  const tj_rx_expr_t *tuple = tj_map_get(&st->tuples, value->get_item.tuple);
  int i = value->get_item.index;
  return tuple && i >= 0 && i < tuple->tuple.n ? tuple->tuple.fields[i] : value;
}

static void canon_binding(tj_rx_mutator_t *m, const tj_rx_binding_t *b) {
  canon_state_t *st = m->ctx;
  const tj_rx_expr_t *value = tj_rx_mutate_expr(m, b->value);
  if (!value) return;
  if (b->match_cast) {
    tj_rx_reemit(m, b, value);
    return;
  }
  value = known_item(st, value);
  if (tj_rx_is_var(value) && b->var->kind == TJ_RX_DATAFLOW_VAR) {
    if (!tj_rx_mutator_remap(m, b->var, value)) tj_rx_mutator_oom(m);
    return;
  }
  tj_rx_reemit(m, b, value);
  if (value->kind == TJ_RX_TUPLE && m->out.n > 0 && !tj_map_put(&st->tuples, m->out.items[m->out.n - 1].var, (void *)value))
    tj_rx_mutator_oom(m);
}

static void canon_setup(tj_rx_mutator_t *rw, void *ctx) {
  canon_state_t *st = ctx;
  st->tuples = TJ_PTR_MAP(rw->arena); /* tuples are known per function */
  rw->binding = canon_binding;
  rw->ctx = st;
}

tj_status_t *tj_canonicalize_bindings(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out) {
  canon_state_t st;
  return tj_rx_mutate_module(ctx->arena, "CanonicalizeBindings", in, canon_setup, &st, out);
}
