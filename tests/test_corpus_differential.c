/* Differential test on TVM's conformance corpus (../shared/conformance, not part of a
 * user's clone: the program reports SKIP, exit 77, without it): every PrimFunc with
 * static shapes in the corpus modules is JIT-compiled and held against the reference TIR
 * interpreter, as test_differential.c does for the project's own models. */
#include <dirent.h>

#include "differential.h"

static void conformance_prim_funcs(void) {
  ck_assert_ptr_null(tj_jit_create(&jit));
  tally_t t = {0};
  char dir[4096], path[4096 + 300];
  snprintf(dir, sizeof dir, "%s/conformance", tu_shared_dir());
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    const char *names[] = {"before.rx", "expected.rx"};
    for (int k = 0; k < 2; k++) {
      snprintf(path, sizeof path, "%s/%s/%s", dir, e->d_name, names[k]);
      FILE *f = fopen(path, "r");
      if (!f) continue;
      fclose(f);
      compare_file(path, &t, false);
    }
  }
  closedir(d);
  report("conformance corpus", &t);
  ck_assert_int_eq(t.failed, 0);
  ck_assert_int_ge(t.compared, 50);
  tj_jit_free(jit);
}

START_TEST(conformance_prim_funcs_match_the_interpreter) { conformance_prim_funcs(); }
END_TEST

/* With innermost loops marked T.vectorized (and small loops around them T.unroll). */
START_TEST(conformance_prim_funcs_vectorized_match_the_interpreter) {
  marking = true;
  conformance_prim_funcs();
  printf("differential: %d loops marked vectorized, %d unrolled; %d functions got vector stores\n",
         marked_vectorized, marked_unrolled, funcs_with_vectors);
  ck_assert_int_ge(funcs_with_vectors, 30);
}
END_TEST

int main(void) {
  int skip = tu_corpus_skip("corpus_differential");
  if (skip) return skip;
  Suite *s = suite_create("corpus_differential");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, conformance_prim_funcs_match_the_interpreter);
  tcase_add_test(tc, conformance_prim_funcs_vectorized_match_the_interpreter);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
