/* FoldConstant's direct evaluator (see fold_direct.h).
 *
 * The function is read once into a plan: the loop extents of its one block, the value
 * expression as nodes in post-order (each child before its parent), and for each load
 * the input it reads with its strides. The plan then runs a chunk of FD_CHUNK output
 * elements at a time: node by node, each over the whole chunk (a column of values), so
 * the per-node dispatch is paid once per chunk and not per element.
 *
 * Loads indexed by block iter vars and constants alone (expand_dims, broadcasts,
 * transposes) have their offsets computed from the iteration counter, with bounds
 * checked once in the plan; other indices (reshape's // and %) are evaluated as columns
 * and checked per element, and an index out of bounds gives the function back to the
 * interpreter, whose error names it.
 *
 * Measured on MobileNetV2's 312 batch_norm folds (32-960 elements each) on the Ice Lake
 * host: see docs/architecture.md. */
#include "transforms/fold_direct.h"

#include <math.h>
#include <string.h>

#include "support/alloc.h"

#define FD_MAX_DIMS 8
#define FD_MAX_NODES 48
#define FD_MAX_LOADS 8
#define FD_CHUNK 256

typedef enum fd_op { FD_ITER, FD_CONST, FD_LOAD, FD_BINARY, FD_SQRT, FD_RSQRT, FD_CAST } fd_op_t;

typedef union fd_val {
  double f;  /* float32/float64 values, already rounded to their dtype */
  int64_t i; /* int64 values */
} fd_val_t;

typedef struct fd_node {
  fd_op_t op;
  tj_dtype_t dtype;
  bool is_float;
  tj_tir_expr_kind_t kind; /* FD_BINARY's operation */
  int a, b;                /* operand nodes */
  int dim;                 /* FD_ITER: the block iter var's position */
  int load;                /* FD_LOAD: index into plan.loads */
  fd_val_t value;          /* FD_CONST */
} fd_node_t;

typedef struct fd_load {
  const char *base;
  tj_dtype_t dtype;
  size_t elem;
  int ndim;
  int64_t extent[FD_MAX_DIMS], stride[FD_MAX_DIMS];
  int index[FD_MAX_DIMS];        /* nodes; -1 for an affine dim (folded into coef/offset) */
  int64_t coef[FD_MAX_DIMS];     /* element offset per step of each output dim */
  int64_t offset;                /* the constant indices' part of the offset */
} fd_load_t;

typedef struct fd_plan {
  const tj_prim_func_t *f;
  int n_buffers;
  void *const *buffers;
  int ndim;
  int64_t extent[FD_MAX_DIMS];
  const tj_tir_expr_t *iter[FD_MAX_DIMS]; /* the block's iter vars, in output dim order */
  bool iter_used[FD_MAX_DIMS];            /* an FD_ITER node reads it (not only affine loads) */
  fd_node_t nodes[FD_MAX_NODES];
  int n_nodes;
  fd_load_t loads[FD_MAX_LOADS];
  int n_loads;
  int root;
  bool raw_copy; /* the value is one load of the output's dtype: bits copied */
} fd_plan_t;

/* ---- reading the function ---- */

static bool const_int(const tj_tir_expr_t *e, int64_t *out) { return e && tj_tir_is_const_int(e, out); }

static bool is_true(const tj_tir_expr_t *pred) {
  int64_t v;
  return !pred || (const_int(pred, &v) && v == 1);
}

/* A block that only binds iter vars and runs its body. */
static bool plain_block(const tj_tir_stmt_t *s) {
  const tj_block_t *b = s->realize.block;
  return is_true(s->realize.predicate) && !b->init && b->n_alloc_buffers == 0 && b->n_match_buffers == 0 && b->body;
}

/* A dense row-major buffer of static shape: its extents and strides (in elements). */
static bool dense_static(const tj_buffer_t *b, int64_t *extent, int64_t *stride) {
  int64_t off;
  if (b->ndim > FD_MAX_DIMS || b->strides || b->dtype.lanes != 1 || b->n_axis_separators) return false;
  if (b->elem_offset && (!const_int(b->elem_offset, &off) || off != 0)) return false;
  if (b->scope && strcmp(b->scope, "global") != 0) return false;
  for (int d = 0; d < b->ndim; d++)
    if (!const_int(b->shape[d], &extent[d]) || extent[d] < 0) return false;
  int64_t s = 1;
  for (int d = b->ndim - 1; d >= 0; d--) stride[d] = s, s *= extent[d];
  return true;
}

static bool float_column(tj_dtype_t d) { return d.code == TJ_DT_FLOAT && d.lanes == 1 && (d.bits == 32 || d.bits == 64); }
static bool int_column(tj_dtype_t d) { return d.code == TJ_DT_INT && d.lanes == 1 && d.bits == 64; }

/* The interpreter's rounding of a double to a float dtype. */
static double round_to(tj_dtype_t d, double x) { return d.bits == 32 ? (double)(float)x : x; }

static int add_node(fd_plan_t *p, fd_node_t n) {
  if (p->n_nodes == FD_MAX_NODES) return -1;
  p->nodes[p->n_nodes] = n;
  return p->n_nodes++;
}

static int add_expr(fd_plan_t *p, const tj_tir_expr_t *e);

/* The input buffer parameter `b` is, or -1 (the output and other buffers are not read). */
static int input_of(const fd_plan_t *p, const tj_buffer_t *b) {
  for (int i = 0; i < p->n_buffers - 1; i++)
    if (p->f->buffer_map[i] == b) return i;
  return -1;
}

/* A load's index: an iter var or a constant goes into the affine part; anything else
 * becomes an index column, checked per element when it runs. */
static bool add_index(fd_plan_t *p, fd_load_t *l, int d, const tj_tir_expr_t *e) {
  int64_t c;
  l->index[d] = -1;
  if (const_int(e, &c) && int_column(e->dtype)) {
    if (c < 0 || c >= l->extent[d]) return false; /* the interpreter reports it */
    l->offset += c * l->stride[d];
    return true;
  }
  for (int k = 0; k < p->ndim; k++)
    if (e == p->iter[k]) {
      if (p->extent[k] > l->extent[d]) return false;
      l->coef[k] += l->stride[d];
      return true;
    }
  int n = add_expr(p, e);
  if (n < 0 || p->nodes[n].is_float) return false;
  l->index[d] = n;
  return true;
}

static int add_load(fd_plan_t *p, const tj_tir_expr_t *e) {
  const tj_buffer_t *b = e->load.buffer;
  int input = input_of(p, b);
  if (input < 0 || p->n_loads == FD_MAX_LOADS || !tj_dtype_eq(e->dtype, b->dtype) || e->load.n_indices != b->ndim)
    return -1;
  fd_load_t *l = &p->loads[p->n_loads++];
  memset(l, 0, sizeof *l);
  if (!dense_static(b, l->extent, l->stride)) return -1;
  l->base = p->buffers[input];
  l->dtype = b->dtype;
  l->elem = tj_dtype_bytes(b->dtype);
  l->ndim = b->ndim;
  for (int d = 0; d < b->ndim; d++)
    if (!add_index(p, l, d, e->load.indices[d])) return -1;
  return add_node(p, (fd_node_t){.op = FD_LOAD, .dtype = e->dtype, .is_float = float_column(e->dtype),
                                 .load = (int)(l - p->loads)});
}

static int add_binary(fd_plan_t *p, const tj_tir_expr_t *e) {
  bool fp = float_column(e->dtype);
  tj_tir_expr_kind_t k = e->kind;
  /* Float //, % and integer / and % are left to the interpreter (rare in folds). */
  if (fp ? (k == TJ_TIR_MOD || k == TJ_TIR_FLOOR_DIV || k == TJ_TIR_FLOOR_MOD) : (k == TJ_TIR_DIV || k == TJ_TIR_MOD))
    return -1;
  if (!tj_dtype_eq(e->binary.a->dtype, e->dtype) || !tj_dtype_eq(e->binary.b->dtype, e->dtype)) return -1;
  int a = add_expr(p, e->binary.a);
  int b = a < 0 ? -1 : add_expr(p, e->binary.b);
  if (b < 0) return -1;
  return add_node(p, (fd_node_t){.op = FD_BINARY, .dtype = e->dtype, .is_float = fp, .kind = k, .a = a, .b = b});
}

static int add_call(fd_plan_t *p, const tj_tir_expr_t *e) {
  const char *op = e->call.op ? e->call.op : "";
  if (!strncmp(op, "tir.", 4)) op += 4;
  bool sq = !strcmp(op, "sqrt"), rsq = !strcmp(op, "rsqrt");
  if (!(sq || rsq) || e->call.n_args != 1 || !float_column(e->dtype) || !tj_dtype_eq(e->call.args[0]->dtype, e->dtype))
    return -1;
  int a = add_expr(p, e->call.args[0]);
  if (a < 0) return -1;
  return add_node(p, (fd_node_t){.op = sq ? FD_SQRT : FD_RSQRT, .dtype = e->dtype, .is_float = true, .a = a});
}

static int add_iter(fd_plan_t *p, const tj_tir_expr_t *e) {
  for (int k = 0; k < p->ndim; k++)
    if (e == p->iter[k]) {
      p->iter_used[k] = true;
      return add_node(p, (fd_node_t){.op = FD_ITER, .dtype = e->dtype, .dim = k});
    }
  return -1;
}

/* The node computing `e`, or -1 when `e` is outside the handled set. */
static int add_expr(fd_plan_t *p, const tj_tir_expr_t *e) {
  if (!e) return -1;
  bool fp = float_column(e->dtype);
  if (!fp && !int_column(e->dtype)) return -1;
  fd_node_t c = {.op = FD_CONST, .dtype = e->dtype, .is_float = fp};
  switch (e->kind) {
    case TJ_TIR_INT_IMM:
      if (fp) c.value.f = round_to(e->dtype, (double)e->int_imm);
      else c.value.i = e->int_imm;
      return add_node(p, c);
    case TJ_TIR_FLOAT_IMM:
      if (!fp) return -1;
      c.value.f = round_to(e->dtype, e->float_imm);
      return add_node(p, c);
    case TJ_TIR_VAR: return add_iter(p, e);
    case TJ_TIR_BUFFER_LOAD: return add_load(p, e);
    case TJ_TIR_ADD: case TJ_TIR_SUB: case TJ_TIR_MUL: case TJ_TIR_DIV: case TJ_TIR_MOD:
    case TJ_TIR_FLOOR_DIV: case TJ_TIR_FLOOR_MOD: case TJ_TIR_MIN: case TJ_TIR_MAX:
      return add_binary(p, e);
    case TJ_TIR_CALL: return add_call(p, e);
    case TJ_TIR_CAST: {
      if (!fp || !float_column(e->unary.operand->dtype)) return -1;
      int a = add_expr(p, e->unary.operand);
      return a < 0 ? -1 : add_node(p, (fd_node_t){.op = FD_CAST, .dtype = e->dtype, .is_float = true, .a = a});
    }
    default: return -1;
  }
}

/* The loops and the block of `f`: for v0 .. for vn: block(v = loop vars, in order) with
 * out[v0, .., vn] = value, under an optional root block. The store's value, or NULL. */
static const tj_tir_expr_t *read_nest(fd_plan_t *p) {
  const tj_tir_stmt_t *s = p->f->body;
  if (s && s->kind == TJ_TIR_BLOCK_REALIZE && s->realize.block->n_iter_vars == 0 && plain_block(s))
    s = s->realize.block->body;
  const tj_tir_expr_t *loop_var[FD_MAX_DIMS];
  int64_t min;
  p->ndim = 0;
  for (; s && s->kind == TJ_TIR_FOR; s = s->loop.body) {
    if (p->ndim == FD_MAX_DIMS || s->loop.kind == TJ_FOR_THREAD_BINDING || !const_int(s->loop.min, &min) || min != 0 ||
        !const_int(s->loop.extent, &p->extent[p->ndim]) || p->extent[p->ndim] <= 0)
      return NULL;
    loop_var[p->ndim++] = s->loop.var;
  }
  if (!s || s->kind != TJ_TIR_BLOCK_REALIZE || !plain_block(s) || p->ndim == 0) return NULL;
  const tj_block_t *b = s->realize.block;
  if (b->n_iter_vars != p->ndim || s->realize.n_iter_values != p->ndim) return NULL;
  for (int k = 0; k < p->ndim; k++) {
    const tj_iter_var_t *iv = &b->iter_vars[k];
    int64_t lo, ext;
    if (s->realize.iter_values[k] != loop_var[k] || iv->kind != TJ_ITER_SPATIAL || !const_int(iv->dom.min, &lo) ||
        lo != 0 || !const_int(iv->dom.extent, &ext) || ext != p->extent[k] || !int_column(iv->var->dtype))
      return NULL;
    p->iter[k] = iv->var;
  }
  const tj_tir_stmt_t *st = b->body;
  const tj_buffer_t *out = p->f->buffer_map[p->n_buffers - 1];
  int64_t extent[FD_MAX_DIMS], stride[FD_MAX_DIMS];
  if (st->kind != TJ_TIR_BUFFER_STORE || st->store.buffer != out || st->store.n_indices != p->ndim ||
      out->ndim != p->ndim || !dense_static(out, extent, stride) || !tj_dtype_eq(st->store.value->dtype, out->dtype))
    return NULL;
  for (int k = 0; k < p->ndim; k++)
    if (st->store.indices[k] != p->iter[k] || extent[k] != p->extent[k]) return NULL;
  return st->store.value;
}

static bool make_plan(fd_plan_t *p) {
  const tj_prim_func_t *f = p->f;
  if (f->n_params != p->n_buffers || !f->buffer_map || p->n_buffers < 1) return false;
  for (int i = 0; i < p->n_buffers; i++)
    if (!f->buffer_map[i]) return false;
  const tj_tir_expr_t *value = read_nest(p);
  if (!value) return false;
  tj_dtype_t out = f->buffer_map[p->n_buffers - 1]->dtype;
  /* One load of the output's dtype (not bool, which the interpreter normalises to 0/1):
   * its bits are copied, whatever the dtype. */
  if (value->kind == TJ_TIR_BUFFER_LOAD && tj_dtype_eq(value->dtype, out) && out.code != TJ_DT_BOOL &&
      out.lanes == 1 && out.bits % 8 == 0) {
    p->raw_copy = true;
    p->root = add_load(p, value);
    return p->root >= 0;
  }
  if (!float_column(out) && !int_column(out)) return false;
  p->root = add_expr(p, value);
  return p->root >= 0;
}

/* ---- running it ---- */

typedef struct fd_run {
  fd_val_t *cols;                     /* FD_MAX_NODES columns of FD_CHUNK */
  int64_t *iters;                     /* ndim columns: the iter vars' values */
  int64_t *offsets;                   /* FD_MAX_LOADS columns: element offsets */
} fd_run_t;

static fd_val_t *col(const fd_run_t *r, int node) { return r->cols + (size_t)node * FD_CHUNK; }

/* The iter values of elements [0, n) of the chunk starting at `idx` (advanced past it),
 * and each load's affine offset. */
static void run_counter(const fd_plan_t *p, const fd_run_t *r, int64_t *idx, int n) {
  int last = p->ndim - 1;
  /* A run along the innermost dim at a time: there each offset grows by its coef. */
  for (int j = 0; j < n;) {
    int run = (int)(p->extent[last] - idx[last]);
    if (run > n - j) run = n - j;
    for (int d = 0; d <= last; d++)
      for (int i = 0; p->iter_used[d] && i < run; i++) r->iters[(size_t)d * FD_CHUNK + j + i] = idx[d] + (d == last ? i : 0);
    for (int l = 0; l < p->n_loads; l++) {
      const fd_load_t *ld = &p->loads[l];
      int64_t off = ld->offset, step = ld->coef[last], *out = r->offsets + (size_t)l * FD_CHUNK + j;
      for (int d = 0; d <= last; d++) off += ld->coef[d] * idx[d];
      for (int i = 0; i < run; i++) out[i] = off + step * i;
    }
    j += run;
    idx[last] += run;
    for (int d = last; d > 0 && idx[d] == p->extent[d]; d--) idx[d] = 0, idx[d - 1]++;
  }
}

/* Adds the index columns of load l to its offsets; false when one is out of bounds. */
static bool run_indices(const fd_plan_t *p, const fd_run_t *r, int l, int n) {
  const fd_load_t *ld = &p->loads[l];
  int64_t *off = r->offsets + (size_t)l * FD_CHUNK;
  for (int d = 0; d < ld->ndim; d++) {
    if (ld->index[d] < 0) continue;
    const fd_val_t *ix = col(r, ld->index[d]);
    for (int j = 0; j < n; j++) {
      if (ix[j].i < 0 || ix[j].i >= ld->extent[d]) return false;
      off[j] += ix[j].i * ld->stride[d];
    }
  }
  return true;
}

static void run_load(const fd_plan_t *p, const fd_run_t *r, const fd_node_t *nd, fd_val_t *out, int n) {
  const fd_load_t *ld = &p->loads[nd->load];
  const int64_t *off = r->offsets + (size_t)nd->load * FD_CHUNK;
  if (nd->dtype.code == TJ_DT_FLOAT && nd->dtype.bits == 32) {
    for (int j = 0; j < n; j++) {
      float v;
      memcpy(&v, ld->base + (size_t)off[j] * 4, 4);
      out[j].f = v;
    }
  } else {
    for (int j = 0; j < n; j++) memcpy(&out[j], ld->base + (size_t)off[j] * 8, 8); /* float64, int64 */
  }
}

static void run_float_binary(const fd_node_t *nd, const fd_val_t *a, const fd_val_t *b, fd_val_t *out, int n) {
  tj_dtype_t dt = nd->dtype;
  switch (nd->kind) {
    case TJ_TIR_ADD: for (int j = 0; j < n; j++) out[j].f = round_to(dt, a[j].f + b[j].f); break;
    case TJ_TIR_SUB: for (int j = 0; j < n; j++) out[j].f = round_to(dt, a[j].f - b[j].f); break;
    case TJ_TIR_MUL: for (int j = 0; j < n; j++) out[j].f = round_to(dt, a[j].f * b[j].f); break;
    case TJ_TIR_DIV: for (int j = 0; j < n; j++) out[j].f = round_to(dt, a[j].f / b[j].f); break;
    case TJ_TIR_MIN: for (int j = 0; j < n; j++) out[j].f = a[j].f < b[j].f ? a[j].f : b[j].f; break;
    default: for (int j = 0; j < n; j++) out[j].f = a[j].f > b[j].f ? a[j].f : b[j].f; break; /* MAX */
  }
}

/* int64 arithmetic with the interpreter's rules: wrapping, x // 0 and x % 0 are 0. */
static int64_t int_binary(tj_tir_expr_kind_t k, int64_t x, int64_t y) {
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  if ((k == TJ_TIR_FLOOR_DIV || k == TJ_TIR_FLOOR_MOD) && (y == 0 || (x == INT64_MIN && y == -1)))
    return k == TJ_TIR_FLOOR_DIV && y == -1 ? x : 0;
  switch (k) {
    case TJ_TIR_ADD: return (int64_t)(ux + uy);
    case TJ_TIR_SUB: return (int64_t)(ux - uy);
    case TJ_TIR_MUL: return (int64_t)(ux * uy);
    case TJ_TIR_FLOOR_DIV: return x / y - ((x % y != 0) && ((x < 0) != (y < 0)));
    case TJ_TIR_FLOOR_MOD: {
      int64_t m = x % y;
      return (m != 0 && ((m < 0) != (y < 0))) ? m + y : m;
    }
    case TJ_TIR_MIN: return x < y ? x : y;
    default: return x > y ? x : y; /* MAX */
  }
}

static void run_node(const fd_plan_t *p, const fd_run_t *r, int k, int n) {
  const fd_node_t *nd = &p->nodes[k];
  fd_val_t *out = col(r, k);
  const fd_val_t *a = nd->op == FD_ITER || nd->op == FD_CONST || nd->op == FD_LOAD ? NULL : col(r, nd->a);
  switch (nd->op) {
    case FD_ITER: for (int j = 0; j < n; j++) out[j].i = r->iters[(size_t)nd->dim * FD_CHUNK + j]; break;
    case FD_CONST: for (int j = 0; j < n; j++) out[j] = nd->value; break;
    case FD_LOAD: run_load(p, r, nd, out, n); break;
    case FD_BINARY:
      if (nd->is_float) run_float_binary(nd, a, col(r, nd->b), out, n);
      else for (int j = 0; j < n; j++) out[j].i = int_binary(nd->kind, a[j].i, col(r, nd->b)[j].i);
      break;
    case FD_SQRT: for (int j = 0; j < n; j++) out[j].f = round_to(nd->dtype, sqrt(a[j].f)); break;
    case FD_RSQRT: /* 1 / sqrt(x), each step rounded, as the interpreter and the lowering */
      for (int j = 0; j < n; j++) out[j].f = round_to(nd->dtype, 1.0 / round_to(nd->dtype, sqrt(a[j].f)));
      break;
    case FD_CAST: for (int j = 0; j < n; j++) out[j].f = round_to(nd->dtype, a[j].f); break;
  }
}

static void store_column(tj_dtype_t dt, const fd_val_t *v, char *out, int n) {
  if (dt.code == TJ_DT_FLOAT && dt.bits == 32) {
    for (int j = 0; j < n; j++) {
      float x = (float)v[j].f;
      memcpy(out + (size_t)j * 4, &x, 4);
    }
  } else {
    memcpy(out, v, (size_t)n * 8);
  }
}

static void copy_raw(const fd_load_t *ld, const int64_t *off, char *out, int n) {
  switch (ld->elem) {
    case 1: for (int j = 0; j < n; j++) out[j] = ld->base[off[j]]; break;
    case 2: for (int j = 0; j < n; j++) memcpy(out + (size_t)j * 2, ld->base + (size_t)off[j] * 2, 2); break;
    case 4: for (int j = 0; j < n; j++) memcpy(out + (size_t)j * 4, ld->base + (size_t)off[j] * 4, 4); break;
    case 8: for (int j = 0; j < n; j++) memcpy(out + (size_t)j * 8, ld->base + (size_t)off[j] * 8, 8); break;
    default:
      for (int j = 0; j < n; j++) memcpy(out + (size_t)j * ld->elem, ld->base + (size_t)off[j] * ld->elem, ld->elem);
  }
}

/* Row i of a tile: cols [j0, j1) of output row `dst`, from offsets off + j * step. */
static void copy_tile_row(const fd_load_t *ld, char *dst, int64_t off, int64_t step, int64_t j0, int64_t j1) {
  const char *src = ld->base;
  size_t e = ld->elem;
  switch (e) {
    case 4: for (int64_t j = j0; j < j1; j++) memcpy(dst + j * 4, src + (off + j * step) * 4, 4); break;
    case 8: for (int64_t j = j0; j < j1; j++) memcpy(dst + j * 8, src + (off + j * step) * 8, 8); break;
    case 2: for (int64_t j = j0; j < j1; j++) memcpy(dst + j * 2, src + (off + j * step) * 2, 2); break;
    default: for (int64_t j = j0; j < j1; j++) memcpy(dst + (size_t)j * e, src + (size_t)(off + j * step) * e, e);
  }
}

/* A raw copy whose source offsets are affine in the output index and not contiguous
 * along its last dim (a transpose): in FD_TILE x FD_TILE tiles of the last two dims, so
 * the strided side reads whole cache lines. Row by row it missed the cache and the TLB
 * on every element: BERT's 768x3072 weight transposes took 3x longer than through the
 * JIT. */
#define FD_TILE 32
static void copy_tiled(const fd_plan_t *p, char *out) {
  const fd_load_t *ld = &p->loads[p->nodes[p->root].load];
  int nd = p->ndim;
  int64_t rows = nd >= 2 ? p->extent[nd - 2] : 1, cols = p->extent[nd - 1];
  int64_t cr = nd >= 2 ? ld->coef[nd - 2] : 0, cc = ld->coef[nd - 1], outer = 1, idx[FD_MAX_DIMS] = {0};
  for (int d = 0; d < nd - 2; d++) outer *= p->extent[d];
  size_t row_bytes = (size_t)cols * ld->elem;
  for (int64_t o = 0; o < outer; o++) {
    int64_t base = ld->offset;
    for (int d = 0; d < nd - 2; d++) base += ld->coef[d] * idx[d];
    char *dst = out + (size_t)(o * rows) * row_bytes;
    for (int64_t i0 = 0; i0 < rows; i0 += FD_TILE)
      for (int64_t j0 = 0; j0 < cols; j0 += FD_TILE)
        for (int64_t i = i0; i < i0 + FD_TILE && i < rows; i++)
          copy_tile_row(ld, dst + (size_t)i * row_bytes, base + i * cr, cc, j0, j0 + FD_TILE < cols ? j0 + FD_TILE : cols);
    for (int d = nd - 3; d >= 0 && ++idx[d] == p->extent[d]; d--) idx[d] = 0;
  }
}

static bool tiled_copy(const fd_plan_t *p) {
  if (!p->raw_copy) return false;
  const fd_load_t *ld = &p->loads[p->nodes[p->root].load];
  for (int d = 0; d < ld->ndim; d++)
    if (ld->index[d] >= 0) return false;
  return ld->coef[p->ndim - 1] != 1;
}

/* One chunk of n elements starting at `idx`, written at `out`. */
static bool run_chunk(const fd_plan_t *p, const fd_run_t *r, int64_t *idx, char *out, int n) {
  run_counter(p, r, idx, n);
  for (int k = 0; k < p->n_nodes; k++) {
    /* A load's index nodes come before it: its offsets are complete once they ran. */
    if (p->nodes[k].op == FD_LOAD && !run_indices(p, r, p->nodes[k].load, n)) return false;
    if (k == p->root && p->raw_copy) {
      copy_raw(&p->loads[p->nodes[k].load], r->offsets + (size_t)p->nodes[k].load * FD_CHUNK, out, n);
      return true;
    }
    run_node(p, r, k, n);
  }
  store_column(p->nodes[p->root].dtype, col(r, p->root), out, n);
  return true;
}

bool tj_fold_direct(const tj_prim_func_t *f, int n_buffers, void *const *buffers) {
  fd_plan_t *p = tj_calloc(1, sizeof *p);
  if (!p) return false;
  p->f = f, p->n_buffers = n_buffers, p->buffers = buffers;
  bool ok = make_plan(p);
  fd_run_t r = {0};
  if (ok) {
    r.cols = tj_malloc(sizeof(fd_val_t) * FD_CHUNK * (size_t)p->n_nodes);
    r.iters = tj_malloc(sizeof(int64_t) * FD_CHUNK * (size_t)p->ndim);
    r.offsets = tj_malloc(sizeof(int64_t) * FD_CHUNK * (size_t)(p->n_loads ? p->n_loads : 1));
    ok = r.cols && r.iters && r.offsets;
  }
  if (ok && tiled_copy(p)) {
    copy_tiled(p, buffers[n_buffers - 1]);
  } else if (ok) {
    int64_t total = 1, idx[FD_MAX_DIMS] = {0};
    for (int d = 0; d < p->ndim; d++) total *= p->extent[d];
    size_t elem = tj_dtype_bytes(f->buffer_map[n_buffers - 1]->dtype);
    char *out = buffers[n_buffers - 1];
    for (int64_t s = 0; ok && s < total; s += FD_CHUNK) {
      int n = total - s < FD_CHUNK ? (int)(total - s) : FD_CHUNK;
      ok = run_chunk(p, &r, idx, out + (size_t)s * elem, n);
    }
  }
  tj_free(r.cols);
  tj_free(r.iters);
  tj_free(r.offsets);
  tj_free(p);
  return ok;
}
