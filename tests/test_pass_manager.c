/* transforms/pass_manager: pipeline text, running with instruments. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "transforms/pass_manager.h"

static tj_arena_t *arena;
static tj_pass_context_t ctx;

static void setup(void) {
  arena = tj_arena_create();
  tj_pass_context_init(&ctx, arena);
}

static void teardown(void) { tj_arena_free(arena); }

static void assert_invalid(tj_status_t *s, const char *needle) {
  ck_assert_msg(s != NULL, "expected an error containing '%s'", needle);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(tj_status_text(s), needle), "'%s' lacks '%s'", tj_status_text(s), needle);
  tj_status_free(s);
}

START_TEST(parses_tvm_names_and_options) {
  tj_pipeline_t p;
  TU_OK(tj_pipeline_parse(arena,
                          "ToMixedPrecision(out_dtype=\"float16\", fp16_input_names=[\"x\", \"w\"]), LegalizeOps,"
                          "FuseOps(fuse_opt_level=2),DeadCodeElimination()",
                          &p));
  ck_assert_int_eq(p.n, 4);
  ck_assert_str_eq(p.passes[0].name, "ToMixedPrecision");
  ck_assert_str_eq(p.passes[0].out_dtype, "float16");
  ck_assert_int_eq(p.passes[0].n_fp16_input_names, 2);
  ck_assert_str_eq(p.passes[0].fp16_input_names[1], "w");
  ck_assert_str_eq(p.passes[1].name, "LegalizeOps");
  ck_assert_int_eq(p.passes[2].fuse_opt_level, 2);
  ck_assert_str_eq(p.passes[3].name, "DeadCodeElimination");
  ck_assert_str_eq(tj_pipeline_text(arena, &p),
                   "ToMixedPrecision(out_dtype=\"float16\", fp16_input_names=[\"x\", \"w\"]), LegalizeOps, "
                   "FuseOps(fuse_opt_level=2), DeadCodeElimination");
  /* Defaults are not spelled out, and the canonical text parses back to the same. */
  TU_OK(tj_pipeline_parse(arena, "ToMixedPrecision(), FuseOps", &p));
  ck_assert_str_eq(p.passes[0].out_dtype, "float32");
  ck_assert_int_eq(p.passes[1].fuse_opt_level, -1);
  ck_assert_str_eq(tj_pipeline_text(arena, &p), "ToMixedPrecision, FuseOps");
  /* The conformance corpus writes pipelines with arrows and positional options. */
  TU_OK(tj_pipeline_parse(arena, "AnnotateTIROpPattern() -> FuseOps(0)", &p));
  ck_assert_int_eq(p.n, 2);
  ck_assert_int_eq(p.passes[1].fuse_opt_level, 0);
}
END_TEST

START_TEST(default_and_none) {
  tj_pipeline_t p;
  TU_OK(tj_pipeline_parse(arena, "default", &p));
  ck_assert_str_eq(tj_pipeline_text(arena, &p), "DispatchSortScan, LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR");
  TU_OK(tj_pipeline_parse(arena, "ToMixedPrecision(out_dtype='float16'),default", &p));
  ck_assert_int_eq(p.n, 6);
  TU_OK(tj_pipeline_parse(arena, "none", &p));
  ck_assert_int_eq(p.n, 0);
  ck_assert_str_eq(tj_pipeline_text(arena, &p), "none");
  TU_OK(tj_pipeline_parse(arena, "", &p));
  ck_assert_int_eq(p.n, 0);
}
END_TEST

/* Each row of the pass table: found by its name, one entry point, prints as its name
 * with default options. */
START_TEST(every_table_row_is_complete) {
  char names[256];
  snprintf(names, sizeof names, "%s", tj_pass_valid_names(arena));
  int n = 0;
  for (char *save = NULL, *name = strtok_r(names, ", ", &save); name; name = strtok_r(NULL, ", ", &save), n++) {
    const tj_pass_t *pass = tj_pass_default(name);
    ck_assert_msg(pass != NULL, "%s", name);
    ck_assert_int_eq(pass->kind, TJ_PASS_BUILTIN);
    ck_assert_msg((pass->run != NULL) != (pass->run_with_options != NULL), "%s: needs exactly one entry point", name);
    ck_assert_str_eq(tj_pass_text(arena, pass), name);
  }
  ck_assert_int_eq(n, 11);
}
END_TEST

START_TEST(rejects_unknown_passes_and_options) {
  tj_pipeline_t p;
  assert_invalid(tj_pipeline_parse(arena, "LegalizeOps,FuseTir", &p),
                 "unknown pass 'FuseTir' (valid: ToMixedPrecision, DispatchSortScan, LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR, "
                 "DeadCodeElimination");
  assert_invalid(tj_pipeline_parse(arena, "FuseOps(opt_level=2)", &p), "FuseOps has no option 'opt_level' (valid: fuse_opt_level)");
  assert_invalid(tj_pipeline_parse(arena, "LegalizeOps(x=1)", &p), "LegalizeOps has no option 'x' (valid: none)");
  assert_invalid(tj_pipeline_parse(arena, "ToMixedPrecision(out_dtype=\"bfloat16\")", &p), "out_dtype must be");
  assert_invalid(tj_pipeline_parse(arena, "ToMixedPrecision(out_dtype=\"float16\"", &p), "missing ')'");
  assert_invalid(tj_pipeline_parse(arena, "LegalizeOps,", &p), "ends with a separator");
  assert_invalid(tj_pipeline_parse(arena, "LegalizeOps,,FuseOps", &p), "empty item");
}
END_TEST

/* ---- running ---- */

typedef struct trace {
  char log[512];
  int calls;
} trace_t;

static tj_status_t *tagging_pass(const tj_pass_context_t *c, const tj_module_t *in, void *user, const tj_module_t **out) {
  trace_t *t = user;
  t->calls++;
  tj_module_t *m = tj_module_new(c->arena, in->n_funcs, in->funcs, in->attrs);
  if (!m) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "oom");
  *out = m;
  return NULL;
}

static tj_status_t *failing_pass(const tj_pass_context_t *c, const tj_module_t *in, void *user, const tj_module_t **out) {
  return tj_status_new(TJ_ERR_UNSUPPORTED, "cannot do that");
}

static void record_print(void *user, const char *pass_name, const char *when, const char *text) {
  trace_t *t = user;
  size_t n = strlen(t->log);
  snprintf(t->log + n, sizeof t->log - n, "%s:%s;", when, pass_name);
}

/* main(x: R.Tensor((2,), "float32")) returning x: the smallest module worth printing. */
static const tj_module_t *tiny_module(void) {
  int64_t dims[1] = {2};
  const tj_sinfo_t *s = tj_sinfo_tensor_static(arena, TJ_F32, 1, dims);
  const tj_rx_expr_t *x = tj_rx_var(arena, "x", s);
  tj_rx_func_t *f = TJ_ARENA_NEW(arena, tj_rx_func_t);
  f->n_params = 1;
  f->params = TJ_ARENA_ARRAY(arena, const tj_rx_expr_t *, 1);
  ((const tj_rx_expr_t **)f->params)[0] = x;
  f->ret_sinfo = s;
  f->body = tj_rx_seq(arena, 0, NULL, x);
  f->attrs = tj_attrs_set(arena, NULL, "global_symbol", tj_attr_str("main"));
  f->is_pure = true;
  tj_func_entry_t e = {.name = "main", .is_prim = false, .relax = f};
  return tj_module_new(arena, 1, &e, NULL);
}

static tj_pipeline_t custom_pipeline(int n, const char *const *names, tj_custom_pass_fn fn, void *user) {
  tj_pipeline_t p = {0};
  for (int i = 0; i < n; i++) {
    tj_pass_t pass = {.kind = TJ_PASS_CUSTOM, .name = names[i], .fn = fn, .user = user, .fuse_opt_level = -1};
    tj_pipeline_t next;
    TU_OK(tj_pipeline_append(arena, &p, &pass, &next));
    p = next;
  }
  return p;
}

START_TEST(runs_passes_in_order_with_print_instruments) {
  trace_t t = {{0}, 0};
  const char *names[] = {"A", "B", "C"};
  tj_pipeline_t p = custom_pipeline(3, names, tagging_pass, &t);
  tj_pass_instruments_t ins = {.print_before = "B", .print_after = "*", .print_fn = record_print, .print_user = &t,
                               .time_passes = true};
  const tj_module_t *in = tiny_module(), *out = NULL;
  tj_pass_report_t report;
  TU_OK(tj_pipeline_run(&ctx, &p, &ins, in, &out, &report));
  ck_assert_int_eq(t.calls, 3);
  ck_assert_ptr_nonnull(out);
  ck_assert_ptr_ne(out, in);
  ck_assert_str_eq(t.log, "after:A;before:B;after:B;after:C;");
  ck_assert_int_eq(report.n, 3);
  ck_assert_str_eq(report.timings[2].name, "C");
  const char *table = tj_pass_report_text(arena, &report);
  ck_assert_ptr_nonnull(strstr(table, "  B\n"));
  ck_assert_ptr_nonnull(strstr(table, "  total\n"));
}
END_TEST

START_TEST(prints_to_a_file_the_caller_gives) {
  trace_t t = {{0}, 0};
  const char *names[] = {"A", "B"};
  tj_pipeline_t p = custom_pipeline(2, names, tagging_pass, &t);
  FILE *f = tmpfile();
  ck_assert_ptr_nonnull(f);
  tj_pass_instruments_t ins = {.print_after = "A", .print_file = f};
  const tj_module_t *in = tiny_module(), *out = NULL;
  TU_OK(tj_pipeline_run(&ctx, &p, &ins, in, &out, NULL));
  rewind(f);
  char buf[256] = {0};
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  ck_assert_uint_gt(n, 0);
  ck_assert_ptr_nonnull(strstr(buf, "# IR after pass 'A'\n"));
  ck_assert_ptr_nonnull(strstr(buf, "def main(x: R.Tensor((2,), dtype=\"float32\"))"));
  ck_assert_ptr_null(strstr(buf, "'B'"));
}
END_TEST

START_TEST(failing_pass_is_named_and_stops_the_pipeline) {
  trace_t t = {{0}, 0};
  tj_pipeline_t p = custom_pipeline(1, (const char *const[]){"Broken"}, failing_pass, &t);
  tj_pass_t after = {.kind = TJ_PASS_CUSTOM, .name = "Never", .fn = tagging_pass, .user = &t};
  TU_OK(tj_pipeline_append(arena, &p, &after, &p));
  const tj_module_t *in = tj_module_new(arena, 0, NULL, NULL), *out = NULL;
  tj_status_t *s = tj_pipeline_run(&ctx, &p, NULL, in, &out, NULL);
  ck_assert_ptr_nonnull(s);
  ck_assert_str_eq(tj_status_text(s), "in pass 'Broken': cannot do that");
  tj_status_free(s);
  ck_assert_ptr_null(out);
  ck_assert_int_eq(t.calls, 0);
}
END_TEST

START_TEST(builtin_passes_dispatch) {
  /* An empty module goes through every built-in pass (or a clear "not built yet"). */
  tj_pipeline_t p;
  TU_OK(tj_pipeline_parse(arena, "ToMixedPrecision", &p));
  const tj_module_t *in = tj_module_new(arena, 0, NULL, NULL), *out = NULL;
  TU_OK(tj_pipeline_run(&ctx, &p, NULL, in, &out, NULL));
  ck_assert_int_eq(out->n_funcs, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("pass_manager");
  TCase *tc = tcase_create("pipeline");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, parses_tvm_names_and_options);
  tcase_add_test(tc, default_and_none);
  tcase_add_test(tc, every_table_row_is_complete);
  tcase_add_test(tc, rejects_unknown_passes_and_options);
  tcase_add_test(tc, runs_passes_in_order_with_print_instruments);
  tcase_add_test(tc, prints_to_a_file_the_caller_gives);
  tcase_add_test(tc, failing_pass_is_named_and_stops_the_pipeline);
  tcase_add_test(tc, builtin_passes_dispatch);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
