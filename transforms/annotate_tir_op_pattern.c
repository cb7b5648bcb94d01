/* AnnotateTIROpPattern (docs/semantics.md §3): writes the `op_pattern` attr of
 * every PrimFunc from a block-by-block analysis of its loads and stores, as TVM's
 * PatternKindAnalyzer does. Anything unexpected degrades to Opaque; the analysis
 * never fails. */
#include <string.h>

#include "ir/visit.h"
#include "support/alloc.h"
#include "support/vec.h"
#include "transforms/graph_partitioner.h"
#include "transforms/transforms.h"

const char *tj_op_pattern_name(tj_op_pattern_t p) {
  switch (p) {
    case TJ_PATTERN_ELEMWISE: return "kElemWise";
    case TJ_PATTERN_BROADCAST: return "kBroadcast";
    case TJ_PATTERN_INJECTIVE: return "kInjective";
    case TJ_PATTERN_COMM_REDUCE: return "kCommReduce";
    case TJ_PATTERN_OUT_EWISE_FUSABLE: return "kOutEWiseFusable";
    case TJ_PATTERN_TUPLE: return "kTuple";
    default: return "kOpaque";
  }
}

static tj_op_pattern_t max_pattern(tj_op_pattern_t a, tj_op_pattern_t b) { return a > b ? a : b; }

/* TVM compares index expressions by object identity. A parsed bare variable is one
 * node at every use; literals may be shared by a parser, but TVM never sees them as
 * the same object, so they never count as "the same index" (§3.3 note). */
static bool same_index(const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  return a == b && a->kind != TJ_TIR_INT_IMM && a->kind != TJ_TIR_FLOAT_IMM;
}

static bool same_indices(int n, const tj_tir_expr_t *const *a, int m, const tj_tir_expr_t *const *b) {
  if (n != m) return false;
  for (int i = 0; i < n; i++)
    if (!same_index(a[i], b[i])) return false;
  return true;
}

/* ---- "does this expression use a variable from a set" ---- */
typedef struct var_use_ctx {
  int n;
  const tj_tir_expr_t *const *vars;
  bool want_inside; /* true: look for a var in the set; false: a var outside it */
  bool found;
  const tj_tir_expr_t *first; /* the first matching var found */
} var_use_ctx_t;

static bool var_use_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  var_use_ctx_t *c = v->ctx;
  if (c->found) return false;
  if (e->kind != TJ_TIR_VAR) return true;
  bool inside = false;
  for (int i = 0; i < c->n; i++)
    if (c->vars[i] == e) inside = true;
  if (inside == c->want_inside) {
    c->found = true;
    c->first = e;
  }
  return true;
}

static bool uses_var(const tj_tir_expr_t *e, int n, const tj_tir_expr_t *const *vars, bool want_inside,
                     const tj_tir_expr_t **out_first) {
  var_use_ctx_t c = {n, vars, want_inside, false, NULL};
  tj_tir_visitor_t v = {.expr = var_use_expr, .ctx = &c};
  tj_tir_visit_expr(&v, e);
  if (out_first) *out_first = c.first;
  return c.found;
}

/* ---- index-pair patterns ---- */
static bool is_elemwise_pair(const tj_tir_stmt_t *store, const tj_tir_expr_t *load) {
  return same_indices(store->store.n_indices, store->store.indices, load->load.n_indices, load->load.indices);
}

static bool is_const(const tj_tir_expr_t *e, int64_t v) {
  int64_t x;
  return tj_tir_is_const_int(e, &x) && x == v;
}

/* Each load index (skipping unit dims indexed by 0) appears among the store indices
 * at a non-decreasing position. */
static bool is_broadcast_pair(const tj_tir_stmt_t *store, const tj_tir_expr_t *load) {
  const tj_buffer_t *lb = load->load.buffer;
  int n_store = store->store.n_indices;
  int j = 0;
  for (int i = 0; i < load->load.n_indices; i++) {
    if (i < lb->ndim && is_const(lb->shape[i], 1) && is_const(load->load.indices[i], 0)) continue;
    while (j < n_store && !same_index(store->store.indices[j], load->load.indices[i])) j++;
    if (j == n_store) return false;
  }
  return true;
}

static bool store_indices_are_vars(const tj_tir_stmt_t *store) {
  for (int i = 0; i < store->store.n_indices; i++)
    if (store->store.indices[i]->kind != TJ_TIR_VAR) return false;
  return true;
}

/* All store indices are plain vars and the load indices use only those vars. */
static bool is_injective_pair(const tj_tir_stmt_t *store, const tj_tir_expr_t *load) {
  if (!store_indices_are_vars(store)) return false;
  for (int i = 0; i < load->load.n_indices; i++)
    if (uses_var(load->load.indices[i], store->store.n_indices, store->store.indices, false, NULL)) return false;
  return true;
}

/* The load lacks at least one of the store's index vars (so its value is reused). */
static bool allows_reuse(const tj_tir_stmt_t *store, const tj_tir_expr_t *load) {
  if (!store_indices_are_vars(store)) return false;
  for (int i = 0; i < store->store.n_indices; i++) {
    const tj_tir_expr_t *var = store->store.indices[i];
    bool used = false;
    for (int k = 0; k < load->load.n_indices && !used; k++)
      used = uses_var(load->load.indices[k], 1, &var, true, NULL);
    if (!used) return true;
  }
  return false;
}

static const tj_tir_expr_t *strip_casts(const tj_tir_expr_t *e) {
  while (e && e->kind == TJ_TIR_CAST) e = e->unary.operand;
  return e;
}

/* S[idx] = S[idx] + a * b with loads a, b that each allow reuse: matmul, conv. */
static bool is_fma(const tj_tir_stmt_t *body) {
  if (!body || body->kind != TJ_TIR_BUFFER_STORE) return false;
  const tj_tir_expr_t *add = strip_casts(body->store.value);
  if (!add || add->kind != TJ_TIR_ADD) return false;
  const tj_tir_expr_t *acc = strip_casts(add->binary.a);
  const tj_tir_expr_t *mul = strip_casts(add->binary.b);
  if (!acc || acc->kind != TJ_TIR_BUFFER_LOAD || !mul || mul->kind != TJ_TIR_MUL) return false;
  if (acc->load.buffer != body->store.buffer || !is_elemwise_pair(body, acc)) return false;
  const tj_tir_expr_t *a = strip_casts(mul->binary.a), *b = strip_casts(mul->binary.b);
  if (!a || !b || a->kind != TJ_TIR_BUFFER_LOAD || b->kind != TJ_TIR_BUFFER_LOAD) return false;
  return allows_reuse(body, a) && allows_reuse(body, b);
}

/* Every index that uses a reduce var is exactly that var. */
static bool is_pure_reduce(int n_reduce, const tj_tir_expr_t *const *reduce_vars, const tj_tir_expr_t *load) {
  for (int i = 0; i < load->load.n_indices; i++) {
    const tj_tir_expr_t *e = load->load.indices[i], *var = NULL;
    if (uses_var(e, n_reduce, reduce_vars, true, &var) && e != var) return false;
  }
  return true;
}

/* ---- the analyser ---- */
typedef struct analyzer {
  tj_op_pattern_t kind;
  const tj_prim_func_t *func;
  const tj_tir_stmt_t *store;     /* the block's store (the last one) */
  TJ_VEC(const tj_tir_expr_t *) loads; /* heap */
  bool oom;
} analyzer_t;

static bool analyzer_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  analyzer_t *an = v->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD) return true;
  if (!tj_vec_push(&an->loads, e)) an->oom = true;
  return true;
}

static bool analyzer_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  analyzer_t *an = v->ctx;
  if (s->kind != TJ_TIR_BUFFER_STORE) return true;
  if (an->store && !same_indices(s->store.n_indices, s->store.indices, an->store->store.n_indices,
                                 an->store->store.indices)) {
    an->kind = TJ_PATTERN_OPAQUE;
    return false;
  }
  an->store = s;
  return true;
}

static bool is_param_buffer(const tj_prim_func_t *f, const tj_buffer_t *b) {
  for (int i = 0; i < f->n_params; i++)
    if (f->buffer_map && f->buffer_map[i] == b) return true;
  return false;
}

static bool is_output_block(const analyzer_t *an, const tj_block_t *b) {
  for (int i = 0; i < b->n_writes; i++)
    if (is_param_buffer(an->func, b->writes[i].buffer)) return true;
  return false;
}

static tj_op_pattern_t index_pair_pattern(const analyzer_t *an) {
  tj_op_pattern_t p = TJ_PATTERN_ELEMWISE;
  bool has_elemwise = false;
  for (int i = 0; i < an->loads.n; i++) {
    const tj_tir_expr_t *load = an->loads.items[i];
    if (is_elemwise_pair(an->store, load)) {
      has_elemwise = true;
    } else if (is_broadcast_pair(an->store, load)) {
      p = max_pattern(p, TJ_PATTERN_BROADCAST);
    } else if (is_injective_pair(an->store, load)) {
      p = max_pattern(p, TJ_PATTERN_INJECTIVE);
    } else {
      return TJ_PATTERN_OPAQUE;
    }
  }
  /* C[i, j] = A[i, j] + B[j] is ElemWise, not Broadcast. */
  if (has_elemwise && p == TJ_PATTERN_BROADCAST) p = TJ_PATTERN_ELEMWISE;
  return p;
}

static void analyze_reduction_block(analyzer_t *an, const tj_block_t *b) {
  const tj_tir_expr_t **reduce_vars = tj_malloc(sizeof(*reduce_vars) * (size_t)(b->n_iter_vars + 1));
  if (!reduce_vars) {
    an->oom = true;
    return;
  }
  int n_reduce = 0;
  for (int i = 0; i < b->n_iter_vars; i++)
    if (b->iter_vars[i].kind == TJ_ITER_REDUCE) reduce_vars[n_reduce++] = b->iter_vars[i].var;
  if (n_reduce == 0) {
    an->kind = TJ_PATTERN_OPAQUE;
  } else if (is_fma(b->body)) {
    an->kind = max_pattern(an->kind, TJ_PATTERN_OUT_EWISE_FUSABLE);
  } else {
    tj_op_pattern_t p = TJ_PATTERN_COMM_REDUCE;
    for (int i = 0; i < an->loads.n; i++)
      if (!is_pure_reduce(n_reduce, reduce_vars, an->loads.items[i])) p = TJ_PATTERN_OUT_EWISE_FUSABLE; /* pooling */
    an->kind = max_pattern(an->kind, p);
  }
  tj_free(reduce_vars);
}

static bool analyzer_block(tj_tir_visitor_t *v, const tj_block_t *b) {
  analyzer_t *an = v->ctx;
  if (strcmp(b->name, "root") == 0) {
    tj_tir_visit_stmt(v, b->body);
    return false;
  }
  an->loads.n = 0;
  an->store = NULL;
  tj_tir_visit_stmt(v, b->body);
  if (!an->store) {
    an->kind = TJ_PATTERN_OPAQUE;
    return false;
  }
  tj_op_pattern_t pair = index_pair_pattern(an);
  if (pair != TJ_PATTERN_OPAQUE) {
    /* reduce, then an elementwise epilogue writing the output: softmax, layer_norm */
    if (is_output_block(an, b) && an->kind == TJ_PATTERN_COMM_REDUCE)
      an->kind = TJ_PATTERN_OUT_EWISE_FUSABLE;
    else
      an->kind = max_pattern(an->kind, pair);
    return false;
  }
  analyze_reduction_block(an, b);
  return false;
}

tj_op_pattern_t tj_analyze_op_pattern(const tj_prim_func_t *f) {
  analyzer_t an = {.kind = TJ_PATTERN_ELEMWISE, .func = f};
  tj_tir_visitor_t v = {.expr = analyzer_expr, .stmt = analyzer_stmt, .block = analyzer_block, .ctx = &an};
  tj_tir_visit_stmt(&v, f->body);
  tj_vec_free(&an.loads);
  return an.oom ? TJ_PATTERN_OPAQUE : an.kind;
}

tj_status_t *tj_annotate_tir_op_pattern(const tj_pass_context_t *ctx, const tj_module_t *in,
                                        const tj_module_t **out) {
  tj_func_entry_t *funcs = TJ_ARENA_ARRAY(ctx->arena, tj_func_entry_t, in->n_funcs + 1);
  if (!funcs) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "AnnotateTIROpPattern: out of memory");
  for (int i = 0; i < in->n_funcs; i++) {
    funcs[i] = in->funcs[i];
    const tj_prim_func_t *f = in->funcs[i].prim;
    if (!in->funcs[i].is_prim || tj_attrs_get_int(f->attrs, "op_pattern", 0) != 0) continue;
    tj_prim_func_t *nf = TJ_ARENA_NEW(ctx->arena, tj_prim_func_t);
    if (!nf) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "AnnotateTIROpPattern: out of memory");
    *nf = *f;
    nf->attrs = tj_attrs_set(ctx->arena, f->attrs, "op_pattern", tj_attr_int(tj_analyze_op_pattern(f)));
    if (!nf->attrs) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "AnnotateTIROpPattern: out of memory");
    funcs[i].prim = nf;
  }
  tj_module_t *m = tj_module_new(ctx->arena, in->n_funcs, funcs, in->attrs);
  if (!m) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "AnnotateTIROpPattern: out of memory");
  m->global_infos = in->global_infos;
  *out = m;
  return NULL;
}
