/* ToMixedPrecision (docs/semantics.md §1): TVM's two-phase algorithm with the
 * fixed kNever rule of PR #17263.
 *
 * Phase A walks each function's dataflow bindings backwards and records, per var and
 * per tensor leaf, the widest dtype any use needs: a use by a kAlways op (conv2d,
 * matmul) needs float16, every other use float32. A var is "float16-only" when every
 * use is a kAlways op; such vars are stored as float16 right after their binding.
 *
 * Phase B rewrites forwards. kAlways calls get float16 args and out_dtype=<pass
 * out_dtype>; kFollow calls run in float16 iff all their args are float16-castable;
 * kNever calls (call_tir, softmax, unknown ops) see exactly the dtypes they saw
 * before the pass: if an upstream rewrite changed an argument, that tensor (or tuple
 * of tensors) argument is cast back to its original dtype; the call_tir callee and
 * any other non-tensor argument pass through untouched (TVM would assert there).
 * Casts are nested astype calls that the block normaliser lifts into their own
 * bindings, named lv, lv1, ... as TVM's block builder names them.
 *
 * storage_dtype="bfloat16" (tvmjit's option; TVM's pass knows float16 only) puts
 * bfloat16 wherever the algorithm puts float16 ("low" below), with out_dtype float32:
 * kAlways ops read bfloat16 and accumulate in float32. bfloat16 has float32's range,
 * so every float32 constant is castable (float16's check is |v| <= 65504). */
#include <stdlib.h>
#include <string.h>

#include "ir/op.h"
#include "ir/rx_mutator.h"
#include "ir/sinfo.h"
#include "ir/visit.h"
#include "transforms/transforms.h"

/* ---------------- nested dtype messages (TVM's NType) ---------------- */

/* A leaf holds a dtype; float with 0 bits means "no requirement yet". Non-tensor
 * leaves hold void and are never cast. */
typedef struct ntype {
  int n; /* -1 for a leaf */
  tj_dtype_t dtype;
  const struct ntype *fields;
} ntype_t;

#define UNKNOWN_DTYPE tj_dtype_make(TJ_DT_FLOAT, 0, 1)

typedef struct tmp_state {
  tj_arena_t *a;
  tj_infer_ctx_t ictx;
  const tj_module_t *module;
  tj_dtype_t out_dtype;
  tj_dtype_t low; /* float16, or bfloat16 with storage_dtype="bfloat16" */
  int n_fp16_names;
  const char *const *fp16_names;
  tj_map_t need;         /* var -> ntype (phase A) */
  tj_rx_mutator_t rw;    /* phase B: var remap, block builder, first error */
  bool cast_back_uses;   /* var uses are cast back to their original dtype */
  const tj_rx_func_t *f; /* the function being rewritten */
  const tj_rx_expr_t *const *param_base; /* its params after the pass (NULL = unchanged) */
} tmp_state_t;

static tj_status_t *oom(void) { return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "ToMixedPrecision: out of memory"); }

static void fail(tmp_state_t *st, tj_status_t *s) { tj_rx_mutator_fail(&st->rw, s); }

/* Struct info of an expression; tuples built by the parser may not carry it. */
static const tj_sinfo_t *sinfo_of(tmp_state_t *st, const tj_rx_expr_t *e) {
  if (!e) return NULL;
  if (e->sinfo) return e->sinfo;
  const tj_sinfo_t *s = NULL;
  tj_status_t *err = tj_rx_infer_sinfo(&st->ictx, e, &s);
  if (err) tj_status_free(err); /* not typeable here: treated as a non-tensor */
  return s;
}

static bool is_nested_tensor(const tj_sinfo_t *s) {
  if (!s) return false;
  if (s->kind == TJ_SINFO_TENSOR) return true;
  if (s->kind != TJ_SINFO_TUPLE) return false;
  for (int i = 0; i < s->tuple.n; i++)
    if (!is_nested_tensor(s->tuple.fields[i])) return false;
  return true;
}

/* The message shaped like `s`, each tensor leaf `dtype` (void: the leaf's own dtype). */
static const ntype_t *ntype_from(tmp_state_t *st, const tj_sinfo_t *s, tj_dtype_t dtype) {
  ntype_t *t = TJ_ARENA_NEW(st->a, ntype_t);
  if (!t) return fail(st, oom()), NULL;
  if (s && s->kind == TJ_SINFO_TUPLE) {
    ntype_t *fields = TJ_ARENA_ARRAY(st->a, ntype_t, s->tuple.n > 0 ? s->tuple.n : 1);
    if (!fields) return fail(st, oom()), NULL;
    for (int i = 0; i < s->tuple.n; i++) {
      const ntype_t *f = ntype_from(st, s->tuple.fields[i], dtype);
      if (!f) return NULL;
      fields[i] = *f;
    }
    t->n = s->tuple.n;
    t->fields = fields;
    return t;
  }
  t->n = -1;
  if (!tj_sinfo_is_tensor(s)) t->dtype = TJ_VOID;
  else t->dtype = tj_dtype_is_void(dtype) ? s->tensor.dtype : dtype;
  return t;
}

static tj_dtype_t merge_leaf(tj_dtype_t a, tj_dtype_t b) {
  if (a.code == TJ_DT_FLOAT && a.bits == 0) return b;
  if (b.code == TJ_DT_FLOAT && b.bits == 0) return a;
  return a.bits > b.bits ? a : b;
}

/* Leafwise combination; shapes that disagree keep `a` (they cannot arise from sinfo). */
static const ntype_t *ntype_combine(tmp_state_t *st, const ntype_t *a, const ntype_t *b, bool merge) {
  if (a->n != b->n) return a;
  ntype_t *t = TJ_ARENA_NEW(st->a, ntype_t);
  if (!t) return fail(st, oom()), a;
  t->n = a->n;
  if (a->n < 0) {
    /* merge: the wider requirement wins. Otherwise a = current dtype, b = required:
     * cast to float16 only where float16 is required. */
    t->dtype = merge ? merge_leaf(a->dtype, b->dtype) : (tj_dtype_eq(b->dtype, st->low) ? st->low : a->dtype);
    return t;
  }
  ntype_t *fields = TJ_ARENA_ARRAY(st->a, ntype_t, a->n > 0 ? a->n : 1);
  if (!fields) return fail(st, oom()), a;
  for (int i = 0; i < a->n; i++) fields[i] = *ntype_combine(st, &a->fields[i], &b->fields[i], merge);
  t->fields = fields;
  return t;
}

/* ---------------- phase A: backward collection ---------------- */

static void require_var(tmp_state_t *st, const tj_rx_expr_t *var, const ntype_t *msg) {
  if (!msg) return;
  const ntype_t *old = tj_map_get(&st->need, var);
  if (!tj_map_put(&st->need, var, (void *)(old ? ntype_combine(st, old, msg, true) : msg))) fail(st, oom());
}

/* Tuple expressions pass the message field by field; constants can be cast freely. */
static void require_expr(tmp_state_t *st, const tj_rx_expr_t *e, const ntype_t *msg) {
  if (!msg) return;
  if (e->kind == TJ_RX_TUPLE && msg->n == e->tuple.n) {
    for (int i = 0; i < e->tuple.n; i++) require_expr(st, e->tuple.fields[i], &msg->fields[i]);
  } else if (tj_rx_is_var(e)) {
    require_var(st, e, msg);
  }
}

static void require_args(tmp_state_t *st, const tj_rx_expr_t *call, tj_dtype_t dtype) {
  for (int i = 0; i < call->call.n_args; i++) {
    const tj_rx_expr_t *arg = call->call.args[i];
    const tj_sinfo_t *s = sinfo_of(st, arg);
    if (is_nested_tensor(s)) require_expr(st, arg, ntype_from(st, s, dtype));
  }
}

/* Any other use of a tensor var needs its original (float32) dtype. */
static bool require_uses_f32(tj_rx_visitor_t *v, const tj_rx_expr_t *e, bool def) {
  tmp_state_t *st = v->ctx;
  if (!def && tj_rx_is_var(e) && is_nested_tensor(e->sinfo)) require_var(st, e, ntype_from(st, e->sinfo, TJ_F32));
  return e->kind != TJ_RX_FUNCTION;
}

static void visit_uses_f32(tmp_state_t *st, const tj_rx_expr_t *e) {
  tj_rx_visitor_t v = {.expr = require_uses_f32, .ctx = st};
  tj_rx_visit_expr(&v, e);
}

static const ntype_t *lhs_need(tmp_state_t *st, const tj_rx_expr_t *var) {
  const ntype_t *t = tj_map_get(&st->need, var);
  if (!t) {
    t = ntype_from(st, var->sinfo, UNKNOWN_DTYPE);
    if (t && !tj_map_put(&st->need, var, (void *)t)) fail(st, oom());
  }
  return t;
}

static void collect_binding(tmp_state_t *st, const tj_rx_binding_t *b) {
  const tj_rx_expr_t *value = b->value;
  int policy = b->match_cast ? -1 : tj_op_call_mp_policy(value);
  if (policy >= 0) {
    require_args(st, value, policy == TJ_MP_ALWAYS ? st->low : TJ_F32);
  } else if (!b->match_cast && value->kind == TJ_RX_TUPLE) {
    const ntype_t *lhs = lhs_need(st, b->var);
    for (int i = 0; lhs && i < value->tuple.n && i < lhs->n; i++) require_expr(st, value->tuple.fields[i], &lhs->fields[i]);
  } else if (!b->match_cast && value->kind == TJ_RX_TUPLE_GET_ITEM) {
    const tj_sinfo_t *ts = sinfo_of(st, value->get_item.tuple);
    const ntype_t *lhs = lhs_need(st, b->var);
    if (!ts || ts->kind != TJ_SINFO_TUPLE || !lhs) return;
    ntype_t *msg = (ntype_t *)ntype_from(st, ts, UNKNOWN_DTYPE);
    if (!msg || value->get_item.index >= msg->n) return;
    ((ntype_t *)msg->fields)[value->get_item.index] = *lhs;
    require_expr(st, value->get_item.tuple, msg);
  } else {
    visit_uses_f32(st, value);
  }
}

static void collect_function(tmp_state_t *st, const tj_rx_func_t *f) {
  const tj_rx_expr_t *body = f->body;
  visit_uses_f32(st, body->seq.body);
  for (int bi = body->seq.n_blocks - 1; bi >= 0; bi--) {
    const tj_rx_block_t *blk = &body->seq.blocks[bi];
    if (!blk->is_dataflow) continue;
    for (int i = blk->n_bindings - 1; i >= 0; i--) collect_binding(st, &blk->bindings[i]);
  }
}

/* ---------------- phase B: forward rewrite ---------------- */

static const tj_rx_expr_t *remapped(tmp_state_t *st, const tj_rx_expr_t *var) {
  return tj_rx_mutator_lookup(&st->rw, var);
}

static const tj_rx_expr_t *with_inferred(tmp_state_t *st, const tj_rx_expr_t *e) {
  return tj_rx_with_inferred(&st->rw, e);
}

static const tj_rx_expr_t *astype(tmp_state_t *st, const tj_rx_expr_t *e, tj_dtype_t dtype) {
  tj_attr_value_t v = {.kind = TJ_ATTR_DTYPE, .dtype = dtype};
  const tj_attrs_t *attrs = tj_attrs_set(st->a, NULL, "dtype", v);
  const tj_rx_expr_t *out = NULL;
  tj_status_t *s = tj_op_make_call(&st->ictx, tj_op_lookup("relax.astype"), 1, &e, attrs, &out);
  if (s) return fail(st, s), NULL;
  return out;
}

/* TVM's RewriteExpr: every float16/float32 tensor leaf whose dtype differs from the
 * message gets an astype; tuple-typed non-tuple exprs are split with get-items. */
static const tj_rx_expr_t *rewrite_expr(tmp_state_t *st, const tj_rx_expr_t *e, const ntype_t *to) {
  if (!e || !to || st->rw.error) return e;
  const tj_sinfo_t *s = e->sinfo;
  if (to->n < 0) {
    if (!tj_sinfo_is_tensor(s) || tj_dtype_is_void(to->dtype) || tj_dtype_eq(s->tensor.dtype, to->dtype)) return e;
    if (!tj_dtype_eq(s->tensor.dtype, st->low) && !tj_dtype_eq(s->tensor.dtype, TJ_F32)) return e;
    return astype(st, e, to->dtype);
  }
  if (!s || s->kind != TJ_SINFO_TUPLE || s->tuple.n != to->n) return e;
  const tj_rx_expr_t **fields = TJ_ARENA_ARRAY(st->a, const tj_rx_expr_t *, to->n > 0 ? to->n : 1);
  if (!fields) return fail(st, oom()), e;
  bool changed = false;
  for (int i = 0; i < to->n; i++) {
    const tj_rx_expr_t *f = e->kind == TJ_RX_TUPLE ? e->tuple.fields[i]
                                                   : tj_rx_with_sinfo(st->a, tj_rx_get_item(st->a, e, i), s->tuple.fields[i]);
    fields[i] = rewrite_expr(st, f, &to->fields[i]);
    changed |= fields[i] != f;
  }
  if (!changed || st->rw.error) return e;
  return with_inferred(st, tj_rx_tuple(st->a, to->n, fields));
}

static const tj_rx_expr_t *cast_back(tmp_state_t *st, const tj_rx_expr_t *now, const tj_rx_expr_t *original) {
  return rewrite_expr(st, now, ntype_from(st, original->sinfo, TJ_VOID));
}

static const tj_rx_expr_t *normalize(tmp_state_t *st, const tj_rx_expr_t *e) { return tj_rx_normalize(&st->rw, e); }

static const tj_rx_expr_t *emit_fresh(tmp_state_t *st, const tj_rx_expr_t *value) {
  return tj_rx_emit_fresh(&st->rw, value);
}

/* Var uses: remapped (TVM's VarReplacer), and cast back to the original dtype when
 * the use is outside a rewritten call. */
static const tj_rx_expr_t *use_var(tj_rx_mutator_t *m, const tj_rx_expr_t *var) {
  tmp_state_t *st = m->ctx;
  const tj_rx_expr_t *r = tj_rx_mutator_lookup(m, var);
  return !st->cast_back_uses || r == var ? r : cast_back(st, r, var);
}

static const tj_rx_expr_t *map_uses(tmp_state_t *st, const tj_rx_expr_t *e, bool cast_back_uses) {
  st->cast_back_uses = cast_back_uses;
  const tj_rx_expr_t *r = tj_rx_mutate_expr(&st->rw, e);
  st->cast_back_uses = false;
  return r;
}

static void reemit(tmp_state_t *st, const tj_rx_binding_t *b, const tj_rx_expr_t *value) {
  tj_rx_reemit(&st->rw, b, value);
}

static bool constant_fits_low(const tmp_state_t *st, const tj_rx_expr_t *c) {
  tj_dtype_t d = c->constant.dtype;
  if (d.lanes > 1 || !c->constant.data) return false;
  if (tj_dtype_eq(d, st->low)) return true;
  if (st->low.code == TJ_DT_BFLOAT && tj_dtype_eq(d, TJ_F32)) return true;
  size_t n = tj_dtype_bytes(d) ? c->constant.nbytes / tj_dtype_bytes(d) : 0;
  for (size_t i = 0; i < n; i++) {
    double v;
    const char *p = (const char *)c->constant.data + i * tj_dtype_bytes(d);
    if (d.code == TJ_DT_FLOAT && d.bits == 32) v = *(const float *)(const void *)p;
    else if (d.code == TJ_DT_FLOAT && d.bits == 64) v = *(const double *)(const void *)p;
    else if (d.code == TJ_DT_INT && d.bits == 8) v = *(const int8_t *)p;
    else if (d.code == TJ_DT_INT && d.bits == 16) v = *(const int16_t *)(const void *)p;
    else if (d.code == TJ_DT_INT && d.bits == 32) v = *(const int32_t *)(const void *)p;
    else if (d.code == TJ_DT_INT && d.bits == 64) v = (double)*(const int64_t *)(const void *)p;
    else return false;
    if (v > 65504.0 || v < -65504.0) return false;
  }
  return true;
}

static bool all_low_castable(const tmp_state_t *st, int n, const tj_rx_expr_t *const *args) {
  for (int i = 0; i < n; i++) {
    const tj_rx_expr_t *a = args[i];
    if (!is_nested_tensor(a->sinfo)) continue;
    if (tj_sinfo_is_tensor(a->sinfo) && tj_dtype_eq(a->sinfo->tensor.dtype, st->low)) continue;
    if (a->kind == TJ_RX_CONSTANT && constant_fits_low(st, a)) continue;
    if (a->kind == TJ_RX_TUPLE && all_low_castable(st, a->tuple.n, a->tuple.fields)) continue;
    return false;
  }
  return true;
}

static const tj_rx_expr_t *call_with_args(tmp_state_t *st, const tj_rx_expr_t *call, const tj_rx_expr_t *const *args) {
  return tj_rx_call(st->a, call->call.callee, call->call.n_args, args, call->call.attrs, call->call.n_sinfo_args,
                    call->call.sinfo_args);
}

static void rewrite_op_call(tmp_state_t *st, const tj_rx_binding_t *b, int policy) {
  const tj_rx_expr_t *call = b->value;
  int n = call->call.n_args;
  const tj_rx_expr_t **args = TJ_ARENA_ARRAY(st->a, const tj_rx_expr_t *, n + 1);
  if (!args) return fail(st, oom());
  bool changed = false;
  for (int i = 0; i < n; i++) {
    args[i] = map_uses(st, call->call.args[i], false);
    changed |= args[i] != call->call.args[i];
  }
  const tj_rx_expr_t *value;
  if (policy == TJ_MP_NEVER) {
    if (!changed) return reemit(st, b, call);
    /* The fix of PR #17263: the op sees exactly the dtypes it saw before. Only tensor
     * (or tuple-of-tensor) args are cast; the callee and other args pass through. */
    for (int i = 0; i < n; i++) {
      const tj_rx_expr_t *orig = call->call.args[i];
      const tj_sinfo_t *os = sinfo_of(st, orig);
      if (args[i] != orig && is_nested_tensor(os))
        args[i] = rewrite_expr(st, with_inferred(st, args[i]), ntype_from(st, os, TJ_VOID));
    }
    return reemit(st, b, normalize(st, call_with_args(st, call, args)));
  }
  for (int i = 0; i < n; i++) args[i] = with_inferred(st, args[i]);
  if (st->rw.error) return;
  tj_dtype_t target = st->low;
  const tj_rx_expr_t *nc = call_with_args(st, call, args);
  if (policy == TJ_MP_ALWAYS) {
    const tj_op_def_t *def = tj_op_lookup(call->call.callee->op.name);
    if (def && def->mixed_precision_call) nc = def->mixed_precision_call(st->a, nc, st->out_dtype);
  } else if (!all_low_castable(st, n, args)) {
    target = TJ_F32;
  }
  if (!nc) return fail(st, oom());
  const tj_rx_expr_t **cast_args = TJ_ARENA_ARRAY(st->a, const tj_rx_expr_t *, n + 1);
  if (!cast_args) return fail(st, oom());
  for (int i = 0; i < n; i++)
    cast_args[i] = is_nested_tensor(args[i]->sinfo) ? rewrite_expr(st, args[i], ntype_from(st, args[i]->sinfo, target))
                                                    : args[i];
  value = normalize(st, tj_rx_call(st->a, nc->call.callee, n, cast_args, nc->call.attrs, nc->call.n_sinfo_args,
                                   nc->call.sinfo_args));
  if (!value) return;
  if (b->var->kind != TJ_RX_DATAFLOW_VAR) value = cast_back(st, value, b->var);
  else if (policy == TJ_MP_ALWAYS) value = rewrite_expr(st, value, ntype_from(st, value->sinfo, st->low));
  reemit(st, b, normalize(st, value));
}

static void rewrite_binding(tmp_state_t *st, const tj_rx_binding_t *b) {
  const tj_rx_expr_t *value = b->value;
  int policy = b->match_cast ? -1 : tj_op_call_mp_policy(value);
  if (policy >= 0) return rewrite_op_call(st, b, policy);
  if (!b->match_cast && (value->kind == TJ_RX_TUPLE || value->kind == TJ_RX_TUPLE_GET_ITEM)) {
    const tj_rx_expr_t *nv = normalize(st, map_uses(st, value, false));
    if (nv && b->var->kind != TJ_RX_DATAFLOW_VAR) nv = normalize(st, cast_back(st, nv, b->var));
    return reemit(st, b, nv);
  }
  reemit(st, b, normalize(st, map_uses(st, value, true)));
}

/* Stores float16-only vars as float16 right after their definition. */
static void cast_if_fp16_only(tmp_state_t *st, const tj_rx_expr_t *var) {
  const ntype_t *need = tj_map_get(&st->need, var);
  if (!need) return;
  const tj_rx_expr_t *cur = remapped(st, var);
  const ntype_t *to = ntype_combine(st, ntype_from(st, cur->sinfo, TJ_VOID), need, false);
  const tj_rx_expr_t *r = rewrite_expr(st, cur, to);
  if (r != cur && !st->rw.error) {
    const tj_rx_expr_t *v = emit_fresh(st, normalize(st, r));
    if (v) tj_rx_mutator_remap(&st->rw, var, v);
  }
}

static bool is_fp16_input(const tmp_state_t *st, const tj_rx_expr_t *param) {
  for (int i = 0; i < st->n_fp16_names; i++)
    if (strcmp(st->fp16_names[i], param->var.name) == 0) return true;
  return false;
}

/* The top-level blocks of a function; blocks nested in values (If branches) get the
 * shared rewriter's default (remap only). */
static void rewrite_block(tj_rx_mutator_t *m, const tj_rx_block_t *blk) {
  tmp_state_t *st = m->ctx;
  const tj_rx_func_t *f = st->f;
  m->block = NULL;
  if (blk->is_dataflow) {
    for (int i = 0; i < f->n_params; i++) cast_if_fp16_only(st, f->params[i]);
    for (int i = 0; i < blk->n_bindings && !st->rw.error; i++) {
      rewrite_binding(st, &blk->bindings[i]);
      cast_if_fp16_only(st, blk->bindings[i].var);
    }
    /* The float16 copies of params are local to the block; a signature change stays. */
    for (int i = 0; i < f->n_params; i++) tj_rx_mutator_remap(m, f->params[i], st->param_base[i]);
  } else {
    for (int i = 0; i < blk->n_bindings && !st->rw.error; i++) {
      const tj_rx_binding_t *b = &blk->bindings[i];
      const tj_rx_expr_t *v = map_uses(st, b->value, false);
      reemit(st, b, v == b->value ? v : with_inferred(st, v));
    }
  }
  m->block = rewrite_block;
}

static const tj_rx_func_t *rewrite_function(tmp_state_t *st, const tj_rx_func_t *f) {
  const tj_rx_expr_t *body = f->body;
  if (!body || body->kind != TJ_RX_SEQ) return f;
  st->need = TJ_PTR_MAP(st->a);
  tj_rx_mutator_init(&st->rw, st->a, "ToMixedPrecision");
  st->rw.infer = &st->ictx;
  st->rw.var = use_var;
  st->rw.ctx = st;
  collect_function(st, f);

  const tj_rx_expr_t **params = TJ_ARENA_ARRAY(st->a, const tj_rx_expr_t *, f->n_params + 1);
  if (!params) return fail(st, oom()), NULL;
  bool changed = false;
  for (int i = 0; i < f->n_params; i++) {
    const tj_rx_expr_t *p = f->params[i];
    params[i] = p;
    if (is_fp16_input(st, p) && tj_sinfo_is_tensor(p->sinfo)) {
      const tj_sinfo_t *s = p->sinfo;
      tj_sinfo_t *s16 = TJ_ARENA_NEW(st->a, tj_sinfo_t);
      if (!s16) return fail(st, oom()), NULL;
      *s16 = *s;
      s16->tensor.dtype = st->low;
      params[i] = tj_rx_var(st->a, p->var.name, s16);
      if (!params[i]) return fail(st, oom()), NULL;
      tj_rx_mutator_remap(&st->rw, p, params[i]);
      changed = true;
    }
  }
  const tj_rx_expr_t **param_base = TJ_ARENA_ARRAY(st->a, const tj_rx_expr_t *, f->n_params + 1);
  tj_rx_block_t *blocks = TJ_ARENA_ARRAY(st->a, tj_rx_block_t, body->seq.n_blocks + 1);
  if (!param_base || !blocks) return fail(st, oom()), NULL;
  for (int i = 0; i < f->n_params; i++) param_base[i] = params[i] == f->params[i] ? NULL : params[i];
  st->f = f;
  st->param_base = param_base;
  for (int bi = 0; bi < body->seq.n_blocks; bi++) {
    st->rw.block = rewrite_block;
    const tj_rx_block_t *nb = tj_rx_mutate_block(&st->rw, &body->seq.blocks[bi]);
    st->rw.block = NULL;
    if (!nb || st->rw.error) return NULL;
    blocks[bi] = *nb;
    changed |= nb != &body->seq.blocks[bi];
  }
  const tj_rx_expr_t *result = map_uses(st, body->seq.body, false);
  if (!result) return NULL;
  changed |= result != body->seq.body;
  if (!changed) return f;
  result = with_inferred(st, result);
  const tj_rx_expr_t *seq = result ? tj_rx_seq(st->a, body->seq.n_blocks, blocks, result) : NULL;
  tj_rx_func_t *nf = TJ_ARENA_NEW(st->a, tj_rx_func_t);
  if (!seq || !nf) return fail(st, oom()), NULL;
  *nf = *f;
  nf->params = params;
  nf->body = seq;
  /* TVM's Function constructor: the body's struct info replaces the declared return
   * unless the declared one is the more specific. */
  if (!f->ret_sinfo || !tj_sinfo_is_base_of(result->sinfo, f->ret_sinfo)) nf->ret_sinfo = result->sinfo;
  return nf;
}

static const tj_sinfo_t *module_func_sinfo(void *ctx, const char *name) {
  tmp_state_t *st = ctx;
  const tj_rx_func_t *f = tj_module_find_relax(st->module, name);
  return f ? tj_rx_func_sinfo(st->a, f) : NULL;
}

tj_status_t *tj_to_mixed_precision(const tj_pass_context_t *ctx, const tj_module_t *in, const char *out_dtype,
                                   const char *storage_dtype, int n_fp16_inputs, const char *const *fp16_input_names,
                                   const tj_module_t **out) {
  tmp_state_t st = {.a = ctx->arena, .module = in, .n_fp16_names = n_fp16_inputs, .fp16_names = fp16_input_names};
  st.ictx = (tj_infer_ctx_t){.arena = ctx->arena, .global_sinfo = module_func_sinfo, .global_ctx = &st};
  const char *dt = out_dtype ? out_dtype : "float32";
  if (!tj_dtype_parse(dt, &st.out_dtype) || (!tj_dtype_eq(st.out_dtype, TJ_F32) && !tj_dtype_eq(st.out_dtype, TJ_F16)))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "ToMixedPrecision: out_dtype must be \"float32\" or \"float16\", got \"%s\"", dt);
  const char *sd = storage_dtype ? storage_dtype : "float16";
  if (!tj_dtype_parse(sd, &st.low) || (!tj_dtype_eq(st.low, TJ_F16) && !tj_dtype_eq(st.low, TJ_BF16)))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "ToMixedPrecision: storage_dtype must be \"float16\" or \"bfloat16\", got \"%s\"", sd);
  if (tj_dtype_eq(st.low, TJ_BF16) && !tj_dtype_eq(st.out_dtype, TJ_F32))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "ToMixedPrecision: storage_dtype=\"bfloat16\" accumulates in float32: "
                         "out_dtype must be \"float32\", got \"%s\"", dt);
  tj_func_entry_t *funcs = TJ_ARENA_ARRAY(ctx->arena, tj_func_entry_t, in->n_funcs + 1);
  if (!funcs) return oom();
  bool changed = false;
  for (int i = 0; i < in->n_funcs; i++) {
    funcs[i] = in->funcs[i];
    if (funcs[i].is_prim) continue;
    const tj_rx_func_t *nf = rewrite_function(&st, in->funcs[i].relax);
    if (st.rw.error) return tj_status_annotate(st.rw.error, "in function '%s'", in->funcs[i].name);
    changed |= nf != in->funcs[i].relax;
    funcs[i].relax = nf;
  }
  if (!changed) return *out = in, NULL;
  tj_module_t *m = tj_module_new(ctx->arena, in->n_funcs, funcs, in->attrs);
  if (!m) return oom();
  m->global_infos = in->global_infos;
  *out = m;
  return NULL;
}
