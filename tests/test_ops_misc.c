/* Operators that TVM's lowering passes introduce and scripts may write (issue 15/16):
 * relax.builtin.*, relax.memory.*, relax.vm.*, shape_of, tensor_to_shape and
 * shape_to_tensor. They parse with TVM's argument names and defaults, infer TVM's struct
 * info, print in TVM's form and parse back to an equal module; running one is a clear
 * unsupported error. */
#include <stdlib.h>
#include <string.h>

#include "ir/module.h"
#include "ir/text/parse.h"
#include "ir/text/print.h"
#include "ir/struct_equal.h"
#include "passes.h"
#include "relax_model.h"
#include "support/arena.h"
#include "testutil.h"
#include "transforms/pass_manager.h"
#include "tvmjit.h"

/* Parses `main_text`, returns its printed form (caller frees), and checks that the
 * printed form parses back to a structurally equal module. */
static char *print_roundtrip(tj_arena_t *a, const char *main_text) {
  const char *src = tu_model_source(main_text);
  tj_module_t *m = NULL, *back = NULL;
  TU_OK(tj_parse_module(a, "m.rx", src, strlen(src), &m));
  char *text = tj_print_module(m);
  ck_assert_ptr_nonnull(text);
  TU_OK(tj_parse_module(a, "printed.rx", text, strlen(text), &back));
  char why[512] = "";
  ck_assert_msg(tj_struct_equal_module(m, back, why, sizeof why), "round trip differs: %s\n%s", why, text);
  return text;
}

static void expect_in(const char *text, const char *needle) {
  ck_assert_msg(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle, text);
}

static void expect_error(const char *body, const char *needle) {
  const char *msg = tu_model_error(body);
  ck_assert_msg(msg != NULL, "expected an error containing '%s'", needle);
  ck_assert_msg(strstr(msg, needle) != NULL, "error '%s' lacks '%s'", msg, needle);
}

START_TEST(builtin_and_memory_ops_take_tvms_defaults) {
  tj_arena_t *a = tj_arena_create();
  char *text = print_roundtrip(
      a, "    def main(x: R.Tensor((\"m\", \"n\"), dtype=\"float32\")):\n"
         "        m = T.int64()\n"
         "        n = T.int64()\n"
         "        storage = R.memory.alloc_storage(R.shape([4 * m * n]), virtual_device_index=0, "
         "storage_scope=\"global\", dtype=\"float32\")\n"
         "        alloc = R.memory.alloc_tensor(storage, offset=0, shape=R.shape([m, n]), dtype=\"float32\")\n"
         "        tensor = R.builtin.alloc_tensor(R.shape([m, n]), runtime_device_index=0, dtype=\"float16\")\n"
         "        kept = R.builtin.stop_lift_params(x)\n"
         "        return (alloc, tensor, kept)\n");
  expect_in(text, "storage: R.Object = R.memory.alloc_storage(R.shape([4 * m * n]), R.prim_value(0), "
                  "R.str(\"global\"), R.dtype(\"float32\"))");
  expect_in(text, "alloc: R.Tensor((m, n), dtype=\"float32\") = R.memory.alloc_tensor(storage, R.prim_value(0), "
                  "R.shape([m, n]), R.dtype(\"float32\"))");
  /* keywords out of order, storage_scope filled with TVM's default */
  expect_in(text, "tensor: R.Tensor((m, n), dtype=\"float16\") = R.builtin.alloc_tensor(R.shape([m, n]), "
                  "R.dtype(\"float16\"), R.prim_value(0), R.str(\"global\"))");
  expect_in(text, "kept: R.Tensor((m, n), dtype=\"float32\") = R.builtin.stop_lift_params(x)");
  free(text);
  tj_arena_free(a);
}
END_TEST

START_TEST(vm_ops_infer_tvms_struct_info) {
  tj_arena_t *a = tj_arena_create();
  char *text = print_roundtrip(
      a, "    def main(x: R.Tensor((\"m\", \"n\"), dtype=\"float32\"), s: R.Shape(ndim=2)):\n"
         "        m = T.int64()\n"
         "        n = T.int64()\n"
         "        storage = R.vm.alloc_storage(R.shape([4 * m * n]), runtime_device_index=0, dtype=\"uint8\")\n"
         "        alloc = R.vm.alloc_tensor(storage, offset=0, shape=R.shape([m, n]), dtype=\"float32\")\n"
         "        loose = R.vm.alloc_tensor(storage, 0, s, \"int8\")\n"
         "        done = R.vm.kill_object(storage)\n"
         "        return (alloc, loose, done)\n");
  expect_in(text, "storage: R.Object = R.vm.alloc_storage(R.shape([4 * m * n]), R.prim_value(0), "
                  "R.dtype(\"uint8\"), R.str(\"global\"))");
  expect_in(text, "alloc: R.Tensor((m, n), dtype=\"float32\") = R.vm.alloc_tensor(");
  expect_in(text, "loose: R.Tensor(dtype=\"int8\", ndim=2) = R.vm.alloc_tensor(storage, R.prim_value(0), s, ");
  expect_in(text, "done: R.Tuple = R.vm.kill_object(storage)");
  free(text);
  tj_arena_free(a);
}
END_TEST

START_TEST(shape_conversions_infer_tvms_struct_info) {
  tj_arena_t *a = tj_arena_create();
  char *text = print_roundtrip(a, "    def main(x: R.Tensor((3,), dtype=\"int64\"), y: R.Tensor((2, 5), dtype=\"float32\")):\n"
                                  "        s = R.tensor_to_shape(x)\n"
                                  "        t = R.shape_to_tensor(s)\n"
                                  "        u = R.shape_of(y)\n"
                                  "        return (t, u)\n");
  expect_in(text, "s: R.Shape(ndim=3) = R.tensor_to_shape(x)");
  expect_in(text, "t: R.Tensor((3,), dtype=\"int64\") = R.shape_to_tensor(s)");
  expect_in(text, "u: R.Shape([2, 5]) = R.shape_of(y)");
  free(text);
  tj_arena_free(a);
}
END_TEST

START_TEST(wrong_arguments_are_named) {
  expect_error("    def main(x: R.Tensor((3, 2), dtype=\"int64\")):\n"
               "        s = R.tensor_to_shape(x)\n"
               "        return s\n",
               "tensor_to_shape: the input must be a 1-d tensor of a constant length");
  expect_error("    def main(x: R.Tensor((3,), dtype=\"int64\")):\n"
               "        t = R.builtin.alloc_tensor(R.shape([2]), dtype=\"floaty\", runtime_device_index=0)\n"
               "        return t\n",
               "alloc_tensor: dtype \"floaty\" is not a data type");
  expect_error("    def main(x: R.Tensor((3,), dtype=\"int64\")):\n"
               "        t = R.builtin.alloc_tensor(R.shape([2]), runtime_device_index=0)\n"
               "        return t\n",
               "alloc_tensor: argument 1 ('dtype') is missing");
  expect_error("    def main(x: R.Tensor((3,), dtype=\"int64\")):\n"
               "        t = R.memory.alloc_tensor(x, 0, R.shape([2]), dtype=\"int8\", offset=1)\n"
               "        return t\n",
               "argument 'offset' is given twice");
  expect_error("    def main(x: R.Tensor((3,), dtype=\"int64\")):\n"
               "        t = R.shape_to_tensor(x)\n"
               "        return t\n",
               "shape_to_tensor: the input must be a shape");
}
END_TEST

START_TEST(running_one_is_unsupported) {
  const char *src = tu_model_source("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
                                    "        y = R.builtin.stop_lift_params(x)\n"
                                    "        z = R.add(y, y)\n"
                                    "        return z\n");
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "m.rx", src, strlen(src), NULL, &mod);
  if (!st) st = tvmjit_module_get_function(mod, "main", &fn);
  if (!st) {
    float x[6] = {0};
    int64_t shape[2] = {2, 3};
    tvmjit_tensor_t *in = NULL, *out = NULL;
    ck_assert_ptr_null(tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, shape, x, &in));
    st = tvmjit_function_call(fn, 1, (const tvmjit_tensor_t *const *)&in, 1, &out);
    tvmjit_tensor_free(in);
    tvmjit_tensor_free(out);
  }
  ck_assert_msg(st != NULL, "running stop_lift_params succeeded");
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_UNSUPPORTED);
  const char *msg = tvmjit_status_message(st);
  ck_assert_msg(strstr(msg, "R.builtin.stop_lift_params cannot run in tvmjit: LegalizeOps keeps it"), "%s", msg);
  tvmjit_status_free(st);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
}
END_TEST


/* LegalizeOps' output for `main_text`, printed (caller frees). */
static char *legalized(tj_arena_t *a, const char *main_text) {
  char *text = tj_print_module(tu_legalize_main(a, main_text));
  ck_assert_ptr_nonnull(text);
  return text;
}

START_TEST(ccl_ops_infer_and_legalize_to_disco_calls) {
  tj_arena_t *a = tj_arena_create();
  char *text = print_roundtrip(a, "    def main(x: R.Tensor((\"n\", 10), dtype=\"float32\")):\n"
                                  "        n = T.int64()\n"
                                  "        r = R.ccl.allreduce(x, \"max\")\n"
                                  "        g = R.ccl.allgather(r, 2)\n"
                                  "        b = R.ccl.broadcast_from_worker0(g)\n"
                                  "        return b\n");
  expect_in(text, "r: R.Tensor((n, 10), dtype=\"float32\") = R.ccl.allreduce(x, op_type=\"max\", in_group=True)");
  expect_in(text, "g: R.Tensor((n * 2, 10), dtype=\"float32\") = R.ccl.allgather(r, num_workers=2, in_group=True)");
  expect_in(text, "b: R.Tensor((n * 2, 10), dtype=\"float32\") = R.ccl.broadcast_from_worker0(g)");
  free(text);
  text = legalized(a, "    def main(x: R.Tensor((4, 10), dtype=\"float32\")):\n"
                      "        r = R.ccl.allreduce(x, \"avg\", in_group=False)\n"
                      "        g = R.ccl.allgather(r, num_workers=3)\n"
                      "        b = R.ccl.broadcast_from_worker0(g)\n"
                      "        return b\n");
  expect_in(text, "R.call_dps_packed(\"runtime.disco.allreduce\", (x, R.shape([4]), R.prim_value(T.bool(False))), "
                  "out_sinfo=R.Tensor((4, 10), dtype=\"float32\"))");
  expect_in(text, "R.call_dps_packed(\"runtime.disco.allgather\", (r, R.prim_value(T.bool(True))), "
                  "out_sinfo=R.Tensor((12, 10), dtype=\"float32\"))");
  expect_in(text, "R.call_dps_packed(\"runtime.disco.broadcast_from_worker0\", (g, R.prim_value(T.bool(False))), "
                  "out_sinfo=R.Tensor((12, 10), dtype=\"float32\"))");
  free(text);
  tj_arena_free(a);
  expect_error("    def main(x: R.Tensor((4, 10), dtype=\"float32\")):\n"
               "        r = R.ccl.allreduce(x, \"mean\")\n"
               "        return r\n",
               "allreduce: unsupported reduction 'mean'");
  expect_error("    def main(x: R.Tensor((4, 10), dtype=\"float32\")):\n"
               "        r = R.ccl.allgather(x)\n"
               "        return r\n",
               "allgather: needs num_workers");
}
END_TEST

/* `s = T.FloatImm(...)` in a Relax function names a TIR constant (TVM's bind_assign_value
 * emits no binding), so that it can be an attribute value. */
START_TEST(tir_constants_are_names_not_bindings) {
  tj_arena_t *a = tj_arena_create();
  char *text = print_roundtrip(a, "    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
                                  "        r = T.FloatImm(\"float32\", 0.5)\n"
                                  "        y = R.nn.leakyrelu(x, alpha=r)\n"
                                  "        return y\n");
  expect_in(text, "y: R.Tensor((2, 3), dtype=\"float32\") = R.nn.leakyrelu(x, alpha=0.5)");
  ck_assert_msg(strstr(text, "r:") == NULL && strstr(text, "r =") == NULL, "%s", text);
  free(text);
  tj_arena_free(a);
}
END_TEST

/* R.Tensor(sh, ...) with a Relax shape var takes what the var's struct info knows. */
START_TEST(tensor_annotation_with_a_shape_var) {
  tj_arena_t *a = tj_arena_create();
  char *text = print_roundtrip(a, "    def main(x: R.Tensor((2, 3), dtype=\"float32\"), s: R.Shape(ndim=2)):\n"
                                  "        t = R.shape_of(x)\n"
                                  "        y: R.Tensor(t, dtype=\"float32\") = R.reshape(x, t)\n"
                                  "        z: R.Tensor(s, dtype=\"float32\") = R.reshape(x, s)\n"
                                  "        return (y, z)\n");
  expect_in(text, "y: R.Tensor((2, 3), dtype=\"float32\") = R.reshape(x, t)");
  expect_in(text, "z: R.Tensor(dtype=\"float32\", ndim=2) = R.reshape(x, s)");
  free(text);
  tj_arena_free(a);
  expect_error("    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n"
               "        t = R.shape_of(x)\n"
               "        y: R.Tensor(t, ndim=3) = R.reshape(x, t)\n"
               "        return y\n",
               "the shape has 2 dimensions but ndim=3");
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_misc");
  TCase *tc = tcase_create("misc");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, builtin_and_memory_ops_take_tvms_defaults);
  tcase_add_test(tc, vm_ops_infer_tvms_struct_info);
  tcase_add_test(tc, shape_conversions_infer_tvms_struct_info);
  tcase_add_test(tc, wrong_arguments_are_named);
  tcase_add_test(tc, running_one_is_unsupported);
  tcase_add_test(tc, ccl_ops_infer_and_legalize_to_disco_calls);
  tcase_add_test(tc, tir_constants_are_names_not_bindings);
  tcase_add_test(tc, tensor_annotation_with_a_shape_var);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
