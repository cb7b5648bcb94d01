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
#include "ir/rx_mutator.h"
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
  tj_status_t *error;
  /* hash[i] is the struct hash of hashed[i], the PrimFunc at funcs[i] when it was
   * computed: adding a function compares its hash with every PrimFunc's, and hashing
   * them all again per add was quadratic (44% of MobileNetV2's load). */
  const tj_prim_func_t **hashed;
  uint64_t *hash;
  int cap_hashed;
  tj_rx_mutator_t *mutator; /* the function being rewritten: where tj_lg_emit emits */
};

/* ---------------- module functions ---------------- */

/* The struct hash of funcs[i] (a PrimFunc), computed once per function. */
static uint64_t func_hash(tj_lg_pass_t *p, int i) {
  const tj_prim_func_t *f = p->mod->funcs[i].prim;
  if (i < p->cap_hashed && p->hashed[i] == f) return p->hash[i];
  uint64_t h = tj_struct_hash_prim_func(f);
  if (i >= p->cap_hashed) { /* grow; on OOM just do not remember */
    int cap = p->cap_hashed ? p->cap_hashed : 64;
    while (cap <= i) cap *= 2;
    const tj_prim_func_t **fs = TJ_ARENA_ARRAY(p->arena, const tj_prim_func_t *, cap);
    uint64_t *hs = TJ_ARENA_ARRAY(p->arena, uint64_t, cap);
    if (!fs || !hs) return h;
    memset(fs, 0, sizeof *fs * (size_t)cap);
    if (p->cap_hashed) memcpy(fs, p->hashed, sizeof *fs * (size_t)p->cap_hashed);
    if (p->cap_hashed) memcpy(hs, p->hash, sizeof *hs * (size_t)p->cap_hashed);
    p->hashed = fs, p->hash = hs, p->cap_hashed = cap;
  }
  p->hashed[i] = f;
  p->hash[i] = h;
  return h;
}

tj_status_t *tj_lg_add_function(tj_lg_ctx_t *ctx, const char *name_hint, const tj_prim_func_t *f,
                                const tj_rx_expr_t **out_gvar) {
  tj_lg_pass_t *p = ctx->pass;
  uint64_t h = tj_struct_hash_prim_func(f);
  for (int i = 0; i < p->mod->n_funcs; i++) {
    const tj_func_entry_t *e = &p->mod->funcs[i];
    if (!e->is_prim || func_hash(p, i) != h) continue;
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

/* Bindings a legalization emits before its result (TVM's bb.emit / bb.match_cast in
 * a FLegalize) go into the block being rebuilt, ahead of the binding of the call. */
tj_status_t *tj_lg_emit(tj_lg_ctx_t *ctx, const tj_rx_expr_t *value, const tj_sinfo_t *match_cast,
                        const tj_rx_expr_t **out_var) {
  tj_rx_mutator_t *m = ctx->pass->mutator;
  if (!m) return tj_status_new(TJ_ERR_INTERNAL, "LegalizeOps: a legalization emitted outside a function");
  const tj_rx_expr_t *var = NULL;
  if (!match_cast) {
    var = tj_rx_emit_fresh(m, value);
  } else {
    int k = m->n_fresh++;
    var = tj_rx_new_var(m, k == 0 ? "lv" : tj_arena_printf(m->arena, "lv%d", k), match_cast);
    if (var && !tj_rx_emit(m, var, value, match_cast)) var = NULL;
  }
  if (!var) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory emitting a binding");
  *out_var = var;
  return NULL;
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
  return o && o->only_custom ? NULL : tj_legalizer_lookup(op);
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

static const tj_rx_expr_t *legalize_call(tj_lg_pass_t *p, tj_rx_mutator_t *builder, const tj_rx_expr_t *call) {
  for (int round = 0; round < MAX_RELEGALIZE; round++) {
    if (call->kind != TJ_RX_CALL || call->call.callee->kind != TJ_RX_OP) return call;
    tj_legalize_fn fn = find_legalizer(p, call->call.callee->op.name);
    if (!fn || !all_shapes_known(p->arena, call)) return call;
    tj_lg_ctx_t ctx = {p->arena, p, builder};
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

/* Calls are legalized post-order, after their arguments (the shared rewriter re-creates
 * binding vars whose struct info changes and remaps their uses). */
static const tj_rx_expr_t *legalize_post(tj_rx_mutator_t *m, const tj_rx_expr_t *e) {
  tj_lg_pass_t *p = m->ctx;
  if (e->kind != TJ_RX_CALL) return e;
  const tj_rx_expr_t *r = legalize_call(p, m, e);
  if (!r && p->error) {
    tj_rx_mutator_fail(m, p->error);
    p->error = NULL;
  }
  /* A legalization may read a tuple var's fields (concat): its get-item arguments
   * become bindings of their own, as TVM's BlockBuilder emits them. */
  tj_call_tir_view_t v;
  if (r && r != e && tj_rx_as_call_tir(r, &v))
    for (int i = 0; i < v.n_args; i++)
      if (v.args[i]->kind == TJ_RX_TUPLE_GET_ITEM) return tj_rx_normalize(m, r);
  return r;
}

/* TVMScript stores a binding's annotation as the call's struct info (TVM's Emit): the
 * creation ops' legalizations read their output dtype from it, so
 * `gv: R.Tensor((2, 3), "float32") = R.full_like(x_int32, v)` makes a float32 PrimFunc
 * (docs: tvm-ops.md §0.2). tvmjit's reader keeps the inferred struct info on the call,
 * so the annotation's dtype is put back here for those ops. */
static bool reads_annotated_dtype(const char *op) {
  static const char *const ops[] = {"relax.full", "relax.full_like", "relax.ones", "relax.ones_like",
                                    "relax.zeros", "relax.zeros_like"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(op, ops[i]) == 0) return true;
  return false;
}

static void legalize_binding(tj_rx_mutator_t *m, const tj_rx_binding_t *b) {
  const tj_rx_expr_t *v = b->value;
  const tj_sinfo_t *ann = b->var->sinfo, *got = v->sinfo;
  if (!b->match_cast && v->kind == TJ_RX_CALL && v->call.callee->kind == TJ_RX_OP &&
      reads_annotated_dtype(v->call.callee->op.name) && tj_sinfo_is_tensor(ann) && tj_sinfo_is_tensor(got) &&
      ann->tensor.ndim == got->tensor.ndim && !tj_dtype_is_void(ann->tensor.dtype) &&
      !tj_dtype_eq(ann->tensor.dtype, got->tensor.dtype)) {
    tj_sinfo_t *s = TJ_ARENA_NEW(m->arena, tj_sinfo_t);
    tj_rx_binding_t nb = *b;
    if (s) {
      *s = *got;
      s->tensor.dtype = ann->tensor.dtype;
      nb.value = tj_rx_with_sinfo(m->arena, v, s);
    }
    if (!s || !nb.value) {
      tj_rx_mutator_fail(m, tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory"));
      return;
    }
    tj_rx_mutator_default_binding(m, &nb);
    return;
  }
  tj_rx_mutator_default_binding(m, b);
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
    tj_rx_mutator_t rw;
    tj_rx_mutator_init(&rw, p.arena, "LegalizeOps");
    rw.post = legalize_post;
    rw.binding = legalize_binding;
    rw.ctx = &p;
    p.mutator = &rw;
    const tj_rx_func_t *nf = tj_rx_mutate_func(&rw, e->relax);
    p.mutator = NULL;
    if (rw.error) return rw.error;
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
