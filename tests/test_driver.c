/* api/driver: the one parse -> verify -> passes -> compile path of the API, the tools
 * and the benches. The pipeline a (passes, mixed precision) pair means; verifier
 * messages that name the model; a module compiled into an executable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/driver.h"
#include "support/alloc.h"
#include "testutil.h"

static void model_path(char *buf, size_t size, const char *file) {
  snprintf(buf, size, "%s/tests/models/%s", tu_source_dir(), file);
}

static tj_pipeline_t pipeline_of(tj_arena_t *a, const char *passes, const char *mp) {
  tj_driver_passes_t o = {passes, mp, NULL};
  tj_pipeline_t p;
  TU_OK(tj_driver_pipeline(a, &o, &p));
  return p;
}

START_TEST(mixed_precision_goes_first_whatever_the_passes) {
  tj_arena_t *a = tj_arena_create();
  int n_default = pipeline_of(a, "default", NULL).n;
  ck_assert_int_gt(n_default, 1);
  ck_assert_int_eq(pipeline_of(a, NULL, NULL).n, n_default); /* NULL means default */
  ck_assert_int_eq(pipeline_of(a, "none", NULL).n, 0);
  struct {
    const char *passes;
    int n;
  } cases[] = {{"none", 1}, {"default", n_default + 1}, {NULL, n_default + 1}, {"LegalizeOps", 2}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tj_pipeline_t p = pipeline_of(a, cases[i].passes, "float16");
    ck_assert_int_eq(p.n, cases[i].n);
    ck_assert_str_eq(p.passes[0].name, "ToMixedPrecision");
    ck_assert_str_eq(p.passes[0].out_dtype, "float16");
  }
  tj_driver_passes_t bad = {"default", "int8", NULL};
  tj_pipeline_t p;
  tj_status_t *s = tj_driver_pipeline(a, &bad, &p);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(tj_status_text(s), "use float32, float16 or bfloat16"));
  tj_status_free(s);
  tj_arena_free(a);
}
END_TEST

static char *slurp(const char *path, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  char *buf = calloc(1, 1 << 16);
  *out_len = fread(buf, 1, (1 << 16) - 1, f);
  fclose(f);
  return buf;
}

START_TEST(verifier_messages_name_the_model) {
  char path[4096];
  model_path(path, sizeof path, "bad_call_tir_dtype.rx");
  tj_arena_t *a = tj_arena_create();
  tj_driver_passes_t o = {"none", NULL, NULL};
  const tj_module_t *m = NULL;
  tj_status_t *s = tj_driver_load(a, path, NULL, 0, &o, &m, NULL, NULL);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_VERIFY);
  ck_assert_int_eq(strncmp(tj_status_text(s), path, strlen(path)), 0);
  tj_status_free(s);
  size_t len;
  char *text = slurp(path, &len);
  s = tj_driver_load(a, NULL, text, len, &o, &m, NULL, NULL); /* text without a name */
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_VERIFY);
  ck_assert_int_eq(strncmp(tj_status_text(s), "<string>: ", 10), 0);
  tj_status_free(s);
  free(text);
  tj_arena_free(a);
}
END_TEST

START_TEST(load_then_compile_gives_an_executable) {
  char path[4096];
  model_path(path, sizeof path, "relu_f16.rx");
  tj_arena_t *a = tj_arena_create();
  tj_pass_instruments_t ins = {.time_passes = true, .verify_each = true};
  tj_driver_passes_t o = {"default", NULL, &ins};
  const tj_module_t *m = NULL;
  tj_pass_report_t report = {0};
  TU_OK(tj_driver_load(a, path, NULL, 0, &o, &m, &report, NULL));
  ck_assert_int_eq(report.n, pipeline_of(a, "default", NULL).n); /* the instruments reached the passes */
  tj_jit_t *jit;
  TU_OK(tj_jit_create(&jit));
  tj_executable_t *exe = NULL;
  tj_jit_options_t jo = {.opt_level = 0, .no_cache = true};
  TU_OK(tj_driver_compile(jit, m, "main", &jo, NULL, &exe));
  ck_assert_int_eq(tj_executable_num_inputs(exe), 1);
  ck_assert_int_eq(tj_executable_num_outputs(exe), 1);
  ck_assert_int_eq(tj_executable_num_calls(exe), 1);
  tj_executable_free(exe);
  tj_status_t *s = tj_driver_compile(jit, m, "missing", &jo, NULL, &exe);
  ck_assert_ptr_nonnull(s);
  tj_status_free(s);
  tj_jit_free(jit);
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("driver");
  TCase *tc = tcase_create("driver");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, mixed_precision_goes_first_whatever_the_passes);
  tcase_add_test(tc, verifier_messages_name_the_model);
  tcase_add_test(tc, load_then_compile_gives_an_executable);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
