/* R.sort / R.argsort / R.topk for DispatchSortScan. TVM dispatches them on CPU to TOPI
 * externs that call the packed functions tvm.contrib.sort.{sort,argsort,topk}, which
 * tvmjit does not have; this is tvmjit's own TIR in the same extern form (extern.c),
 * PrimFuncs `sort` / `argsort` / `topk`, root blocks `sort_cpu` / `argsort_cpu` /
 * `topk_cpu`. Per row of the sorted axis (rows in parallel), each element's place is
 * its rank: the number of elements that come before it (better value, or equal value
 * at a smaller position, so the order is stable), counted in a per-row int64 counter
 * `rank`. The element goes to out[rank]. O(n^2) compares per row; top-k with k < n
 * selects instead (select_body), O(n * k). NaN
 * orders after every number (ascending) or before (descending), as numpy and PyTorch. */
#include <string.h>

#include "transforms/legalize/legalize.h"

typedef struct sort_ir {
  const tj_buffer_t *data, *values, *indices, *rank; /* values / indices may be NULL */
  const tj_buffer_t *prev;                           /* top-k by selection: the last pick */
  bool descending;
  const tj_tir_expr_t *before, *len, *after, *k; /* int64 */
} sort_ir_t;

static const tj_tir_expr_t *isnan_of(tj_arena_t *a, const tj_tir_expr_t *x) {
  const tj_tir_expr_t *arg = x->dtype.bits == 16 ? tj_tir_cast(a, TJ_F32, x) : x;
  return tj_tir_call(a, TJ_BOOL, "tir.isnan", 1, &arg);
}

/* x before y in ascending order, NaN last. */
static const tj_tir_expr_t *less(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  const tj_tir_expr_t *lt = tj_tir_binary(a, TJ_TIR_LT, x, y);
  if (!tj_dtype_is_floating(x->dtype)) return lt;
  return tj_tir_binary(a, TJ_TIR_OR, lt, tj_tir_binary(a, TJ_TIR_AND, tj_tir_not(a, isnan_of(a, x)), isnan_of(a, y)));
}

static const tj_tir_expr_t *same(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  const tj_tir_expr_t *eq = tj_tir_binary(a, TJ_TIR_EQ, x, y);
  if (!tj_dtype_is_floating(x->dtype)) return eq;
  return tj_tir_binary(a, TJ_TIR_OR, eq, tj_tir_binary(a, TJ_TIR_AND, isnan_of(a, x), isnan_of(a, y)));
}

/* Element (xj at j) comes before (xi at i). */
static const tj_tir_expr_t *before(tj_arena_t *a, bool desc, const tj_tir_expr_t *xj, const tj_tir_expr_t *j,
                                   const tj_tir_expr_t *xi, const tj_tir_expr_t *i) {
  const tj_tir_expr_t *better = desc ? less(a, xi, xj) : less(a, xj, xi);
  const tj_tir_expr_t *tie = tj_tir_binary(a, TJ_TIR_AND, same(a, xj, xi), tj_tir_binary(a, TJ_TIR_LT, j, i));
  return tj_tir_binary(a, TJ_TIR_OR, better, tie);
}

/* Index of element `pos` of the line (row, col) of `b`: row spans the dims before the
 * axis, col the dims after it. The row/col parts depend on the parallel loop only, so
 * LLVM hoists their divisions out of the compare loop (a flat index would divide at
 * every compare). */
static void line_index(tj_arena_t *a, const tj_buffer_t *b, int axis, const tj_tir_expr_t *row,
                       const tj_tir_expr_t *col, const tj_tir_expr_t *pos, const tj_tir_expr_t **out) {
  for (int d = axis - 1; d >= 0; d--) {
    out[d] = d == 0 ? row : tj_lg_floormod(a, row, b->shape[d]);
    if (d > 0) row = tj_lg_floordiv(a, row, b->shape[d]);
  }
  out[axis] = pos;
  for (int d = b->ndim - 1; d > axis; d--) {
    out[d] = d == axis + 1 ? col : tj_lg_floormod(a, col, b->shape[d]);
    if (d > axis + 1) col = tj_lg_floordiv(a, col, b->shape[d]);
  }
}

static const tj_tir_expr_t *line_load(tj_arena_t *a, const tj_buffer_t *b, int axis, const tj_tir_expr_t *row,
                                      const tj_tir_expr_t *col, const tj_tir_expr_t *pos) {
  const tj_tir_expr_t *ix[TJ_LG_MAX_ITERS];
  line_index(a, b, axis, row, col, pos, ix);
  return tj_lg_load(a, b, b->ndim, ix);
}

static const tj_tir_stmt_t *line_store(tj_arena_t *a, const tj_buffer_t *b, int axis, const tj_tir_expr_t *row,
                                       const tj_tir_expr_t *col, const tj_tir_expr_t *pos, const tj_tir_expr_t *v) {
  const tj_tir_expr_t *ix[TJ_LG_MAX_ITERS];
  line_index(a, b, axis, row, col, pos, ix);
  return tj_lg_store(a, b, b->ndim, ix, v);
}

static const tj_tir_stmt_t *sort_body(tj_arena_t *a, const sort_ir_t *s, int axis) {
  const tj_tir_expr_t *fused = tj_tir_var(a, "fused", TJ_I64), *i = tj_tir_var(a, "i", TJ_I64);
  const tj_tir_expr_t *j = tj_tir_var(a, "j", TJ_I64);
  const tj_tir_expr_t *row = tj_lg_floordiv(a, fused, s->after), *col = tj_lg_floormod(a, fused, s->after);
  const tj_tir_expr_t *xi = line_load(a, s->data, axis, row, col, i);
  const tj_tir_expr_t *xj = line_load(a, s->data, axis, row, col, j);
  const tj_tir_expr_t *rank = tj_lg_load(a, s->rank, 1, &fused);
  const tj_tir_stmt_t *count = tj_tir_for(
      a, j, tj_tir_i64(a, 0), s->len, TJ_FOR_SERIAL,
      tj_tir_if(a, before(a, s->descending, xj, j, xi, i),
                tj_lg_store(a, s->rank, 1, &fused, tj_tir_binary(a, TJ_TIR_ADD, rank, tj_tir_i64(a, 1))), NULL));
  const tj_tir_stmt_t *put[2];
  int n = 0;
  if (s->values) put[n++] = line_store(a, s->values, axis, row, col, rank, xi);
  if (s->indices) put[n++] = line_store(a, s->indices, axis, row, col, rank, tj_lg_cast(a, s->indices->dtype, i));
  const tj_tir_stmt_t *place = tj_tir_if(a, tj_tir_binary(a, TJ_TIR_LT, rank, s->k), tj_tir_seq(a, n, put), NULL);
  const tj_tir_stmt_t *per_i[3] = {tj_lg_store(a, s->rank, 1, &fused, tj_tir_i64(a, 0)), count, place};
  const tj_tir_stmt_t *loop_i = tj_tir_for(a, i, tj_tir_i64(a, 0), s->len, TJ_FOR_SERIAL, tj_tir_seq(a, 3, per_i));
  return tj_tir_for(a, fused, tj_tir_i64(a, 0), tj_lg_mul(a, s->before, s->after), TJ_FOR_PARALLEL, loop_i);
}

/* Top-k with k < n by selection, O(n * k) compares per row instead of O(n^2): pass t
 * picks the first element, in the same total order, among those after pass t-1's pick
 * (`prev`, -1 before the first pass); the `rank` buffer holds the running best (-1 =
 * none yet). Same result as the rank form, which sort and argsort use. */
static const tj_tir_stmt_t *select_body(tj_arena_t *a, const sort_ir_t *s, int axis) {
  const tj_tir_expr_t *fused = tj_tir_var(a, "fused", TJ_I64), *t = tj_tir_var(a, "t", TJ_I64);
  const tj_tir_expr_t *j = tj_tir_var(a, "j", TJ_I64), *neg = tj_tir_i64(a, -1);
  const tj_tir_expr_t *row = tj_lg_floordiv(a, fused, s->after), *col = tj_lg_floormod(a, fused, s->after);
  const tj_tir_expr_t *best = tj_lg_load(a, s->rank, 1, &fused), *prev = tj_lg_load(a, s->prev, 1, &fused);
  const tj_tir_expr_t *xj = line_load(a, s->data, axis, row, col, j);
  const tj_tir_expr_t *xb = line_load(a, s->data, axis, row, col, best);
  const tj_tir_expr_t *xp = line_load(a, s->data, axis, row, col, prev);
  const tj_tir_expr_t *after_prev =
      tj_tir_binary(a, TJ_TIR_OR, tj_tir_binary(a, TJ_TIR_EQ, prev, neg), before(a, s->descending, xp, prev, xj, j));
  const tj_tir_expr_t *beats =
      tj_tir_binary(a, TJ_TIR_OR, tj_tir_binary(a, TJ_TIR_EQ, best, neg), before(a, s->descending, xj, j, xb, best));
  const tj_tir_stmt_t *scan = tj_tir_for(
      a, j, tj_tir_i64(a, 0), s->len, TJ_FOR_SERIAL,
      tj_tir_if(a, tj_tir_binary(a, TJ_TIR_AND, after_prev, beats), tj_lg_store(a, s->rank, 1, &fused, j), NULL));
  const tj_tir_stmt_t *pass[5];
  int n = 0;
  pass[n++] = tj_lg_store(a, s->rank, 1, &fused, neg);
  pass[n++] = scan;
  if (s->values) pass[n++] = line_store(a, s->values, axis, row, col, t, xb);
  if (s->indices) pass[n++] = line_store(a, s->indices, axis, row, col, t, tj_lg_cast(a, s->indices->dtype, best));
  pass[n++] = tj_lg_store(a, s->prev, 1, &fused, best);
  const tj_tir_stmt_t *passes[2] = {tj_lg_store(a, s->prev, 1, &fused, neg),
                                    tj_tir_for(a, t, tj_tir_i64(a, 0), s->k, TJ_FOR_SERIAL, tj_tir_seq(a, n, pass))};
  return tj_tir_for(a, fused, tj_tir_i64(a, 0), tj_lg_mul(a, s->before, s->after), TJ_FOR_PARALLEL,
                    tj_tir_seq(a, 2, passes));
}

typedef enum sort_kind { SORT_VALUES, SORT_INDICES, SORT_TOPK } sort_kind_t;

static tj_status_t *dispatch_sort(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, sort_kind_t kind,
                                  const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  tj_arena_t *a = ctx->arena;
  static const char *const names[] = {"sort", "argsort", "topk"};
  static const char *const blocks[] = {"sort_cpu", "argsort_cpu", "topk_cpu"};
  const char *name = names[kind];
  const tj_sinfo_t *xs = tj_lg_arg_sinfo(a, call->call.args[0]), *os = call->sinfo;
  if (!tj_lg_tensor_known(xs) || xs->tensor.ndim < 1 || xs->tensor.ndim > TJ_LG_MAX_ITERS || !os) return NULL;
  int n = xs->tensor.ndim, axis;
  if (!tj_lg_axis(tj_attrs_get_int(call->call.attrs, "axis", -1), n, &axis)) return NULL;
  sort_ir_t s = {.descending = kind == SORT_TOPK ? tj_attrs_get_int(call->call.attrs, "largest", 1) != 0
                                                 : tj_attrs_get_int(call->call.attrs, "descending", 0) != 0};
  const char *ret = "both";
  const tj_attr_value_t *rv = tj_attrs_get(call->call.attrs, "ret_type");
  if (kind == SORT_TOPK && rv && rv->kind == TJ_ATTR_STR) ret = rv->s;
  tj_dtype_t idt = tj_lg_attr_dtype(call->call.attrs, "dtype");
  if (tj_dtype_is_void(idt)) idt = xs->tensor.dtype;
  if (kind != SORT_VALUES && !tj_dtype_is_int(idt)) return NULL; /* indices in a float dtype: not supported */
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  s.data = tj_lg_extern_input(&te, call->call.args[0]);
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  s.before = s.after = tj_tir_i64(a, 1);
  const tj_tir_expr_t *oshape[TJ_LG_MAX_ITERS];
  for (int d = 0; d < n; d++) {
    if (d < axis) s.before = tj_lg_mul(a, s.before, s.data->shape[d]);
    if (d > axis) s.after = tj_lg_mul(a, s.after, s.data->shape[d]);
    oshape[d] = s.data->shape[d];
  }
  s.len = s.k = s.data->shape[axis];
  int64_t k = tj_attrs_get_int(call->call.attrs, "k", 0), d;
  if (kind == SORT_TOPK && k > 0 && (!tj_tir_is_const_int(s.len, &d) || k < d)) s.k = oshape[axis] = tj_tir_i64(a, k);
  bool want_values = kind == SORT_VALUES || (kind == SORT_TOPK && strcmp(ret, "indices") != 0);
  bool want_indices = kind == SORT_INDICES || (kind == SORT_TOPK && strcmp(ret, "values") != 0);
  if (want_values) s.values = tj_lg_output(&te, "values", s.data->dtype, n, oshape);
  if (want_indices) s.indices = tj_lg_output(&te, "indices", idt, n, oshape);
  const tj_tir_expr_t *rows = tj_lg_mul(a, s.before, s.after);
  s.rank = tj_lg_alloc(&te, "rank", TJ_I64, 1, &rows);
  bool select = s.k != s.len;
  if (select) s.prev = tj_lg_alloc(&te, "prev", TJ_I64, 1, &rows);
  if (te.failed) return tj_lg_te_finish(&te, name, NULL, out_expr);
  tj_lg_extern_block(&te, blocks[kind], select ? select_body(a, &s, axis) : sort_body(a, &s, axis));
  return tj_lg_te_finish(&te, name, os, out_expr);
}

tj_status_t *tj_dispatch_sort(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return dispatch_sort(ctx, call, SORT_VALUES, out_expr);
}

tj_status_t *tj_dispatch_argsort(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return dispatch_sort(ctx, call, SORT_INDICES, out_expr);
}

tj_status_t *tj_dispatch_topk(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  return dispatch_sort(ctx, call, SORT_TOPK, out_expr);
}
