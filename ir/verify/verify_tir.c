/* PrimFunc checks (docs/semantics.md §6.2.2): a root block when there are blocks,
 * every buffer used is in scope (param, root or block allocation, match buffer,
 * Allocate), every var is defined where it is used (params, size vars of matched
 * buffers, loop, iter and let vars), T.reads/T.writes name every buffer the block accesses (by buffer, not by
 * region), block iter vars bound by int values, operand dtypes agree in every binary
 * op, stores keep the buffer's dtype, and op_pattern is a known kind. */
#include <string.h>

#include "ir/verify/verify_internal.h"
#include "ir/visit.h"

typedef struct tir_ctx {
  tj_verify_report_t *r;
  const char *func;
  const char *block;            /* innermost named block, NULL outside blocks */
  const tj_block_t *body_of;    /* the block whose init/body is being walked */
  tj_verify_ptrset_t visible;   /* buffer or data var -> how many scopes hold it */
  tj_verify_ptrset_t vars;      /* TIR var -> how many scopes define it */
} tir_ctx_t;

#define TIR_PROBLEM(c, fmt, ...)                                                                          \
  do {                                                                                                    \
    if ((c)->block)                                                                                       \
      tj_verify_problem((c)->r, "%s: block '%s': " fmt, (c)->func, (c)->block, __VA_ARGS__);              \
    else                                                                                                  \
      tj_verify_problem((c)->r, "%s: " fmt, (c)->func, __VA_ARGS__);                                      \
  } while (0)

static const char *buf_name(const tj_buffer_t *b) { return (b && b->name) ? b->name : "?"; }

static void hold(tir_ctx_t *c, const tj_buffer_t *b, int delta) {
  if (!b) return;
  tj_verify_ptrset_put(&c->visible, b, tj_verify_ptrset_get(&c->visible, b, 0) + delta);
  /* Lowering makes new buffer nodes over the same data (flattening): they are in
   * scope wherever their data var is. */
  if (b->data) tj_verify_ptrset_put(&c->visible, b->data, tj_verify_ptrset_get(&c->visible, b->data, 0) + delta);
}

static bool same_buffer(const tj_buffer_t *a, const tj_buffer_t *b) {
  return a == b || (a && b && a->data && a->data == b->data);
}

static bool in_regions(const tj_buffer_t *b, int n, const tj_buffer_region_t *regions) {
  for (int i = 0; i < n; i++)
    if (same_buffer(regions[i].buffer, b)) return true;
  return false;
}

/* A block that declares its accesses (T.reads/T.writes) must list every buffer its own
 * statements load or store (nested blocks answer for theirs). A reduction loads its
 * output, which T.writes covers. Blocks declaring nothing (the root) are not checked. */
static void check_declared(tir_ctx_t *c, const tj_buffer_t *b, bool store) {
  const tj_block_t *blk = c->body_of;
  if (!blk || !b || blk->n_reads + blk->n_writes == 0) return;
  for (int i = 0; i < blk->n_alloc_buffers; i++)
    if (same_buffer(blk->alloc_buffers[i], b)) return;
  for (int i = 0; i < blk->n_match_buffers; i++)
    if (same_buffer(blk->match_buffers[i].buffer, b)) return;
  if (in_regions(b, blk->n_writes, blk->writes)) return;
  if (store) TIR_PROBLEM(c, "buffer '%s' is stored to but is not in T.writes", buf_name(b));
  else if (!in_regions(b, blk->n_reads, blk->reads))
    TIR_PROBLEM(c, "buffer '%s' is loaded but is not in T.reads or T.writes", buf_name(b));
}

static void define(tir_ctx_t *c, const tj_tir_expr_t *var, int delta) {
  if (var && var->kind == TJ_TIR_VAR) tj_verify_ptrset_put(&c->vars, var, tj_verify_ptrset_get(&c->vars, var, 0) + delta);
}

static bool collect_var(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  if (e->kind == TJ_TIR_VAR) define(v->ctx, e, 1);
  return true;
}

/* Size vars of a matched buffer (function params, block match_buffer) are defined by
 * the match, wherever they appear in its shape, strides or offset. */
static void define_buffer_vars(tir_ctx_t *c, const tj_buffer_t *b) {
  if (!b) return;
  tj_tir_visitor_t v = {.expr = collect_var, .ctx = c};
  for (int i = 0; i < b->ndim; i++) {
    if (b->shape) tj_tir_visit_expr(&v, b->shape[i]);
    if (b->strides) tj_tir_visit_expr(&v, b->strides[i]);
  }
  tj_tir_visit_expr(&v, b->elem_offset);
  define(c, b->data, 1);
}

static void check_buffer_use(tir_ctx_t *c, const tj_buffer_t *b, int n_indices, const char *what) {
  if (!b) {
    TIR_PROBLEM(c, "%s without a buffer", what);
    return;
  }
  bool in_scope = tj_verify_ptrset_get(&c->visible, b, 0) > 0 ||
                  (b->data && tj_verify_ptrset_get(&c->visible, b->data, 0) > 0);
  if (!in_scope)
    TIR_PROBLEM(c, "buffer '%s' is used in a %s but is not a parameter or an allocation in scope", buf_name(b), what);
  if (n_indices >= 0 && n_indices != b->ndim)
    TIR_PROBLEM(c, "%s of buffer '%s' has %d ind%s but the buffer has %d dimension%s", what, buf_name(b), n_indices,
                n_indices == 1 ? "ex" : "ices", b->ndim, b->ndim == 1 ? "" : "s");
}

/* Binary operands must have one dtype. Integer index arithmetic of different widths
 * (int32 literals next to int64 vars) is tolerated: the parser widens those. */
static bool dtypes_agree(tj_dtype_t a, tj_dtype_t b) {
  if (tj_dtype_eq(a, b)) return true;
  return tj_dtype_is_int(a) && tj_dtype_is_int(b) && a.lanes == b.lanes;
}

static void check_operands(tir_ctx_t *c, const char *op, const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  if (!a || !b) {
    TIR_PROBLEM(c, "%s with a missing operand", op);
    return;
  }
  if (!dtypes_agree(a->dtype, b->dtype))
    TIR_PROBLEM(c, "%s of %s and %s without a Cast", op, tj_verify_fmt_dtype(c->r, a->dtype),
                tj_verify_fmt_dtype(c->r, b->dtype));
}

static void check_expr(tir_ctx_t *c, const tj_tir_expr_t *e);

static bool visit_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  tir_ctx_t *c = v->ctx;
  if (e->kind == TJ_TIR_VAR) {
    if (tj_verify_ptrset_get(&c->vars, e, 0) <= 0)
      TIR_PROBLEM(c, "var '%s' is used but not defined in scope", e->var.name ? e->var.name : "?");
    return false;
  }
  if (e->kind == TJ_TIR_LET) {
    check_expr(c, e->let.value);
    define(c, e->let.var, 1);
    check_expr(c, e->let.body);
    define(c, e->let.var, -1);
    return false;
  }
  if (tj_tir_kind_is_binary(e->kind)) {
    check_operands(c, tj_tir_expr_kind_name(e->kind), e->binary.a, e->binary.b);
  } else if (e->kind == TJ_TIR_SELECT) {
    check_operands(c, "Select", e->select.true_value, e->select.false_value);
  } else if (e->kind == TJ_TIR_CALL && e->call.op && strcmp(e->call.op, "tir.if_then_else") == 0) {
    if (e->call.n_args == 3) check_operands(c, "if_then_else", e->call.args[1], e->call.args[2]);
    else TIR_PROBLEM(c, "if_then_else with %d arguments instead of 3", e->call.n_args);
  } else if (e->kind == TJ_TIR_BUFFER_LOAD) {
    check_buffer_use(c, e->load.buffer, e->load.n_indices, "load");
    check_declared(c, e->load.buffer, false);
  }
  return true;
}

static void check_expr(tir_ctx_t *c, const tj_tir_expr_t *e) {
  if (!e) return;
  tj_tir_visitor_t v = {.expr = visit_expr, .ctx = c};
  tj_tir_visit_expr(&v, e);
}

static void check_region(tir_ctx_t *c, const tj_buffer_region_t *reg, const char *what) {
  check_buffer_use(c, reg->buffer, reg->ndim, what);
  for (int i = 0; i < reg->ndim && reg->ranges; i++) {
    check_expr(c, reg->ranges[i].min);
    check_expr(c, reg->ranges[i].extent);
  }
}

static void check_stmt(tir_ctx_t *c, const tj_tir_stmt_t *s);

static void check_iter_bindings(tir_ctx_t *c, const tj_tir_stmt_t *s, const tj_block_t *b) {
  if (s->realize.n_iter_values != b->n_iter_vars)
    TIR_PROBLEM(c, "%d iter var%s but %d binding%s", b->n_iter_vars, b->n_iter_vars == 1 ? "" : "s",
                s->realize.n_iter_values, s->realize.n_iter_values == 1 ? "" : "s");
  for (int i = 0; i < b->n_iter_vars; i++) {
    const tj_tir_expr_t *iv = b->iter_vars[i].var;
    if (!iv || !tj_dtype_is_int(iv->dtype))
      TIR_PROBLEM(c, "iter var %d '%s' is not an integer", i, (iv && iv->var.name) ? iv->var.name : "?");
  }
  for (int i = 0; i < s->realize.n_iter_values; i++) {
    const tj_tir_expr_t *val = s->realize.iter_values ? s->realize.iter_values[i] : NULL;
    if (!val || !tj_dtype_is_int(val->dtype) || val->dtype.lanes != 1)
      TIR_PROBLEM(c, "iter var %d is bound to a %s value, not an integer", i,
                  val ? tj_verify_fmt_dtype(c->r, val->dtype) : "missing");
    else
      check_expr(c, val);
  }
}

/* A buffer an annotation names ({"layout_free_placeholders": [B]}) must be in scope like
 * any use: a pass that renamed B without the annotation leaves a dangling reference. */
static void check_annotation_buffers(tir_ctx_t *c, const tj_attr_value_t *v) {
  if (v->kind == TJ_ATTR_BUFFER) check_buffer_use(c, v->buffer, -1, "block annotation");
  for (int i = 0; v->kind == TJ_ATTR_LIST && i < v->list.n; i++) check_annotation_buffers(c, &v->list.items[i]);
  for (int i = 0; v->kind == TJ_ATTR_DICT && v->dict && i < v->dict->n; i++)
    check_annotation_buffers(c, &v->dict->values[i]);
}

static void check_block(tir_ctx_t *c, const tj_tir_stmt_t *s) {
  const tj_block_t *b = s->realize.block;
  if (!b) {
    TIR_PROBLEM(c, "%s", "block realize without a block");
    return;
  }
  const char *outer = c->block;
  check_expr(c, s->realize.predicate);
  c->block = b->name ? b->name : "";
  check_iter_bindings(c, s, b);
  for (int i = 0; i < b->n_iter_vars; i++) define(c, b->iter_vars[i].var, 1);
  /* Match buffers view outer buffers: check their sources before they come in scope. */
  for (int i = 0; i < b->n_match_buffers; i++) check_region(c, &b->match_buffers[i].source, "match_buffer source");
  for (int i = 0; i < b->n_alloc_buffers; i++) {
    hold(c, b->alloc_buffers[i], 1);
    define(c, b->alloc_buffers[i] ? b->alloc_buffers[i]->data : NULL, 1);
  }
  for (int i = 0; i < b->n_match_buffers; i++) {
    hold(c, b->match_buffers[i].buffer, 1);
    define_buffer_vars(c, b->match_buffers[i].buffer);
  }
  for (int i = 0; i < b->n_reads; i++) check_region(c, &b->reads[i], "T.reads region");
  for (int i = 0; i < b->n_writes; i++) check_region(c, &b->writes[i], "T.writes region");
  for (int i = 0; b->annotations && i < b->annotations->n; i++) check_annotation_buffers(c, &b->annotations->values[i]);
  const tj_block_t *outer_body_of = c->body_of;
  c->body_of = b;
  if (b->init) check_stmt(c, b->init);
  check_stmt(c, b->body);
  c->body_of = outer_body_of;
  for (int i = 0; i < b->n_alloc_buffers; i++) hold(c, b->alloc_buffers[i], -1);
  for (int i = 0; i < b->n_match_buffers; i++) hold(c, b->match_buffers[i].buffer, -1);
  /* Match-defined size vars stay defined: they cannot clash, and TVM keeps them too. */
  for (int i = 0; i < b->n_iter_vars; i++) define(c, b->iter_vars[i].var, -1);
  c->block = outer;
}

static void check_store(tir_ctx_t *c, const tj_tir_stmt_t *s) {
  const tj_buffer_t *b = s->store.buffer;
  check_buffer_use(c, b, s->store.n_indices, "store");
  check_declared(c, b, true);
  for (int i = 0; i < s->store.n_indices && s->store.indices; i++) check_expr(c, s->store.indices[i]);
  const tj_tir_expr_t *v = s->store.value;
  if (!v) {
    TIR_PROBLEM(c, "store to '%s' without a value", buf_name(b));
    return;
  }
  check_expr(c, v);
  if (b && !tj_dtype_eq(tj_dtype_element(v->dtype), tj_dtype_element(b->dtype)))
    TIR_PROBLEM(c, "store of a %s value into %s buffer '%s'", tj_verify_fmt_dtype(c->r, v->dtype),
                tj_verify_fmt_dtype(c->r, b->dtype), buf_name(b));
}

static void check_stmt(tir_ctx_t *c, const tj_tir_stmt_t *s) {
  if (!s) return;
  switch (s->kind) {
    case TJ_TIR_FOR:
      check_expr(c, s->loop.min);
      check_expr(c, s->loop.extent);
      define(c, s->loop.var, 1);
      check_stmt(c, s->loop.body);
      define(c, s->loop.var, -1);
      break;
    case TJ_TIR_BLOCK_REALIZE:
      check_block(c, s);
      break;
    case TJ_TIR_BUFFER_STORE:
      check_store(c, s);
      break;
    case TJ_TIR_LET_STMT:
      check_expr(c, s->let.value);
      define(c, s->let.var, 1);
      check_stmt(c, s->let.body);
      define(c, s->let.var, -1);
      break;
    case TJ_TIR_IF:
      check_expr(c, s->if_.cond);
      check_stmt(c, s->if_.then_stmt);
      check_stmt(c, s->if_.else_stmt);
      break;
    case TJ_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) check_stmt(c, s->seq.stmts ? s->seq.stmts[i] : NULL);
      break;
    case TJ_TIR_EVALUATE:
      check_expr(c, s->evaluate.value);
      break;
    case TJ_TIR_ALLOCATE:
      hold(c, s->allocate.buffer, 1);
      define(c, s->allocate.buffer ? s->allocate.buffer->data : NULL, 1);
      check_stmt(c, s->allocate.body);
      hold(c, s->allocate.buffer, -1);
      break;
    default:
      break;
  }
}


static void check_root(tir_ctx_t *c, const tj_prim_func_t *f) {
  if (!tj_tir_stmt_contains_block(f->body)) return;
  const tj_tir_stmt_t *s = f->body;
  bool rooted = s->kind == TJ_TIR_BLOCK_REALIZE && s->realize.block && s->realize.block->n_iter_vars == 0;
  if (!rooted) TIR_PROBLEM(c, "%s", "the body has blocks but is not a root block");
}

static void check_op_pattern(tir_ctx_t *c, const tj_prim_func_t *f) {
  const tj_attr_value_t *v = tj_attrs_get(f->attrs, "op_pattern");
  if (!v) return;
  if (v->kind != TJ_ATTR_INT) {
    TIR_PROBLEM(c, "%s", "op_pattern is not an integer");
    return;
  }
  static const int64_t valid[] = {0, 1, 2, 3, 4, 7, 8};
  for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++)
    if (v->i == valid[i]) return;
  TIR_PROBLEM(c, "op_pattern %lld is not a pattern kind (0, 1, 2, 3, 4, 7 or 8)", (long long)v->i);
}

void tj_verify_prim_func(tj_verify_report_t *r, const char *name, const tj_prim_func_t *f) {
  tir_ctx_t c = {.r = r, .func = name};
  tj_verify_ptrset_init(&c.visible);
  tj_verify_ptrset_init(&c.vars);
  for (int i = 0; i < f->n_params; i++) {
    define(&c, f->params ? f->params[i] : NULL, 1);
    define_buffer_vars(&c, f->buffer_map ? f->buffer_map[i] : NULL);
  }
  for (int i = 0; i < f->n_params; i++) {
    const tj_tir_expr_t *p = f->params ? f->params[i] : NULL;
    const tj_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
    if (!p) TIR_PROBLEM(&c, "parameter %d is missing", i);
    else if (b && !tj_dtype_eq(p->dtype, TJ_HANDLE))
      TIR_PROBLEM(&c, "parameter %d '%s' maps to buffer '%s' but is a %s, not a handle", i,
                  p->var.name ? p->var.name : "?", buf_name(b), tj_verify_fmt_dtype(r, p->dtype));
    hold(&c, b, 1);
  }
  check_op_pattern(&c, f);
  check_root(&c, f);
  check_stmt(&c, f->body);
  if (c.visible.failed || c.vars.failed) r->out_of_memory = true;
  tj_verify_ptrset_free(&c.visible);
  tj_verify_ptrset_free(&c.vars);
}
