/* The call_te builder: placeholders, compute stages as blocks, reads/writes, and
 * the PrimFunc with TVM's create_prim_func structure (see legalize.h). */
#include <string.h>

#include "ir/struct_equal.h"
#include "ir/visit.h"
#include "transforms/legalize/legalize.h"

void tj_lg_te_init(tj_lg_te_t *te, tj_lg_ctx_t *ctx) {
  memset(te, 0, sizeof *te);
  te->ctx = ctx;
  te->arena = ctx->arena;
}

/* ---------------- symbolic shape vars ---------------- */

typedef struct collect_ctx {
  tj_lg_te_t *te;
} collect_ctx_t;

static bool collect_var(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  tj_lg_te_t *te = ((collect_ctx_t *)v->ctx)->te;
  if (e->kind != TJ_TIR_VAR) return true;
  for (int i = 0; i < te->n_syms; i++)
    if (te->sym_from[i] == e) return true;
  if (te->n_syms == TJ_LG_MAX_SYMS) {
    te->failed = true;
    return true;
  }
  /* A fresh var with the same name: the PrimFunc defines its own, as TVM's does. */
  const tj_tir_expr_t *fresh = tj_tir_var(te->arena, e->var.name, e->dtype);
  if (!fresh) te->failed = true;
  te->sym_from[te->n_syms] = e;
  te->sym_to[te->n_syms++] = fresh;
  return true;
}

const tj_tir_expr_t *tj_lg_shape_expr(tj_lg_te_t *te, const tj_tir_expr_t *e) {
  if (!e) {
    te->failed = true;
    return NULL;
  }
  if (e->kind == TJ_TIR_INT_IMM) {
    /* Legalized code is int64 everywhere (create_prim_func(index_dtype="int64")). */
    if (tj_dtype_eq(e->dtype, TJ_I64)) return e;
    return tj_tir_i64(te->arena, e->int_imm);
  }
  collect_ctx_t c = {te};
  tj_tir_visitor_t v = {.expr = collect_var, .ctx = &c};
  tj_tir_visit_expr(&v, e);
  const tj_tir_expr_t *r = tj_tir_substitute_expr(te->arena, e, te->n_syms, te->sym_from, te->sym_to);
  if (!r) te->failed = true;
  return r;
}

/* ---------------- parameters ---------------- */

static bool add_input(tj_lg_te_t *te, const tj_tir_expr_t *param, const tj_buffer_t *buf, const tj_rx_expr_t *arg) {
  if (!param || te->n_inputs == TJ_LG_MAX_PARAMS) {
    te->failed = true;
    return false;
  }
  te->in_params[te->n_inputs] = param;
  te->in_buffers[te->n_inputs] = buf;
  te->call_args[te->n_inputs++] = arg;
  return true;
}

const tj_buffer_t *tj_lg_placeholder(tj_lg_te_t *te, const tj_rx_expr_t *arg) {
  const tj_sinfo_t *s = tj_lg_arg_sinfo(te->arena, arg);
  if (!tj_lg_tensor_known(s)) {
    te->failed = true;
    return NULL;
  }
  const char *name;
  if (tj_rx_is_var(arg)) {
    name = arg->var.name;
  } else {
    /* TVM names non-var placeholders A, B, C, ... by position. */
    name = tj_arena_printf(te->arena, "%c", 'A' + te->n_placeholders % 26);
  }
  te->n_placeholders++;
  int ndim = s->tensor.ndim;
  const tj_tir_expr_t *shape[TJ_LG_MAX_ITERS];
  if (ndim > TJ_LG_MAX_ITERS) {
    te->failed = true;
    return NULL;
  }
  for (int i = 0; i < ndim; i++) shape[i] = tj_lg_shape_expr(te, s->tensor.shape[i]);
  if (te->failed || !name) return NULL;
  const tj_buffer_t *b = tj_buffer_new(te->arena, name, s->tensor.dtype, ndim, shape, NULL);
  if (!b) {
    te->failed = true;
    return NULL;
  }
  add_input(te, tj_tir_var(te->arena, name, TJ_HANDLE), b, arg);
  return b;
}

const tj_tir_expr_t *tj_lg_prim_param(tj_lg_te_t *te, const tj_rx_expr_t *arg) {
  const tj_sinfo_t *s = tj_lg_arg_sinfo(te->arena, arg);
  if (!s || s->kind != TJ_SINFO_PRIM) {
    te->failed = true;
    return NULL;
  }
  const char *name = tj_rx_is_var(arg) ? arg->var.name : "value";
  const tj_tir_expr_t *v = tj_tir_var(te->arena, name, s->prim.dtype);
  return add_input(te, v, NULL, arg) ? v : NULL;
}

const tj_buffer_t *tj_lg_output(tj_lg_te_t *te, const char *name, tj_dtype_t dtype, int ndim,
                                const tj_tir_expr_t *const *shape) {
  if (te->n_outputs == TJ_LG_MAX_PARAMS) {
    te->failed = true;
    return NULL;
  }
  const tj_buffer_t *b = tj_buffer_new(te->arena, name, dtype, ndim, shape, NULL);
  if (!b) te->failed = true;
  te->outputs[te->n_outputs++] = b;
  return b;
}

const tj_buffer_t *tj_lg_alloc(tj_lg_te_t *te, const char *name, tj_dtype_t dtype, int ndim,
                               const tj_tir_expr_t *const *shape) {
  if (te->n_allocs == TJ_LG_MAX_STMTS) {
    te->failed = true;
    return NULL;
  }
  const tj_buffer_t *b = tj_buffer_new(te->arena, name, dtype, ndim, shape, NULL);
  if (!b) te->failed = true;
  te->allocs[te->n_allocs++] = b;
  return b;
}

/* ---------------- stages ---------------- */

void tj_lg_stage_begin(tj_lg_te_t *te, tj_lg_stage_t *st, const char *name, int n,
                       const tj_tir_expr_t *const *extents, const tj_iter_kind_t *kinds,
                       const char *const *loop_names) {
  memset(st, 0, sizeof *st);
  st->name = name;
  if (n > TJ_LG_MAX_ITERS) {
    te->failed = true;
    return;
  }
  st->n_iters = n;
  for (int i = 0; i < n; i++) {
    /* create_prim_func simplifies iteration domains (Analyzer::Simplify) */
    st->extent[i] = extents[i] ? tj_lg_simplify(te->arena, extents[i]) : NULL;
    st->kind[i] = kinds[i];
    st->loop[i] = tj_tir_var(te->arena, loop_names[i], TJ_I64);
    char *ivname = tj_arena_printf(te->arena, "v_%s", loop_names[i]);
    st->iv[i] = ivname ? tj_tir_var(te->arena, ivname, TJ_I64) : NULL;
    if (!st->loop[i] || !st->iv[i] || !extents[i]) te->failed = true;
  }
}

void tj_lg_stage_spatial(tj_lg_te_t *te, tj_lg_stage_t *st, const char *name, int n,
                         const tj_tir_expr_t *const *extents, const char *prefix) {
  tj_iter_kind_t kinds[TJ_LG_MAX_ITERS];
  const char *names[TJ_LG_MAX_ITERS];
  if (n > TJ_LG_MAX_ITERS) {
    te->failed = true;
    return;
  }
  for (int i = 0; i < n; i++) {
    kinds[i] = TJ_ITER_SPATIAL;
    names[i] = tj_arena_printf(te->arena, "%s%d", prefix, i);
    if (!names[i]) {
      te->failed = true;
      return;
    }
  }
  tj_lg_stage_begin(te, st, name, n, extents, kinds, names);
}

/* Buffer accesses of a block body in first-use order, as TVM's block completion
 * collects them: each buffer once, as the point region of its first access. Accesses
 * that differ only in constant indices (`begin[0]`, ..., `begin[3]`) give the hull of
 * those constants (`begin[0:4]`), as TVM's region union does. */
#define MAX_ACCESSES (TJ_LG_MAX_PARAMS + TJ_LG_MAX_STMTS)

typedef struct access {
  const tj_buffer_t *buf;
  int ndim;
  const tj_tir_expr_t *const *idx; /* the first access */
  bool hull;                       /* lo/hi hold the hull of constant indices */
  bool mixed;                      /* a later access differs in a non-constant index */
  int64_t lo[TJ_LG_MAX_ITERS], hi[TJ_LG_MAX_ITERS];
} access_t;

typedef struct access_list {
  int n;
  access_t a[MAX_ACCESSES];
} access_list_t;

typedef struct access_ctx {
  access_list_t reads, writes;
  bool overflow;
} access_ctx_t;

static void first_access(access_t *x, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx) {
  memset(x, 0, sizeof *x);
  x->buf = b;
  x->ndim = n;
  x->idx = idx;
  for (int d = 0; d < n && n <= TJ_LG_MAX_ITERS; d++)
    if (tj_tir_is_const_int(idx[d], &x->lo[d])) x->hi[d] = x->lo[d];
}

/* Widens x by a repeated access, where only constant indices differ. */
static void repeat_access(access_t *x, int n, const tj_tir_expr_t *const *idx) {
  if (x->mixed || n != x->ndim || n > TJ_LG_MAX_ITERS) return;
  int64_t c, first;
  for (int d = 0; d < n; d++) {
    if (tj_struct_equal_tir_expr(x->idx[d], idx[d])) continue;
    if (!tj_tir_is_const_int(x->idx[d], &first) || !tj_tir_is_const_int(idx[d], &c)) {
      x->mixed = true;
      x->hull = false;
      return;
    }
  }
  for (int d = 0; d < n; d++)
    if (tj_tir_is_const_int(idx[d], &c) && tj_tir_is_const_int(x->idx[d], &first)) {
      if (c < x->lo[d]) x->lo[d] = c, x->hull = true;
      if (c > x->hi[d]) x->hi[d] = c, x->hull = true;
    }
}

static void note_access(access_ctx_t *c, access_list_t *l, const tj_buffer_t *b, int n,
                        const tj_tir_expr_t *const *idx) {
  for (int i = 0; i < l->n; i++)
    if (l->a[i].buf == b) {
      repeat_access(&l->a[i], n, idx);
      return;
    }
  if (l->n == MAX_ACCESSES) {
    c->overflow = true;
    return;
  }
  first_access(&l->a[l->n++], b, n, idx);
}

static bool access_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  access_ctx_t *c = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD) note_access(c, &c->reads, e->load.buffer, e->load.n_indices, e->load.indices);
  return true;
}

static bool access_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  access_ctx_t *c = v->ctx;
  if (s->kind == TJ_TIR_BUFFER_STORE)
    note_access(c, &c->writes, s->store.buffer, s->store.n_indices, s->store.indices);
  return true;
}

/* One dim of an access's region: its hull when widened, else the point of the first access. */
static bool region_dim(tj_arena_t *a, const access_t *x, int d, tj_range_t *out) {
  const tj_tir_expr_t *first = x->idx[d];
  int64_t c;
  if (x->hull && tj_tir_is_const_int(first, &c) && x->lo[d] != x->hi[d]) {
    out->min = tj_tir_int(a, first->dtype, x->lo[d]);
    out->extent = tj_tir_int(a, first->dtype, x->hi[d] - x->lo[d] + 1);
  } else {
    out->min = first;
    out->extent = tj_tir_int(a, first->dtype, 1);
  }
  return out->min && out->extent;
}

static tj_buffer_region_t *make_regions(tj_arena_t *a, const access_list_t *l, const access_list_t *exclude,
                                        int *out_n) {
  tj_buffer_region_t *r = TJ_ARENA_ARRAY(a, tj_buffer_region_t, l->n + 1);
  if (!r) return NULL;
  int n = 0;
  for (int i = 0; i < l->n; i++) {
    const access_t *x = &l->a[i];
    bool skip = false;
    for (int j = 0; exclude && j < exclude->n; j++)
      if (exclude->a[j].buf == x->buf) skip = true;
    if (skip) continue;
    tj_range_t *ranges = TJ_ARENA_ARRAY(a, tj_range_t, x->ndim + 1);
    if (!ranges) return NULL;
    for (int d = 0; d < x->ndim; d++)
      if (!region_dim(a, x, d, &ranges[d])) return NULL;
    r[n].buffer = x->buf;
    r[n].ndim = x->ndim;
    r[n++].ranges = ranges;
  }
  *out_n = n;
  return r;
}

/* create_prim_func simplifies the stored value (a compute body, a reduction's
 * update) with Analyzer::Simplify. */
static const tj_tir_stmt_t *simplify_store(tj_arena_t *a, const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_BUFFER_STORE) return s;
  const tj_tir_expr_t *v = tj_lg_simplify(a, s->store.value);
  if (v == s->store.value) return s;
  return tj_tir_store(a, s->store.buffer, s->store.n_indices, s->store.indices, v);
}

void tj_lg_stage_end(tj_lg_te_t *te, tj_lg_stage_t *st, const tj_tir_stmt_t *init, const tj_tir_stmt_t *body) {
  if (te->failed || !body) {
    te->failed = true;
    return;
  }
  tj_arena_t *a = te->arena;
  body = simplify_store(a, body);
  if (!body) {
    te->failed = true;
    return;
  }
  tj_block_t *blk = tj_block_new(a, st->name);
  tj_iter_var_t *ivs = TJ_ARENA_ARRAY(a, tj_iter_var_t, st->n_iters + 1);
  if (!blk || !ivs) {
    te->failed = true;
    return;
  }
  /* A 0-d compute (no axes, no reduction) gets TVM's placeholder iterator
   * `vi = T.axis.spatial(1, T.int64(0))` from create_prim_func. */
  bool scalar = st->n_iters == 0 && !init;
  const tj_tir_expr_t *scalar_binding[1] = {tj_tir_i64(a, 0)};
  if (scalar) {
    ivs[0].var = tj_tir_var(a, "vi", TJ_I64);
    tj_dtype_t dom_dtype = st->int64_scalar_dom ? TJ_I64 : TJ_I32;
    ivs[0].dom.min = tj_tir_int(a, dom_dtype, 0);
    ivs[0].dom.extent = tj_tir_int(a, dom_dtype, 1);
    ivs[0].kind = TJ_ITER_SPATIAL;
    if (!ivs[0].var || !ivs[0].dom.min || !ivs[0].dom.extent || !scalar_binding[0]) te->failed = true;
  }
  for (int i = 0; i < st->n_iters; i++) {
    ivs[i].var = st->iv[i];
    ivs[i].dom.min = tj_tir_i64(a, 0);
    ivs[i].dom.extent = st->extent[i];
    ivs[i].kind = st->kind[i];
  }
  access_ctx_t acc;
  memset(&acc, 0, sizeof acc);
  tj_tir_visitor_t v = {.expr = access_expr, .stmt = access_stmt, .ctx = &acc};
  tj_tir_visit_stmt(&v, body);
  int n_reads = 0, n_writes = 0;
  /* A reduction reads its own output in the update; TVM does not list it. */
  blk->reads = make_regions(a, &acc.reads, init ? &acc.writes : NULL, &n_reads);
  blk->writes = make_regions(a, &acc.writes, NULL, &n_writes);
  blk->n_reads = n_reads;
  blk->n_writes = n_writes;
  blk->n_iter_vars = scalar ? 1 : st->n_iters;
  blk->iter_vars = ivs;
  blk->init = init;
  blk->body = body;
  blk->annotations = st->annotations;
  if (acc.overflow || !blk->reads || !blk->writes || te->failed) {
    te->failed = true;
    return;
  }
  const tj_tir_stmt_t *s = scalar ? tj_tir_realize(a, 1, scalar_binding, tj_tir_bool(a, true), blk)
                                  : tj_tir_realize(a, st->n_iters, st->loop, tj_tir_bool(a, true), blk);
  for (int i = st->n_iters - 1; i >= 0; i--)
    s = tj_tir_for(a, st->loop[i], tj_tir_i64(a, 0), st->extent[i], TJ_FOR_SERIAL, s);
  if (!s || te->n_stmts == TJ_LG_MAX_STMTS) {
    te->failed = true;
    return;
  }
  te->stmts[te->n_stmts++] = s;
}

/* ---------------- the function ---------------- */

/* True when `v` is a whole dim of some parameter buffer: the buffer binds it. */
static bool bound_by_buffer(const tj_lg_te_t *te, const tj_tir_expr_t *v) {
  for (int i = 0; i < te->n_inputs + te->n_outputs; i++) {
    const tj_buffer_t *b = i < te->n_inputs ? te->in_buffers[i] : te->outputs[i - te->n_inputs];
    for (int d = 0; b && d < b->ndim; d++)
      if (b->shape[d] == v) return true;
  }
  for (int i = 0; i < te->n_inputs; i++)
    if (te->in_params[i] == v) return true;
  return false;
}

/* Symbolic vars no parameter buffer binds (an output of shape n // 2, a symbolic
 * arange bound): trailing int64 parameters, passed by the call's tir_vars (TVM's
 * call_te does the same). Returns their count; their Relax-side values in out_from. */
static int unbound_syms(const tj_lg_te_t *te, const tj_tir_expr_t **out_to, const tj_tir_expr_t **out_from) {
  int n = 0;
  for (int i = 0; i < te->n_syms; i++)
    if (!bound_by_buffer(te, te->sym_to[i])) {
      out_to[n] = te->sym_to[i];
      out_from[n++] = te->sym_from[i];
    }
  return n;
}

static const tj_prim_func_t *build_prim_func(tj_lg_te_t *te) {
  tj_arena_t *a = te->arena;
  const tj_tir_expr_t *extra[TJ_LG_MAX_SYMS], *extra_from[TJ_LG_MAX_SYMS];
  int n_extra = unbound_syms(te, extra, extra_from);
  int n = te->n_inputs + te->n_outputs + n_extra;
  const tj_tir_expr_t **params = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, n);
  const tj_buffer_t **bmap = TJ_ARENA_ARRAY(a, const tj_buffer_t *, n);
  tj_prim_func_t *f = TJ_ARENA_NEW(a, tj_prim_func_t);
  tj_block_t *root = tj_block_new(a, te->root_name ? te->root_name : "root");
  if (!params || !bmap || !f || !root || te->n_stmts == 0) return NULL;
  for (int i = 0; i < te->n_inputs; i++) {
    params[i] = te->in_params[i];
    bmap[i] = te->in_buffers[i];
  }
  for (int i = 0; i < te->n_outputs; i++) {
    params[te->n_inputs + i] = tj_tir_var(a, te->outputs[i]->name, TJ_HANDLE);
    bmap[te->n_inputs + i] = te->outputs[i];
    if (!params[te->n_inputs + i]) return NULL;
  }
  for (int i = 0; i < n_extra; i++) {
    params[te->n_inputs + te->n_outputs + i] = extra[i];
    bmap[te->n_inputs + te->n_outputs + i] = NULL;
  }
  root->n_alloc_buffers = te->n_allocs;
  root->alloc_buffers = te->n_allocs ? tj_arena_memdup(a, te->allocs, sizeof(te->allocs[0]) * (size_t)te->n_allocs)
                                     : NULL;
  root->body = tj_tir_seq(a, te->n_stmts, te->stmts);
  f->n_params = n;
  f->params = params;
  f->buffer_map = bmap;
  f->attrs = tj_attrs_set(a, NULL, "tir.noalias", tj_attr_bool(true));
  f->body = tj_tir_realize(a, 0, NULL, tj_tir_bool(a, true), root);
  if (!root->body || !f->attrs || !f->body || (te->n_allocs && !root->alloc_buffers)) return NULL;
  return f;
}

tj_status_t *tj_lg_te_finish(tj_lg_te_t *te, const char *name_hint, const tj_sinfo_t *out_sinfo,
                             const tj_rx_expr_t **out_call) {
  const tj_prim_func_t *f = te->failed ? NULL : build_prim_func(te);
  if (!f || !out_sinfo)
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: cannot build the PrimFunc '%s' (out of memory or "
                                               "more than %d parameters/stages)", name_hint, TJ_LG_MAX_PARAMS);
  const tj_rx_expr_t *gvar = NULL;
  TJ_RETURN_IF_ERROR(tj_lg_add_function(te->ctx, name_hint, f, &gvar));
  const tj_tir_expr_t *extra[TJ_LG_MAX_SYMS], *extra_from[TJ_LG_MAX_SYMS];
  int n_extra = unbound_syms(te, extra, extra_from);
  const tj_rx_expr_t *tir_vars = n_extra ? tj_rx_shape_expr(te->arena, n_extra, extra_from) : NULL;
  if (n_extra && tir_vars) tir_vars = tj_rx_with_sinfo(te->arena, tir_vars, tj_sinfo_shape(te->arena, n_extra, extra_from));
  if (n_extra && !tir_vars) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory building call_tir");
  const tj_rx_expr_t *call = tj_rx_make_call_tir(te->arena, gvar, te->n_inputs, te->call_args, out_sinfo, tir_vars);
  if (!call) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory building call_tir");
  *out_call = call;
  return NULL;
}

/* ---------------- unary elementwise computes ---------------- */

tj_status_t *tj_lg_unary(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const char *name_hint, tj_dtype_t out_dtype,
                         tj_lg_unary_body_fn body, const tj_rx_expr_t **out_expr) {
  return tj_lg_elemwise(ctx, call, name_hint, "compute", "i", out_dtype, body, out_expr);
}

tj_status_t *tj_lg_elemwise(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const char *name_hint, const char *block,
                            const char *loop_prefix, tj_dtype_t out_dtype, tj_lg_unary_body_fn body,
                            const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(ctx->arena, call->call.args[0]);
  if (!tj_lg_tensor_known(xs)) return NULL;
  tj_arena_t *a = ctx->arena;
  const tj_sinfo_t *out_sinfo =
      tj_lg_call_sinfo(call, tj_sinfo_tensor(a, out_dtype, xs->tensor.ndim, xs->tensor.shape));
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  const tj_buffer_t *x = tj_lg_placeholder(&te, call->call.args[0]);
  if (!x) return tj_lg_te_finish(&te, name_hint, NULL, out_expr);
  int n = x->ndim;
  const tj_tir_expr_t *shape[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) shape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, block, out_dtype, n, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, block, n, shape, loop_prefix);
  const tj_tir_expr_t *value = body(a, tj_lg_load(a, x, n, st.iv), out_dtype);
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, value));
  return tj_lg_te_finish(&te, name_hint, out_sinfo, out_expr);
}
