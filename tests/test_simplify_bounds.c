/* transforms/tir/simplify_bounds.c: index arithmetic folded with the loop bounds. */
#include <stdio.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/module.h"
#include "ir/text/parse.h"
#include "ir/visit.h"
#include "support/alloc.h"
#include "testutil.h"
#include "transforms/tir/lower.h"

/* BERT's head split as LegalizeOps writes it: [1, 128, 768] -> [1, 128, H, 64]. With
 * H = 12 every index stays in its row; with H = 13 (a 832-wide input) it does not. */
static const char *reshape_text(int heads) {
  static char buf[2048];
  int w = heads * 64;
  snprintf(buf, sizeof buf,
           "@T.prim_func\n"
           "def reshape(A: T.Buffer((T.int64(1), T.int64(128), T.int64(%d)), \"float32\"), "
           "B: T.Buffer((T.int64(1), T.int64(128), T.int64(%d), T.int64(64)), \"float32\")):\n"
           "    for ax0, ax1, ax2, ax3 in T.grid(T.int64(1), T.int64(128), T.int64(%d), T.int64(64)):\n"
           "        with T.block(\"T_reshape\"):\n"
           "            v0, v1, v2, v3 = T.axis.remap(\"SSSS\", [ax0, ax1, ax2, ax3])\n"
           "            B[v0, v1, v2, v3] = A[T.int64(0), ((v2 * T.int64(64) + v3) // T.int64(768) + v1) %% "
           "T.int64(128), (v2 * T.int64(64) + v3) %% T.int64(768)]\n",
           w, heads, heads);
  return buf;
}

static const tj_prim_func_t *parse(tj_arena_t *a, const char *text) {
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(a, "reshape.rx", text, strlen(text), &m));
  const tj_prim_func_t *f = tj_module_find_prim(m, "reshape");
  ck_assert_ptr_nonnull(f);
  return f;
}

typedef struct divmods {
  int n;
} divmods_t;

static bool count_divmod(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  if (e->kind == TJ_TIR_FLOOR_DIV || e->kind == TJ_TIR_FLOOR_MOD) ((divmods_t *)v->ctx)->n++;
  return true;
}

static int divmods_in(const tj_prim_func_t *f) {
  divmods_t d = {0};
  tj_tir_visitor_t v = {.expr = count_divmod, .ctx = &d};
  tj_tir_visit_stmt(&v, f->body);
  return d.n;
}

/* Runs f and its lowered form on the same input through the interpreter. */
static void assert_same_output(const tj_prim_func_t *f, const tj_prim_func_t *low, int64_t n_in, int64_t n_out) {
  float *in = tj_malloc(n_in * sizeof(float)), *o1 = tj_malloc(n_out * sizeof(float)),
        *o2 = tj_malloc(n_out * sizeof(float));
  for (int64_t i = 0; i < n_in; i++) in[i] = (float)i;
  void *b1[2] = {in, o1}, *b2[2] = {in, o2};
  TU_OK(tj_interp_run_named("reshape", f, 2, b1, NULL));
  TU_OK(tj_interp_run_named("reshape", low, 2, b2, NULL));
  ck_assert(memcmp(o1, o2, n_out * sizeof(float)) == 0);
  tj_free(in);
  tj_free(o1);
  tj_free(o2);
}

START_TEST(reshape_index_within_one_row_folds_to_a_contiguous_read) {
  tj_arena_t *a = tj_arena_create();
  const tj_prim_func_t *f = parse(a, reshape_text(12)), *low = NULL;
  ck_assert_int_gt(divmods_in(f), 0);
  TU_OK(tj_tir_lower(a, f, "reshape", &low));
  /* A[0, v1, v2*64 + v3]: flat v1*768 + v2*64 + v3, no division left to gather with */
  ck_assert_int_eq(divmods_in(low), 0);
  assert_same_output(f, low, 128 * 768, 128 * 768);
  tj_arena_free(a);
}
END_TEST

START_TEST(reshape_index_crossing_rows_keeps_its_division) {
  tj_arena_t *a = tj_arena_create();
  const tj_prim_func_t *f = parse(a, reshape_text(13)), *low = NULL;
  TU_OK(tj_tir_lower(a, f, "reshape", &low));
  /* v2*64 + v3 reaches 831 >= 768: the row really changes, both // and both % stay */
  ck_assert_int_eq(divmods_in(low), 3);
  assert_same_output(f, low, 128 * 832, 128 * 832);
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("simplify_bounds");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, reshape_index_within_one_row_folds_to_a_contiguous_read);
  tcase_add_test(tc, reshape_index_crossing_rows_keeps_its_division);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
