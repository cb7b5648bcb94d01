/* transforms/to_mixed_precision: the regression tests for the kNever bug (TVM's own
 * cases for the pass are run by `tvmjit conformance`, tests/cli/conformance.sh) (docs/semantics.md §1.5, §8.3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/text/parse.h"
#include "ir/text/print.h"
#include "ir/struct_equal.h"
#include "ir/verify/verify.h"
#include "support/alloc.h"
#include "project.h"
#include "testutil.h"
#include "transforms/pass_manager.h"

static tj_arena_t *arena;
static tj_pass_context_t ctx;

static void setup(void) {
  arena = tj_arena_create();
  tj_pass_context_init(&ctx, arena);
}

static void teardown(void) { tj_arena_free(arena); }

static const tj_module_t *parse_text(const char *text) {
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(arena, "test.rx", text, strlen(text), &m));
  return m;
}

static const tj_module_t *run(const char *pipeline, const tj_module_t *in, bool verify_each) {
  tj_pipeline_t p;
  TU_OK(tj_pipeline_parse(arena, pipeline, &p));
  tj_pass_instruments_t ins = {.verify_each = verify_each};
  const tj_module_t *out = NULL;
  TU_OK(tj_pipeline_run(&ctx, &p, &ins, in, &out, NULL));
  return out;
}

static void assert_struct_equal(const tj_module_t *got, const tj_module_t *want) {
  char why[512] = "";
  if (tj_struct_equal_module(got, want, why, sizeof why)) return;
  char *text = tj_print_module(got);
  ck_abort_msg("modules differ: %s\n--- got:\n%s", why, text ? text : "?");
}

/* ---- regressions ---- */

START_TEST(seed_comes_out_unchanged) {
  tj_module_t *seed = NULL;
  TU_OK(tj_parse_file(arena, tu_project_path(TU_SEED_MODEL), &seed));
  const tj_module_t *out = run("ToMixedPrecision", seed, true);
  assert_struct_equal(out, seed);
  out = run("ToMixedPrecision(out_dtype=\"float16\")", seed, true);
  assert_struct_equal(out, seed);
}
END_TEST

/* A kNever call_tir consuming the float16-stored output of a converted conv2d: the
 * argument is cast back to float32, the callee GlobalVar passes through untouched. */
static const char *const conv_then_call_tir =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def add_one(a: T.Buffer((T.int64(1), T.int64(4), T.int64(6), T.int64(6)), \"float32\"), "
    "out: T.Buffer((T.int64(1), T.int64(4), T.int64(6), T.int64(6)), \"float32\")):\n"
    "        T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "        for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(4), T.int64(6), T.int64(6)):\n"
    "            with T.block(\"add_one\"):\n"
    "                v0, v1, v2, v3 = T.axis.remap(\"SSSS\", [i0, i1, i2, i3])\n"
    "                out[v0, v1, v2, v3] = a[v0, v1, v2, v3] + T.float32(1)\n"
    "\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 3, 8, 8), \"float32\"), w: R.Tensor((4, 3, 3, 3), \"float32\")):\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            lv = R.nn.conv2d(x, w)\n"
    "            gv = R.call_tir(cls.add_one, (lv,), out_sinfo=R.Tensor((1, 4, 6, 6), \"float32\"))\n"
    "            R.output(gv)\n"
    "        return gv\n";

static const char *const conv_then_call_tir_expected =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def add_one(a: T.Buffer((T.int64(1), T.int64(4), T.int64(6), T.int64(6)), \"float32\"), "
    "out: T.Buffer((T.int64(1), T.int64(4), T.int64(6), T.int64(6)), \"float32\")):\n"
    "        T.func_attr({\"tir.noalias\": T.bool(True)})\n"
    "        for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(4), T.int64(6), T.int64(6)):\n"
    "            with T.block(\"add_one\"):\n"
    "                v0, v1, v2, v3 = T.axis.remap(\"SSSS\", [i0, i1, i2, i3])\n"
    "                out[v0, v1, v2, v3] = a[v0, v1, v2, v3] + T.float32(1)\n"
    "\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 3, 8, 8), \"float32\"), w: R.Tensor((4, 3, 3, 3), \"float32\")) -> R.Tensor((1, 4, 6, 6), \"float32\"):\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            lv = R.astype(x, dtype=\"float16\")\n"
    "            lv1 = R.astype(w, dtype=\"float16\")\n"
    "            lv2 = R.nn.conv2d(lv, lv1, out_dtype=\"float32\")\n"
    "            lv_1 = R.astype(lv2, dtype=\"float16\")\n"
    "            lv3 = R.astype(lv_1, dtype=\"float32\")\n"
    "            gv = R.call_tir(cls.add_one, (lv3,), out_sinfo=R.Tensor((1, 4, 6, 6), \"float32\"))\n"
    "            R.output(gv)\n"
    "        return gv\n";

START_TEST(knever_call_tir_gets_its_original_dtype_back) {
  const tj_module_t *in = parse_text(conv_then_call_tir);
  const tj_module_t *out = run("ToMixedPrecision", in, true);
  assert_struct_equal(out, parse_text(conv_then_call_tir_expected));
  /* The PrimFunc is shared, not copied: the pass never touches PrimFuncs. */
  ck_assert_ptr_eq(tj_module_find_prim(out, "add_one"), tj_module_find_prim(in, "add_one"));
}
END_TEST

/* Two chained float16 call_tirs: TVM's own regression test for #17254. */
static const char *const f16_call_tirs =
    "@I.ir_module\n"
    "class Before:\n"
    "    @R.function\n"
    "    def main(A: R.Tensor([64], \"float16\")):\n"
    "        cls = Before\n"
    "        with R.dataflow():\n"
    "            B = R.call_tir(cls.tir_identity, [A], out_sinfo=R.Tensor([64], \"float16\"))\n"
    "            C = R.call_tir(cls.tir_identity, [B], out_sinfo=R.Tensor([64], \"float16\"))\n"
    "            R.output(C)\n"
    "        return C\n"
    "\n"
    "    @T.prim_func\n"
    "    def tir_identity(Input: T.Buffer(64, \"float16\"), Output: T.Buffer(64, \"float16\")):\n"
    "        for i in range(64):\n"
    "            with T.block(\"copy\"):\n"
    "                vi = T.axis.remap(\"S\", [i])\n"
    "                Output[vi] = Input[vi]\n";

/* What ToMixedPrecision produced before PR #17263: float32 arguments reaching the
 * float16 buffers of tir_identity. */
static const char *const f16_call_tirs_prefix_output =
    "@I.ir_module\n"
    "class Before:\n"
    "    @R.function\n"
    "    def main(A: R.Tensor([64], \"float16\")):\n"
    "        cls = Before\n"
    "        with R.dataflow():\n"
    "            lv = R.astype(A, dtype=\"float32\")\n"
    "            B = R.call_tir(cls.tir_identity, [lv], out_sinfo=R.Tensor([64], \"float16\"))\n"
    "            lv1 = R.astype(B, dtype=\"float32\")\n"
    "            C = R.call_tir(cls.tir_identity, [lv1], out_sinfo=R.Tensor([64], \"float16\"))\n"
    "            R.output(C)\n"
    "        return C\n"
    "\n"
    "    @T.prim_func\n"
    "    def tir_identity(Input: T.Buffer(64, \"float16\"), Output: T.Buffer(64, \"float16\")):\n"
    "        for i in range(64):\n"
    "            with T.block(\"copy\"):\n"
    "                vi = T.axis.remap(\"S\", [i])\n"
    "                Output[vi] = Input[vi]\n";

static tj_status_t *prefix_pass(const tj_pass_context_t *c, const tj_module_t *in, void *user, const tj_module_t **out) {
  const char *text = user;
  tj_module_t *m = NULL;
  TJ_RETURN_IF_ERROR(tj_parse_module(c->arena, "prefix.rx", text, strlen(text), &m));
  *out = m;
  return NULL;
}

START_TEST(verify_each_rejects_the_prefix_output) {
  const tj_module_t *in = parse_text(f16_call_tirs);
  /* The fixed pass: unchanged, and the verifier is happy. */
  const tj_module_t *out = run("ToMixedPrecision", in, true);
  assert_struct_equal(out, in);
  /* The pre-fix behaviour, replayed as a custom pass: caught right after it runs. */
  tj_pass_t prefix = {.kind = TJ_PASS_CUSTOM, .name = "ToMixedPrecision(pre-#17263)", .fn = prefix_pass,
                      .user = (void *)f16_call_tirs_prefix_output, .fuse_opt_level = -1};
  tj_pipeline_t p = {1, &prefix};
  tj_pass_instruments_t ins = {.verify_each = true};
  const tj_module_t *bad = NULL;
  tj_status_t *s = tj_pipeline_run(&ctx, &p, &ins, in, &bad, NULL);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_VERIFY);
  const char *text = tj_status_text(s);
  ck_assert_msg(strstr(text, "after pass 'ToMixedPrecision(pre-#17263)': ") == text, "%s", text);
  ck_assert_msg(strstr(text, "tir_identity") && strstr(text, "float32"), "%s", text);
  tj_status_free(s);
  ck_assert_ptr_null(bad);
}
END_TEST

START_TEST(fp16_inputs_change_the_signature) {
  const tj_module_t *in = parse_text(
      "@I.ir_module\n"
      "class Module:\n"
      "    @R.function\n"
      "    def main(x: R.Tensor((2, 3), \"float32\"), y: R.Tensor((2, 3), \"float32\")) -> R.Tensor((2, 3), \"float32\"):\n"
      "        with R.dataflow():\n"
      "            z = R.add(x, y)\n"
      "            R.output(z)\n"
      "        return z\n");
  const tj_module_t *out = run("ToMixedPrecision(fp16_input_names=[\"x\", \"y\"])", in, true);
  assert_struct_equal(out, parse_text(
      "@I.ir_module\n"
      "class Module:\n"
      "    @R.function\n"
      "    def main(x: R.Tensor((2, 3), \"float16\"), y: R.Tensor((2, 3), \"float16\")) -> R.Tensor((2, 3), \"float32\"):\n"
      "        with R.dataflow():\n"
      "            lv = R.add(x, y)\n"
      "            z = R.astype(lv, dtype=\"float32\")\n"
      "            R.output(z)\n"
      "        return z\n"));
}
END_TEST

/* storage_dtype="bfloat16" (tvmjit's option): the conv reads bfloat16 and accumulates in
 * float32 (out_dtype), the relu that follows runs in bfloat16, and no float16 appears. */
static const char *const conv_relu_f32 =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 4, 8, 8), dtype=\"float32\"), w: R.Tensor((4, 4, 3, 3), dtype=\"float32\")) -> R.Tensor((1, 4, 6, 6), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            c = R.nn.conv2d(x, w)\n"
    "            y = R.nn.relu(c)\n"
    "            R.output(y)\n"
    "        return y\n";

START_TEST(bfloat16_storage_with_float32_accumulation) {
  const tj_module_t *out = run("ToMixedPrecision(storage_dtype=\"bfloat16\")", parse_text(conv_relu_f32), true);
  char *text = tj_print_module(out);
  ck_assert_ptr_nonnull(strstr(text, "R.astype(x, dtype=\"bfloat16\")"));
  ck_assert_ptr_nonnull(strstr(text, "R.astype(w, dtype=\"bfloat16\")"));
  ck_assert_ptr_nonnull(strstr(text, "out_dtype=\"float32\""));
  ck_assert_msg(strstr(text, "R.nn.relu(") && strstr(text, "R.Tensor((1, 4, 6, 6), dtype=\"bfloat16\") = R.nn.relu("),
                "relu should run in bfloat16:\n%s", text);
  ck_assert_msg(!strstr(text, "\"float16\""), "no float16 expected:\n%s", text);
  tj_free(text);
  tj_pipeline_t p;
  TU_OK(tj_pipeline_parse(arena, "ToMixedPrecision(out_dtype=\"float16\", storage_dtype=\"bfloat16\")", &p));
  const tj_module_t *o = NULL;
  tj_status_t *s = tj_pipeline_run(&ctx, &p, NULL, parse_text(conv_relu_f32), &o, NULL);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_text(s), "out_dtype must be \"float32\""));
  tj_status_free(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("to_mixed_precision");
  TCase *tc = tcase_create("pass");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, seed_comes_out_unchanged);
  tcase_add_test(tc, knever_call_tir_gets_its_original_dtype_back);
  tcase_add_test(tc, verify_each_rejects_the_prefix_output);
  tcase_add_test(tc, fp16_inputs_change_the_signature);
  tcase_add_test(tc, bfloat16_storage_with_float32_accumulation);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
