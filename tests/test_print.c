/* ir/print: TVMScript as TVM prints it. Expected text is taken from TVM's own output
 * (its printout of the seed, kept in examples/seed/model.rx), not from this printer; the
 * round-trip tests parse, print, parse again and compare structurally. The conformance
 * corpus round trip is `tvmjit conformance` (tests/cli/conformance.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/text/parse.h"
#include "ir/text/print.h"
#include "ir/struct_equal.h"
#include "support/alloc.h"
#include "project.h"
#include "testutil.h"

#define I64(v) tj_tir_i64(a, (v))

static const tj_tir_expr_t *load(tj_arena_t *a, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx) {
  return tj_tir_load(a, b, n, idx);
}

static const tj_buffer_t *buffer4(tj_arena_t *a, const char *name, tj_dtype_t dt, const int64_t *dims) {
  const tj_tir_expr_t *shape[4] = {I64(dims[0]), I64(dims[1]), I64(dims[2]), I64(dims[3])};
  return tj_buffer_new(a, name, dt, 4, shape, NULL);
}

/* relu exactly as in seed.rx: root block, 4-d grid, remapped block, max(x, 0). */
static const tj_prim_func_t *seed_relu(tj_arena_t *a) {
  int64_t dims[4] = {16, 32, 32, 16};
  const tj_buffer_t *lv = buffer4(a, "lv", TJ_F16, dims), *compute = buffer4(a, "compute", TJ_F16, dims);
  const tj_tir_expr_t *loops[4], *iv[4];
  tj_iter_var_t *ivs = TJ_ARENA_ARRAY(a, tj_iter_var_t, 4);
  tj_range_t *pt = TJ_ARENA_ARRAY(a, tj_range_t, 4);
  for (int i = 0; i < 4; i++) {
    char n[8], vn[8];
    snprintf(n, sizeof n, "i%d", i);
    snprintf(vn, sizeof vn, "v_i%d", i);
    loops[i] = tj_tir_var(a, n, TJ_I64);
    iv[i] = tj_tir_var(a, vn, TJ_I64);
    ivs[i] = (tj_iter_var_t){iv[i], {I64(0), I64(dims[i])}, TJ_ITER_SPATIAL};
    pt[i] = (tj_range_t){iv[i], I64(1)};
  }
  tj_block_t *blk = tj_block_new(a, "compute");
  blk->n_iter_vars = 4;
  blk->iter_vars = ivs;
  tj_buffer_region_t *rw = TJ_ARENA_ARRAY(a, tj_buffer_region_t, 2);
  rw[0] = (tj_buffer_region_t){lv, 4, pt};
  rw[1] = (tj_buffer_region_t){compute, 4, pt};
  blk->n_reads = blk->n_writes = 1;
  blk->reads = &rw[0];
  blk->writes = &rw[1];
  const tj_tir_expr_t *mx = tj_tir_binary(a, TJ_TIR_MAX, load(a, lv, 4, iv), tj_tir_float(a, TJ_F16, 0));
  blk->body = tj_tir_store(a, compute, 4, iv, mx);
  const tj_tir_stmt_t *s = tj_tir_realize(a, 4, loops, NULL, blk);
  for (int i = 3; i >= 0; i--) s = tj_tir_for(a, loops[i], I64(0), I64(dims[i]), TJ_FOR_SERIAL, s);
  tj_block_t *root = tj_block_new(a, "root");
  root->body = s;
  tj_prim_func_t *f = TJ_ARENA_NEW(a, tj_prim_func_t);
  const tj_tir_expr_t **params = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, 2);
  const tj_buffer_t **bm = TJ_ARENA_ARRAY(a, const tj_buffer_t *, 2);
  params[0] = tj_tir_var(a, "lv", TJ_HANDLE);
  params[1] = tj_tir_var(a, "compute", TJ_HANDLE);
  bm[0] = lv;
  bm[1] = compute;
  f->n_params = 2;
  f->params = params;
  f->buffer_map = bm;
  f->attrs = tj_attrs_set(a, NULL, "tir.noalias", tj_attr_bool(true));
  f->body = tj_tir_realize(a, 0, NULL, NULL, root);
  return f;
}

/* The seed's relu, verbatim from TVM's printout of the seed (examples/seed/model.rx). */
static const char *const kSeedRelu =
    "# from tvm.script import ir as I\n"
    "# from tvm.script import tir as T\n"
    "\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def relu(lv: T.Buffer((T.int64(16), T.int64(32), T.int64(32), T.int64(16)), \"float16\"), compute: "
    "T.Buffer((T.int64(16), T.int64(32), T.int64(32), T.int64(16)), \"float16\")):\n"
    "        T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "        # with T.block(\"root\"):\n"
    "        for i0, i1, i2, i3 in T.grid(T.int64(16), T.int64(32), T.int64(32), T.int64(16)):\n"
    "            with T.block(\"compute\"):\n"
    "                v_i0, v_i1, v_i2, v_i3 = T.axis.remap(\"SSSS\", [i0, i1, i2, i3])\n"
    "                T.reads(lv[v_i0, v_i1, v_i2, v_i3])\n"
    "                T.writes(compute[v_i0, v_i1, v_i2, v_i3])\n"
    "                compute[v_i0, v_i1, v_i2, v_i3] = T.max(lv[v_i0, v_i1, v_i2, v_i3], T.float16(0))\n";

START_TEST(prints_the_seed_relu_as_tvm_does) {
  tj_arena_t *a = tj_arena_create();
  tj_func_entry_t e = {"relu", true, seed_relu(a), NULL};
  tj_module_t *m = tj_module_new(a, 1, &e, NULL);
  char *text = tj_print_module(m);
  ck_assert_ptr_nonnull(text);
  ck_assert_str_eq(text, kSeedRelu);
  tj_free(text);
  tj_arena_free(a);
}
END_TEST

/* The T_layer_norm store value of seed.rx: checks precedence and minimal parens. */
START_TEST(prints_layer_norm_arithmetic_with_minimal_parens) {
  tj_arena_t *a = tj_arena_create();
  int64_t d4[4] = {16, 32, 32, 16};
  const tj_buffer_t *conv2 = buffer4(a, "conv2", TJ_F16, d4);
  const tj_tir_expr_t *s3[3] = {I64(16), I64(32), I64(32)}, *s1[1] = {I64(16)};
  const tj_buffer_t *r0 = tj_buffer_new(a, "conv2_red_temp_v0", TJ_F32, 3, s3, NULL);
  const tj_buffer_t *r1 = tj_buffer_new(a, "conv2_red_temp_v1", TJ_F32, 3, s3, NULL);
  const tj_buffer_t *gamma = tj_buffer_new(a, "gamma", TJ_F16, 1, s1, NULL), *beta = tj_buffer_new(a, "beta", TJ_F16, 1, s1, NULL);
  const tj_tir_expr_t *v[4];
  for (int i = 0; i < 4; i++) {
    char n[8];
    snprintf(n, sizeof n, "v_ax%d", i);
    v[i] = tj_tir_var(a, n, TJ_I64);
  }
#define B(k, x, y) tj_tir_binary(a, TJ_TIR_##k, (x), (y))
  const tj_tir_expr_t *c = tj_tir_float(a, TJ_F32, 0.0625);
  const tj_tir_expr_t *mean = B(MUL, load(a, r0, 3, v), c);
  const tj_tir_expr_t *var = B(SUB, B(MUL, load(a, r1, 3, v), c), B(MUL, B(MUL, load(a, r0, 3, v), c), B(MUL, load(a, r0, 3, v), c)));
  const tj_tir_expr_t *arg = B(ADD, var, tj_tir_float(a, TJ_F32, 1e-05));
  const tj_tir_expr_t *rs = tj_tir_call(a, TJ_F32, "tir.rsqrt", 1, &arg);
  const tj_tir_expr_t *norm = B(MUL, B(SUB, tj_tir_cast(a, TJ_F32, load(a, conv2, 4, v)), mean), rs);
  (void)mean;
  const tj_tir_expr_t *val = B(ADD, B(MUL, tj_tir_cast(a, TJ_F16, norm), load(a, gamma, 1, &v[3])), load(a, beta, 1, &v[3]));
#undef B
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_print_tir_expr(&sb, val);
  char *text = tj_strbuf_take(&sb);
  ck_assert_str_eq(text,
                   "T.Cast(\"float16\", (T.Cast(\"float32\", conv2[v_ax0, v_ax1, v_ax2, v_ax3]) - conv2_red_temp_v0[v_ax0, "
                   "v_ax1, v_ax2] * T.float32(0.0625)) * T.rsqrt(conv2_red_temp_v1[v_ax0, v_ax1, v_ax2] * T.float32(0.0625) "
                   "- conv2_red_temp_v0[v_ax0, v_ax1, v_ax2] * T.float32(0.0625) * (conv2_red_temp_v0[v_ax0, v_ax1, v_ax2] * "
                   "T.float32(0.0625)) + T.float32(1.0000000000000001e-05))) * gamma[v_ax3] + beta[v_ax3]");
  tj_free(text);
  tj_arena_free(a);
}
END_TEST

static char *print_expr(const tj_tir_expr_t *e) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_print_tir_expr(&sb, e);
  return tj_strbuf_take(&sb);
}

#define EXPECT_EXPR(e, want)                \
  do {                                      \
    char *s_ = print_expr(e);               \
    ck_assert_str_eq(s_, want);             \
    tj_free(s_);                            \
  } while (0)

START_TEST(prints_literals_and_operators_like_tvm) {
  tj_arena_t *a = tj_arena_create();
  const tj_tir_expr_t *x = tj_tir_var(a, "v_i1", TJ_I64), *y = tj_tir_var(a, "y", TJ_I64);
  /* seed.rx: `T.int64(1) <= v_i1 and v_i1 < T.int64(33)` */
  EXPECT_EXPR(tj_tir_binary(a, TJ_TIR_AND, tj_tir_binary(a, TJ_TIR_LE, I64(1), x), tj_tir_binary(a, TJ_TIR_LT, x, I64(33))),
              "T.int64(1) <= v_i1 and v_i1 < T.int64(33)");
  EXPECT_EXPR(tj_tir_binary(a, TJ_TIR_SUB, x, tj_tir_binary(a, TJ_TIR_SUB, y, I64(2))), "v_i1 - (y - T.int64(2))");
  EXPECT_EXPR(tj_tir_binary(a, TJ_TIR_SUB, tj_tir_binary(a, TJ_TIR_SUB, x, y), I64(2)), "v_i1 - y - T.int64(2)");
  EXPECT_EXPR(tj_tir_binary(a, TJ_TIR_FLOOR_DIV, tj_tir_binary(a, TJ_TIR_ADD, x, y), I64(4)), "(v_i1 + y) // T.int64(4)");
  EXPECT_EXPR(tj_tir_binary(a, TJ_TIR_FLOOR_MOD, x, I64(4)), "v_i1 % T.int64(4)");
  /* Folding operands: TVM spells the node out so that it reads back unchanged. */
  EXPECT_EXPR(tj_tir_binary(a, TJ_TIR_ADD, x, I64(0)), "T.Add(v_i1, T.int64(0))");
  EXPECT_EXPR(tj_tir_binary(a, TJ_TIR_MUL, I64(2), I64(3)), "T.Mul(T.int64(2), T.int64(3))");
  EXPECT_EXPR(tj_tir_binary(a, TJ_TIR_MIN, x, y), "T.min(v_i1, y)");
  EXPECT_EXPR(tj_tir_not(a, tj_tir_binary(a, TJ_TIR_LT, x, y)), "not v_i1 < y");
  EXPECT_EXPR(tj_tir_int(a, TJ_I32, 7), "7");
  EXPECT_EXPR(tj_tir_int(a, TJ_I32, -7), "-7");
  EXPECT_EXPR(tj_tir_bool(a, true), "T.bool(True)");
  EXPECT_EXPR(tj_tir_float(a, TJ_F32, 1e-05), "T.float32(1.0000000000000001e-05)");
  EXPECT_EXPR(tj_tir_float(a, TJ_F16, 0), "T.float16(0)");
  EXPECT_EXPR(tj_tir_float(a, TJ_F32, -3.4028234663852886e+38), "T.float32(-3.4028234663852886e+38)");
  EXPECT_EXPR(tj_tir_cast(a, TJ_F32, x), "T.Cast(\"float32\", v_i1)");
  const tj_tir_expr_t *args[3] = {tj_tir_binary(a, TJ_TIR_LE, I64(1), x), tj_tir_float(a, TJ_F16, 1.5),
                                  tj_tir_float(a, TJ_F16, 0)};
  EXPECT_EXPR(tj_tir_call(a, TJ_F16, "tir.if_then_else", 3, args),
              "T.if_then_else(T.int64(1) <= v_i1, T.float16(1.5), T.float16(0))");
  tj_arena_free(a);
}
END_TEST

/* main of seed.rx with two of its call_tir bindings. */
static const tj_rx_func_t *seed_main(tj_arena_t *a) {
  int64_t act[4] = {16, 32, 32, 16}, w[4] = {16, 3, 3, 16}, g[1] = {16};
  const tj_sinfo_t *ta = tj_sinfo_tensor_static(a, TJ_F16, 4, act), *tw = tj_sinfo_tensor_static(a, TJ_F16, 4, w),
                   *tg = tj_sinfo_tensor_static(a, TJ_F16, 1, g);
  const tj_rx_expr_t **params = TJ_ARENA_ARRAY(a, const tj_rx_expr_t *, 6);
  const char *names[6] = {"data", "weight1", "weight2", "weight3", "gamma", "beta"};
  const tj_sinfo_t *ps[6] = {ta, tw, tw, tw, tg, tg};
  for (int i = 0; i < 6; i++) params[i] = tj_rx_var(a, names[i], ps[i]);
  const tj_rx_expr_t *conv_args[2] = {params[0], params[1]};
  const tj_rx_expr_t *lv = tj_rx_dataflow_var(a, "lv", ta), *conv1 = tj_rx_var(a, "conv1", ta);
  tj_rx_binding_t *bs = TJ_ARENA_ARRAY(a, tj_rx_binding_t, 2);
  bs[0] = (tj_rx_binding_t){lv, tj_rx_make_call_tir(a, tj_rx_global_var(a, "conv2d2"), 2, conv_args, ta, NULL), NULL};
  bs[1] = (tj_rx_binding_t){conv1, tj_rx_make_call_tir(a, tj_rx_global_var(a, "relu"), 1, &lv, ta, NULL), NULL};
  tj_rx_block_t blk = {true, 2, bs};
  tj_rx_func_t *f = TJ_ARENA_NEW(a, tj_rx_func_t);
  f->n_params = 6;
  f->params = params;
  f->ret_sinfo = ta;
  f->body = tj_rx_seq(a, 1, &blk, conv1);
  f->attrs = tj_attrs_set(a, tj_attrs_set(a, NULL, "global_symbol", tj_attr_str("main")), "num_input", tj_attr_int(1));
  f->is_pure = true;
  return f;
}

START_TEST(prints_relax_main_like_the_seed) {
  tj_arena_t *a = tj_arena_create();
  /* conv2d2's body does not matter here: only its name is referenced. */
  tj_func_entry_t e[3] = {{"main", false, NULL, seed_main(a)}, {"relu", true, seed_relu(a), NULL},
                          {"conv2d2", true, seed_relu(a), NULL}};
  tj_module_t *m = tj_module_new(a, 3, e, NULL);
  char *text = tj_print_module(m);
  ck_assert_ptr_nonnull(text);
  const char *want =
      "    @R.function\n"
      "    def main(data: R.Tensor((16, 32, 32, 16), dtype=\"float16\"), weight1: R.Tensor((16, 3, 3, 16), "
      "dtype=\"float16\"), weight2: R.Tensor((16, 3, 3, 16), dtype=\"float16\"), weight3: R.Tensor((16, 3, 3, 16), "
      "dtype=\"float16\"), gamma: R.Tensor((16,), dtype=\"float16\"), beta: R.Tensor((16,), dtype=\"float16\")) -> "
      "R.Tensor((16, 32, 32, 16), dtype=\"float16\"):\n"
      "        R.func_attr({\"num_input\": 1})\n"
      "        cls = Module\n"
      "        with R.dataflow():\n"
      "            lv = R.call_tir(cls.conv2d2, (data, weight1), out_sinfo=R.Tensor((16, 32, 32, 16), dtype=\"float16\"))\n"
      "            conv1 = R.call_tir(cls.relu, (lv,), out_sinfo=R.Tensor((16, 32, 32, 16), dtype=\"float16\"))\n"
      "            R.output(conv1)\n"
      "        return conv1\n";
  ck_assert_msg(strstr(text, want) != NULL, "got:\n%s", text);
  /* PrimFuncs come before Relax functions, main last; three import lines. */
  ck_assert(strstr(text, "# from tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n    @T.prim_func(private=True)\n    def conv2d2(") != NULL);
  ck_assert(strstr(text, "def conv2d2(") < strstr(text, "def relu("));
  ck_assert(strstr(text, "compute[v_i0, v_i1, v_i2, v_i3] = T.max(lv[v_i0, v_i1, v_i2, v_i3], T.float16(0))\n\n    @R.function\n") != NULL);
  tj_free(text);
  tj_arena_free(a);
}
END_TEST

START_TEST(clashing_names_get_suffixes_and_symbolic_dims_print_as_strings) {
  tj_arena_t *a = tj_arena_create();
  const tj_tir_expr_t *n = tj_tir_var(a, "n", TJ_I64);
  const tj_tir_expr_t *dims[2] = {n, tj_tir_binary(a, TJ_TIR_MUL, n, tj_tir_i64(a, 2))};
  const tj_sinfo_t *t = tj_sinfo_tensor(a, TJ_F32, 2, dims);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", t);
  const tj_rx_expr_t *x2 = tj_rx_var(a, "x", t); /* same name hint, different var */
  const tj_rx_expr_t *relu = tj_rx_call(a, tj_rx_op(a, "relax.nn.relu"), 1, &x, NULL, 0, NULL);
  const tj_rx_binding_t b = {x2, relu, NULL};
  tj_rx_block_t blk = {false, 1, &b};
  tj_rx_func_t f = {1, &x, t, tj_rx_seq(a, 1, &blk, x2), NULL, true};
  tj_func_entry_t e = {"f", false, NULL, &f};
  char *text = tj_print_module(tj_module_new(a, 1, &e, NULL));
  const char *want =
      "    @R.function(private=True)\n"
      "    def f(x: R.Tensor((\"n\", \"n * 2\"), dtype=\"float32\")) -> R.Tensor((\"n\", \"n * 2\"), dtype=\"float32\"):\n"
      "        n = T.int64()\n"
      "        x_1: R.Tensor((n, n * 2), dtype=\"float32\") = R.nn.relu(x)\n"
      "        return x_1\n";
  ck_assert_msg(strstr(text, want) != NULL, "got:\n%s", text);
  tj_free(text);
  tj_arena_free(a);
}
END_TEST

START_TEST(symbolic_prim_func_uses_match_buffer) {
  tj_arena_t *a = tj_arena_create();
  const tj_tir_expr_t *m = tj_tir_var(a, "m", TJ_I64), *n = tj_tir_var(a, "n", TJ_I64);
  const tj_tir_expr_t *s1[1] = {tj_tir_binary(a, TJ_TIR_MUL, m, n)}, *s2[1] = {m};
  const tj_buffer_t *A = tj_buffer_new(a, "A", TJ_F32, 1, s1, NULL), *B = tj_buffer_new(a, "B", TJ_F16, 1, s2, NULL);
  const tj_tir_expr_t *params[2] = {tj_tir_var(a, "a", TJ_HANDLE), tj_tir_var(a, "b", TJ_HANDLE)};
  const tj_buffer_t *bm[2] = {A, B};
  const tj_tir_expr_t *i = tj_tir_var(a, "i", TJ_I64);
  const tj_tir_stmt_t *body = tj_tir_for(a, i, I64(0), m, TJ_FOR_PARALLEL,
                                         tj_tir_store(a, B, 1, &i, tj_tir_cast(a, TJ_F16, tj_tir_load(a, A, 1, &i))));
  tj_prim_func_t f = {2, params, bm, tj_attrs_set(a, NULL, "global_symbol", tj_attr_str("k")), body};
  tj_func_entry_t e = {"k", true, &f, NULL};
  char *text = tj_print_module(tj_module_new(a, 1, &e, NULL));
  const char *want =
      "    @T.prim_func\n"
      "    def k(a: T.handle, b: T.handle):\n"
      "        m = T.int64()\n"
      "        n = T.int64()\n"
      "        A = T.match_buffer(a, (m * n,))\n"
      "        B = T.match_buffer(b, (m,), \"float16\")\n"
      "        for i in T.parallel(m):\n"
      "            B[i] = T.Cast(\"float16\", A[i])\n";
  ck_assert_msg(strstr(text, want) != NULL, "got:\n%s", text);
  tj_free(text);
  tj_arena_free(a);
}
END_TEST


/* Tuple params and get-item, scalar constants and if/else, in the forms of the
 * conformance files (fuse_ops__test_packed_params, legalize_ops__*_constant_scalar,
 * tvmscript_parser__test_if_branch). */
START_TEST(prints_tuples_constants_and_if_else) {
  tj_arena_t *a = tj_arena_create();
  int64_t d16[2] = {16, 16}, d1[1] = {1};
  const tj_sinfo_t *t16 = tj_sinfo_tensor_static(a, TJ_F16, 2, d16);
  const tj_sinfo_t *fields[2] = {t16, t16};
  const tj_sinfo_t *tup = tj_sinfo_tuple(a, 2, fields);
  const tj_rx_expr_t *pp = tj_rx_var(a, "packed_params", tup);
  const tj_rx_expr_t *lv = tj_rx_var(a, "lv", t16);
  float one = 1.0f;
  const tj_rx_expr_t *c = tj_rx_constant(a, TJ_F32, 0, NULL, &one, sizeof one);
  const tj_rx_expr_t *args[2] = {lv, c};
  const tj_rx_expr_t *gv = tj_rx_var(a, "gv", t16);
  tj_rx_binding_t bs[2] = {{lv, tj_rx_get_item(a, pp, 0), NULL},
                           {gv, tj_rx_call(a, tj_rx_op(a, "relax.add"), 2, args, NULL, 0, NULL), NULL}};
  tj_rx_block_t blk = {false, 2, bs};
  tj_rx_func_t f = {1, &pp, t16, tj_rx_seq(a, 1, &blk, gv), tj_attrs_set(a, NULL, "global_symbol", tj_attr_str("main")),
                    true};

  const tj_sinfo_t *tb = tj_sinfo_tensor_static(a, TJ_BOOL, 0, NULL), *t1 = tj_sinfo_tensor_static(a, TJ_F32, 1, d1);
  const tj_rx_expr_t *cond = tj_rx_var(a, "cond", tb), *x = tj_rx_var(a, "x", t1);
  const tj_rx_expr_t *xx[2] = {x, x};
  const tj_rx_expr_t *w1 = tj_rx_var(a, "w", t1), *w2 = tj_rx_var(a, "w", t1), *ww1[2] = {w1, w1}, *ww2[2] = {w2, w2};
  tj_rx_binding_t tb1 = {w1, tj_rx_call(a, tj_rx_op(a, "relax.add"), 2, xx, NULL, 0, NULL), NULL};
  tj_rx_binding_t tb2 = {w2, tj_rx_call(a, tj_rx_op(a, "relax.multiply"), 2, xx, NULL, 0, NULL), NULL};
  tj_rx_block_t k1 = {false, 1, &tb1}, k2 = {false, 1, &tb2};
  const tj_rx_expr_t *then_b = tj_rx_seq(a, 1, &k1, tj_rx_call(a, tj_rx_op(a, "relax.multiply"), 2, ww1, NULL, 0, NULL));
  const tj_rx_expr_t *else_b = tj_rx_seq(a, 1, &k2, tj_rx_call(a, tj_rx_op(a, "relax.add"), 2, ww2, NULL, 0, NULL));
  const tj_rx_expr_t *y = tj_rx_var(a, "y", t1);
  tj_rx_binding_t ifb = {y, tj_rx_if(a, cond, then_b, else_b), NULL};
  tj_rx_block_t kif = {false, 1, &ifb};
  const tj_rx_expr_t *fp[2] = {cond, x};
  tj_rx_func_t foo = {2, fp, t1, tj_rx_seq(a, 1, &kif, y), tj_attrs_set(a, NULL, "global_symbol", tj_attr_str("foo")),
                      true};
  tj_func_entry_t e[2] = {{"main", false, NULL, &f}, {"foo", false, NULL, &foo}};
  char *text = tj_print_module(tj_module_new(a, 2, e, NULL));
  const char *want_main =
      "    @R.function\n"
      "    def main(packed_params: R.Tuple(R.Tensor((16, 16), dtype=\"float16\"), R.Tensor((16, 16), "
      "dtype=\"float16\"))) -> R.Tensor((16, 16), dtype=\"float16\"):\n"
      "        lv: R.Tensor((16, 16), dtype=\"float16\") = packed_params[0]\n"
      "        gv: R.Tensor((16, 16), dtype=\"float16\") = R.add(lv, R.const(1, \"float32\"))\n"
      "        return gv\n";
  const char *want_foo =
      "    @R.function\n"
      "    def foo(cond: R.Tensor((), dtype=\"bool\"), x: R.Tensor((1,), dtype=\"float32\")) -> R.Tensor((1,), "
      "dtype=\"float32\"):\n"
      "        if cond:\n"
      "            w: R.Tensor((1,), dtype=\"float32\") = R.add(x, x)\n"
      "            y: R.Tensor((1,), dtype=\"float32\") = R.multiply(w, w)\n"
      "        else:\n"
      "            w: R.Tensor((1,), dtype=\"float32\") = R.multiply(x, x)\n"
      "            y: R.Tensor((1,), dtype=\"float32\") = R.add(w, w)\n"
      "        return y\n";
  ck_assert_msg(strstr(text, want_main) != NULL, "got:\n%s", text);
  ck_assert_msg(strstr(text, want_foo) != NULL, "got:\n%s", text);
  ck_assert(strstr(text, "def foo(") < strstr(text, "def main("));
  /* Nothing from T is used, so TVM prints no tir import line. */
  ck_assert_msg(strncmp(text, "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n", 68) == 0, "%s", text);
  tj_free(text);
  tj_arena_free(a);
}
END_TEST

/* ---- round trips over the seed and the conformance corpus ---------------------------- */

typedef struct rt_stats {
  int attempted, parsed, round_tripped;
  char first_failure[1024];
} rt_stats_t;

static bool parser_missing(tj_status_t *s) {
  return s && tj_status_code(s) == TJ_ERR_UNSUPPORTED && strstr(tj_status_message(s), "not built yet");
}

/* parse -> print -> parse -> equal. Returns false only when the parser is a stub. */
static bool round_trip_file(const char *path, rt_stats_t *st) {
  size_t len;
  char *src = tu_read_file(path, &len);
  if (!src) return true;
  st->attempted++;
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m1 = NULL, *m2 = NULL;
  tj_status_t *s = tj_parse_module(a, path, src, len, &m1);
  free(src);
  if (parser_missing(s)) {
    tj_status_free(s);
    tj_arena_free(a);
    return false;
  }
  if (s) { /* not every corpus file is meant to parse (parse_error cases) */
    tj_status_free(s);
    tj_arena_free(a);
    return true;
  }
  st->parsed++;
  char *text = tj_print_module(m1);
  char why[512] = "";
  if (!text) {
    snprintf(why, sizeof why, "printer returned NULL");
  } else {
    s = tj_parse_module(a, "printed", text, strlen(text), &m2);
    if (s) {
      snprintf(why, sizeof why, "reparse: %s", tj_status_text(s));
      tj_status_free(s);
    } else if (tj_struct_equal_module(m1, m2, why, sizeof why)) {
      st->round_tripped++;
      /* Equal functions must hash alike (dedup and cache keys rely on it). */
      for (int i = 0; i < m1->n_funcs && !why[0]; i++) {
        const tj_func_entry_t *x = &m1->funcs[i], *y = tj_module_find(m2, x->name);
        uint64_t hx = x->is_prim ? tj_struct_hash_prim_func(x->prim) : tj_struct_hash_rx_func(x->relax);
        uint64_t hy = y->is_prim ? tj_struct_hash_prim_func(y->prim) : tj_struct_hash_rx_func(y->relax);
        if (hx != hy) {
          snprintf(why, sizeof why, "'%s' is equal but hashes differ", x->name);
          st->round_tripped--;
        }
      }
    }
  }
  if (why[0] && !st->first_failure[0]) snprintf(st->first_failure, sizeof st->first_failure, "%s: %s", path, why);
  if (why[0] && getenv("TVMJIT_PRINT_RT_VERBOSE")) fprintf(stderr, "round trip: %s: %s\n", path, why);
  tj_free(text);
  tj_arena_free(a);
  return true;
}

START_TEST(seed_round_trips) {
  rt_stats_t st = {0};
  if (!round_trip_file(tu_project_path(TU_SEED_MODEL), &st)) {
    fprintf(stderr, "seed_round_trips: parser not built yet, skipped\n");
    return;
  }
  ck_assert_msg(st.parsed == 1, "the seed does not parse");
  ck_assert_msg(st.round_tripped == 1, "%s", st.first_failure);
}
END_TEST

/* examples/seed/model.rx is TVM's printout of the seed (mod.script()) under one comment
 * line; it differs from TVM's text only by the one space TVM's text lacks in
 * `T.int64(32),T.int64(32)`. Printing its parse must give the module text back verbatim. */
START_TEST(seed_prints_back_verbatim) {
  const char *path = tu_project_path(TU_SEED_MODEL);
  size_t len;
  char *src = tu_read_file(path, &len);
  ck_assert_ptr_nonnull(src);
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  tj_status_t *s = tj_parse_module(a, path, src, len, &m);
  if (parser_missing(s)) {
    fprintf(stderr, "seed_prints_back_verbatim: parser not built yet, skipped\n");
    tj_status_free(s);
    free(src);
    tj_arena_free(a);
    return;
  }
  TU_OK(s);
  char *text = tj_print_module(m);
  ck_assert_ptr_nonnull(text);
  /* The expected text starts after the project's comment line. */
  ck_assert(strncmp(src, "# The network", 13) == 0);
  ck_assert_str_eq(text, strchr(src, '\n') + 1);
  tj_free(text);
  free(src);
  tj_arena_free(a);
}
END_TEST

START_TEST(printing_survives_out_of_memory) {
  tj_arena_t *a = tj_arena_create();
  tj_func_entry_t e[2] = {{"main", false, NULL, seed_main(a)}, {"relu", true, seed_relu(a), NULL}};
  tj_module_t *m = tj_module_new(a, 2, e, NULL);
  for (long n = 0; n < 200; n++) {
    tj_alloc_fail_after(n);
    char *text = tj_print_module(m);
    tj_alloc_fail_reset();
    tj_free(text); /* NULL or a complete text; never a crash or a leak */
  }
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("print");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, prints_the_seed_relu_as_tvm_does);
  tcase_add_test(tc, prints_layer_norm_arithmetic_with_minimal_parens);
  tcase_add_test(tc, prints_literals_and_operators_like_tvm);
  tcase_add_test(tc, prints_relax_main_like_the_seed);
  tcase_add_test(tc, clashing_names_get_suffixes_and_symbolic_dims_print_as_strings);
  tcase_add_test(tc, symbolic_prim_func_uses_match_buffer);
  tcase_add_test(tc, prints_tuples_constants_and_if_else);
  tcase_add_test(tc, seed_round_trips);
  tcase_add_test(tc, seed_prints_back_verbatim);
  tcase_add_test(tc, printing_survives_out_of_memory);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
