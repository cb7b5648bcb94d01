/* transforms/tir/row_split and shape_params: which symbolic kernels are row-independent
 * (the check that lets the JIT run them as static chunks; a false "yes" would compute
 * wrong numbers, so the refusals matter most), what a chunk looks like, and which shape
 * vars a kernel takes as scalars. The numbers of chunked kernels are checked in
 * tests/cli/symbolic.sh against numpy and PyTorch. */
#include <string.h>

#include "ir/module.h"
#include "ir/text/parse.h"
#include "testutil.h"
#include "transforms/pass_manager.h"
#include "transforms/tir/row_split.h"
#include "transforms/tir/shape_params.h"
#include "passes.h"

static const char *model =
    "from tvm.script import ir as I\n"
    "from tvm.script import tir as T\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((\"n\", 8), dtype=\"float32\"), w: R.Tensor((8, 8), dtype=\"float32\")):\n"
    "        n = T.int64()\n"
    "        with R.dataflow():\n"
    "            a = R.add(x, x)\n"
    "            m = R.matmul(x, w)\n"
    "            s = R.sum(x, axis=[0])\n"
    "            t = R.permute_dims(x, axes=[1, 0])\n"
    "            r = R.nn.softmax(x, axis=0)\n"
    "            gv = (a, m, s, t, r)\n"
    "            R.output(gv)\n"
    "        return gv\n";

static const tj_module_t *legalized(tj_arena_t *a) {
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(a, "rows.rx", model, strlen(model), &m));
  return tu_run_passes(a, "LegalizeOps", m);
}

/* The kernel's one shape var (checked: read off dim 0 of its first buffer). */
static const tj_tir_expr_t *shape_var(tj_arena_t *a, const tj_prim_func_t *f) {
  const tj_prim_func_t *exposed;
  tj_tir_shape_param_t sp[TJ_TIR_MAX_SHAPE_PARAMS];
  int n = 0;
  TU_OK(tj_tir_expose_shape_params(a, f, "f", &exposed, &n, sp));
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(sp[0].buffer, 0);
  ck_assert_int_eq(exposed->n_params, f->n_params + 1);
  ck_assert_ptr_eq(exposed->params[f->n_params], sp[0].var);
  ck_assert_ptr_null(exposed->buffer_map[f->n_params]);
  return sp[0].var;
}

static bool independent(tj_arena_t *a, const tj_module_t *m, const char *name) {
  const tj_prim_func_t *f = tj_module_find_prim(m, name);
  ck_assert_msg(f != NULL, "no PrimFunc '%s'", name);
  return tj_tir_rows_independent(f, shape_var(a, f));
}

START_TEST(rows_are_independent_only_where_each_row_stands_alone) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = legalized(a);
  ck_assert(independent(a, m, "add"));
  ck_assert(independent(a, m, "matmul"));
  ck_assert(!independent(a, m, "sum"));       /* a reduction over n */
  ck_assert(!independent(a, m, "transpose")); /* n is not the outer dim of the result */
  ck_assert(!independent(a, m, "softmax"));   /* statistics over n */
  tj_arena_free(a);
}
END_TEST

START_TEST(a_chunk_is_static_and_starts_at_its_offset) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = legalized(a);
  const tj_prim_func_t *f = tj_module_find_prim(m, "matmul"), *c = NULL;
  TU_OK(tj_tir_row_chunk(a, f, shape_var(a, f), 16, &c));
  ck_assert_int_eq(c->n_params, f->n_params + 1);
  const tj_tir_expr_t *offset = c->params[f->n_params];
  ck_assert_ptr_null(c->buffer_map[f->n_params]);
  int64_t d;
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *b = c->buffer_map[i];
    int64_t elems;
    ck_assert(tj_buffer_static_size(b, &elems));
    bool rows = tj_tir_is_const_int(b->shape[0], &d) && d == 16;
    /* x and the result start offset * 8 elements in; w (8, 8) is read whole */
    if (i == 1) ck_assert_ptr_null(b->elem_offset);
    else {
      ck_assert(rows);
      ck_assert_int_eq(b->elem_offset->kind, TJ_TIR_MUL);
      ck_assert_ptr_eq(b->elem_offset->binary.a, offset);
      ck_assert(tj_tir_is_const_int(b->elem_offset->binary.b, &d) && d == 8);
    }
  }
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("row_split");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, rows_are_independent_only_where_each_row_stands_alone);
  tcase_add_test(tc, a_chunk_is_static_and_starts_at_its_offset);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
