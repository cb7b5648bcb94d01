/* The elementwise operators of ir/op/unary.c and ir/op/binary.c below the numbers (their
 * values against numpy are tests/cli/ops_elementwise.sh): struct-info inference and the
 * errors TVM reports, the TIR LegalizeOps emits (PrimFunc, block and loop names of the
 * TOPI compute), and that every kernel gets the CPU schedule: a parallel outer loop and
 * an inner loop that VectorizeLoop turns into vector stores (no scalar loop nest). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/module.h"
#include "ir/text/parse.h"
#include "ir/visit.h"
#include "support/arena.h"
#include "passes.h"
#include "testutil.h"
#include "transforms/pass_manager.h"
#include "transforms/tir/lower.h"
#include "transforms/tir/schedule.h"

/* main(x: (64, 512) dtype [, y: (512,) dtype]), big enough to be run in parallel, = R.<op>(x[, y]<extra>). */
static const char *model(const char *op, const char *dtype, int arity, const char *extra) {
  static char src[2048];
  snprintf(src, sizeof src,
           "from tvm.script import ir as I\nfrom tvm.script import relax as R\n@I.ir_module\nclass Module:\n"
           "    @R.function\n"
           "    def main(x: R.Tensor((64, 512), \"%s\")%s%s%s):\n"
           "        gv = R.%s(x%s%s)\n"
           "        return gv\n",
           dtype, arity == 2 ? ", y: R.Tensor((512,), \"" : "", arity == 2 ? dtype : "", arity == 2 ? "\")" : "", op,
           arity == 2 ? ", y" : "", extra ? extra : "");
  return src;
}

static tj_status_t *parse(tj_arena_t *a, const char *src, tj_module_t **out) {
  return tj_parse_module(a, "m.rx", src, strlen(src), out);
}

static const tj_module_t *legalize(tj_arena_t *a, const tj_module_t *m) {
  return tu_run_passes(a, "LegalizeOps", m);
}

static const tj_prim_func_t *only_prim(const tj_module_t *m, const char **out_name) {
  const tj_prim_func_t *f = NULL;
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i].is_prim) {
      ck_assert_msg(f == NULL, "more than one PrimFunc");
      f = m->funcs[i].prim;
      *out_name = m->funcs[i].name;
    }
  ck_assert_msg(f != NULL, "the op was not legalized");
  return f;
}

/* ---- inference ---- */

static const tj_sinfo_t *main_result(tj_arena_t *a, const char *src) {
  tj_module_t *m = NULL;
  TU_OK(parse(a, src, &m));
  const tj_rx_func_t *f = tj_module_find_relax(m, "main");
  ck_assert_ptr_nonnull(f);
  return f->body->sinfo;
}

static void expect_result(const char *op, const char *dtype, int arity, const char *extra, const char *want_dtype) {
  tj_arena_t *a = tj_arena_create();
  const tj_sinfo_t *s = main_result(a, model(op, dtype, arity, extra));
  ck_assert_int_eq(s->kind, TJ_SINFO_TENSOR);
  char b[TJ_DTYPE_BUFSIZE];
  ck_assert_msg(strcmp(tj_dtype_str(s->tensor.dtype, b), want_dtype) == 0, "%s(%s): %s, want %s", op, dtype, b,
                want_dtype);
  int64_t d0 = 0, d1 = 0;
  ck_assert_int_eq(s->tensor.ndim, 2);
  ck_assert(tj_tir_is_const_int(s->tensor.shape[0], &d0) && tj_tir_is_const_int(s->tensor.shape[1], &d1));
  ck_assert_int_eq(d0, 64);
  ck_assert_int_eq(d1, 512);
  tj_arena_free(a);
}

static void expect_parse_error(const char *src, tj_code_t code, const char *phrase) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  tj_status_t *st = parse(a, src, &m);
  ck_assert_msg(st != NULL, "expected an error containing '%s'", phrase);
  ck_assert_msg(tj_status_code(st) == code, "code %s: %s", tj_code_name(tj_status_code(st)), tj_status_text(st));
  ck_assert_msg(strstr(tj_status_text(st), phrase) != NULL, "'%s' not in '%s'", phrase, tj_status_text(st));
  tj_status_free(st);
  tj_arena_free(a);
}

START_TEST(result_dtypes_follow_tvm) {
  expect_result("abs", "int32", 1, NULL, "int32");
  expect_result("sin", "float16", 1, NULL, "float16");
  expect_result("isnan", "float32", 1, NULL, "bool");
  expect_result("isfinite", "int32", 1, NULL, "bool");
  expect_result("logical_not", "bool", 1, NULL, "bool");
  expect_result("clip", "int8", 1, ", 0, 6", "int8");
  expect_result("less", "float32", 2, NULL, "bool");
  expect_result("not_equal", "int32", 2, NULL, "bool");
  expect_result("logical_and", "bool", 2, NULL, "bool");
  expect_result("logical_xor", "int32", 2, NULL, "int32"); /* operand dtype, not bool */
  expect_result("floor_mod", "float16", 2, NULL, "float16");
  expect_result("right_shift", "uint8", 2, NULL, "uint8");
}
END_TEST

START_TEST(inference_errors_name_the_operand) {
  expect_parse_error(model("log", "int32", 1, NULL), TJ_ERR_PARSE, "log: x must be a float tensor, got int32");
  expect_parse_error(model("atanh", "bool", 1, NULL), TJ_ERR_PARSE, "atanh: x must be a float tensor, got bool");
  const char *mixed =
      "from tvm.script import ir as I\nfrom tvm.script import relax as R\n@I.ir_module\nclass Module:\n"
      "    @R.function\n"
      "    def main(x: R.Tensor((2, 3), \"float32\"), y: R.Tensor((3,), \"int32\")):\n"
      "        gv = R.maximum(x, y)\n"
      "        return gv\n";
  expect_parse_error(mixed, TJ_ERR_PARSE, "maximum");
  const char *shapes =
      "from tvm.script import ir as I\nfrom tvm.script import relax as R\n@I.ir_module\nclass Module:\n"
      "    @R.function\n"
      "    def main(x: R.Tensor((2, 3), \"float32\"), y: R.Tensor((4,), \"float32\")):\n"
      "        gv = R.less(x, y)\n"
      "        return gv\n";
  expect_parse_error(shapes, TJ_ERR_PARSE, "less");
  expect_parse_error(model("clip", "float32", 2, ", 1"), TJ_ERR_PARSE, "clip: min must be a PrimValue");
}
END_TEST

START_TEST(unknown_operator_is_unsupported_with_a_hint) {
  expect_parse_error(model("maximun", "float32", 2, NULL), TJ_ERR_UNSUPPORTED,
                     "unknown or unsupported operator 'R.maximun' (did you mean R.maximum?); `tvmjit ops` lists");
  expect_parse_error(model("floor_divde", "float32", 2, NULL), TJ_ERR_UNSUPPORTED, "did you mean R.floor_divide?");
}
END_TEST

/* ---- legalized TIR and its schedule ---- */

typedef struct shape_check {
  int stores, ramp_stores, parallel, blocks;
  const char *block_name;
  const char *loop0;
} shape_check_t;

static bool count_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  shape_check_t *k = v->ctx;
  if (s->kind == TJ_TIR_BUFFER_STORE) {
    k->stores++;
    k->ramp_stores += s->store.value->dtype.lanes > 1;
  }
  if (s->kind == TJ_TIR_FOR && s->loop.kind == TJ_FOR_PARALLEL) k->parallel++;
  if (s->kind == TJ_TIR_FOR && !k->loop0) k->loop0 = s->loop.var->var.name;
  if (s->kind == TJ_TIR_BLOCK_REALIZE && strcmp(s->realize.block->name, "root")) {
    k->blocks++;
    k->block_name = s->realize.block->name;
  }
  return true;
}

static shape_check_t inspect(const tj_prim_func_t *f) {
  shape_check_t k = {0};
  tj_tir_visitor_t v = {.stmt = count_stmt, .ctx = &k};
  tj_tir_visit_stmt(&v, f->body);
  return k;
}

typedef struct op_case {
  const char *op, *dtype;
  int arity;
  const char *extra, *prim_name, *block, *loop0;
} op_case_t;

static const op_case_t cases[] = {
    {"abs", "float32", 1, NULL, "tir_abs", "compute", "i0"},
    {"abs", "int32", 1, NULL, "tir_abs", "compute", "i0"},
    {"negative", "float16", 1, NULL, "tir_negative", "compute", "i0"},
    {"log", "float32", 1, NULL, "tir_log", "compute", "i0"},
    {"rsqrt", "float32", 1, NULL, "tir_rsqrt", "compute", "i0"},
    {"square", "float32", 1, NULL, "tir_square", "T_multiply", "ax0"},
    {"tan", "float32", 1, NULL, "tir_tan", "compute", "i0"},
    {"asinh", "float32", 1, NULL, "tir_asinh", "compute", "i0"},
    {"atanh", "float16", 1, NULL, "tir_atanh", "compute", "i0"},
    {"sigmoid", "float32", 1, NULL, "tir_sigmoid", "compute", "i0"},
    {"erf", "float32", 1, NULL, "erf", "compute", "i0"},
    {"erf", "float16", 1, NULL, "erf", "compute", "i0"},
    {"round", "float32", 1, NULL, "tir_round", "compute", "i0"},
    {"floor", "int32", 1, NULL, "tir_floor", "compute", "i0"},
    {"sign", "float32", 1, NULL, "tir_sign", "T_sign", "ax0"},
    {"isnan", "float16", 1, NULL, "tir_isnan", "compute", "i0"},
    {"isinf", "float32", 1, NULL, "tir_isinf", "compute", "i0"},
    {"isfinite", "float32", 1, NULL, "tir_isfinite", "compute", "i0"},
    {"logical_not", "bool", 1, NULL, "tir_logical_not", "T_logical_not", "ax0"},
    {"bitwise_not", "int32", 1, NULL, "tir_bitwise_not", "T_bitwise_not", "ax0"},
    {"clip", "float32", 1, ", 0, 6", "tir_clip", "compute", "i0"},
    {"maximum", "float32", 2, NULL, "maximum", "T_maximum", "ax0"},
    {"minimum", "int32", 2, NULL, "minimum", "T_minimum", "ax0"},
    {"floor_divide", "float32", 2, NULL, "floor_divide", "T_floor_divide", "ax0"},
    {"floor_divide", "int32", 2, NULL, "floor_divide", "T_floor_divide", "ax0"},
    {"floor_mod", "float32", 2, NULL, "floor_mod", "T_floor_mod", "ax0"},
    {"floor_mod", "int32", 2, NULL, "floor_mod", "T_floor_mod", "ax0"},
    {"mod", "int32", 2, NULL, "mod", "T_mod", "ax0"},
    {"divide", "int32", 2, NULL, "divide", "T_divide", "ax0"},
    {"equal", "float32", 2, NULL, "equal", "T_equal", "ax0"},
    {"greater_equal", "int32", 2, NULL, "greater_equal", "T_greater_equal", "ax0"},
    {"logical_or", "bool", 2, NULL, "logical_or", "T_logical_or", "ax0"},
    {"logical_xor", "bool", 2, NULL, "logical_xor", "T_logical_xor", "ax0"},
    {"bitwise_and", "uint8", 2, NULL, "bitwise_and", "T_bitwise_and", "ax0"},
    {"left_shift", "int32", 2, NULL, "left_shift", "T_left_shift", "ax0"},
    {"right_shift", "int8", 2, NULL, "right_shift", "T_right_shift", "ax0"},
};

START_TEST(legalized_with_topi_names_and_scheduled_parallel_and_vectorized) {
  const op_case_t *c = &cases[_i];
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  TU_OK(parse(a, model(c->op, c->dtype, c->arity, c->extra), &m));
  const char *name = NULL;
  const tj_prim_func_t *f = only_prim(legalize(a, m), &name);
  ck_assert_msg(strcmp(name, c->prim_name) == 0, "%s: PrimFunc %s, want %s", c->op, name, c->prim_name);
  shape_check_t k = inspect(f);
  ck_assert_int_eq(k.blocks, 1);
  ck_assert_msg(strcmp(k.block_name, c->block) == 0, "%s: block %s, want %s", c->op, k.block_name, c->block);
  ck_assert_msg(strcmp(k.loop0, c->loop0) == 0, "%s: loop %s, want %s", c->op, k.loop0, c->loop0);
  tj_tir_schedule_options_t o = {.enabled = true, .vector_bits = 256};
  const tj_prim_func_t *lowered = NULL;
  TU_OK(tj_tir_lower_scheduled(a, f, name, &o, &lowered));
  shape_check_t l = inspect(lowered);
  ck_assert_msg(l.parallel >= 1, "%s %s: no parallel loop after the schedule", c->op, c->dtype);
  ck_assert_msg(l.ramp_stores >= 1, "%s %s: no vector store: the kernel stayed a scalar loop nest", c->op, c->dtype);
  tj_arena_free(a);
}
END_TEST

START_TEST(dtype_errors_where_tvm_tir_rejects_the_op) {
  static const struct { const char *op, *dtype; int arity; const char *phrase; } bad[] = {
      {"bitwise_not", "float32", 1, "R.bitwise_not needs an integer tensor, got float32"},
      {"logical_not", "int32", 1, "R.logical_not needs a bool tensor, got int32"},
      {"logical_and", "int32", 2, "R.logical_and needs bool operands, got int32"},
      {"bitwise_or", "float16", 2, "R.bitwise_or needs integer operands, got float16"},
      {"left_shift", "bool", 2, "R.left_shift needs integer operands, got bool"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tj_arena_t *a = tj_arena_create();
    tj_module_t *m = NULL;
    TU_OK(parse(a, model(bad[i].op, bad[i].dtype, bad[i].arity, NULL), &m));
    tj_pipeline_t p;
    tj_pass_context_t ctx;
    tj_pass_context_init(&ctx, a);
    const tj_module_t *out = NULL;
    TU_OK(tj_pipeline_parse(a, "LegalizeOps", &p));
    tj_status_t *st = tj_pipeline_run(&ctx, &p, NULL, m, &out, NULL);
    ck_assert_msg(st != NULL, "%s(%s) legalized", bad[i].op, bad[i].dtype);
    ck_assert_msg(strstr(tj_status_text(st), bad[i].phrase) != NULL, "'%s' not in '%s'", bad[i].phrase,
                  tj_status_text(st));
    tj_status_free(st);
    tj_arena_free(a);
  }
}
END_TEST

/* The reference interpreter gives the same defined results as compiled kernels for
 * shifts out of range and division by zero (docs/numerics.md); values by hand. */
static void interp_binary(const char *op, const int32_t *x, const int32_t *y, int32_t *out) {
  char src[1024];
  snprintf(src, sizeof src,
           "from tvm.script import ir as I\nfrom tvm.script import relax as R\n@I.ir_module\nclass Module:\n"
           "    @R.function\n"
           "    def main(x: R.Tensor((6,), \"int32\"), y: R.Tensor((6,), \"int32\")):\n"
           "        gv = R.%s(x, y)\n"
           "        return gv\n", op);
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  TU_OK(parse(a, src, &m));
  const char *name = NULL;
  const tj_prim_func_t *f = only_prim(legalize(a, m), &name);
  void *bufs[3] = {(void *)x, (void *)y, out};
  TU_OK(tj_interp_run_prim_func(f, 3, bufs, NULL));
  tj_arena_free(a);
}

START_TEST(interpreter_agrees_on_defined_edge_cases) {
  const int32_t x[6] = {1, -8, 12345, INT32_MIN, -7, 7}, s[6] = {-1, 40, 31, 1, 0, 32};
  int32_t out[6];
  interp_binary("left_shift", x, s, out);
  const int32_t shl[6] = {0, 0, INT32_MIN, 0, -7, 0}; /* 12345 << 31: only bit 0 survives, at the sign */
  for (int i = 0; i < 6; i++) ck_assert_int_eq(out[i], shl[i]);
  interp_binary("right_shift", x, s, out);
  const int32_t shr[6] = {0, -1, 0, INT32_MIN / 2, -7, 0};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(out[i], shr[i]);
  const int32_t d[6] = {0, 0, 7, -1, 2, -2};
  interp_binary("floor_divide", x, d, out);
  const int32_t fdiv[6] = {0, 0, 1763, INT32_MIN, -4, -4};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(out[i], fdiv[i]);
  interp_binary("floor_mod", x, d, out);
  const int32_t fmod_[6] = {0, 0, 4, 0, 1, -1};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(out[i], fmod_[i]);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("ops_elementwise");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, result_dtypes_follow_tvm);
  tcase_add_test(tc, inference_errors_name_the_operand);
  tcase_add_test(tc, unknown_operator_is_unsupported_with_a_hint);
  tcase_add_loop_test(tc, legalized_with_topi_names_and_scheduled_parallel_and_vectorized, 0,
                      (int)(sizeof cases / sizeof cases[0]));
  tcase_add_test(tc, dtype_errors_where_tvm_tir_rejects_the_op);
  tcase_add_test(tc, interpreter_agrees_on_defined_edge_cases);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run_suite(suite()); }
