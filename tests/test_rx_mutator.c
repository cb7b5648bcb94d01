/* ir/rx_mutator: the shared Relax rewriter (ExprMutator + BlockBuilder). */
#include "ir/rx_mutator.h"
#include "ir/sinfo.h"
#include "support/alloc.h"
#include "testutil.h"

static const tj_sinfo_t *tensor(tj_arena_t *a, tj_dtype_t dt) {
  int64_t dims[1] = {4};
  return tj_sinfo_tensor_static(a, dt, 1, dims);
}

/* main(x) { with dataflow: lv = (x,); gv = lv; return gv } */
static const tj_rx_func_t *tuple_func(tj_arena_t *a) {
  const tj_rx_expr_t *x = tj_rx_var(a, "x", tensor(a, TJ_F32));
  const tj_rx_expr_t *tup = tj_rx_tuple(a, 1, &x);
  const tj_sinfo_t *ts = tj_sinfo_tuple(a, 1, &x->sinfo);
  tup = tj_rx_with_sinfo(a, tup, ts);
  const tj_rx_expr_t *lv = tj_rx_dataflow_var(a, "lv", ts), *gv = tj_rx_var(a, "gv", ts);
  tj_rx_binding_t *b = TJ_ARENA_ARRAY(a, tj_rx_binding_t, 2);
  b[0] = (tj_rx_binding_t){lv, tup, NULL};
  b[1] = (tj_rx_binding_t){gv, lv, NULL};
  tj_rx_block_t blk = {true, 2, b};
  tj_rx_func_t *f = TJ_ARENA_NEW(a, tj_rx_func_t);
  const tj_rx_expr_t **params = TJ_ARENA_ARRAY(a, const tj_rx_expr_t *, 1);
  params[0] = x;
  *f = (tj_rx_func_t){.n_params = 1, .params = params, .body = tj_rx_seq(a, 1, &blk, gv), .is_pure = true};
  return f;
}

START_TEST(unchanged_function_is_shared) {
  tj_arena_t *a = tj_arena_create();
  const tj_rx_func_t *f = tuple_func(a);
  tj_rx_mutator_t m;
  tj_rx_mutator_init(&m, a, "test");
  ck_assert_ptr_eq(tj_rx_mutate_func(&m, f), f);
  ck_assert_ptr_null(m.error);
  tj_arena_free(a);
}
END_TEST

/* Remapping x to a float16 var changes the tuple's struct info, so lv and gv are
 * re-created with the new struct info and their uses follow (TVM's ReEmitBinding). */
static tj_status_t *remap_param(tj_arena_t *a, const tj_rx_func_t *f, const tj_rx_func_t **out) {
  tj_rx_mutator_t m;
  tj_rx_mutator_init(&m, a, "test");
  const tj_rx_expr_t *x16 = tj_rx_var(a, "x", tensor(a, TJ_F16));
  if (!x16) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "test: out of memory");
  if (tj_rx_mutator_remap(&m, f->params[0], x16)) *out = tj_rx_mutate_func(&m, f);
  return m.error;
}

START_TEST(struct_info_change_recreates_binding_vars) {
  tj_arena_t *a = tj_arena_create();
  const tj_rx_func_t *f = tuple_func(a), *nf = NULL;
  TU_OK(remap_param(a, f, &nf));
  ck_assert_ptr_ne(nf, f);
  const tj_rx_block_t *blk = &nf->body->seq.blocks[0];
  ck_assert_int_eq(blk->n_bindings, 2);
  const tj_rx_expr_t *lv = blk->bindings[0].var, *gv = blk->bindings[1].var;
  ck_assert_ptr_ne(lv, f->body->seq.blocks[0].bindings[0].var);
  ck_assert_int_eq(lv->kind, TJ_RX_DATAFLOW_VAR);
  ck_assert_str_eq(lv->var.name, "lv");
  ck_assert(tj_dtype_eq(lv->sinfo->tuple.fields[0]->tensor.dtype, TJ_F16));
  ck_assert_ptr_eq(blk->bindings[0].value->tuple.fields[0], nf->params[0]);
  ck_assert_ptr_eq(blk->bindings[1].value, lv);
  ck_assert_int_eq(gv->kind, TJ_RX_VAR);
  ck_assert_ptr_eq(nf->body->seq.body, gv);
  ck_assert(tj_dtype_eq(nf->params[0]->sinfo->tensor.dtype, TJ_F16));
  tj_arena_free(a);
}
END_TEST

/* main(x) -> ret { return x }, with x remapped to a var y of struct info `body`. */
static const tj_sinfo_t *ret_after_param_remap(tj_arena_t *a, const tj_sinfo_t *ret, const tj_sinfo_t *body) {
  const tj_rx_expr_t *x = tj_rx_var(a, "x", tensor(a, TJ_F32)), *y = tj_rx_var(a, "y", body);
  const tj_rx_expr_t **params = TJ_ARENA_ARRAY(a, const tj_rx_expr_t *, 1);
  tj_rx_func_t *f = TJ_ARENA_NEW(a, tj_rx_func_t);
  params[0] = x;
  *f = (tj_rx_func_t){.n_params = 1, .params = params, .body = x, .ret_sinfo = ret, .is_pure = true};
  tj_rx_mutator_t m;
  tj_rx_mutator_init(&m, a, "test");
  ck_assert(tj_rx_mutator_remap(&m, x, y));
  const tj_rx_func_t *nf = tj_rx_mutate_func(&m, f);
  ck_assert_ptr_null(m.error);
  ck_assert_ptr_ne(nf, f);
  return nf->ret_sinfo;
}

/* TVM's ExprMutator: the old return struct info stays while the body's is less specific;
 * a body that refines it, equals it or no longer fits it gives the body's. */
START_TEST(mutated_function_return_follows_the_body) {
  tj_arena_t *a = tj_arena_create();
  const tj_sinfo_t *f4 = tensor(a, TJ_F32), *f4_again = tensor(a, TJ_F32);
  const tj_sinfo_t *ndim1 = tj_sinfo_tensor(a, TJ_F32, 1, NULL), *ndim4 = tj_sinfo_tensor(a, TJ_F32, 4, NULL);
  int64_t d8[1] = {8};
  const tj_sinfo_t *f8 = tj_sinfo_tensor_static(a, TJ_F32, 1, d8);
  ck_assert_ptr_eq(ret_after_param_remap(a, f4, ndim1), f4);       /* body lost the shape: kept */
  ck_assert_ptr_eq(ret_after_param_remap(a, ndim1, f4), f4);       /* body refines it */
  ck_assert_ptr_eq(ret_after_param_remap(a, f4_again, f4), f4);    /* equal: the body's form */
  ck_assert_ptr_eq(ret_after_param_remap(a, f8, f4), f4);          /* no longer fits */
  ck_assert_ptr_eq(ret_after_param_remap(a, ndim4, f4), f4);       /* ndim 4 over a 1-d body */
  tj_arena_free(a);
}
END_TEST

static void normalize_binding(tj_rx_mutator_t *m, const tj_rx_binding_t *b) {
  tj_rx_reemit(m, b, tj_rx_normalize(m, b->value));
}

/* y = call_tir(g, (call_tir(h, (x,)),)) is split: lv = call_tir(h, (x,)); y = call_tir(g, (lv,)) */
START_TEST(normalize_lifts_nested_calls_into_fresh_bindings) {
  tj_arena_t *a = tj_arena_create();
  const tj_sinfo_t *s = tensor(a, TJ_F32);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", s), *y = tj_rx_dataflow_var(a, "y", s);
  const tj_rx_expr_t *inner = tj_rx_make_call_tir(a, tj_rx_global_var(a, "h"), 1, &x, s, NULL);
  const tj_rx_expr_t *outer = tj_rx_make_call_tir(a, tj_rx_global_var(a, "g"), 1, &inner, s, NULL);
  tj_rx_binding_t b = {y, outer, NULL};
  tj_rx_block_t blk = {true, 1, &b};
  tj_rx_mutator_t m;
  tj_rx_mutator_init(&m, a, "test");
  m.binding = normalize_binding;
  const tj_rx_block_t *nb = tj_rx_mutate_block(&m, &blk);
  ck_assert_ptr_null(m.error);
  ck_assert_int_eq(nb->n_bindings, 2);
  ck_assert_str_eq(nb->bindings[0].var->var.name, "lv");
  ck_assert_int_eq(nb->bindings[0].var->kind, TJ_RX_DATAFLOW_VAR);
  ck_assert_ptr_eq(nb->bindings[0].value, inner);
  ck_assert_ptr_eq(nb->bindings[1].var, y);
  tj_call_tir_view_t v;
  ck_assert(tj_rx_as_call_tir(nb->bindings[1].value, &v));
  ck_assert_ptr_eq(v.args[0], nb->bindings[0].var);
  tj_arena_free(a);
}
END_TEST

START_TEST(allocation_failures_are_reported) {
  long live = tj_alloc_live();
  int failures = 0;
  for (long n = 0; n < 40; n++) {
    tj_arena_t *a = tj_arena_create(), *b = tj_arena_create(); /* b: the rewrite's own memory */
    const tj_rx_func_t *f = tuple_func(a), *nf = NULL;
    tj_alloc_fail_after(n);
    tj_status_t *s = remap_param(b, f, &nf);
    tj_alloc_fail_reset();
    if (s) {
      ck_assert_int_eq(tj_status_code(s), TJ_ERR_OUT_OF_MEMORY);
      failures++;
      tj_status_free(s);
    } else {
      ck_assert_int_eq(nf->body->seq.blocks[0].n_bindings, 2);
    }
    tj_arena_free(a);
    tj_arena_free(b);
  }
  ck_assert_int_gt(failures, 0);
  ck_assert_int_eq(tj_alloc_live(), live);
}
END_TEST

int main(void) {
  Suite *s = suite_create("rx_mutator");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, unchanged_function_is_shared);
  tcase_add_test(tc, struct_info_change_recreates_binding_vars);
  tcase_add_test(tc, mutated_function_return_follows_the_body);
  tcase_add_test(tc, normalize_lifts_nested_calls_into_fresh_bindings);
  tcase_add_test(tc, allocation_failures_are_reported);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
