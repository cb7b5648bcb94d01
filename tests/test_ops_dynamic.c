/* Data-dependent shapes: R.dynamic_strided_slice (struct info and its errors, the
 * lengths its legalized shape function computes, checked against Python's slice
 * semantics written out here, and the clear error tvmjit's runtime gives for it), and
 * R.tensor_to_shape through DecomposeOpsForInference. */
#include <stdio.h>
#include <string.h>

#include "api/driver.h"
#include "ir/interp.h"
#include "ir/module.h"
#include "ir/text/parse.h"
#include "relax_model.h"
#include "testutil.h"

static tj_arena_t *A;
static void setup(void) { A = tj_arena_create(); }
static void teardown(void) { tj_arena_free(A); }

static const char *const k_slice_main =
    "    def main(x: R.Tensor((8, 9), dtype=\"float32\"), begin: R.Tensor((2,), dtype=\"int64\"),\n"
    "             end: R.Tensor((2,), dtype=\"int64\"), strides: R.Tensor((2,), dtype=\"int64\")):\n"
    "        gv = R.dynamic_strided_slice(x, begin, end, strides)\n"
    "        return gv\n";

static const tj_module_t *parse(const char *main_text) {
  const char *text = tu_model_source(main_text);
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(A, "m.rx", text, strlen(text), &m));
  return m;
}

static const tj_module_t *run_passes(const tj_module_t *m, const char *passes) {
  tj_driver_passes_t o = {.passes = passes};
  const tj_module_t *out = NULL;
  TU_OK(tj_driver_run_passes(A, &o, m, &out, NULL));
  return out;
}

START_TEST(struct_info_is_rank_and_dtype_only) {
  const tj_module_t *m = parse(k_slice_main);
  const tj_rx_func_t *f = tj_module_find_relax(m, "main");
  ck_assert_ptr_nonnull(f);
  const tj_sinfo_t *s = f->body->seq.blocks[0].bindings[0].var->sinfo;
  ck_assert_int_eq(s->kind, TJ_SINFO_TENSOR);
  ck_assert_int_eq(s->tensor.ndim, 2);
  ck_assert_ptr_null(s->tensor.shape);
  ck_assert(tj_dtype_eq(s->tensor.dtype, TJ_F32));
}
END_TEST

static void expect_error(const char *begin_decl, const char *needle) {
  char text[1024];
  snprintf(text, sizeof text,
           "    def main(x: R.Tensor((8, 9), dtype=\"float32\"), begin: %s,\n"
           "             end: R.Tensor((2,), dtype=\"int64\"), strides: R.Tensor((2,), dtype=\"int64\")):\n"
           "        gv = R.dynamic_strided_slice(x, begin, end, strides)\n"
           "        return gv\n",
           begin_decl);
  const char *msg = tu_model_error(text);
  ck_assert_msg(msg != NULL, "expected an error containing '%s'", needle);
  ck_assert_msg(strstr(msg, needle) != NULL, "error '%s' lacks '%s'", msg, needle);
}

START_TEST(index_tensors_are_checked_as_tvm_does) {
  expect_error("R.Tensor((2, 1), dtype=\"int64\")", "begin must be a 1-D tensor");
  expect_error("R.Tensor((3,), dtype=\"int64\")", "begin has 3 values but x has 2 axes");
  expect_error("R.Tensor((2,), dtype=\"int32\")", "begin must be int64, got int32");
  expect_error("R.Tensor((\"n\",), dtype=\"int64\")", "begin must have a known length");
}
END_TEST

/* Python's len(range(*slice(b, e, s).indices(n))), written from the language reference. */
static int64_t python_slice_length(int64_t n, int64_t b, int64_t e, int64_t s) {
  int64_t lo = s < 0 ? -1 : 0, hi = s < 0 ? n - 1 : n;
  b = b < 0 ? b + n : b;
  e = e < 0 ? e + n : e;
  b = b < lo ? lo : b > hi ? hi : b;
  e = e < lo ? lo : e > hi ? hi : e;
  int64_t len = 0;
  for (int64_t i = b; s > 0 ? i < e : i > e; i += s) len++;
  return len;
}

/* The legalized shape_func on one begin/end/strides triple (x is (8, 9)). */
static void check_lengths(const tj_prim_func_t *f, int64_t b0, int64_t b1, int64_t e0, int64_t e1, int64_t s0,
                          int64_t s1) {
  static float x[8 * 9];
  int64_t begin[2] = {b0, b1}, end[2] = {e0, e1}, strides[2] = {s0, s1}, out[2] = {-7, -7};
  void *bufs[5] = {x, begin, end, strides, out};
  TU_OK(tj_interp_run_named("shape_func", f, 5, bufs, NULL));
  int64_t want0 = python_slice_length(8, b0, e0, s0), want1 = python_slice_length(9, b1, e1, s1);
  ck_assert_msg(out[0] == want0 && out[1] == want1,
                "x[%lld:%lld:%lld, %lld:%lld:%lld] of (8, 9): lengths (%lld, %lld), want (%lld, %lld)",
                (long long)b0, (long long)e0, (long long)s0, (long long)b1, (long long)e1, (long long)s1,
                (long long)out[0], (long long)out[1], (long long)want0, (long long)want1);
}

START_TEST(shape_function_gives_numpy_slice_lengths) {
  const tj_module_t *m = run_passes(parse(k_slice_main), "LegalizeOps");
  const tj_prim_func_t *f = tj_module_find_prim(m, "shape_func");
  ck_assert_ptr_nonnull(f);
  ck_assert_ptr_nonnull(tj_module_find_prim(m, "dynamic_strided_slice"));
  check_lengths(f, 0, 0, 8, 9, 1, 1);        /* the whole tensor */
  check_lengths(f, 1, 2, 7, 9, 2, 3);        /* positive steps */
  check_lengths(f, -3, -100, -1, 4, 1, 1);   /* negative begin/end, begin below -extent */
  check_lengths(f, 2, 100, 100, 200, 1, 1);  /* end past the extent; begin past it: empty */
  check_lengths(f, 7, 8, 0, -100, -1, -2);   /* negative steps, end below -extent */
  check_lengths(f, 100, -1, -100, 0, -3, -1); /* begin past the extent with a negative step */
  check_lengths(f, 3, 3, 3, 3, 1, -1);       /* end equal to begin: empty */
  /* TVM's shape function does not clamp a length at 0: x[5:2] gets ceildiv(2 - 5, 1) = -3
   * and x[0:6:-2] ceildiv(0 - 6, 2) = -3 where numpy gives empty axes. tvmjit reproduces
   * TVM's legalization exactly (the conformance cases compare it structurally). */
  static float x[8 * 9];
  int64_t begin[2] = {5, 0}, end[2] = {2, 6}, strides[2] = {1, -2}, out[2] = {0, 0};
  void *bufs[5] = {x, begin, end, strides, out};
  TU_OK(tj_interp_run_named("shape_func", f, 5, bufs, NULL));
  ck_assert_int_eq(out[0], -3); /* (2 - 5 + 1 - 1) // 1 */
  ck_assert_int_eq(out[1], -3); /* (0 - 6 - (-2) - 1) // (-2 * -1) = -5 // 2 */
}
END_TEST

/* The slice's output shape comes from the shape function's values at run time, which
 * the executor cannot do yet: main is refused with UNSUPPORTED, naming the op. */
START_TEST(runtime_refuses_data_dependent_shapes_clearly) {
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  const char *src = tu_model_source(k_slice_main);
  tvmjit_status_t *st = tvmjit_module_load_string(inst, "model.rx", src, strlen(src), NULL, &mod);
  if (!st) st = tvmjit_module_get_function(mod, "main", &fn);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_UNSUPPORTED);
  const char *msg = tvmjit_status_message(st);
  ck_assert_msg(strstr(msg, "R.dynamic_strided_slice") && strstr(msg, "cannot run data-dependent shapes"),
                "unclear error: %s", msg);
  tvmjit_status_free(st);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
}
END_TEST

START_TEST(tensor_to_shape_becomes_shape_vars) {
  const tj_module_t *m = run_passes(parse("    def main(x: R.Tensor((2,), dtype=\"int64\"), "
                                          "y: R.Tensor((16,), dtype=\"float32\")):\n"
                                          "        lv: R.Shape(ndim=2) = R.tensor_to_shape(x)\n"
                                          "        gv = R.reshape(y, lv)\n"
                                          "        return gv\n"),
                                    "DecomposeOpsForInference,LegalizeOps");
  const tj_rx_func_t *f = tj_module_find_relax(m, "main");
  const tj_rx_block_t *blk = &f->body->seq.blocks[0];
  ck_assert_int_eq(blk->n_bindings, 4); /* packed call, match_cast, R.shape, call_tir */
  const tj_sinfo_t *cast = blk->bindings[1].match_cast;
  ck_assert_ptr_nonnull(cast);
  ck_assert_int_eq(cast->shape.ndim, 2);
  /* the reshape's output is (x_1, x_2), the vars the match_cast binds */
  const tj_sinfo_t *out = blk->bindings[3].var->sinfo;
  ck_assert_ptr_eq(out->tensor.shape[0], cast->shape.values[0]);
  ck_assert_ptr_eq(out->tensor.shape[1], cast->shape.values[1]);
  /* main's return cannot name them: only the rank is left (TVM's EraseToWellDefined) */
  ck_assert_int_eq(f->ret_sinfo->tensor.ndim, 2);
  ck_assert_ptr_null(f->ret_sinfo->tensor.shape);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_dynamic");
  TCase *tc = tcase_create("dynamic");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, struct_info_is_rank_and_dtype_only);
  tcase_add_test(tc, index_tensors_are_checked_as_tvm_does);
  tcase_add_test(tc, shape_function_gives_numpy_slice_lengths);
  tcase_add_test(tc, runtime_refuses_data_dependent_shapes_clearly);
  tcase_add_test(tc, tensor_to_shape_becomes_shape_vars);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
