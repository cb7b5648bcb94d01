/* BindParams + FoldConstant: the structure after folding (weights become constants,
 * the work on them alone leaves main) and the numbers of a bound model against the
 * unbound one and an independent reference. */
#include <math.h>
#include <string.h>

#include "api/driver.h"
#include "ir/relax.h"
#include "support/alloc.h"
#include "testutil.h"
#include "tvmjit.h"

/* y = (x @ w^T) / sqrt(var + 1e-5) * gamma: a transposed weight and batch_norm's
 * scale, the two things models recompute every call without folding. */
static const char *model_text =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((4, 8), dtype=\"float32\"), w: R.Tensor((6, 8), dtype=\"float32\"),\n"
    "             var: R.Tensor((6,), dtype=\"float32\"), gamma: R.Tensor((6,), dtype=\"float32\"))"
    " -> R.Tensor((4, 6), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            lv = R.permute_dims(w, axes=[1, 0])\n"
    "            lv1 = R.matmul(x, lv)\n"
    "            lv2 = R.add(var, R.const(1e-5, \"float32\"))\n"
    "            lv3 = R.sqrt(lv2)\n"
    "            lv4 = R.divide(lv1, lv3)\n"
    "            gv = R.multiply(lv4, gamma)\n"
    "            R.output(gv)\n"
    "        return gv\n";

static float x_data[4 * 8], w_data[6 * 8], var_data[6], gamma_data[6];
static const int64_t x_shape[] = {4, 8}, w_shape[] = {6, 8}, v_shape[] = {6};

static void fill_data(void) {
  for (int i = 0; i < 32; i++) x_data[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
  for (int i = 0; i < 48; i++) w_data[i] = (float)((i * 5) % 13) / 6.0f - 1.0f;
  for (int i = 0; i < 6; i++) var_data[i] = 0.5f + 0.25f * (float)i, gamma_data[i] = 1.0f - 0.3f * (float)i;
}

static tj_bound_param_t bound(const char *name, int ndim, const int64_t *shape, const float *data, size_t n) {
  return (tj_bound_param_t){name, tj_dtype_make(TJ_DT_FLOAT, 32, 1), ndim, shape, data, n * sizeof(float)};
}

/* The callee names of main's call_tir bindings, and main's constants. */
static int count_calls(const tj_rx_func_t *f, const char *prefix, int *out_constants) {
  int n = 0, constants = 0;
  const tj_rx_expr_t *body = f->body;
  for (int b = 0; b < body->seq.n_blocks; b++)
    for (int i = 0; i < body->seq.blocks[b].n_bindings; i++) {
      const tj_rx_expr_t *v = body->seq.blocks[b].bindings[i].value;
      tj_call_tir_view_t view;
      if (!tj_rx_as_call_tir(v, &view)) continue;
      if (!prefix || strncmp(view.callee->var.name, prefix, strlen(prefix)) == 0) n++;
      for (int a = 0; a < view.n_args; a++) constants += view.args[a]->kind == TJ_RX_CONSTANT;
    }
  if (out_constants) *out_constants = constants;
  return n;
}

START_TEST(folding_moves_the_weight_work_out_of_main) {
  fill_data();
  long live_before = tj_alloc_live();
  tj_arena_t *arena = tj_arena_create();
  tj_module_t *parsed;
  TU_OK(tj_driver_parse(arena, "fold.rx", model_text, strlen(model_text), &parsed));
  tj_bound_param_t params[] = {bound("w", 2, w_shape, w_data, 48), bound("var", 1, v_shape, var_data, 6),
                               bound("gamma", 1, v_shape, gamma_data, 6)};
  /* The interpreter evaluates (eval NULL): the pass does not depend on the JIT. */
  tj_driver_passes_t o = {.passes = "default", .n_bound = 3, .bound = params};
  const tj_module_t *legal;
  tj_driver_passes_t unfused = o;
  unfused.passes = "LegalizeOps,AnnotateTIROpPattern,FoldConstant,DeadCodeElimination";
  TU_OK(tj_driver_run_passes(arena, &unfused, parsed, &legal, NULL));
  const tj_rx_func_t *main_fn = tj_module_find_relax(legal, "main");
  ck_assert_int_eq(main_fn->n_params, 1); /* only x is left */
  ck_assert_str_eq(main_fn->params[0]->var.name, "x");
  int constants = 0;
  /* transpose, add and sqrt ran at compile time; matmul, divide, multiply remain. */
  ck_assert_int_eq(count_calls(main_fn, "transpose", NULL), 0);
  ck_assert_int_eq(count_calls(main_fn, "sqrt", NULL), 0);
  ck_assert_int_eq(count_calls(main_fn, NULL, &constants), 3);
  ck_assert_int_eq(constants, 3); /* w^T, sqrt(var + eps), gamma */
  /* The folded sqrt holds the value, computed independently here. */
  const tj_rx_expr_t *sqrt_const = NULL;
  const tj_rx_expr_t *body = main_fn->body;
  for (int i = 0; i < body->seq.blocks[0].n_bindings; i++) {
    tj_call_tir_view_t v;
    if (tj_rx_as_call_tir(body->seq.blocks[0].bindings[i].value, &v) && strncmp(v.callee->var.name, "divide", 6) == 0)
      sqrt_const = v.args[1];
  }
  ck_assert_ptr_nonnull(sqrt_const);
  ck_assert_int_eq(sqrt_const->kind, TJ_RX_CONSTANT);
  const float *s = sqrt_const->constant.data;
  for (int i = 0; i < 6; i++) ck_assert_float_eq_tol(s[i], sqrt((double)var_data[i] + 1e-5), 1e-6);
  /* The whole default pipeline after binding still fuses and lowers. */
  const tj_module_t *lowered;
  TU_OK(tj_driver_run_passes(arena, &o, parsed, &lowered, NULL));
  ck_assert_int_eq(tj_module_find_relax(lowered, "main")->n_params, 1);
  /* The folded values are the arena's (taken, not copied): still the same after the
   * second pipeline, and freed with the arena, none left behind. */
  for (int i = 0; i < 6; i++) ck_assert_float_eq_tol(s[i], sqrt((double)var_data[i] + 1e-5), 1e-6);
  tj_arena_free(arena);
  ck_assert_int_eq(tj_alloc_live(), live_before);
}
END_TEST

static tvmjit_tensor_t *wrap(int ndim, const int64_t *shape, float *data) {
  tvmjit_tensor_t *t = NULL;
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, ndim, shape, data, &t));
  return t;
}

static tvmjit_status_t *load(tvmjit_instance_t *inst, const char *const *names, tvmjit_tensor_t **tensors, int n,
                             int skip_unknown, tvmjit_module_t **out) {
  tvmjit_module_options_t o;
  tvmjit_module_options_init(&o);
  o.n_bind_params = n;
  o.bind_param_names = names;
  o.bind_params = (const tvmjit_tensor_t *const *)tensors;
  o.bind_params_skip_unknown = skip_unknown;
  return tvmjit_module_load_string(inst, "fold.rx", model_text, strlen(model_text), &o, out);
}

static float *call(tvmjit_module_t *m, int n, tvmjit_tensor_t **inputs, tvmjit_tensor_t **out) {
  tvmjit_function_t *fn;
  ck_assert_ptr_null(tvmjit_module_get_function(m, "main", &fn));
  ck_assert_int_eq(tvmjit_function_num_inputs(fn), n);
  tvmjit_status_t *st = tvmjit_function_call(fn, n, (const tvmjit_tensor_t *const *)inputs, 1, out);
  ck_assert_msg(!st, "%s", st ? tvmjit_status_message(st) : "");
  return tvmjit_tensor_data(*out);
}

START_TEST(bound_model_computes_what_the_unbound_one_does) {
  fill_data();
  tvmjit_instance_t *inst;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_tensor_t *x = wrap(2, x_shape, x_data), *w = wrap(2, w_shape, w_data), *var = wrap(1, v_shape, var_data),
                  *gamma = wrap(1, v_shape, gamma_data);
  tvmjit_module_t *plain, *folded;
  ck_assert_ptr_null(tvmjit_module_load_string(inst, "fold.rx", model_text, strlen(model_text), NULL, &plain));
  const char *names[] = {"gamma", "w", "var"};
  tvmjit_tensor_t *weights[] = {gamma, w, var};
  tvmjit_status_t *st = load(inst, names, weights, 3, 0, &folded);
  ck_assert_msg(!st, "%s", st ? tvmjit_status_message(st) : "");
  tvmjit_tensor_t *all[] = {x, w, var, gamma}, *y0, *y1;
  const float *a = call(plain, 4, all, &y0), *b = call(folded, 1, &x, &y1);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 6; j++) {
      double ref = 0;
      for (int k = 0; k < 8; k++) ref += (double)x_data[i * 8 + k] * w_data[j * 8 + k];
      ref = ref / sqrt((double)var_data[j] + 1e-5) * gamma_data[j];
      ck_assert_float_eq_tol(a[i * 6 + j], ref, 1e-5);
      ck_assert_float_eq_tol(b[i * 6 + j], a[i * 6 + j], 1e-6);
    }
  tvmjit_tensor_free(y0);
  tvmjit_tensor_free(y1);
  tvmjit_module_free(plain);
  tvmjit_module_free(folded);
  tvmjit_tensor_free(x), tvmjit_tensor_free(w), tvmjit_tensor_free(var), tvmjit_tensor_free(gamma);
  tvmjit_instance_free(inst);
}
END_TEST

static void expect_error(tvmjit_status_t *st, tvmjit_code_t code, const char *needle) {
  ck_assert_msg(st != NULL, "expected an error containing '%s'", needle);
  ck_assert_int_eq(tvmjit_status_code(st), code);
  ck_assert_msg(strstr(tvmjit_status_message(st), needle), "'%s' lacks '%s'", tvmjit_status_message(st), needle);
  tvmjit_status_free(st);
}

START_TEST(bad_bindings_are_clear_errors) {
  fill_data();
  tvmjit_instance_t *inst;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_tensor_t *w = wrap(2, w_shape, w_data), *v = wrap(1, v_shape, var_data);
  tvmjit_module_t *m = NULL;
  const char *wrong_shape[] = {"var", "w"};
  tvmjit_tensor_t *swapped[] = {w, v};
  expect_error(load(inst, wrong_shape, swapped, 2, 0, &m), TVMJIT_INVALID_ARGUMENT, "parameter 'w' of 'main' is float32[6, 8] but the tensor given for it is float32[6]");
  const char *unknown[] = {"w", "beta"};
  tvmjit_tensor_t *two[] = {w, v};
  expect_error(load(inst, unknown, two, 2, 0, &m), TVMJIT_INVALID_ARGUMENT, "no parameter 'beta'");
  /* A whole checkpoint: names that are no parameter are skipped when asked. */
  tvmjit_module_t *ok = NULL;
  ck_assert_ptr_null(load(inst, unknown, two, 2, 1, &ok));
  tvmjit_function_t *fn;
  ck_assert_ptr_null(tvmjit_module_get_function(ok, "main", &fn));
  ck_assert_int_eq(tvmjit_function_num_inputs(fn), 3); /* x, var, gamma */
  tvmjit_module_free(ok);
  tvmjit_tensor_free(w), tvmjit_tensor_free(v);
  tvmjit_instance_free(inst);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fold_constant");
  TCase *tc = tcase_create("bind_and_fold");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, folding_moves_the_weight_work_out_of_main);
  tcase_add_test(tc, bound_model_computes_what_the_unbound_one_does);
  tcase_add_test(tc, bad_bindings_are_clear_errors);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
