/* transforms/legalize/canonical_simplify.c: TVM's Analyzer::Simplify forms of index
 * expressions. Each expected string is the form TVM prints, taken from the corpus'
 * expected.rx files (named per case) or derived from canonical_simplify.cc's rules. */
#include <string.h>

#include "ir/text/print.h"
#include "support/alloc.h"
#include "testutil.h"
#include "transforms/legalize/legalize.h"

static tj_arena_t *arena;
static const tj_tir_expr_t *h, *kh, *v, *ax1, *b0, *b1, *n, *x, *v0, *v1, *v2, *v3;

static void setup(void) {
  arena = tj_arena_create();
  const char *names[] = {"h", "kh", "v", "ax1", "b0", "b1", "n", "x", "v0", "v1", "v2", "v3"};
  const tj_tir_expr_t **vars[] = {&h, &kh, &v, &ax1, &b0, &b1, &n, &x, &v0, &v1, &v2, &v3};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) *vars[i] = tj_tir_var(arena, names[i], TJ_I64);
}

static void teardown(void) { tj_arena_free(arena); }

static const tj_tir_expr_t *c(int64_t value) { return tj_tir_i64(arena, value); }
static const tj_tir_expr_t *add(const tj_tir_expr_t *p, const tj_tir_expr_t *q) {
  return tj_tir_binary(arena, TJ_TIR_ADD, p, q);
}
static const tj_tir_expr_t *sub(const tj_tir_expr_t *p, const tj_tir_expr_t *q) {
  return tj_tir_binary(arena, TJ_TIR_SUB, p, q);
}
static const tj_tir_expr_t *mul(const tj_tir_expr_t *p, const tj_tir_expr_t *q) {
  return tj_tir_binary(arena, TJ_TIR_MUL, p, q);
}
static const tj_tir_expr_t *floordiv_(const tj_tir_expr_t *p, const tj_tir_expr_t *q) {
  return tj_tir_binary(arena, TJ_TIR_FLOOR_DIV, p, q);
}
static const tj_tir_expr_t *floormod_(const tj_tir_expr_t *p, const tj_tir_expr_t *q) {
  return tj_tir_binary(arena, TJ_TIR_FLOOR_MOD, p, q);
}

static void assert_simplifies_to(const tj_tir_expr_t *e, const char *expected) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  tj_print_tir_expr(&sb, tj_lg_simplify(arena, e));
  char *got = tj_strbuf_take(&sb);
  ck_assert_str_eq(got, expected);
  tj_free(got);
}

/* legalize_ops__test_conv2d_transpose_symbolic: topi.nn.dilate's and pad's shapes */
START_TEST(affine_sums_collect_terms_and_constants) {
  const tj_tir_expr_t *dilated = add(mul(sub(h, c(1)), c(3)), c(1));
  assert_simplifies_to(dilated, "h * T.int64(3) - T.int64(2)");
  assert_simplifies_to(add(add(dilated, sub(kh, c(1))), sub(kh, c(1))), "h * T.int64(3) + kh * T.int64(2) - T.int64(4)");
  assert_simplifies_to(sub(v, sub(kh, c(1))), "v + T.int64(1) - kh");
}
END_TEST

/* Terms keep their first-appearance order among equal scales; positive terms print
 * first (legalize_ops__test_concat_input_tuple_var_symbolic: `ax1 - b0 - b1`). */
START_TEST(negative_terms_follow_positive_ones) {
  assert_simplifies_to(sub(ax1, add(b0, b1)), "ax1 - b0 - b1");
  assert_simplifies_to(sub(sub(c(0), b0), sub(c(2), ax1)), "ax1 - b0 - T.int64(2)");
  assert_simplifies_to(add(sub(x, x), c(5)), "T.int64(5)");
}
END_TEST

/* rewrite_simplify.cc: `a >= b` is `b <= a`, `a <= b` is `!(b < a)`, and the
 * constant offsets of `x < y` move to one side. */
START_TEST(comparisons_merge_constant_offsets) {
  const tj_tir_expr_t *padded_end = add(add(mul(sub(h, c(1)), c(3)), c(1)), sub(kh, c(1)));
  assert_simplifies_to(tj_tir_binary(arena, TJ_TIR_LE, sub(kh, c(1)), v), "kh <= v + T.int64(1)");
  assert_simplifies_to(tj_tir_binary(arena, TJ_TIR_LT, v, padded_end), "v + T.int64(3) < h * T.int64(3) + kh");
  /* topi.concatenate's `ind >= 0`: symbolic offsets stay in the sum, literal ones move */
  assert_simplifies_to(tj_tir_binary(arena, TJ_TIR_GE, sub(sub(ax1, b0), b1), c(0)), "T.int64(0) <= ax1 - b0 - b1");
  assert_simplifies_to(tj_tir_binary(arena, TJ_TIR_GE, sub(v, c(3)), c(0)), "T.int64(3) <= v");
  assert_simplifies_to(tj_tir_binary(arena, TJ_TIR_LT, c(2), c(3)), "T.bool(True)");
}
END_TEST

/* canonical_simplify.cc's SeparateDivisibleParts / SplitDivConst / SplitModConst */
START_TEST(floordiv_and_floormod_by_literals) {
  assert_simplifies_to(floordiv_(mul(n, c(3)), c(3)), "n");
  assert_simplifies_to(floordiv_(floordiv_(x, c(4)), c(5)), "x // T.int64(20)");
  assert_simplifies_to(floordiv_(add(mul(v0, c(8)), v1), c(4)), "v0 * T.int64(2) + v1 // T.int64(4)");
  /* the static batch_norm reshape: (v0 * 3 + v1 + v2 + v3) % 3 drops the multiple of 3 */
  assert_simplifies_to(floormod_(add(add(add(mul(v0, c(3)), v1), v2), v3), c(3)), "(v1 + v2 + v3) % T.int64(3)");
  /* legalize_ops__test_group_norm: a sum with a nested division stays one index */
  assert_simplifies_to(floordiv_(add(floordiv_(v3, c(5)), v2), c(4)), "(v3 // T.int64(5) + v2) // T.int64(4)");
  assert_simplifies_to(floormod_(add(mul(x, c(4)), c(6)), c(2)), "T.int64(0)");
  assert_simplifies_to(floormod_(floormod_(x, c(8)), c(4)), "x % T.int64(4)");
  /* legalize_ops__test_group_norm's reshape back: a lone split keeps its factors */
  const tj_tir_expr_t *carried = add(mul(v0, c(2)), floordiv_(x, c(2)));
  assert_simplifies_to(floordiv_(carried, c(2)), "x // T.int64(4) + v0");
  assert_simplifies_to(floormod_(carried, c(2)), "x % T.int64(4) // T.int64(2)");
}
END_TEST

/* A product of two symbolic factors is one term; its scale multiplies it. */
START_TEST(symbolic_products_and_divisors_are_atoms) {
  assert_simplifies_to(floormod_(add(add(add(mul(v0, h), v1), v2), v3), h), "(v0 * h + v1 + v2 + v3) % h");
  assert_simplifies_to(mul(mul(v0, h), c(2)), "v0 * h * T.int64(2)");
  /* MulAndNormalize: literal factors gathered at the end (group_norm_symbolic) */
  assert_simplifies_to(mul(v0, mul(h, c(4))), "v0 * h * T.int64(4)");
  assert_simplifies_to(mul(add(mul(v0, c(4)), v1), h), "(v0 * T.int64(4) + v1) * h");
  assert_simplifies_to(floordiv_(add(x, c(0)), h), "x // h");
}
END_TEST

/* SplitExprNode::Normalize: a lone term prints as index * scale even when the scale is
 * negative; only a sum subtracts (legalize_ops__test_dynamic_strided_slice's shape_func:
 * `(b - e - s - 1) // (s * T.int64(-1))`). */
START_TEST(a_lone_negative_term_stays_a_product) {
  assert_simplifies_to(mul(x, c(-1)), "x * T.int64(-1)");
  assert_simplifies_to(floordiv_(sub(sub(sub(b0, b1), x), c(1)), mul(x, c(-1))),
                       "(b0 - b1 - x - T.int64(1)) // (x * T.int64(-1))");
  assert_simplifies_to(sub(c(0), x), "T.int64(0) - x");
}
END_TEST

/* Float arithmetic is kept as written; index expressions inside it are simplified. */
START_TEST(float_arithmetic_is_untouched) {
  const tj_tir_expr_t *f = tj_tir_var(arena, "f", TJ_F32);
  const tj_tir_expr_t *sum = add(f, tj_tir_float(arena, TJ_F32, 0));
  assert_simplifies_to(sum, "T.Add(f, T.float32(0))");
  const tj_tir_expr_t *cast = tj_tir_cast(arena, TJ_F32, sub(add(n, c(2)), c(2)));
  assert_simplifies_to(cast, "T.Cast(\"float32\", n)");
}
END_TEST

int main(void) {
  Suite *s = suite_create("canonical_simplify");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, affine_sums_collect_terms_and_constants);
  tcase_add_test(tc, negative_terms_follow_positive_ones);
  tcase_add_test(tc, comparisons_merge_constant_offsets);
  tcase_add_test(tc, floordiv_and_floormod_by_literals);
  tcase_add_test(tc, symbolic_products_and_divisors_are_atoms);
  tcase_add_test(tc, a_lone_negative_term_stays_a_product);
  tcase_add_test(tc, float_arithmetic_is_untouched);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
