/* Structural equality and hashing with TVM's meaning (src/node/structural_equal.cc and
 * the SEqualReduce methods of the TIR and Relax nodes).
 *
 * Bound things (PrimFunc params and their buffers, loop vars, block iter vars, let vars,
 * alloc/match buffers, Relax params and binding vars, symbolic shape vars at their
 * first occurrence in a defining position) are mapped by position: the first time a
 * definition is met on both sides the pair is recorded, and every later use must agree
 * with that record. Names of bound things are ignored. Anything met outside a
 * definition that was never recorded is free and must be the same node on both sides.
 *
 * "Defining position" follows TVM's DefEqual, which compares the whole definition with
 * free-var mapping on: a buffer's shape, strides and elem_offset, a Relax var's struct
 * info, a match_cast's struct info. So `n` first seen in `A: T.Buffer((n,))` or in
 * `x: R.Tensor(("n",))` is bound there.
 *
 * Block names are ignored unless TJ_SEQ_BLOCK_NAMES is given, as in TVM's
 * BlockNode::SEqualReduce. Expression struct info is compared on vars (params and
 * bindings), not on every call: the binding var carries the call's struct info.
 *
 * Attribute values follow TVM's IntImm equality (dtype and value): `1` (int32) and
 * `True` (bool) differ, `True` and `T.bool(True)` are the same. Floats compare by value.
 *
 * The hash walks in the same order as the equality. Bound things hash as their
 * definition index, free ones as their address, so equal => same hash. */
#include "ir/struct_equal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/text/print.h"
#include "support/alloc.h"
#include "support/map.h"

/* ------------------------------------------------------------------------------------ */
/* Equality context: the var/buffer correspondence, the definition mode and the path.   */

typedef struct eq {
  tj_map_t fwd, rev; /* a-side node -> b-side node, and back (vars, buffers, Relax vars) */
  bool def;          /* inside a definition: unmapped vars become bound here */
  unsigned flags;    /* TJ_SEQ_* */
  char *why;
  size_t why_len;
  bool reported;
  char path[1536];
  size_t path_len;
} eq_t;

static void eq_init(eq_t *q, char *why, size_t why_len) {
  memset(q, 0, sizeof *q);
  q->why = why;
  q->why_len = why_len;
  if (why && why_len) why[0] = '\0';
}

static void eq_done(eq_t *q) {
  tj_map_free(&q->fwd);
  tj_map_free(&q->rev);
}

/* Appends "seg: " to the path; returns the mark to restore. */
static size_t path_push(eq_t *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t path_push(eq_t *q, const char *fmt, ...) {
  size_t mark = q->path_len;
  if (!q->why) return mark;
  size_t room = sizeof q->path - q->path_len;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(q->path + q->path_len, room, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n + 3 >= room) {
    q->path[mark] = '\0';
    return mark;
  }
  q->path_len += (size_t)n;
  memcpy(q->path + q->path_len, ": ", 3);
  q->path_len += 2;
  return mark;
}

static void path_pop(eq_t *q, size_t mark) {
  q->path_len = mark;
  q->path[mark] = '\0';
}

/* Records the first difference (path + message) and returns false. */
static bool differ(eq_t *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool differ(eq_t *q, const char *fmt, ...) {
  if (!q->why || !q->why_len || q->reported) return false;
  q->reported = true;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  q->path[q->path_len] = '\0';
  snprintf(q->why, q->why_len, "%s%s", q->path, msg);
  return false;
}

static const char *dts(tj_dtype_t d, char *buf) { return tj_dtype_str(d, buf); }

static bool dtype_eq(eq_t *q, tj_dtype_t a, tj_dtype_t b) {
  if (tj_dtype_eq(a, b)) return true;
  char x[TJ_DTYPE_BUFSIZE], y[TJ_DTYPE_BUFSIZE];
  return differ(q, "dtype %s vs %s", dts(a, x), dts(b, y));
}

static bool str_eq(const char *a, const char *b) {
  if (!a) a = "";
  if (!b) b = "";
  return strcmp(a, b) == 0;
}

/* Maps a definition a -> b, or checks an existing mapping. */
static bool bind(eq_t *q, const void *a, const void *b, const char *what, const char *na, const char *nb) {
  const void *m = tj_map_get(&q->fwd, a);
  if (m) return m == b || differ(q, "%s '%s' vs '%s' (bound to different definitions)", what, na, nb);
  if (tj_map_get(&q->rev, b))
    return differ(q, "%s '%s' vs '%s' (the second is already bound elsewhere)", what, na, nb);
  if (!tj_map_put(&q->fwd, a, (void *)b) || !tj_map_put(&q->rev, b, (void *)a)) return differ(q, "out of memory");
  return true;
}

/* Name of a mapped counterpart, for messages: `what` says which node type it is. */
static const char *counterpart_name(const char *what, const void *node) {
  if (strncmp(what, "buffer", 6) == 0 && strcmp(what, "buffer data") != 0) return ((const tj_buffer_t *)node)->name;
  if (strcmp(what, "relax var") == 0) return ((const tj_rx_expr_t *)node)->var.name;
  return ((const tj_tir_expr_t *)node)->var.name;
}

/* A use: the recorded counterpart, else (outside definitions) the same free node. */
static bool use(eq_t *q, const void *a, const void *b, const char *what, const char *na, const char *nb) {
  const void *m = tj_map_get(&q->fwd, a);
  if (m)
    return m == b || differ(q, "%s '%s' vs '%s' (the first corresponds to '%s')", what, na, nb, counterpart_name(what, m));
  if (q->def) return bind(q, a, b, what, na, nb);
  if (tj_map_get(&q->rev, b)) return differ(q, "%s '%s' is free but '%s' is bound", what, na, nb);
  return a == b || differ(q, "free %s '%s' vs '%s' (different nodes)", what, na, nb);
}

/* ------------------------------------------------------------------------------------ */
/* Attributes                                                                            */

static void attr_value_str(char *buf, size_t n, const tj_attr_value_t *v) {
  char d[TJ_DTYPE_BUFSIZE];
  switch (v->kind) {
    case TJ_ATTR_NONE: snprintf(buf, n, "None"); break;
    case TJ_ATTR_INT: snprintf(buf, n, "%lld (%s)", (long long)v->i, dts(v->dtype, d)); break;
    case TJ_ATTR_FLOAT: snprintf(buf, n, "%.17g", v->f); break;
    case TJ_ATTR_STR: snprintf(buf, n, "\"%s\"", v->s ? v->s : ""); break;
    case TJ_ATTR_LIST: snprintf(buf, n, "a list of %d", v->list.n); break;
    case TJ_ATTR_DICT: snprintf(buf, n, "a dict of %d", v->dict ? v->dict->n : 0); break;
    case TJ_ATTR_DTYPE: snprintf(buf, n, "dtype %s", dts(v->dtype, d)); break;
    case TJ_ATTR_BUFFER: snprintf(buf, n, "buffer '%s'", v->buffer->name); break;
  }
}

static bool attr_value_eq(eq_t *q, const tj_attr_value_t *a, const tj_attr_value_t *b);

static bool attrs_eq(eq_t *q, const tj_attrs_t *a, const tj_attrs_t *b) {
  int na = a ? a->n : 0, nb = b ? b->n : 0;
  for (int i = 0; i < na; i++) {
    const tj_attr_value_t *vb = tj_attrs_get(b, a->keys[i]);
    if (!vb) return differ(q, "attr '%s' only in the first", a->keys[i]);
    size_t m = path_push(q, "attr '%s'", a->keys[i]);
    bool ok = attr_value_eq(q, &a->values[i], vb);
    path_pop(q, m);
    if (!ok) return false;
  }
  for (int i = 0; i < nb; i++)
    if (!tj_attrs_get(a, b->keys[i])) return differ(q, "attr '%s' only in the second", b->keys[i]);
  return true;
}

static bool attr_value_eq(eq_t *q, const tj_attr_value_t *a, const tj_attr_value_t *b) {
  if (a->kind == TJ_ATTR_LIST && b->kind == TJ_ATTR_LIST) {
    if (a->list.n != b->list.n) return differ(q, "list of %d vs %d items", a->list.n, b->list.n);
    for (int i = 0; i < a->list.n; i++) {
      size_t m = path_push(q, "item %d", i);
      bool ok = attr_value_eq(q, &a->list.items[i], &b->list.items[i]);
      path_pop(q, m);
      if (!ok) return false;
    }
    return true;
  }
  if (a->kind == TJ_ATTR_DICT && b->kind == TJ_ATTR_DICT) return attrs_eq(q, a->dict, b->dict);
  if (a->kind == TJ_ATTR_BUFFER && b->kind == TJ_ATTR_BUFFER) /* a use: the buffers must correspond */
    return use(q, a->buffer, b->buffer, "buffer", a->buffer->name, b->buffer->name);
  if (tj_attr_value_equal(a, b)) return true;
  char x[96], y[96];
  attr_value_str(x, sizeof x, a);
  attr_value_str(y, sizeof y, b);
  return differ(q, "%s vs %s", x, y);
}

/* ------------------------------------------------------------------------------------ */
/* TIR                                                                                   */

static bool tir_expr_eq(eq_t *q, const tj_tir_expr_t *a, const tj_tir_expr_t *b);
static bool tir_stmt_eq(eq_t *q, const tj_tir_stmt_t *a, const tj_tir_stmt_t *b);

static bool tir_expr_at(eq_t *q, const tj_tir_expr_t *a, const tj_tir_expr_t *b, const char *fmt, int i) {
  if (!q->why) return tir_expr_eq(q, a, b); /* no path wanted: skip the formatting */
  char seg[64];
  snprintf(seg, sizeof seg, fmt, i);
  size_t m = path_push(q, "%s", seg);
  bool ok = tir_expr_eq(q, a, b);
  path_pop(q, m);
  return ok;
}

static bool tir_exprs_eq(eq_t *q, int n, const tj_tir_expr_t *const *a, const tj_tir_expr_t *const *b,
                         const char *fmt) {
  for (int i = 0; i < n; i++)
    if (!tir_expr_at(q, a ? a[i] : NULL, b ? b[i] : NULL, fmt, i)) return false;
  return true;
}

static bool tir_var_def(eq_t *q, const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  if (!dtype_eq(q, a->dtype, b->dtype)) return false;
  return bind(q, a, b, "var", a->var.name, b->var.name);
}

/* Short printed form of an expression for messages, cut to fit. */
static void expr_snippet(const tj_tir_expr_t *e, char *buf, size_t n) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_print_tir_expr(&sb, e);
  const char *text = sb.data && !sb.failed ? sb.data : "?";
  if (strlen(text) < n) snprintf(buf, n, "%s", text);
  else snprintf(buf, n, "%.*s...", (int)(n > 4 ? n - 4 : 0), text);
  tj_strbuf_free(&sb);
}

static bool tir_kinds_differ(eq_t *q, const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  if (!q->why) return false;
  char x[160], y[160];
  expr_snippet(a, x, sizeof x);
  expr_snippet(b, y, sizeof y);
  return differ(q, "%s vs %s (`%s` vs `%s`)", tj_tir_expr_kind_name(a->kind), tj_tir_expr_kind_name(b->kind), x, y);
}

static bool tir_expr_eq(eq_t *q, const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  if (!a || !b) return (!a && !b) || differ(q, "%s vs %s", a ? tj_tir_expr_kind_name(a->kind) : "nothing",
                                            b ? tj_tir_expr_kind_name(b->kind) : "nothing");
  /* The same node is equal to itself while nothing is mapped yet (standalone
   * expressions); a mapping could pair a var inside it with another node. */
  if (a == b && !q->why && !q->def && q->fwd.n == 0) return true;
  int64_t x, y;
  if ((q->flags & TJ_SEQ_INT_VALUES) && tj_tir_is_const_int(a, &x) && tj_tir_is_const_int(b, &y)) return x == y;
  if (a->kind != b->kind) return tir_kinds_differ(q, a, b);
  if (a->kind == TJ_TIR_VAR) {
    if (!dtype_eq(q, a->dtype, b->dtype)) return false;
    return use(q, a, b, "var", a->var.name, b->var.name);
  }
  if (!dtype_eq(q, a->dtype, b->dtype)) return false;
  switch (a->kind) {
    case TJ_TIR_INT_IMM:
      return a->int_imm == b->int_imm || differ(q, "value %lld vs %lld", (long long)a->int_imm, (long long)b->int_imm);
    case TJ_TIR_FLOAT_IMM:
      return a->float_imm == b->float_imm || (isnan(a->float_imm) && isnan(b->float_imm)) ||
             differ(q, "value %.17g vs %.17g", a->float_imm, b->float_imm);
    case TJ_TIR_STRING_IMM:
      return str_eq(a->string_imm, b->string_imm) || differ(q, "string \"%s\" vs \"%s\"", a->string_imm, b->string_imm);
    case TJ_TIR_NOT:
    case TJ_TIR_CAST: return tir_expr_eq(q, a->unary.operand, b->unary.operand);
    case TJ_TIR_SELECT:
      return tir_expr_at(q, a->select.cond, b->select.cond, "select condition", 0) &&
             tir_expr_at(q, a->select.true_value, b->select.true_value, "select true value", 0) &&
             tir_expr_at(q, a->select.false_value, b->select.false_value, "select false value", 0);
    case TJ_TIR_BUFFER_LOAD: {
      const tj_buffer_t *x = a->load.buffer, *y = b->load.buffer;
      if (!use(q, x, y, "buffer", x->name, y->name)) return false;
      if (a->load.n_indices != b->load.n_indices)
        return differ(q, "load of '%s' with %d vs %d indices", x->name, a->load.n_indices, b->load.n_indices);
      return tir_exprs_eq(q, a->load.n_indices, a->load.indices, b->load.indices, "load index %d");
    }
    case TJ_TIR_LET:
      return tir_expr_at(q, a->let.value, b->let.value, "let value", 0) && tir_var_def(q, a->let.var, b->let.var) &&
             tir_expr_at(q, a->let.body, b->let.body, "let body", 0);
    case TJ_TIR_CALL:
      if (!str_eq(a->call.op, b->call.op)) return differ(q, "call %s vs %s", a->call.op, b->call.op);
      if (a->call.n_args != b->call.n_args)
        return differ(q, "%s with %d vs %d args", a->call.op, a->call.n_args, b->call.n_args);
      return tir_exprs_eq(q, a->call.n_args, a->call.args, b->call.args, "call arg %d");
    case TJ_TIR_RAMP:
      return tir_expr_at(q, a->ramp.base, b->ramp.base, "ramp base", 0) &&
             tir_expr_at(q, a->ramp.stride, b->ramp.stride, "ramp stride", 0);
    case TJ_TIR_BROADCAST: return tir_expr_eq(q, a->broadcast.value, b->broadcast.value);
    default:
      if (tj_tir_kind_is_binary(a->kind))
        return tir_expr_at(q, a->binary.a, b->binary.a, "lhs", 0) && tir_expr_at(q, a->binary.b, b->binary.b, "rhs", 0);
      return differ(q, "unknown expression kind %d", (int)a->kind);
  }
}

/* elem_offset NULL means 0. */
static bool elem_offset_eq(eq_t *q, const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  int64_t v;
  if (!a && b) return (tj_tir_is_const_int(b, &v) && v == 0) || differ(q, "elem_offset 0 vs %s", tj_tir_expr_kind_name(b->kind));
  if (a && !b) return (tj_tir_is_const_int(a, &v) && v == 0) || differ(q, "elem_offset %s vs 0", tj_tir_expr_kind_name(a->kind));
  if (!a) return true;
  if (a->kind == TJ_TIR_INT_IMM && b->kind == TJ_TIR_INT_IMM && a->int_imm == 0 && b->int_imm == 0) return true;
  size_t m = path_push(q, "elem_offset");
  bool ok = tir_expr_eq(q, a, b);
  path_pop(q, m);
  return ok;
}

/* A buffer definition: everything but the name, with free vars bound (TVM DefEqual). */
static bool buffer_def(eq_t *q, const tj_buffer_t *a, const tj_buffer_t *b) {
  const void *m0 = tj_map_get(&q->fwd, a);
  if (m0) return m0 == b || differ(q, "buffer '%s' vs '%s' (bound to different definitions)", a->name, b->name);
  size_t m = path_push(q, "buffer '%s'", a->name);
  bool saved = q->def;
  q->def = true;
  bool ok = dtype_eq(q, a->dtype, b->dtype);
  if (ok && a->ndim != b->ndim) ok = differ(q, "ndim %d vs %d", a->ndim, b->ndim);
  if (ok) ok = tir_exprs_eq(q, a->ndim, a->shape, b->shape, "shape dim %d");
  if (ok && !a->strides != !b->strides) ok = differ(q, "strides %s vs %s", a->strides ? "given" : "none", b->strides ? "given" : "none");
  if (ok && a->strides) ok = tir_exprs_eq(q, a->ndim, a->strides, b->strides, "stride %d");
  if (ok) ok = elem_offset_eq(q, a->elem_offset, b->elem_offset);
  q->def = saved;
  const char *sa = a->scope && *a->scope ? a->scope : "global", *sb = b->scope && *b->scope ? b->scope : "global";
  if (ok && strcmp(sa, sb) != 0) ok = differ(q, "scope \"%s\" vs \"%s\"", sa, sb);
  if (ok && a->n_axis_separators != b->n_axis_separators)
    ok = differ(q, "%d vs %d axis separators", a->n_axis_separators, b->n_axis_separators);
  for (int i = 0; ok && i < a->n_axis_separators; i++)
    if (a->axis_separators[i] != b->axis_separators[i])
      ok = differ(q, "axis separator %d: %lld vs %lld", i, (long long)a->axis_separators[i], (long long)b->axis_separators[i]);
  if (ok && a->data && b->data) ok = bind(q, a->data, b->data, "buffer data", a->name, b->name);
  path_pop(q, m);
  return ok && bind(q, a, b, "buffer", a->name, b->name);
}

static bool region_eq(eq_t *q, const tj_buffer_region_t *a, const tj_buffer_region_t *b) {
  if (!use(q, a->buffer, b->buffer, "buffer", a->buffer->name, b->buffer->name)) return false;
  if (a->ndim != b->ndim) return differ(q, "region of '%s' with %d vs %d dims", a->buffer->name, a->ndim, b->ndim);
  for (int i = 0; i < a->ndim; i++) {
    if (!tir_expr_at(q, a->ranges[i].min, b->ranges[i].min, "region dim %d min", i)) return false;
    if (!tir_expr_at(q, a->ranges[i].extent, b->ranges[i].extent, "region dim %d extent", i)) return false;
  }
  return true;
}

static bool regions_eq(eq_t *q, const char *what, int na, const tj_buffer_region_t *a, int nb,
                       const tj_buffer_region_t *b) {
  if (na != nb) return differ(q, "%s: %d vs %d regions", what, na, nb);
  for (int i = 0; i < na; i++) {
    size_t m = path_push(q, "%s %d", what, i);
    bool ok = region_eq(q, &a[i], &b[i]);
    path_pop(q, m);
    if (!ok) return false;
  }
  return true;
}

static const char *iter_kind_name(tj_iter_kind_t k) { return k == TJ_ITER_REDUCE ? "reduce" : "spatial"; }

static bool block_eq(eq_t *q, const tj_block_t *a, const tj_block_t *b) {
  if ((q->flags & TJ_SEQ_BLOCK_NAMES) && !str_eq(a->name, b->name))
    return differ(q, "block name '%s' vs '%s'", a->name, b->name);
  if (a->n_iter_vars != b->n_iter_vars) return differ(q, "%d vs %d iter vars", a->n_iter_vars, b->n_iter_vars);
  for (int i = 0; i < a->n_iter_vars; i++) {
    const tj_iter_var_t *x = &a->iter_vars[i], *y = &b->iter_vars[i];
    size_t m = path_push(q, "iter var %d ('%s')", i, x->var->var.name);
    bool ok = x->kind == y->kind || differ(q, "%s vs %s", iter_kind_name(x->kind), iter_kind_name(y->kind));
    ok = ok && tir_expr_at(q, x->dom.min, y->dom.min, "dom min", 0) &&
         tir_expr_at(q, x->dom.extent, y->dom.extent, "dom extent", 0) && tir_var_def(q, x->var, y->var);
    path_pop(q, m);
    if (!ok) return false;
  }
  if (a->n_alloc_buffers != b->n_alloc_buffers)
    return differ(q, "%d vs %d alloc_buffers", a->n_alloc_buffers, b->n_alloc_buffers);
  for (int i = 0; i < a->n_alloc_buffers; i++)
    if (!buffer_def(q, a->alloc_buffers[i], b->alloc_buffers[i])) return false;
  if (a->n_match_buffers != b->n_match_buffers)
    return differ(q, "%d vs %d match_buffers", a->n_match_buffers, b->n_match_buffers);
  for (int i = 0; i < a->n_match_buffers; i++) {
    size_t m = path_push(q, "match_buffer %d", i);
    bool ok = region_eq(q, &a->match_buffers[i].source, &b->match_buffers[i].source) &&
              buffer_def(q, a->match_buffers[i].buffer, b->match_buffers[i].buffer);
    path_pop(q, m);
    if (!ok) return false;
  }
  if (!regions_eq(q, "reads", a->n_reads, a->reads, b->n_reads, b->reads)) return false;
  if (!regions_eq(q, "writes", a->n_writes, a->writes, b->n_writes, b->writes)) return false;
  if (!attrs_eq(q, a->annotations, b->annotations)) return false;
  if (!a->init != !b->init) return differ(q, "init %s vs %s", a->init ? "present" : "absent", b->init ? "present" : "absent");
  if (a->init) {
    size_t m = path_push(q, "init");
    bool ok = tir_stmt_eq(q, a->init, b->init);
    path_pop(q, m);
    if (!ok) return false;
  }
  return tir_stmt_eq(q, a->body, b->body);
}

static const char *for_kind_name(tj_for_kind_t k) {
  switch (k) {
    case TJ_FOR_SERIAL: return "serial";
    case TJ_FOR_PARALLEL: return "parallel";
    case TJ_FOR_VECTORIZED: return "vectorized";
    case TJ_FOR_UNROLLED: return "unroll";
    case TJ_FOR_THREAD_BINDING: return "thread_binding";
  }
  return "?";
}

static const char *stmt_kind_name(tj_tir_stmt_kind_t k) {
  static const char *names[TJ_TIR_STMT_KIND_COUNT] = {"For", "BlockRealize", "BufferStore", "LetStmt",
                                                      "IfThenElse", "SeqStmt", "Evaluate", "Allocate"};
  return (k >= 0 && k < TJ_TIR_STMT_KIND_COUNT) ? names[k] : "?";
}

static bool tir_stmt_at(eq_t *q, const tj_tir_stmt_t *a, const tj_tir_stmt_t *b, const char *seg) {
  size_t m = path_push(q, "%s", seg);
  bool ok = tir_stmt_eq(q, a, b);
  path_pop(q, m);
  return ok;
}

static bool tir_stmt_body_eq(eq_t *q, const tj_tir_stmt_t *a, const tj_tir_stmt_t *b) {
  switch (a->kind) {
    case TJ_TIR_FOR: {
      size_t m = path_push(q, "loop '%s'", a->loop.var->var.name);
      bool ok = (a->loop.kind == b->loop.kind ||
                 differ(q, "%s vs %s", for_kind_name(a->loop.kind), for_kind_name(b->loop.kind))) &&
                tir_expr_at(q, a->loop.min, b->loop.min, "min", 0) &&
                tir_expr_at(q, a->loop.extent, b->loop.extent, "extent", 0) &&
                tir_var_def(q, a->loop.var, b->loop.var) && attrs_eq(q, a->loop.annotations, b->loop.annotations) &&
                tir_stmt_eq(q, a->loop.body, b->loop.body);
      path_pop(q, m);
      return ok;
    }
    case TJ_TIR_BLOCK_REALIZE: {
      const tj_block_t *x = a->realize.block, *y = b->realize.block;
      size_t m = path_push(q, "block '%s'", x->name);
      bool ok = a->realize.n_iter_values == b->realize.n_iter_values ||
                differ(q, "%d vs %d iter values", a->realize.n_iter_values, b->realize.n_iter_values);
      ok = ok && tir_exprs_eq(q, a->realize.n_iter_values, a->realize.iter_values, b->realize.iter_values,
                              "iter value %d");
      ok = ok && tir_expr_at(q, a->realize.predicate, b->realize.predicate, "predicate", 0) && block_eq(q, x, y);
      path_pop(q, m);
      return ok;
    }
    case TJ_TIR_BUFFER_STORE: {
      const tj_buffer_t *x = a->store.buffer, *y = b->store.buffer;
      if (!use(q, x, y, "buffer", x->name, y->name)) return false;
      if (a->store.n_indices != b->store.n_indices)
        return differ(q, "store to '%s' with %d vs %d indices", x->name, a->store.n_indices, b->store.n_indices);
      return tir_exprs_eq(q, a->store.n_indices, a->store.indices, b->store.indices, "store index %d") &&
             tir_expr_at(q, a->store.value, b->store.value, "store value", 0);
    }
    case TJ_TIR_LET_STMT: {
      size_t m = path_push(q, "let '%s'", a->let.var->var.name);
      bool ok = tir_expr_at(q, a->let.value, b->let.value, "value", 0) && tir_var_def(q, a->let.var, b->let.var);
      path_pop(q, m);
      return ok && tir_stmt_eq(q, a->let.body, b->let.body);
    }
    case TJ_TIR_IF:
      if (!tir_expr_at(q, a->if_.cond, b->if_.cond, "if condition", 0)) return false;
      if (!tir_stmt_at(q, a->if_.then_stmt, b->if_.then_stmt, "then")) return false;
      if (!a->if_.else_stmt != !b->if_.else_stmt)
        return differ(q, "else %s vs %s", a->if_.else_stmt ? "present" : "absent", b->if_.else_stmt ? "present" : "absent");
      return !a->if_.else_stmt || tir_stmt_at(q, a->if_.else_stmt, b->if_.else_stmt, "else");
    case TJ_TIR_SEQ:
      if (a->seq.n != b->seq.n) return differ(q, "%d vs %d statements", a->seq.n, b->seq.n);
      for (int i = 0; i < a->seq.n; i++) {
        char seg[32];
        snprintf(seg, sizeof seg, "stmt %d", i);
        if (!tir_stmt_at(q, a->seq.stmts[i], b->seq.stmts[i], seg)) return false;
      }
      return true;
    case TJ_TIR_EVALUATE: return tir_expr_at(q, a->evaluate.value, b->evaluate.value, "evaluate", 0);
    case TJ_TIR_ALLOCATE:
      return buffer_def(q, a->allocate.buffer, b->allocate.buffer) && tir_stmt_eq(q, a->allocate.body, b->allocate.body);
    default: return differ(q, "unknown statement kind %d", (int)a->kind);
  }
}

static bool tir_stmt_eq(eq_t *q, const tj_tir_stmt_t *a, const tj_tir_stmt_t *b) {
  if (!a || !b)
    return (!a && !b) || differ(q, "%s vs %s", a ? stmt_kind_name(a->kind) : "nothing", b ? stmt_kind_name(b->kind) : "nothing");
  if (a->kind != b->kind) return differ(q, "%s vs %s", stmt_kind_name(a->kind), stmt_kind_name(b->kind));
  return tir_stmt_body_eq(q, a, b);
}

static bool prim_func_eq(eq_t *q, const tj_prim_func_t *a, const tj_prim_func_t *b) {
  if (a->n_params != b->n_params) return differ(q, "%d vs %d params", a->n_params, b->n_params);
  for (int i = 0; i < a->n_params; i++) {
    const tj_buffer_t *x = a->buffer_map ? a->buffer_map[i] : NULL, *y = b->buffer_map ? b->buffer_map[i] : NULL;
    size_t m = path_push(q, "param %d ('%s')", i, x ? x->name : a->params[i]->var.name);
    bool ok = tir_var_def(q, a->params[i], b->params[i]);
    if (ok && !x != !y) ok = differ(q, "%s vs %s", x ? "buffer" : "scalar", y ? "buffer" : "scalar");
    if (ok && x) ok = buffer_def(q, x, y);
    path_pop(q, m);
    if (!ok) return false;
  }
  size_t m = path_push(q, "func_attr");
  bool ok = attrs_eq(q, a->attrs, b->attrs);
  path_pop(q, m);
  return ok && tir_stmt_eq(q, a->body, b->body);
}

/* ------------------------------------------------------------------------------------ */
/* Relax                                                                                 */

static const char *sinfo_kind_name(tj_sinfo_kind_t k) {
  static const char *names[] = {"R.Object", "R.Prim", "R.Shape", "R.Tensor", "R.Tuple", "R.Callable"};
  return (k >= 0 && k <= TJ_SINFO_FUNC) ? names[k] : "?";
}

static bool sinfo_eq(eq_t *q, const tj_sinfo_t *a, const tj_sinfo_t *b);

static bool sinfo_dims_eq(eq_t *q, int ndim, const tj_tir_expr_t *const *a, const tj_tir_expr_t *const *b) {
  if (!a != !b) return differ(q, "shape %s vs %s", a ? "known" : "unknown", b ? "known" : "unknown");
  return !a || tir_exprs_eq(q, ndim, a, b, "dim %d");
}

static bool sinfo_eq(eq_t *q, const tj_sinfo_t *a, const tj_sinfo_t *b) {
  if (!a || !b)
    return (!a && !b) || differ(q, "struct info %s vs %s", a ? sinfo_kind_name(a->kind) : "none",
                                b ? sinfo_kind_name(b->kind) : "none");
  if (a->kind != b->kind) return differ(q, "%s vs %s", sinfo_kind_name(a->kind), sinfo_kind_name(b->kind));
  switch (a->kind) {
    case TJ_SINFO_OBJECT: return true;
    case TJ_SINFO_PRIM:
      if (!dtype_eq(q, a->prim.dtype, b->prim.dtype)) return false;
      if (!a->prim.value != !b->prim.value) return differ(q, "prim value %s vs %s", a->prim.value ? "known" : "unknown", b->prim.value ? "known" : "unknown");
      return tir_expr_eq(q, a->prim.value, b->prim.value);
    case TJ_SINFO_SHAPE:
      if (a->shape.ndim != b->shape.ndim) return differ(q, "ndim %d vs %d", a->shape.ndim, b->shape.ndim);
      return sinfo_dims_eq(q, a->shape.ndim, a->shape.values, b->shape.values);
    case TJ_SINFO_TENSOR:
      if (!dtype_eq(q, a->tensor.dtype, b->tensor.dtype)) return false;
      if (a->tensor.ndim != b->tensor.ndim) return differ(q, "ndim %d vs %d", a->tensor.ndim, b->tensor.ndim);
      if (!sinfo_dims_eq(q, a->tensor.ndim, a->tensor.shape, b->tensor.shape)) return false;
      return str_eq(a->tensor.vdevice, b->tensor.vdevice) ||
             differ(q, "vdevice '%s' vs '%s'", a->tensor.vdevice ? a->tensor.vdevice : "", b->tensor.vdevice ? b->tensor.vdevice : "");
    case TJ_SINFO_TUPLE:
      if (a->tuple.n != b->tuple.n) return differ(q, "tuple of %d vs %d", a->tuple.n, b->tuple.n);
      for (int i = 0; i < a->tuple.n; i++) {
        size_t m = path_push(q, "field %d", i);
        bool ok = sinfo_eq(q, a->tuple.fields[i], b->tuple.fields[i]);
        path_pop(q, m);
        if (!ok) return false;
      }
      return true;
    case TJ_SINFO_FUNC:
      if (a->func.n_params != b->func.n_params) return differ(q, "%d vs %d params", a->func.n_params, b->func.n_params);
      if (a->func.pure != b->func.pure) return differ(q, "pure %d vs %d", a->func.pure, b->func.pure);
      for (int i = 0; i < a->func.n_params; i++) {
        size_t m = path_push(q, "param %d", i);
        bool ok = sinfo_eq(q, a->func.params[i], b->func.params[i]);
        path_pop(q, m);
        if (!ok) return false;
      }
      return sinfo_eq(q, a->func.ret, b->func.ret);
  }
  return false;
}

static bool sinfo_at(eq_t *q, const tj_sinfo_t *a, const tj_sinfo_t *b, const char *seg, bool def) {
  size_t m = path_push(q, "%s", seg);
  bool saved = q->def;
  q->def = def;
  bool ok = sinfo_eq(q, a, b);
  q->def = saved;
  path_pop(q, m);
  return ok;
}

/* A Relax var definition: kind, struct info (binding symbolic vars), then the mapping. */
static bool rx_var_def(eq_t *q, const tj_rx_expr_t *a, const tj_rx_expr_t *b) {
  if (a->kind != b->kind)
    return differ(q, "%s '%s' vs %s '%s'", tj_rx_expr_kind_name(a->kind), a->var.name, tj_rx_expr_kind_name(b->kind), b->var.name);
  if (!sinfo_at(q, a->sinfo, b->sinfo, "struct info", true)) return false;
  return bind(q, a, b, "relax var", a->var.name, b->var.name);
}

static bool rx_expr_eq(eq_t *q, const tj_rx_expr_t *a, const tj_rx_expr_t *b);
static bool rx_func_eq(eq_t *q, const tj_rx_func_t *a, const tj_rx_func_t *b);

static bool rx_expr_at(eq_t *q, const tj_rx_expr_t *a, const tj_rx_expr_t *b, const char *fmt, int i) {
  char seg[64];
  snprintf(seg, sizeof seg, fmt, i);
  size_t m = path_push(q, "%s", seg);
  bool ok = rx_expr_eq(q, a, b);
  path_pop(q, m);
  return ok;
}

static bool binding_eq(eq_t *q, const tj_rx_binding_t *a, const tj_rx_binding_t *b) {
  if (!a->match_cast != !b->match_cast)
    return differ(q, "%s vs %s", a->match_cast ? "match_cast" : "binding", b->match_cast ? "match_cast" : "binding");
  if (!rx_expr_at(q, a->value, b->value, "value", 0)) return false;
  if (a->match_cast && !sinfo_at(q, a->match_cast, b->match_cast, "match_cast", true)) return false;
  return rx_var_def(q, a->var, b->var);
}

static bool seq_eq(eq_t *q, const tj_rx_expr_t *a, const tj_rx_expr_t *b) {
  if (a->seq.n_blocks != b->seq.n_blocks) return differ(q, "%d vs %d binding blocks", a->seq.n_blocks, b->seq.n_blocks);
  int k = 0;
  for (int i = 0; i < a->seq.n_blocks; i++) {
    const tj_rx_block_t *x = &a->seq.blocks[i], *y = &b->seq.blocks[i];
    if (x->is_dataflow != y->is_dataflow)
      return differ(q, "block %d: %s vs %s", i, x->is_dataflow ? "dataflow" : "plain", y->is_dataflow ? "dataflow" : "plain");
    if (x->n_bindings != y->n_bindings)
      return differ(q, "block %d: %d vs %d bindings", i, x->n_bindings, y->n_bindings);
    for (int j = 0; j < x->n_bindings; j++, k++) {
      size_t m = path_push(q, "binding %d ('%s')", k, x->bindings[j].var->var.name);
      bool ok = binding_eq(q, &x->bindings[j], &y->bindings[j]);
      path_pop(q, m);
      if (!ok) return false;
    }
  }
  return rx_expr_at(q, a->seq.body, b->seq.body, "result", 0);
}

static bool rx_call_eq(eq_t *q, const tj_rx_expr_t *a, const tj_rx_expr_t *b) {
  if (!rx_expr_at(q, a->call.callee, b->call.callee, "callee", 0)) return false;
  if (a->call.n_args != b->call.n_args) return differ(q, "call with %d vs %d args", a->call.n_args, b->call.n_args);
  for (int i = 0; i < a->call.n_args; i++)
    if (!rx_expr_at(q, a->call.args[i], b->call.args[i], "call arg %d", i)) return false;
  size_t m = path_push(q, "call");
  bool ok = attrs_eq(q, a->call.attrs, b->call.attrs);
  path_pop(q, m);
  if (!ok) return false;
  if (a->call.n_sinfo_args != b->call.n_sinfo_args)
    return differ(q, "call with %d vs %d sinfo_args", a->call.n_sinfo_args, b->call.n_sinfo_args);
  for (int i = 0; i < a->call.n_sinfo_args; i++) {
    char seg[32];
    snprintf(seg, sizeof seg, "sinfo_arg %d", i);
    if (!sinfo_at(q, a->call.sinfo_args[i], b->call.sinfo_args[i], seg, q->def)) return false;
  }
  return true;
}

static bool rx_expr_eq(eq_t *q, const tj_rx_expr_t *a, const tj_rx_expr_t *b) {
  if (!a || !b)
    return (!a && !b) || differ(q, "%s vs %s", a ? tj_rx_expr_kind_name(a->kind) : "nothing", b ? tj_rx_expr_kind_name(b->kind) : "nothing");
  if (a->kind != b->kind) {
    if (tj_rx_is_var(a) && tj_rx_is_var(b))
      return differ(q, "%s '%s' vs %s '%s'", tj_rx_expr_kind_name(a->kind), a->var.name, tj_rx_expr_kind_name(b->kind), b->var.name);
    return differ(q, "%s vs %s", tj_rx_expr_kind_name(a->kind), tj_rx_expr_kind_name(b->kind));
  }
  char x[TJ_DTYPE_BUFSIZE], y[TJ_DTYPE_BUFSIZE];
  switch (a->kind) {
    case TJ_RX_VAR:
    case TJ_RX_DATAFLOW_VAR: return use(q, a, b, "relax var", a->var.name, b->var.name);
    case TJ_RX_GLOBAL_VAR:
      return str_eq(a->var.name, b->var.name) || differ(q, "function '%s' vs '%s'", a->var.name, b->var.name);
    case TJ_RX_CONSTANT:
      if (!dtype_eq(q, a->constant.dtype, b->constant.dtype)) return false;
      if (a->constant.ndim != b->constant.ndim) return differ(q, "constant ndim %d vs %d", a->constant.ndim, b->constant.ndim);
      for (int i = 0; i < a->constant.ndim; i++)
        if (a->constant.shape[i] != b->constant.shape[i])
          return differ(q, "constant dim %d: %lld vs %lld", i, (long long)a->constant.shape[i], (long long)b->constant.shape[i]);
      if (!a->constant.data != !b->constant.data) return differ(q, "constant value %s vs %s", a->constant.data ? "given" : "absent", b->constant.data ? "given" : "absent");
      if (a->constant.data && (a->constant.nbytes != b->constant.nbytes ||
                               memcmp(a->constant.data, b->constant.data, a->constant.nbytes) != 0))
        return differ(q, "constant values differ");
      return true;
    case TJ_RX_TUPLE:
      if (a->tuple.n != b->tuple.n) return differ(q, "tuple of %d vs %d", a->tuple.n, b->tuple.n);
      for (int i = 0; i < a->tuple.n; i++)
        if (!rx_expr_at(q, a->tuple.fields[i], b->tuple.fields[i], "tuple field %d", i)) return false;
      return true;
    case TJ_RX_TUPLE_GET_ITEM:
      if (a->get_item.index != b->get_item.index) return differ(q, "item [%d] vs [%d]", a->get_item.index, b->get_item.index);
      return rx_expr_eq(q, a->get_item.tuple, b->get_item.tuple);
    case TJ_RX_CALL: return rx_call_eq(q, a, b);
    case TJ_RX_OP: return str_eq(a->op.name, b->op.name) || differ(q, "op %s vs %s", a->op.name, b->op.name);
    case TJ_RX_SHAPE_EXPR:
      if (a->shape_expr.n != b->shape_expr.n) return differ(q, "shape of %d vs %d dims", a->shape_expr.n, b->shape_expr.n);
      return tir_exprs_eq(q, a->shape_expr.n, a->shape_expr.values, b->shape_expr.values, "dim %d");
    case TJ_RX_PRIM_VALUE: return tir_expr_eq(q, a->prim_value.value, b->prim_value.value);
    case TJ_RX_STRING_IMM:
    case TJ_RX_EXTERN_FUNC:
      return str_eq(a->string_imm, b->string_imm) || differ(q, "\"%s\" vs \"%s\"", a->string_imm, b->string_imm);
    case TJ_RX_DATA_TYPE_IMM:
      return tj_dtype_eq(a->dtype_imm, b->dtype_imm) || differ(q, "dtype %s vs %s", dts(a->dtype_imm, x), dts(b->dtype_imm, y));
    case TJ_RX_IF:
      return rx_expr_at(q, a->if_.cond, b->if_.cond, "if condition", 0) &&
             rx_expr_at(q, a->if_.then_branch, b->if_.then_branch, "then", 0) &&
             rx_expr_at(q, a->if_.else_branch, b->if_.else_branch, "else", 0);
    case TJ_RX_SEQ: return seq_eq(q, a, b);
    case TJ_RX_FUNCTION: return rx_func_eq(q, a->function, b->function);
    default: return differ(q, "unknown expression kind %d", (int)a->kind);
  }
}

/* A missing return annotation means "deduced from the body": compare what is known. */
static const tj_sinfo_t *ret_sinfo_of(const tj_rx_func_t *f) {
  return f->ret_sinfo ? f->ret_sinfo : (f->body ? f->body->sinfo : NULL);
}

static bool rx_func_eq(eq_t *q, const tj_rx_func_t *a, const tj_rx_func_t *b) {
  if (a->n_params != b->n_params) return differ(q, "%d vs %d params", a->n_params, b->n_params);
  for (int i = 0; i < a->n_params; i++) {
    size_t m = path_push(q, "param %d ('%s')", i, a->params[i]->var.name);
    bool ok = rx_var_def(q, a->params[i], b->params[i]);
    path_pop(q, m);
    if (!ok) return false;
  }
  if (a->is_pure != b->is_pure) return differ(q, "pure=%s vs pure=%s", a->is_pure ? "True" : "False", b->is_pure ? "True" : "False");
  size_t m = path_push(q, "func_attr");
  bool ok = attrs_eq(q, a->attrs, b->attrs);
  path_pop(q, m);
  if (!ok || !rx_expr_eq(q, a->body, b->body)) return false;
  const tj_sinfo_t *ra = ret_sinfo_of(a), *rb = ret_sinfo_of(b);
  return !ra || !rb || sinfo_at(q, ra, rb, "return", false);
}

/* ------------------------------------------------------------------------------------ */
/* Public equality                                                                       */

bool tj_struct_equal_prim_func_ex(const tj_prim_func_t *a, const tj_prim_func_t *b, unsigned flags, char *why,
                                  size_t why_len) {
  eq_t q;
  eq_init(&q, why, why_len);
  q.flags = flags;
  bool ok = prim_func_eq(&q, a, b);
  eq_done(&q);
  return ok;
}

bool tj_struct_equal_rx_func(const tj_rx_func_t *a, const tj_rx_func_t *b, char *why, size_t why_len) {
  eq_t q;
  eq_init(&q, why, why_len);
  bool ok = rx_func_eq(&q, a, b);
  eq_done(&q);
  return ok;
}

bool tj_struct_equal_tir_expr(const tj_tir_expr_t *a, const tj_tir_expr_t *b) {
  return tj_struct_equal_tir_expr_ex(a, b, 0);
}

bool tj_struct_equal_tir_expr_ex(const tj_tir_expr_t *a, const tj_tir_expr_t *b, unsigned flags) {
  eq_t q;
  eq_init(&q, NULL, 0);
  q.flags = flags;
  bool ok = tir_expr_eq(&q, a, b);
  eq_done(&q);
  return ok;
}

bool tj_struct_equal_sinfo(const tj_sinfo_t *a, const tj_sinfo_t *b) {
  eq_t q;
  eq_init(&q, NULL, 0);
  bool ok = sinfo_eq(&q, a, b);
  eq_done(&q);
  return ok;
}

static bool func_entry_eq(const tj_func_entry_t *a, const tj_func_entry_t *b, unsigned flags, char *why,
                          size_t why_len) {
  eq_t q;
  eq_init(&q, why, why_len);
  q.flags = flags;
  bool ok;
  if (a->is_prim != b->is_prim) {
    path_push(&q, "function '%s'", a->name);
    ok = differ(&q, "%s vs %s", a->is_prim ? "prim_func" : "relax function", b->is_prim ? "prim_func" : "relax function");
  } else if (a->is_prim) {
    path_push(&q, "prim_func '%s'", a->name);
    ok = prim_func_eq(&q, a->prim, b->prim);
  } else {
    path_push(&q, "function '%s'", a->name);
    ok = rx_func_eq(&q, a->relax, b->relax);
  }
  eq_done(&q);
  return ok;
}

bool tj_struct_equal_prim_func(const tj_prim_func_t *a, const tj_prim_func_t *b, char *why, size_t why_len) {
  return tj_struct_equal_prim_func_ex(a, b, 0, why, why_len);
}

bool tj_struct_equal_module(const tj_module_t *a, const tj_module_t *b, char *why, size_t why_len) {
  return tj_struct_equal_module_ex(a, b, 0, why, why_len);
}

bool tj_struct_equal_module_ex(const tj_module_t *a, const tj_module_t *b, unsigned flags, char *why, size_t why_len) {
  if (why && why_len) why[0] = '\0';
  for (int i = 0; i < a->n_funcs; i++)
    if (!tj_module_find(b, a->funcs[i].name)) {
      if (why && why_len) snprintf(why, why_len, "function '%s' only in the first module", a->funcs[i].name);
      return false;
    }
  for (int i = 0; i < b->n_funcs; i++)
    if (!tj_module_find(a, b->funcs[i].name)) {
      if (why && why_len) snprintf(why, why_len, "function '%s' only in the second module", b->funcs[i].name);
      return false;
    }
  if (a->n_funcs != b->n_funcs) {
    if (why && why_len) snprintf(why, why_len, "%d vs %d functions (duplicate names)", a->n_funcs, b->n_funcs);
    return false;
  }
  for (int i = 0; i < a->n_funcs; i++)
    if (!func_entry_eq(&a->funcs[i], tj_module_find(b, a->funcs[i].name), flags, why, why_len)) return false;
  eq_t q;
  eq_init(&q, why, why_len);
  path_push(&q, "module attrs");
  bool ok = attrs_eq(&q, a->attrs, b->attrs);
  eq_done(&q);
  return ok;
}

/* ------------------------------------------------------------------------------------ */
/* Hashing: same walk order as the equality above.                                       */

typedef struct hs {
  tj_map_t index; /* bound node -> definition index + 1 */
  uintptr_t next;
  bool def;
} hs_t;

static uint64_t mix(uint64_t h, uint64_t v) {
  v *= 0x9e3779b97f4a7c15ULL;
  v ^= v >> 29;
  h ^= v + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
  return h;
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

static uint64_t hash_dtype(tj_dtype_t d) { return ((uint64_t)d.code << 32) | ((uint64_t)d.bits << 16) | d.lanes; }

static uint64_t hash_double(double v) {
  if (v == 0) return 0;
  if (isnan(v)) return 0x7ff8;
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits;
}

static uint64_t hs_def(hs_t *h, const void *p) {
  uintptr_t idx = (uintptr_t)tj_map_get(&h->index, p);
  if (!idx) {
    idx = ++h->next;
    tj_map_put(&h->index, p, (void *)(const void *)idx);
  }
  return mix(0xdef, idx);
}

static uint64_t hs_use(hs_t *h, const void *p) {
  uintptr_t idx = (uintptr_t)tj_map_get(&h->index, p);
  if (idx) return mix(0xdef, idx);
  if (h->def) return hs_def(h, p);
  return mix(0xf4ee, (uint64_t)(uintptr_t)p);
}

static uint64_t hash_attr_value(const tj_attr_value_t *v);

static uint64_t hash_attrs(const tj_attrs_t *a) {
  uint64_t sum = 0; /* order-insensitive */
  for (int i = 0; a && i < a->n; i++) sum += mix(hash_str(a->keys[i]), hash_attr_value(&a->values[i]));
  return mix(0xa77, sum);
}

static uint64_t hash_attr_value(const tj_attr_value_t *v) {
  uint64_t h = mix(0xa1, (uint64_t)v->kind);
  switch (v->kind) {
    case TJ_ATTR_NONE: return h;
    case TJ_ATTR_INT: return mix(mix(h, (uint64_t)v->i), hash_dtype(v->dtype));
    case TJ_ATTR_FLOAT: return mix(h, hash_double(v->f));
    case TJ_ATTR_STR: return mix(h, hash_str(v->s));
    case TJ_ATTR_DTYPE: return mix(h, hash_dtype(v->dtype));
    case TJ_ATTR_DICT: return mix(h, hash_attrs(v->dict));
    case TJ_ATTR_BUFFER: /* equal buffers may have other names: hash what a correspondence keeps */
      return mix(mix(h, hash_dtype(v->buffer->dtype)), (uint64_t)v->buffer->ndim);
    case TJ_ATTR_LIST:
      h = mix(h, (uint64_t)v->list.n);
      for (int i = 0; i < v->list.n; i++) h = mix(h, hash_attr_value(&v->list.items[i]));
      return h;
  }
  return h;
}

static uint64_t hash_tir_expr(hs_t *h, const tj_tir_expr_t *e);
static uint64_t hash_tir_stmt(hs_t *h, const tj_tir_stmt_t *s);

static uint64_t hash_tir_exprs(hs_t *h, uint64_t acc, int n, const tj_tir_expr_t *const *v) {
  for (int i = 0; i < n; i++) acc = mix(acc, hash_tir_expr(h, v ? v[i] : NULL));
  return acc;
}

static uint64_t hash_tir_var_def(hs_t *h, const tj_tir_expr_t *v) { return mix(hash_dtype(v->dtype), hs_def(h, v)); }

static uint64_t hash_tir_expr(hs_t *h, const tj_tir_expr_t *e) {
  if (!e) return 0x9;
  uint64_t acc = mix((uint64_t)e->kind + 1, hash_dtype(e->dtype));
  switch (e->kind) {
    case TJ_TIR_VAR: return mix(acc, hs_use(h, e));
    case TJ_TIR_INT_IMM: return mix(acc, (uint64_t)e->int_imm);
    case TJ_TIR_FLOAT_IMM: return mix(acc, hash_double(e->float_imm));
    case TJ_TIR_STRING_IMM: return mix(acc, hash_str(e->string_imm));
    case TJ_TIR_NOT:
    case TJ_TIR_CAST: return mix(acc, hash_tir_expr(h, e->unary.operand));
    case TJ_TIR_SELECT:
      acc = mix(acc, hash_tir_expr(h, e->select.cond));
      acc = mix(acc, hash_tir_expr(h, e->select.true_value));
      return mix(acc, hash_tir_expr(h, e->select.false_value));
    case TJ_TIR_BUFFER_LOAD:
      acc = mix(acc, hs_use(h, e->load.buffer));
      return hash_tir_exprs(h, mix(acc, (uint64_t)e->load.n_indices), e->load.n_indices, e->load.indices);
    case TJ_TIR_LET:
      acc = mix(acc, hash_tir_expr(h, e->let.value));
      acc = mix(acc, hash_tir_var_def(h, e->let.var));
      return mix(acc, hash_tir_expr(h, e->let.body));
    case TJ_TIR_CALL:
      acc = mix(mix(acc, hash_str(e->call.op)), (uint64_t)e->call.n_args);
      return hash_tir_exprs(h, acc, e->call.n_args, e->call.args);
    case TJ_TIR_RAMP: return mix(mix(acc, hash_tir_expr(h, e->ramp.base)), hash_tir_expr(h, e->ramp.stride));
    case TJ_TIR_BROADCAST: return mix(acc, hash_tir_expr(h, e->broadcast.value));
    default:
      if (tj_tir_kind_is_binary(e->kind))
        return mix(mix(acc, hash_tir_expr(h, e->binary.a)), hash_tir_expr(h, e->binary.b));
      return acc;
  }
}

static uint64_t hash_buffer_def(hs_t *h, const tj_buffer_t *b) {
  if (tj_map_get(&h->index, b)) return hs_use(h, b);
  bool saved = h->def;
  h->def = true;
  uint64_t acc = mix(hash_dtype(b->dtype), (uint64_t)b->ndim);
  acc = hash_tir_exprs(h, acc, b->ndim, b->shape);
  acc = mix(acc, b->strides != NULL);
  if (b->strides) acc = hash_tir_exprs(h, acc, b->ndim, b->strides);
  int64_t off = 0;
  if (b->elem_offset && !(tj_tir_is_const_int(b->elem_offset, &off) && off == 0))
    acc = mix(acc, hash_tir_expr(h, b->elem_offset));
  h->def = saved;
  acc = mix(acc, hash_str(b->scope && *b->scope ? b->scope : "global"));
  acc = mix(acc, (uint64_t)b->n_axis_separators);
  for (int i = 0; i < b->n_axis_separators; i++) acc = mix(acc, (uint64_t)b->axis_separators[i]);
  if (b->data) hs_def(h, b->data);
  return mix(acc, hs_def(h, b));
}

static uint64_t hash_region(hs_t *h, const tj_buffer_region_t *r) {
  uint64_t acc = mix(hs_use(h, r->buffer), (uint64_t)r->ndim);
  for (int i = 0; i < r->ndim; i++) {
    acc = mix(acc, hash_tir_expr(h, r->ranges[i].min));
    acc = mix(acc, hash_tir_expr(h, r->ranges[i].extent));
  }
  return acc;
}

static uint64_t hash_block(hs_t *h, const tj_block_t *b) {
  uint64_t acc = mix(0xb10c, (uint64_t)b->n_iter_vars); /* names are not compared */
  for (int i = 0; i < b->n_iter_vars; i++) {
    const tj_iter_var_t *iv = &b->iter_vars[i];
    acc = mix(acc, (uint64_t)iv->kind);
    acc = mix(acc, hash_tir_expr(h, iv->dom.min));
    acc = mix(acc, hash_tir_expr(h, iv->dom.extent));
    acc = mix(acc, hash_tir_var_def(h, iv->var));
  }
  acc = mix(acc, (uint64_t)b->n_alloc_buffers);
  for (int i = 0; i < b->n_alloc_buffers; i++) acc = mix(acc, hash_buffer_def(h, b->alloc_buffers[i]));
  acc = mix(acc, (uint64_t)b->n_match_buffers);
  for (int i = 0; i < b->n_match_buffers; i++) {
    acc = mix(acc, hash_region(h, &b->match_buffers[i].source));
    acc = mix(acc, hash_buffer_def(h, b->match_buffers[i].buffer));
  }
  acc = mix(acc, (uint64_t)b->n_reads);
  for (int i = 0; i < b->n_reads; i++) acc = mix(acc, hash_region(h, &b->reads[i]));
  acc = mix(acc, (uint64_t)b->n_writes);
  for (int i = 0; i < b->n_writes; i++) acc = mix(acc, hash_region(h, &b->writes[i]));
  acc = mix(acc, hash_attrs(b->annotations));
  acc = mix(acc, b->init ? hash_tir_stmt(h, b->init) : 0x1);
  return mix(acc, hash_tir_stmt(h, b->body));
}

static uint64_t hash_tir_stmt(hs_t *h, const tj_tir_stmt_t *s) {
  if (!s) return 0x5;
  uint64_t acc = mix(0x57, (uint64_t)s->kind);
  switch (s->kind) {
    case TJ_TIR_FOR:
      acc = mix(acc, (uint64_t)s->loop.kind);
      acc = mix(acc, hash_tir_expr(h, s->loop.min));
      acc = mix(acc, hash_tir_expr(h, s->loop.extent));
      acc = mix(acc, hash_tir_var_def(h, s->loop.var));
      acc = mix(acc, hash_attrs(s->loop.annotations));
      return mix(acc, hash_tir_stmt(h, s->loop.body));
    case TJ_TIR_BLOCK_REALIZE:
      acc = hash_tir_exprs(h, mix(acc, (uint64_t)s->realize.n_iter_values), s->realize.n_iter_values,
                           s->realize.iter_values);
      acc = mix(acc, hash_tir_expr(h, s->realize.predicate));
      return mix(acc, hash_block(h, s->realize.block));
    case TJ_TIR_BUFFER_STORE:
      acc = mix(acc, hs_use(h, s->store.buffer));
      acc = hash_tir_exprs(h, mix(acc, (uint64_t)s->store.n_indices), s->store.n_indices, s->store.indices);
      return mix(acc, hash_tir_expr(h, s->store.value));
    case TJ_TIR_LET_STMT:
      acc = mix(acc, hash_tir_expr(h, s->let.value));
      acc = mix(acc, hash_tir_var_def(h, s->let.var));
      return mix(acc, hash_tir_stmt(h, s->let.body));
    case TJ_TIR_IF:
      acc = mix(acc, hash_tir_expr(h, s->if_.cond));
      acc = mix(acc, hash_tir_stmt(h, s->if_.then_stmt));
      return mix(acc, s->if_.else_stmt ? hash_tir_stmt(h, s->if_.else_stmt) : 0x3);
    case TJ_TIR_SEQ:
      acc = mix(acc, (uint64_t)s->seq.n);
      for (int i = 0; i < s->seq.n; i++) acc = mix(acc, hash_tir_stmt(h, s->seq.stmts[i]));
      return acc;
    case TJ_TIR_EVALUATE: return mix(acc, hash_tir_expr(h, s->evaluate.value));
    case TJ_TIR_ALLOCATE:
      acc = mix(acc, hash_buffer_def(h, s->allocate.buffer));
      return mix(acc, hash_tir_stmt(h, s->allocate.body));
    default: return acc;
  }
}

uint64_t tj_struct_hash_prim_func(const tj_prim_func_t *f) {
  hs_t h = {0};
  uint64_t acc = mix(0x9f, (uint64_t)f->n_params);
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *b = f->buffer_map ? f->buffer_map[i] : NULL;
    acc = mix(acc, hash_tir_var_def(&h, f->params[i]));
    acc = mix(acc, b ? hash_buffer_def(&h, b) : 0x2);
  }
  acc = mix(acc, hash_attrs(f->attrs));
  acc = mix(acc, hash_tir_stmt(&h, f->body));
  tj_map_free(&h.index);
  return acc;
}

static uint64_t hash_sinfo(hs_t *h, const tj_sinfo_t *s) {
  if (!s) return 0x11;
  uint64_t acc = mix(0x51, (uint64_t)s->kind);
  switch (s->kind) {
    case TJ_SINFO_OBJECT: return acc;
    case TJ_SINFO_PRIM:
      acc = mix(acc, hash_dtype(s->prim.dtype));
      return mix(acc, s->prim.value ? hash_tir_expr(h, s->prim.value) : 0x7);
    case TJ_SINFO_SHAPE:
      acc = mix(mix(acc, (uint64_t)s->shape.ndim), s->shape.values != NULL);
      return s->shape.values ? hash_tir_exprs(h, acc, s->shape.ndim, s->shape.values) : acc;
    case TJ_SINFO_TENSOR:
      acc = mix(mix(acc, hash_dtype(s->tensor.dtype)), (uint64_t)s->tensor.ndim);
      acc = mix(mix(acc, s->tensor.shape != NULL), hash_str(s->tensor.vdevice));
      return s->tensor.shape ? hash_tir_exprs(h, acc, s->tensor.ndim, s->tensor.shape) : acc;
    case TJ_SINFO_TUPLE:
      acc = mix(acc, (uint64_t)s->tuple.n);
      for (int i = 0; i < s->tuple.n; i++) acc = mix(acc, hash_sinfo(h, s->tuple.fields[i]));
      return acc;
    case TJ_SINFO_FUNC:
      acc = mix(mix(acc, (uint64_t)s->func.n_params), s->func.pure);
      for (int i = 0; i < s->func.n_params; i++) acc = mix(acc, hash_sinfo(h, s->func.params[i]));
      return mix(acc, hash_sinfo(h, s->func.ret));
  }
  return acc;
}

static uint64_t hash_sinfo_mode(hs_t *h, const tj_sinfo_t *s, bool def) {
  bool saved = h->def;
  h->def = def;
  uint64_t v = hash_sinfo(h, s);
  h->def = saved;
  return v;
}

static uint64_t hash_rx_var_def(hs_t *h, const tj_rx_expr_t *v) {
  uint64_t acc = mix((uint64_t)v->kind, hash_sinfo_mode(h, v->sinfo, true));
  return mix(acc, hs_def(h, v));
}

static uint64_t hash_rx_expr(hs_t *h, const tj_rx_expr_t *e);

static uint64_t hash_rx_func(hs_t *h, const tj_rx_func_t *f) {
  uint64_t acc = mix(0xf7, (uint64_t)f->n_params);
  for (int i = 0; i < f->n_params; i++) acc = mix(acc, hash_rx_var_def(h, f->params[i]));
  acc = mix(acc, f->is_pure);
  acc = mix(acc, hash_attrs(f->attrs));
  /* The return annotation is not hashed: equality tolerates a missing one. */
  return mix(acc, hash_rx_expr(h, f->body));
}

static uint64_t hash_rx_expr(hs_t *h, const tj_rx_expr_t *e) {
  if (!e) return 0x13;
  uint64_t acc = mix(0x7e, (uint64_t)e->kind);
  switch (e->kind) {
    case TJ_RX_VAR:
    case TJ_RX_DATAFLOW_VAR: return mix(acc, hs_use(h, e));
    case TJ_RX_GLOBAL_VAR: return mix(acc, hash_str(e->var.name));
    case TJ_RX_CONSTANT:
      acc = mix(mix(acc, hash_dtype(e->constant.dtype)), (uint64_t)e->constant.ndim);
      for (int i = 0; i < e->constant.ndim; i++) acc = mix(acc, (uint64_t)e->constant.shape[i]);
      if (e->constant.data)
        for (size_t i = 0; i < e->constant.nbytes; i++) acc = mix(acc, ((const unsigned char *)e->constant.data)[i]);
      return acc;
    case TJ_RX_TUPLE:
      acc = mix(acc, (uint64_t)e->tuple.n);
      for (int i = 0; i < e->tuple.n; i++) acc = mix(acc, hash_rx_expr(h, e->tuple.fields[i]));
      return acc;
    case TJ_RX_TUPLE_GET_ITEM: return mix(mix(acc, (uint64_t)e->get_item.index), hash_rx_expr(h, e->get_item.tuple));
    case TJ_RX_CALL:
      acc = mix(acc, hash_rx_expr(h, e->call.callee));
      acc = mix(acc, (uint64_t)e->call.n_args);
      for (int i = 0; i < e->call.n_args; i++) acc = mix(acc, hash_rx_expr(h, e->call.args[i]));
      acc = mix(acc, hash_attrs(e->call.attrs));
      acc = mix(acc, (uint64_t)e->call.n_sinfo_args);
      for (int i = 0; i < e->call.n_sinfo_args; i++) acc = mix(acc, hash_sinfo(h, e->call.sinfo_args[i]));
      return acc;
    case TJ_RX_OP: return mix(acc, hash_str(e->op.name));
    case TJ_RX_SHAPE_EXPR:
      return hash_tir_exprs(h, mix(acc, (uint64_t)e->shape_expr.n), e->shape_expr.n, e->shape_expr.values);
    case TJ_RX_PRIM_VALUE: return mix(acc, hash_tir_expr(h, e->prim_value.value));
    case TJ_RX_STRING_IMM:
    case TJ_RX_EXTERN_FUNC: return mix(acc, hash_str(e->string_imm));
    case TJ_RX_DATA_TYPE_IMM: return mix(acc, hash_dtype(e->dtype_imm));
    case TJ_RX_IF:
      acc = mix(acc, hash_rx_expr(h, e->if_.cond));
      acc = mix(acc, hash_rx_expr(h, e->if_.then_branch));
      return mix(acc, hash_rx_expr(h, e->if_.else_branch));
    case TJ_RX_SEQ:
      acc = mix(acc, (uint64_t)e->seq.n_blocks);
      for (int i = 0; i < e->seq.n_blocks; i++) {
        const tj_rx_block_t *b = &e->seq.blocks[i];
        acc = mix(mix(acc, b->is_dataflow), (uint64_t)b->n_bindings);
        for (int j = 0; j < b->n_bindings; j++) {
          const tj_rx_binding_t *bd = &b->bindings[j];
          acc = mix(acc, hash_rx_expr(h, bd->value));
          acc = mix(acc, bd->match_cast ? hash_sinfo_mode(h, bd->match_cast, true) : 0x17);
          acc = mix(acc, hash_rx_var_def(h, bd->var));
        }
      }
      return mix(acc, hash_rx_expr(h, e->seq.body));
    case TJ_RX_FUNCTION: return mix(acc, hash_rx_func(h, e->function));
    default: return acc;
  }
}

uint64_t tj_struct_hash_rx_func(const tj_rx_func_t *f) {
  hs_t h = {0};
  uint64_t v = hash_rx_func(&h, f);
  tj_map_free(&h.index);
  return v;
}
