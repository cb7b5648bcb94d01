/* LegalizeOps: PrimFunc structure of each legalizer (hand-built calls), structural
 * equality with the seed's PrimFuncs and with TVMScript written out here, and the
 * TVM conformance corpus, which `tvmjit conformance` runs (tests/cli/conformance.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/op.h"
#include "ir/text/parse.h"
#include "ir/struct_equal.h"
#include "ir/verify/verify.h"
#include "project.h"
#include "testutil.h"
#include "transforms/legalize/legalize.h"
#include "transforms/transforms.h"

/* ---------------- helpers: a one-binding main built by hand ---------------- */

static const tj_rx_expr_t *tensor_param(tj_arena_t *a, const char *name, tj_dtype_t dt, int nd, const int64_t *dims) {
  return tj_rx_var(a, name, tj_sinfo_tensor_static(a, dt, nd, dims));
}

/* main(params...) { gv = op(args, attrs); return gv } with attrs normalised and
 * struct info inferred by the operator registry. */
static const tj_module_t *one_call_module(tj_arena_t *a, const char *op_name, int n, const tj_rx_expr_t *const *params,
                                          const tj_attrs_t *given) {
  const tj_op_def_t *op = tj_op_lookup(op_name);
  ck_assert_msg(op != NULL, "op %s is not registered", op_name);
  const tj_attrs_t *attrs = given;
  if (op->normalize_attrs) TU_OK(op->normalize_attrs(a, given, &attrs));
  const tj_rx_expr_t *call = tj_rx_call(a, tj_rx_op(a, op_name), n, params, attrs, 0, NULL);
  tj_infer_ctx_t ictx = {a, NULL, NULL};
  const tj_sinfo_t *s = NULL;
  TU_OK(op->infer(&ictx, call, &s));
  call = tj_rx_with_sinfo(a, call, s);
  const tj_rx_expr_t *gv = tj_rx_var(a, "gv", s);
  tj_rx_binding_t *b = TJ_ARENA_NEW(a, tj_rx_binding_t);
  b->var = gv;
  b->value = call;
  tj_rx_block_t blk = {false, 1, b};
  tj_rx_func_t *f = TJ_ARENA_NEW(a, tj_rx_func_t);
  f->n_params = n;
  f->params = tj_arena_memdup(a, params, sizeof(*params) * (size_t)n);
  f->body = tj_rx_seq(a, 1, &blk, gv);
  f->attrs = tj_attrs_set(a, NULL, "global_symbol", tj_attr_str("main"));
  f->is_pure = true;
  tj_func_entry_t e = {.name = "main", .is_prim = false, .relax = f};
  return tj_module_new(a, 1, &e, NULL);
}

static const tj_module_t *legalize(tj_arena_t *a, const tj_module_t *m) {
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, a);
  const tj_module_t *out = NULL;
  TU_OK(tj_legalize_ops(&ctx, m, &out));
  TU_OK(tj_verify_module(out)); /* call_tir args and out_sinfo agree with the PrimFuncs */
  return out;
}

/* The value bound in main's only binding. */
static const tj_rx_expr_t *main_value(const tj_module_t *m) {
  const tj_rx_func_t *f = tj_module_find_relax(m, "main");
  ck_assert_ptr_nonnull(f);
  return f->body->seq.blocks[0].bindings[0].value;
}

/* Blocks of a legalized PrimFunc in order (the loop nests under the root block). */
static int blocks_of(const tj_prim_func_t *f, const tj_block_t **out, int max) {
  const tj_block_t *root = tj_prim_func_root_block(f);
  ck_assert_ptr_nonnull(root);
  const tj_tir_stmt_t *body = root->body;
  int n = body->kind == TJ_TIR_SEQ ? body->seq.n : 1;
  for (int i = 0; i < n && i < max; i++) {
    const tj_tir_stmt_t *s = body->kind == TJ_TIR_SEQ ? body->seq.stmts[i] : body;
    while (s->kind == TJ_TIR_FOR) s = s->loop.body;
    ck_assert_int_eq(s->kind, TJ_TIR_BLOCK_REALIZE);
    out[i] = s->realize.block;
  }
  return n;
}

static void assert_kinds(const tj_block_t *b, const char *kinds) {
  ck_assert_int_eq(b->n_iter_vars, (int)strlen(kinds));
  for (int i = 0; kinds[i]; i++)
    ck_assert_int_eq(b->iter_vars[i].kind, kinds[i] == 'S' ? TJ_ITER_SPATIAL : TJ_ITER_REDUCE);
}

static const tj_attrs_t *ints_attr(tj_arena_t *a, const tj_attrs_t *attrs, const char *key, int n, const int64_t *v) {
  tj_attr_value_t *items = TJ_ARENA_ARRAY(a, tj_attr_value_t, n);
  for (int i = 0; i < n; i++) items[i] = tj_attr_int(v[i]);
  tj_attr_value_t list = {.kind = TJ_ATTR_LIST};
  list.list.n = n;
  list.list.items = items;
  return tj_attrs_set(a, attrs, key, list);
}

/* ---------------- structure tests (no parser needed) ---------------- */

START_TEST(relu_becomes_call_tir_to_compute_block) {
  tj_arena_t *a = tj_arena_create();
  int64_t d[2] = {2, 3};
  const tj_rx_expr_t *x = tensor_param(a, "x", TJ_F32, 2, d);
  const tj_module_t *m = legalize(a, one_call_module(a, "relax.nn.relu", 1, &x, NULL));
  tj_call_tir_view_t v;
  ck_assert(tj_rx_as_call_tir(main_value(m), &v));
  ck_assert_str_eq(v.callee->var.name, "relu");
  ck_assert_int_eq(v.n_args, 1);
  ck_assert_ptr_eq(v.args[0], x);
  const tj_prim_func_t *f = tj_module_find_prim(m, "relu");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(f->n_params, 2);
  ck_assert_str_eq(f->buffer_map[0]->name, "x");
  ck_assert_str_eq(f->buffer_map[1]->name, "compute");
  ck_assert(tj_attrs_get(f->attrs, "tir.noalias") != NULL);
  ck_assert(tj_attrs_get(f->attrs, "global_symbol") == NULL);
  const tj_block_t *b[4];
  ck_assert_int_eq(blocks_of(f, b, 4), 1);
  ck_assert_str_eq(b[0]->name, "compute");
  assert_kinds(b[0], "SS");
  ck_assert_int_eq(b[0]->body->store.value->kind, TJ_TIR_MAX);
  ck_assert_int_eq(b[0]->n_reads, 1);
  ck_assert_ptr_eq(b[0]->reads[0].buffer, f->buffer_map[0]);
  tj_arena_free(a);
}
END_TEST

START_TEST(conv2d_nhwc_has_pad_then_conv_blocks) {
  tj_arena_t *a = tj_arena_create();
  int64_t dd[4] = {16, 32, 32, 16}, wd[4] = {16, 3, 3, 16};
  const tj_rx_expr_t *p[2] = {tensor_param(a, "data", TJ_F16, 4, dd), tensor_param(a, "weight1", TJ_F16, 4, wd)};
  int64_t pad[4] = {1, 1, 1, 1};
  const tj_attrs_t *at = ints_attr(a, NULL, "padding", 4, pad);
  at = tj_attrs_set(a, at, "data_layout", tj_attr_str("NHWC"));
  at = tj_attrs_set(a, at, "kernel_layout", tj_attr_str("OHWI"));
  const tj_module_t *m = legalize(a, one_call_module(a, "relax.nn.conv2d", 2, p, at));
  const tj_prim_func_t *f = tj_module_find_prim(m, "conv2d");
  ck_assert_ptr_nonnull(f);
  const tj_block_t *b[4];
  ck_assert_int_eq(blocks_of(f, b, 4), 2);
  ck_assert_str_eq(b[0]->name, "pad_temp");
  ck_assert_str_eq(b[1]->name, "conv2d_nhwc");
  assert_kinds(b[1], "SSSSRRR");
  /* NHWC reductions are ry, rx, rc: rc (extent 16) comes last */
  int64_t e;
  ck_assert(tj_tir_is_const_int(b[1]->iter_vars[6].dom.extent, &e) && e == 16);
  ck_assert(tj_tir_is_const_int(b[1]->iter_vars[4].dom.extent, &e) && e == 3);
  const tj_block_t *root = tj_prim_func_root_block(f);
  ck_assert_int_eq(root->n_alloc_buffers, 1);
  ck_assert(tj_tir_is_const_int(root->alloc_buffers[0]->shape[1], &e) && e == 34);
  ck_assert_str_eq(b[0]->body->store.value->call.op, "tir.if_then_else");
  ck_assert_ptr_nonnull(b[1]->init);
  ck_assert_int_eq(b[1]->n_reads, 2); /* pad_temp and weight, not the accumulator */
  ck_assert_ptr_eq(b[1]->reads[0].buffer, root->alloc_buffers[0]);
  tj_arena_free(a);
}
END_TEST

START_TEST(conv2d_without_padding_still_has_pad_temp_copy) {
  tj_arena_t *a = tj_arena_create();
  int64_t dd[4] = {2, 3, 28, 28}, wd[4] = {4, 3, 3, 3};
  const tj_rx_expr_t *p[2] = {tensor_param(a, "x", TJ_F32, 4, dd), tensor_param(a, "w", TJ_F32, 4, wd)};
  const tj_attrs_t *at = tj_attrs_set(a, NULL, "out_dtype", tj_attr_str("float16"));
  const tj_module_t *m = legalize(a, one_call_module(a, "relax.nn.conv2d", 2, p, at));
  const tj_prim_func_t *f = tj_module_find_prim(m, "conv2d");
  const tj_block_t *b[4];
  ck_assert_int_eq(blocks_of(f, b, 4), 2);
  ck_assert_str_eq(b[0]->name, "pad_temp");
  ck_assert_int_eq(b[0]->body->store.value->kind, TJ_TIR_BUFFER_LOAD); /* a plain copy */
  ck_assert_str_eq(b[1]->name, "conv2d_nchw");
  /* out_dtype float16: both operands are cast, the accumulator is float16 */
  const tj_tir_expr_t *upd = b[1]->body->store.value;
  ck_assert_int_eq(upd->kind, TJ_TIR_ADD);
  ck_assert_int_eq(upd->binary.b->binary.a->kind, TJ_TIR_CAST);
  ck_assert(tj_dtype_eq(f->buffer_map[2]->dtype, TJ_F16));
  tj_arena_free(a);
}
END_TEST

START_TEST(layer_norm_f16_accumulates_in_f32) {
  tj_arena_t *a = tj_arena_create();
  int64_t xd[4] = {16, 32, 32, 16}, gd[1] = {16};
  const tj_rx_expr_t *p[3] = {tensor_param(a, "conv2", TJ_F16, 4, xd), tensor_param(a, "gamma", TJ_F16, 1, gd),
                              tensor_param(a, "beta", TJ_F16, 1, gd)};
  int64_t axes[1] = {-1};
  const tj_module_t *m = legalize(a, one_call_module(a, "relax.nn.layer_norm", 3, p, ints_attr(a, NULL, "axes", 1, axes)));
  const tj_prim_func_t *f = tj_module_find_prim(m, "layer_norm");
  ck_assert_ptr_nonnull(f);
  const tj_block_t *b[4];
  ck_assert_int_eq(blocks_of(f, b, 4), 2);
  ck_assert_str_eq(b[0]->name, "conv2_red_temp");
  assert_kinds(b[0], "SSSR");
  ck_assert_str_eq(b[1]->name, "T_layer_norm");
  const tj_block_t *root = tj_prim_func_root_block(f);
  ck_assert_int_eq(root->n_alloc_buffers, 2);
  ck_assert_str_eq(root->alloc_buffers[0]->name, "conv2_red_temp_v0");
  ck_assert(tj_dtype_eq(root->alloc_buffers[1]->dtype, TJ_F32));
  ck_assert_int_eq(b[0]->body->kind, TJ_TIR_LET_STMT);
  ck_assert_int_eq(b[0]->n_writes, 2);
  ck_assert_int_eq(b[1]->n_reads, 5);
  tj_arena_free(a);
}
END_TEST

START_TEST(identical_calls_share_one_prim_func) {
  tj_arena_t *a = tj_arena_create();
  int64_t d[2] = {4, 4};
  const tj_rx_expr_t *x = tensor_param(a, "x", TJ_F32, 2, d);
  const tj_module_t *m = one_call_module(a, "relax.nn.relu", 1, &x, NULL);
  /* second binding: relu of gv (same shape) */
  const tj_rx_func_t *f0 = tj_module_find_relax(m, "main");
  const tj_rx_binding_t *b0 = &f0->body->seq.blocks[0].bindings[0];
  const tj_rx_expr_t *arg = b0->var;
  const tj_rx_expr_t *c2 = tj_rx_with_sinfo(a, tj_rx_call(a, tj_rx_op(a, "relax.nn.relu"), 1, &arg, NULL, 0, NULL), b0->var->sinfo);
  const tj_rx_expr_t *gv2 = tj_rx_var(a, "gv2", b0->var->sinfo);
  tj_rx_binding_t *bs = TJ_ARENA_ARRAY(a, tj_rx_binding_t, 2);
  bs[0] = *b0;
  bs[1].var = gv2;
  bs[1].value = c2;
  tj_rx_block_t blk = {false, 2, bs};
  tj_rx_func_t *f = TJ_ARENA_NEW(a, tj_rx_func_t);
  *f = *f0;
  f->body = tj_rx_seq(a, 1, &blk, gv2);
  tj_func_entry_t e = {.name = "main", .is_prim = false, .relax = f};
  const tj_module_t *out = legalize(a, tj_module_new(a, 1, &e, NULL));
  int n_prim = 0;
  for (int i = 0; i < out->n_funcs; i++) n_prim += out->funcs[i].is_prim;
  ck_assert_int_eq(n_prim, 1);
  ck_assert_ptr_nonnull(tj_module_find_prim(out, "relu"));
  tj_arena_free(a);
}
END_TEST

START_TEST(distinct_prim_funcs_get_counter_names) {
  tj_arena_t *a = tj_arena_create();
  int64_t d1[2] = {4, 4}, d2[2] = {2, 8};
  const tj_rx_expr_t *x = tensor_param(a, "x", TJ_F32, 2, d1);
  const tj_module_t *m = one_call_module(a, "relax.nn.relu", 1, &x, NULL);
  const tj_module_t *out = legalize(a, m);
  const tj_rx_expr_t *y = tensor_param(a, "y", TJ_F32, 2, d2);
  const tj_module_t *m2 = one_call_module(a, "relax.nn.relu", 1, &y, NULL);
  /* put the first result's relu into the second module: the new one must be relu1 */
  tj_func_entry_t relu = *tj_module_find(out, "relu");
  m2 = tj_module_with_func(a, m2, relu);
  const tj_module_t *out2 = legalize(a, m2);
  ck_assert_ptr_nonnull(tj_module_find_prim(out2, "relu1"));
  tj_arena_free(a);
}
END_TEST

START_TEST(unknown_op_and_unknown_shape_are_kept) {
  tj_arena_t *a = tj_arena_create();
  /* x with unknown shape: the relu call stays a relu call */
  const tj_rx_expr_t *x = tj_rx_var(a, "x", tj_sinfo_tensor(a, TJ_F32, 2, NULL));
  const tj_module_t *m = one_call_module(a, "relax.nn.relu", 1, &x, NULL);
  const tj_module_t *out = legalize(a, m);
  ck_assert(tj_rx_is_op_call(main_value(out), "relax.nn.relu"));
  ck_assert_int_eq(out->n_funcs, 1);
  tj_arena_free(a);
}
END_TEST

START_TEST(matmul_of_unknown_dtype_is_an_error) {
  tj_arena_t *a = tj_arena_create();
  int64_t d1[2] = {16, 32}, d2[2] = {32, 8};
  const tj_rx_expr_t *p[2] = {tensor_param(a, "A", TJ_VOID, 2, d1), tensor_param(a, "B", TJ_VOID, 2, d2)};
  const tj_module_t *m = one_call_module(a, "relax.matmul", 2, p, NULL);
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, a);
  const tj_module_t *out = NULL;
  tj_status_t *s = tj_legalize_ops(&ctx, m, &out);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_null(out);
  ck_assert(strncmp(tj_status_message(s), "To legalize R.matmul", 20) == 0);
  tj_status_free(s);
  tj_arena_free(a);
}
END_TEST

/* ---------------- numerics: the interpreter against direct C references ---------------- */

#include <math.h>

#include "ir/interp.h"

static float rnd(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return (float)((*state >> 8) & 0xffff) / 65536.0f * 2.0f - 1.0f;
}

/* The single PrimFunc of a one-call module, run through the interpreter. */
static void interp_only_prim(const tj_module_t *m, int n, void *const *bufs) {
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i].is_prim) TU_OK(tj_interp_run_named(m->funcs[i].name, m->funcs[i].prim, n, bufs, NULL));
}

START_TEST(grouped_conv2d_computes_the_convolution) {
  tj_arena_t *a = tj_arena_create();
  enum { N = 1, C = 4, H = 10, W = 9, O = 6, G = 2, K = 3, OH = 5, OW = 3 };
  int64_t dd[4] = {N, C, H, W}, wd[4] = {O, C / G, K, K};
  const tj_rx_expr_t *p[2] = {tensor_param(a, "x", TJ_F32, 4, dd), tensor_param(a, "w", TJ_F32, 4, wd)};
  int64_t st[2] = {2, 2}, dil[2] = {2, 2}, pad[4] = {1, 0, 2, 1};
  const tj_attrs_t *at = ints_attr(a, NULL, "strides", 2, st);
  at = ints_attr(a, at, "dilation", 2, dil);
  at = ints_attr(a, at, "padding", 4, pad);
  at = tj_attrs_set(a, at, "groups", tj_attr_int(G));
  const tj_module_t *m = legalize(a, one_call_module(a, "relax.nn.conv2d", 2, p, at));
  static float x[N * C * H * W], w[O * (C / G) * K * K], y[N * O * OH * OW];
  unsigned seed = 7;
  for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = rnd(&seed);
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = rnd(&seed);
  void *bufs[3] = {x, w, y};
  interp_only_prim(m, 3, bufs);
  for (int f = 0; f < O; f++)
    for (int oh = 0; oh < OH; oh++)
      for (int ow = 0; ow < OW; ow++) {
        double ref = 0;
        for (int c = 0; c < C / G; c++)
          for (int ky = 0; ky < K; ky++)
            for (int kx = 0; kx < K; kx++) {
              int ih = oh * 2 + ky * 2 - 1, iw = ow * 2 + kx * 2 - 0; /* pad top 1, left 0 */
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              int ic = f / (O / G) * (C / G) + c;
              ref += (double)x[(ic * H + ih) * W + iw] * w[((f * (C / G) + c) * K + ky) * K + kx];
            }
        ck_assert_double_eq_tol(y[(f * OH + oh) * OW + ow], ref, 1e-5);
      }
  tj_arena_free(a);
}
END_TEST

START_TEST(layer_norm_and_softmax_compute_their_definitions) {
  tj_arena_t *a = tj_arena_create();
  enum { R = 3, Cn = 8 };
  int64_t xd[2] = {R, Cn}, gd[1] = {Cn};
  const tj_rx_expr_t *p[3] = {tensor_param(a, "x", TJ_F32, 2, xd), tensor_param(a, "gamma", TJ_F32, 1, gd),
                              tensor_param(a, "beta", TJ_F32, 1, gd)};
  int64_t axes[1] = {1};
  const tj_module_t *ln = legalize(a, one_call_module(a, "relax.nn.layer_norm", 3, p, ints_attr(a, NULL, "axes", 1, axes)));
  const tj_module_t *sm = legalize(a, one_call_module(a, "relax.nn.softmax", 1, p, NULL));
  float x[R * Cn], g[Cn], b[Cn], y[R * Cn], z[R * Cn];
  unsigned seed = 11;
  for (int i = 0; i < R * Cn; i++) x[i] = 3.0f * rnd(&seed);
  for (int i = 0; i < Cn; i++) g[i] = rnd(&seed), b[i] = rnd(&seed);
  void *lb[4] = {x, g, b, y}, *sb[2] = {x, z};
  interp_only_prim(ln, 4, lb);
  interp_only_prim(sm, 2, sb);
  for (int r = 0; r < R; r++) {
    double mean = 0, var = 0, mx = -INFINITY, sum = 0;
    for (int c = 0; c < Cn; c++) mean += x[r * Cn + c] / (double)Cn, mx = fmax(mx, x[r * Cn + c]);
    for (int c = 0; c < Cn; c++) var += (x[r * Cn + c] - mean) * (x[r * Cn + c] - mean) / Cn;
    for (int c = 0; c < Cn; c++) sum += exp(x[r * Cn + c] - mx);
    for (int c = 0; c < Cn; c++) {
      ck_assert_double_eq_tol(y[r * Cn + c], (x[r * Cn + c] - mean) / sqrt(var + 1e-5) * g[c] + b[c], 1e-4);
      ck_assert_double_eq_tol(z[r * Cn + c], exp(x[r * Cn + c] - mx) / sum, 1e-6);
    }
  }
  tj_arena_free(a);
}
END_TEST

/* ---------------- TVMScript comparisons (need the parser) ---------------- */

static tj_module_t *parse_or_skip(tj_arena_t *a, const char *name, const char *text) {
  tj_module_t *m = NULL;
  tj_status_t *s = tj_parse_module(a, name, text, strlen(text), &m);
  if (s && tj_status_code(s) == TJ_ERR_UNSUPPORTED) {
    fprintf(stderr, "skip: parser not available (%s)\n", tj_status_message(s));
    tj_status_free(s);
    return NULL;
  }
  TU_OK(s);
  return m;
}

/* Legalizes `before` and checks that PrimFunc `name` equals `expected_name` of `expected`. */
static void check_prim_equal(const char *before, const char *expected, const char *name, const char *expected_name) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *mb = parse_or_skip(a, "before", before);
  tj_module_t *me = mb ? parse_or_skip(a, "expected", expected) : NULL;
  if (me) {
    const tj_module_t *out = legalize(a, mb);
    const tj_prim_func_t *got = tj_module_find_prim(out, name);
    const tj_prim_func_t *want = tj_module_find_prim(me, expected_name);
    ck_assert_msg(got != NULL, "no PrimFunc %s after LegalizeOps", name);
    ck_assert_ptr_nonnull(want);
    char why[512] = "";
    ck_assert_msg(tj_struct_equal_prim_func(got, want, why, sizeof why), "%s differs: %s", name, why);
  }
  tj_arena_free(a);
}

#define HDR "# from tvm.script import ir as I\n# from tvm.script import tir as T\n# from tvm.script import relax as R\n\n"

/* The seed's conv2d2 (models/seed.rx), written out. */
/* topi.repeat's output dim is `2 * a` as TE builds it: the output buffer and call_tir's
 * out_sinfo keep that form while the loop runs over Relax's simplified `a * 2`. */
START_TEST(symbolic_repeat_keeps_te_shape_form) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_or_skip(a, "repeat.rx",
                                 "@R.function\n"
                                 "def main(x: R.Tensor((\"a\", 3), \"float32\")):\n"
                                 "    gv = R.repeat(x, 2, 0)\n"
                                 "    return gv\n");
  if (!m) {
    tj_arena_free(a);
    return;
  }
  const tj_module_t *out = legalize(a, m);
  const tj_tir_expr_t *od = main_value(out)->sinfo->tensor.shape[0];
  ck_assert_int_eq(od->kind, TJ_TIR_MUL);
  ck_assert_int_eq(od->binary.a->kind, TJ_TIR_INT_IMM); /* 2 * a */
  const tj_prim_func_t *f = tj_module_find_prim(out, "repeat");
  ck_assert_ptr_nonnull(f);
  const tj_tir_expr_t *bd = f->buffer_map[1]->shape[0];
  ck_assert_int_eq(bd->binary.a->kind, TJ_TIR_INT_IMM);
  const tj_rx_func_t *mf = tj_module_find_relax(out, "main");
  ck_assert_int_eq(mf->ret_sinfo->tensor.shape[0]->binary.a->kind, TJ_TIR_INT_IMM); /* follows the body */
  tj_arena_free(a);
}
END_TEST

/* call_te inlines an R.prim_value index (`n - 1`, n bound by x's shape): no scalar
 * parameter, the call_tir takes x only. */
START_TEST(take_inlines_a_symbolic_prim_value_index) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_or_skip(a, "take.rx",
                                 "@R.function\n"
                                 "def main(x: R.Tensor((2, \"n\", 4), \"float32\")):\n"
                                 "    n = T.int64()\n"
                                 "    gv = R.take(x, R.prim_value(n - 1), axis=1)\n"
                                 "    return gv\n");
  if (!m) {
    tj_arena_free(a);
    return;
  }
  const tj_module_t *out = legalize(a, m);
  const tj_rx_expr_t *call = main_value(out);
  ck_assert_int_eq(call->call.args[1]->kind, TJ_RX_TUPLE);
  ck_assert_int_eq(call->call.args[1]->tuple.n, 1);
  const tj_prim_func_t *f = tj_module_find_prim(out, "take");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(f->n_params, 2);
  tj_arena_free(a);
}
END_TEST

static const char *k_seed_conv_expected =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def conv2d2(data: T.Buffer((T.int64(16), T.int64(32), T.int64(32), T.int64(16)), \"float16\"), weight1: T.Buffer((T.int64(16), T.int64(3), T.int64(3), T.int64(16)), \"float16\"), conv2d_nhwc: T.Buffer((T.int64(16), T.int64(32), T.int64(32), T.int64(16)), \"float16\")):\n"
    "        T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "        pad_temp = T.alloc_buffer((T.int64(16), T.int64(34), T.int64(34), T.int64(16)), \"float16\")\n"
    "        for i0, i1, i2, i3 in T.grid(T.int64(16), T.int64(34), T.int64(34), T.int64(16)):\n"
    "            with T.block(\"pad_temp\"):\n"
    "                v_i0, v_i1, v_i2, v_i3 = T.axis.remap(\"SSSS\", [i0, i1, i2, i3])\n"
    "                T.reads(data[v_i0, v_i1 - T.int64(1), v_i2 - T.int64(1), v_i3])\n"
    "                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])\n"
    "                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(T.int64(1) <= v_i1 and v_i1 < T.int64(33) and T.int64(1) <= v_i2 and v_i2 < T.int64(33), data[v_i0, v_i1 - T.int64(1), v_i2 - T.int64(1), v_i3], T.float16(0))\n"
    "        for nn, yy, xx, ff, ry, rx, rc in T.grid(T.int64(16), T.int64(32), T.int64(32), T.int64(16), T.int64(3), T.int64(3), T.int64(16)):\n"
    "            with T.block(\"conv2d_nhwc\"):\n"
    "                v_nn, v_yy, v_xx, v_ff, v_ry, v_rx, v_rc = T.axis.remap(\"SSSSRRR\", [nn, yy, xx, ff, ry, rx, rc])\n"
    "                T.reads(pad_temp[v_nn, v_yy + v_ry, v_xx + v_rx, v_rc], weight1[v_ff, v_ry, v_rx, v_rc])\n"
    "                T.writes(conv2d_nhwc[v_nn, v_yy, v_xx, v_ff])\n"
    "                with T.init():\n"
    "                    conv2d_nhwc[v_nn, v_yy, v_xx, v_ff] = T.float16(0)\n"
    "                conv2d_nhwc[v_nn, v_yy, v_xx, v_ff] = conv2d_nhwc[v_nn, v_yy, v_xx, v_ff] + pad_temp[v_nn, v_yy + v_ry, v_xx + v_rx, v_rc] * weight1[v_ff, v_ry, v_rx, v_rc]\n";

static const char *k_seed_conv_before =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(data: R.Tensor((16, 32, 32, 16), dtype=\"float16\"), weight1: R.Tensor((16, 3, 3, 16), dtype=\"float16\")):\n"
    "        lv = R.nn.conv2d(data, weight1, padding=[1, 1, 1, 1], data_layout=\"NHWC\", kernel_layout=\"OHWI\")\n"
    "        return lv\n";

START_TEST(conv2d_nhwc_ohwi_equals_seed_conv2d2) {
  check_prim_equal(k_seed_conv_before, k_seed_conv_expected, "conv2d", "conv2d2");
}
END_TEST

static const char *k_seed_ln_before =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(conv2: R.Tensor((16, 32, 32, 16), dtype=\"float16\"), gamma: R.Tensor((16,), dtype=\"float16\"), beta: R.Tensor((16,), dtype=\"float16\")):\n"
    "        ln = R.nn.layer_norm(conv2, gamma, beta, axes=[-1], epsilon=1e-05)\n"
    "        return ln\n";

/* The seed's layer_norm (models/seed.rx), written out. */
static const char *k_seed_ln_expected =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def layer_norm(conv2: T.Buffer((T.int64(16), T.int64(32), T.int64(32), T.int64(16)), \"float16\"), gamma: T.Buffer((T.int64(16),), \"float16\"), beta: T.Buffer((T.int64(16),), \"float16\"), T_layer_norm: T.Buffer((T.int64(16), T.int64(32),T.int64(32), T.int64(16)), \"float16\")):\n"
    "        T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "        conv2_red_temp_v0 = T.alloc_buffer((T.int64(16), T.int64(32), T.int64(32)))\n"
    "        conv2_red_temp_v1 = T.alloc_buffer((T.int64(16), T.int64(32), T.int64(32)))\n"
    "        for ax0, ax1, ax2, k3 in T.grid(T.int64(16), T.int64(32), T.int64(32), T.int64(16)):\n"
    "            with T.block(\"conv2_red_temp\"):\n"
    "                v_ax0, v_ax1, v_ax2, v_k3 = T.axis.remap(\"SSSR\", [ax0, ax1, ax2, k3])\n"
    "                T.reads(conv2[v_ax0, v_ax1, v_ax2, v_k3])\n"
    "                T.writes(conv2_red_temp_v0[v_ax0, v_ax1, v_ax2], conv2_red_temp_v1[v_ax0, v_ax1, v_ax2])\n"
    "                with T.init():\n"
    "                    conv2_red_temp_v0[v_ax0, v_ax1, v_ax2] = T.float32(0)\n"
    "                    conv2_red_temp_v1[v_ax0, v_ax1, v_ax2] = T.float32(0)\n"
    "                v_conv2_red_temp_v0: T.float32 = conv2_red_temp_v0[v_ax0, v_ax1, v_ax2] + T.Cast(\"float32\", conv2[v_ax0, v_ax1, v_ax2, v_k3])\n"
    "                v_conv2_red_temp_v1: T.float32 = conv2_red_temp_v1[v_ax0, v_ax1, v_ax2] + T.Cast(\"float32\", conv2[v_ax0, v_ax1, v_ax2, v_k3]) * T.Cast(\"float32\", conv2[v_ax0, v_ax1, v_ax2, v_k3])\n"
    "                conv2_red_temp_v0[v_ax0, v_ax1, v_ax2] = v_conv2_red_temp_v0\n"
    "                conv2_red_temp_v1[v_ax0, v_ax1, v_ax2] = v_conv2_red_temp_v1\n"
    "        for ax0, ax1, ax2, ax3 in T.grid(T.int64(16), T.int64(32), T.int64(32), T.int64(16)):\n"
    "            with T.block(\"T_layer_norm\"):\n"
    "                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap(\"SSSS\", [ax0, ax1, ax2, ax3])\n"
    "                T.reads(conv2[v_ax0, v_ax1, v_ax2, v_ax3], conv2_red_temp_v0[v_ax0, v_ax1, v_ax2], conv2_red_temp_v1[v_ax0, v_ax1, v_ax2], gamma[v_ax3], beta[v_ax3])\n"
    "                T.writes(T_layer_norm[v_ax0, v_ax1, v_ax2, v_ax3])\n"
    "                T_layer_norm[v_ax0, v_ax1, v_ax2, v_ax3] = T.Cast(\"float16\", (T.Cast(\"float32\", conv2[v_ax0, v_ax1, v_ax2, v_ax3]) - conv2_red_temp_v0[v_ax0, v_ax1, v_ax2] * T.float32(0.0625)) * T.rsqrt(conv2_red_temp_v1[v_ax0, v_ax1, v_ax2] * T.float32(0.0625) - conv2_red_temp_v0[v_ax0, v_ax1, v_ax2] * T.float32(0.0625) * (conv2_red_temp_v0[v_ax0, v_ax1, v_ax2] * T.float32(0.0625)) + T.float32(1.0000000000000001e-05))) * gamma[v_ax3] + beta[v_ax3]\n";

START_TEST(layer_norm_f16_equals_seed_layer_norm) {
  check_prim_equal(k_seed_ln_before, k_seed_ln_expected, "layer_norm", "layer_norm");
}
END_TEST

static const char *k_relu_before =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(lv: R.Tensor((16, 32, 32, 16), dtype=\"float16\")):\n"
    "        conv1 = R.nn.relu(lv)\n"
    "        return conv1\n";

static const char *k_relu_expected =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def relu(lv: T.Buffer((T.int64(16), T.int64(32), T.int64(32), T.int64(16)), \"float16\"), compute: T.Buffer((T.int64(16), T.int64(32), T.int64(32), T.int64(16)), \"float16\")):\n"
    "        T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "        for i0, i1, i2, i3 in T.grid(T.int64(16), T.int64(32), T.int64(32), T.int64(16)):\n"
    "            with T.block(\"compute\"):\n"
    "                v_i0, v_i1, v_i2, v_i3 = T.axis.remap(\"SSSS\", [i0, i1, i2, i3])\n"
    "                T.reads(lv[v_i0, v_i1, v_i2, v_i3])\n"
    "                T.writes(compute[v_i0, v_i1, v_i2, v_i3])\n"
    "                compute[v_i0, v_i1, v_i2, v_i3] = T.max(lv[v_i0, v_i1, v_i2, v_i3], T.float16(0))\n";

START_TEST(relu_equals_seed_relu) { check_prim_equal(k_relu_before, k_relu_expected, "relu", "relu"); }
END_TEST

/* NCHW, stride 2, dilation 2, groups 2, asymmetric padding (top 1, left 0,
 * bottom 2, right 1). Expected written from topi.nn.conv's definition: H pads
 * 1/2 and W pads 0/1, so the guard has `1 <= h`, `h < 10 + 1`, and for W only
 * `w < 9 + 0` (no `0 <= w` term); out H = (10+3-2*2-1)//2+1 = 5, W = (9+1-4-1)//2+1 = 3. */
static const char *k_group_before =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 4, 10, 9), dtype=\"float32\"), w: R.Tensor((6, 2, 3, 3), dtype=\"float32\")):\n"
    "        gv = R.nn.conv2d(x, w, strides=[2, 2], padding=[1, 0, 2, 1], dilation=[2, 2], groups=2)\n"
    "        return gv\n";

static const char *k_group_expected =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def conv2d(x: T.Buffer((T.int64(1), T.int64(4), T.int64(10), T.int64(9)), \"float32\"), w: T.Buffer((T.int64(6), T.int64(2), T.int64(3), T.int64(3)), \"float32\"), group_conv2d_nchw: T.Buffer((T.int64(1), T.int64(6), T.int64(5), T.int64(3)), \"float32\")):\n"
    "        T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "        pad_temp = T.alloc_buffer((T.int64(1), T.int64(4), T.int64(13), T.int64(10)))\n"
    "        for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(4), T.int64(13), T.int64(10)):\n"
    "            with T.block(\"pad_temp\"):\n"
    "                v_i0, v_i1, v_i2, v_i3 = T.axis.remap(\"SSSS\", [i0, i1, i2, i3])\n"
    "                T.reads(x[v_i0, v_i1, v_i2 - T.int64(1), v_i3])\n"
    "                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])\n"
    "                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(T.int64(1) <= v_i2 and v_i2 < T.int64(11) and v_i3 < T.int64(9), x[v_i0, v_i1, v_i2 - T.int64(1), v_i3], T.float32(0))\n"
    "        for nn, ff, yy, xx, rc, ry, rx in T.grid(T.int64(1), T.int64(6), T.int64(5), T.int64(3), T.int64(2), T.int64(3), T.int64(3)):\n"
    "            with T.block(\"group_conv2d_nchw\"):\n"
    "                v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap(\"SSSSRRR\", [nn, ff, yy, xx, rc, ry, rx])\n"
    "                T.reads(pad_temp[v_nn, v_ff // T.int64(3) * T.int64(2) + v_rc, v_yy * T.int64(2) + v_ry * T.int64(2), v_xx * T.int64(2) + v_rx * T.int64(2)], w[v_ff, v_rc, v_ry, v_rx])\n"
    "                T.writes(group_conv2d_nchw[v_nn, v_ff, v_yy, v_xx])\n"
    "                with T.init():\n"
    "                    group_conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0)\n"
    "                group_conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = group_conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_ff // T.int64(3) * T.int64(2) + v_rc, v_yy * T.int64(2) + v_ry * T.int64(2), v_xx * T.int64(2) + v_rx * T.int64(2)] * w[v_ff, v_rc, v_ry, v_rx]\n";

START_TEST(grouped_strided_dilated_asymmetric_conv2d) {
  check_prim_equal(k_group_before, k_group_expected, "conv2d", "conv2d");
}
END_TEST

/* The seed network written with high-level ops: LegalizeOps must give back the
 * seed's three PrimFuncs (conv2d deduplicated over the three convolutions). */
static const char *k_seed_ops =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(data: R.Tensor((16, 32, 32, 16), dtype=\"float16\"), weight1: R.Tensor((16, 3, 3, 16), dtype=\"float16\"), weight2: R.Tensor((16, 3, 3, 16), dtype=\"float16\"), weight3: R.Tensor((16, 3, 3, 16), dtype=\"float16\"), gamma: R.Tensor((16,), dtype=\"float16\"), beta: R.Tensor((16,), dtype=\"float16\")) -> R.Tensor((16, 32, 32, 16), dtype=\"float16\"):\n"
    "        R.func_attr({\"num_input\": 1})\n"
    "        with R.dataflow():\n"
    "            lv = R.nn.conv2d(data, weight1, padding=[1, 1, 1, 1], data_layout=\"NHWC\", kernel_layout=\"OHWI\")\n"
    "            conv1 = R.nn.relu(lv)\n"
    "            lv2 = R.nn.conv2d(conv1, weight2, padding=[1, 1, 1, 1], data_layout=\"NHWC\", kernel_layout=\"OHWI\")\n"
    "            conv2 = R.nn.relu(lv2)\n"
    "            ln = R.nn.layer_norm(conv2, gamma, beta, axes=[-1])\n"
    "            lv5 = R.nn.conv2d(ln, weight3, padding=[1, 1, 1, 1], data_layout=\"NHWC\", kernel_layout=\"OHWI\")\n"
    "            conv3 = R.nn.relu(lv5)\n"
    "            R.output(conv3)\n"
    "        return conv3\n";

START_TEST(seed_network_legalizes_to_the_seed_prim_funcs) {
  char *seed_text = tu_read_file(tu_project_path(TU_SEED_MODEL), NULL);
  ck_assert_ptr_nonnull(seed_text);
  tj_arena_t *a = tj_arena_create();
  tj_module_t *seed = parse_or_skip(a, "seed.rx", seed_text);
  tj_module_t *ops = seed ? parse_or_skip(a, "seed_ops", k_seed_ops) : NULL;
  if (ops) {
    const tj_module_t *out = legalize(a, ops);
    int n_prim = 0;
    for (int i = 0; i < out->n_funcs; i++) n_prim += out->funcs[i].is_prim;
    ck_assert_int_eq(n_prim, 3);
    const char *pairs[3][2] = {{"conv2d", "conv2d2"}, {"relu", "relu"}, {"layer_norm", "layer_norm"}};
    for (int i = 0; i < 3; i++) {
      char why[512] = "";
      const tj_prim_func_t *got = tj_module_find_prim(out, pairs[i][0]);
      ck_assert_msg(got != NULL, "no %s", pairs[i][0]);
      ck_assert_msg(tj_struct_equal_prim_func(got, tj_module_find_prim(seed, pairs[i][1]), why, sizeof why),
                    "%s differs from the seed's %s: %s", pairs[i][0], pairs[i][1], why);
    }
    /* LegalizeOps on the seed itself (only call_tir) is the identity */
    const tj_module_t *same = legalize(a, seed);
    char why[512] = "";
    ck_assert_msg(tj_struct_equal_module(same, seed, why, sizeof why), "seed changed: %s", why);
  }
  tj_arena_free(a);
  free(seed_text);
}
END_TEST

/* TVM's test_can_not_legalize: a legalization that declines (returns no expression)
 * keeps the call as it is. The conformance runner cannot swap a legalizer, so it is
 * checked here. */
static tj_status_t *keep_call(tj_lg_ctx_t *ctx, const tj_rx_expr_t *call, const tj_rx_expr_t **out_expr) {
  (void)ctx;
  (void)call;
  *out_expr = NULL;
  return NULL;
}

START_TEST(a_declining_custom_legalizer_keeps_the_call) {
  tj_arena_t *a = tj_arena_create();
  int64_t d[2] = {2, 3};
  const tj_rx_expr_t *p[2] = {tensor_param(a, "x", TJ_F32, 2, d), tensor_param(a, "y", TJ_F32, 2, d)};
  const tj_module_t *m = one_call_module(a, "relax.add", 2, p, NULL);
  tj_legalizer_t custom = {"relax.add", keep_call};
  tj_legalize_options_t opts = {.n_custom = 1, .custom = &custom};
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, a);
  const tj_module_t *out = NULL;
  TU_OK(tj_legalize_ops_with(&ctx, m, &opts, &out));
  ck_assert(tj_rx_is_op_call(main_value(out), "relax.add"));
  ck_assert_int_eq(out->n_funcs, 1);
  /* without the custom legalizer the same module is legalized */
  ck_assert(!tj_rx_is_op_call(main_value(legalize(a, m)), "relax.add"));
  tj_arena_free(a);
}
END_TEST

/* R.exp → `_call_topi_without_attr(topi.exp, "tir_exp")` (docs/tvm-ops.md §1): the
 * PrimFunc tir_exp(x, compute), one block `compute` over i0, i1, float16 kept as
 * float16; symbolic dims become match_buffer vars. The whole module is compared, so
 * main's call_tir (callee, args, out_sinfo) is checked too; then the op pattern. */
static const char *k_exp_before =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((2, 3), dtype=\"float16\"), y: R.Tensor((\"n\", 4), dtype=\"float32\")):\n"
    "        a = R.exp(x)\n"
    "        b = R.exp(y)\n"
    "        return (a, b)\n";

static const char *k_exp_expected =
    HDR
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def tir_exp(x: T.Buffer((T.int64(2), T.int64(3)), \"float16\"), compute: T.Buffer((T.int64(2), T.int64(3)), \"float16\")):\n"
    "        T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "        for i0, i1 in T.grid(T.int64(2), T.int64(3)):\n"
    "            with T.block(\"compute\"):\n"
    "                v_i0, v_i1 = T.axis.remap(\"SS\", [i0, i1])\n"
    "                T.reads(x[v_i0, v_i1])\n"
    "                T.writes(compute[v_i0, v_i1])\n"
    "                compute[v_i0, v_i1] = T.exp(x[v_i0, v_i1])\n"
    "\n"
    "    @T.prim_func(private=True)\n"
    "    def tir_exp1(var_y: T.handle, var_compute: T.handle):\n"
    "        T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "        n = T.int64()\n"
    "        y = T.match_buffer(var_y, (n, T.int64(4)))\n"
    "        compute = T.match_buffer(var_compute, (n, T.int64(4)))\n"
    "        for i0, i1 in T.grid(n, T.int64(4)):\n"
    "            with T.block(\"compute\"):\n"
    "                v_i0, v_i1 = T.axis.remap(\"SS\", [i0, i1])\n"
    "                T.reads(y[v_i0, v_i1])\n"
    "                T.writes(compute[v_i0, v_i1])\n"
    "                compute[v_i0, v_i1] = T.exp(y[v_i0, v_i1])\n"
    "\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((2, 3), dtype=\"float16\"), y: R.Tensor((\"n\", 4), dtype=\"float32\")) -> R.Tuple(R.Tensor((2, 3), dtype=\"float16\"), R.Tensor((\"n\", 4), dtype=\"float32\")):\n"
    "        n = T.int64()\n"
    "        cls = Module\n"
    "        a = R.call_tir(cls.tir_exp, (x,), out_sinfo=R.Tensor((2, 3), dtype=\"float16\"))\n"
    "        b = R.call_tir(cls.tir_exp1, (y,), out_sinfo=R.Tensor((n, 4), dtype=\"float32\"))\n"
    "        return (a, b)\n";

START_TEST(exp_becomes_tir_exp_with_one_compute_block) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *mb = parse_or_skip(a, "before", k_exp_before);
  tj_module_t *me = mb ? parse_or_skip(a, "expected", k_exp_expected) : NULL;
  if (me) {
    const tj_module_t *out = legalize(a, mb);
    char why[512] = "";
    ck_assert_msg(tj_struct_equal_module(out, me, why, sizeof why), "tir_exp differs: %s", why);
    tj_pass_context_t ctx;
    tj_pass_context_init(&ctx, a);
    const tj_module_t *annotated = NULL;
    TU_OK(tj_annotate_tir_op_pattern(&ctx, out, &annotated));
    const tj_prim_func_t *f = tj_module_find_prim(annotated, "tir_exp");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(tj_attrs_get_int(f->attrs, "op_pattern", -1), 0); /* kElemWise */
  }
  tj_arena_free(a);
}
END_TEST

/* R.arange(1, n, 2) with a symbolic n: a T_arange PrimFunc whose length n // 2 no
 * buffer binds, so n is a trailing int64 parameter passed by the call's tir_vars. */
START_TEST(symbolic_arange_passes_its_bound_as_tir_vars) {
  tj_arena_t *a = tj_arena_create();
  static const char src[] = "from tvm.script import ir as I\n"
                            "from tvm.script import tir as T\n"
                            "from tvm.script import relax as R\n"
                            "@I.ir_module\n"
                            "class Module:\n"
                            "    @R.function\n"
                            "    def main(x: R.Tensor((\"n\",), \"float32\")):\n"
                            "        n = T.int64()\n"
                            "        gv = R.arange(1, n, 2)\n"
                            "        return gv\n";
  tj_module_t *parsed = NULL;
  TU_OK(tj_parse_module(a, "arange.rx", src, strlen(src), &parsed));
  const tj_module_t *m = legalize(a, parsed);
  tj_call_tir_view_t v;
  ck_assert(tj_rx_as_call_tir(main_value(m), &v));
  ck_assert_int_eq(v.n_args, 0);
  ck_assert_ptr_nonnull(v.tir_vars);
  ck_assert_int_eq(v.tir_vars->shape_expr.n, 1);
  ck_assert_str_eq(v.tir_vars->shape_expr.values[0]->var.name, "n");
  const tj_prim_func_t *f = tj_module_find_prim(m, "arange");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(f->n_params, 2); /* the output, then n */
  ck_assert_ptr_null(f->buffer_map[1]);
  ck_assert(tj_dtype_eq(f->params[1]->dtype, TJ_I64));
  const tj_block_t *blk[2];
  ck_assert_int_eq(blocks_of(f, blk, 2), 1);
  ck_assert_str_eq(blk[0]->name, "T_arange");
  tj_arena_free(a);
}
END_TEST

/* argmax over axis 1: the tuple reduction x_red_temp (index and value, reduce k1),
 * then x_red copying the index, as TOPI writes it. */
START_TEST(argmax_is_a_tuple_reduction_then_a_copy) {
  tj_arena_t *a = tj_arena_create();
  int64_t dims[3] = {2, 3, 4};
  const tj_rx_expr_t *x = tensor_param(a, "x", TJ_F32, 3, dims);
  tj_attr_value_t axis = {.kind = TJ_ATTR_INT, .dtype = TJ_I64, .i = 1};
  const tj_module_t *m = legalize(a, one_call_module(a, "relax.argmax", 1, &x, tj_attrs_set(a, NULL, "axis", axis)));
  const tj_prim_func_t *f = tj_module_find_prim(m, "argmax");
  ck_assert_ptr_nonnull(f);
  const tj_block_t *blk[2];
  ck_assert_int_eq(blocks_of(f, blk, 2), 2);
  ck_assert_str_eq(blk[0]->name, "x_red_temp");
  assert_kinds(blk[0], "SSR");
  ck_assert_int_eq(blk[0]->n_writes, 2);
  ck_assert_str_eq(blk[1]->name, "x_red");
  ck_assert(tj_dtype_eq(f->buffer_map[1]->dtype, TJ_I64));
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("legalize_ops");
  TCase *tc = tcase_create("legalize_ops");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, relu_becomes_call_tir_to_compute_block);
  tcase_add_test(tc, symbolic_arange_passes_its_bound_as_tir_vars);
  tcase_add_test(tc, argmax_is_a_tuple_reduction_then_a_copy);
  tcase_add_test(tc, conv2d_nhwc_has_pad_then_conv_blocks);
  tcase_add_test(tc, conv2d_without_padding_still_has_pad_temp_copy);
  tcase_add_test(tc, layer_norm_f16_accumulates_in_f32);
  tcase_add_test(tc, identical_calls_share_one_prim_func);
  tcase_add_test(tc, distinct_prim_funcs_get_counter_names);
  tcase_add_test(tc, unknown_op_and_unknown_shape_are_kept);
  tcase_add_test(tc, matmul_of_unknown_dtype_is_an_error);
  tcase_add_test(tc, grouped_conv2d_computes_the_convolution);
  tcase_add_test(tc, layer_norm_and_softmax_compute_their_definitions);
  tcase_add_test(tc, conv2d_nhwc_ohwi_equals_seed_conv2d2);
  tcase_add_test(tc, layer_norm_f16_equals_seed_layer_norm);
  tcase_add_test(tc, relu_equals_seed_relu);
  tcase_add_test(tc, grouped_strided_dilated_asymmetric_conv2d);
  tcase_add_test(tc, seed_network_legalizes_to_the_seed_prim_funcs);
  tcase_add_test(tc, a_declining_custom_legalizer_keeps_the_call);
  tcase_add_test(tc, exp_becomes_tir_exp_with_one_compute_block);
  tcase_add_test(tc, symbolic_repeat_keeps_te_shape_form);
  tcase_add_test(tc, take_inlines_a_symbolic_prim_value_index);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
