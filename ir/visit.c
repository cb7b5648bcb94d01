#include "ir/visit.h"

#include <string.h>

/* ======================= TIR visitor ======================= */

static void visit_exprs(tj_tir_visitor_t *v, int n, const tj_tir_expr_t *const *es) {
  for (int i = 0; i < n; i++) tj_tir_visit_expr(v, es[i]);
}

static void visit_region(tj_tir_visitor_t *v, const tj_buffer_region_t *r) {
  for (int i = 0; i < r->ndim; i++) {
    tj_tir_visit_expr(v, r->ranges[i].min);
    tj_tir_visit_expr(v, r->ranges[i].extent);
  }
}

void tj_tir_visit_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  if (!e) return;
  if (v->expr && !v->expr(v, e)) return;
  switch (e->kind) {
    case TJ_TIR_INT_IMM: case TJ_TIR_FLOAT_IMM: case TJ_TIR_STRING_IMM: case TJ_TIR_VAR:
      break;
    case TJ_TIR_NOT: case TJ_TIR_CAST:
      tj_tir_visit_expr(v, e->unary.operand);
      break;
    case TJ_TIR_SELECT:
      tj_tir_visit_expr(v, e->select.cond);
      tj_tir_visit_expr(v, e->select.true_value);
      tj_tir_visit_expr(v, e->select.false_value);
      break;
    case TJ_TIR_BUFFER_LOAD:
      visit_exprs(v, e->load.n_indices, e->load.indices);
      break;
    case TJ_TIR_LET:
      tj_tir_visit_expr(v, e->let.var);
      tj_tir_visit_expr(v, e->let.value);
      tj_tir_visit_expr(v, e->let.body);
      break;
    case TJ_TIR_CALL:
      visit_exprs(v, e->call.n_args, e->call.args);
      break;
    case TJ_TIR_RAMP:
      tj_tir_visit_expr(v, e->ramp.base);
      tj_tir_visit_expr(v, e->ramp.stride);
      break;
    case TJ_TIR_BROADCAST:
      tj_tir_visit_expr(v, e->broadcast.value);
      break;
    default: /* binary kinds */
      tj_tir_visit_expr(v, e->binary.a);
      tj_tir_visit_expr(v, e->binary.b);
      break;
  }
}

static void visit_block(tj_tir_visitor_t *v, const tj_block_t *b) {
  if (v->block && !v->block(v, b)) return;
  for (int i = 0; i < b->n_iter_vars; i++) {
    tj_tir_visit_expr(v, b->iter_vars[i].dom.min);
    tj_tir_visit_expr(v, b->iter_vars[i].dom.extent);
  }
  for (int i = 0; i < b->n_reads; i++) visit_region(v, &b->reads[i]);
  for (int i = 0; i < b->n_writes; i++) visit_region(v, &b->writes[i]);
  for (int i = 0; i < b->n_match_buffers; i++) visit_region(v, &b->match_buffers[i].source);
  tj_tir_visit_stmt(v, b->init);
  tj_tir_visit_stmt(v, b->body);
}

void tj_tir_visit_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  if (!s) return;
  if (v->stmt && !v->stmt(v, s)) return;
  switch (s->kind) {
    case TJ_TIR_FOR:
      tj_tir_visit_expr(v, s->loop.var);
      tj_tir_visit_expr(v, s->loop.min);
      tj_tir_visit_expr(v, s->loop.extent);
      tj_tir_visit_stmt(v, s->loop.body);
      break;
    case TJ_TIR_BLOCK_REALIZE:
      visit_exprs(v, s->realize.n_iter_values, s->realize.iter_values);
      tj_tir_visit_expr(v, s->realize.predicate);
      visit_block(v, s->realize.block);
      break;
    case TJ_TIR_BUFFER_STORE:
      visit_exprs(v, s->store.n_indices, s->store.indices);
      tj_tir_visit_expr(v, s->store.value);
      break;
    case TJ_TIR_LET_STMT:
      tj_tir_visit_expr(v, s->let.var);
      tj_tir_visit_expr(v, s->let.value);
      tj_tir_visit_stmt(v, s->let.body);
      break;
    case TJ_TIR_IF:
      tj_tir_visit_expr(v, s->if_.cond);
      tj_tir_visit_stmt(v, s->if_.then_stmt);
      tj_tir_visit_stmt(v, s->if_.else_stmt);
      break;
    case TJ_TIR_SEQ:
      for (int i = 0; s->seq.stmts && i < s->seq.n; i++) tj_tir_visit_stmt(v, s->seq.stmts[i]);
      break;
    case TJ_TIR_EVALUATE:
      tj_tir_visit_expr(v, s->evaluate.value);
      break;
    case TJ_TIR_ALLOCATE:
      tj_tir_visit_stmt(v, s->allocate.body);
      break;
    default:
      break;
  }
}

/* ======================= TIR mutator ======================= */

#define FAIL_IF_NULL(m, p) \
  do {                     \
    if (!(p)) {            \
      (m)->failed = true;  \
      return NULL;         \
    }                      \
  } while (0)

/* Mutates an expression array; returns the input array when nothing changed. */
static const tj_tir_expr_t *const *mutate_exprs(tj_tir_mutator_t *m, int n, const tj_tir_expr_t *const *es,
                                                 bool *changed) {
  const tj_tir_expr_t **out = NULL;
  for (int i = 0; i < n; i++) {
    const tj_tir_expr_t *x = tj_tir_mutate_expr(m, es[i]);
    if (!x) return NULL;
    if (x != es[i] && !out) {
      out = TJ_ARENA_ARRAY(m->arena, const tj_tir_expr_t *, n);
      if (!out) {
        m->failed = true;
        return NULL;
      }
      memcpy(out, es, sizeof(*es) * (size_t)i);
    }
    if (out) out[i] = x;
  }
  if (out) *changed = true;
  return out ? out : es;
}

const tj_buffer_t *tj_tir_mutate_buffer(tj_tir_mutator_t *m, const tj_buffer_t *b) {
  if (!b || !m->buffer) return b;
  const tj_buffer_t *r = m->buffer(m, b);
  return r ? r : b;
}

static const tj_tir_expr_t *map_var(tj_tir_mutator_t *m, const tj_tir_expr_t *var) {
  if (!m->var) return var;
  const tj_tir_expr_t *r = m->var(m, var);
  return r ? r : var;
}

const tj_tir_expr_t *tj_tir_mutate_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  if (!e || m->failed) return e;
  const tj_tir_expr_t *r = m->expr ? m->expr(m, e) : NULL; /* NULL: the default */
  return r ? r : m->failed ? NULL : tj_tir_mutate_expr_children(m, e);
}

const tj_tir_stmt_t *tj_tir_mutate_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  if (!s || m->failed) return s;
  const tj_tir_stmt_t *r = m->stmt ? m->stmt(m, s) : NULL; /* NULL: the default */
  return r ? r : m->failed ? NULL : tj_tir_mutate_stmt_children(m, s);
}

const tj_tir_expr_t *tj_tir_mutate_expr_children(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  tj_arena_t *a = m->arena;
  bool changed = false;
  const tj_tir_expr_t *r = e;
  switch (e->kind) {
    case TJ_TIR_INT_IMM: case TJ_TIR_FLOAT_IMM: case TJ_TIR_STRING_IMM:
      return e;
    case TJ_TIR_VAR:
      return map_var(m, e);
    case TJ_TIR_NOT: case TJ_TIR_CAST: {
      const tj_tir_expr_t *x = tj_tir_mutate_expr(m, e->unary.operand);
      if (!x) return NULL;
      if (x == e->unary.operand) return e;
      r = e->kind == TJ_TIR_NOT ? tj_tir_not(a, x) : tj_tir_cast(a, e->dtype, x);
      break;
    }
    case TJ_TIR_SELECT: {
      const tj_tir_expr_t *c = tj_tir_mutate_expr(m, e->select.cond);
      const tj_tir_expr_t *t = tj_tir_mutate_expr(m, e->select.true_value);
      const tj_tir_expr_t *f = tj_tir_mutate_expr(m, e->select.false_value);
      if (!c || !t || !f) return NULL;
      if (c == e->select.cond && t == e->select.true_value && f == e->select.false_value) return e;
      r = tj_tir_select(a, c, t, f);
      break;
    }
    case TJ_TIR_BUFFER_LOAD: {
      const tj_buffer_t *buf = tj_tir_mutate_buffer(m, e->load.buffer);
      const tj_tir_expr_t *const *idx = mutate_exprs(m, e->load.n_indices, e->load.indices, &changed);
      if (m->failed) return NULL;
      if (!changed && buf == e->load.buffer) return e;
      r = tj_tir_load(a, buf, e->load.n_indices, idx);
      break;
    }
    case TJ_TIR_LET: {
      const tj_tir_expr_t *var = map_var(m, e->let.var);
      const tj_tir_expr_t *val = tj_tir_mutate_expr(m, e->let.value);
      const tj_tir_expr_t *body = tj_tir_mutate_expr(m, e->let.body);
      if (!val || !body) return NULL;
      if (var == e->let.var && val == e->let.value && body == e->let.body) return e;
      r = tj_tir_let(a, var, val, body);
      break;
    }
    case TJ_TIR_CALL: {
      const tj_tir_expr_t *const *args = mutate_exprs(m, e->call.n_args, e->call.args, &changed);
      if (m->failed) return NULL;
      if (!changed) return e;
      r = tj_tir_call(a, e->dtype, e->call.op, e->call.n_args, args);
      break;
    }
    case TJ_TIR_RAMP: {
      const tj_tir_expr_t *b = tj_tir_mutate_expr(m, e->ramp.base);
      const tj_tir_expr_t *s = tj_tir_mutate_expr(m, e->ramp.stride);
      if (!b || !s) return NULL;
      if (b == e->ramp.base && s == e->ramp.stride) return e;
      r = tj_tir_ramp(a, b, s, e->dtype.lanes);
      break;
    }
    case TJ_TIR_BROADCAST: {
      const tj_tir_expr_t *v = tj_tir_mutate_expr(m, e->broadcast.value);
      if (!v) return NULL;
      if (v == e->broadcast.value) return e;
      r = tj_tir_broadcast(a, v, e->dtype.lanes);
      break;
    }
    default: {
      const tj_tir_expr_t *x = tj_tir_mutate_expr(m, e->binary.a);
      const tj_tir_expr_t *y = tj_tir_mutate_expr(m, e->binary.b);
      if (!x || !y) return NULL;
      if (x == e->binary.a && y == e->binary.b) return e;
      r = tj_tir_binary(a, e->kind, x, y);
      break;
    }
  }
  FAIL_IF_NULL(m, r);
  return r;
}

static bool mutate_region(tj_tir_mutator_t *m, const tj_buffer_region_t *in, tj_buffer_region_t *out) {
  bool changed = false;
  tj_range_t *ranges = TJ_ARENA_ARRAY(m->arena, tj_range_t, in->ndim > 0 ? in->ndim : 1);
  if (!ranges) {
    m->failed = true;
    return false;
  }
  for (int i = 0; i < in->ndim; i++) {
    ranges[i].min = tj_tir_mutate_expr(m, in->ranges[i].min);
    ranges[i].extent = tj_tir_mutate_expr(m, in->ranges[i].extent);
    if (ranges[i].min != in->ranges[i].min || ranges[i].extent != in->ranges[i].extent) changed = true;
  }
  out->buffer = tj_tir_mutate_buffer(m, in->buffer);
  out->ndim = in->ndim;
  out->ranges = changed ? ranges : in->ranges;
  return changed || out->buffer != in->buffer;
}

static const tj_buffer_region_t *mutate_regions(tj_tir_mutator_t *m, int n, const tj_buffer_region_t *in,
                                                bool *changed) {
  if (n == 0) return in;
  tj_buffer_region_t *out = TJ_ARENA_ARRAY(m->arena, tj_buffer_region_t, n);
  if (!out) {
    m->failed = true;
    return in;
  }
  bool any = false;
  for (int i = 0; i < n; i++) any |= mutate_region(m, &in[i], &out[i]);
  if (any) *changed = true;
  return any ? out : in;
}

static const tj_attrs_t *mutate_attrs(tj_tir_mutator_t *m, const tj_attrs_t *attrs, bool *changed);

/* A buffer named in an annotation ({"layout_free_placeholders": [B]}) follows B's renames. */
static tj_attr_value_t mutate_attr_value(tj_tir_mutator_t *m, const tj_attr_value_t *v, bool *changed) {
  tj_attr_value_t r = *v;
  if (v->kind == TJ_ATTR_BUFFER) {
    r.buffer = tj_tir_mutate_buffer(m, v->buffer);
    if (r.buffer != v->buffer) *changed = true;
  } else if (v->kind == TJ_ATTR_DICT) {
    r.dict = mutate_attrs(m, v->dict, changed);
  } else if (v->kind == TJ_ATTR_LIST && v->list.n) {
    tj_attr_value_t *items = TJ_ARENA_ARRAY(m->arena, tj_attr_value_t, v->list.n);
    if (!items) return m->failed = true, r;
    bool any = false;
    for (int i = 0; i < v->list.n; i++) items[i] = mutate_attr_value(m, &v->list.items[i], &any);
    if (any) r.list.items = items, *changed = true;
  }
  return r;
}

static bool attrs_name_buffers(const tj_attrs_t *attrs);

static bool attr_names_buffers(const tj_attr_value_t *v) {
  if (v->kind == TJ_ATTR_BUFFER) return true;
  if (v->kind == TJ_ATTR_DICT) return attrs_name_buffers(v->dict);
  for (int i = 0; v->kind == TJ_ATTR_LIST && i < v->list.n; i++)
    if (attr_names_buffers(&v->list.items[i])) return true;
  return false;
}

static bool attrs_name_buffers(const tj_attrs_t *attrs) {
  for (int i = 0; attrs && i < attrs->n; i++)
    if (attr_names_buffers(&attrs->values[i])) return true;
  return false;
}

static const tj_attrs_t *mutate_attrs(tj_tir_mutator_t *m, const tj_attrs_t *attrs, bool *changed) {
  if (!m->buffer || !attrs_name_buffers(attrs)) return attrs; /* the common case: nothing to map */
  tj_attrs_t *out = TJ_ARENA_NEW(m->arena, tj_attrs_t);
  tj_attr_value_t *values = TJ_ARENA_ARRAY(m->arena, tj_attr_value_t, attrs->n);
  if (!out || !values) return m->failed = true, attrs;
  bool any = false;
  for (int i = 0; i < attrs->n; i++) values[i] = mutate_attr_value(m, &attrs->values[i], &any);
  if (!any) return attrs;
  *out = *attrs;
  out->values = values;
  *changed = true;
  return out;
}

const tj_block_t *tj_tir_mutate_block(tj_tir_mutator_t *m, const tj_block_t *b) {
  bool changed = false;
  tj_block_t *nb = TJ_ARENA_NEW(m->arena, tj_block_t);
  if (!nb) {
    m->failed = true;
    return NULL;
  }
  *nb = *b;
  if (b->n_iter_vars) {
    tj_iter_var_t *ivs = TJ_ARENA_ARRAY(m->arena, tj_iter_var_t, b->n_iter_vars);
    if (!ivs) return m->failed = true, NULL;
    for (int i = 0; i < b->n_iter_vars; i++) {
      ivs[i] = b->iter_vars[i];
      ivs[i].var = map_var(m, b->iter_vars[i].var);
      ivs[i].dom.min = tj_tir_mutate_expr(m, b->iter_vars[i].dom.min);
      ivs[i].dom.extent = tj_tir_mutate_expr(m, b->iter_vars[i].dom.extent);
      if (ivs[i].var != b->iter_vars[i].var || ivs[i].dom.min != b->iter_vars[i].dom.min ||
          ivs[i].dom.extent != b->iter_vars[i].dom.extent)
        changed = true;
    }
    nb->iter_vars = ivs;
  }
  nb->reads = mutate_regions(m, b->n_reads, b->reads, &changed);
  nb->writes = mutate_regions(m, b->n_writes, b->writes, &changed);
  if (b->n_alloc_buffers) {
    const tj_buffer_t **allocs = TJ_ARENA_ARRAY(m->arena, const tj_buffer_t *, b->n_alloc_buffers);
    if (!allocs) return m->failed = true, NULL;
    for (int i = 0; i < b->n_alloc_buffers; i++) {
      allocs[i] = tj_tir_mutate_buffer(m, b->alloc_buffers[i]);
      if (allocs[i] != b->alloc_buffers[i]) changed = true;
    }
    nb->alloc_buffers = allocs;
  }
  if (b->n_match_buffers) {
    tj_match_buffer_t *mbs = TJ_ARENA_ARRAY(m->arena, tj_match_buffer_t, b->n_match_buffers);
    if (!mbs) return m->failed = true, NULL;
    for (int i = 0; i < b->n_match_buffers; i++) {
      mbs[i].buffer = tj_tir_mutate_buffer(m, b->match_buffers[i].buffer);
      if (mutate_region(m, &b->match_buffers[i].source, &mbs[i].source) ||
          mbs[i].buffer != b->match_buffers[i].buffer)
        changed = true;
    }
    nb->match_buffers = mbs;
  }
  nb->annotations = mutate_attrs(m, b->annotations, &changed);
  nb->init = b->init ? tj_tir_mutate_stmt(m, b->init) : NULL;
  nb->body = tj_tir_mutate_stmt(m, b->body);
  if (m->failed) return NULL;
  if (nb->init != b->init || nb->body != b->body) changed = true;
  return changed ? nb : b;
}

const tj_tir_stmt_t *tj_tir_mutate_stmt_children(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  tj_arena_t *a = m->arena;
  bool changed = false;
  const tj_tir_stmt_t *r = s;
  switch (s->kind) {
    case TJ_TIR_FOR: {
      const tj_tir_expr_t *var = map_var(m, s->loop.var);
      const tj_tir_expr_t *min = tj_tir_mutate_expr(m, s->loop.min);
      const tj_tir_expr_t *ext = tj_tir_mutate_expr(m, s->loop.extent);
      const tj_tir_stmt_t *body = tj_tir_mutate_stmt(m, s->loop.body);
      if (m->failed) return NULL;
      if (var == s->loop.var && min == s->loop.min && ext == s->loop.extent && body == s->loop.body) return s;
      tj_tir_stmt_t *c = (tj_tir_stmt_t *)tj_tir_for(a, var, min, ext, s->loop.kind, body);
      if (c) c->loop.annotations = s->loop.annotations;
      r = c;
      break;
    }
    case TJ_TIR_BLOCK_REALIZE: {
      const tj_tir_expr_t *const *vals =
          mutate_exprs(m, s->realize.n_iter_values, s->realize.iter_values, &changed);
      const tj_tir_expr_t *pred = tj_tir_mutate_expr(m, s->realize.predicate);
      const tj_block_t *blk = tj_tir_mutate_block(m, s->realize.block);
      if (m->failed) return NULL;
      if (!changed && pred == s->realize.predicate && blk == s->realize.block) return s;
      r = tj_tir_realize(a, s->realize.n_iter_values, vals, pred, blk);
      break;
    }
    case TJ_TIR_BUFFER_STORE: {
      const tj_buffer_t *buf = tj_tir_mutate_buffer(m, s->store.buffer);
      const tj_tir_expr_t *const *idx = mutate_exprs(m, s->store.n_indices, s->store.indices, &changed);
      const tj_tir_expr_t *val = tj_tir_mutate_expr(m, s->store.value);
      if (m->failed) return NULL;
      if (!changed && buf == s->store.buffer && val == s->store.value) return s;
      r = tj_tir_store(a, buf, s->store.n_indices, idx, val);
      break;
    }
    case TJ_TIR_LET_STMT: {
      const tj_tir_expr_t *var = map_var(m, s->let.var);
      const tj_tir_expr_t *val = tj_tir_mutate_expr(m, s->let.value);
      const tj_tir_stmt_t *body = tj_tir_mutate_stmt(m, s->let.body);
      if (m->failed) return NULL;
      if (var == s->let.var && val == s->let.value && body == s->let.body) return s;
      r = tj_tir_let_stmt(a, var, val, body);
      break;
    }
    case TJ_TIR_IF: {
      const tj_tir_expr_t *c = tj_tir_mutate_expr(m, s->if_.cond);
      const tj_tir_stmt_t *t = tj_tir_mutate_stmt(m, s->if_.then_stmt);
      const tj_tir_stmt_t *e = s->if_.else_stmt ? tj_tir_mutate_stmt(m, s->if_.else_stmt) : NULL;
      if (m->failed) return NULL;
      if (c == s->if_.cond && t == s->if_.then_stmt && e == s->if_.else_stmt) return s;
      r = tj_tir_if(a, c, t, e);
      break;
    }
    case TJ_TIR_SEQ: {
      const tj_tir_stmt_t **out = TJ_ARENA_ARRAY(a, const tj_tir_stmt_t *, s->seq.n > 0 ? s->seq.n : 1);
      FAIL_IF_NULL(m, out);
      for (int i = 0; i < s->seq.n; i++) {
        out[i] = tj_tir_mutate_stmt(m, s->seq.stmts[i]);
        if (out[i] != s->seq.stmts[i]) changed = true;
      }
      if (m->failed) return NULL;
      if (!changed) return s;
      r = tj_tir_seq(a, s->seq.n, out);
      break;
    }
    case TJ_TIR_EVALUATE: {
      const tj_tir_expr_t *v = tj_tir_mutate_expr(m, s->evaluate.value);
      if (!v) return NULL;
      if (v == s->evaluate.value) return s;
      r = tj_tir_evaluate(a, v);
      break;
    }
    case TJ_TIR_ALLOCATE: {
      const tj_buffer_t *buf = tj_tir_mutate_buffer(m, s->allocate.buffer);
      const tj_tir_stmt_t *body = tj_tir_mutate_stmt(m, s->allocate.body);
      if (m->failed) return NULL;
      if (buf == s->allocate.buffer && body == s->allocate.body) return s;
      r = tj_tir_allocate(a, buf, body);
      break;
    }
    default:
      return s;
  }
  FAIL_IF_NULL(m, r);
  return r;
}

tj_status_t *tj_tir_mutate_prim_func_body(tj_tir_mutator_t *m, const tj_prim_func_t *f, tj_status_t *const *hook_error,
                                          const char *pass, const char *func_name, const tj_prim_func_t **out) {
  const tj_tir_stmt_t *body = m->failed ? NULL : tj_tir_mutate_stmt(m, f->body);
  if (hook_error && *hook_error) return *hook_error;
  tj_prim_func_t *nf = body && !m->failed && body != f->body ? TJ_ARENA_NEW(m->arena, tj_prim_func_t) : NULL;
  if (body == f->body && !m->failed) return *out = f, NULL;
  if (!nf) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "%s: '%s': out of memory", pass, func_name ? func_name : "?");
  *nf = *f;
  nf->body = body;
  *out = nf;
  return NULL;
}

static bool find_block(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  bool *found = v->ctx;
  if (s->kind == TJ_TIR_BLOCK_REALIZE) *found = true;
  return !*found;
}

static bool skip_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  (void)v, (void)e;
  return false;
}

bool tj_tir_stmt_contains_block(const tj_tir_stmt_t *s) {
  bool found = false;
  tj_tir_visitor_t v = {.expr = skip_expr, .stmt = find_block, .ctx = &found};
  tj_tir_visit_stmt(&v, s);
  return found;
}

typedef struct find_var {
  const tj_tir_expr_t *var;
  bool found;
} find_var_t;

static bool find_var(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  find_var_t *f = v->ctx;
  if (e == f->var) f->found = true;
  return !f->found;
}

bool tj_tir_expr_uses_var(const tj_tir_expr_t *e, const tj_tir_expr_t *var) {
  find_var_t f = {var, false};
  tj_tir_visitor_t v = {.expr = find_var, .ctx = &f};
  tj_tir_visit_expr(&v, e);
  return f.found;
}

/* ---- substitution ---- */
typedef struct subst_ctx {
  int n;
  const tj_tir_expr_t *const *vars;
  const tj_tir_expr_t *const *values;
} subst_ctx_t;

static const tj_tir_expr_t *subst_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  if (e->kind != TJ_TIR_VAR) return NULL;
  const subst_ctx_t *c = m->ctx;
  for (int i = 0; i < c->n; i++)
    if (c->vars[i] == e) return c->values[i];
  return e;
}

const tj_tir_expr_t *tj_tir_substitute_expr(tj_arena_t *a, const tj_tir_expr_t *e, int n,
                                            const tj_tir_expr_t *const *vars, const tj_tir_expr_t *const *values) {
  subst_ctx_t c = {n, vars, values};
  tj_tir_mutator_t m = {.arena = a, .expr = subst_expr, .ctx = &c};
  const tj_tir_expr_t *r = tj_tir_mutate_expr(&m, e);
  return m.failed ? NULL : r;
}

const tj_tir_stmt_t *tj_tir_substitute_stmt(tj_arena_t *a, const tj_tir_stmt_t *s, int n,
                                            const tj_tir_expr_t *const *vars, const tj_tir_expr_t *const *values) {
  subst_ctx_t c = {n, vars, values};
  tj_tir_mutator_t m = {.arena = a, .expr = subst_expr, .ctx = &c};
  const tj_tir_stmt_t *r = tj_tir_mutate_stmt(&m, s);
  return m.failed ? NULL : r;
}

/* ======================= Relax visitor ======================= */


void tj_rx_visit_expr(tj_rx_visitor_t *v, const tj_rx_expr_t *e) {
  if (!e) return;
  if (v->expr && !v->expr(v, e, false)) return;
  switch (e->kind) {
    case TJ_RX_TUPLE:
      for (int i = 0; i < e->tuple.n; i++) tj_rx_visit_expr(v, e->tuple.fields[i]);
      break;
    case TJ_RX_TUPLE_GET_ITEM:
      tj_rx_visit_expr(v, e->get_item.tuple);
      break;
    case TJ_RX_CALL:
      tj_rx_visit_expr(v, e->call.callee);
      for (int i = 0; i < e->call.n_args; i++) tj_rx_visit_expr(v, e->call.args[i]);
      break;
    case TJ_RX_IF:
      tj_rx_visit_expr(v, e->if_.cond);
      tj_rx_visit_expr(v, e->if_.then_branch);
      tj_rx_visit_expr(v, e->if_.else_branch);
      break;
    case TJ_RX_SEQ:
      for (int b = 0; b < e->seq.n_blocks; b++) {
        const tj_rx_block_t *blk = &e->seq.blocks[b];
        for (int i = 0; i < blk->n_bindings; i++) {
          const tj_rx_binding_t *bind = &blk->bindings[i];
          if (v->binding) v->binding(v, bind, blk->is_dataflow);
          tj_rx_visit_expr(v, bind->value);
          if (v->expr) v->expr(v, bind->var, true);
        }
      }
      tj_rx_visit_expr(v, e->seq.body);
      break;
    case TJ_RX_FUNCTION:
      tj_rx_visit_func(v, e->function);
      break;
    default:
      break;
  }
}

void tj_rx_visit_func(tj_rx_visitor_t *v, const tj_rx_func_t *f) {
  for (int i = 0; i < f->n_params; i++)
    if (v->expr) v->expr(v, f->params[i], true);
  tj_rx_visit_expr(v, f->body);
}
