/* Schedule: the dispatcher over the root block's nests and the shared machinery of the
 * rules (schedule.h, schedule_rules.h). */
#include <string.h>

#include "ir/struct_equal.h"
#include "ir/visit.h"
#include "transforms/tir/schedule_rules.h"

/* ---------------- nests ---------------- */

int tj_sched_iter_index(const tj_block_t *b, const tj_tir_expr_t *e) {
  for (int k = 0; k < b->n_iter_vars; k++)
    if (b->iter_vars[k].var == e) return k;
  return -1;
}

bool tj_sched_collect_nest(const tj_tir_stmt_t *s, tj_sched_nest_t *out) {
  memset(out, 0, sizeof *out);
  while (s->kind == TJ_TIR_FOR) {
    int64_t min, ext;
    if (out->n == TJ_SCHED_MAX_NEST || s->loop.kind != TJ_FOR_SERIAL || s->loop.annotations ||
        !tj_tir_is_const_int(s->loop.min, &min) || min != 0 || !tj_tir_is_const_int(s->loop.extent, &ext) || ext <= 0)
      return false;
    out->extent[out->n] = ext;
    out->loops[out->n++] = s;
    s = s->loop.body;
  }
  if (s->kind != TJ_TIR_BLOCK_REALIZE || out->n == 0) return false;
  const tj_block_t *b = s->realize.block;
  int64_t pred;
  if (b->n_iter_vars != out->n || s->realize.n_iter_values != out->n || b->n_match_buffers || b->n_alloc_buffers ||
      !tj_tir_is_const_int(s->realize.predicate, &pred) || pred == 0)
    return false;
  out->realize = s;
  out->block = b;
  for (int i = 0; i < out->n; i++) out->loop_of_iter[i] = -1;
  for (int l = 0; l < out->n; l++) {
    out->iter_of_loop[l] = -1;
    for (int i = 0; i < b->n_iter_vars; i++) {
      if (s->realize.iter_values[i] != out->loops[l]->loop.var || out->loop_of_iter[i] >= 0) continue;
      int64_t mn, ext;
      if (!tj_tir_is_const_int(b->iter_vars[i].dom.min, &mn) || mn != 0 ||
          !tj_tir_is_const_int(b->iter_vars[i].dom.extent, &ext) || ext != out->extent[l])
        return false;
      out->iter_of_loop[l] = i;
      out->loop_of_iter[i] = l;
      break;
    }
    if (out->iter_of_loop[l] < 0) return false;
    if (b->iter_vars[out->iter_of_loop[l]].kind == TJ_ITER_REDUCE) out->n_reduce++;
  }
  return true;
}

int tj_sched_lanes(const tj_sched_ctx_t *c, tj_dtype_t dt) {
  int bits = c->opts->vector_bits > 0 ? c->opts->vector_bits : 128;
  int eb = dt.bits < 32 ? 32 : dt.bits;
  int lanes = bits / eb;
  return lanes < 1 ? 1 : lanes;
}

/* ---------------- checks ---------------- */

typedef struct pure_ctx {
  const tj_block_t *block;
  const tj_tir_stmt_t *root;
  bool ok;
} pure_ctx_t;

static bool same_indices(int n, const tj_tir_expr_t *const *a, const tj_tir_expr_t *const *b) {
  for (int i = 0; i < n; i++)
    if (!tj_struct_equal_tir_expr(a[i], b[i])) return false;
  return true;
}

/* Finds a store to `buf` in s; NULL if none. */
static const tj_tir_stmt_t *find_store(const tj_tir_stmt_t *s, const tj_buffer_t *buf) {
  if (!s) return NULL;
  switch (s->kind) {
    case TJ_TIR_BUFFER_STORE: return s->store.buffer == buf ? s : NULL;
    case TJ_TIR_LET_STMT: return find_store(s->let.body, buf);
    case TJ_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) {
        const tj_tir_stmt_t *r = find_store(s->seq.stmts[i], buf);
        if (r) return r;
      }
      return NULL;
    default: return NULL;
  }
}

static bool pure_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  pure_ctx_t *c = v->ctx;
  if (!c->ok) return false;
  if (e->kind == TJ_TIR_BUFFER_LOAD) {
    const tj_tir_stmt_t *st = find_store(c->root, e->load.buffer);
    if (st && (st->store.n_indices != e->load.n_indices ||
               !same_indices(e->load.n_indices, e->load.indices, st->store.indices)))
      c->ok = false;
  }
  if (e->kind == TJ_TIR_CALL && strncmp(e->call.op, "tir.", 4) != 0) c->ok = false;
  return c->ok;
}

static bool pure_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  pure_ctx_t *c = v->ctx;
  if (!c->ok) return false;
  /* Only stores, lets and sequences: no loops, ifs or blocks inside the block. */
  if (s->kind != TJ_TIR_BUFFER_STORE && s->kind != TJ_TIR_LET_STMT && s->kind != TJ_TIR_SEQ) c->ok = false;
  if (s->kind == TJ_TIR_BUFFER_STORE) {
    /* Every store to one buffer uses the same indices. */
    const tj_tir_stmt_t *first = find_store(c->root, s->store.buffer);
    if (first->store.n_indices != s->store.n_indices ||
        !same_indices(s->store.n_indices, s->store.indices, first->store.indices))
      c->ok = false;
  }
  return c->ok;
}

bool tj_sched_pure_update(const tj_block_t *b, const tj_tir_stmt_t *s) {
  pure_ctx_t c = {b, s, true};
  tj_tir_visitor_t v = {.expr = pure_expr, .stmt = pure_stmt, .ctx = &c};
  tj_tir_visit_stmt(&v, s);
  return c.ok;
}

typedef struct count_ctx {
  const tj_buffer_t *buf;
  int n;
} count_ctx_t;

static bool count_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  count_ctx_t *c = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD && e->load.buffer == c->buf) c->n++;
  return true;
}

static bool count_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  count_ctx_t *c = v->ctx;
  if (s->kind == TJ_TIR_BUFFER_STORE && s->store.buffer == c->buf) c->n++;
  if (s->kind == TJ_TIR_BLOCK_REALIZE)
    for (int i = 0; i < s->realize.block->n_match_buffers; i++)
      if (s->realize.block->match_buffers[i].source.buffer == c->buf) c->n++;
  return true;
}

int tj_sched_count_uses(const tj_tir_stmt_t *s, const tj_buffer_t *buf) {
  if (!s) return 0;
  count_ctx_t c = {buf, 0};
  tj_tir_visitor_t v = {.expr = count_expr, .stmt = count_stmt, .ctx = &c};
  tj_tir_visit_stmt(&v, s);
  return c.n;
}

typedef struct single_load {
  const tj_buffer_t *buf;
  const tj_tir_expr_t *first;
  bool differ;
} single_load_t;

static bool note_load(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  single_load_t *f = v->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD || e->load.buffer != f->buf) return true;
  if (!f->first) f->first = e;
  else
    for (int i = 0; i < e->load.n_indices; i++)
      if (e->load.indices[i] != f->first->load.indices[i]) f->differ = true;
  return true;
}

const tj_tir_expr_t *tj_sched_single_load(const tj_tir_expr_t *e, const tj_buffer_t *buf) {
  single_load_t f = {buf, NULL, false};
  tj_tir_visitor_t v = {.expr = note_load, .ctx = &f};
  tj_tir_visit_expr(&v, e);
  return f.differ ? NULL : f.first;
}

bool tj_sched_is_param(const tj_sched_ctx_t *c, const tj_buffer_t *buf) {
  for (int i = 0; i < c->func->n_params; i++)
    if (c->func->buffer_map && c->func->buffer_map[i] == buf) return true;
  return false;
}

int tj_sched_root_alloc(const tj_sched_ctx_t *c, const tj_buffer_t *buf) {
  for (int i = 0; i < c->root->n_alloc_buffers; i++)
    if (c->root->alloc_buffers[i] == buf) return i;
  return -1;
}

bool tj_sched_store_is_identity(const tj_block_t *b, const tj_tir_stmt_t *store) {
  if (store->store.n_indices != b->n_iter_vars) return false;
  for (int k = 0; k < b->n_iter_vars; k++)
    if (store->store.indices[k] != b->iter_vars[k].var) return false;
  return true;
}

/* ---------------- epilogue fusion ---------------- */

typedef struct identity_ctx {
  const tj_block_t *block;
  const tj_buffer_t *buf;
  bool ok;
} identity_ctx_t;

static bool identity_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  identity_ctx_t *c = v->ctx;
  if (!c->ok) return false;
  if (e->kind == TJ_TIR_BUFFER_LOAD && e->load.buffer == c->buf) {
    if (e->load.n_indices != c->block->n_iter_vars) c->ok = false;
    for (int k = 0; c->ok && k < e->load.n_indices; k++)
      if (e->load.indices[k] != c->block->iter_vars[k].var) c->ok = false;
  }
  if (e->kind == TJ_TIR_CALL && strncmp(e->call.op, "tir.", 4) != 0) c->ok = false;
  return c->ok;
}

static bool same_static_shape(const tj_buffer_t *a, const tj_buffer_t *b) {
  if (a->ndim != b->ndim || a->strides || b->strides || a->elem_offset || b->elem_offset) return false;
  for (int i = 0; i < a->ndim; i++) {
    int64_t x, y;
    if (!tj_tir_is_const_int(a->shape[i], &x) || !tj_tir_is_const_int(b->shape[i], &y) || x != y) return false;
  }
  return true;
}

/* Loads of buf in stage b's value are all at b's identity indices. */
static bool read_at_identity(const tj_block_t *b, const tj_tir_expr_t *value, const tj_buffer_t *buf) {
  identity_ctx_t ic = {b, buf, true};
  tj_tir_visitor_t v = {.expr = identity_expr, .ctx = &ic};
  tj_tir_visit_expr(&v, value);
  return ic.ok;
}

/* stmts[j] is an elementwise map of `cur` (written by stmts[producer]) fusable into
 * the producer; it may also read the intermediates of the stages fused before it
 * (ep->inputs: gelu's x * (0.5 + erf(x / sqrt 2) / 2) reads x twice, a diamond), each
 * at its identity indices. cur may be read by later statements too: then those have to
 * be fused as well, which collect_epilogue checks at the end (whole_diamonds). */
static bool fusable_stage(tj_sched_ctx_t *c, int producer, int j, const tj_buffer_t *cur, const tj_sched_epilogue_t *ep) {
  tj_sched_nest_t nest;
  if (!tj_sched_collect_nest(c->stmts[j], &nest) || nest.n_reduce) return false;
  const tj_block_t *b = nest.block;
  const tj_tir_stmt_t *st = b->body;
  if (b->init || st->kind != TJ_TIR_BUFFER_STORE || !tj_sched_store_is_identity(b, st)) return false;
  const tj_buffer_t *out = st->store.buffer;
  if (out == cur || !same_static_shape(out, cur) || cur->ndim != nest.n) return false;
  if (!tj_dtype_eq(out->dtype, st->store.value->dtype)) return false;
  /* The loops run over the buffer's shape in iter var order. */
  for (int k = 0; k < nest.n; k++) {
    int64_t d;
    tj_tir_is_const_int(cur->shape[k], &d);
    if (nest.extent[nest.loop_of_iter[k]] != d) return false;
  }
  if (tj_sched_count_uses(st, out) != 1) return false; /* the store only */
  if (!read_at_identity(b, st->store.value, cur) || tj_sched_count_uses(st, cur) == 0) return false;
  for (int s = 0; s < ep->n; s++)
    if (!read_at_identity(b, st->store.value, ep->inputs[s])) return false;
  /* cur is a root allocation that no statement before this stage touches but its
   * producer. */
  if (tj_sched_root_alloc(c, cur) < 0 || tj_sched_is_param(c, cur)) return false;
  for (int k = 0; k < j; k++)
    if (k != producer && tj_sched_count_uses(c->stmts[k], cur) > 0) return false;
  return true;
}

/* Nests of at most this many elements may be moved ahead of a producer (they run as
 * plain loops there). */
#define MOVABLE_MAX_WORK 4096

typedef struct writes_ctx {
  const tj_buffer_t *buf;
  bool found;
} writes_ctx_t;

static bool find_write(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  writes_ctx_t *w = v->ctx;
  if (s->kind == TJ_TIR_BUFFER_STORE && s->store.buffer == w->buf) w->found = true;
  if (s->kind == TJ_TIR_BLOCK_REALIZE)
    for (int i = 0; i < s->realize.block->n_match_buffers; i++)
      if (s->realize.block->match_buffers[i].source.buffer == w->buf) w->found = true;
  return !w->found;
}

bool tj_sched_writes(const tj_tir_stmt_t *s, const tj_buffer_t *buf) {
  writes_ctx_t w = {buf, false};
  tj_tir_visitor_t v = {.stmt = find_write, .ctx = &w};
  tj_tir_visit_stmt(&v, s);
  return w.found;
}

/* stmts[k] and stmts[j] may swap: no buffer one writes is touched by the other. */
static bool commute(const tj_sched_ctx_t *c, int k, int j) {
  const tj_tir_stmt_t *a = c->stmts[k], *b = c->stmts[j];
  int n = c->root->n_alloc_buffers + c->func->n_params;
  for (int i = 0; i < n; i++) {
    const tj_buffer_t *buf = i < c->root->n_alloc_buffers ? c->root->alloc_buffers[i]
                                                           : c->func->buffer_map ? c->func->buffer_map[i - c->root->n_alloc_buffers] : NULL;
    if (!buf || !tj_sched_count_uses(a, buf) || !tj_sched_count_uses(b, buf)) continue;
    if (tj_sched_writes(a, buf) || tj_sched_writes(b, buf)) return false;
  }
  return true;
}

/* stmts[j] is small and can run before stmts[from..j). */
static bool movable_before(tj_sched_ctx_t *c, int from, int j) {
  tj_sched_nest_t nest;
  if (!tj_sched_collect_nest(c->stmts[j], &nest) || nest.n_reduce) return false;
  int64_t work = 1;
  for (int l = 0; l < nest.n; l++) work *= nest.extent[l];
  if (work > MOVABLE_MAX_WORK) return false;
  for (int k = from; k < j; k++)
    if (!commute(c, k, j)) return false;
  return true;
}

/* Every intermediate of the first n stages (ep->inputs) is touched by no statement but
 * the first producer and the stages at `at`: otherwise it has to be stored after all. */
static bool whole_diamonds(const tj_sched_ctx_t *c, int first, const tj_sched_epilogue_t *ep, int n, const int *at) {
  for (int s = 0; s < n; s++)
    for (int k = 0; k < c->n_stmts; k++) {
      bool inside = k == first;
      for (int t = 0; t < n && !inside; t++) inside = at[t] == k;
      if (!inside && tj_sched_count_uses(c->stmts[k], ep->inputs[s]) > 0) return false;
    }
  return true;
}

void tj_sched_collect_epilogue(tj_sched_ctx_t *c, int producer, int next, const tj_buffer_t *cur,
                               tj_sched_epilogue_t *ep) {
  memset(ep, 0, sizeof *ep);
  ep->out = cur;
  int first = producer, n_skipped = 0;
  int at[TJ_SCHED_MAX_EPILOGUE], n_before_at[TJ_SCHED_MAX_EPILOGUE];
  for (int j = next; j < c->n_stmts && ep->n < TJ_SCHED_MAX_EPILOGUE; j++) {
    if (!fusable_stage(c, producer, j, cur, ep)) {
      if (n_skipped == TJ_SCHED_MAX_EPILOGUE || !movable_before(c, first, j)) break;
      ep->before[n_skipped++] = c->stmts[j];
      continue;
    }
    tj_sched_nest_t nest;
    tj_sched_collect_nest(c->stmts[j], &nest);
    ep->stores[ep->n] = nest.block->body;
    ep->blocks[ep->n] = nest.block;
    ep->inputs[ep->n] = cur;
    at[ep->n] = j;
    n_before_at[ep->n] = n_skipped; /* those stepped over before a fused stage move */
    ep->n++;
    cur = nest.block->body->store.buffer;
    producer = j; /* the next stage's input is written by this one */
  }
  /* Stages whose intermediates are also read past the last one fused are given back. */
  while (ep->n > 0 && !whole_diamonds(c, first, ep, ep->n, at)) ep->n--;
  ep->out = ep->n ? ep->stores[ep->n - 1]->store.buffer : ep->out;
  ep->span = ep->n ? at[ep->n - 1] - next + 1 : 0;
  ep->n_before = ep->n ? n_before_at[ep->n - 1] : 0;
}

const tj_tir_stmt_t *tj_sched_with_before(tj_sched_ctx_t *c, const tj_sched_epilogue_t *ep, const tj_tir_stmt_t *r) {
  if (!r || !ep->n_before) return r;
  c->stats.moved += ep->n_before;
  const tj_tir_stmt_t *seq[TJ_SCHED_MAX_EPILOGUE + 1];
  for (int i = 0; i < ep->n_before; i++) seq[i] = ep->before[i];
  seq[ep->n_before] = r;
  const tj_tir_stmt_t *s = tj_tir_seq(c->arena, ep->n_before + 1, seq);
  if (!s) c->oom = true;
  return s;
}

const tj_tir_expr_t *tj_sched_apply_epilogue(tj_sched_ctx_t *c, const tj_sched_epilogue_t *ep,
                                             const tj_tir_expr_t *value, const tj_tir_expr_t *const *idx) {
  /* values[s]: the element of ep->inputs[s]; a stage may read any of them */
  const tj_tir_expr_t *values[TJ_SCHED_MAX_EPILOGUE];
  for (int s = 0; s < ep->n && value; s++) {
    const tj_block_t *b = ep->blocks[s];
    const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
    values[s] = value;
    for (int k = 0; k < b->n_iter_vars; k++) vals[k] = tj_sched_cast_like(c, b->iter_vars[k].var, idx[k]);
    const tj_tir_expr_t *e = tj_sched_subst_expr(c, b, ep->stores[s]->store.value, vals);
    for (int t = s; t >= 0 && e; t--) e = tj_sched_replace_load(c, e, ep->inputs[t], values[t]);
    value = e;
    int a = tj_sched_root_alloc(c, ep->inputs[s]);
    if (a >= 0) c->drop_alloc[a] = true;
  }
  if (!value) c->oom = true;
  return value;
}

/* ---------------- builders ---------------- */

const tj_tir_expr_t *tj_sched_var(tj_sched_ctx_t *c, const char *name) {
  const tj_tir_expr_t *v = tj_tir_var(c->arena, name, TJ_I64);
  if (!v) c->oom = true;
  return v;
}

const tj_tir_stmt_t *tj_sched_loop(tj_sched_ctx_t *c, const tj_tir_expr_t *var, int64_t extent, tj_for_kind_t kind,
                                   const tj_tir_stmt_t *body) {
  if (!var || !body) return NULL;
  const tj_tir_stmt_t *s = tj_tir_for(c->arena, var, tj_tir_i64(c->arena, 0), tj_tir_i64(c->arena, extent), kind, body);
  if (!s) c->oom = true;
  return s;
}

const tj_tir_expr_t *tj_sched_add(tj_sched_ctx_t *c, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  int64_t v;
  if (tj_tir_is_const_int(x, &v) && v == 0) return y;
  if (tj_tir_is_const_int(y, &v) && v == 0) return x;
  return tj_tir_binary(c->arena, TJ_TIR_ADD, x, y);
}

const tj_tir_expr_t *tj_sched_mul(tj_sched_ctx_t *c, const tj_tir_expr_t *x, int64_t k) {
  if (!x) return NULL;
  if (k == 1) return x;
  if (k == 0) return tj_tir_i64(c->arena, 0);
  return tj_tir_binary(c->arena, TJ_TIR_MUL, x, tj_tir_i64(c->arena, k));
}

bool tj_sched_unfuse(tj_sched_ctx_t *c, const tj_tir_expr_t *fused, int n, const int64_t *ext,
                     const tj_tir_expr_t **out) {
  int64_t inner = 1;
  for (int k = n - 1; k >= 0; k--) {
    const tj_tir_expr_t *e = fused;
    if (inner > 1) e = tj_tir_binary(c->arena, TJ_TIR_FLOOR_DIV, e, tj_tir_i64(c->arena, inner));
    if (k > 0) e = tj_tir_binary(c->arena, TJ_TIR_FLOOR_MOD, e, tj_tir_i64(c->arena, ext[k]));
    if (ext[k] == 1) e = tj_tir_i64(c->arena, 0);
    if (!e) return !(c->oom = true);
    out[k] = e;
    inner *= ext[k];
  }
  return true;
}

typedef struct replace_ctx {
  const tj_buffer_t *buf;
  const tj_tir_expr_t *value;
} replace_ctx_t;

static const tj_tir_expr_t *replace_expr(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  replace_ctx_t *r = m->ctx;
  return e->kind == TJ_TIR_BUFFER_LOAD && e->load.buffer == r->buf ? r->value : NULL;
}

const tj_tir_expr_t *tj_sched_replace_load(tj_sched_ctx_t *c, const tj_tir_expr_t *e, const tj_buffer_t *buf,
                                           const tj_tir_expr_t *value) {
  if (!e || !value) return NULL;
  replace_ctx_t r = {buf, value};
  tj_tir_mutator_t m = {.arena = c->arena, .expr = replace_expr, .ctx = &r};
  const tj_tir_expr_t *out = tj_tir_mutate_expr(&m, e);
  if (m.failed || !out) return (void)(c->oom = true), NULL;
  return out;
}

static const tj_tir_expr_t **iter_vars(tj_sched_ctx_t *c, const tj_block_t *b) {
  const tj_tir_expr_t **vars = TJ_ARENA_ARRAY(c->arena, const tj_tir_expr_t *, b->n_iter_vars);
  if (!vars) return (void)(c->oom = true), NULL;
  for (int k = 0; k < b->n_iter_vars; k++) vars[k] = b->iter_vars[k].var;
  return vars;
}

const tj_tir_expr_t *tj_sched_subst_expr(tj_sched_ctx_t *c, const tj_block_t *b, const tj_tir_expr_t *e,
                                         const tj_tir_expr_t *const *values) {
  const tj_tir_expr_t **vars = iter_vars(c, b);
  for (int k = 0; vars && k < b->n_iter_vars; k++)
    if (!values[k]) return (void)(c->oom = true), NULL;
  const tj_tir_expr_t *r = vars ? tj_tir_substitute_expr(c->arena, e, b->n_iter_vars, vars, values) : NULL;
  if (!r) c->oom = true;
  return r;
}

const tj_tir_stmt_t *tj_sched_subst_stmt(tj_sched_ctx_t *c, const tj_block_t *b, const tj_tir_stmt_t *s,
                                         const tj_tir_expr_t *const *values) {
  const tj_tir_expr_t **vars = iter_vars(c, b);
  for (int k = 0; vars && k < b->n_iter_vars; k++)
    if (!values[k]) return (void)(c->oom = true), NULL;
  const tj_tir_stmt_t *r = vars ? tj_tir_substitute_stmt(c->arena, s, b->n_iter_vars, vars, values) : NULL;
  if (!r) c->oom = true;
  return r;
}

const tj_tir_expr_t *tj_sched_cast_like(tj_sched_ctx_t *c, const tj_tir_expr_t *var, const tj_tir_expr_t *value) {
  if (!value) return NULL;
  if (tj_dtype_eq(var->dtype, value->dtype)) return value;
  int64_t k;
  const tj_tir_expr_t *r =
      tj_tir_is_const_int(value, &k) ? tj_tir_int(c->arena, var->dtype, k) : tj_tir_cast(c->arena, var->dtype, value);
  if (!r) c->oom = true;
  return r;
}

const tj_tir_expr_t *tj_sched_producer_value(tj_sched_ctx_t *c, const tj_block_t *b, const tj_tir_expr_t *const *idx) {
  const tj_tir_expr_t *vals[TJ_SCHED_MAX_NEST];
  if (b->n_iter_vars > TJ_SCHED_MAX_NEST) return NULL;
  for (int d = 0; d < b->n_iter_vars; d++)
    if (!(vals[d] = tj_sched_cast_like(c, b->iter_vars[d].var, idx[d]))) return NULL;
  return tj_sched_subst_expr(c, b, b->body->store.value, vals);
}

typedef struct producer_ctx {
  tj_sched_ctx_t *c;
  const tj_block_t *block;
  const tj_buffer_t *buf;
} producer_ctx_t;

/* buf[idx] -> the producer's value at idx (loads inside idx inlined first) */
static const tj_tir_expr_t *inline_producer_load(tj_tir_mutator_t *m, const tj_tir_expr_t *e) {
  producer_ctx_t *pc = m->ctx;
  if (e->kind != TJ_TIR_BUFFER_LOAD || e->load.buffer != pc->buf) return NULL;
  const tj_tir_expr_t *idx[TJ_SCHED_MAX_NEST], *r = NULL;
  if (e->load.n_indices == pc->block->n_iter_vars && e->load.n_indices <= TJ_SCHED_MAX_NEST) {
    int d = 0;
    while (d < e->load.n_indices && (idx[d] = tj_tir_mutate_expr(m, e->load.indices[d]))) d++;
    if (d == e->load.n_indices) r = tj_sched_producer_value(pc->c, pc->block, idx);
  }
  if (!r) m->failed = true;
  return r;
}

const tj_tir_expr_t *tj_sched_inline_producer(tj_sched_ctx_t *c, const tj_tir_expr_t *e, const tj_block_t *b,
                                              const tj_buffer_t *buf) {
  if (!e) return NULL;
  producer_ctx_t pc = {c, b, buf};
  tj_tir_mutator_t m = {.arena = c->arena, .expr = inline_producer_load, .ctx = &pc};
  const tj_tir_expr_t *r = tj_tir_mutate_expr(&m, e);
  return m.failed ? NULL : r;
}

/* ---------------- the pass ---------------- */

/* The full and column reductions first: the conv rule would take a column sum
 * (out[s] += x[k, s]) as a conv without vectorizing across s, and a unit-spatial
 * (keepdims) full reduction must not fall to the row rule's serial row. Neither
 * matches a conv or matmul (their loads end in a reduce var). 1x1 convs (NCHW) before
 * the general conv rule: they take a GEMM tile along the flattened pixels; so do
 * depthwise convs and pools over NCHW planes (schedule_depthwise.c). Global pooling
 * (a reduction over whole planes, with its elementwise stages) goes first: the conv
 * rule would repack the input channels-last on every call, and the row fusion would
 * run a mean without keepdims as a scalar chain over both reduce loops. 3x3 stride-1
 * NCHW convs by Winograd transforms (schedule_winograd.c, default float mode) before the conv rule,
 * which would otherwise take them; so do the NHWC ones (schedule_winograd_nhwc.c). */
static const tj_sched_rule_fn rules[] = {tj_sched_rule_global_pool,      tj_sched_rule_row_fusion,
                                         tj_sched_rule_full_reduction,   tj_sched_rule_column_reduction,
                                         tj_sched_rule_winograd,        tj_sched_rule_winograd_nhwc,
                                         tj_sched_rule_pointwise,
                                         tj_sched_rule_plane_window,    tj_sched_rule_conv,
                                         tj_sched_rule_injective,       tj_sched_rule_reduction};

static int count_flat(const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_SEQ) return 1;
  int n = 0;
  for (int i = 0; i < s->seq.n; i++) n += count_flat(s->seq.stmts[i]);
  return n;
}

static void flatten_seq(const tj_tir_stmt_t *s, const tj_tir_stmt_t **out, int *n) {
  if (s->kind != TJ_TIR_SEQ) {
    out[(*n)++] = s;
    return;
  }
  for (int i = 0; i < s->seq.n; i++) flatten_seq(s->seq.stmts[i], out, n);
}

static tj_status_t *oom(const char *name) {
  return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "Schedule: '%s': out of memory", name ? name : "?");
}

tj_status_t *tj_tir_schedule(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                             const tj_tir_schedule_options_t *opts, const tj_prim_func_t **out,
                             tj_tir_schedule_stats_t *stats) {
  if (stats) memset(stats, 0, sizeof *stats);
  if (opts && opts->prepacked) opts->prepacked->n = 0;
  *out = f;
  const tj_tir_stmt_t *body = f->body;
  if (!opts || !opts->enabled || !body || body->kind != TJ_TIR_BLOCK_REALIZE) return NULL;
  const tj_block_t *root = body->realize.block;
  if (root->n_iter_vars || root->init || root->n_match_buffers) return NULL;
  tj_sched_ctx_t c = {.arena = arena, .opts = opts, .func = f, .root = root};
  /* FuseTIR nests sequences: flatten them into one list of nests. */
  int cap = count_flat(root->body);
  const tj_tir_stmt_t **flat = TJ_ARENA_ARRAY(arena, const tj_tir_stmt_t *, cap);
  if (!flat) return oom(name);
  c.n_stmts = 0;
  flatten_seq(root->body, flat, &c.n_stmts);
  c.stmts = flat;
  c.drop_alloc = TJ_ARENA_ARRAY(arena, bool, root->n_alloc_buffers + 1);
  const tj_tir_stmt_t **outs = TJ_ARENA_ARRAY(arena, const tj_tir_stmt_t *, c.n_stmts);
  if (!c.drop_alloc || !outs) return oom(name);
  memset(c.drop_alloc, 0, sizeof(bool) * (size_t)(root->n_alloc_buffers + 1));
  int n_out = 0;
  bool changed = false;
  for (int i = 0; i < c.n_stmts;) {
    int used = 0;
    const tj_tir_stmt_t *r = NULL;
    for (size_t k = 0; k < sizeof rules / sizeof rules[0] && !used && !c.oom; k++) used = rules[k](&c, i, &r);
    if (c.oom) return oom(name);
    if (used && !r) return oom(name);
    if (!used) {
      outs[n_out++] = c.stmts[i++];
      continue;
    }
    outs[n_out++] = r;
    i += used;
    changed = true;
  }
  if (stats) *stats = c.stats;
  if (!changed) return NULL;
  tj_block_t *nb = tj_block_new(arena, root->name);
  tj_prim_func_t *nf = TJ_ARENA_NEW(arena, tj_prim_func_t);
  const tj_buffer_t **allocs = TJ_ARENA_ARRAY(arena, const tj_buffer_t *, root->n_alloc_buffers + 1);
  const tj_tir_stmt_t *seq = tj_tir_seq(arena, n_out, outs);
  if (!nb || !nf || !allocs || !seq) return oom(name);
  *nb = *root;
  nb->n_alloc_buffers = 0;
  for (int i = 0; i < root->n_alloc_buffers; i++)
    if (!c.drop_alloc[i]) allocs[nb->n_alloc_buffers++] = root->alloc_buffers[i];
  nb->alloc_buffers = allocs;
  nb->body = seq;
  const tj_tir_stmt_t *realize = tj_tir_realize(arena, body->realize.n_iter_values, body->realize.iter_values,
                                                body->realize.predicate, nb);
  if (!realize) return oom(name);
  *nf = *f;
  nf->body = realize;
  TJ_RETURN_IF_ERROR(tj_sched_append_prepacked(&c, name, nf));
  *out = nf;
  return NULL;
}
