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

/* Operand dtypes TVM's TIR builders accept (tir/op.cc type_check_*_args). */
typedef enum operand_kind { ANY_DTYPE, BOOL_ONLY, INT_ONLY, INT_OR_BOOL } operand_kind_t;

typedef struct binary_op {
  const char *name;       /* PrimFunc name hint */
  const char *block;      /* block / output buffer name */
  combine_fn combine;
  operand_kind_t operands;
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

static tj_dtype_t arg_dtype(const tj_rx_expr_t *arg) {
  const tj_sinfo_t *s = arg->sinfo;
  if (s && s->kind == TJ_SINFO_TENSOR) return s->tensor.dtype;
  if (s && s->kind == TJ_SINFO_PRIM) return s->prim.dtype;
  return (tj_dtype_t){0};
}

/* TVM fails inside LegalizeOps (an ICHECK) on these; tvmjit names the op and the fix. */
static tj_status_t *check_operands(const tj_rx_expr_t *call, const binary_op_t *op) {
  tj_dtype_t d = arg_dtype(call->call.args[0]);
  if (op->operands == ANY_DTYPE || tj_dtype_is_void(d)) return NULL;
  bool is_int = d.code == TJ_DT_INT || d.code == TJ_DT_UINT, is_bool = d.code == TJ_DT_BOOL;
  bool ok = op->operands == BOOL_ONLY ? is_bool : op->operands == INT_ONLY ? is_int : is_int || is_bool;
  if (ok) return NULL;
  char b[TJ_DTYPE_BUFSIZE];
  return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "LegalizeOps: R.%s needs %s operands, got %s; %s", op->name,
                       op->operands == BOOL_ONLY ? "bool" : op->operands == INT_ONLY ? "integer" : "bool or integer",
                       tj_dtype_str(d, b),
                       op->operands == BOOL_ONLY ? "compare first (R.not_equal(x, zero)) or use R.bitwise_*"
                                                 : "R.astype the operands to an integer dtype first");
}

static tj_status_t *legalize_binary(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const binary_op_t *op,
                                    const tj_rx_expr_t **out_expr) {
  *out_expr = NULL;
  if (call->call.n_args != 2) return NULL;
  TJ_RETURN_IF_ERROR(check_operands(call, op));
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

/* ---------------- bodies (topi/broadcast.h over tir/op.cc) ---------------- */

static bool is_float(const tj_tir_expr_t *x) { return x && tj_dtype_is_floating(x->dtype); }

static const tj_tir_expr_t *call2(tj_arena_t *a, const char *op, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!x || !y) return NULL;
  const tj_tir_expr_t *args[2] = {x, y};
  return tj_tir_call(a, x->dtype, op, 2, args);
}

#define NODE_BODY(fn, kind)                                                                   \
  static const tj_tir_expr_t *fn(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) { \
    return tj_lg_bin(a, kind, x, y);                                                          \
  }
NODE_BODY(max_body, TJ_TIR_MAX)
NODE_BODY(min_body, TJ_TIR_MIN)
NODE_BODY(truncmod_body, TJ_TIR_MOD)
NODE_BODY(eq_body, TJ_TIR_EQ)
NODE_BODY(ne_body, TJ_TIR_NE)
NODE_BODY(lt_body, TJ_TIR_LT)
NODE_BODY(le_body, TJ_TIR_LE)
NODE_BODY(and_body, TJ_TIR_AND)
/* TVM's greater(a, b) is `b < a` and greater_equal `b <= a` (the corpus' expected
 * TIR; the operand order also decides the blocks' read order). */
static const tj_tir_expr_t *gt_swapped_body(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  return tj_lg_bin(a, TJ_TIR_LT, y, x);
}
static const tj_tir_expr_t *ge_swapped_body(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  return tj_lg_bin(a, TJ_TIR_LE, y, x);
}
NODE_BODY(or_body, TJ_TIR_OR)

#define INTRINSIC_BODY(fn, intrinsic)                                                         \
  static const tj_tir_expr_t *fn(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) { \
    return call2(a, intrinsic, x, y);                                                         \
  }
INTRINSIC_BODY(bitand_body, "tir.bitwise_and")
INTRINSIC_BODY(bitor_body, "tir.bitwise_or")
INTRINSIC_BODY(bitxor_body, "tir.bitwise_xor")
INTRINSIC_BODY(shl_body, "tir.shift_left")
INTRINSIC_BODY(shr_body, "tir.shift_right")

/* topi.floor_divide: floordiv on integers, floor(x / y) on floats. */
static const tj_tir_expr_t *floordiv_body(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!is_float(x)) return tj_lg_floordiv(a, x, y);
  return tj_lg_call1(a, "tir.floor", tj_lg_div(a, x, y));
}

/* topi.floor_mod: floormod on integers, x - floor(x / y) * y on floats. */
static const tj_tir_expr_t *floormod_body(tj_arena_t *a, const tj_tir_expr_t *x, const tj_tir_expr_t *y) {
  if (!is_float(x)) return tj_lg_floormod(a, x, y);
  return tj_lg_sub(a, x, tj_lg_mul(a, floordiv_body(a, x, y), y));
}

/* topi.<op> → PrimFunc `<op>`, block and output buffer `T_<op>`, body combine(x, y). */
#define BINARY_LEGALIZER(ident, combine, operands)                                                          \
  tj_status_t *tj_legalize_##ident(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) { \
    static const binary_op_t op = {#ident, "T_" #ident, combine, operands};                                \
    return legalize_binary(ctx, call, &op, out_expr);                                                      \
  }

/*               op             body           operands */
BINARY_LEGALIZER(add,           tj_lg_add,     ANY_DTYPE)
BINARY_LEGALIZER(subtract,      tj_lg_sub,     ANY_DTYPE)
BINARY_LEGALIZER(multiply,      tj_lg_mul,     ANY_DTYPE)
BINARY_LEGALIZER(divide,        tj_lg_div,     ANY_DTYPE)
BINARY_LEGALIZER(power,         pow_call,      ANY_DTYPE)
BINARY_LEGALIZER(maximum,       max_body,      ANY_DTYPE)
BINARY_LEGALIZER(minimum,       min_body,      ANY_DTYPE)
BINARY_LEGALIZER(floor_divide,  floordiv_body, ANY_DTYPE)
BINARY_LEGALIZER(floor_mod,     floormod_body, ANY_DTYPE)
BINARY_LEGALIZER(mod,           truncmod_body, ANY_DTYPE)
BINARY_LEGALIZER(equal,         eq_body,       ANY_DTYPE)
BINARY_LEGALIZER(not_equal,     ne_body,       ANY_DTYPE)
BINARY_LEGALIZER(less,          lt_body,       ANY_DTYPE)
BINARY_LEGALIZER(less_equal,    le_body,       ANY_DTYPE)
BINARY_LEGALIZER(greater,       gt_swapped_body, ANY_DTYPE)
BINARY_LEGALIZER(greater_equal, ge_swapped_body, ANY_DTYPE)
BINARY_LEGALIZER(logical_and,   and_body,      BOOL_ONLY)
BINARY_LEGALIZER(logical_or,    or_body,       BOOL_ONLY)
/* topi's `a ^ b`: TVM's TIR rejects bool there, which leaves bool (the op's purpose)
 * without a meaning; tvmjit lets the xor run on bool too (numpy's logical_xor). */
BINARY_LEGALIZER(logical_xor,   bitxor_body,   INT_OR_BOOL)
BINARY_LEGALIZER(bitwise_and,   bitand_body,   INT_ONLY)
BINARY_LEGALIZER(bitwise_or,    bitor_body,    INT_ONLY)
BINARY_LEGALIZER(bitwise_xor,   bitxor_body,   INT_ONLY)
BINARY_LEGALIZER(left_shift,    shl_body,      INT_ONLY)
BINARY_LEGALIZER(right_shift,   shr_body,      INT_ONLY)
