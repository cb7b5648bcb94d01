/* topi's ops go through tvm::add/sub/mul/div, which fold constants (`x * 1.0`
 * and `x / 1.0` are `x`, exactly as TVMScript reads `x / T.float32(1)`).
 *
 * Binary broadcasting ops: R.add/subtract/multiply/divide/power → topi.<op>
 * (docs/semantics.md §2.6). One block `T_<op>`; NumPy broadcasting with the
 * output right-aligned; an input dim of constant extent 1 against a different
 * output dim is indexed with T.int64(0); missing leading dims are dropped. A 0-d
 * constant argument becomes an inline literal; an R.Prim argument a scalar param. */
#include <string.h>

#include "ir/struct_equal.h"
#include "transforms/legalize/legalize.h"

typedef const tj_tir_expr_t *(*combine_fn)(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y);

typedef struct binary_op {
  const char *name;       /* PrimFunc name hint */
  const char *block;      /* block / output buffer name */
  combine_fn combine;
} binary_op_t;


static const tj_tir_expr_t *pow_call(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  const tj_tir_expr_t *args[2] = {x, y};
  return tj_tir_call(a, x->dtype, "tir.pow", 2, args);
}

/* Broadcast extents: literals by value, the rest structurally. */
static bool dim_equal(const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  return tj_struct_equal_tir_expr_ex(x, y, TJ_SEQ_INT_VALUES);
}

static bool is_one(const tj_tir_expr_t *e) {
  int64_t v;
  return tj_tir_is_const_int(e, &v) && v == 1;
}

/* One operand: a literal, a scalar param, or a tensor placeholder. */
typedef struct operand {
  const tj_tir_expr_t *scalar; /* literal or scalar param, else NULL */
  const tj_buffer_t *buf;
  const tj_sinfo_t *sinfo;
} operand_t;

static bool classify(tj_lg_te_t *te, const tj_rx_expr_t *arg, bool try_const, operand_t *out) {
  memset(out, 0, sizeof *out);
  const tj_tir_expr_t *lit = try_const ? tj_lg_scalar_const(te->arena, arg) : NULL;
  if (lit) {
    out->scalar = lit;
    return true;
  }
  const tj_sinfo_t *s = tj_lg_arg_sinfo(te->arena, arg);
  if (s && s->kind == TJ_SINFO_PRIM) {
    if (arg->kind == TJ_RX_PRIM_VALUE && s->prim.value) {
      out->scalar = s->prim.value;
      return true;
    }
    out->scalar = tj_lg_prim_param(te, arg);
    return out->scalar != NULL;
  }
  if (!tj_lg_tensor_known(s)) return false;
  out->sinfo = s;
  out->buf = tj_lg_placeholder(te, arg);
  return out->buf != NULL;
}

/* Broadcast output shape of two tensor shapes (right-aligned). */
static bool broadcast_shape(const tj_sinfo_t *x, const tj_sinfo_t *y, int *out_n, const tj_tir_expr_t **out) {
  int nx = x ? x->tensor.ndim : 0, ny = y ? y->tensor.ndim : 0;
  int n = nx > ny ? nx : ny;
  if (n > TJ_LG_MAX_ITERS) return false;
  for (int i = 1; i <= n; i++) {
    const tj_tir_expr_t *dx = i <= nx ? x->tensor.shape[nx - i] : NULL;
    const tj_tir_expr_t *dy = i <= ny ? y->tensor.shape[ny - i] : NULL;
    const tj_tir_expr_t *d;
    if (!dx) d = dy;
    else if (!dy) d = dx;
    else if (dim_equal(dx, dy)) d = dx;
    else if (is_one(dx)) d = dy;
    else if (is_one(dy)) d = dx;
    else return false; /* symbolic mismatch: TVM's max() form is not reproduced */
    out[n - i] = d;
  }
  *out_n = n;
  return true;
}

/* x[...] for output index `iv` under broadcasting. */
static const tj_tir_expr_t *broadcast_load(tj_arena_t *a, const operand_t *op, int n_out,
                                           const tj_tir_expr_t *const *out_shape, const tj_tir_expr_t *const *iv) {
  if (op->scalar) return op->scalar;
  const tj_buffer_t *b = op->buf;
  const tj_tir_expr_t *idx[TJ_LG_MAX_ITERS];
  int off = n_out - b->ndim;
  for (int i = 0; i < b->ndim; i++) {
    const tj_tir_expr_t *src = op->sinfo->tensor.shape[i];
    bool broadcast = is_one(src) && !dim_equal(src, out_shape[off + i]);
    idx[i] = broadcast ? tj_tir_i64(a, 0) : iv[off + i];
  }
  return tj_lg_load(a, b, b->ndim, idx);
}

static tj_status_t *legalize_binary(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const binary_op_t *op,
                                    const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 2) return NULL;
  tj_arena_t *a = ctx->arena;
  /* As TVM: arg1 is tried as a scalar constant first, then arg0. */
  bool c1 = tj_lg_scalar_const(a, call->call.args[1]) != NULL;
  bool c0 = !c1 && tj_lg_scalar_const(a, call->call.args[0]) != NULL;
  tj_lg_te_t te;
  tj_lg_te_init(&te, ctx);
  operand_t x, y;
  if (!classify(&te, call->call.args[0], c0, &x) || !classify(&te, call->call.args[1], c1, &y)) return NULL;
  if (!x.buf && !y.buf) return NULL; /* scalar op scalar: nothing to build */
  const tj_tir_expr_t *bshape[TJ_LG_MAX_ITERS];
  int n = 0;
  if (!broadcast_shape(x.sinfo, y.sinfo, &n, bshape)) return NULL;
  /* dtype of the result: the combined expression's dtype. */
  const tj_tir_expr_t *px = x.scalar ? x.scalar : tj_tir_var(a, "x", x.buf->dtype);
  const tj_tir_expr_t *py = y.scalar ? y.scalar : tj_tir_var(a, "y", y.buf->dtype);
  const tj_tir_expr_t *probe = op->combine(a, px, py);
  if (!probe) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "LegalizeOps: out of memory");
  tj_dtype_t dtype = probe->dtype;
  const tj_sinfo_t *out_sinfo = tj_lg_call_sinfo(call, tj_sinfo_tensor(a, dtype, n, bshape));
  const tj_tir_expr_t *shape[TJ_LG_MAX_ITERS];
  for (int i = 0; i < n; i++) shape[i] = tj_lg_shape_expr(&te, out_sinfo->tensor.shape[i]);
  const tj_buffer_t *out = tj_lg_output(&te, op->block, dtype, n, shape);
  tj_lg_stage_t st;
  tj_lg_stage_spatial(&te, &st, op->block, n, shape, "ax");
  const tj_tir_expr_t *value =
      op->combine(a, broadcast_load(a, &x, n, bshape, st.iv), broadcast_load(a, &y, n, bshape, st.iv));
  tj_lg_stage_end(&te, &st, NULL, tj_lg_store(a, out, n, st.iv, value));
  return tj_lg_te_finish(&te, op->name, out_sinfo, out_expr);
}

/* topi.<op> → PrimFunc `<op>`, block and output buffer `T_<op>`, body combine(x, y). */
#define BINARY_LEGALIZER(ident, combine)                                                                    \
  tj_status_t *tj_legalize_##ident(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) { \
    static const binary_op_t op = {#ident, "T_" #ident, combine};                                          \
    return legalize_binary(ctx, call, &op, out_expr);                                                      \
  }

/*               op        body */
BINARY_LEGALIZER(add,      tj_lg_add)
BINARY_LEGALIZER(subtract, tj_lg_sub)
BINARY_LEGALIZER(multiply, tj_lg_mul)
BINARY_LEGALIZER(divide,   tj_lg_div)
BINARY_LEGALIZER(power,    pow_call)
