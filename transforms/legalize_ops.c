/* LegalizeOps (docs/semantics.md §2): in every Relax function, calls to ops
 * with a legalization are replaced, in post-order, by what the legalizer returns
 * (a `R.call_tir` to a generated PrimFunc added to the module). A call is left
 * alone when its op has no legalization (call_tir, call_dps_packed, ...), when an
 * argument or the result has an unknown shape (ops named "*dynamic*" excepted), or
 * when the legalizer declines (unsupported attrs). TVM prints a warning for such
 * ops; we keep them silently. A legalization that yields another op call is
 * legalized again. Binding vars whose struct info changes are re-created and
 * their uses remapped, as TVM's ExprMutator does. */
#include <string.h>

#include "ir/op.h"
#include "ir/struct_equal.h"
#include "transforms/legalize/legalize.h"
#include "transforms/transforms.h"

/* The FLegalize table: every LEGALIZE row of ir/op/table.def, keyed by its op. */
typedef struct legalize_entry {
  const tj_op_def_t *op;
  tj_legalize_fn fn;
} legalize_entry_t;

#define TJ_LG_ENTRY_LEGALIZE(ident) {&tj_op_##ident, tj_legalize_##ident},
#define TJ_LG_ENTRY_KEEP(ident)
#define TJ_OP(ident, family, legalize) TJ_LG_ENTRY_##legalize(ident)
static const legalize_entry_t k_table[] = {
#include "ir/op/table.def"
};
#undef TJ_OP
#undef TJ_LG_ENTRY_LEGALIZE
#undef TJ_LG_ENTRY_KEEP

tj_legalize_fn tj_legalizer_lookup(const char *op_name) {
  for (size_t i = 0; i < sizeof k_table / sizeof k_table[0]; i++)
    if (strcmp(k_table[i].op->name, op_name) == 0) return k_table[i].fn;
  return NULL;
}

#define MAX_RELEGALIZE 8

struct tj_lg_pass {
  tj_arena_t *arena;
  const tj_module_t *mod; /* the module being built: input functions + added PrimFuncs */
  const tj_legalize_options_t *opts;
  int n_remap, cap_remap;
  const tj_rx_expr_t **remap_from, **remap_to;
  tj_status_t *error;
};

/* ---------------- module functions ---------------- */

tj_status_t *tj_lg_add_function(tj_lg_ctx_t *ctx, const char *name_hint, const tj_prim_func_t *f,
                                const tj_rx_expr_t **out_gvar) {
  tj_lg_pass_t *p = ctx->pass;
  uint64_t h = tj_struct_hash_prim_func(f);
  for (int i = 0; i < p->mod->n_funcs; i++) {
    const tj_func_entry_t *e = &p->mod->funcs[i];
    if (!e->is_prim || tj_struct_hash_prim_func(e->prim) != h) continue;
    if (tj_struct_equal_prim_func(e->prim, f, NULL, 0)) {
      *out_gvar = tj_rx_global_var(p->arena, e->name);
      return *out_gvar ? NULL : tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory");
    }
  }
  const char *name = tj_module_unique_name(p->arena, p->mod, name_hint);
  tj_func_entry_t entry = {.name = name, .is_prim = true, .prim = f, .relax = NULL};
  const tj_module_t *m = name ? tj_module_with_func(p->arena, p->mod, entry) : NULL;
  *out_gvar = m ? tj_rx_global_var(p->arena, name) : NULL;
  if (!*out_gvar) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory adding '%s'", name_hint);
  p->mod = m;
  return NULL;
}

/* ---------------- var remapping ---------------- */

static bool remap_add(tj_lg_pass_t *p, const tj_rx_expr_t *from, const tj_rx_expr_t *to) {
  if (p->n_remap == p->cap_remap) {
    int cap = p->cap_remap ? p->cap_remap * 2 : 32;
    const tj_rx_expr_t **f = TJ_ARENA_ARRAY(p->arena, const tj_rx_expr_t *, cap);
    const tj_rx_expr_t **t = TJ_ARENA_ARRAY(p->arena, const tj_rx_expr_t *, cap);
    if (!f || !t) return false;
    if (p->n_remap) {
      memcpy(f, p->remap_from, sizeof(*f) * (size_t)p->n_remap);
      memcpy(t, p->remap_to, sizeof(*t) * (size_t)p->n_remap);
    }
    p->remap_from = f;
    p->remap_to = t;
    p->cap_remap = cap;
  }
  p->remap_from[p->n_remap] = from;
  p->remap_to[p->n_remap++] = to;
  return true;
}

static const tj_rx_expr_t *remap_lookup(const tj_lg_pass_t *p, const tj_rx_expr_t *v) {
  for (int i = p->n_remap - 1; i >= 0; i--)
    if (p->remap_from[i] == v) return p->remap_to[i];
  return v;
}

/* ---------------- legalizing one call ---------------- */

static bool shape_known(const tj_sinfo_t *s) {
  if (!s) return false;
  switch (s->kind) {
    case TJ_SINFO_TENSOR: return s->tensor.ndim >= 0 && (s->tensor.ndim == 0 || s->tensor.shape);
    case TJ_SINFO_SHAPE: return s->shape.ndim >= 0 && (s->shape.ndim == 0 || s->shape.values);
    case TJ_SINFO_TUPLE:
      for (int i = 0; i < s->tuple.n; i++)
        if (!shape_known(s->tuple.fields[i])) return false;
      return true;
    default: return true;
  }
}

static bool all_shapes_known(tj_arena_t *a, const tj_rx_expr_t *call) {
  if (strstr(call->call.callee->op.name, "dynamic")) return true;
  for (int i = 0; i < call->call.n_args; i++) {
    const tj_sinfo_t *s = tj_lg_arg_sinfo(a, call->call.args[i]);
    if (s && !shape_known(s)) return false;
  }
  return !call->sinfo || shape_known(call->sinfo);
}

static tj_legalize_fn find_legalizer(const tj_lg_pass_t *p, const char *op) {
  const tj_legalize_options_t *o = p->opts;
  for (int i = 0; o && i < o->n_skip; i++)
    if (strcmp(o->skip_ops[i], op) == 0) return NULL;
  for (int i = 0; o && i < o->n_custom; i++)
    if (strcmp(o->custom[i].op_name, op) == 0) return o->custom[i].fn;
  return tj_legalizer_lookup(op);
}

/* A call whose result lives on a virtual device (R.Tensor(..., vdevice="llvm"))
 * gets a copy of its PrimFunc carrying {"target": {"kind": <target kind>}}, named
 * `<name>_<kind>` (e.g. `add_llvm`), as TVM's LegalizeOps does for vdevices. */
static const tj_rx_expr_t *attach_target(tj_lg_pass_t *p, const tj_rx_expr_t *call) {
  tj_call_tir_view_t v;
  if (!tj_rx_as_call_tir(call, &v) || !tj_sinfo_is_tensor(v.out_sinfo) || !v.out_sinfo->tensor.vdevice ||
      v.callee->kind != TJ_RX_GLOBAL_VAR)
    return call;
  const tj_prim_func_t *f = tj_module_find_prim(p->mod, v.callee->var.name);
  if (!f) return call;
  const char *vd = v.out_sinfo->tensor.vdevice;
  const char *kind = tj_arena_strndup(p->arena, vd, strcspn(vd, ":"));
  tj_prim_func_t *nf = TJ_ARENA_NEW(p->arena, tj_prim_func_t);
  tj_attr_value_t target = {.kind = TJ_ATTR_DICT};
  target.dict = kind ? tj_attrs_set(p->arena, NULL, "kind", tj_attr_str(kind)) : NULL;
  const char *name = kind ? tj_arena_printf(p->arena, "%s_%s", v.callee->var.name, kind) : NULL;
  if (!nf || !target.dict || !name) return NULL;
  *nf = *f;
  nf->attrs = tj_attrs_set(p->arena, f->attrs, "target", target);
  tj_lg_ctx_t ctx = {p->arena, p};
  const tj_rx_expr_t *gvar = NULL;
  tj_status_t *s = nf->attrs ? tj_lg_add_function(&ctx, name, nf, &gvar) : NULL;
  if (s || !gvar) {
    p->error = s;
    return NULL;
  }
  return tj_rx_make_call_tir(p->arena, gvar, v.n_args, v.args, v.out_sinfo, v.tir_vars);
}

static const tj_rx_expr_t *legalize_call(tj_lg_pass_t *p, const tj_rx_expr_t *call) {
  for (int round = 0; round < MAX_RELEGALIZE; round++) {
    if (call->kind != TJ_RX_CALL || call->call.callee->kind != TJ_RX_OP) return call;
    tj_legalize_fn fn = find_legalizer(p, call->call.callee->op.name);
    if (!fn || !all_shapes_known(p->arena, call)) return call;
    tj_lg_ctx_t ctx = {p->arena, p};
    const tj_rx_expr_t *out = NULL;
    tj_status_t *s = fn(&ctx, call, &out);
    if (s) {
      p->error = tj_status_annotate(s, "while legalizing %s", call->call.callee->op.name);
      return NULL;
    }
    if (!out || out == call) return call;
    call = attach_target(p, out);
    if (!call) return NULL; /* a legalization may emit another op: legalize it again */
  }
  return call;
}

/* ---------------- the rewrite ---------------- */

static const tj_rx_expr_t *rewrite(tj_lg_pass_t *p, const tj_rx_expr_t *e);
static const tj_rx_func_t *rewrite_func(tj_lg_pass_t *p, const tj_rx_func_t *f);

static bool sinfo_same(const tj_sinfo_t *x, const tj_sinfo_t *y) {
  if (x == y) return true;
  if (!x || !y || x->kind != y->kind) return false;
  if (x->kind == TJ_SINFO_TENSOR) {
    if (!tj_dtype_eq(x->tensor.dtype, y->tensor.dtype) || x->tensor.ndim != y->tensor.ndim) return false;
    if (!x->tensor.shape || !y->tensor.shape) return x->tensor.shape == y->tensor.shape;
    for (int i = 0; i < x->tensor.ndim; i++) {
      int64_t a, b;
      const tj_tir_expr_t *dx = x->tensor.shape[i], *dy = y->tensor.shape[i];
      if (tj_tir_is_const_int(dx, &a) && tj_tir_is_const_int(dy, &b)) {
        if (a != b) return false;
      } else if (dx != dy && !tj_struct_equal_tir_expr(dx, dy)) {
        return false;
      }
    }
    return true;
  }
  return tj_struct_equal_sinfo(x, y);
}

static const tj_rx_expr_t *rewrite_call(tj_lg_pass_t *p, const tj_rx_expr_t *e) {
  const tj_rx_expr_t *callee = e->call.callee->kind == TJ_RX_OP ? e->call.callee : rewrite(p, e->call.callee);
  const tj_rx_expr_t **args = TJ_ARENA_ARRAY(p->arena, const tj_rx_expr_t *, e->call.n_args + 1);
  if (!args || !callee) return NULL;
  bool changed = callee != e->call.callee;
  for (int i = 0; i < e->call.n_args; i++) {
    args[i] = rewrite(p, e->call.args[i]);
    if (!args[i]) return NULL;
    changed |= args[i] != e->call.args[i];
  }
  const tj_rx_expr_t *c = e;
  if (changed) {
    c = tj_rx_call(p->arena, callee, e->call.n_args, args, e->call.attrs, e->call.n_sinfo_args, e->call.sinfo_args);
    c = c ? tj_rx_with_sinfo(p->arena, c, e->sinfo) : NULL;
    if (!c) return NULL;
  }
  return legalize_call(p, c);
}

static const tj_rx_expr_t *rewrite_seq(tj_lg_pass_t *p, const tj_rx_expr_t *e) {
  tj_rx_block_t *blocks = TJ_ARENA_ARRAY(p->arena, tj_rx_block_t, e->seq.n_blocks + 1);
  if (!blocks) return NULL;
  for (int b = 0; b < e->seq.n_blocks; b++) {
    const tj_rx_block_t *ob = &e->seq.blocks[b];
    tj_rx_binding_t *bs = TJ_ARENA_ARRAY(p->arena, tj_rx_binding_t, ob->n_bindings + 1);
    if (!bs) return NULL;
    for (int i = 0; i < ob->n_bindings; i++) {
      const tj_rx_binding_t *obd = &ob->bindings[i];
      bs[i] = *obd;
      bs[i].value = rewrite(p, obd->value);
      if (!bs[i].value) return NULL;
      const tj_sinfo_t *ns = bs[i].value->sinfo;
      /* ReEmitBinding: a var whose value changed struct info is re-created. */
      if (!obd->match_cast && ns && !sinfo_same(ns, obd->var->sinfo)) {
        const tj_rx_expr_t *nv = obd->var->kind == TJ_RX_DATAFLOW_VAR
                                     ? tj_rx_dataflow_var(p->arena, obd->var->var.name, ns)
                                     : tj_rx_var(p->arena, obd->var->var.name, ns);
        if (!nv || !remap_add(p, obd->var, nv)) return NULL;
        bs[i].var = nv;
      }
    }
    blocks[b].is_dataflow = ob->is_dataflow;
    blocks[b].n_bindings = ob->n_bindings;
    blocks[b].bindings = bs;
  }
  const tj_rx_expr_t *body = rewrite(p, e->seq.body);
  return body ? tj_rx_seq(p->arena, e->seq.n_blocks, blocks, body) : NULL;
}

static const tj_rx_expr_t *rewrite(tj_lg_pass_t *p, const tj_rx_expr_t *e) {
  if (!e || p->error) return NULL;
  switch (e->kind) {
    case TJ_RX_VAR:
    case TJ_RX_DATAFLOW_VAR:
      return remap_lookup(p, e);
    case TJ_RX_TUPLE: {
      const tj_rx_expr_t **f = TJ_ARENA_ARRAY(p->arena, const tj_rx_expr_t *, e->tuple.n + 1);
      if (!f) return NULL;
      bool changed = false;
      for (int i = 0; i < e->tuple.n; i++) {
        if (!(f[i] = rewrite(p, e->tuple.fields[i]))) return NULL;
        changed |= f[i] != e->tuple.fields[i];
      }
      if (!changed) return e;
      const tj_sinfo_t **fs = TJ_ARENA_ARRAY(p->arena, const tj_sinfo_t *, e->tuple.n + 1);
      const tj_rx_expr_t *t = tj_rx_tuple(p->arena, e->tuple.n, f);
      if (!fs || !t) return NULL;
      bool all = true;
      for (int i = 0; i < e->tuple.n; i++) all &= (fs[i] = f[i]->sinfo) != NULL;
      return tj_rx_with_sinfo(p->arena, t, all ? tj_sinfo_tuple(p->arena, e->tuple.n, fs) : e->sinfo);
    }
    case TJ_RX_TUPLE_GET_ITEM: {
      const tj_rx_expr_t *t = rewrite(p, e->get_item.tuple);
      if (!t || t == e->get_item.tuple) return t;
      const tj_rx_expr_t *g = tj_rx_get_item(p->arena, t, e->get_item.index);
      return g ? tj_rx_with_sinfo(p->arena, g, e->sinfo) : NULL;
    }
    case TJ_RX_CALL:
      return rewrite_call(p, e);
    case TJ_RX_SEQ:
      return rewrite_seq(p, e);
    case TJ_RX_IF: {
      const tj_rx_expr_t *c = rewrite(p, e->if_.cond), *t = rewrite(p, e->if_.then_branch),
                         *f = rewrite(p, e->if_.else_branch);
      if (!c || !t || !f) return NULL;
      if (c == e->if_.cond && t == e->if_.then_branch && f == e->if_.else_branch) return e;
      const tj_rx_expr_t *r = tj_rx_if(p->arena, c, t, f);
      return r ? tj_rx_with_sinfo(p->arena, r, e->sinfo) : NULL;
    }
    case TJ_RX_FUNCTION: {
      const tj_rx_func_t *f = rewrite_func(p, e->function);
      if (!f) return NULL;
      const tj_rx_expr_t *r = f == e->function ? e : tj_rx_function_expr(p->arena, f);
      return r ? tj_rx_with_sinfo(p->arena, r, e->sinfo) : NULL;
    }
    default:
      return e;
  }
}

static const tj_rx_func_t *rewrite_func(tj_lg_pass_t *p, const tj_rx_func_t *f) {
  const tj_rx_expr_t *body = rewrite(p, f->body);
  if (!body) return NULL;
  if (body == f->body) return f;
  tj_rx_func_t *nf = TJ_ARENA_NEW(p->arena, tj_rx_func_t);
  if (!nf) return NULL;
  *nf = *f;
  nf->body = body;
  return nf;
}

tj_status_t *tj_legalize_ops_with(const tj_pass_context_t *ctx, const tj_module_t *in,
                                  const tj_legalize_options_t *options, const tj_module_t **out) {
  tj_lg_pass_t p;
  memset(&p, 0, sizeof p);
  p.arena = ctx->arena;
  p.mod = in;
  p.opts = options;
  for (int i = 0; i < in->n_funcs; i++) {
    const tj_func_entry_t *e = &in->funcs[i];
    if (e->is_prim) continue;
    p.n_remap = 0;
    const tj_rx_func_t *nf = rewrite_func(&p, e->relax);
    if (p.error) return p.error;
    if (!nf) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory rewriting '%s'", e->name);
    if (nf == e->relax) continue;
    tj_func_entry_t ne = *e;
    ne.relax = nf;
    const tj_module_t *m = tj_module_with_func(p.arena, p.mod, ne);
    if (!m) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory");
    p.mod = m;
  }
  *out = p.mod;
  return NULL;
}

tj_status_t *tj_legalize_ops(const tj_pass_context_t *ctx, const tj_module_t *in, const tj_module_t **out) {
  return tj_legalize_ops_with(ctx, in, NULL, out);
}
