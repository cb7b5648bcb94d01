/* Differential test on the project's own models (examples/, tests/models/): see
 * differential.h. TVM's conformance corpus gets the same treatment in
 * test_corpus_differential.c. */
#include "differential.h"

static void project_models(void) {
  ck_assert_ptr_null(tj_jit_create(&jit));
  tally_t t = {0};
  char path[4096];
  const char *files[] = {"examples/seed/model.rx", "tests/models/relu_f16.rx", "tests/models/schedule_kernels.rx",
                         "tests/models/parallel_rows.rx"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", tu_source_dir(), files[i]);
    compare_file(path, &t, true);
  }
  report("project models", &t);
  ck_assert_int_eq(t.failed, 0);
  ck_assert_int_ge(t.compared, 2); /* relu and layer_norm at least; conv2d2 with TVMJIT_SLOW_TESTS */
  tj_jit_free(jit);
}

START_TEST(project_models_match_the_interpreter) { project_models(); }
END_TEST

/* The same functions with their innermost loops marked T.vectorized (and small loops
 * around them T.unroll): VectorizeLoop vectorizes what is legal, keeps the rest serial,
 * and the results stay bit-exact. */
START_TEST(project_models_vectorized_match_the_interpreter) {
  marking = true;
  project_models();
  printf("differential: %d loops marked vectorized, %d unrolled; %d functions got vector stores\n",
         marked_vectorized, marked_unrolled, funcs_with_vectors);
  ck_assert_int_ge(funcs_with_vectors, 2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("differential");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, project_models_match_the_interpreter);
  tcase_add_test(tc, project_models_vectorized_match_the_interpreter);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
