/* FuseOps: TVM's post-dominator fusion and grouped functions (docs/semantics.md §4). */
#include "fusion_ir.h"

typedef struct fixture {
  tj_arena_t *a;
  tj_pass_context_t ctx;
} fixture_t;

static void fx_init(fixture_t *fx) {
  fx->a = tj_arena_create();
  tj_pass_context_init(&fx->ctx, fx->a);
}

static const tj_module_t *annotate_and_fuse(fixture_t *fx, const tj_module_t *m) {
  const tj_module_t *annotated, *fused;
  TU_OK(tj_annotate_tir_op_pattern(&fx->ctx, m, &annotated));
  TU_OK(tj_fuse_ops(&fx->ctx, annotated, -1, &fused));
  return fused;
}

static int count_relax(const tj_module_t *m) {
  int n = 0;
  for (int i = 0; i < m->n_funcs; i++) n += !m->funcs[i].is_prim;
  return n;
}

/* lv = matmul(x, w); gv = relu(lv) */
static const tj_module_t *matmul_relu_module(tj_arena_t *a) {
  const tj_sinfo_t *sx = fi_tensor(a, TJ_F32, 4, 8), *sw = fi_tensor(a, TJ_F32, 8, 16), *so = fi_tensor(a, TJ_F32, 4, 16);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", sx), *w = tj_rx_var(a, "w", sw);
  const tj_rx_expr_t *lv = tj_rx_dataflow_var(a, "lv", so), *gv = tj_rx_var(a, "gv", so);
  tj_rx_binding_t b[2] = {{lv, fi_call_tir(a, "matmul", so, 2, x, w), NULL},
                          {gv, fi_call_tir(a, "relu", so, 1, lv), NULL}};
  const tj_rx_expr_t *params[2] = {x, w};
  tj_func_entry_t funcs[3] = {{.name = "matmul", .is_prim = true, .prim = fi_matmul(a, TJ_F32, 4, 8, 16)},
                              {.name = "relu", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 16, "lv", "compute", true)},
                              {.name = "main", .is_prim = false, .relax = fi_main(a, 2, params, 2, b, gv)}};
  return tj_module_new(a, 3, funcs, NULL);
}

START_TEST(matmul_absorbs_relu) {
  fixture_t fx;
  fx_init(&fx);
  const tj_module_t *out = annotate_and_fuse(&fx, matmul_relu_module(fx.a));
  const tj_rx_func_t *fused = tj_module_find_relax(out, "fused_matmul_relu");
  ck_assert_ptr_nonnull(fused);
  ck_assert_int_eq(tj_attrs_get_int(fused->attrs, "Primitive", 0), 1);
  ck_assert_ptr_null(tj_attrs_get(fused->attrs, "global_symbol")); /* private */
  ck_assert_int_eq(fused->n_params, 2);
  ck_assert_str_eq(fused->params[0]->var.name, "x");
  ck_assert_str_eq(fused->params[1]->var.name, "w");
  ck_assert_int_eq(fused->body->seq.blocks[0].n_bindings, 2);
  ck_assert_int_eq(fused->body->seq.body->kind, TJ_RX_VAR); /* the output is emitted with R.output */
  const tj_rx_func_t *main_fn = tj_module_find_relax(out, "main");
  const tj_rx_block_t *blk = &main_fn->body->seq.blocks[0];
  ck_assert_int_eq(blk->n_bindings, 1);
  ck_assert_int_eq(blk->bindings[0].value->kind, TJ_RX_CALL);
  ck_assert_str_eq(blk->bindings[0].value->call.callee->var.name, "fused_matmul_relu");
  ck_assert_ptr_eq(blk->bindings[0].var, main_fn->body->seq.body); /* the returned var is still bound */
  tj_arena_free(fx.a);
}
END_TEST

START_TEST(opt_level_zero_and_max_depth_one_fuse_nothing) {
  fixture_t fx;
  fx_init(&fx);
  const tj_module_t *m = matmul_relu_module(fx.a), *annotated, *out;
  TU_OK(tj_annotate_tir_op_pattern(&fx.ctx, m, &annotated));
  TU_OK(tj_fuse_ops(&fx.ctx, annotated, 0, &out));
  ck_assert_int_eq(count_relax(out), 1);
  fx.ctx.fuse_max_depth = 1;
  TU_OK(tj_fuse_ops(&fx.ctx, annotated, -1, &out));
  ck_assert_int_eq(count_relax(out), 1);
  ck_assert_int_eq(tj_module_find_relax(out, "main")->body->seq.blocks[0].n_bindings, 2);
  tj_arena_free(fx.a);
}
END_TEST

/* TVM #2110: an elementwise producer must not fuse into the input of an
 * OutEWiseFusable op. lv = relu(x); gv = matmul(lv, w) stays two calls. */
START_TEST(nothing_fuses_into_matmul_input) {
  fixture_t fx;
  fx_init(&fx);
  tj_arena_t *a = fx.a;
  const tj_sinfo_t *sx = fi_tensor(a, TJ_F32, 4, 8), *sw = fi_tensor(a, TJ_F32, 8, 16), *so = fi_tensor(a, TJ_F32, 4, 16);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", sx), *w = tj_rx_var(a, "w", sw);
  const tj_rx_expr_t *lv = tj_rx_dataflow_var(a, "lv", sx), *gv = tj_rx_var(a, "gv", so);
  tj_rx_binding_t b[2] = {{lv, fi_call_tir(a, "relu", sx, 1, x), NULL}, {gv, fi_call_tir(a, "matmul", so, 2, lv, w), NULL}};
  const tj_rx_expr_t *params[2] = {x, w};
  tj_func_entry_t funcs[3] = {{.name = "matmul", .is_prim = true, .prim = fi_matmul(a, TJ_F32, 4, 8, 16)},
                              {.name = "relu", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 8, "x", "y", true)},
                              {.name = "main", .is_prim = false, .relax = fi_main(a, 2, params, 2, b, gv)}};
  const tj_module_t *out = annotate_and_fuse(&fx, tj_module_new(a, 3, funcs, NULL));
  ck_assert_int_eq(count_relax(out), 1);
  ck_assert_int_eq(tj_module_find_relax(out, "main")->body->seq.blocks[0].n_bindings, 2);
  tj_arena_free(fx.a);
}
END_TEST

/* TVM #14354: a group whose results nobody uses is dropped, not a crash.
 * lv1 = matmul(x, w); lv2 = relu(lv1) (unused); gv = relu2(x). */
START_TEST(dead_group_is_dropped) {
  fixture_t fx;
  fx_init(&fx);
  tj_arena_t *a = fx.a;
  const tj_sinfo_t *sx = fi_tensor(a, TJ_F32, 4, 8), *sw = fi_tensor(a, TJ_F32, 8, 16), *so = fi_tensor(a, TJ_F32, 4, 16);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", sx), *w = tj_rx_var(a, "w", sw);
  const tj_rx_expr_t *lv1 = tj_rx_dataflow_var(a, "lv1", so), *lv2 = tj_rx_dataflow_var(a, "lv2", so);
  const tj_rx_expr_t *gv = tj_rx_var(a, "gv", sx);
  tj_rx_binding_t b[3] = {{lv1, fi_call_tir(a, "matmul", so, 2, x, w), NULL},
                          {lv2, fi_call_tir(a, "relu", so, 1, lv1), NULL},
                          {gv, fi_call_tir(a, "relu2", sx, 1, x), NULL}};
  const tj_rx_expr_t *params[2] = {x, w};
  tj_func_entry_t funcs[4] = {{.name = "matmul", .is_prim = true, .prim = fi_matmul(a, TJ_F32, 4, 8, 16)},
                              {.name = "relu", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 16, "x", "y", true)},
                              {.name = "relu2", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 8, "x", "y", true)},
                              {.name = "main", .is_prim = false, .relax = fi_main(a, 2, params, 3, b, gv)}};
  const tj_module_t *out = annotate_and_fuse(&fx, tj_module_new(a, 4, funcs, NULL));
  ck_assert_int_eq(count_relax(out), 1);
  const tj_rx_block_t *blk = &tj_module_find_relax(out, "main")->body->seq.blocks[0];
  ck_assert_int_eq(blk->n_bindings, 1);
  ck_assert_ptr_eq(blk->bindings[0].var, gv);
  tj_arena_free(fx.a);
}
END_TEST

/* Two identical chains build one function, called twice (needs structural equality). */
START_TEST(identical_groups_share_one_function) {
  if (!fi_struct_equal_available()) return;
  fixture_t fx;
  fx_init(&fx);
  tj_arena_t *a = fx.a;
  const tj_sinfo_t *s = fi_tensor(a, TJ_F32, 4, 4);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", s), *w = tj_rx_var(a, "w", s);
  const tj_rx_expr_t *v[4] = {tj_rx_dataflow_var(a, "a", s), tj_rx_dataflow_var(a, "b", s), tj_rx_dataflow_var(a, "c", s),
                              tj_rx_var(a, "d", s)};
  tj_rx_binding_t b[4] = {{v[0], fi_call_tir(a, "matmul", s, 2, x, w), NULL},
                          {v[1], fi_call_tir(a, "relu", s, 1, v[0]), NULL},
                          {v[2], fi_call_tir(a, "matmul", s, 2, v[1], w), NULL},
                          {v[3], fi_call_tir(a, "relu", s, 1, v[2]), NULL}};
  const tj_rx_expr_t *params[2] = {x, w};
  tj_func_entry_t funcs[3] = {{.name = "matmul", .is_prim = true, .prim = fi_matmul(a, TJ_F32, 4, 4, 4)},
                              {.name = "relu", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 4, "x", "y", true)},
                              {.name = "main", .is_prim = false, .relax = fi_main(a, 2, params, 4, b, v[3])}};
  const tj_module_t *out = annotate_and_fuse(&fx, tj_module_new(a, 3, funcs, NULL));
  ck_assert_int_eq(count_relax(out), 2);
  const tj_rx_block_t *blk = &tj_module_find_relax(out, "main")->body->seq.blocks[0];
  ck_assert_int_eq(blk->n_bindings, 2);
  ck_assert_str_eq(blk->bindings[0].value->call.callee->var.name, "fused_matmul_relu");
  ck_assert_str_eq(blk->bindings[1].value->call.callee->var.name, "fused_matmul_relu");
  tj_arena_free(fx.a);
}
END_TEST

/* ---- through the TVMScript reader (skipped until it is linked in) ---- */

static const tj_module_t *parse_and_fuse(fixture_t *fx, const char *text) {
  tj_module_t *m;
  TU_OK(fi_parse_text(fx->a, text, &m));
  return annotate_and_fuse(fx, m);
}

START_TEST(seed_groups) {
  if (!fi_parser_available()) return;
  fixture_t fx;
  fx_init(&fx);
  tj_module_t *m;
  TU_OK(tj_parse_file(fx.a, tu_project_path(TU_SEED_MODEL), &m));
  const tj_module_t *out = annotate_and_fuse(&fx, m);
  const tj_rx_func_t *main_fn = tj_module_find_relax(out, "main");
  const tj_rx_block_t *blk = &main_fn->body->seq.blocks[0];
  /* {lv, conv1}, {lv2, conv2}, {ln}, {lv5, conv3} */
  ck_assert_int_eq(blk->n_bindings, 4);
  const char *callees[4];
  for (int i = 0; i < 4; i++) {
    const tj_rx_expr_t *v = blk->bindings[i].value;
    tj_call_tir_view_t view;
    callees[i] = tj_rx_as_call_tir(v, &view) ? view.callee->var.name : v->call.callee->var.name;
  }
  ck_assert_str_eq(callees[2], "layer_norm");
  ck_assert_str_eq(callees[0], "fused_conv2d2_relu");
  if (fi_struct_equal_available()) {
    ck_assert_str_eq(callees[1], "fused_conv2d2_relu");
    ck_assert_str_eq(callees[3], "fused_conv2d2_relu");
    ck_assert_int_eq(count_relax(out), 2);
  }
  const tj_rx_func_t *fused = tj_module_find_relax(out, "fused_conv2d2_relu");
  ck_assert_int_eq(tj_attrs_get_int(fused->attrs, "Primitive", 0), 1);
  ck_assert_str_eq(fused->params[0]->var.name, "data");
  ck_assert_str_eq(fused->params[1]->var.name, "weight1");
  tj_arena_free(fx.a);
}
END_TEST

/* #2110 in TVMScript: the broadcast add feeding the conv's input stays alone. */
static const char conv_input_text[] =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def add(A: T.Buffer((T.int64(1), T.int64(8)), \"float32\"), B: T.Buffer((T.int64(8),), \"float32\"), C: T.Buffer((T.int64(1), T.int64(8)), \"float32\")):\n"
    "        for i, j in T.grid(T.int64(1), T.int64(8)):\n"
    "            with T.block(\"T_add\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                C[vi, vj] = A[vi, vj] + B[vj]\n"
    "    @T.prim_func(private=True)\n"
    "    def matmul(A: T.Buffer((T.int64(1), T.int64(8)), \"float32\"), B: T.Buffer((T.int64(8), T.int64(4)), \"float32\"), C: T.Buffer((T.int64(1), T.int64(4)), \"float32\")):\n"
    "        for i, j, k in T.grid(T.int64(1), T.int64(4), T.int64(8)):\n"
    "            with T.block(\"matmul\"):\n"
    "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "                with T.init():\n"
    "                    C[vi, vj] = T.float32(0)\n"
    "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 8), \"float32\"), b: R.Tensor((8,), \"float32\"), w: R.Tensor((8, 4), \"float32\")) -> R.Tensor((1, 4), \"float32\"):\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            lv = R.call_tir(cls.add, (x, b), out_sinfo=R.Tensor((1, 8), \"float32\"))\n"
    "            gv = R.call_tir(cls.matmul, (lv, w), out_sinfo=R.Tensor((1, 4), \"float32\"))\n"
    "            R.output(gv)\n"
    "        return gv\n";

START_TEST(script_nothing_fuses_into_conv_input) {
  if (!fi_parser_available()) return;
  fixture_t fx;
  fx_init(&fx);
  const tj_module_t *out = parse_and_fuse(&fx, conv_input_text);
  ck_assert_int_eq(count_relax(out), 1);
  ck_assert_int_eq(tj_module_find_relax(out, "main")->body->seq.blocks[0].n_bindings, 2);
  tj_arena_free(fx.a);
}
END_TEST

/* #14354 in TVMScript: matmul + add form a group nobody reads. */
static const char dead_group_text[] =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def add(A: T.Buffer((T.int64(1), T.int64(4)), \"float32\"), B: T.Buffer((T.int64(4),), \"float32\"), C: T.Buffer((T.int64(1), T.int64(4)), \"float32\")):\n"
    "        for i, j in T.grid(T.int64(1), T.int64(4)):\n"
    "            with T.block(\"T_add\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                C[vi, vj] = A[vi, vj] + B[vj]\n"
    "    @T.prim_func(private=True)\n"
    "    def matmul(A: T.Buffer((T.int64(1), T.int64(8)), \"float32\"), B: T.Buffer((T.int64(8), T.int64(4)), \"float32\"), C: T.Buffer((T.int64(1), T.int64(4)), \"float32\")):\n"
    "        for i, j, k in T.grid(T.int64(1), T.int64(4), T.int64(8)):\n"
    "            with T.block(\"matmul\"):\n"
    "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "                with T.init():\n"
    "                    C[vi, vj] = T.float32(0)\n"
    "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 8), \"float32\"), w: R.Tensor((8, 4), \"float32\"), b: R.Tensor((4,), \"float32\")) -> R.Tensor((1, 4), \"float32\"):\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((1, 4), \"float32\"))\n"
    "            lv1 = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((1, 4), \"float32\"))\n"
    "            gv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((1, 4), \"float32\"))\n"
    "            R.output(gv)\n"
    "        return gv\n";

START_TEST(script_dead_group) {
  if (!fi_parser_available()) return;
  fixture_t fx;
  fx_init(&fx);
  const tj_module_t *out = parse_and_fuse(&fx, dead_group_text);
  ck_assert_int_eq(count_relax(out), 1);
  const tj_rx_block_t *blk = &tj_module_find_relax(out, "main")->body->seq.blocks[0];
  ck_assert_int_eq(blk->n_bindings, 1);
  ck_assert_str_eq(blk->bindings[0].var->var.name, "gv");
  tj_arena_free(fx.a);
}
END_TEST

/* Get-items of get-items fuse as Injective, but a group with no call computes
 * nothing: it stays as bindings rather than becoming a function without a kernel. */
static const char plumbing_text[] =
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((2, 3), \"float32\"), y: R.Tensor((2, 3), \"float32\")) -> R.Tensor((2, 3), \"float32\"):\n"
    "        with R.dataflow():\n"
    "            t = (x, y)\n"
    "            tt = (t, y)\n"
    "            a = tt[0]\n"
    "            b = a[0]\n"
    "            gv = R.add(b, y)\n"
    "            R.output(gv)\n"
    "        return gv\n";

START_TEST(script_tuple_plumbing_is_not_a_function) {
  if (!fi_parser_available()) return;
  fixture_t fx;
  fx_init(&fx);
  const tj_module_t *out = parse_and_fuse(&fx, plumbing_text);
  ck_assert_int_eq(count_relax(out), 1);
  ck_assert_int_eq(tj_module_find_relax(out, "main")->body->seq.blocks[0].n_bindings, 5);
  tj_arena_free(fx.a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fuse_ops");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, matmul_absorbs_relu);
  tcase_add_test(tc, opt_level_zero_and_max_depth_one_fuse_nothing);
  tcase_add_test(tc, nothing_fuses_into_matmul_input);
  tcase_add_test(tc, dead_group_is_dropped);
  tcase_add_test(tc, identical_groups_share_one_function);
  tcase_add_test(tc, seed_groups);
  tcase_add_test(tc, script_nothing_fuses_into_conv_input);
  tcase_add_test(tc, script_dead_group);
  tcase_add_test(tc, script_tuple_plumbing_is_not_a_function);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
