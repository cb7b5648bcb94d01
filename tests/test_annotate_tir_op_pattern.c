/* AnnotateTIROpPattern: TVM's block-by-block analysis (docs/semantics.md §3). */
#include "fusion_ir.h"
#include "transforms/graph_partitioner.h"

static tj_op_pattern_t pattern_of(const tj_prim_func_t *f) { return tj_analyze_op_pattern(f); }

START_TEST(relu_is_elemwise) {
  tj_arena_t *a = tj_arena_create();
  ck_assert_int_eq(pattern_of(fi_relu(a, TJ_F16, 4, 8, "lv", "compute", true)), TJ_PATTERN_ELEMWISE);
  tj_arena_free(a);
}
END_TEST

START_TEST(add_is_elemwise) {
  tj_arena_t *a = tj_arena_create();
  ck_assert_int_eq(pattern_of(fi_add(a, TJ_F32, 4, 8, "T_add", "T_add")), TJ_PATTERN_ELEMWISE);
  tj_arena_free(a);
}
END_TEST

START_TEST(matmul_is_out_ewise_fusable) {
  tj_arena_t *a = tj_arena_create();
  ck_assert_int_eq(pattern_of(fi_matmul(a, TJ_F32, 4, 8, 16)), TJ_PATTERN_OUT_EWISE_FUSABLE);
  tj_arena_free(a);
}
END_TEST

/* C[i, j] = B[j] only: Broadcast; C[i, j] = A[i, j] + B[j]: ElemWise;
 * C[i, j] = A[j, i]: Injective. */
static const tj_prim_func_t *one_block(tj_arena_t *a, int which) {
  int64_t dims[2] = {4, 4}, d1[1] = {4};
  const tj_buffer_t *A = fi_buf(a, "A", TJ_F32, 2, dims), *B = fi_buf(a, "B", TJ_F32, 1, d1),
                    *C = fi_buf(a, "C", TJ_F32, 2, dims);
  const tj_tir_expr_t *iv[2] = {tj_tir_var(a, "i", TJ_I64), tj_tir_var(a, "j", TJ_I64)};
  const tj_tir_expr_t *bj = tj_tir_load(a, B, 1, &iv[1]);
  const tj_tir_expr_t *ji[2] = {iv[1], iv[0]};
  const tj_tir_expr_t *val = which == 0   ? bj
                             : which == 1 ? tj_tir_binary(a, TJ_TIR_ADD, tj_tir_load(a, A, 2, iv), bj)
                                          : tj_tir_load(a, A, 2, ji);
  tj_buffer_region_t w = fi_region(a, C, 2, iv);
  fi_block_spec_t s = {"T", 2, dims, "SS", iv, 0, 1, NULL, &w, NULL, tj_tir_store(a, C, 2, iv, val)};
  const tj_tir_stmt_t *st = fi_block(a, &s);
  const tj_buffer_t *bufs[3] = {A, B, C};
  return fi_prim(a, 3, bufs, 0, NULL, 1, &st, true);
}

START_TEST(broadcast_elemwise_injective_pairs) {
  tj_arena_t *a = tj_arena_create();
  ck_assert_int_eq(pattern_of(one_block(a, 0)), TJ_PATTERN_BROADCAST);
  ck_assert_int_eq(pattern_of(one_block(a, 1)), TJ_PATTERN_ELEMWISE);
  ck_assert_int_eq(pattern_of(one_block(a, 2)), TJ_PATTERN_INJECTIVE);
  tj_arena_free(a);
}
END_TEST

/* sum over k: CommReduce; the same followed by an elementwise output block that
 * reads the sum: OutEWiseFusable (softmax / layer_norm shape). */
static const tj_prim_func_t *reduce_func(tj_arena_t *a, bool with_epilogue) {
  int64_t d2[2] = {4, 8}, d1[1] = {4};
  const tj_buffer_t *A = fi_buf(a, "A", TJ_F32, 2, d2), *S = fi_buf(a, "S", TJ_F32, 1, d1),
                    *O = fi_buf(a, "O", TJ_F32, 2, d2);
  const tj_buffer_t *sum = with_epilogue ? fi_buf(a, "sum", TJ_F32, 1, d1) : S;
  const tj_tir_expr_t *iv[2] = {tj_tir_var(a, "i", TJ_I64), tj_tir_var(a, "k", TJ_I64)};
  const tj_tir_expr_t *val = tj_tir_binary(a, TJ_TIR_ADD, tj_tir_load(a, sum, 1, iv), tj_tir_load(a, A, 2, iv));
  tj_buffer_region_t w = fi_region(a, sum, 1, iv);
  fi_block_spec_t s = {"sum", 2, d2, "SR", iv, 0, 1, NULL, &w, tj_tir_store(a, sum, 1, iv, tj_tir_float(a, TJ_F32, 0)),
                       tj_tir_store(a, sum, 1, iv, val)};
  const tj_tir_stmt_t *st[2] = {fi_block(a, &s), NULL};
  const tj_buffer_t *bufs[3] = {A, S, O};
  if (!with_epilogue) return fi_prim(a, 2, bufs, 0, NULL, 1, st, true);
  const tj_tir_expr_t *jv[2] = {tj_tir_var(a, "i", TJ_I64), tj_tir_var(a, "j", TJ_I64)};
  const tj_tir_expr_t *v2 = tj_tir_binary(a, TJ_TIR_DIV, tj_tir_load(a, A, 2, jv), tj_tir_load(a, sum, 1, jv));
  tj_buffer_region_t w2 = fi_region(a, O, 2, jv);
  fi_block_spec_t s2 = {"out", 2, d2, "SS", jv, 0, 1, NULL, &w2, NULL, tj_tir_store(a, O, 2, jv, v2)};
  st[1] = fi_block(a, &s2);
  const tj_buffer_t *outer[2] = {A, O};
  return fi_prim(a, 2, outer, 1, &sum, 2, st, true);
}

START_TEST(reductions) {
  tj_arena_t *a = tj_arena_create();
  ck_assert_int_eq(pattern_of(reduce_func(a, false)), TJ_PATTERN_COMM_REDUCE);
  ck_assert_int_eq(pattern_of(reduce_func(a, true)), TJ_PATTERN_OUT_EWISE_FUSABLE);
  tj_arena_free(a);
}
END_TEST

START_TEST(block_without_store_is_opaque) {
  tj_arena_t *a = tj_arena_create();
  int64_t dims[1] = {4};
  const tj_buffer_t *A = fi_buf(a, "A", TJ_F32, 1, dims);
  const tj_tir_expr_t *iv[1] = {tj_tir_var(a, "i", TJ_I64)};
  fi_block_spec_t s = {"call", 1, dims, "S", iv, 0, 0, NULL, NULL, NULL,
                       tj_tir_evaluate(a, tj_tir_call(a, TJ_I32, "tir.call_packed", 0, NULL))};
  const tj_tir_stmt_t *st = fi_block(a, &s);
  ck_assert_int_eq(pattern_of(fi_prim(a, 1, &A, 0, NULL, 1, &st, true)), TJ_PATTERN_OPAQUE);
  tj_arena_free(a);
}
END_TEST

START_TEST(pass_adds_attr_and_keeps_nonzero_attr) {
  tj_arena_t *a = tj_arena_create();
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, a);
  tj_prim_func_t *kept = TJ_ARENA_NEW(a, tj_prim_func_t);
  *kept = *fi_relu(a, TJ_F32, 4, 4, "x", "y", true);
  kept->attrs = tj_attrs_set(a, kept->attrs, "op_pattern", tj_attr_int(8));
  tj_func_entry_t funcs[2] = {{.name = "relu", .is_prim = true, .prim = fi_relu(a, TJ_F32, 4, 4, "x", "y", true)},
                              {.name = "kept", .is_prim = true, .prim = kept}};
  tj_module_t *m = tj_module_new(a, 2, funcs, NULL);
  const tj_module_t *out;
  TU_OK(tj_annotate_tir_op_pattern(&ctx, m, &out));
  const tj_prim_func_t *relu = tj_module_find_prim(out, "relu");
  ck_assert_int_eq(tj_attrs_get_int(relu->attrs, "op_pattern", -1), 0);
  ck_assert_int_eq(tj_attrs_get_int(relu->attrs, "tir.noalias", -1), 1); /* existing attrs kept */
  ck_assert_int_eq(tj_attrs_get_int(tj_module_find_prim(out, "kept")->attrs, "op_pattern", -1), 8);
  ck_assert_int_eq(tj_attrs_get_int(tj_module_find_prim(m, "relu")->attrs, "op_pattern", -1), -1); /* input untouched */
  tj_arena_free(a);
}
END_TEST

START_TEST(seed_patterns) {
  if (!fi_parser_available()) return;
  tj_arena_t *a = tj_arena_create();
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, a);
  tj_module_t *m;
  TU_OK(tj_parse_file(a, tu_project_path(TU_SEED_MODEL), &m));
  const tj_module_t *out;
  TU_OK(tj_annotate_tir_op_pattern(&ctx, m, &out));
  ck_assert_int_eq(tj_attrs_get_int(tj_module_find_prim(out, "conv2d2")->attrs, "op_pattern", -1), 4);
  ck_assert_int_eq(tj_attrs_get_int(tj_module_find_prim(out, "relu")->attrs, "op_pattern", -1), 0);
  ck_assert_int_eq(tj_attrs_get_int(tj_module_find_prim(out, "layer_norm")->attrs, "op_pattern", -1), 4);
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("annotate_tir_op_pattern");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, relu_is_elemwise);
  tcase_add_test(tc, add_is_elemwise);
  tcase_add_test(tc, matmul_is_out_ewise_fusable);
  tcase_add_test(tc, broadcast_elemwise_injective_pairs);
  tcase_add_test(tc, reductions);
  tcase_add_test(tc, block_without_store_is_opaque);
  tcase_add_test(tc, pass_adds_attr_and_keeps_nonzero_attr);
  tcase_add_test(tc, seed_patterns);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
