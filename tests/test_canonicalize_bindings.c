/* CanonicalizeBindings (the binding part): a get-item of a known tuple becomes the
 * field, trivial dataflow bindings go, and so the relu behind a decomposed batch_norm
 * joins the conv's fused function; outputs unchanged. */
#include <string.h>

#include "api/driver.h"
#include "ir/relax.h"
#include "project.h"
#include "testutil.h"
#include "tvmjit.h"

static const char *decompose = "DecomposeOpsForInference";

static const tj_module_t *run(tj_arena_t *a, const char *passes) {
  tj_module_t *parsed;
  TU_OK(tj_driver_parse(a, tu_project_path("tests/models/conv_batch_norm.rx"), NULL, 0, &parsed));
  tj_driver_passes_t o = {.passes = passes};
  const tj_module_t *out;
  TU_OK(tj_driver_run_passes(a, &o, parsed, &out, NULL));
  return out;
}

/* main's bindings: how many, and the callee of each call (GlobalVar name or op). */
static int main_bindings(const tj_module_t *m, const char **callees, int max) {
  const tj_rx_expr_t *body = tj_module_find_relax(m, "main")->body;
  int n = 0;
  for (int b = 0; b < body->seq.n_blocks; b++)
    for (int i = 0; i < body->seq.blocks[b].n_bindings; i++, n++) {
      const tj_rx_expr_t *v = body->seq.blocks[b].bindings[i].value;
      const char *name = v->kind == TJ_RX_CALL && v->call.callee->kind == TJ_RX_GLOBAL_VAR ? v->call.callee->var.name
                         : v->kind == TJ_RX_CALL && v->call.callee->kind == TJ_RX_OP    ? v->call.callee->op.name
                                                                                        : tj_rx_expr_kind_name(v->kind);
      if (n < max) callees[n] = name;
    }
  return n;
}

START_TEST(get_item_of_the_batch_norm_tuple_is_its_field) {
  tj_arena_t *a = tj_arena_create();
  const char *callees[16];
  /* DecomposeOpsForInference leaves lv1 = (out, mean, var); lv2 = lv1[0]. */
  const tj_module_t *m = run(a, "DecomposeOpsForInference,CanonicalizeBindings,DeadCodeElimination");
  int n = main_bindings(m, callees, 16);
  for (int i = 0; i < n; i++) {
    ck_assert_msg(strcmp(callees[i], "Tuple") && strcmp(callees[i], "TupleGetItem"), "binding %d is a %s", i,
                  callees[i]);
  }
  ck_assert_str_eq(callees[n - 1], "relax.nn.relu");
  tj_arena_free(a);
}
END_TEST

START_TEST(relu_joins_the_conv_group) {
  tj_arena_t *a = tj_arena_create();
  const char *callees[16];
  char with[512];
  snprintf(with, sizeof with, "%s,CanonicalizeBindings,DeadCodeElimination,LegalizeOps,AnnotateTIROpPattern,FuseOps",
           decompose);
  const tj_module_t *m = run(a, with);
  ck_assert_int_eq(main_bindings(m, callees, 16), 1);
  ck_assert_msg(strncmp(callees[0], "fused_conv2d", 12) == 0 && strstr(callees[0], "relu"), "%s", callees[0]);
  /* Without it, as TVM's FuseOps does too, the tuple is opaque and relu stays apart. */
  char without[512];
  snprintf(without, sizeof without, "%s,LegalizeOps,AnnotateTIROpPattern,FuseOps", decompose);
  int n = main_bindings(run(a, without), callees, 16);
  ck_assert_int_gt(n, 1);
  ck_assert_msg(strstr(callees[n - 1], "relu") && !strstr(callees[n - 1], "conv2d"), "%s", callees[n - 1]);
  tj_arena_free(a);
}
END_TEST

static float *run_model(const char *passes, tvmjit_tensor_t **out) {
  static float data[6][16 * 8 * 9];
  static const int64_t shapes[6][4] = {{1, 8, 12, 12}, {16, 8, 3, 3}, {16}, {16}, {16}, {16}};
  static const int ndims[6] = {4, 4, 1, 1, 1, 1};
  static float x[8 * 12 * 12];
  for (int i = 0; i < 8 * 12 * 12; i++) x[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
  for (int p = 1; p < 6; p++)
    for (int i = 0; i < 16 * 8 * 9; i++) data[p][i] = p == 5 ? 0.5f + (float)(i % 5) / 4 : (float)((i * 13 + p) % 11) / 10 - 0.5f;
  tvmjit_instance_t *inst;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_module_options_t o;
  tvmjit_module_options_init(&o);
  o.passes = passes;
  tvmjit_module_t *m;
  tvmjit_status_t *st = tvmjit_module_load_file(inst, tu_project_path("tests/models/conv_batch_norm.rx"), &o, &m);
  ck_assert_msg(!st, "%s", st ? tvmjit_status_message(st) : "");
  tvmjit_function_t *fn;
  ck_assert_ptr_null(tvmjit_module_get_function(m, "main", &fn));
  tvmjit_tensor_t *in[6];
  for (int p = 0; p < 6; p++) ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, ndims[p], shapes[p], p ? data[p] : x, &in[p]));
  ck_assert_ptr_null(tvmjit_function_call(fn, 6, (const tvmjit_tensor_t *const *)in, 1, out));
  for (int p = 0; p < 6; p++) tvmjit_tensor_free(in[p]);
  tvmjit_module_free(m);
  tvmjit_instance_free(inst);
  return tvmjit_tensor_data(*out);
}

START_TEST(outputs_are_unchanged) {
  tvmjit_tensor_t *y0, *y1;
  const float *a = run_model("DecomposeOpsForInference,LegalizeOps,AnnotateTIROpPattern,FuseOps,FuseTIR", &y0);
  const float *b = run_model(
      "DecomposeOpsForInference,CanonicalizeBindings,DeadCodeElimination,LegalizeOps,AnnotateTIROpPattern,FuseOps,FuseTIR",
      &y1);
  int positive = 0;
  for (int i = 0; i < 16 * 12 * 12; i++) {
    ck_assert_float_eq_tol(b[i], a[i], 1e-5f * (1.0f + (a[i] < 0 ? -a[i] : a[i])));
    positive += a[i] > 0;
  }
  ck_assert_int_gt(positive, 0); /* relu did not zero everything: the check compares something */
  tvmjit_tensor_free(y0);
  tvmjit_tensor_free(y1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("canonicalize_bindings");
  TCase *tc = tcase_create("bindings");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, get_item_of_the_batch_norm_tuple_is_its_field);
  tcase_add_test(tc, relu_joins_the_conv_group);
  tcase_add_test(tc, outputs_are_unchanged);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
