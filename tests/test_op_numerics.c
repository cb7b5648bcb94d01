/* Operators end to end: parse, passes, JIT and run through the public API, checked
 * against values computed independently here with libm in double precision. One
 * test per operator; shapes with an odd inner extent so that vector tails run. */
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "tvmjit.h"

#define ROWS 4
#define COLS 37
#define N (ROWS * COLS)

/* R.exp of a float32 and a float16 tensor (one kernel each), and exp fused with a
 * multiply (FuseOps/FuseTIR put both blocks into one kernel). */
static const char *k_exp_model =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((4, 37), dtype=\"float32\"), h: R.Tensor((4, 37), dtype=\"float16\")):\n"
    "        with R.dataflow():\n"
    "            a = R.exp(x)\n"
    "            b = R.exp(h)\n"
    "            e = R.exp(x)\n"
    "            c = R.multiply(e, x)\n"
    "            gv = (a, b, c)\n"
    "            R.output(gv)\n"
    "        return gv\n";

/* Inputs: a ramp over [-30, 30] and the edge cases of exp. */
static void exp_inputs(float *x) {
  for (int i = 0; i < N; i++) x[i] = -30.0f + 60.0f * (float)i / (float)(N - 1);
  const float edges[] = {0.0f, -0.0f, 1.0f, -1.0f, 88.5f, 89.0f, -87.0f, -104.0f, 1e-8f, -1e-8f};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) x[i * 13] = edges[i];
}

/* |got - want| within `rel` of |want| (or `abs_tol` near zero); infinities exact. */
static void expect_close(const char *what, int i, double in, double got, double want, double rel, double abs_tol) {
  if (isinf(want)) {
    ck_assert_msg(got == want, "%s[%d]: exp(%g) = %g, want %g", what, i, in, got, want);
    return;
  }
  double err = fabs(got - want);
  ck_assert_msg(err <= rel * fabs(want) || err <= abs_tol, "%s[%d]: exp(%.9g) = %.9g, want %.9g (error %.3g)", what,
                i, in, got, want, err);
}

static tvmjit_tensor_t *converted(const tvmjit_tensor_t *src, tvmjit_dtype_t dtype) {
  tvmjit_tensor_t *dst = NULL;
  ck_assert_ptr_null(tvmjit_tensor_new(dtype, tvmjit_tensor_ndim(src), tvmjit_tensor_shape(src), &dst));
  ck_assert_ptr_null(tvmjit_tensor_convert(src, dst));
  return dst;
}

static void run_exp(const char *passes) {
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_module_options_t opts;
  tvmjit_module_options_init(&opts);
  opts.passes = passes;
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "exp.rx", k_exp_model, strlen(k_exp_model), &opts, &mod);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));

  float x[N];
  exp_inputs(x);
  int64_t shape[2] = {ROWS, COLS};
  tvmjit_tensor_t *xt = NULL, *outs[3] = {NULL, NULL, NULL};
  ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, shape, x, &xt));
  tvmjit_tensor_t *ht = converted(xt, TVMJIT_FLOAT16);
  const tvmjit_tensor_t *ins[2] = {xt, ht};
  st = tvmjit_function_call(fn, 2, ins, 3, outs);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");

  const float *a = tvmjit_tensor_data(outs[0]), *c = tvmjit_tensor_data(outs[2]);
  tvmjit_tensor_t *h32 = converted(ht, TVMJIT_FLOAT32), *b32 = converted(outs[1], TVMJIT_FLOAT32);
  const float *hin = tvmjit_tensor_data(h32), *b = tvmjit_tensor_data(b32);
  for (int i = 0; i < N; i++) {
    /* float32: a few ulps (2^-21) of the double result rounded to float32 (which
     * overflows to inf where float32 does); subnormal results to 1e-44 absolute. */
    double want = exp((double)x[i]);
    expect_close("exp f32", i, x[i], a[i], (float)want, 0x1p-21, 1e-44);
    expect_close("exp*x f32", i, x[i], c[i], (float)((float)want * x[i]), 0x1p-20, 1e-44);
    /* float16 computes in float16 (as topi): one half ulp of rounding (2^-10) plus the
     * input's own rounding, measured from the float16 input actually passed. */
    double want16 = exp((double)hin[i]);
    expect_close("exp f16", i, hin[i], b[i], want16 >= 65520.0 ? INFINITY : want16, 0x1p-9, 0x1p-24);
  }
  tvmjit_tensor_free(b32);
  tvmjit_tensor_free(h32);
  for (int i = 0; i < 3; i++) tvmjit_tensor_free(outs[i]);
  tvmjit_tensor_free(ht);
  tvmjit_tensor_free(xt);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
}

START_TEST(exp_matches_libm_through_legalize_ops) { run_exp("LegalizeOps"); }
END_TEST

START_TEST(exp_matches_libm_through_the_default_pipeline) { run_exp("default"); }
END_TEST

int main(void) {
  Suite *s = suite_create("op_numerics");
  TCase *tc = tcase_create("unary");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, exp_matches_libm_through_legalize_ops);
  tcase_add_test(tc, exp_matches_libm_through_the_default_pipeline);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
