/* TIR statements and PrimFuncs of the TVMScript reader: buffers, loops, blocks (with the
 * implicit root block and T.reads/T.writes completion of TVM's script_complete.cc),
 * stores, lets and conditionals. */
#include <string.h>

#include "ir/text/parse_ir.h"
#include "ir/struct_equal.h"
#include "ir/visit.h"

static const tj_tir_stmt_t *parse_body(tj_pctx_t *c, const tj_py_t *const *items, int n);

static tj_val_t prim_val(tj_src_pos_t pos, const tj_tir_expr_t *e) {
  tj_val_t v = tj_val_make(V_PRIM, pos);
  v.prim = e;
  return v;
}

static const tj_tir_stmt_t *empty_stmt(tj_pctx_t *c) {
  return TJ_CHK(c, tj_tir_evaluate(c->arena, TJ_CHK(c, tj_tir_int(c->arena, TJ_I32, 0))));
}

static const char *call_name(tj_pctx_t *c, const tj_py_t *e) {
  if (!e || e->kind != PY_CALL) return NULL;
  return tj_py_dotted(c->src, e->a);
}

static void *vec_to_array(tj_pctx_t *c, const tj_ptrvec_t *v, size_t elem) {
  void *out = TJ_CHK(c, tj_arena_alloc(c->arena, elem * (size_t)(v->n + 1)));
  for (int i = 0; i < v->n; i++) memcpy((char *)out + elem * (size_t)i, v->items[i], elem);
  return out;
}

/* ---- buffers ---- */

static void shape_of(tj_pctx_t *c, const tj_val_t *v, tj_ptrvec_t *out) {
  if (v->kind == V_SEQ) {
    for (int i = 0; i < v->n; i++) tj_ptrvec_push(c->src, out, tj_tir_as_expr(c, &v->items[i]));
  } else {
    tj_ptrvec_push(c->src, out, tj_tir_as_expr(c, v));
  }
  for (int i = 0; i < out->n; i++) {
    const tj_tir_expr_t *d = out->items[i];
    if (!tj_dtype_is_int(d->dtype)) tj_parse_fail(c->src, v->pos, "buffer shape dimensions must be integers");
  }
}

/* T.Buffer(shape, dtype, ...), T.match_buffer(param, shape, dtype, ...) and
 * T.alloc_buffer(shape, dtype, ...): `first` is the index of the shape argument. */
static const tj_buffer_t *decl_buffer(tj_pctx_t *c, const tj_py_t *call, int first, const char *name) {
  static const char *const kws[] = {"shape", "dtype", "data", "strides", "elem_offset", "scope", "align",
                                    "offset_factor", "buffer_type", "axis_separators", NULL};
  tj_py_check_kwargs(c, call, kws);
  if (call->n < first + 1 && !tj_py_kwarg(call, "shape")) tj_parse_fail(c->src, call->pos, "a buffer needs a shape");
  if (call->n > first + 2) tj_parse_fail(c->src, call->items[first + 2]->pos, "extra positional argument: give buffer options by keyword");
  tj_val_t shape = tj_tir_eval(c, call->n > first ? call->items[first] : tj_py_kwarg(call, "shape"));
  tj_ptrvec_t dims = {0};
  shape_of(c, &shape, &dims);
  tj_dtype_t dt = TJ_F32;
  const tj_py_t *dte = call->n > first + 1 ? call->items[first + 1] : tj_py_kwarg(call, "dtype");
  if (dte) {
    tj_val_t d = tj_tir_eval(c, dte);
    dt = tj_val_dtype(c, &d);
  }
  const tj_tir_expr_t **strides = NULL;
  const tj_py_t *st = tj_py_kwarg(call, "strides");
  if (st) {
    tj_val_t sv = tj_tir_eval(c, st);
    if (sv.kind == V_SEQ && sv.n > 0) {
      if (sv.n != dims.n) tj_parse_fail(c->src, st->pos, "strides must have one entry per dimension");
      strides = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)sv.n));
      for (int i = 0; i < sv.n; i++) strides[i] = tj_tir_as_expr(c, &sv.items[i]);
    }
  }
  tj_buffer_t *b = (tj_buffer_t *)TJ_CHK(c, tj_buffer_new(c->arena, name, dt, dims.n,
                                                          (const tj_tir_expr_t *const *)dims.items, strides));
  const tj_py_t *sc = tj_py_kwarg(call, "scope");
  if (sc) {
    tj_val_t s = tj_tir_eval(c, sc);
    if (s.kind != V_STR) tj_parse_fail(c->src, sc->pos, "scope must be a string");
    b->scope = tj_pctx_str(c, s.s);
  }
  const tj_py_t *eo = tj_py_kwarg(call, "elem_offset"), *of = tj_py_kwarg(call, "offset_factor");
  if (eo) {
    tj_val_t e = tj_tir_eval(c, eo);
    if (e.kind != V_NONE) b->elem_offset = tj_tir_as_expr(c, &e);
  } else if (of) {
    tj_val_t e = tj_tir_eval(c, of);
    if (e.kind != V_INT) tj_parse_fail(c->src, of->pos, "offset_factor must be an integer");
    if (e.i != 0) /* as BufferDecl: a non-zero offset factor makes a symbolic elem_offset */
      b->elem_offset = TJ_CHK(c, tj_tir_var(c->arena, "elem_offset", dims.n ? ((const tj_tir_expr_t *)dims.items[0])->dtype : TJ_I32));
  }
  const tj_py_t *ax = tj_py_kwarg(call, "axis_separators");
  if (ax) {
    tj_val_t a = tj_tir_eval(c, ax);
    if (a.kind != V_SEQ) tj_parse_fail(c->src, ax->pos, "axis_separators must be a list of integers");
    int64_t *seps = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(int64_t) * (size_t)(a.n + 1)));
    for (int i = 0; i < a.n; i++) {
      if (a.items[i].kind != V_INT) tj_parse_fail(c->src, a.items[i].pos, "axis separator must be an integer");
      seps[i] = a.items[i].i;
    }
    b->n_axis_separators = a.n;
    b->axis_separators = seps;
  }
  return b;
}

static tj_val_t buffer_val(tj_src_pos_t pos, const tj_buffer_t *b) {
  tj_val_t v = tj_val_make(V_BUFFER, pos);
  v.buf = b;
  return v;
}

/* ---- blocks ---- */

static tj_tblock_t *new_frame(tj_pctx_t *c) {
  tj_tblock_t *f = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_tblock_t)));
  f->parent = c->block;
  return f;
}

static const tj_tloop_t *find_loop(tj_pctx_t *c, const tj_tir_expr_t *var) {
  for (const tj_tloop_t *l = c->loop; l; l = l->parent)
    if (l->var == var) return l;
  return NULL;
}

static void push_iter(tj_pctx_t *c, tj_src_pos_t pos, const char *name, tj_iter_kind_t kind, tj_range_t dom,
                      const tj_tir_expr_t *value, tj_dtype_t want) {
  tj_tblock_t *f = c->block;
  if (!f || !f->parent) tj_parse_fail(c->src, pos, "T.axis.* is only allowed directly inside a T.block");
  int bits = want.bits;
  if (dom.min->dtype.bits > bits) bits = dom.min->dtype.bits;
  if (dom.extent->dtype.bits > bits) bits = dom.extent->dtype.bits;
  if (value->dtype.bits > bits) bits = value->dtype.bits;
  if (!tj_dtype_is_int(value->dtype)) tj_parse_fail(c->src, pos, "a block iterator must be bound to an integer expression");
  tj_iter_var_t *iv = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof *iv));
  iv->var = TJ_CHK(c, tj_tir_var(c->arena, name, tj_dtype_make(TJ_DT_INT, bits, 1)));
  iv->dom = dom;
  iv->kind = kind;
  tj_ptrvec_push(c->src, &f->iter_vars, iv);
  tj_ptrvec_push(c->src, &f->iter_values, value);
  tj_pctx_bind(c, name, prim_val(pos, iv->var));
}

/* Range from T.axis.* `dom`: an extent, or (min, end). */
static tj_range_t axis_dom(tj_pctx_t *c, const tj_val_t *d) {
  tj_range_t r;
  if (d->kind == V_SEQ) {
    if (d->n != 2) tj_parse_fail(c->src, d->pos, "an axis domain is an extent or a (begin, end) pair");
    r.min = tj_tir_as_expr(c, &d->items[0]);
    r.extent = tj_tir_binop(c, d->pos, TJ_TIR_SUB, d->items[1], d->items[0]);
  } else {
    r.extent = tj_tir_as_expr(c, d);
    r.min = TJ_CHK(c, tj_tir_int(c->arena, r.extent->dtype, 0));
  }
  return r;
}

static void target_names(tj_pctx_t *c, const tj_py_t *t, tj_ptrvec_t *names) {
  if (t->kind == PY_NAME) {
    tj_ptrvec_push(c->src, names, t);
    return;
  }
  if (t->kind != PY_TUPLE && t->kind != PY_LIST) tj_parse_fail(c->src, t->pos, "expected a name or a tuple of names");
  for (int i = 0; i < t->n; i++) {
    if (t->items[i]->kind != PY_NAME) tj_parse_fail(c->src, t->items[i]->pos, "expected a name");
    tj_ptrvec_push(c->src, names, t->items[i]);
  }
}

static void parse_axis(tj_pctx_t *c, const tj_py_t *target, const tj_py_t *call, const char *fname) {
  tj_ptrvec_t names = {0};
  target_names(c, target, &names);
  tj_dtype_t want = TJ_I32;
  const tj_py_t *dk = tj_py_kwarg(call, "dtype");
  if (dk) {
    tj_val_t d = tj_tir_eval(c, dk);
    want = tj_val_dtype(c, &d);
  }
  if (!strcmp(fname, "T.axis.remap")) {
    tj_py_check_nargs(c, call, fname, 2, 2);
    tj_val_t kinds = tj_tir_eval(c, call->items[0]), binds = tj_tir_eval(c, call->items[1]);
    if (kinds.kind != V_STR) tj_parse_fail(c->src, kinds.pos, "expected a string of axis kinds such as \"SSR\"");
    if (binds.kind != V_SEQ) tj_parse_fail(c->src, binds.pos, "expected a list of loop variables");
    int nk = (int)strlen(kinds.s);
    if (nk != binds.n || nk != names.n)
      tj_parse_fail(c->src, call->pos, "T.axis.remap: %d kinds, %d loop variables and %d names must agree", nk,
                    binds.n, names.n);
    for (int i = 0; i < nk; i++) {
      const tj_py_t *nm = names.items[i];
      char k = kinds.s[i];
      if (k != 'S' && k != 'R') tj_parse_fail(c->src, kinds.pos, "axis kind '%c' is not supported (use S or R)", k);
      const tj_tir_expr_t *v = tj_tir_as_expr(c, &binds.items[i]);
      const tj_tloop_t *loop = v->kind == TJ_TIR_VAR ? find_loop(c, v) : NULL;
      if (!loop) tj_parse_fail(c->src, binds.items[i].pos, "T.axis.remap binds only loop variables of enclosing loops");
      tj_range_t dom = {loop->min, loop->extent};
      push_iter(c, nm->pos, nm->s, k == 'S' ? TJ_ITER_SPATIAL : TJ_ITER_REDUCE, dom, v, want);
    }
    return;
  }
  tj_iter_kind_t kind;
  if (!strcmp(fname, "T.axis.spatial") || !strcmp(fname, "T.axis.S")) kind = TJ_ITER_SPATIAL;
  else if (!strcmp(fname, "T.axis.reduce") || !strcmp(fname, "T.axis.R")) kind = TJ_ITER_REDUCE;
  else tj_parse_fail(c->src, call->pos, "unsupported axis kind '%s'", fname);
  tj_py_check_nargs(c, call, fname, 2, 2);
  if (names.n != 1) tj_parse_fail(c->src, target->pos, "%s defines one iterator", fname);
  tj_val_t dom = tj_tir_eval(c, call->items[0]), val = tj_tir_eval(c, call->items[1]);
  const tj_py_t *nm = names.items[0];
  push_iter(c, nm->pos, nm->s, kind, axis_dom(c, &dom), tj_tir_as_expr(c, &val), want);
}

static const tj_buffer_region_t *to_region(tj_pctx_t *c, const tj_val_t *v) {
  if (v->kind == V_REGION) return v->region;
  tj_buffer_region_t *r = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof *r));
  if (v->kind == V_BUFFER) { /* the whole buffer */
    r->buffer = v->buf;
    r->ndim = v->buf->ndim;
    tj_range_t *rg = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_range_t) * (size_t)(r->ndim + 1)));
    for (int i = 0; i < r->ndim; i++) {
      rg[i].min = TJ_CHK(c, tj_tir_int(c->arena, v->buf->shape[i]->dtype, 0));
      rg[i].extent = v->buf->shape[i];
    }
    r->ranges = rg;
    return r;
  }
  if (v->kind == V_PRIM && v->prim->kind == TJ_TIR_BUFFER_LOAD) { /* BufferRegionFromLoad */
    const tj_tir_expr_t *ld = v->prim;
    r->buffer = ld->load.buffer;
    r->ndim = ld->load.n_indices;
    tj_range_t *rg = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_range_t) * (size_t)(r->ndim + 1)));
    for (int i = 0; i < r->ndim; i++) {
      rg[i].min = ld->load.indices[i];
      rg[i].extent = TJ_CHK(c, tj_tir_int(c->arena, ld->load.indices[i]->dtype, 1));
    }
    r->ranges = rg;
    return r;
  }
  tj_parse_fail(c->src, v->pos, "expected a buffer region such as A[i, 0:16]");
}

static void parse_regions(tj_pctx_t *c, const tj_py_t *call, tj_ptrvec_t *out) {
  for (int i = 0; i < call->n; i++) {
    tj_val_t v = tj_tir_eval(c, call->items[i]);
    if (v.kind == V_SEQ) {
      for (int k = 0; k < v.n; k++) tj_ptrvec_push(c->src, out, to_region(c, &v.items[k]));
    } else {
      tj_ptrvec_push(c->src, out, to_region(c, &v));
    }
  }
}

/* Block-level annotations: T.reads, T.writes, T.where, T.block_attr. Returns false if
 * the call is not one of them. */
static bool parse_block_call(tj_pctx_t *c, const tj_py_t *call, const char *name) {
  bool reads = !strcmp(name, "T.reads"), writes = !strcmp(name, "T.writes");
  bool where = !strcmp(name, "T.where"), attr = !strcmp(name, "T.block_attr");
  if (!reads && !writes && !where && !attr) return false;
  tj_tblock_t *f = c->block;
  if (!f || !f->parent) tj_parse_fail(c->src, call->pos, "%s is only allowed directly inside a T.block", name);
  if (reads || writes) {
    bool *has = reads ? &f->has_reads : &f->has_writes;
    if (*has) tj_parse_fail(c->src, call->pos, "%s given twice in one block", name);
    *has = true;
    parse_regions(c, call, reads ? &f->reads : &f->writes);
  } else if (where) {
    tj_py_check_nargs(c, call, name, 1, 1);
    tj_val_t v = tj_tir_eval(c, call->items[0]);
    f->predicate = tj_tir_as_typed(c, &v, TJ_BOOL);
  } else {
    tj_py_check_nargs(c, call, name, 1, 1);
    tj_val_t v = tj_tir_eval(c, call->items[0]);
    if (v.kind != V_DICT) tj_parse_fail(c->src, v.pos, "T.block_attr expects a dict");
    f->annotations = tj_val_to_attrs(c, &v);
  }
  return true;
}

/* ---- access region detection (T.reads/T.writes omitted) ---- */

typedef struct access {
  const tj_buffer_t *buffer;
  tj_range_t *ranges;  /* hull so far */
  const tj_tir_expr_t *const *first; /* indices of the first access */
  bool point;          /* every access used the same indices */
} access_t;

typedef struct detector {
  tj_pctx_t *c;
  tj_ptrvec_t reads, writes; /* access_t* */
  tj_ptrvec_t loops;         /* loop stmts inside the block (relaxed) */
} detector_t;

static const tj_tir_stmt_t *relaxed_loop(detector_t *d, const tj_tir_expr_t *var) {
  for (int i = 0; i < d->loops.n; i++) {
    const tj_tir_stmt_t *l = d->loops.items[i];
    if (l->loop.var == var) return l;
  }
  return NULL;
}

/* Interval [lo, hi] (inclusive) of e over the relaxed loops, with constant or
 * loop-free bounds only; false when it cannot be bounded simply. */
static bool bound(detector_t *d, const tj_tir_expr_t *e, const tj_tir_expr_t **lo, const tj_tir_expr_t **hi) {
  tj_pctx_t *c = d->c;
  if (e->kind == TJ_TIR_VAR) {
    const tj_tir_stmt_t *l = relaxed_loop(d, e);
    if (!l) return *lo = *hi = e, true;
    *lo = l->loop.min;
    tj_val_t mn = prim_val((tj_src_pos_t){0, 0, 0}, l->loop.min), ex = prim_val(mn.pos, l->loop.extent);
    tj_val_t one = tj_val_make(V_INT, mn.pos);
    one.i = 1;
    *hi = tj_tir_binop(c, mn.pos, TJ_TIR_SUB, prim_val(mn.pos, tj_tir_binop(c, mn.pos, TJ_TIR_ADD, mn, ex)), one);
    return true;
  }
  if (e->kind == TJ_TIR_INT_IMM || e->kind == TJ_TIR_FLOAT_IMM) return *lo = *hi = e, true;
  if (e->kind == TJ_TIR_ADD || e->kind == TJ_TIR_SUB || e->kind == TJ_TIR_MUL || e->kind == TJ_TIR_FLOOR_DIV) {
    const tj_tir_expr_t *al, *ah, *bl, *bh;
    if (!bound(d, e->binary.a, &al, &ah) || !bound(d, e->binary.b, &bl, &bh)) return false;
    tj_src_pos_t p = {0, 0, 0};
    if (al == ah && bl == bh) return *lo = *hi = (al == e->binary.a && bl == e->binary.b) ? e : tj_tir_binop(c, p, e->kind, prim_val(p, al), prim_val(p, bl)), true;
    int64_t k;
    switch (e->kind) {
      case TJ_TIR_ADD:
        *lo = tj_tir_binop(c, p, TJ_TIR_ADD, prim_val(p, al), prim_val(p, bl));
        *hi = tj_tir_binop(c, p, TJ_TIR_ADD, prim_val(p, ah), prim_val(p, bh));
        return true;
      case TJ_TIR_SUB:
        *lo = tj_tir_binop(c, p, TJ_TIR_SUB, prim_val(p, al), prim_val(p, bh));
        *hi = tj_tir_binop(c, p, TJ_TIR_SUB, prim_val(p, ah), prim_val(p, bl));
        return true;
      case TJ_TIR_MUL: case TJ_TIR_FLOOR_DIV:
        if (bl != bh || !tj_tir_is_const_int(bl, &k) || k <= 0) return false;
        *lo = tj_tir_binop(c, p, e->kind, prim_val(p, al), prim_val(p, bl));
        *hi = tj_tir_binop(c, p, e->kind, prim_val(p, ah), prim_val(p, bl));
        return true;
      default: return false;
    }
  }
  /* loop-free expressions of any other kind are points */
  return false;
}

static bool mentions_relaxed(detector_t *d, const tj_tir_expr_t *e) {
  if (!e) return false;
  if (e->kind == TJ_TIR_VAR) return relaxed_loop(d, e) != NULL;
  if (tj_tir_kind_is_binary(e->kind) || e->kind == TJ_TIR_MIN || e->kind == TJ_TIR_MAX)
    return mentions_relaxed(d, e->binary.a) || mentions_relaxed(d, e->binary.b);
  if (e->kind == TJ_TIR_CAST || e->kind == TJ_TIR_NOT) return mentions_relaxed(d, e->unary.operand);
  if (e->kind == TJ_TIR_BUFFER_LOAD || e->kind == TJ_TIR_CALL || e->kind == TJ_TIR_SELECT) return true;
  return false;
}

/* Splits e into base + constant offset (base may be NULL for a constant). */
static const tj_tir_expr_t *split_offset(const tj_tir_expr_t *e, int64_t *off) {
  int64_t k;
  *off = 0;
  if (tj_tir_is_const_int(e, &k)) return *off = k, NULL;
  if ((e->kind == TJ_TIR_ADD || e->kind == TJ_TIR_SUB) && tj_tir_is_const_int(e->binary.b, &k)) {
    *off = e->kind == TJ_TIR_ADD ? k : -k;
    return e->binary.a;
  }
  return e;
}

/* Widens range r (point so far or hull) to cover [lo, hi]; falls back to the whole
 * dimension when the bounds are not comparable. */
static void widen(detector_t *d, const tj_buffer_t *buf, int dim, tj_range_t *r, const tj_tir_expr_t *lo,
                  const tj_tir_expr_t *hi) {
  tj_pctx_t *c = d->c;
  tj_src_pos_t p = {0, 0, 0};
  int64_t o1, o2, o4, ext = 0;
  const tj_tir_expr_t *b1 = split_offset(r->min, &o1), *b2 = split_offset(lo, &o2), *b4 = split_offset(hi, &o4);
  bool same = tj_tir_is_const_int(r->extent, &ext) && (b1 == b2 || tj_struct_equal_tir_expr(b1, b2)) && (b1 == b4 || tj_struct_equal_tir_expr(b1, b4));
  int64_t o3 = o1 + ext - 1;
  if (!same) {
    r->min = TJ_CHK(c, tj_tir_int(c->arena, buf->shape[dim]->dtype, 0));
    r->extent = buf->shape[dim];
    return;
  }
  int64_t mn = o1 < o2 ? o1 : o2, mx = o3 > o4 ? o3 : o4;
  tj_dtype_t dt = r->min->dtype;
  tj_val_t off = tj_val_make(V_INT, p);
  off.i = mn;
  r->min = b1 ? tj_tir_binop(c, p, TJ_TIR_ADD, prim_val(p, b1), off) : TJ_CHK(c, tj_tir_int(c->arena, dt, mn));
  r->extent = TJ_CHK(c, tj_tir_int(c->arena, dt, mx - mn + 1));
}

static void record(detector_t *d, tj_ptrvec_t *list, const tj_buffer_t *buf, int n, const tj_tir_expr_t *const *idx) {
  tj_pctx_t *c = d->c;
  access_t *acc = NULL;
  for (int i = 0; i < list->n; i++)
    if (((access_t *)list->items[i])->buffer == buf) acc = (access_t *)list->items[i];
  bool relaxed = false;
  for (int i = 0; i < n; i++) relaxed |= mentions_relaxed(d, idx[i]);
  if (!acc) {
    acc = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof *acc));
    acc->buffer = buf;
    acc->first = idx;
    acc->point = !relaxed;
    acc->ranges = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(tj_range_t) * (size_t)(n + 1)));
    for (int i = 0; i < n; i++) {
      const tj_tir_expr_t *lo, *hi;
      if (!mentions_relaxed(d, idx[i])) {
        acc->ranges[i].min = idx[i];
        acc->ranges[i].extent = TJ_CHK(c, tj_tir_int(c->arena, idx[i]->dtype, 1));
      } else if (bound(d, idx[i], &lo, &hi)) {
        tj_src_pos_t p = {0, 0, 0};
        tj_val_t one = tj_val_make(V_INT, p);
        one.i = 1;
        acc->ranges[i].min = lo;
        acc->ranges[i].extent = tj_tir_binop(c, p, TJ_TIR_ADD, prim_val(p, tj_tir_binop(c, p, TJ_TIR_SUB, prim_val(p, hi), prim_val(p, lo))), one);
      } else {
        acc->ranges[i].min = TJ_CHK(c, tj_tir_int(c->arena, buf->shape[i]->dtype, 0));
        acc->ranges[i].extent = buf->shape[i];
      }
    }
    tj_ptrvec_push(c->src, list, acc);
    return;
  }
  for (int i = 0; i < n; i++) {
    if (acc->point && !relaxed && tj_struct_equal_tir_expr(acc->first[i], idx[i])) continue;
    const tj_tir_expr_t *lo = idx[i], *hi = idx[i];
    if (mentions_relaxed(d, idx[i]) && !bound(d, idx[i], &lo, &hi)) {
      acc->ranges[i].min = TJ_CHK(c, tj_tir_int(c->arena, buf->shape[i]->dtype, 0));
      acc->ranges[i].extent = buf->shape[i];
      continue;
    }
    widen(d, buf, i, &acc->ranges[i], lo, hi);
  }
  bool same = true;
  for (int i = 0; i < n; i++) same &= tj_struct_equal_tir_expr(acc->first[i], idx[i]);
  acc->point = acc->point && same && !relaxed;
}

static void detect_expr(detector_t *d, const tj_tir_expr_t *e);

static void detect_exprs(detector_t *d, int n, const tj_tir_expr_t *const *es) {
  for (int i = 0; i < n; i++) detect_expr(d, es[i]);
}

static void detect_expr(detector_t *d, const tj_tir_expr_t *e) {
  if (!e) return;
  switch (e->kind) {
    case TJ_TIR_BUFFER_LOAD:
      detect_exprs(d, e->load.n_indices, e->load.indices);
      record(d, &d->reads, e->load.buffer, e->load.n_indices, e->load.indices);
      return;
    case TJ_TIR_CAST: case TJ_TIR_NOT: detect_expr(d, e->unary.operand); return;
    case TJ_TIR_SELECT:
      detect_expr(d, e->select.cond);
      detect_expr(d, e->select.true_value);
      detect_expr(d, e->select.false_value);
      return;
    case TJ_TIR_CALL: detect_exprs(d, e->call.n_args, e->call.args); return;
    case TJ_TIR_LET: detect_expr(d, e->let.value); detect_expr(d, e->let.body); return;
    default:
      if (tj_tir_kind_is_binary(e->kind) || e->kind == TJ_TIR_MIN || e->kind == TJ_TIR_MAX) {
        detect_expr(d, e->binary.a);
        detect_expr(d, e->binary.b);
      }
  }
}

static void detect_regions(detector_t *d, int n, const tj_buffer_region_t *rs, tj_ptrvec_t *list) {
  for (int i = 0; i < n; i++) {
    const tj_tir_expr_t **mins = TJ_CHK(d->c, tj_arena_alloc(d->c->arena, sizeof(void *) * (size_t)(rs[i].ndim + 1)));
    for (int k = 0; k < rs[i].ndim; k++) mins[k] = rs[i].ranges[k].min;
    record(d, list, rs[i].buffer, rs[i].ndim, mins);
  }
}

static void detect_stmt(detector_t *d, const tj_tir_stmt_t *s) {
  if (!s) return;
  switch (s->kind) {
    case TJ_TIR_FOR:
      tj_ptrvec_push(d->c->src, &d->loops, s);
      detect_stmt(d, s->loop.body);
      d->loops.n--;
      return;
    case TJ_TIR_BLOCK_REALIZE: /* a nested block contributes its own regions */
      detect_regions(d, s->realize.block->n_reads, s->realize.block->reads, &d->reads);
      detect_regions(d, s->realize.block->n_writes, s->realize.block->writes, &d->writes);
      return;
    case TJ_TIR_BUFFER_STORE:
      detect_exprs(d, s->store.n_indices, s->store.indices);
      record(d, &d->writes, s->store.buffer, s->store.n_indices, s->store.indices);
      detect_expr(d, s->store.value);
      return;
    case TJ_TIR_LET_STMT: detect_expr(d, s->let.value); detect_stmt(d, s->let.body); return;
    case TJ_TIR_IF:
      detect_expr(d, s->if_.cond);
      detect_stmt(d, s->if_.then_stmt);
      detect_stmt(d, s->if_.else_stmt);
      return;
    case TJ_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++) detect_stmt(d, s->seq.stmts[i]);
      return;
    case TJ_TIR_EVALUATE: detect_expr(d, s->evaluate.value); return;
    default: return;
  }
}

static void to_regions(detector_t *d, const tj_ptrvec_t *accs, const tj_tblock_t *f, int *out_n,
                       const tj_buffer_region_t **out) {
  tj_buffer_region_t *rs = TJ_CHK(d->c, tj_arena_alloc(d->c->arena, sizeof(tj_buffer_region_t) * (size_t)(accs->n + 1)));
  int n = 0;
  for (int i = 0; i < accs->n; i++) {
    const access_t *a = accs->items[i];
    bool local = false; /* buffers allocated by the block itself are not accesses */
    for (int k = 0; k < f->allocs.n; k++) local |= f->allocs.items[k] == a->buffer;
    if (local) continue;
    rs[n].buffer = a->buffer;
    rs[n].ndim = a->buffer->ndim;
    rs[n].ranges = a->ranges;
    n++;
  }
  *out_n = n;
  *out = rs;
}

static void complete_access(tj_pctx_t *c, tj_block_t *b, const tj_tblock_t *f) {
  detector_t d = {c, {0}, {0}, {0}};
  detect_stmt(&d, b->init);
  detect_stmt(&d, b->body);
  int n;
  const tj_buffer_region_t *rs;
  if (!f->has_reads) {
    to_regions(&d, &d.reads, f, &n, &rs);
    b->n_reads = n;
    b->reads = rs;
  }
  if (!f->has_writes) {
    to_regions(&d, &d.writes, f, &n, &rs);
    b->n_writes = n;
    b->writes = rs;
  }
}

static tj_block_t *finish_block(tj_pctx_t *c, const char *name, tj_tblock_t *f, const tj_tir_stmt_t *body) {
  tj_block_t *b = TJ_CHK(c, tj_block_new(c->arena, name));
  b->n_iter_vars = f->iter_vars.n;
  b->iter_vars = vec_to_array(c, &f->iter_vars, sizeof(tj_iter_var_t));
  b->n_reads = f->reads.n;
  b->reads = vec_to_array(c, &f->reads, sizeof(tj_buffer_region_t));
  b->n_writes = f->writes.n;
  b->writes = vec_to_array(c, &f->writes, sizeof(tj_buffer_region_t));
  b->n_alloc_buffers = f->allocs.n;
  const tj_buffer_t **allocs = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(f->allocs.n + 1)));
  for (int i = 0; i < f->allocs.n; i++) allocs[i] = f->allocs.items[i];
  b->alloc_buffers = allocs;
  b->init = f->init;
  b->body = body;
  b->annotations = f->annotations;
  return b;
}

static const tj_tir_stmt_t *parse_block(tj_pctx_t *c, const tj_py_t *with, const tj_py_t *call) {
  static const char *const kws[] = {"no_realize", NULL};
  tj_py_check_kwargs(c, call, kws);
  tj_py_check_nargs(c, call, "T.block", 0, 1);
  const char *name = "";
  if (call->n == 1) {
    tj_val_t nv = tj_tir_eval(c, call->items[0]);
    if (nv.kind != V_STR) tj_parse_fail(c->src, nv.pos, "a block name must be a string");
    name = nv.s;
  }
  if (with->b) tj_parse_fail(c->src, with->b->pos, "'with T.block(...) as x' is not supported");
  tj_tblock_t *f = new_frame(c);
  c->block = f;
  int mark = tj_pctx_scope_open(c);
  const tj_tir_stmt_t *body = parse_body(c, with->items, with->n);
  tj_pctx_scope_close(c, mark);
  c->block = f->parent;
  tj_block_t *b = finish_block(c, name, f, body);
  if (!f->has_reads || !f->has_writes) complete_access(c, b, f);
  const tj_tir_stmt_t *r = TJ_CHK(c, tj_tir_realize(c->arena, f->iter_values.n, (const tj_tir_expr_t *const *)f->iter_values.items,
                                                    f->predicate, b));
  if (!f->parent->parent && f->iter_vars.n == 0) {
    c->root_candidate = r;
    c->root_candidate_detected_reads = !f->has_reads;
    c->root_candidate_detected_writes = !f->has_writes;
  }
  return r;
}

static void parse_init(tj_pctx_t *c, const tj_py_t *with, const tj_py_t *call) {
  tj_py_check_nargs(c, call, "T.init", 0, 0);
  tj_tblock_t *f = c->block;
  if (!f || !f->parent) tj_parse_fail(c->src, with->pos, "T.init() is only allowed directly inside a T.block");
  if (f->init) tj_parse_fail(c->src, with->pos, "a block has at most one T.init()");
  int mark = tj_pctx_scope_open(c);
  f->init = parse_body(c, with->items, with->n);
  tj_pctx_scope_close(c, mark);
}

/* ---- loops ---- */

typedef struct loopspec {
  int n;
  const tj_tir_expr_t *mins[TJ_PARSE_MAX_DEPTH], *extents[TJ_PARSE_MAX_DEPTH];
  tj_for_kind_t kind;
} loopspec_t;

static void loop_range(tj_pctx_t *c, const tj_py_t *call, const tj_val_t *args, int nargs, loopspec_t *ls) {
  if (nargs < 1 || nargs > 2) tj_parse_fail(c->src, call->pos, "a loop takes (extent) or (begin, end)");
  tj_src_pos_t p = call->pos;
  if (nargs == 1) {
    ls->extents[0] = tj_tir_as_expr(c, &args[0]);
    ls->mins[0] = TJ_CHK(c, tj_tir_int(c->arena, ls->extents[0]->dtype, 0));
  } else {
    ls->mins[0] = tj_tir_as_expr(c, &args[0]);
    ls->extents[0] = tj_tir_binop(c, p, TJ_TIR_SUB, args[1], args[0]);
  }
  ls->n = 1;
}

static void loop_spec(tj_pctx_t *c, const tj_py_t *iter, loopspec_t *ls) {
  const char *name = call_name(c, iter);
  if (!name) tj_parse_fail(c->src, iter->pos, "expected T.grid(...), range(...), T.serial(...), T.parallel(...), T.vectorized(...) or T.unroll(...)");
  tj_ptrvec_t vals = {0};
  for (int i = 0; i < iter->n; i++) {
    const tj_py_t *a = iter->items[i];
    tj_val_t v = tj_tir_eval(c, a->kind == PY_STARRED ? a->a : a);
    if (a->kind == PY_STARRED) {
      if (v.kind != V_SEQ) tj_parse_fail(c->src, a->pos, "only a tuple can be unpacked with '*'");
      for (int k = 0; k < v.n; k++) tj_ptrvec_push(c->src, &vals, &v.items[k]);
    } else {
      tj_val_t *pv = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof *pv));
      *pv = v;
      tj_ptrvec_push(c->src, &vals, pv);
    }
  }
  tj_val_t *args = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_val_t) * (size_t)(vals.n + 1)));
  for (int i = 0; i < vals.n; i++) args[i] = *(const tj_val_t *)vals.items[i];
  ls->kind = TJ_FOR_SERIAL;
  if (!strcmp(name, "T.grid")) {
    if (vals.n < 1 || vals.n >= TJ_PARSE_MAX_DEPTH) tj_parse_fail(c->src, iter->pos, "T.grid needs 1 to %d extents", TJ_PARSE_MAX_DEPTH - 1);
    for (int i = 0; i < vals.n; i++) {
      ls->extents[i] = tj_tir_as_expr(c, &args[i]);
      ls->mins[i] = TJ_CHK(c, tj_tir_int(c->arena, ls->extents[i]->dtype, 0));
    }
    ls->n = vals.n;
    return;
  }
  static const struct { const char *name; tj_for_kind_t kind; } kinds[] = {
      {"range", TJ_FOR_SERIAL}, {"T.serial", TJ_FOR_SERIAL}, {"T.parallel", TJ_FOR_PARALLEL},
      {"T.vectorized", TJ_FOR_VECTORIZED}, {"T.unroll", TJ_FOR_UNROLLED}};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (!strcmp(name, kinds[i].name)) {
      static const char *const kws[] = {"annotations", NULL};
      tj_py_check_kwargs(c, iter, kws);
      loop_range(c, iter, args, vals.n, ls);
      ls->kind = kinds[i].kind;
      return;
    }
  tj_parse_fail(c->src, iter->pos, "unsupported loop kind '%s'", name);
}

static const tj_tir_stmt_t *parse_for(tj_pctx_t *c, const tj_py_t *s) {
  loopspec_t *ls = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof *ls));
  loop_spec(c, s->b, ls);
  int mark = tj_pctx_scope_open(c);
  const tj_tir_expr_t *vars[TJ_PARSE_MAX_DEPTH];
  tj_ptrvec_t names = {0};
  bool single_name_for_many = s->a->kind == PY_NAME && ls->n > 1;
  if (single_name_for_many) {
    tj_val_t seq = tj_val_make(V_SEQ, s->a->pos);
    tj_val_t *items = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof(tj_val_t) * (size_t)ls->n));
    for (int i = 0; i < ls->n; i++) {
      tj_dtype_t dt = ls->extents[i]->dtype;
      if (ls->mins[i]->dtype.bits > dt.bits) dt = ls->mins[i]->dtype;
      vars[i] = TJ_CHK(c, tj_tir_var(c->arena, TJ_CHK(c, tj_arena_printf(c->src->scratch, "%s_%d", s->a->s, i)), dt));
      items[i] = prim_val(s->a->pos, vars[i]);
    }
    seq.n = ls->n;
    seq.items = items;
    seq.is_tuple = true;
    tj_pctx_bind(c, s->a->s, seq);
  } else {
    target_names(c, s->a, &names);
    if (names.n != ls->n) tj_parse_fail(c->src, s->a->pos, "%d loop variables for %d loops", names.n, ls->n);
    for (int i = 0; i < ls->n; i++) {
      const tj_py_t *nm = names.items[i];
      tj_dtype_t dt = ls->extents[i]->dtype;
      if (ls->mins[i]->dtype.bits > dt.bits) dt = ls->mins[i]->dtype;
      vars[i] = TJ_CHK(c, tj_tir_var(c->arena, nm->s, dt));
      tj_pctx_bind(c, nm->s, prim_val(nm->pos, vars[i]));
    }
  }
  tj_tloop_t *saved = c->loop;
  for (int i = 0; i < ls->n; i++) {
    tj_tloop_t *l = TJ_CHK(c, tj_arena_alloc(c->src->scratch, sizeof *l));
    l->var = vars[i];
    l->min = ls->mins[i];
    l->extent = ls->extents[i];
    l->parent = c->loop;
    c->loop = l;
  }
  const tj_tir_stmt_t *body = parse_body(c, s->items, s->n);
  c->loop = saved;
  tj_pctx_scope_close(c, mark);
  for (int i = ls->n - 1; i >= 0; i--)
    body = TJ_CHK(c, tj_tir_for(c->arena, vars[i], ls->mins[i], ls->extents[i], ls->kind, body));
  return body;
}

/* ---- statements ---- */

static const tj_tir_stmt_t *parse_store(tj_pctx_t *c, const tj_py_t *target, tj_val_t value) {
  tj_val_t base = tj_tir_eval(c, target->a);
  if (base.kind != V_BUFFER) tj_parse_fail(c->src, target->pos, "only buffer elements can be assigned with [...]");
  const tj_buffer_t *b = base.buf;
  if (target->n != b->ndim)
    tj_parse_fail(c->src, target->pos, "buffer '%s' has %d dimensions but %d indices are given", b->name, b->ndim, target->n);
  const tj_tir_expr_t **idx = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(target->n + 1)));
  for (int i = 0; i < target->n; i++) {
    if (target->items[i]->kind == PY_SLICE) tj_parse_fail(c->src, target->items[i]->pos, "slices cannot be stored to");
    tj_val_t v = tj_tir_eval(c, target->items[i]);
    idx[i] = tj_tir_as_expr(c, &v);
  }
  const tj_tir_expr_t *val = tj_tir_as_typed(c, &value, b->dtype);
  if (!tj_dtype_eq(tj_dtype_element(val->dtype), b->dtype)) {
    char x[TJ_DTYPE_BUFSIZE], y[TJ_DTYPE_BUFSIZE];
    tj_parse_fail(c->src, value.pos, "storing a %s value into buffer '%s' of dtype %s (add a T.Cast)",
                  tj_dtype_str(val->dtype, x), b->name, tj_dtype_str(b->dtype, y));
  }
  return TJ_CHK(c, tj_tir_store(c->arena, b, target->n, idx, val));
}

static void add_alloc(tj_pctx_t *c, const tj_buffer_t *b) {
  tj_tblock_t *f = c->block;
  tj_ptrvec_push(c->src, &f->allocs, b);
}

/* `name = <call>` forms that declare something rather than compute a value. Returns
 * true when handled. */
static bool parse_decl_assign(tj_pctx_t *c, const tj_py_t *s, const tj_py_t *target, const char *fname) {
  if (!fname) return false;
  const tj_py_t *call = s->a;
  if (!strncmp(fname, "T.axis.", 7)) {
    parse_axis(c, target, call, fname);
    return true;
  }
  if (target->kind != PY_NAME) return false;
  if (!strcmp(fname, "T.alloc_buffer")) {
    const tj_buffer_t *b = decl_buffer(c, call, 0, target->s);
    add_alloc(c, b);
    tj_pctx_bind(c, target->s, buffer_val(target->pos, b));
    return true;
  }
  if (!strcmp(fname, "T.match_buffer")) {
    if (c->block->parent) tj_parse_fail(c->src, call->pos, "T.match_buffer inside a block is not supported");
    if (call->n < 1) tj_parse_fail(c->src, call->pos, "T.match_buffer needs a parameter");
    tj_val_t p = tj_tir_eval(c, call->items[0]);
    if (p.kind != V_PRIM || p.prim->kind != TJ_TIR_VAR || p.prim->dtype.code != TJ_DT_HANDLE)
      tj_parse_fail(c->src, p.pos, "T.match_buffer expects a T.handle parameter");
    const tj_buffer_t *b = decl_buffer(c, call, 1, target->s);
    /* the function level frame keeps (param, buffer) pairs in match_buffers */
    const void **pair = TJ_CHK(c, tj_arena_alloc(c->src->scratch, 2 * sizeof(void *)));
    pair[0] = p.prim;
    pair[1] = b;
    for (int i = 0; i < c->block->match_buffers.n; i++)
      if (((const void *const *)c->block->match_buffers.items[i])[0] == p.prim)
        tj_parse_fail(c->src, p.pos, "parameter already matched to a buffer");
    tj_ptrvec_push(c->src, &c->block->match_buffers, pair);
    tj_pctx_bind(c, target->s, buffer_val(target->pos, b));
    return true;
  }
  tj_dtype_t dt;
  if (!strncmp(fname, "T.", 2) && call->n == 0 && call->n2 == 0 && tj_dtype_parse(fname + 2, &dt)) {
    tj_pctx_bind(c, target->s, prim_val(target->pos, TJ_CHK(c, tj_tir_var(c->arena, target->s, dt))));
    return true;
  }
  return false;
}

static bool parse_stmt_call(tj_pctx_t *c, const tj_py_t *call, tj_ptrvec_t *out) {
  const char *name = call_name(c, call);
  if (!name) return false;
  if (!strcmp(name, "T.func_attr")) {
    if (c->block->parent) tj_parse_fail(c->src, call->pos, "T.func_attr is only allowed at the function level");
    tj_py_check_nargs(c, call, name, 1, 1);
    tj_val_t v = tj_tir_eval(c, call->items[0]);
    if (v.kind != V_DICT) tj_parse_fail(c->src, v.pos, "T.func_attr expects a dict");
    if (c->block->annotations) tj_parse_fail(c->src, call->pos, "T.func_attr given twice");
    c->block->annotations = tj_val_to_attrs(c, &v);
    return true;
  }
  if (parse_block_call(c, call, name)) return true;
  if (!strcmp(name, "T.evaluate")) {
    tj_py_check_nargs(c, call, name, 1, 1);
    tj_val_t v = tj_tir_eval(c, call->items[0]);
    tj_ptrvec_push(c->src, out, TJ_CHK(c, tj_tir_evaluate(c->arena, tj_tir_as_expr(c, &v))));
    return true;
  }
  return false;
}

static const tj_tir_stmt_t *parse_if(tj_pctx_t *c, const tj_py_t *s) {
  tj_val_t cv = tj_tir_eval(c, s->a);
  const tj_tir_expr_t *cond = tj_tir_as_typed(c, &cv, TJ_BOOL);
  if (cond->dtype.code != TJ_DT_BOOL) tj_parse_fail(c->src, s->a->pos, "an if condition must be boolean");
  int mark = tj_pctx_scope_open(c);
  const tj_tir_stmt_t *then_s = parse_body(c, s->items, s->n);
  tj_pctx_scope_close(c, mark);
  const tj_tir_stmt_t *else_s = NULL;
  if (s->n2) {
    mark = tj_pctx_scope_open(c);
    else_s = parse_body(c, s->items2, s->n2);
    tj_pctx_scope_close(c, mark);
  }
  return TJ_CHK(c, tj_tir_if(c->arena, cond, then_s, else_s));
}

/* A let binding: `v: T.float32 = e` or `v = <PrimExpr>`; the rest of the list is its body. */
static const tj_tir_stmt_t *parse_let(tj_pctx_t *c, const tj_py_t *name, tj_dtype_t dt, const tj_tir_expr_t *value,
                                      const tj_py_t *const *rest, int n_rest) {
  const tj_tir_expr_t *var = TJ_CHK(c, tj_tir_var(c->arena, name->s, dt));
  int mark = tj_pctx_scope_open(c);
  tj_pctx_bind(c, name->s, prim_val(name->pos, var));
  const tj_tir_stmt_t *body = parse_body(c, rest, n_rest);
  tj_pctx_scope_close(c, mark);
  return TJ_CHK(c, tj_tir_let_stmt(c->arena, var, value, body));
}

static const tj_tir_stmt_t *parse_annassign(tj_pctx_t *c, const tj_py_t *s, const tj_py_t *const *rest, int n_rest) {
  if (s->a->kind != PY_NAME) tj_parse_fail(c->src, s->a->pos, "expected a variable name");
  if (!s->c) tj_parse_fail(c->src, s->pos, "a typed variable needs a value (v: T.float32 = ...)");
  tj_val_t ann = tj_tir_eval(c, s->b);
  tj_dtype_t dt = tj_val_dtype(c, &ann);
  tj_val_t v = tj_tir_eval(c, s->c);
  const tj_tir_expr_t *value = tj_tir_as_typed(c, &v, dt);
  if (!tj_dtype_eq(value->dtype, dt)) tj_parse_fail(c->src, s->c->pos, "the value does not have the annotated dtype");
  return parse_let(c, s->a, dt, value, rest, n_rest);
}

/* Returns a statement that consumed the rest of the list (a let), else NULL. */
static const tj_tir_stmt_t *parse_assign(tj_pctx_t *c, const tj_py_t *s, const tj_py_t *const *rest, int n_rest,
                                         tj_ptrvec_t *out) {
  if (s->n != 1) tj_parse_fail(c->src, s->items[1]->pos, "chained assignment (a = b = c) is not allowed");
  const tj_py_t *target = s->items[0];
  if (target->kind == PY_SUBSCRIPT) {
    tj_ptrvec_push(c->src, out, parse_store(c, target, tj_tir_eval(c, s->a)));
    return NULL;
  }
  if (parse_decl_assign(c, s, target, call_name(c, s->a))) return NULL;
  tj_val_t v = tj_tir_eval(c, s->a);
  if (target->kind != PY_NAME) {
    if (target->kind == PY_TUPLE && v.kind == V_SEQ && v.n == target->n) {
      for (int i = 0; i < target->n; i++) {
        if (target->items[i]->kind != PY_NAME) tj_parse_fail(c->src, target->items[i]->pos, "expected a name");
        tj_pctx_bind(c, target->items[i]->s, v.items[i]);
      }
      return NULL;
    }
    tj_parse_fail(c->src, target->pos, "cannot assign to this target");
  }
  if (v.kind == V_PRIM) return parse_let(c, target, v.prim->dtype, v.prim, rest, n_rest);
  tj_pctx_bind(c, target->s, v); /* a Python-level value (T.meta_var, a buffer alias, ...) */
  return NULL;
}

static const tj_tir_stmt_t *parse_augassign(tj_pctx_t *c, const tj_py_t *s) {
  if (s->a->kind != PY_SUBSCRIPT) tj_parse_fail(c->src, s->pos, "only buffer elements can be updated in place");
  static const struct { const char *op; tj_tir_expr_kind_t k; } ops[] = {
      {"+=", TJ_TIR_ADD}, {"-=", TJ_TIR_SUB}, {"*=", TJ_TIR_MUL}, {"/=", TJ_TIR_DIV}, {"//=", TJ_TIR_FLOOR_DIV}, {"%=", TJ_TIR_FLOOR_MOD}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(s->s, ops[i].op)) {
      tj_val_t cur = tj_tir_eval(c, s->a), rhs = tj_tir_eval(c, s->b);
      return parse_store(c, s->a, prim_val(s->pos, tj_tir_binop(c, s->pos, ops[i].k, cur, rhs)));
    }
  tj_parse_fail(c->src, s->pos, "operator '%s' is not supported", s->s);
}

static const tj_tir_stmt_t *parse_return(tj_pctx_t *c, const tj_py_t *s) {
  if (!s->a) tj_parse_fail(c->src, s->pos, "a PrimFunc 'return' needs a value");
  tj_val_t v = tj_tir_eval(c, s->a);
  const tj_tir_expr_t *e = tj_tir_as_expr(c, &v);
  return TJ_CHK(c, tj_tir_evaluate(c->arena, TJ_CHK(c, tj_tir_call(c->arena, e->dtype, "tir.ret", 1, &e))));
}

static const tj_tir_stmt_t *parse_with(tj_pctx_t *c, const tj_py_t *s) {
  const char *name = call_name(c, s->a);
  if (name && !strcmp(name, "T.block")) return parse_block(c, s, s->a);
  if (name && !strcmp(name, "T.init")) {
    parse_init(c, s, s->a);
    return NULL;
  }
  tj_parse_fail(c->src, s->a->pos, "expected T.block(...) or T.init() after 'with'");
}

static const tj_tir_stmt_t *parse_body(tj_pctx_t *c, const tj_py_t *const *items, int n) {
  tj_pctx_enter(c, n ? items[0]->pos : (tj_src_pos_t){0, 0, 0});
  tj_ptrvec_t out = {0};
  for (int i = 0; i < n; i++) {
    const tj_py_t *s = items[i];
    const tj_py_t *const *rest = items + i + 1;
    int n_rest = n - i - 1;
    const tj_tir_stmt_t *r = NULL, *tail = NULL;
    switch (s->kind) {
      case PY_FOR: r = parse_for(c, s); break;
      case PY_WITH: r = parse_with(c, s); break;
      case PY_IF: r = parse_if(c, s); break;
      case PY_ASSIGN: tail = parse_assign(c, s, rest, n_rest, &out); break;
      case PY_ANNASSIGN: tail = parse_annassign(c, s, rest, n_rest); break;
      case PY_AUGASSIGN: r = parse_augassign(c, s); break;
      case PY_RETURN: r = parse_return(c, s); break;
      case PY_PASS: case PY_IMPORT: break;
      case PY_EXPR_STMT:
        if (s->a->kind == PY_STR) break; /* docstring */
        if (s->a->kind == PY_CALL && parse_stmt_call(c, s->a, &out)) break;
        {
          tj_val_t v = tj_tir_eval(c, s->a);
          if (v.kind != V_PRIM) tj_parse_fail(c->src, s->pos, "this expression has no effect in a PrimFunc");
          r = TJ_CHK(c, tj_tir_evaluate(c->arena, v.prim));
        }
        break;
      default: tj_parse_fail(c->src, s->pos, "%s is not supported in a PrimFunc", tj_py_kind_name(s->kind));
    }
    if (r) tj_ptrvec_push(c->src, &out, r);
    if (tail) {
      tj_ptrvec_push(c->src, &out, tail);
      break;
    }
  }
  tj_pctx_leave(c);
  if (out.n == 0) return empty_stmt(c);
  return TJ_CHK(c, tj_tir_seq(c->arena, out.n, (const tj_tir_stmt_t *const *)out.items));
}

/* ---- PrimFunc ---- */


/* ScriptComplete: the implicit root block. */
static const tj_tir_stmt_t *wrap_root(tj_pctx_t *c, tj_tblock_t *fn, const tj_tir_stmt_t *body) {
  bool insert = fn->allocs.n > 0 ||
                (body->kind == TJ_TIR_BLOCK_REALIZE && body->realize.block->n_iter_vars > 0) ||
                (body->kind != TJ_TIR_BLOCK_REALIZE && tj_tir_stmt_contains_block(body));
  if (!insert) return body;
  tj_tblock_t root = {0};
  root.allocs = fn->allocs;
  tj_block_t *b = finish_block(c, "root", &root, body);
  return TJ_CHK(c, tj_tir_realize(c->arena, 0, NULL, NULL, b));
}

typedef struct pparam {
  const tj_tir_expr_t *var;
  const tj_buffer_t *buf;
} pparam_t;

static pparam_t parse_param(tj_pctx_t *c, const tj_py_t *p) {
  pparam_t r = {0};
  if (!p->a) tj_parse_fail(c->src, p->pos, "PrimFunc parameter '%s' needs a type annotation", p->s);
  if (p->b) tj_parse_fail(c->src, p->b->pos, "PrimFunc parameters cannot have default values");
  const char *ann = call_name(c, p->a);
  if (ann && !strcmp(ann, "T.Buffer")) {
    r.buf = decl_buffer(c, p->a, 0, p->s);
    r.var = TJ_CHK(c, tj_tir_var(c->arena, p->s, TJ_HANDLE));
    tj_pctx_bind(c, p->s, buffer_val(p->pos, r.buf));
    return r;
  }
  if (p->a->kind == PY_SUBSCRIPT) tj_parse_fail(c->src, p->a->pos, "use T.Buffer(shape, dtype) for buffer parameters");
  tj_val_t t = tj_tir_eval(c, p->a);
  if (t.kind != V_FUNC) tj_parse_fail(c->src, p->a->pos, "expected T.Buffer(...), T.handle or a scalar type such as T.int32");
  tj_dtype_t dt = tj_val_dtype(c, &t);
  r.var = TJ_CHK(c, tj_tir_var(c->arena, p->s, dt));
  tj_pctx_bind(c, p->s, prim_val(p->pos, r.var));
  return r;
}

const tj_prim_func_t *tj_parse_prim_func(tj_pctx_t *c, const tj_py_t *def, bool is_private) {
  int mark = tj_pctx_scope_open(c);
  tj_tblock_t *fn = new_frame(c);
  fn->parent = NULL;
  tj_tblock_t *saved_block = c->block;
  tj_tloop_t *saved_loop = c->loop;
  c->block = fn;
  c->loop = NULL;
  c->in_prim_func = true;
  const tj_tir_expr_t **params = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(def->np + 1)));
  const tj_buffer_t **bmap = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof(void *) * (size_t)(def->np + 1)));
  for (int i = 0; i < def->np; i++) {
    pparam_t pp = parse_param(c, def->params[i]);
    params[i] = pp.var;
    bmap[i] = pp.buf;
  }
  c->root_candidate = NULL;
  const tj_tir_stmt_t *body = parse_body(c, def->items, def->n);
  if (body == c->root_candidate) { /* ScriptComplete leaves the root block's regions as written */
    tj_block_t *root = (tj_block_t *)body->realize.block;
    if (c->root_candidate_detected_reads) root->n_reads = 0;
    if (c->root_candidate_detected_writes) root->n_writes = 0;
  }
  for (int i = 0; i < fn->match_buffers.n; i++) {
    const void *const *pair = fn->match_buffers.items[i];
    for (int k = 0; k < def->np; k++)
      if (params[k] == pair[0]) bmap[k] = pair[1];
  }
  tj_prim_func_t *f = TJ_CHK(c, tj_arena_alloc(c->arena, sizeof *f));
  f->n_params = def->np;
  f->params = params;
  f->buffer_map = bmap;
  f->body = wrap_root(c, fn, body);
  f->attrs = fn->annotations;
  if (!is_private && !tj_attrs_get(f->attrs, "global_symbol"))
    f->attrs = TJ_CHK(c, tj_attrs_set(c->arena, f->attrs, "global_symbol", tj_attr_str(tj_pctx_str(c, def->s))));
  c->block = saved_block;
  c->loop = saved_loop;
  c->in_prim_func = false;
  tj_pctx_scope_close(c, mark);
  return f;
}
