/* ir/struct_equal: TVM's structural equality (bound things by position, names ignored)
 * and the hash that agrees with it. IR is built by hand with the ir/ constructors. */
#include <stdio.h>
#include <string.h>

#include "ir/module.h"
#include "ir/struct_equal.h"
#include "testutil.h"

/* Knobs that make a relu PrimFunc differ in one place from the default. */
typedef struct relu_opts {
  const char *in_name, *out_name, *block_name, *loop_prefix;
  tj_dtype_t dtype;
  int64_t extent0;
  int swap_index;        /* store index order swapped */
  bool use_min;          /* T.min instead of T.max */
  bool with_attr;        /* tir.noalias */
  int64_t op_pattern;    /* -1 = absent */
  bool swap_params;
} relu_opts_t;

static relu_opts_t relu_defaults(void) {
  relu_opts_t o = {"lv", "compute", "compute", "i", TJ_F16, 16, 0, false, true, -1, false};
  return o;
}

/* relu over (extent0, 8) in the shape TVM's LegalizeOps gives it: root block, T.grid
 * loops, a block with remapped spatial iter vars, reads/writes, store of max(x, 0). */
static const tj_prim_func_t *make_relu(tj_arena_t *a, relu_opts_t o) {
  const tj_tir_expr_t *shape[2] = {tj_tir_i64(a, o.extent0), tj_tir_i64(a, 8)};
  const tj_buffer_t *in = tj_buffer_new(a, o.in_name, o.dtype, 2, shape, NULL);
  const tj_buffer_t *out = tj_buffer_new(a, o.out_name, o.dtype, 2, shape, NULL);
  char n0[16], n1[16];
  snprintf(n0, sizeof n0, "%s0", o.loop_prefix);
  snprintf(n1, sizeof n1, "%s1", o.loop_prefix);
  const tj_tir_expr_t *i0 = tj_tir_var(a, n0, TJ_I64), *i1 = tj_tir_var(a, n1, TJ_I64);
  const tj_tir_expr_t *v0 = tj_tir_var(a, "v_i0", TJ_I64), *v1 = tj_tir_var(a, "v_i1", TJ_I64);
  const tj_tir_expr_t *idx[2] = {v0, v1};
  const tj_tir_expr_t *sidx[2] = {o.swap_index ? v1 : v0, o.swap_index ? v0 : v1};
  const tj_tir_expr_t *load = tj_tir_load(a, in, 2, idx);
  const tj_tir_expr_t *val = tj_tir_binary(a, o.use_min ? TJ_TIR_MIN : TJ_TIR_MAX, load, tj_tir_float(a, o.dtype, 0));
  const tj_tir_stmt_t *store = tj_tir_store(a, out, 2, sidx, val);

  tj_block_t *blk = tj_block_new(a, o.block_name);
  tj_iter_var_t *ivs = TJ_ARENA_ARRAY(a, tj_iter_var_t, 2);
  ivs[0] = (tj_iter_var_t){v0, {tj_tir_i64(a, 0), tj_tir_i64(a, o.extent0)}, TJ_ITER_SPATIAL};
  ivs[1] = (tj_iter_var_t){v1, {tj_tir_i64(a, 0), tj_tir_i64(a, 8)}, TJ_ITER_SPATIAL};
  blk->n_iter_vars = 2;
  blk->iter_vars = ivs;
  tj_range_t *r = TJ_ARENA_ARRAY(a, tj_range_t, 2);
  r[0] = (tj_range_t){v0, tj_tir_i64(a, 1)};
  r[1] = (tj_range_t){v1, tj_tir_i64(a, 1)};
  tj_buffer_region_t *reads = TJ_ARENA_NEW(a, tj_buffer_region_t), *writes = TJ_ARENA_NEW(a, tj_buffer_region_t);
  *reads = (tj_buffer_region_t){in, 2, r};
  *writes = (tj_buffer_region_t){out, 2, r};
  blk->n_reads = blk->n_writes = 1;
  blk->reads = reads;
  blk->writes = writes;
  blk->body = store;
  const tj_tir_expr_t *binds[2] = {i0, i1};
  const tj_tir_stmt_t *realize = tj_tir_realize(a, 2, binds, NULL, blk);
  const tj_tir_stmt_t *loops = tj_tir_for(a, i0, tj_tir_i64(a, 0), tj_tir_i64(a, o.extent0), TJ_FOR_SERIAL,
                                          tj_tir_for(a, i1, tj_tir_i64(a, 0), tj_tir_i64(a, 8), TJ_FOR_SERIAL, realize));
  tj_block_t *root = tj_block_new(a, "root");
  root->body = loops;

  tj_prim_func_t *f = TJ_ARENA_NEW(a, tj_prim_func_t);
  const tj_tir_expr_t **params = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, 2);
  const tj_buffer_t **bm = TJ_ARENA_ARRAY(a, const tj_buffer_t *, 2);
  params[0] = tj_tir_var(a, o.in_name, TJ_HANDLE);
  params[1] = tj_tir_var(a, o.out_name, TJ_HANDLE);
  bm[0] = o.swap_params ? out : in;
  bm[1] = o.swap_params ? in : out;
  f->n_params = 2;
  f->params = params;
  f->buffer_map = bm;
  const tj_attrs_t *attrs = NULL;
  if (o.with_attr) attrs = tj_attrs_set(a, attrs, "tir.noalias", tj_attr_bool(true));
  if (o.op_pattern >= 0) attrs = tj_attrs_set(a, attrs, "op_pattern", tj_attr_int(o.op_pattern));
  f->attrs = attrs;
  f->body = tj_tir_realize(a, 0, NULL, NULL, root);
  return f;
}

#define ASSERT_DIFF(fa, fb, needle)                                                          \
  do {                                                                                       \
    char why_[512];                                                                          \
    ck_assert(!tj_struct_equal_prim_func((fa), (fb), why_, sizeof why_));                    \
    ck_assert_msg(strstr(why_, (needle)) != NULL, "why = '%s', expected '%s'", why_, needle); \
  } while (0)

START_TEST(renamed_relu_is_equal_with_same_hash) {
  tj_arena_t *a = tj_arena_create();
  relu_opts_t o = relu_defaults();
  const tj_prim_func_t *f1 = make_relu(a, o);
  o.in_name = "x";
  o.out_name = "y";
  o.loop_prefix = "ax";
  const tj_prim_func_t *f2 = make_relu(a, o);
  char why[256];
  ck_assert_msg(tj_struct_equal_prim_func(f1, f2, why, sizeof why), "%s", why);
  ck_assert_uint_eq(tj_struct_hash_prim_func(f1), tj_struct_hash_prim_func(f2));
  tj_arena_free(a);
}
END_TEST

START_TEST(single_changes_are_unequal_with_a_path) {
  tj_arena_t *a = tj_arena_create();
  const tj_prim_func_t *base = make_relu(a, relu_defaults());
  relu_opts_t o;

  o = relu_defaults();
  o.dtype = TJ_F32;
  ASSERT_DIFF(base, make_relu(a, o), "param 0 ('lv'): buffer 'lv': dtype float16 vs float32");

  o = relu_defaults();
  o.use_min = true;
  ASSERT_DIFF(base, make_relu(a, o), "block 'compute': store value: Max vs Min");

  /* Block names: ignored as in TVM, compared on request. */
  o = relu_defaults();
  o.block_name = "compute_1";
  const tj_prim_func_t *renamed = make_relu(a, o);
  ck_assert(tj_struct_equal_prim_func(base, renamed, NULL, 0));
  ck_assert_uint_eq(tj_struct_hash_prim_func(base), tj_struct_hash_prim_func(renamed));
  char why[256];
  ck_assert(!tj_struct_equal_prim_func_ex(base, renamed, TJ_SEQ_BLOCK_NAMES, why, sizeof why));
  ck_assert_msg(strstr(why, "block name 'compute' vs 'compute_1'"), "%s", why);

  o = relu_defaults();
  o.swap_index = 1;
  ASSERT_DIFF(base, make_relu(a, o), "store index 0: var 'v_i0' vs 'v_i1'");

  o = relu_defaults();
  o.extent0 = 32;
  ASSERT_DIFF(base, make_relu(a, o), "shape dim 0: value 16 vs 32");

  o = relu_defaults();
  o.with_attr = false;
  ASSERT_DIFF(base, make_relu(a, o), "func_attr: attr 'tir.noalias' only in the first");

  o = relu_defaults();
  o.swap_params = true; /* same shapes, so the difference shows where the buffers are used */
  ASSERT_DIFF(base, make_relu(a, o), "reads 0: buffer 'lv' vs 'lv' (the first corresponds to 'compute')");
  tj_arena_free(a);
}
END_TEST

START_TEST(loop_extent_is_compared) {
  tj_arena_t *a = tj_arena_create();
  const tj_tir_expr_t *i = tj_tir_var(a, "i", TJ_I64), *j = tj_tir_var(a, "j", TJ_I64);
  const tj_tir_stmt_t *body = tj_tir_evaluate(a, tj_tir_i64(a, 0));
  tj_prim_func_t f1 = {0}, f2 = {0};
  f1.body = tj_tir_for(a, i, tj_tir_i64(a, 0), tj_tir_i64(a, 4), TJ_FOR_SERIAL, body);
  f2.body = tj_tir_for(a, j, tj_tir_i64(a, 0), tj_tir_i64(a, 5), TJ_FOR_SERIAL, body);
  ASSERT_DIFF(&f1, &f2, "loop 'i': extent: value 4 vs 5");
  f2.body = tj_tir_for(a, j, tj_tir_i64(a, 0), tj_tir_i64(a, 4), TJ_FOR_PARALLEL, body);
  ASSERT_DIFF(&f1, &f2, "serial vs parallel");
  f2.body = tj_tir_for(a, j, tj_tir_i64(a, 0), tj_tir_i64(a, 4), TJ_FOR_SERIAL, body);
  ck_assert(tj_struct_equal_prim_func(&f1, &f2, NULL, 0));
  ck_assert_uint_eq(tj_struct_hash_prim_func(&f1), tj_struct_hash_prim_func(&f2));
  tj_arena_free(a);
}
END_TEST

START_TEST(int_literal_dtype_and_attr_int_vs_bool) {
  tj_arena_t *a = tj_arena_create();
  ck_assert(tj_struct_equal_tir_expr(tj_tir_i64(a, 3), tj_tir_i64(a, 3)));
  ck_assert(!tj_struct_equal_tir_expr(tj_tir_i64(a, 3), tj_tir_int(a, TJ_I32, 3)));
  ck_assert(!tj_struct_equal_tir_expr(tj_tir_i64(a, 3), tj_tir_i64(a, 4)));
  ck_assert(tj_struct_equal_tir_expr(tj_tir_float(a, TJ_F32, 1e-5), tj_tir_float(a, TJ_F32, 1e-5)));
  ck_assert(!tj_struct_equal_tir_expr(tj_tir_float(a, TJ_F32, 0.5), tj_tir_float(a, TJ_F16, 0.5)));

  relu_opts_t o = relu_defaults();
  o.op_pattern = 4;
  const tj_prim_func_t *f4 = make_relu(a, o);
  o.op_pattern = 0;
  ASSERT_DIFF(f4, make_relu(a, o), "attr 'op_pattern': 4 (int32) vs 0 (int32)");
  /* {"Primitive": 1} is an int32 IntImm, True a bool one: TVM keeps them apart. */
  tj_prim_func_t p1 = {0}, p2 = {0};
  p1.body = p2.body = tj_tir_evaluate(a, tj_tir_i64(a, 0));
  p1.attrs = tj_attrs_set(a, NULL, "Primitive", tj_attr_int(1));
  p2.attrs = tj_attrs_set(a, NULL, "Primitive", tj_attr_bool(true));
  ASSERT_DIFF(&p1, &p2, "attr 'Primitive': 1 (int32) vs 1 (bool)");
  /* Attr order does not matter. */
  p1.attrs = tj_attrs_set(a, tj_attrs_set(a, NULL, "a", tj_attr_int(1)), "b", tj_attr_str("x"));
  p2.attrs = tj_attrs_set(a, tj_attrs_set(a, NULL, "b", tj_attr_str("x")), "a", tj_attr_int(1));
  ck_assert(tj_struct_equal_prim_func(&p1, &p2, NULL, 0));
  ck_assert_uint_eq(tj_struct_hash_prim_func(&p1), tj_struct_hash_prim_func(&p2));
  tj_arena_free(a);
}
END_TEST

START_TEST(free_var_must_be_the_same_node) {
  tj_arena_t *a = tj_arena_create();
  const tj_tir_expr_t *n = tj_tir_var(a, "n", TJ_I64), *m = tj_tir_var(a, "n", TJ_I64);
  ck_assert(tj_struct_equal_tir_expr(n, n));
  ck_assert(!tj_struct_equal_tir_expr(n, m));
  /* A bound var against a free one: let x = 1 in x  vs  let y = 1 in n. */
  const tj_tir_expr_t *x = tj_tir_var(a, "x", TJ_I64), *y = tj_tir_var(a, "y", TJ_I64);
  tj_prim_func_t f1 = {0}, f2 = {0};
  f1.body = tj_tir_evaluate(a, tj_tir_let(a, x, tj_tir_i64(a, 1), x));
  f2.body = tj_tir_evaluate(a, tj_tir_let(a, y, tj_tir_i64(a, 1), n));
  ASSERT_DIFF(&f1, &f2, "var 'x' vs 'n'");
  f2.body = tj_tir_evaluate(a, tj_tir_let(a, y, tj_tir_i64(a, 1), y));
  ck_assert(tj_struct_equal_prim_func(&f1, &f2, NULL, 0));
  tj_arena_free(a);
}
END_TEST

START_TEST(symbolic_shape_vars_bind_at_first_occurrence) {
  tj_arena_t *a = tj_arena_create();
  /* f(A: (n, n)) vs f(A: (m, m)) equal; vs f(A: (m, k)) unequal. */
  const tj_tir_expr_t *n = tj_tir_var(a, "n", TJ_I64), *m = tj_tir_var(a, "m", TJ_I64), *k = tj_tir_var(a, "k", TJ_I64);
  const tj_tir_expr_t *s1[2] = {n, n}, *s2[2] = {m, m}, *s3[2] = {m, k};
  const tj_buffer_t *b1 = tj_buffer_new(a, "A", TJ_F32, 2, s1, NULL), *b2 = tj_buffer_new(a, "B", TJ_F32, 2, s2, NULL),
                    *b3 = tj_buffer_new(a, "C", TJ_F32, 2, s3, NULL);
  const tj_tir_expr_t *p1 = tj_tir_var(a, "a", TJ_HANDLE), *p2 = tj_tir_var(a, "b", TJ_HANDLE), *p3 = tj_tir_var(a, "c", TJ_HANDLE);
  tj_prim_func_t f1 = {1, &p1, &b1, NULL, tj_tir_evaluate(a, n)};
  tj_prim_func_t f2 = {1, &p2, &b2, NULL, tj_tir_evaluate(a, m)};
  tj_prim_func_t f3 = {1, &p3, &b3, NULL, tj_tir_evaluate(a, m)};
  char why[256];
  ck_assert_msg(tj_struct_equal_prim_func(&f1, &f2, why, sizeof why), "%s", why);
  ck_assert_uint_eq(tj_struct_hash_prim_func(&f1), tj_struct_hash_prim_func(&f2));
  ASSERT_DIFF(&f1, &f3, "shape dim 1: var 'n' vs 'k'");
  tj_arena_free(a);
}
END_TEST

/* main(x: (16,) f16) { with dataflow: lv = relu(x); gv = add(lv, x); output gv } */
static const tj_rx_func_t *make_main(tj_arena_t *a, const char *pname, bool lv_is_dataflow, tj_dtype_t pdt,
                                     const char *second_op) {
  int64_t dims[1] = {16};
  const tj_sinfo_t *t = tj_sinfo_tensor_static(a, pdt, 1, dims);
  const tj_rx_expr_t *x = tj_rx_var(a, pname, t);
  const tj_rx_expr_t *lv = lv_is_dataflow ? tj_rx_dataflow_var(a, "lv", t) : tj_rx_var(a, "lv", t);
  const tj_rx_expr_t *gv = tj_rx_var(a, "gv", t);
  const tj_rx_expr_t *relu = tj_rx_call(a, tj_rx_op(a, "relax.nn.relu"), 1, &x, NULL, 0, NULL);
  const tj_rx_expr_t *args[2] = {lv, x};
  const tj_rx_expr_t *add = tj_rx_call(a, tj_rx_op(a, second_op), 2, args, NULL, 0, NULL);
  tj_rx_binding_t *bs = TJ_ARENA_ARRAY(a, tj_rx_binding_t, 2);
  bs[0] = (tj_rx_binding_t){lv, relu, NULL};
  bs[1] = (tj_rx_binding_t){gv, add, NULL};
  tj_rx_block_t blk = {true, 2, bs};
  tj_rx_func_t *f = TJ_ARENA_NEW(a, tj_rx_func_t);
  const tj_rx_expr_t **params = TJ_ARENA_ARRAY(a, const tj_rx_expr_t *, 1);
  params[0] = x;
  f->n_params = 1;
  f->params = params;
  f->ret_sinfo = t;
  f->body = tj_rx_seq(a, 1, &blk, gv);
  f->attrs = tj_attrs_set(a, NULL, "global_symbol", tj_attr_str("main"));
  f->is_pure = true;
  return f;
}

START_TEST(relax_functions_compare_by_binding_position) {
  tj_arena_t *a = tj_arena_create();
  const tj_rx_func_t *f1 = make_main(a, "x", true, TJ_F16, "relax.add");
  const tj_rx_func_t *f2 = make_main(a, "data", true, TJ_F16, "relax.add");
  char why[256];
  ck_assert_msg(tj_struct_equal_rx_func(f1, f2, why, sizeof why), "%s", why);
  ck_assert_uint_eq(tj_struct_hash_rx_func(f1), tj_struct_hash_rx_func(f2));

  ck_assert(!tj_struct_equal_rx_func(f1, make_main(a, "x", false, TJ_F16, "relax.add"), why, sizeof why));
  ck_assert_msg(strstr(why, "binding 0 ('lv'): DataflowVar 'lv' vs Var 'lv'"), "%s", why);
  ck_assert(!tj_struct_equal_rx_func(f1, make_main(a, "x", true, TJ_F16, "relax.multiply"), why, sizeof why));
  ck_assert_msg(strstr(why, "binding 1 ('gv'): value: callee: op relax.add vs relax.multiply"), "%s", why);
  ck_assert(!tj_struct_equal_rx_func(f1, make_main(a, "x", true, TJ_F32, "relax.add"), why, sizeof why));
  ck_assert_msg(strstr(why, "param 0 ('x'): struct info: dtype float16 vs float32"), "%s", why);

  /* Module level: order-insensitive, names and bodies compared. */
  tj_func_entry_t e1[2] = {{"main", false, NULL, f1}, {"relu", true, make_relu(a, relu_defaults()), NULL}};
  tj_func_entry_t e2[2] = {{"relu", true, make_relu(a, relu_defaults()), NULL}, {"main", false, NULL, f2}};
  tj_module_t *m1 = tj_module_new(a, 2, e1, NULL), *m2 = tj_module_new(a, 2, e2, NULL);
  ck_assert_msg(tj_struct_equal_module(m1, m2, why, sizeof why), "%s", why);
  e2[0].name = "relu2";
  m2 = tj_module_new(a, 2, e2, NULL);
  ck_assert(!tj_struct_equal_module(m1, m2, why, sizeof why));
  ck_assert_str_eq(why, "function 'relu' only in the first module");
  e2[0].name = "relu";
  e2[1].relax = make_main(a, "x", true, TJ_F16, "relax.subtract");
  m2 = tj_module_new(a, 2, e2, NULL);
  ck_assert(!tj_struct_equal_module(m1, m2, why, sizeof why));
  ck_assert_str_eq(why, "function 'main': binding 1 ('gv'): value: callee: op relax.add vs relax.subtract");
  tj_arena_free(a);
}
END_TEST

START_TEST(call_tir_args_and_sinfo_are_compared) {
  tj_arena_t *a = tj_arena_create();
  int64_t dims[2] = {4, 8};
  const tj_sinfo_t *t16 = tj_sinfo_tensor_static(a, TJ_F16, 2, dims), *t32 = tj_sinfo_tensor_static(a, TJ_F32, 2, dims);
  const tj_rx_expr_t *x = tj_rx_var(a, "x", t16);
  const tj_rx_expr_t *c1 = tj_rx_make_call_tir(a, tj_rx_global_var(a, "relu"), 1, &x, t16, NULL);
  const tj_rx_expr_t *c2 = tj_rx_make_call_tir(a, tj_rx_global_var(a, "relu"), 1, &x, t32, NULL);
  const tj_rx_expr_t *c3 = tj_rx_make_call_tir(a, tj_rx_global_var(a, "relu1"), 1, &x, t16, NULL);
  tj_rx_func_t f1 = {1, &x, t16, c1, NULL, true};
  tj_rx_func_t f2 = f1, f3 = f1;
  f2.body = c2;
  f3.body = c3;
  char why[256];
  ck_assert(tj_struct_equal_rx_func(&f1, &f1, why, sizeof why));
  ck_assert(!tj_struct_equal_rx_func(&f1, &f2, why, sizeof why));
  ck_assert_msg(strstr(why, "sinfo_arg 0: dtype float16 vs float32"), "%s", why);
  ck_assert(!tj_struct_equal_rx_func(&f1, &f3, why, sizeof why));
  ck_assert_msg(strstr(why, "call arg 0: function 'relu' vs 'relu1'"), "%s", why);
  ck_assert(tj_struct_equal_sinfo(t16, tj_sinfo_tensor_static(a, TJ_F16, 2, dims)));
  ck_assert(!tj_struct_equal_sinfo(t16, t32));
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("struct_equal");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, renamed_relu_is_equal_with_same_hash);
  tcase_add_test(tc, single_changes_are_unequal_with_a_path);
  tcase_add_test(tc, loop_extent_is_compared);
  tcase_add_test(tc, int_literal_dtype_and_attr_int_vs_bool);
  tcase_add_test(tc, free_var_must_be_the_same_node);
  tcase_add_test(tc, symbolic_shape_vars_bind_at_first_occurrence);
  tcase_add_test(tc, relax_functions_compare_by_binding_position);
  tcase_add_test(tc, call_tir_args_and_sinfo_are_compared);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
