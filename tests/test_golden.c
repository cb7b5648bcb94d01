/* Golden-file pass tests: every tests/golden/<Pass>/<case>.before.rx is parsed, run
 * through a pipeline with the verifier after each pass, and compared structurally
 * (tj_struct_equal_module: variables by binding position, as TVM compares) with
 * <case>.after.rx. The pipeline is <Pass>, the folder's name, unless before.rx has a
 * line `# passes: P1,P2(opt=...)` (the syntax of `tvmjit print --passes`).
 *
 * After a reviewed change to a pass, rewrite the goldens with the pass's new output and
 * read the diff before committing it:
 *
 *     TVMJIT_UPDATE_GOLDEN=1 ctest -R golden && git diff tests/golden
 *
 * (the same text as `tvmjit print --passes P <case>.before.rx`, under a header line).
 *
 * A before.rx line `# known-difference: <why>` marks a case whose golden (written to TVM's
 * semantics) tvmjit does not reproduce yet: it is reported as XFAIL, and fails the test
 * once the output matches, so that the line is removed with the fix. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/text/parse.h"
#include "ir/text/print.h"
#include "ir/struct_equal.h"
#include "ir/verify/verify.h"
#include "project.h"
#include "support/alloc.h"
#include "testutil.h"
#include "transforms/pass_manager.h"

enum { MAX_CASES = 256 };

typedef struct golden_case {
  char pass_dir[256];
  char name[256];
} golden_case_t;

static int cmp_case(const void *a, const void *b) {
  const golden_case_t *x = a, *y = b;
  int c = strcmp(x->pass_dir, y->pass_dir);
  return c ? c : strcmp(x->name, y->name);
}

/* Every <dir>/<case>.before.rx under tests/golden, sorted. */
static int list_cases(golden_case_t *out) {
  const char *root = tu_project_path("tests/golden");
  DIR *d = opendir(root);
  ck_assert_msg(d != NULL, "%s is missing", root);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char sub[4096];
    snprintf(sub, sizeof sub, "%.3000s/%.255s", root, e->d_name);
    DIR *s = opendir(sub);
    if (!s) continue;
    for (struct dirent *f; (f = readdir(s));) {
      size_t len = strlen(f->d_name), suffix = strlen(".before.rx");
      if (len <= suffix || strcmp(f->d_name + len - suffix, ".before.rx") != 0) continue;
      ck_assert_int_lt(n, MAX_CASES);
      snprintf(out[n].pass_dir, sizeof out[n].pass_dir, "%.255s", e->d_name);
      snprintf(out[n].name, sizeof out[n].name, "%.*s", (int)(len - suffix) & 255, f->d_name);
      n++;
    }
    closedir(s);
  }
  closedir(d);
  qsort(out, (size_t)n, sizeof out[0], cmp_case);
  return n;
}

/* The value of a `# key: value` line of the text, else the fallback. */
static void header_value(const char *text, const char *key, const char *fallback, char *out, size_t len) {
  const char *p = strstr(text, key);
  while (p && p != text && p[-1] != '\n') p = strstr(p + 1, key);
  if (!p) {
    snprintf(out, len, "%.200s", fallback);
    return;
  }
  p += strlen(key);
  while (*p == ' ') p++;
  size_t n = strcspn(p, "\r\n");
  if (n >= len) n = len - 1;
  memcpy(out, p, n);
  out[n] = '\0';
}

static void write_golden(const char *path, const char *pipeline, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_msg(f != NULL, "cannot write %s", path);
  fprintf(f, "# Golden output of %s (tests/test_golden.c; regenerate with TVMJIT_UPDATE_GOLDEN=1).\n%s", pipeline,
          text);
  fclose(f);
}

/* Runs one case; `why` is empty on success, else says what went wrong. *out_known is the
 * case's known difference ("" when none). */
static void run_case(const golden_case_t *c, bool update, char *why, size_t why_len, char *out_known) {
  char before_path[4096], after_path[4096], pipeline_text[512], known[512];
  snprintf(before_path, sizeof before_path, "%.3000s/%.255s/%.255s.before.rx", tu_project_path("tests/golden"),
           c->pass_dir, c->name);
  snprintf(after_path, sizeof after_path, "%.3000s/%.255s/%.255s.after.rx", tu_project_path("tests/golden"),
           c->pass_dir, c->name);
  why[0] = '\0';
  char *before_text = tu_read_file(before_path, NULL);
  ck_assert_ptr_nonnull(before_text);
  header_value(before_text, "# passes:", c->pass_dir, pipeline_text, sizeof pipeline_text);
  header_value(before_text, "# known-difference:", "", known, sizeof known);
  free(before_text);

  tj_arena_t *a = tj_arena_create();
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, a);
  tj_module_t *before = NULL, *after = NULL;
  const tj_module_t *out = NULL;
  tj_pipeline_t pipeline;
  tj_pass_instruments_t ins = {.verify_each = true};
  tj_status_t *s = tj_parse_file(a, before_path, &before);
  if (!s) s = tj_verify_module(before);
  if (!s) s = tj_pipeline_parse(a, pipeline_text, &pipeline);
  if (!s) s = tj_pipeline_run(&ctx, &pipeline, &ins, before, &out, NULL);
  if (s) {
    snprintf(why, why_len, "%s: %s", before_path, tj_status_text(s));
    tj_status_free(s);
    tj_arena_free(a);
    return;
  }
  char *printed = tj_print_module(out);
  ck_assert_ptr_nonnull(printed);
  if (update) {
    write_golden(after_path, pipeline_text, printed);
    printf("golden: wrote %s\n", after_path);
  } else if ((s = tj_parse_file(a, after_path, &after))) {
    snprintf(why, why_len, "%s: %s", after_path, tj_status_text(s));
    tj_status_free(s);
  } else {
    char diff[1024] = "";
    if (!tj_struct_equal_module(out, after, diff, sizeof diff))
      snprintf(why, why_len, "%.1000s: %.500s output differs: %.1000s\n--- got:\n%.4000s", after_path, pipeline_text,
               diff, printed);
  }
  tj_free(printed);
  tj_arena_free(a);
  snprintf(out_known, 512, "%s", known);
}

START_TEST(passes_produce_the_golden_modules) {
  static golden_case_t cases[MAX_CASES];
  int n = list_cases(cases);
  const char *env = getenv("TVMJIT_UPDATE_GOLDEN");
  bool update = env && *env && strcmp(env, "0") != 0;
  int failed = 0, xfail = 0;
  static char why[8192], first[8192];
  char known[512];
  for (int i = 0; i < n; i++) {
    run_case(&cases[i], update, why, sizeof why, known);
    if (known[0] && !update) {
      if (why[0]) {
        printf("XFAIL %s/%s: %s\n", cases[i].pass_dir, cases[i].name, known);
        xfail++;
        continue;
      }
      snprintf(why, sizeof why, "%.255s/%.255s matches now: remove its '# known-difference' line", cases[i].pass_dir,
               cases[i].name);
    }
    printf("%-5s %s/%s\n", why[0] ? "FAIL" : "ok", cases[i].pass_dir, cases[i].name);
    if (why[0]) {
      printf("  %s\n", why);
      if (!failed++) memcpy(first, why, sizeof first);
    }
  }
  printf("golden: %d of %d cases match, %d known differences\n", n - failed - xfail, n, xfail);
  ck_assert_msg(failed == 0, "%d golden case(s) differ; first: %s", failed, first);
  /* The set must not vanish silently (a moved folder would otherwise pass). */
  ck_assert_int_ge(n, 6);
}
END_TEST

/* The comparison is not vacuous: a golden of one case does not match another's output. */
START_TEST(a_wrong_golden_is_reported) {
  tj_arena_t *a = tj_arena_create();
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, a);
  char path[4096];
  tj_module_t *relu = NULL, *conv_after = NULL;
  snprintf(path, sizeof path, "%s/LegalizeOps/relu.before.rx", tu_project_path("tests/golden"));
  TU_OK(tj_parse_file(a, path, &relu));
  snprintf(path, sizeof path, "%s/LegalizeOps/conv2d_nhwc.after.rx", tu_project_path("tests/golden"));
  TU_OK(tj_parse_file(a, path, &conv_after));
  tj_pipeline_t p;
  TU_OK(tj_pipeline_parse(a, "LegalizeOps", &p));
  const tj_module_t *out = NULL;
  TU_OK(tj_pipeline_run(&ctx, &p, NULL, relu, &out, NULL));
  char diff[512] = "";
  ck_assert(!tj_struct_equal_module(out, conv_after, diff, sizeof diff));
  ck_assert(diff[0] != '\0');
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("golden");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, passes_produce_the_golden_modules);
  tcase_add_test(tc, a_wrong_golden_is_reported);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
