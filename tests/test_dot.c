/* ir/dot: the seed's dataflow as Graphviz DOT after FuseOps (fused groups as clusters)
 * and after FuseTIR (one box per kernel call), and text that DOT reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dot.h"
#include "ir/text/parse.h"
#include "support/alloc.h"
#include "passes.h"
#include "testutil.h"

static int count(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* The seed after `pipeline`, drawn; the caller frees the text. */
static char *seed_dot(tj_arena_t *a, const char *pipeline, const char *note) {
  char path[4096];
  snprintf(path, sizeof path, "%.3000s/examples/seed/model.rx", tu_source_dir());
  tj_module_t *m = NULL;
  TU_OK(tj_parse_file(a, path, &m));
  const tj_module_t *out = tu_run_passes(a, pipeline, m);
  char *dot = tj_dot_function(out, "main", note);
  ck_assert_ptr_nonnull(dot);
  return dot;
}

START_TEST(after_fuse_tir_one_box_per_kernel_call) {
  tj_arena_t *a = tj_arena_create();
  char *dot = seed_dot(a, "AnnotateTIROpPattern,FuseOps,FuseTIR", "slot 0: 1048576 bytes\nslot 1: 1048576 bytes");
  ck_assert_int_eq(count(dot, "digraph \"main\" {"), 1);
  ck_assert_int_eq(count(dot, " = fused_conv2d2_relu\\nfloat16[16, 32, 32, 16]\"]"), 3);
  ck_assert_int_eq(count(dot, "label=\"ln = layer_norm\\n"), 1);
  ck_assert_int_eq(count(dot, "shape=ellipse"), 1);  /* data: num_input = 1 */
  ck_assert_int_eq(count(dot, "shape=cylinder"), 5); /* the weights */
  ck_assert_int_eq(count(dot, "subgraph cluster_"), 0);
  /* 3 convs take data/previous + a weight, layer_norm 3 inputs, one edge to the output */
  ck_assert_int_eq(count(dot, " -> "), 3 * 2 + 3 + 1);
  ck_assert_int_eq(count(dot, "slot 0: 1048576 bytes\\lslot 1: 1048576 bytes\\l"), 1);
  tj_free(dot);
  tj_arena_free(a);
}
END_TEST

START_TEST(after_fuse_ops_groups_are_clusters) {
  tj_arena_t *a = tj_arena_create();
  char *dot = seed_dot(a, "AnnotateTIROpPattern,FuseOps", NULL);
  /* conv2d + relu fused, three times; layer_norm alone is no fused function */
  ck_assert_int_eq(count(dot, "subgraph cluster_"), 3);
  ck_assert_int_eq(count(dot, " = conv2d2\\nOutEWiseFusable\\n"), 3);
  ck_assert_int_eq(count(dot, " = relu\\nElemWise\\n"), 3);
  ck_assert_int_eq(count(dot, "note ["), 0);
  tj_free(dot);
  tj_arena_free(a);
}
END_TEST

START_TEST(operator_calls_and_unknown_functions) {
  tj_arena_t *a = tj_arena_create();
  const char *text =
      "@R.function\n"
      "def main(x: R.Tensor((2, 3), dtype=\"float32\"), y: R.Tensor((2, 3), dtype=\"float32\")):\n"
      "    s = R.add(x, y)\n"
      "    r = R.nn.relu(s)\n"
      "    return r\n";
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(a, "ops.rx", text, strlen(text), &m));
  char *dot = tj_dot_function(m, "main", NULL);
  ck_assert_ptr_nonnull(dot);
  ck_assert_int_eq(count(dot, "label=\"s = add\\nfloat32[2, 3]\""), 1);
  ck_assert_int_eq(count(dot, "label=\"r = nn.relu\\nfloat32[2, 3]\""), 1);
  ck_assert_int_eq(count(dot, " -> "), 4);
  tj_free(dot);
  ck_assert_ptr_null(tj_dot_function(m, "no_such_function", NULL));
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("dot");
  TCase *tc = tcase_create("dot");
  tcase_add_test(tc, after_fuse_tir_one_box_per_kernel_call);
  tcase_add_test(tc, after_fuse_ops_groups_are_clusters);
  tcase_add_test(tc, operator_calls_and_unknown_functions);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
