/* FuseTIR and DeadCodeElimination (docs/semantics.md §5), with regression tests
 * for TVM's bug history (§9). */
#include "fusion_ir.h"
#include "ir/verify/verify.h"

typedef struct fixture {
  tj_arena_t *a;
  tj_pass_context_t ctx;
} fixture_t;

static void fx_init(fixture_t *fx) {
  fx->a = tj_arena_create();
  tj_pass_context_init(&fx->ctx, fx->a);
}

/* A private {"Primitive": 1} function plus a public main calling it with its params. */
static const tj_module_t *with_fused(tj_arena_t *a, int n_prims, const tj_func_entry_t *prims, int n_params,
                                     const tj_rx_expr_t *const *params, int n_bindings, const tj_rx_binding_t *bindings,
                                     const tj_rx_expr_t *ret) {
  tj_rx_func_t *fused = (tj_rx_func_t *)fi_main(a, n_params, params, n_bindings, bindings, ret);
  fused->attrs = tj_attrs_set(a, NULL, "Primitive", tj_attr_int(1));
  const tj_rx_expr_t **main_params = TJ_ARENA_ARRAY(a, const tj_rx_expr_t *, n_params);
  for (int i = 0; i < n_params; i++) main_params[i] = tj_rx_var(a, params[i]->var.name, params[i]->sinfo);
  const tj_rx_expr_t *gv = tj_rx_var(a, "gv", ret->sinfo);
  tj_rx_binding_t call = {gv, tj_rx_with_sinfo(a, tj_rx_call(a, tj_rx_global_var(a, "fused"), n_params, main_params,
                                                             NULL, 0, NULL),
                                               ret->sinfo),
                          NULL};
  tj_func_entry_t *funcs = TJ_ARENA_ARRAY(a, tj_func_entry_t, n_prims + 2);
  memcpy(funcs, prims, sizeof(*prims) * (size_t)n_prims);
  funcs[n_prims] = (tj_func_entry_t){.name = "fused", .is_prim = false, .relax = fused};
  funcs[n_prims + 1] = (tj_func_entry_t){.name = "main", .is_prim = false,
                                         .relax = fi_main(a, n_params, main_params, 1, &call, gv)};
  return tj_module_new(a, n_prims + 2, funcs, NULL);
}

typedef struct reads_ctx {
  const char *block;
  const tj_block_t *found;
} reads_ctx_t;

static bool find_block(tj_tir_visitor_t *v, const tj_block_t *b) {
  reads_ctx_t *rc = v->ctx;
  if (strcmp(b->name, rc->block) == 0) rc->found = b;
  return true;
}

static const tj_block_t *block_named(const tj_prim_func_t *f, const char *name) {
  reads_ctx_t rc = {name, NULL};
  tj_tir_visitor_t v = {.block = find_block, .ctx = &rc};
  tj_tir_visit_stmt(&v, f->body);
  return rc.found;
}

static const tj_buffer_t *stored_buffer(const tj_block_t *b) {
  return b->body->kind == TJ_TIR_BUFFER_STORE ? b->body->store.buffer : NULL;
}

START_TEST(matmul_relu_becomes_one_prim_func) {
  fixture_t fx;
  fx_init(&fx);
  tj_arena_t *a = fx.a;
  const tj_sinfo_t *sx = fi_tensor(a, TJ_F32, 4, 8), *sw = fi_tensor(a, TJ_F32, 8, 16), *so = fi_tensor(a, TJ_F32, 4, 16);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", sx), *w = tj_rx_var(a, "w", sw);
  const tj_rx_expr_t *lv = tj_rx_dataflow_var(a, "lv", so), *gv = tj_rx_var(a, "gv", so);
  tj_rx_binding_t b[2] = {{lv, fi_call_tir(a, "matmul", so, 2, x, w), NULL}, {gv, fi_call_tir(a, "relu", so, 1, lv), NULL}};
  const tj_rx_expr_t *params[2] = {x, w};
  tj_func_entry_t prims[3] = {{.name = "matmul", .is_prim = true, .prim = fi_matmul(a, TJ_F32, 4, 8, 16)},
                              {.name = "relu", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 16, "lv", "compute", true)},
                              {.name = "unused", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 16, "a", "b", true)}};
  const tj_module_t *m = with_fused(a, 3, prims, 2, params, 2, b, gv), *out;
  TU_OK(tj_fuse_tir(&fx.ctx, m, &out));
  /* DCE: the callees and the unused private PrimFunc are gone */
  ck_assert_int_eq(out->n_funcs, 2);
  ck_assert_ptr_null(tj_module_find(out, "matmul"));
  ck_assert_ptr_null(tj_module_find(out, "unused"));
  const tj_prim_func_t *f = tj_module_find_prim(out, "fused");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(f->n_params, 3);
  ck_assert_str_eq(f->buffer_map[0]->name, "x");
  ck_assert_str_eq(f->buffer_map[1]->name, "w");
  ck_assert_str_eq(f->buffer_map[2]->name, "compute_intermediate");
  ck_assert_ptr_null(tj_attrs_get(f->attrs, "global_symbol"));
  ck_assert_ptr_null(tj_attrs_get(f->attrs, "op_pattern"));
  ck_assert_int_eq(tj_attrs_get_int(f->attrs, "tir.noalias", 0), 1);
  const tj_block_t *root = tj_prim_func_root_block(f);
  ck_assert_int_eq(root->n_alloc_buffers, 1);
  ck_assert_str_eq(root->alloc_buffers[0]->name, "matmul_intermediate");
  fi_names_t names;
  fi_block_names(f, &names);
  ck_assert_str_eq(names.text, "matmul,compute");
  /* the relu block reads what the matmul block wrote, and writes the output param */
  const tj_block_t *mm = block_named(f, "matmul"), *relu = block_named(f, "compute");
  ck_assert_ptr_eq(stored_buffer(mm), root->alloc_buffers[0]);
  ck_assert_ptr_eq(relu->reads[0].buffer, root->alloc_buffers[0]);
  ck_assert_ptr_eq(stored_buffer(relu), f->buffer_map[2]);
  ck_assert_ptr_eq(mm->reads[0].buffer, f->buffer_map[0]);
  /* fresh variables: nothing is shared with the callee */
  ck_assert_ptr_ne(mm->iter_vars[0].var, tj_prim_func_root_block(tj_module_find_prim(m, "matmul"))->body->loop.var);
  /* main calls it through call_tir */
  const tj_rx_block_t *blk = &tj_module_find_relax(out, "main")->body->seq.blocks[0];
  tj_call_tir_view_t view;
  ck_assert_int_eq(blk->n_bindings, 1);
  ck_assert(tj_rx_as_call_tir(blk->bindings[0].value, &view));
  ck_assert_str_eq(view.callee->var.name, "fused");
  ck_assert_int_eq(view.n_args, 2);
  ck_assert_ptr_eq(view.out_sinfo, so);
  tj_arena_free(fx.a);
}
END_TEST

/* TVM #17075: one tensor passed twice to a kernel is fine. */
START_TEST(tensor_passed_twice) {
  fixture_t fx;
  fx_init(&fx);
  tj_arena_t *a = fx.a;
  const tj_sinfo_t *s = fi_tensor(a, TJ_F32, 4, 4);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", s), *lv = tj_rx_dataflow_var(a, "lv", s), *gv = tj_rx_var(a, "gv", s);
  tj_rx_binding_t b[2] = {{lv, fi_call_tir(a, "add", s, 2, x, x), NULL}, {gv, fi_call_tir(a, "relu", s, 1, lv), NULL}};
  tj_func_entry_t prims[2] = {{.name = "add", .is_prim = true, .prim = fi_add(a, TJ_F32, 4, 4, "T_add", "T_add")},
                              {.name = "relu", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 4, "lv", "compute", true)}};
  const tj_module_t *out;
  TU_OK(tj_fuse_tir(&fx.ctx, with_fused(a, 2, prims, 1, &x, 2, b, gv), &out));
  const tj_prim_func_t *f = tj_module_find_prim(out, "fused");
  ck_assert_int_eq(f->n_params, 2);
  const tj_block_t *add = block_named(f, "T_add");
  ck_assert_int_eq(add->n_reads, 1); /* both operand regions are x: merged */
  ck_assert_ptr_eq(add->reads[0].buffer, f->buffer_map[0]);
  const tj_tir_expr_t *sum = add->body->store.value;
  ck_assert_ptr_eq(sum->binary.a->load.buffer, f->buffer_map[0]);
  ck_assert_ptr_eq(sum->binary.b->load.buffer, f->buffer_map[0]);
  tj_arena_free(fx.a);
}
END_TEST

/* The seed bug: an f32 tensor fed to an f16 kernel is a clear verify error. */
START_TEST(dtype_mismatch_is_a_clear_error) {
  fixture_t fx;
  fx_init(&fx);
  tj_arena_t *a = fx.a;
  const tj_sinfo_t *s32 = fi_tensor(a, TJ_F32, 4, 4), *s16 = fi_tensor(a, TJ_F16, 4, 4);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", s32), *lv = tj_rx_dataflow_var(a, "lv", s32), *gv = tj_rx_var(a, "gv", s16);
  tj_rx_binding_t b[2] = {{lv, fi_call_tir(a, "relu32", s32, 1, x), NULL}, {gv, fi_call_tir(a, "relu16", s16, 1, lv), NULL}};
  tj_func_entry_t prims[2] = {{.name = "relu32", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 4, "x", "compute", true)},
                              {.name = "relu16", .is_prim = true, .prim = fi_relu(a, TJ_F16, 4, 4, "lv_in", "c", true)}};
  const tj_module_t *out;
  tj_status_t *st = tj_fuse_tir(&fx.ctx, with_fused(a, 2, prims, 1, &x, 2, b, gv), &out);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(tj_status_code(st), TJ_ERR_VERIFY);
  const char *msg = tj_status_text(st);
  ck_assert_msg(strstr(msg, "'fused'") && strstr(msg, "'gv'") && strstr(msg, "'relu16'") && strstr(msg, "'lv_in'") &&
                    strstr(msg, "float32") && strstr(msg, "float16"),
                "unclear message: %s", msg);
  tj_status_free(st);
  tj_arena_free(fx.a);
}
END_TEST

/* TVM #17341: a PrimFunc without a root block cannot be fused: clear error. */
START_TEST(callee_without_root_block) {
  fixture_t fx;
  fx_init(&fx);
  tj_arena_t *a = fx.a;
  const tj_sinfo_t *s = fi_tensor(a, TJ_F32, 4, 4);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", s), *lv = tj_rx_dataflow_var(a, "lv", s), *gv = tj_rx_var(a, "gv", s);
  tj_rx_binding_t b[2] = {{lv, fi_call_tir(a, "bare", s, 1, x), NULL}, {gv, fi_call_tir(a, "relu", s, 1, lv), NULL}};
  tj_func_entry_t prims[2] = {{.name = "bare", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 4, "x", "y", false)},
                              {.name = "relu", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 4, "x", "y", true)}};
  const tj_module_t *out;
  tj_status_t *st = tj_fuse_tir(&fx.ctx, with_fused(a, 2, prims, 1, &x, 2, b, gv), &out);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(tj_status_code(st), TJ_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(tj_status_text(st), "'bare'") && strstr(tj_status_text(st), "root block"), "%s",
                tj_status_text(st));
  tj_status_free(st);
  tj_arena_free(fx.a);
}
END_TEST

/* TVM #16433: two callees whose outputs (and blocks) have the same names get
 * distinct buffers and block names. */
START_TEST(identically_named_outputs_stay_distinct) {
  fixture_t fx;
  fx_init(&fx);
  tj_arena_t *a = fx.a;
  const tj_sinfo_t *s = fi_tensor(a, TJ_F32, 4, 4);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", s), *y = tj_rx_var(a, "y", s);
  const tj_rx_expr_t *lv = tj_rx_dataflow_var(a, "lv", s), *gv = tj_rx_var(a, "gv", s);
  tj_rx_binding_t b[2] = {{lv, fi_call_tir(a, "add1", s, 2, x, y), NULL}, {gv, fi_call_tir(a, "add2", s, 2, lv, y), NULL}};
  tj_func_entry_t prims[2] = {{.name = "add1", .is_prim = true, .prim = fi_add(a, TJ_F32, 4, 4, "add", "Out")},
                              {.name = "add2", .is_prim = true, .prim = fi_add(a, TJ_F32, 4, 4, "add", "Out")}};
  const tj_rx_expr_t *params[2] = {x, y};
  const tj_module_t *out;
  TU_OK(tj_fuse_tir(&fx.ctx, with_fused(a, 2, prims, 2, params, 2, b, gv), &out));
  const tj_prim_func_t *f = tj_module_find_prim(out, "fused");
  const tj_block_t *root = tj_prim_func_root_block(f);
  ck_assert_int_eq(root->n_alloc_buffers, 1);
  ck_assert_str_eq(root->alloc_buffers[0]->name, "Out_intermediate");
  ck_assert_str_eq(f->buffer_map[2]->name, "Out_intermediate_1");
  fi_names_t names;
  fi_block_names(f, &names);
  ck_assert_str_eq(names.text, "add,add_1");
  ck_assert_ptr_eq(stored_buffer(block_named(f, "add")), root->alloc_buffers[0]);
  ck_assert_ptr_eq(stored_buffer(block_named(f, "add_1")), f->buffer_map[2]);
  ck_assert_ptr_eq(block_named(f, "add_1")->reads[0].buffer, root->alloc_buffers[0]);
  tj_arena_free(fx.a);
}
END_TEST

START_TEST(dce_keeps_public_and_reachable) {
  fixture_t fx;
  fx_init(&fx);
  tj_arena_t *a = fx.a;
  const tj_sinfo_t *s = fi_tensor(a, TJ_F32, 4, 4);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", s), *dead = tj_rx_dataflow_var(a, "dead", s), *gv = tj_rx_var(a, "gv", s);
  tj_rx_binding_t b[2] = {{dead, fi_call_tir(a, "relu_a", s, 1, x), NULL}, {gv, fi_call_tir(a, "relu_b", s, 1, x), NULL}};
  tj_prim_func_t *pub = TJ_ARENA_NEW(a, tj_prim_func_t);
  *pub = *fi_relu(a, TJ_F32, 4, 4, "x", "y", true);
  pub->attrs = tj_attrs_set(a, pub->attrs, "global_symbol", tj_attr_str("public_kernel"));
  tj_func_entry_t funcs[4] = {{.name = "relu_a", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 4, "x", "y", true)},
                              {.name = "relu_b", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 4, "x", "y", true)},
                              {.name = "public_kernel", .is_prim = true, .prim = pub},
                              {.name = "main", .is_prim = false, .relax = fi_main(a, 1, &x, 2, b, gv)}};
  const tj_module_t *out;
  TU_OK(tj_dead_code_elimination(&fx.ctx, tj_module_new(a, 4, funcs, NULL), &out));
  ck_assert_int_eq(out->n_funcs, 3);
  ck_assert_ptr_null(tj_module_find(out, "relu_a")); /* only the dead binding used it */
  ck_assert_ptr_nonnull(tj_module_find(out, "relu_b"));
  ck_assert_ptr_nonnull(tj_module_find(out, "public_kernel"));
  ck_assert_int_eq(tj_module_find_relax(out, "main")->body->seq.blocks[0].n_bindings, 1);
  tj_arena_free(fx.a);
}
END_TEST

/* TVM's RemoveUnusedVars removes VarBindings only: an unused match_cast stays (it defines
 * `n`, used by the returned shape), the unused `gv = y0` goes, and a block left empty is
 * dropped (ExprMutator), so that the output prints and parses back. */
START_TEST(dce_keeps_match_cast_and_drops_emptied_blocks) {
  if (!fi_parser_available()) return;
  fixture_t fx;
  fx_init(&fx);
  tj_module_t *m = NULL;
  TU_OK(fi_parse_text(fx.a,
                      "@R.function\n"
                      "def foo(x: R.Tensor(\"float32\"), y: R.Tensor(\"float32\")):\n"
                      "    n = T.int64()\n"
                      "    with R.dataflow():\n"
                      "        y0 = R.match_cast(y, R.Tensor([n], \"float32\"))\n"
                      "        gv = y0\n"
                      "        R.output(gv)\n"
                      "    with R.dataflow():\n"
                      "        z = R.add(x, x)\n"
                      "        R.output(z)\n"
                      "    return R.shape([n * 2])\n",
                      &m));
  const tj_module_t *out;
  TU_OK(tj_dead_code_elimination(&fx.ctx, m, &out));
  const tj_rx_expr_t *body = tj_module_find_relax(out, "foo")->body;
  ck_assert_int_eq(body->seq.n_blocks, 1);
  ck_assert_int_eq(body->seq.blocks[0].n_bindings, 1);
  ck_assert_ptr_nonnull(body->seq.blocks[0].bindings[0].match_cast);
  tj_arena_free(fx.a);
}
END_TEST

/* ---- through the TVMScript reader (skipped until it is linked in) ---- */

START_TEST(seed_through_the_pipeline) {
  if (!fi_parser_available()) return;
  fixture_t fx;
  fx_init(&fx);
  tj_module_t *m;
  TU_OK(tj_parse_file(fx.a, tu_project_path(TU_SEED_MODEL), &m));
  const tj_module_t *out;
  static const char *const passes[] = {"AnnotateTIROpPattern()", "FuseOps()", "FuseTIR()"};
  out = m;
  for (int i = 0; i < 3; i++) {
    TU_OK(fi_apply_pipeline(&fx.ctx, out, passes[i], &out));
    TU_OK(tj_verify_module(out)); /* well-formed after every pass */
  }
  ck_assert_ptr_null(tj_module_find(out, "conv2d2"));
  ck_assert_ptr_null(tj_module_find(out, "relu"));
  const tj_prim_func_t *f = tj_module_find_prim(out, "fused_conv2d2_relu");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(f->n_params, 3);
  ck_assert_str_eq(f->buffer_map[0]->name, "data");
  ck_assert_str_eq(f->buffer_map[1]->name, "weight1");
  ck_assert_str_eq(f->buffer_map[2]->name, "compute_intermediate");
  const tj_block_t *root = tj_prim_func_root_block(f);
  ck_assert_int_eq(root->n_alloc_buffers, 2);
  ck_assert_str_eq(root->alloc_buffers[0]->name, "pad_temp");
  ck_assert_str_eq(root->alloc_buffers[1]->name, "conv2d_nhwc_intermediate");
  for (int i = 0; i < 3; i++) ck_assert(tj_dtype_eq(f->buffer_map[i]->dtype, TJ_F16));
  for (int i = 0; i < 2; i++) ck_assert(tj_dtype_eq(root->alloc_buffers[i]->dtype, TJ_F16));
  fi_names_t names;
  fi_block_names(f, &names);
  ck_assert_str_eq(names.text, "pad_temp,conv2d_nhwc,compute");
  const tj_rx_block_t *blk = &tj_module_find_relax(out, "main")->body->seq.blocks[0];
  ck_assert_int_eq(blk->n_bindings, 4);
  int fused_calls = 0, ln_calls = 0;
  for (int i = 0; i < blk->n_bindings; i++) {
    tj_call_tir_view_t view;
    ck_assert(tj_rx_as_call_tir(blk->bindings[i].value, &view));
    fused_calls += strcmp(view.callee->var.name, "fused_conv2d2_relu") == 0;
    ln_calls += strcmp(view.callee->var.name, "layer_norm") == 0;
    ck_assert(tj_dtype_eq(view.out_sinfo->tensor.dtype, TJ_F16));
  }
  ck_assert_int_eq(ln_calls, 1);
  if (fi_struct_equal_available()) ck_assert_int_eq(fused_calls, 3);
  tj_arena_free(fx.a);
}
END_TEST

/* TVM #14603: one buffer read twice with different regions (concat(inp, inp)). */
static const char same_buffer_text[] =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def concat(A: T.Buffer((T.int64(1), T.int64(4)), \"float32\"), B: T.Buffer((T.int64(1), T.int64(4)), \"float32\"), C: T.Buffer((T.int64(2), T.int64(4)), \"float32\")):\n"
    "        for i, j in T.grid(T.int64(2), T.int64(4)):\n"
    "            with T.block(\"T_concat\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                T.reads(B[vi - T.int64(1), vj], A[vi, vj])\n"
    "                T.writes(C[vi, vj])\n"
    "                C[vi, vj] = T.if_then_else(T.int64(1) <= vi, B[vi - T.int64(1), vj], A[vi, vj])\n"
    "    @T.prim_func(private=True)\n"
    "    def relu(A: T.Buffer((T.int64(2), T.int64(4)), \"float32\"), B: T.Buffer((T.int64(2), T.int64(4)), \"float32\")):\n"
    "        for i, j in T.grid(T.int64(2), T.int64(4)):\n"
    "            with T.block(\"compute\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                B[vi, vj] = T.max(A[vi, vj], T.float32(0))\n"
    "    @R.function(private=True)\n"
    "    def fused(x: R.Tensor((1, 4), \"float32\")) -> R.Tensor((2, 4), \"float32\"):\n"
    "        R.func_attr({\"Primitive\": 1})\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            lv = R.call_tir(cls.concat, (x, x), out_sinfo=R.Tensor((2, 4), \"float32\"))\n"
    "            gv = R.call_tir(cls.relu, (lv,), out_sinfo=R.Tensor((2, 4), \"float32\"))\n"
    "            R.output(gv)\n"
    "        return gv\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 4), \"float32\")) -> R.Tensor((2, 4), \"float32\"):\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            gv = cls.fused(x)\n"
    "            R.output(gv)\n"
    "        return gv\n";

START_TEST(script_same_buffer_read_twice) {
  if (!fi_parser_available()) return;
  fixture_t fx;
  fx_init(&fx);
  tj_module_t *m;
  TU_OK(fi_parse_text(fx.a, same_buffer_text, &m));
  const tj_module_t *out;
  TU_OK(tj_fuse_tir(&fx.ctx, m, &out));
  const tj_prim_func_t *f = tj_module_find_prim(out, "fused");
  const tj_block_t *concat = block_named(f, "T_concat");
  ck_assert_int_eq(concat->n_reads, 1);
  ck_assert_ptr_eq(concat->reads[0].buffer, f->buffer_map[0]);
  tj_arena_free(fx.a);
}
END_TEST

/* TVM #17075 in TVMScript: add(A, A), and #17341: a callee without blocks. */
static const char no_root_text[] =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def add(A: T.Buffer((T.int64(4),), \"float32\"), B: T.Buffer((T.int64(4),), \"float32\"), C: T.Buffer((T.int64(4),), \"float32\")):\n"
    "        for i in range(T.int64(4)):\n"
    "            C[i] = A[i] + B[i]\n"
    "    @R.function(private=True)\n"
    "    def fused(x: R.Tensor((4,), \"float32\")) -> R.Tensor((4,), \"float32\"):\n"
    "        R.func_attr({\"Primitive\": 1})\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            gv = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4,), \"float32\"))\n"
    "            R.output(gv)\n"
    "        return gv\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((4,), \"float32\")) -> R.Tensor((4,), \"float32\"):\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            gv = cls.fused(x)\n"
    "            R.output(gv)\n"
    "        return gv\n";

START_TEST(script_callee_without_root_block) {
  if (!fi_parser_available()) return;
  fixture_t fx;
  fx_init(&fx);
  tj_module_t *m;
  TU_OK(fi_parse_text(fx.a, no_root_text, &m));
  const tj_module_t *out;
  tj_status_t *st = tj_fuse_tir(&fx.ctx, m, &out);
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(strstr(tj_status_text(st), "root block") && strstr(tj_status_text(st), "'add'"), "%s",
                tj_status_text(st));
  tj_status_free(st);
  tj_arena_free(fx.a);
}
END_TEST

/* TVM #17075 and #16433 in TVMScript: add(x, x) feeding a second kernel whose output
 * buffer and block have the same names as the first one's. */
static const char twice_text[] =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def add(A: T.Buffer((T.int64(4), T.int64(4)), \"float16\"), B: T.Buffer((T.int64(4), T.int64(4)), \"float16\"), Out: T.Buffer((T.int64(4), T.int64(4)), \"float16\")):\n"
    "        for i, j in T.grid(T.int64(4), T.int64(4)):\n"
    "            with T.block(\"add\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                Out[vi, vj] = A[vi, vj] + B[vi, vj]\n"
    "    @T.prim_func(private=True)\n"
    "    def add1(A: T.Buffer((T.int64(4), T.int64(4)), \"float16\"), Out: T.Buffer((T.int64(4), T.int64(4)), \"float16\")):\n"
    "        for i, j in T.grid(T.int64(4), T.int64(4)):\n"
    "            with T.block(\"add\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                Out[vi, vj] = A[vi, vj] + T.float16(1)\n"
    "    @R.function(private=True)\n"
    "    def fused_add_add1(x: R.Tensor((4, 4), \"float16\")) -> R.Tensor((4, 4), \"float16\"):\n"
    "        R.func_attr({\"Primitive\": 1})\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            lv = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4, 4), \"float16\"))\n"
    "            gv = R.call_tir(cls.add1, (lv,), out_sinfo=R.Tensor((4, 4), \"float16\"))\n"
    "            R.output(gv)\n"
    "        return gv\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((4, 4), \"float16\")) -> R.Tensor((4, 4), \"float16\"):\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            gv = cls.fused_add_add1(x)\n"
    "            R.output(gv)\n"
    "        return gv\n";

/* What FuseTIR must make of it, written out (names of bound things do not matter). */
static const char twice_expected[] =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def fused_add_add1(x: T.Buffer((T.int64(4), T.int64(4)), \"float16\"), Out_intermediate_1: T.Buffer((T.int64(4), T.int64(4)), \"float16\")):\n"
    "        T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "        Out_intermediate = T.alloc_buffer((T.int64(4), T.int64(4)), \"float16\")\n"
    "        for i, j in T.grid(T.int64(4), T.int64(4)):\n"
    "            with T.block(\"add\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                T.reads(x[vi, vj])\n"
    "                T.writes(Out_intermediate[vi, vj])\n"
    "                Out_intermediate[vi, vj] = x[vi, vj] + x[vi, vj]\n"
    "        for i, j in T.grid(T.int64(4), T.int64(4)):\n"
    "            with T.block(\"add_1\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                T.reads(Out_intermediate[vi, vj])\n"
    "                T.writes(Out_intermediate_1[vi, vj])\n"
    "                Out_intermediate_1[vi, vj] = Out_intermediate[vi, vj] + T.float16(1)\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((4, 4), \"float16\")) -> R.Tensor((4, 4), \"float16\"):\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            gv = R.call_tir(cls.fused_add_add1, (x,), out_sinfo=R.Tensor((4, 4), \"float16\"))\n"
    "            R.output(gv)\n"
    "        return gv\n";

START_TEST(script_tensor_twice_and_same_output_names) {
  if (!fi_parser_available() || !fi_struct_equal_available()) return;
  fixture_t fx;
  fx_init(&fx);
  tj_module_t *m, *want;
  TU_OK(fi_parse_text(fx.a, twice_text, &m));
  TU_OK(fi_parse_text(fx.a, twice_expected, &want));
  const tj_module_t *out;
  TU_OK(tj_fuse_tir(&fx.ctx, m, &out));
  char why[512];
  ck_assert_msg(tj_struct_equal_module(out, want, why, sizeof why), "%s", why);
  const tj_prim_func_t *f = tj_module_find_prim(out, "fused_add_add1");
  ck_assert_str_eq(tj_prim_func_root_block(f)->alloc_buffers[0]->name, "Out_intermediate");
  ck_assert_str_eq(f->buffer_map[1]->name, "Out_intermediate_1");
  fi_names_t names;
  fi_block_names(f, &names);
  ck_assert_str_eq(names.text, "add,add_1");
  tj_arena_free(fx.a);
}
END_TEST

/* A dtype disagreement written in TVMScript: the seed bug's shape (f32 into f16). */
static const char mismatch_text[] =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def cast(A: T.Buffer((T.int64(4),), \"float16\"), B: T.Buffer((T.int64(4),), \"float32\")):\n"
    "        for i in range(T.int64(4)):\n"
    "            with T.block(\"compute\"):\n"
    "                vi = T.axis.remap(\"S\", [i])\n"
    "                B[vi] = T.Cast(\"float32\", A[vi])\n"
    "    @T.prim_func(private=True)\n"
    "    def relu(lv: T.Buffer((T.int64(4),), \"float16\"), compute: T.Buffer((T.int64(4),), \"float16\")):\n"
    "        for i in range(T.int64(4)):\n"
    "            with T.block(\"compute\"):\n"
    "                vi = T.axis.remap(\"S\", [i])\n"
    "                compute[vi] = T.max(lv[vi], T.float16(0))\n"
    "    @R.function(private=True)\n"
    "    def fused_cast_relu(x: R.Tensor((4,), \"float16\")) -> R.Tensor((4,), \"float16\"):\n"
    "        R.func_attr({\"Primitive\": 1})\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            lv = R.call_tir(cls.cast, (x,), out_sinfo=R.Tensor((4,), \"float32\"))\n"
    "            gv = R.call_tir(cls.relu, (lv,), out_sinfo=R.Tensor((4,), \"float16\"))\n"
    "            R.output(gv)\n"
    "        return gv\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((4,), \"float16\")) -> R.Tensor((4,), \"float16\"):\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            gv = cls.fused_cast_relu(x)\n"
    "            R.output(gv)\n"
    "        return gv\n";

START_TEST(script_dtype_mismatch) {
  if (!fi_parser_available()) return;
  fixture_t fx;
  fx_init(&fx);
  tj_module_t *m;
  TU_OK(fi_parse_text(fx.a, mismatch_text, &m));
  const tj_module_t *out;
  tj_status_t *st = tj_fuse_tir(&fx.ctx, m, &out);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(tj_status_code(st), TJ_ERR_VERIFY);
  const char *msg = tj_status_text(st);
  ck_assert_msg(strstr(msg, "'fused_cast_relu'") && strstr(msg, "'gv'") && strstr(msg, "'relu'") &&
                    strstr(msg, "'lv'") && strstr(msg, "float32[4]") && strstr(msg, "float16[4]"),
                "unclear message: %s", msg);
  tj_status_free(st);
  tj_arena_free(fx.a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fuse_tir");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, matmul_relu_becomes_one_prim_func);
  tcase_add_test(tc, tensor_passed_twice);
  tcase_add_test(tc, dtype_mismatch_is_a_clear_error);
  tcase_add_test(tc, callee_without_root_block);
  tcase_add_test(tc, identically_named_outputs_stay_distinct);
  tcase_add_test(tc, dce_keeps_public_and_reachable);
  tcase_add_test(tc, dce_keeps_match_cast_and_drops_emptied_blocks);
  tcase_add_test(tc, seed_through_the_pipeline);
  tcase_add_test(tc, script_same_buffer_read_twice);
  tcase_add_test(tc, script_callee_without_root_block);
  tcase_add_test(tc, script_tensor_twice_and_same_output_names);
  tcase_add_test(tc, script_dtype_mismatch);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
