/* ir/op: the operator registry (attr normalisation, struct-info inference, policies). */
#include <stdarg.h>
#include <string.h>

#include "ir/op.h"
#include "ir/text/parse.h"
#include "testutil.h"

static tj_arena_t *arena;
static tj_infer_ctx_t ctx;

static void setup(void) {
  arena = tj_arena_create();
  ctx.arena = arena;
  ctx.global_sinfo = NULL;
  ctx.global_ctx = NULL;
}

static void teardown(void) { tj_arena_free(arena); }

/* A tensor var; dims are given as int64 constants (n >= 0). */
static const tj_rx_expr_t *tensor_var(const char *name, tj_dtype_t dtype, int ndim, ...) {
  int64_t dims[8];
  va_list ap;
  va_start(ap, ndim);
  for (int i = 0; i < ndim; i++) dims[i] = va_arg(ap, int64_t);
  va_end(ap);
  return tj_rx_var(arena, name, tj_sinfo_tensor_static(arena, dtype, ndim, dims));
}

static const tj_rx_expr_t *sym_var(const char *name, tj_dtype_t dtype, int ndim, const tj_tir_expr_t *const *shape) {
  return tj_rx_var(arena, name, tj_sinfo_tensor(arena, dtype, ndim, shape));
}

static tj_attr_value_t ints(int n, ...) {
  tj_attr_value_t *items = TJ_ARENA_ARRAY(arena, tj_attr_value_t, n);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) items[i] = tj_attr_int(va_arg(ap, int));
  va_end(ap);
  tj_attr_value_t v = {.kind = TJ_ATTR_LIST, .list = {n, items}};
  return v;
}

static const tj_attrs_t *attrs1(const char *k, tj_attr_value_t v) { return tj_attrs_set(arena, NULL, k, v); }

static tj_status_t *call2(const char *script, const tj_rx_expr_t *a, const tj_rx_expr_t *b, const tj_attrs_t *given,
                          const tj_rx_expr_t **out) {
  const tj_op_def_t *def = tj_op_lookup_script(script);
  ck_assert_ptr_nonnull(def);
  const tj_rx_expr_t *args[2] = {a, b};
  return tj_op_make_call(&ctx, def, b ? 2 : 1, args, given, out);
}

static void assert_static_shape(const tj_sinfo_t *s, tj_dtype_t dtype, int ndim, const int64_t *dims) {
  int got_ndim;
  int64_t got[8];
  ck_assert(tj_sinfo_is_tensor(s));
  ck_assert(tj_dtype_eq(s->tensor.dtype, dtype));
  ck_assert_msg(tj_sinfo_static_shape(s, &got_ndim, got), "shape is not static");
  ck_assert_int_eq(got_ndim, ndim);
  for (int i = 0; i < ndim; i++) ck_assert_msg(got[i] == dims[i], "dim %d: %lld vs %lld", i, (long long)got[i], (long long)dims[i]);
}

static void assert_error_contains(tj_status_t *s, const char *needle) {
  ck_assert_msg(s != NULL, "expected an error containing '%s'", needle);
  const char *text = tj_status_text(s);
  ck_assert_msg(strstr(text, needle) != NULL, "message '%s' lacks '%s'", text, needle);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INVALID_ARGUMENT);
  tj_status_free(s);
}

START_TEST(lookup_by_tvm_and_script_name) {
  const char *names[][2] = {{"relax.call_tir", "R.call_tir"},   {"relax.nn.conv2d", "R.nn.conv2d"},
                            {"relax.nn.relu", "R.nn.relu"},     {"relax.nn.layer_norm", "R.nn.layer_norm"},
                            {"relax.astype", "R.astype"},       {"relax.add", "R.add"},
                            {"relax.subtract", "R.subtract"},   {"relax.multiply", "R.multiply"},
                            {"relax.divide", "R.divide"},       {"relax.matmul", "R.matmul"},
                            {"relax.nn.softmax", "R.nn.softmax"}, {"relax.permute_dims", "R.permute_dims"},
                            {"relax.reshape", "R.reshape"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const tj_op_def_t *a = tj_op_lookup(names[i][0]), *b = tj_op_lookup_script(names[i][1]);
    ck_assert_msg(a && a == b, "%s", names[i][0]);
  }
  ck_assert_ptr_null(tj_op_lookup("relax.nn.conv4d"));
  ck_assert_ptr_null(tj_op_lookup_script("relax.add"));
}
END_TEST

START_TEST(mixed_precision_policies_follow_tvm) {
  ck_assert_int_eq(tj_op_lookup("relax.nn.conv2d")->mp_policy, TJ_MP_ALWAYS);
  ck_assert_int_eq(tj_op_lookup("relax.matmul")->mp_policy, TJ_MP_ALWAYS);
  ck_assert_int_eq(tj_op_lookup("relax.nn.relu")->mp_policy, TJ_MP_FOLLOW);
  ck_assert_int_eq(tj_op_lookup("relax.nn.layer_norm")->mp_policy, TJ_MP_FOLLOW);
  ck_assert_int_eq(tj_op_lookup("relax.reshape")->mp_policy, TJ_MP_FOLLOW);
  ck_assert_int_eq(tj_op_lookup("relax.call_tir")->mp_policy, TJ_MP_NEVER);
  ck_assert_int_eq(tj_op_lookup("relax.nn.softmax")->mp_policy, TJ_MP_NEVER);
  const tj_rx_expr_t *unknown = tj_rx_call(arena, tj_rx_op(arena, "relax.nn.not_an_op"), 0, NULL, NULL, 0, NULL);
  ck_assert_int_eq(tj_op_call_mp_policy(unknown), TJ_MP_NEVER);
  const tj_rx_expr_t *fn = tj_rx_call(arena, tj_rx_global_var(arena, "f"), 0, NULL, NULL, 0, NULL);
  ck_assert_int_eq(tj_op_call_mp_policy(fn), -1);
}
END_TEST

START_TEST(conv2d_sugar_equals_spelled_out_attrs) {
  const tj_op_def_t *conv = tj_op_lookup("relax.nn.conv2d");
  const tj_attrs_t *sugar, *full, *given = NULL;
  TU_OK(conv->normalize_attrs(arena, NULL, &sugar));
  given = tj_attrs_set(arena, given, "strides", ints(2, 1, 1));
  given = tj_attrs_set(arena, given, "padding", ints(4, 0, 0, 0, 0));
  given = tj_attrs_set(arena, given, "dilation", ints(2, 1, 1));
  given = tj_attrs_set(arena, given, "groups", tj_attr_int(1));
  given = tj_attrs_set(arena, given, "data_layout", tj_attr_str("NCHW"));
  given = tj_attrs_set(arena, given, "kernel_layout", tj_attr_str("OIHW"));
  given = tj_attrs_set(arena, given, "out_layout", tj_attr_str("NCHW"));
  given = tj_attrs_set(arena, given, "out_dtype", tj_attr_str("void"));
  TU_OK(conv->normalize_attrs(arena, given, &full));
  ck_assert(tj_attrs_equal(sugar, full));
  /* TVM's value types: int64 lists, int32 groups, a dtype for out_dtype. */
  const tj_attr_value_t *strides = tj_attrs_get(full, "strides");
  ck_assert_int_eq(strides->kind, TJ_ATTR_LIST);
  ck_assert(tj_dtype_eq(strides->list.items[0].dtype, TJ_I64));
  ck_assert(tj_dtype_eq(tj_attrs_get(full, "groups")->dtype, TJ_I32));
  ck_assert_int_eq(tj_attrs_get(full, "out_dtype")->kind, TJ_ATTR_DTYPE);
  ck_assert(tj_dtype_is_void(tj_attrs_get(full, "out_dtype")->dtype));
  ck_assert_str_eq(full->keys[0], "strides");
  ck_assert_str_eq(full->keys[7], "out_dtype");
}
END_TEST

START_TEST(conv2d_padding_forms_normalise_to_four) {
  const tj_op_def_t *conv = tj_op_lookup("relax.nn.conv2d");
  const tj_attrs_t *out;
  int64_t p[4];
  TU_OK(conv->normalize_attrs(arena, attrs1("padding", ints(2, 1, 2)), &out));
  const tj_attr_value_t *v = tj_attrs_get(out, "padding");
  for (int i = 0; i < 4; i++) p[i] = v->list.items[i].i;
  ck_assert(p[0] == 1 && p[1] == 2 && p[2] == 1 && p[3] == 2);
  TU_OK(conv->normalize_attrs(arena, attrs1("padding", tj_attr_int(3)), &out));
  v = tj_attrs_get(out, "padding");
  for (int i = 0; i < 4; i++) ck_assert_int_eq(v->list.items[i].i, 3);
  TU_OK(conv->normalize_attrs(arena, attrs1("data_layout", tj_attr_str("NHWC")), &out));
  ck_assert_str_eq(tj_attrs_get_str(out, "out_layout", ""), "NHWC");
  assert_error_contains(conv->normalize_attrs(arena, attrs1("padding", ints(3, 1, 1, 1)), &out), "1, 2 or 4 values");
  assert_error_contains(conv->normalize_attrs(arena, attrs1("stride", ints(2, 1, 1)), &out),
                        "unknown attribute 'stride' (valid: strides, padding");
  assert_error_contains(conv->normalize_attrs(arena, attrs1("kernel_layout", tj_attr_str("OIHW4o")), &out),
                        "kernel_layout \"OIHW4o\"");
}
END_TEST

START_TEST(conv2d_infers_nchw_and_nhwc_shapes) {
  const tj_rx_expr_t *x = tensor_var("x", TJ_F32, 4, (int64_t)2, (int64_t)3, (int64_t)28, (int64_t)28);
  const tj_rx_expr_t *w = tensor_var("w", TJ_F32, 4, (int64_t)4, (int64_t)3, (int64_t)3, (int64_t)3);
  const tj_rx_expr_t *c;
  TU_OK(call2("R.nn.conv2d", x, w, NULL, &c));
  assert_static_shape(c->sinfo, TJ_F32, 4, (int64_t[]){2, 4, 26, 26});
  TU_OK(call2("R.nn.conv2d", x, w, attrs1("padding", ints(2, 1, 1)), &c));
  assert_static_shape(c->sinfo, TJ_F32, 4, (int64_t[]){2, 4, 28, 28});
  const tj_attrs_t *a = tj_attrs_set(arena, attrs1("strides", ints(1, 2)), "out_dtype", tj_attr_str("float16"));
  TU_OK(call2("R.nn.conv2d", x, w, a, &c));
  assert_static_shape(c->sinfo, TJ_F16, 4, (int64_t[]){2, 4, 13, 13});
  /* The seed: NHWC data, OHWI weight, padding 1. */
  const tj_rx_expr_t *d = tensor_var("d", TJ_F16, 4, (int64_t)16, (int64_t)32, (int64_t)32, (int64_t)16);
  const tj_rx_expr_t *k = tensor_var("k", TJ_F16, 4, (int64_t)16, (int64_t)3, (int64_t)3, (int64_t)16);
  a = tj_attrs_set(arena, attrs1("padding", ints(1, 1)), "data_layout", tj_attr_str("NHWC"));
  a = tj_attrs_set(arena, a, "kernel_layout", tj_attr_str("OHWI"));
  TU_OK(call2("R.nn.conv2d", d, k, a, &c));
  assert_static_shape(c->sinfo, TJ_F16, 4, (int64_t[]){16, 32, 32, 16});
  /* Dilation 2 makes the 3x3 kernel span 5. */
  TU_OK(call2("R.nn.conv2d", x, w, attrs1("dilation", ints(2, 2, 2)), &c));
  assert_static_shape(c->sinfo, TJ_F32, 4, (int64_t[]){2, 4, 24, 24});
}
END_TEST

START_TEST(conv2d_infers_symbolic_shapes) {
  const tj_tir_expr_t *n = tj_tir_var(arena, "n", TJ_I64), *c = tj_tir_var(arena, "c", TJ_I64);
  const tj_tir_expr_t *h = tj_tir_var(arena, "h", TJ_I64), *w = tj_tir_var(arena, "w", TJ_I64);
  const tj_tir_expr_t *f = tj_tir_var(arena, "f", TJ_I64), *kh = tj_tir_var(arena, "kh", TJ_I64);
  const tj_tir_expr_t *kw = tj_tir_var(arena, "kw", TJ_I64);
  const tj_tir_expr_t *xs[4] = {n, c, h, w}, *ks[4] = {f, c, kh, kw};
  const tj_rx_expr_t *call;
  TU_OK(call2("R.nn.conv2d", sym_var("x", TJ_F32, 4, xs), sym_var("k", TJ_F32, 4, ks), NULL, &call));
  const tj_sinfo_t *s = call->sinfo;
  ck_assert_int_eq(s->tensor.ndim, 4);
  ck_assert_ptr_eq(s->tensor.shape[0], n);
  ck_assert_ptr_eq(s->tensor.shape[1], f);
  /* h - kh + 1, as TVM's annotation writes it. */
  const tj_tir_expr_t *want = tj_tir_binary(arena, TJ_TIR_ADD, tj_tir_binary(arena, TJ_TIR_SUB, h, kh), tj_tir_i64(arena, 1));
  ck_assert_int_eq(tj_op_compare_dims(s->tensor.shape[2], want), TJ_DIM_EQUAL);
  ck_assert_int_eq(s->tensor.shape[2]->kind, TJ_TIR_ADD);
  ck_assert_int_eq(s->tensor.shape[2]->binary.a->kind, TJ_TIR_SUB);
  ck_assert_ptr_eq(s->tensor.shape[2]->binary.a->binary.a, h);
  ck_assert_int_eq(tj_op_compare_dims(s->tensor.shape[3], want), TJ_DIM_UNKNOWN);
}
END_TEST

START_TEST(conv2d_errors_speak_user_terms) {
  const tj_rx_expr_t *d = tensor_var("d", TJ_F16, 4, (int64_t)16, (int64_t)32, (int64_t)32, (int64_t)16);
  const tj_rx_expr_t *k = tensor_var("k", TJ_F16, 4, (int64_t)32, (int64_t)3, (int64_t)3, (int64_t)8);
  const tj_attrs_t *a = tj_attrs_set(arena, attrs1("data_layout", tj_attr_str("NHWC")), "kernel_layout",
                                     tj_attr_str("OHWI"));
  const tj_rx_expr_t *c;
  assert_error_contains(call2("R.nn.conv2d", d, k, a, &c),
                        "conv2d: data has 16 input channels but the weight (OHWI 32x3x3x8) expects 8 x groups 1");
  a = tj_attrs_set(arena, a, "groups", tj_attr_int(2));
  TU_OK(call2("R.nn.conv2d", d, k, a, &c));
  assert_static_shape(c->sinfo, TJ_F16, 4, (int64_t[]){16, 30, 30, 32});
  const tj_rx_expr_t *w32 = tensor_var("w", TJ_F32, 4, (int64_t)16, (int64_t)16, (int64_t)3, (int64_t)3);
  const tj_rx_expr_t *x16 = tensor_var("x", TJ_F16, 4, (int64_t)1, (int64_t)16, (int64_t)8, (int64_t)8);
  assert_error_contains(call2("R.nn.conv2d", x16, w32, NULL, &c), "different dtypes (float16 and float32)");
  const tj_rx_expr_t *tiny = tensor_var("t", TJ_F32, 4, (int64_t)1, (int64_t)16, (int64_t)2, (int64_t)2);
  assert_error_contains(call2("R.nn.conv2d", tiny, w32, NULL, &c), "output would be empty");
  const tj_rx_expr_t *x3 = tensor_var("x3", TJ_F32, 3, (int64_t)16, (int64_t)8, (int64_t)8);
  assert_error_contains(call2("R.nn.conv2d", x3, w32, NULL, &c), "data must be 4-D (NCHW), got 3-D");
}
END_TEST

START_TEST(binary_ops_broadcast_like_numpy) {
  const tj_rx_expr_t *a = tensor_var("a", TJ_F32, 3, (int64_t)2, (int64_t)3, (int64_t)4);
  const tj_rx_expr_t *b = tensor_var("b", TJ_F32, 2, (int64_t)3, (int64_t)1);
  const tj_rx_expr_t *c;
  const char *ops[] = {"R.add", "R.subtract", "R.multiply", "R.divide"};
  for (int i = 0; i < 4; i++) {
    TU_OK(call2(ops[i], a, b, NULL, &c));
    assert_static_shape(c->sinfo, TJ_F32, 3, (int64_t[]){2, 3, 4});
  }
  /* A 0-d constant and a PrimValue act as scalars. */
  float one = 1.0f;
  const tj_rx_expr_t *k = tj_rx_constant(arena, TJ_F32, 0, NULL, &one, sizeof one);
  TU_OK(call2("R.add", k, a, NULL, &c));
  assert_static_shape(c->sinfo, TJ_F32, 3, (int64_t[]){2, 3, 4});
  const tj_rx_expr_t *p = tj_rx_var(arena, "y", tj_sinfo_prim(arena, TJ_F32, NULL));
  TU_OK(call2("R.multiply", a, p, NULL, &c));
  assert_static_shape(c->sinfo, TJ_F32, 3, (int64_t[]){2, 3, 4});
  const tj_rx_expr_t *bad = tensor_var("bad", TJ_F32, 1, (int64_t)5);
  assert_error_contains(call2("R.add", a, bad, NULL, &c), "add: shapes 2x3x4 and 5 do not broadcast: 4 vs 5");
  const tj_rx_expr_t *h = tensor_var("h", TJ_F16, 1, (int64_t)4);
  assert_error_contains(call2("R.add", a, h, NULL, &c), "add: operands have different dtypes");
}
END_TEST

START_TEST(binary_ops_broadcast_symbolic_shapes) {
  const tj_tir_expr_t *n = tj_tir_var(arena, "n", TJ_I64), *m = tj_tir_var(arena, "m", TJ_I64);
  const tj_tir_expr_t *one = tj_tir_i64(arena, 1);
  const tj_tir_expr_t *s0[2] = {n, one}, *s1[2] = {one, m}, *s2[1] = {m}, *s3[1] = {n};
  const tj_rx_expr_t *c;
  TU_OK(call2("R.add", sym_var("a", TJ_F32, 2, s0), sym_var("b", TJ_F32, 2, s1), NULL, &c));
  ck_assert_ptr_eq(c->sinfo->tensor.shape[0], n);
  ck_assert_ptr_eq(c->sinfo->tensor.shape[1], m);
  /* n vs m cannot be decided: TVM keeps the rank and drops the shape. */
  TU_OK(call2("R.add", sym_var("a", TJ_F32, 1, s3), sym_var("b", TJ_F32, 1, s2), NULL, &c));
  ck_assert_int_eq(c->sinfo->tensor.ndim, 1);
  ck_assert_ptr_null(c->sinfo->tensor.shape);
  TU_OK(call2("R.add", sym_var("a", TJ_F32, 1, s3), sym_var("b", TJ_F32, 1, s3), NULL, &c));
  ck_assert_ptr_eq(c->sinfo->tensor.shape[0], n);
}
END_TEST

START_TEST(matmul_follows_numpy_rank_rules) {
  const tj_rx_expr_t *v4 = tensor_var("v", TJ_F32, 1, (int64_t)4);
  const tj_rx_expr_t *m = tensor_var("m", TJ_F32, 4, (int64_t)2, (int64_t)3, (int64_t)4, (int64_t)5);
  const tj_rx_expr_t *v5 = tensor_var("v5", TJ_F32, 1, (int64_t)5);
  const tj_rx_expr_t *c;
  TU_OK(call2("R.matmul", v4, m, NULL, &c));
  assert_static_shape(c->sinfo, TJ_F32, 3, (int64_t[]){2, 3, 5});
  TU_OK(call2("R.matmul", m, v5, NULL, &c));
  assert_static_shape(c->sinfo, TJ_F32, 3, (int64_t[]){2, 3, 4});
  TU_OK(call2("R.matmul", v4, v4, NULL, &c));
  assert_static_shape(c->sinfo, TJ_F32, 0, NULL);
  const tj_rx_expr_t *b = tensor_var("b", TJ_F32, 3, (int64_t)1, (int64_t)5, (int64_t)7);
  TU_OK(call2("R.matmul", m, b, attrs1("out_dtype", tj_attr_str("float16")), &c));
  assert_static_shape(c->sinfo, TJ_F16, 4, (int64_t[]){2, 3, 4, 7});
  assert_error_contains(call2("R.matmul", m, m, NULL, &c), "matmul: the reduction lengths differ");
}
END_TEST

START_TEST(matmul_broadcasts_symbolic_batches) {
  const tj_tir_expr_t *a = tj_tir_var(arena, "a", TJ_I64), *b = tj_tir_var(arena, "b", TJ_I64);
  const tj_tir_expr_t *c = tj_tir_var(arena, "c", TJ_I64), *m = tj_tir_var(arena, "m", TJ_I64);
  const tj_tir_expr_t *n = tj_tir_var(arena, "n", TJ_I64), *k = tj_tir_var(arena, "k", TJ_I64);
  const tj_tir_expr_t *one = tj_tir_i64(arena, 1);
  const tj_tir_expr_t *xs[4] = {b, one, m, k}, *ys[5] = {a, one, c, k, n};
  const tj_rx_expr_t *call;
  TU_OK(call2("R.matmul", sym_var("x", TJ_F32, 4, xs), sym_var("y", TJ_F32, 5, ys), NULL, &call));
  const tj_tir_expr_t *const *s = call->sinfo->tensor.shape;
  ck_assert_int_eq(call->sinfo->tensor.ndim, 5);
  ck_assert(s[0] == a && s[1] == b && s[2] == c && s[3] == m && s[4] == n);
}
END_TEST

START_TEST(softmax_permute_reshape_layer_norm_astype) {
  const tj_rx_expr_t *x = tensor_var("x", TJ_F32, 4, (int64_t)1, (int64_t)2, (int64_t)3, (int64_t)4);
  const tj_rx_expr_t *c;
  TU_OK(call2("R.nn.softmax", x, NULL, NULL, &c));
  ck_assert_int_eq(tj_attrs_get_int(c->call.attrs, "axis", 0), -1);
  assert_static_shape(c->sinfo, TJ_F32, 4, (int64_t[]){1, 2, 3, 4});
  assert_error_contains(call2("R.nn.softmax", x, NULL, attrs1("axis", tj_attr_int(4)), &c), "axis 4 is out of range");

  TU_OK(call2("R.permute_dims", x, NULL, NULL, &c));
  ck_assert_int_eq(tj_attrs_get(c->call.attrs, "axes")->kind, TJ_ATTR_NONE);
  assert_static_shape(c->sinfo, TJ_F32, 4, (int64_t[]){4, 3, 2, 1});
  TU_OK(call2("R.permute_dims", x, NULL, attrs1("axes", ints(4, 1, -1, 2, -4)), &c));
  assert_static_shape(c->sinfo, TJ_F32, 4, (int64_t[]){2, 4, 3, 1});
  assert_error_contains(call2("R.permute_dims", x, NULL, attrs1("axes", ints(4, 0, 1, 1, 2)), &c), "appears twice");

  const tj_rx_expr_t *fields[2] = {tj_rx_prim_value(arena, tj_tir_int(arena, TJ_I64, 2)),
                                   tj_rx_prim_value(arena, tj_tir_int(arena, TJ_I64, -1))};
  TU_OK(call2("R.reshape", x, tj_rx_tuple(arena, 2, fields), NULL, &c));
  ck_assert_int_eq(c->call.args[1]->kind, TJ_RX_SHAPE_EXPR);
  assert_static_shape(c->sinfo, TJ_F32, 2, (int64_t[]){2, 12});
  const tj_tir_expr_t *bad[2] = {tj_tir_i64(arena, 5), tj_tir_i64(arena, 5)};
  assert_error_contains(call2("R.reshape", x, tj_rx_shape_expr(arena, 2, bad), NULL, &c),
                        "cannot reshape 1x2x3x4 (24 elements) into 5x5 (25 elements)");

  const tj_rx_expr_t *g = tensor_var("g", TJ_F32, 2, (int64_t)3, (int64_t)4);
  const tj_rx_expr_t *args[3] = {x, g, g};
  TU_OK(tj_op_make_call(&ctx, tj_op_lookup("relax.nn.layer_norm"), 3, args, attrs1("axes", ints(2, -2, -1)), &c));
  assert_static_shape(c->sinfo, TJ_F32, 4, (int64_t[]){1, 2, 3, 4});
  ck_assert_int_eq(tj_attrs_get(c->call.attrs, "epsilon")->kind, TJ_ATTR_FLOAT);
  ck_assert(tj_attrs_get(c->call.attrs, "epsilon")->f == 1e-5);
  ck_assert(tj_dtype_eq(tj_attrs_get(c->call.attrs, "scale")->dtype, TJ_BOOL));
  const tj_rx_expr_t *g2 = tensor_var("g2", TJ_F32, 2, (int64_t)2, (int64_t)4);
  const tj_rx_expr_t *args2[3] = {x, g2, g};
  assert_error_contains(tj_op_make_call(&ctx, tj_op_lookup("relax.nn.layer_norm"), 3, args2,
                                        attrs1("axes", ints(2, 2, 3)), &c),
                        "layer_norm: gamma has shape 2x4 but data (1x2x3x4) has 3 at normalised axis 2");

  const tj_op_def_t *astype = tj_op_lookup_script("R.astype");
  ck_assert_str_eq(astype->positional_attrs[0], "dtype");
  ck_assert_ptr_null(astype->positional_attrs[1]);
  TU_OK(call2("R.astype", x, NULL, attrs1("dtype", tj_attr_str("float16")), &c));
  assert_static_shape(c->sinfo, TJ_F16, 4, (int64_t[]){1, 2, 3, 4});
  assert_error_contains(call2("R.astype", x, NULL, NULL, &c), "astype: needs a target dtype");
  assert_error_contains(call2("R.nn.relu", x, NULL, attrs1("alpha", tj_attr_int(1)), &c), "takes no attributes");
}
END_TEST

START_TEST(simplifier_folds_linear_shape_arithmetic) {
  const tj_tir_expr_t *h = tj_tir_var(arena, "h", TJ_I64), *k = tj_tir_var(arena, "k", TJ_I64);
  /* ((h + 2) - 3*(k - 1) - 1) // 1 + 1  ->  h - k*3 + 5 */
  const tj_tir_expr_t *e = tj_tir_binary(
      arena, TJ_TIR_ADD,
      tj_tir_binary(arena, TJ_TIR_FLOOR_DIV,
                    tj_tir_binary(arena, TJ_TIR_SUB,
                                  tj_tir_binary(arena, TJ_TIR_SUB, tj_tir_binary(arena, TJ_TIR_ADD, h, tj_tir_i64(arena, 2)),
                                                tj_tir_binary(arena, TJ_TIR_MUL, tj_tir_i64(arena, 3),
                                                              tj_tir_binary(arena, TJ_TIR_SUB, k, tj_tir_i64(arena, 1)))),
                                  tj_tir_i64(arena, 1)),
                    tj_tir_i64(arena, 1)),
      tj_tir_i64(arena, 1));
  const tj_tir_expr_t *s = tj_op_simplify_dim(arena, e);
  int64_t v;
  ck_assert_int_eq(s->kind, TJ_TIR_ADD);
  ck_assert(tj_tir_is_const_int(s->binary.b, &v) && v == 5);
  ck_assert_int_eq(s->binary.a->kind, TJ_TIR_SUB);
  ck_assert_ptr_eq(s->binary.a->binary.a, h);
  ck_assert_int_eq(tj_op_compare_dims(tj_tir_binary(arena, TJ_TIR_ADD, h, tj_tir_i64(arena, 1)), h), TJ_DIM_DIFFERENT);
  ck_assert_int_eq(tj_op_compare_dims(tj_tir_binary(arena, TJ_TIR_SUB, tj_tir_binary(arena, TJ_TIR_ADD, h, k), k), h),
                   TJ_DIM_EQUAL);
  /* (2*h) // 2 is h; (h + 1) // 2 stays a division. */
  const tj_tir_expr_t *half = tj_op_simplify_dim(
      arena, tj_tir_binary(arena, TJ_TIR_FLOOR_DIV, tj_tir_binary(arena, TJ_TIR_MUL, h, tj_tir_i64(arena, 2)), tj_tir_i64(arena, 2)));
  ck_assert_ptr_eq(half, h);
  const tj_tir_expr_t *odd = tj_op_simplify_dim(
      arena, tj_tir_binary(arena, TJ_TIR_FLOOR_DIV, tj_tir_binary(arena, TJ_TIR_ADD, h, tj_tir_i64(arena, 1)), tj_tir_i64(arena, 2)));
  ck_assert_int_eq(odd->kind, TJ_TIR_FLOOR_DIV);
}
END_TEST

START_TEST(manipulation_and_norm_ops_keep_symbolic_dims) {
  const tj_tir_expr_t *a = tj_tir_var(arena, "a", TJ_I64), *b = tj_tir_var(arena, "b", TJ_I64);
  const tj_tir_expr_t *xs[2] = {a, b};
  const tj_rx_expr_t *x = sym_var("x", TJ_F32, 2, xs), *c;
  TU_OK(call2("R.permute_dims", x, NULL, NULL, &c));
  ck_assert(c->sinfo->tensor.shape[0] == b && c->sinfo->tensor.shape[1] == a);
  TU_OK(call2("R.nn.softmax", x, NULL, attrs1("axis", tj_attr_int(0)), &c));
  ck_assert(c->sinfo->tensor.shape[0] == a && c->sinfo->tensor.shape[1] == b);
  /* reshape(x, (a // 2, b * 2)) keeps the given expressions. */
  const tj_tir_expr_t *half = tj_tir_binary(arena, TJ_TIR_FLOOR_DIV, a, tj_tir_i64(arena, 2));
  const tj_tir_expr_t *twice = tj_tir_binary(arena, TJ_TIR_MUL, b, tj_tir_i64(arena, 2));
  const tj_rx_expr_t *fields[2] = {tj_rx_prim_value(arena, half), tj_rx_prim_value(arena, twice)};
  TU_OK(call2("R.reshape", x, tj_rx_tuple(arena, 2, fields), NULL, &c));
  ck_assert(c->sinfo->tensor.shape[0] == half && c->sinfo->tensor.shape[1] == twice);
  const tj_rx_expr_t *minus[2] = {tj_rx_prim_value(arena, tj_tir_i64(arena, -1)), tj_rx_prim_value(arena, b)};
  TU_OK(call2("R.reshape", x, tj_rx_tuple(arena, 2, minus), NULL, &c));
  ck_assert_int_eq(tj_op_compare_dims(c->sinfo->tensor.shape[0], a), TJ_DIM_UNKNOWN); /* (a*b) // b: kept whole */
  ck_assert_ptr_eq(c->sinfo->tensor.shape[1], b);
  const tj_tir_expr_t *gs[1] = {b};
  const tj_rx_expr_t *g = sym_var("g", TJ_F32, 1, gs);
  const tj_rx_expr_t *args[3] = {x, g, g};
  TU_OK(tj_op_make_call(&ctx, tj_op_lookup("relax.nn.layer_norm"), 3, args, attrs1("axes", ints(1, -1)), &c));
  ck_assert(c->sinfo->tensor.shape[0] == a && c->sinfo->tensor.shape[1] == b);
  const tj_rx_expr_t *ga = sym_var("ga", TJ_F32, 1, xs);
  /* b vs a cannot be decided statically: accepted, as TVM does without a proof. */
  const tj_rx_expr_t *args2[3] = {x, g, ga};
  TU_OK(tj_op_make_call(&ctx, tj_op_lookup("relax.nn.layer_norm"), 3, args2, attrs1("axes", ints(1, -1)), &c));
}
END_TEST

/* ---- R.exp (unary family): parse, inference, policy; R.power (binary family) ---- */

static const char *k_exp_module =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((\"n\", 4), dtype=\"float16\")):\n"
    "        y = R.exp(x=x)\n"
    "        return y\n";

START_TEST(exp_parses_and_keeps_the_struct_info_of_x) {
  const tj_op_def_t *def = tj_op_lookup("relax.exp");
  ck_assert_ptr_nonnull(def);
  ck_assert_ptr_eq(def, tj_op_lookup_script("R.exp"));
  ck_assert_ptr_eq(def, &tj_op_exp);
  ck_assert_str_eq(tj_op_family(def), "unary");
  ck_assert_int_eq(def->mp_policy, TJ_MP_FOLLOW);
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(arena, "exp.rx", k_exp_module, strlen(k_exp_module), &m));
  const tj_rx_func_t *f = tj_module_find_relax(m, "main");
  ck_assert_ptr_nonnull(f);
  const tj_rx_binding_t *b = &f->body->seq.blocks[0].bindings[0];
  ck_assert(tj_rx_is_op_call(b->value, "relax.exp"));
  const tj_sinfo_t *x = f->params[0]->sinfo, *y = b->value->sinfo;
  ck_assert(tj_sinfo_is_tensor(y));
  ck_assert(tj_dtype_eq(y->tensor.dtype, TJ_F16));
  ck_assert_int_eq(y->tensor.ndim, 2);
  ck_assert_ptr_eq(y->tensor.shape[0], x->tensor.shape[0]); /* the symbolic n itself */
  int64_t four;
  ck_assert(tj_tir_is_const_int(y->tensor.shape[1], &four) && four == 4);
}
END_TEST

START_TEST(exp_rejects_what_tvm_rejects) {
  const tj_rx_expr_t *out = NULL;
  const tj_rx_expr_t *i32 = tensor_var("x", TJ_I32, 1, (int64_t)3);
  assert_error_contains(call2("R.exp", i32, NULL, NULL, &out), "exp: x must be a float tensor, got int32");
  const tj_rx_expr_t *f32 = tensor_var("x", TJ_F32, 1, (int64_t)3);
  assert_error_contains(call2("R.exp", f32, f32, NULL, &out), "exp: takes 1 arguments, got 2");
  assert_error_contains(call2("R.exp", f32, NULL, attrs1("axis", tj_attr_int(0)), &out), "takes no attributes");
  /* an unknown dtype passes, as in TVM */
  const tj_rx_expr_t *any = tj_rx_var(arena, "x", tj_sinfo_tensor(arena, TJ_VOID, -1, NULL));
  TU_OK(call2("R.exp", any, NULL, NULL, &out));
  ck_assert_int_eq(out->sinfo->tensor.ndim, -1);
}
END_TEST

START_TEST(power_is_a_broadcasting_binary_op) {
  ck_assert_str_eq(tj_op_family(&tj_op_power), "binary");
  ck_assert_int_eq(tj_op_power.mp_policy, TJ_MP_FOLLOW);
  const tj_rx_expr_t *out = NULL;
  TU_OK(call2("R.power", tensor_var("a", TJ_F32, 2, (int64_t)4, (int64_t)1), tensor_var("b", TJ_F32, 1, (int64_t)3),
              NULL, &out));
  assert_static_shape(out->sinfo, TJ_F32, 2, (const int64_t[]){4, 3});
  assert_error_contains(call2("R.power", tensor_var("a", TJ_F32, 1, (int64_t)3), tensor_var("b", TJ_F16, 1, (int64_t)3),
                              NULL, &out),
                        "different dtypes");
}
END_TEST

int main(void) {
  Suite *s = suite_create("op");
  TCase *tc = tcase_create("registry");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, lookup_by_tvm_and_script_name);
  tcase_add_test(tc, mixed_precision_policies_follow_tvm);
  tcase_add_test(tc, conv2d_sugar_equals_spelled_out_attrs);
  tcase_add_test(tc, conv2d_padding_forms_normalise_to_four);
  tcase_add_test(tc, conv2d_infers_nchw_and_nhwc_shapes);
  tcase_add_test(tc, conv2d_infers_symbolic_shapes);
  tcase_add_test(tc, conv2d_errors_speak_user_terms);
  tcase_add_test(tc, binary_ops_broadcast_like_numpy);
  tcase_add_test(tc, binary_ops_broadcast_symbolic_shapes);
  tcase_add_test(tc, matmul_follows_numpy_rank_rules);
  tcase_add_test(tc, matmul_broadcasts_symbolic_batches);
  tcase_add_test(tc, softmax_permute_reshape_layer_norm_astype);
  tcase_add_test(tc, simplifier_folds_linear_shape_arithmetic);
  tcase_add_test(tc, manipulation_and_norm_ops_keep_symbolic_dims);
  tcase_add_test(tc, exp_parses_and_keeps_the_struct_info_of_x);
  tcase_add_test(tc, exp_rejects_what_tvm_rejects);
  tcase_add_test(tc, power_is_a_broadcasting_binary_op);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
