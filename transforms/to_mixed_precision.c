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
 * bindings, named lv, lv1, ... as TVM's block builder names them. */
#include <stdlib.h>
#include <string.h>

#include "ir/op.h"
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
  int n_fp16_names;
  const char *const *fp16_names;
  /* var -> ntype (phase A) and var -> current var (phase B): open-addressing maps. */
  struct ptrmap {
    int cap, n;
    const void **keys;
    const void **values;
  } need, remap;
  /* The block being built. */
  tj_rx_binding_t *out;
  int n_out, cap_out;
  int name_counter;
  tj_status_t *err;
} tmp_state_t;

typedef struct ptrmap ptrmap_t;

static tj_status_t *oom(void) { return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "ToMixedPrecision: out of memory"); }

static void fail(tmp_state_t *st, tj_status_t *s) {
  if (!st->err) st->err = s;
  else tj_status_free(s);
}

static size_t ptr_hash(const void *p, int cap) { return (((uintptr_t)p >> 4) * 2654435761u) & (size_t)(cap - 1); }

static const void *map_get(const ptrmap_t *m, const void *key) {
  if (m->cap == 0) return NULL;
  for (size_t i = ptr_hash(key, m->cap);; i = (i + 1) & (size_t)(m->cap - 1)) {
    if (m->keys[i] == key) return m->values[i];
    if (!m->keys[i]) return NULL;
  }
}

static bool map_put(tmp_state_t *st, ptrmap_t *m, const void *key, const void *value) {
  if (2 * (m->n + 1) > m->cap) {
    ptrmap_t bigger = {m->cap ? 2 * m->cap : 64, 0, NULL, NULL};
    bigger.keys = TJ_ARENA_ARRAY(st->a, const void *, bigger.cap);
    bigger.values = TJ_ARENA_ARRAY(st->a, const void *, bigger.cap);
    if (!bigger.keys || !bigger.values) return fail(st, oom()), false;
    for (int i = 0; i < m->cap; i++)
      if (m->keys[i] && m->values[i]) map_put(st, &bigger, m->keys[i], m->values[i]);
    *m = bigger;
  }
  for (size_t i = ptr_hash(key, m->cap);; i = (i + 1) & (size_t)(m->cap - 1)) {
    if (m->keys[i] == key || !m->keys[i]) {
      if (!m->keys[i]) m->n++;
      m->keys[i] = key;
      m->values[i] = value; /* NULL value = erased */
      return true;
    }
  }
}

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
    t->dtype = merge ? merge_leaf(a->dtype, b->dtype) : (tj_dtype_eq(b->dtype, TJ_F16) ? TJ_F16 : a->dtype);
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
  const ntype_t *old = map_get(&st->need, var);
  map_put(st, &st->need, var, old ? ntype_combine(st, old, msg, true) : msg);
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
  const ntype_t *t = map_get(&st->need, var);
  if (!t) {
    t = ntype_from(st, var->sinfo, UNKNOWN_DTYPE);
    map_put(st, &st->need, var, t);
  }
  return t;
}

static void collect_binding(tmp_state_t *st, const tj_rx_binding_t *b) {
  const tj_rx_expr_t *value = b->value;
  int policy = b->match_cast ? -1 : tj_op_call_mp_policy(value);
  if (policy >= 0) {
    require_args(st, value, policy == TJ_MP_ALWAYS ? TJ_F16 : TJ_F32);
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
  const tj_rx_expr_t *r = map_get(&st->remap, var);
  return r ? r : var;
}

static const tj_sinfo_t *infer(tmp_state_t *st, const tj_rx_expr_t *e) {
  const tj_sinfo_t *s = NULL;
  tj_status_t *err = tj_rx_infer_sinfo(&st->ictx, e, &s);
  if (err) return fail(st, err), NULL;
  return s;
}

static const tj_rx_expr_t *with_inferred(tmp_state_t *st, const tj_rx_expr_t *e) {
  if (!e) return fail(st, oom()), NULL;
  if (e->sinfo) return e;
  const tj_sinfo_t *s = infer(st, e);
  return s ? tj_rx_with_sinfo(st->a, e, s) : NULL;
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
  if (!e || !to || st->err) return e;
  const tj_sinfo_t *s = e->sinfo;
  if (to->n < 0) {
    if (!tj_sinfo_is_tensor(s) || tj_dtype_is_void(to->dtype) || tj_dtype_eq(s->tensor.dtype, to->dtype)) return e;
    if (!tj_dtype_eq(s->tensor.dtype, TJ_F16) && !tj_dtype_eq(s->tensor.dtype, TJ_F32)) return e;
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
  if (!changed || st->err) return e;
  return with_inferred(st, tj_rx_tuple(st->a, to->n, fields));
}

static const tj_rx_expr_t *cast_back(tmp_state_t *st, const tj_rx_expr_t *now, const tj_rx_expr_t *original) {
  return rewrite_expr(st, now, ntype_from(st, original->sinfo, TJ_VOID));
}

static const char *fresh_name(tmp_state_t *st) {
  int k = st->name_counter++;
  return k == 0 ? "lv" : tj_arena_printf(st->a, "lv%d", k);
}

static bool emit(tmp_state_t *st, const tj_rx_expr_t *var, const tj_rx_expr_t *value, const tj_sinfo_t *match_cast) {
  if (st->n_out == st->cap_out) {
    int cap = st->cap_out ? 2 * st->cap_out : 16;
    tj_rx_binding_t *grown = TJ_ARENA_ARRAY(st->a, tj_rx_binding_t, cap);
    if (!grown) return fail(st, oom()), false;
    if (st->n_out) memcpy(grown, st->out, sizeof *grown * (size_t)st->n_out);
    st->out = grown;
    st->cap_out = cap;
  }
  st->out[st->n_out++] = (tj_rx_binding_t){var, value, match_cast};
  return true;
}

static const tj_rx_expr_t *normalize(tmp_state_t *st, const tj_rx_expr_t *e);

/* A new dataflow binding for a normalised value. */
static const tj_rx_expr_t *emit_fresh(tmp_state_t *st, const tj_rx_expr_t *value) {
  if (!value || st->err) return NULL;
  const tj_rx_expr_t *var = tj_rx_dataflow_var(st->a, fresh_name(st), value->sinfo);
  if (!var) return fail(st, oom()), NULL;
  return emit(st, var, value, NULL) ? var : NULL;
}

/* Call arguments must be leaves or tuples of leaves: nested calls and get-items get
 * their own bindings (TVM's normaliser). */
static const tj_rx_expr_t *normalize_arg(tmp_state_t *st, const tj_rx_expr_t *e) {
  if (!e || st->err) return e;
  if (e->kind == TJ_RX_CALL || e->kind == TJ_RX_TUPLE_GET_ITEM) return emit_fresh(st, normalize(st, e));
  if (e->kind == TJ_RX_TUPLE) return normalize(st, e);
  return e;
}

static const tj_rx_expr_t *normalize(tmp_state_t *st, const tj_rx_expr_t *e) {
  if (!e || st->err) return e;
  if (e->kind == TJ_RX_CALL) {
    const tj_rx_expr_t **args = TJ_ARENA_ARRAY(st->a, const tj_rx_expr_t *, e->call.n_args + 1);
    if (!args) return fail(st, oom()), NULL;
    bool changed = false;
    for (int i = 0; i < e->call.n_args; i++) {
      args[i] = normalize_arg(st, e->call.args[i]);
      changed |= args[i] != e->call.args[i];
    }
    if (st->err) return NULL;
    if (!changed) return with_inferred(st, e);
    return with_inferred(st, tj_rx_call(st->a, e->call.callee, e->call.n_args, args, e->call.attrs,
                                        e->call.n_sinfo_args, e->call.sinfo_args));
  }
  if (e->kind == TJ_RX_TUPLE) {
    const tj_rx_expr_t **fields = TJ_ARENA_ARRAY(st->a, const tj_rx_expr_t *, e->tuple.n + 1);
    if (!fields) return fail(st, oom()), NULL;
    bool changed = false;
    for (int i = 0; i < e->tuple.n; i++) {
      fields[i] = normalize_arg(st, e->tuple.fields[i]);
      changed |= fields[i] != e->tuple.fields[i];
    }
    if (st->err) return NULL;
    return with_inferred(st, changed ? tj_rx_tuple(st->a, e->tuple.n, fields) : e);
  }
  if (e->kind == TJ_RX_TUPLE_GET_ITEM) {
    const tj_rx_expr_t *t = normalize_arg(st, e->get_item.tuple);
    if (st->err) return NULL;
    return with_inferred(st, t == e->get_item.tuple ? e : tj_rx_get_item(st->a, t, e->get_item.index));
  }
  return with_inferred(st, e);
}

/* Rebuilds `e` with every var use mapped by `use`: plain remap (TVM's VarReplacer)
 * or remap plus cast back to the original dtype (a use outside a rewritten call). */
typedef const tj_rx_expr_t *(*use_fn)(tmp_state_t *st, const tj_rx_expr_t *var);

static const tj_rx_expr_t *use_plain(tmp_state_t *st, const tj_rx_expr_t *var) { return remapped(st, var); }

static const tj_rx_expr_t *use_cast_back(tmp_state_t *st, const tj_rx_expr_t *var) {
  const tj_rx_expr_t *r = remapped(st, var);
  return r == var ? var : cast_back(st, r, var);
}

static const tj_rx_expr_t *map_uses(tmp_state_t *st, const tj_rx_expr_t *e, use_fn use) {
  if (!e || st->err) return e;
  switch (e->kind) {
    case TJ_RX_VAR:
    case TJ_RX_DATAFLOW_VAR: return use(st, e);
    case TJ_RX_TUPLE: {
      const tj_rx_expr_t **fields = TJ_ARENA_ARRAY(st->a, const tj_rx_expr_t *, e->tuple.n + 1);
      if (!fields) return fail(st, oom()), e;
      bool changed = false;
      for (int i = 0; i < e->tuple.n; i++) {
        fields[i] = map_uses(st, e->tuple.fields[i], use);
        changed |= fields[i] != e->tuple.fields[i];
      }
      return changed ? tj_rx_tuple(st->a, e->tuple.n, fields) : e;
    }
    case TJ_RX_TUPLE_GET_ITEM: {
      const tj_rx_expr_t *t = map_uses(st, e->get_item.tuple, use);
      return t == e->get_item.tuple ? e : tj_rx_get_item(st->a, t, e->get_item.index);
    }
    case TJ_RX_CALL: {
      const tj_rx_expr_t **args = TJ_ARENA_ARRAY(st->a, const tj_rx_expr_t *, e->call.n_args + 1);
      if (!args) return fail(st, oom()), e;
      bool changed = false;
      for (int i = 0; i < e->call.n_args; i++) {
        args[i] = map_uses(st, e->call.args[i], use);
        changed |= args[i] != e->call.args[i];
      }
      const tj_rx_expr_t *callee = map_uses(st, e->call.callee, use);
      changed |= callee != e->call.callee;
      return changed ? tj_rx_call(st->a, callee, e->call.n_args, args, e->call.attrs, e->call.n_sinfo_args,
                                  e->call.sinfo_args)
                     : e;
    }
    default: return e;
  }
}

/* Emits `var = value`, giving the var new struct info (and a remap) when the value's
 * differs, as TVM's ReEmitBinding does. */
static void reemit(tmp_state_t *st, const tj_rx_binding_t *b, const tj_rx_expr_t *value) {
  if (!value || st->err) return;
  const tj_rx_expr_t *var = remapped(st, b->var);
  if (value == b->value && var == b->var) {
    emit(st, b->var, b->value, b->match_cast);
    return;
  }
  if (!b->match_cast && value->sinfo && !tj_sinfo_equal_static(value->sinfo, var->sinfo)) {
    const tj_rx_expr_t *nv = b->var->kind == TJ_RX_DATAFLOW_VAR ? tj_rx_dataflow_var(st->a, b->var->var.name, value->sinfo)
                                                                : tj_rx_var(st->a, b->var->var.name, value->sinfo);
    if (!nv) return fail(st, oom());
    map_put(st, &st->remap, b->var, nv);
    var = nv;
  }
  emit(st, var, value, b->match_cast);
}

static bool constant_fits_f16(const tj_rx_expr_t *c) {
  tj_dtype_t d = c->constant.dtype;
  if (d.lanes > 1 || !c->constant.data) return false;
  if (tj_dtype_eq(d, TJ_F16)) return true;
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

static bool all_fp16_castable(int n, const tj_rx_expr_t *const *args) {
  for (int i = 0; i < n; i++) {
    const tj_rx_expr_t *a = args[i];
    if (!is_nested_tensor(a->sinfo)) continue;
    if (tj_sinfo_is_tensor(a->sinfo) && tj_dtype_eq(a->sinfo->tensor.dtype, TJ_F16)) continue;
    if (a->kind == TJ_RX_CONSTANT && constant_fits_f16(a)) continue;
    if (a->kind == TJ_RX_TUPLE && all_fp16_castable(a->tuple.n, a->tuple.fields)) continue;
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
    args[i] = map_uses(st, call->call.args[i], use_plain);
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
  if (st->err) return;
  tj_dtype_t target = TJ_F16;
  const tj_rx_expr_t *nc = call_with_args(st, call, args);
  if (policy == TJ_MP_ALWAYS) {
    const tj_op_def_t *def = tj_op_lookup(call->call.callee->op.name);
    if (def && def->mixed_precision_call) nc = def->mixed_precision_call(st->a, nc, st->out_dtype);
  } else if (!all_fp16_castable(n, args)) {
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
  else if (policy == TJ_MP_ALWAYS) value = rewrite_expr(st, value, ntype_from(st, value->sinfo, TJ_F16));
  reemit(st, b, normalize(st, value));
}

static void rewrite_binding(tmp_state_t *st, const tj_rx_binding_t *b) {
  const tj_rx_expr_t *value = b->value;
  int policy = b->match_cast ? -1 : tj_op_call_mp_policy(value);
  if (policy >= 0) return rewrite_op_call(st, b, policy);
  if (!b->match_cast && (value->kind == TJ_RX_TUPLE || value->kind == TJ_RX_TUPLE_GET_ITEM)) {
    const tj_rx_expr_t *nv = normalize(st, map_uses(st, value, use_plain));
    if (nv && b->var->kind != TJ_RX_DATAFLOW_VAR) nv = normalize(st, cast_back(st, nv, b->var));
    return reemit(st, b, nv);
  }
  reemit(st, b, normalize(st, map_uses(st, value, use_cast_back)));
}

/* Stores float16-only vars as float16 right after their definition. */
static void cast_if_fp16_only(tmp_state_t *st, const tj_rx_expr_t *var) {
  const ntype_t *need = map_get(&st->need, var);
  if (!need) return;
  const tj_rx_expr_t *cur = remapped(st, var);
  const ntype_t *to = ntype_combine(st, ntype_from(st, cur->sinfo, TJ_VOID), need, false);
  const tj_rx_expr_t *r = rewrite_expr(st, cur, to);
  if (r != cur && !st->err) {
    const tj_rx_expr_t *v = emit_fresh(st, normalize(st, r));
    if (v) map_put(st, &st->remap, var, v);
  }
}

static bool is_fp16_input(const tmp_state_t *st, const tj_rx_expr_t *param) {
  for (int i = 0; i < st->n_fp16_names; i++)
    if (strcmp(st->fp16_names[i], param->var.name) == 0) return true;
  return false;
}

static const tj_rx_block_t *rewrite_block(tmp_state_t *st, const tj_rx_func_t *f, const tj_rx_block_t *blk,
                                          const tj_rx_expr_t *const *param_base) {
  st->out = NULL;
  st->n_out = st->cap_out = 0;
  if (blk->is_dataflow) {
    for (int i = 0; i < f->n_params; i++) cast_if_fp16_only(st, f->params[i]);
    for (int i = 0; i < blk->n_bindings && !st->err; i++) {
      rewrite_binding(st, &blk->bindings[i]);
      cast_if_fp16_only(st, blk->bindings[i].var);
    }
    /* The float16 copies of params are local to the block; a signature change stays. */
    for (int i = 0; i < f->n_params; i++) map_put(st, &st->remap, f->params[i], param_base[i]);
  } else {
    for (int i = 0; i < blk->n_bindings && !st->err; i++) {
      const tj_rx_binding_t *b = &blk->bindings[i];
      const tj_rx_expr_t *v = map_uses(st, b->value, use_plain);
      reemit(st, b, v == b->value ? v : with_inferred(st, v));
    }
  }
  tj_rx_block_t *nb = TJ_ARENA_NEW(st->a, tj_rx_block_t);
  if (!nb) return fail(st, oom()), NULL;
  nb->is_dataflow = blk->is_dataflow;
  nb->n_bindings = st->n_out;
  nb->bindings = st->out;
  return nb;
}

static bool same_block(const tj_rx_block_t *a, const tj_rx_block_t *b) {
  if (a->n_bindings != b->n_bindings) return false;
  for (int i = 0; i < a->n_bindings; i++)
    if (a->bindings[i].var != b->bindings[i].var || a->bindings[i].value != b->bindings[i].value) return false;
  return true;
}

static const tj_rx_func_t *rewrite_function(tmp_state_t *st, const tj_rx_func_t *f) {
  const tj_rx_expr_t *body = f->body;
  if (!body || body->kind != TJ_RX_SEQ) return f;
  st->need = (ptrmap_t){0};
  st->remap = (ptrmap_t){0};
  st->name_counter = 0;
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
      s16->tensor.dtype = TJ_F16;
      params[i] = tj_rx_var(st->a, p->var.name, s16);
      if (!params[i]) return fail(st, oom()), NULL;
      map_put(st, &st->remap, p, params[i]);
      changed = true;
    }
  }
  const tj_rx_expr_t **param_base = TJ_ARENA_ARRAY(st->a, const tj_rx_expr_t *, f->n_params + 1);
  tj_rx_block_t *blocks = TJ_ARENA_ARRAY(st->a, tj_rx_block_t, body->seq.n_blocks + 1);
  if (!param_base || !blocks) return fail(st, oom()), NULL;
  for (int i = 0; i < f->n_params; i++) param_base[i] = params[i] == f->params[i] ? NULL : params[i];
  for (int bi = 0; bi < body->seq.n_blocks; bi++) {
    const tj_rx_block_t *nb = rewrite_block(st, f, &body->seq.blocks[bi], param_base);
    if (!nb || st->err) return NULL;
    blocks[bi] = *nb;
    changed |= !same_block(nb, &body->seq.blocks[bi]);
  }
  const tj_rx_expr_t *result = map_uses(st, body->seq.body, use_plain);
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
                                   int n_fp16_inputs, const char *const *fp16_input_names,
                                   const tj_module_t **out) {
  tmp_state_t st = {.a = ctx->arena, .module = in, .n_fp16_names = n_fp16_inputs, .fp16_names = fp16_input_names};
  st.ictx = (tj_infer_ctx_t){.arena = ctx->arena, .global_sinfo = module_func_sinfo, .global_ctx = &st};
  const char *dt = out_dtype ? out_dtype : "float32";
  if (!tj_dtype_parse(dt, &st.out_dtype) || (!tj_dtype_eq(st.out_dtype, TJ_F32) && !tj_dtype_eq(st.out_dtype, TJ_F16)))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "ToMixedPrecision: out_dtype must be \"float32\" or \"float16\", got \"%s\"", dt);
  tj_func_entry_t *funcs = TJ_ARENA_ARRAY(ctx->arena, tj_func_entry_t, in->n_funcs + 1);
  if (!funcs) return oom();
  bool changed = false;
  for (int i = 0; i < in->n_funcs; i++) {
    funcs[i] = in->funcs[i];
    if (funcs[i].is_prim) continue;
    const tj_rx_func_t *nf = rewrite_function(&st, in->funcs[i].relax);
    if (st.err) return tj_status_annotate(st.err, "in function '%s'", in->funcs[i].name);
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
