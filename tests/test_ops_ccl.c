/* R.ccl.scatter_from_worker0 and R.dist.redistribute_replica_to_shard: TVM's struct
 * info (the scattered axis divided by num_workers, and its errors), their LegalizeOps
 * output (the disco runtime calls and the data movement around them), and the values
 * of that data movement, run through the reference TIR interpreter: the disco calls
 * themselves need several workers, so only the local kernels can be checked by value.
 * References are numpy's: scatter_from_worker0 hands worker w the w-th part of
 * np.split(x, k, axis), which reshape + transpose lay out contiguously, and worker w's
 * shard of redistribute_replica_to_shard is x[:, w*d/k:(w+1)*d/k]. */
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/module.h"
#include "ir/text/print.h"
#include "passes.h"
#include "relax_model.h"
#include "support/arena.h"
#include "testutil.h"

static void expect_in(const char *text, const char *needle) {
  ck_assert_msg(strstr(text, needle) != NULL, "'%s' not in:\n%s", needle, text);
}

static void expect_error(const char *body, const char *needle) {
  const char *msg = tu_model_error(body);
  ck_assert_msg(msg != NULL, "expected an error containing '%s'", needle);
  ck_assert_msg(strstr(msg, needle) != NULL, "error '%s' lacks '%s'", msg, needle);
}

static const tj_prim_func_t *prim(const tj_module_t *m, const char *name) {
  const tj_prim_func_t *f = tj_module_find_prim(m, name);
  ck_assert_msg(f != NULL, "no PrimFunc '%s'", name);
  return f;
}

START_TEST(scatter_from_worker0_infers_and_legalizes) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = tu_legalize_main(a, "    def main(x: R.Tensor((4, 6), \"float32\")):\n"
                                             "        gv = R.ccl.scatter_from_worker0(x, num_workers=2, axis=1)\n"
                                             "        return gv\n");
  char *text = tj_print_module(m);
  expect_in(text, "R.call_dps_packed(\"runtime.disco.scatter_from_worker0\", (lv1, R.prim_value(T.bool(False))), "
                  "out_sinfo=R.Tensor((4, 3), dtype=\"float32\"))");
  expect_in(text, "-> R.Tensor((4, 3), dtype=\"float32\")");
  free(text);
  /* reshape to (4, 2, 3) then transpose to (2, 4, 3): part w is x[:, 3w:3w+3] */
  float x[24], mid[24], out[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i;
  void *b1[2] = {x, mid}, *b2[2] = {mid, out};
  TU_OK(tj_interp_run_prim_func(prim(m, "reshape"), 2, b1, NULL));
  TU_OK(tj_interp_run_prim_func(prim(m, "transpose"), 2, b2, NULL));
  for (int w = 0; w < 2; w++)
    for (int r = 0; r < 4; r++)
      for (int c = 0; c < 3; c++) ck_assert_float_eq(out[(w * 4 + r) * 3 + c], x[r * 6 + 3 * w + c]);
  tj_arena_free(a);
  /* axis 0 needs no transpose */
  a = tj_arena_create();
  m = tu_legalize_main(a, "    def main(x: R.Tensor((4, 6), \"float32\")):\n"
                          "        gv = R.ccl.scatter_from_worker0(x, 4)\n"
                          "        return gv\n");
  ck_assert_ptr_null(tj_module_find_prim(m, "transpose"));
  text = tj_print_module(m);
  expect_in(text, "out_sinfo=R.Tensor((1, 6), dtype=\"float32\"))");
  free(text);
  tj_arena_free(a);
  /* TVM checks axis 0 whatever the axis (InferStructInfoScatter) */
  expect_error("    def main(x: R.Tensor((3, 6), \"float32\")):\n"
               "        gv = R.ccl.scatter_from_worker0(x, num_workers=2, axis=1)\n"
               "        return gv\n",
               "dim 0 of the input (3) is not divisible by num_workers (2)");
  expect_error("    def main(x: R.Tensor((4, 6), \"float32\")):\n"
               "        gv = R.ccl.scatter_from_worker0(x, num_workers=2, axis=2)\n"
               "        return gv\n",
               "axis 2 is out of range for a 2-D input");
  expect_error("    def main(x: R.Tensor((4, 6), \"float32\")):\n"
               "        gv = R.ccl.scatter_from_worker0(x)\n"
               "        return gv\n",
               "scatter_from_worker0: needs num_workers");
}
END_TEST

START_TEST(redistribute_replica_to_shard_slices_at_the_worker_id) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = tu_legalize_main(a, "    def main(x: R.Tensor((3, 8), \"float32\")):\n"
                                             "        gv = R.dist.redistribute_replica_to_shard(x, num_workers=4, axis=1)\n"
                                             "        return gv\n");
  char *text = tj_print_module(m);
  expect_in(text, "R.call_pure_packed(\"runtime.disco.worker_id\", sinfo_args=(R.Shape(ndim=-1),))");
  expect_in(text, "R.match_cast(lv, R.Shape([worker_id]))");
  expect_in(text, "out_sinfo=R.Tensor((3, 2), dtype=\"float32\"), tir_vars=R.shape([worker_id]))");
  free(text);
  const tj_prim_func_t *f = prim(m, "strided_slice");
  ck_assert_int_eq(f->n_params, 3); /* x, the shard, worker_id */
  float x[24], shard[6];
  for (int i = 0; i < 24; i++) x[i] = (float)(i * 3 % 7);
  for (int64_t w = 0; w < 4; w++) {
    void *bufs[2] = {x, shard};
    int64_t scalars[1] = {w};
    TU_OK(tj_interp_run_prim_func(f, 3, bufs, scalars));
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 2; c++) ck_assert_float_eq(shard[r * 2 + c], x[r * 8 + 2 * w + c]);
  }
  tj_arena_free(a);
  expect_error("    def main(x: R.Tensor((3, 8), \"float32\")):\n"
               "        gv = R.dist.redistribute_replica_to_shard(x, num_workers=3, axis=1)\n"
               "        return gv\n",
               "dim 1 of the input (8) is not divisible by num_workers (3)");
  expect_error("    def main(x: R.Tensor((3, 8), \"float32\")):\n"
               "        gv = R.dist.redistribute_replica_to_shard(x, num_workers=2)\n"
               "        return gv\n",
               "redistribute_replica_to_shard: needs axis");
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_ccl");
  TCase *tc = tcase_create("ccl");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, scatter_from_worker0_infers_and_legalizes);
  tcase_add_test(tc, redistribute_replica_to_shard_slices_at_the_worker_id);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
