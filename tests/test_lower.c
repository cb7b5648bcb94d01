/* transforms/tir: LowerBlocks, FlattenBuffers and the lowering pipeline. */
#include <stdio.h>
#include <string.h>

#include "ir/module.h"
#include "ir/text/parse.h"
#include "ir/visit.h"
#include "jit_test_kernels.h"
#include "project.h"
#include "testutil.h"
#include "transforms/tir/lower.h"

/* ---- a census of what a lowered body contains ---- */
typedef struct census {
  int blocks, allocates, ifs, loads, stores, non_flat, non_i64_index;
  const tj_tir_stmt_t *first_if;
  const tj_tir_stmt_t *first_alloc;
} census_t;

static void census_index(census_t *c, int n, const tj_tir_expr_t *const *idx, const tj_buffer_t *b) {
  if (n != 1 || b->ndim != 1) c->non_flat++;
  else if (idx[0]->dtype.code != TJ_DT_INT || idx[0]->dtype.bits != 64) c->non_i64_index++;
}

static bool census_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  census_t *c = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD) {
    c->loads++;
    census_index(c, e->load.n_indices, e->load.indices, e->load.buffer);
  }
  return true;
}

static bool census_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  census_t *c = v->ctx;
  switch (s->kind) {
    case TJ_TIR_BLOCK_REALIZE: c->blocks++; break;
    case TJ_TIR_ALLOCATE:
      if (!c->first_alloc) c->first_alloc = s;
      c->allocates++;
      break;
    case TJ_TIR_IF:
      if (!c->first_if) c->first_if = s;
      c->ifs++;
      break;
    case TJ_TIR_BUFFER_STORE:
      c->stores++;
      census_index(c, s->store.n_indices, s->store.indices, s->store.buffer);
      break;
    default: break;
  }
  return true;
}

static census_t take_census(const tj_prim_func_t *f) {
  census_t c = {0};
  tj_tir_visitor_t v = {.expr = census_expr, .stmt = census_stmt, .ctx = &c};
  tj_tir_visit_stmt(&v, f->body);
  return c;
}

static const tj_prim_func_t *lower_ok(tj_arena_t *a, const tj_prim_func_t *f, const char *name) {
  const tj_prim_func_t *out = NULL;
  TU_OK(tj_tir_lower(a, f, name, &out));
  ck_assert_ptr_nonnull(out);
  return out;
}

START_TEST(elementwise_lowers_to_flat_row_major_loops) {
  tj_arena_t *a = tj_arena_create();
  tj_prim_func_t *f = tk_elementwise(a, TJ_F16, 3, 5, TJ_TIR_ADD, true);
  ck_assert_int_eq(take_census(f).blocks, 2);
  const tj_prim_func_t *low = lower_ok(a, f, "add");
  census_t c = take_census(low);
  ck_assert_int_eq(c.blocks, 0);
  ck_assert_int_eq(c.non_flat, 0);
  ck_assert_int_eq(c.non_i64_index, 0);
  ck_assert_int_eq(c.loads, 2);
  ck_assert_int_eq(c.stores, 1);
  /* The param buffers are flat views of 15 elements with the same storage var. */
  for (int i = 0; i < 3; i++) {
    int64_t n = 0;
    ck_assert_int_eq(low->buffer_map[i]->ndim, 1);
    ck_assert(tj_tir_is_const_int(low->buffer_map[i]->shape[0], &n));
    ck_assert_int_eq(n, 15);
    ck_assert_ptr_eq(low->buffer_map[i]->data, f->buffer_map[i]->data);
    ck_assert_ptr_eq(low->params[i], f->params[i]);
  }
  /* for i0: for i1: C[i0 * 5 + i1] = A[...] + B[...] with the loop vars substituted. */
  const tj_tir_stmt_t *outer = low->body;
  ck_assert_int_eq(outer->kind, TJ_TIR_FOR);
  const tj_tir_stmt_t *inner = outer->loop.body;
  ck_assert_int_eq(inner->kind, TJ_TIR_FOR);
  const tj_tir_stmt_t *st = inner->loop.body;
  ck_assert_int_eq(st->kind, TJ_TIR_BUFFER_STORE);
  const tj_tir_expr_t *idx = st->store.indices[0];
  ck_assert_int_eq(idx->kind, TJ_TIR_ADD);
  ck_assert_int_eq(idx->binary.a->kind, TJ_TIR_MUL);
  ck_assert_ptr_eq(idx->binary.a->binary.a, outer->loop.var);
  int64_t five = 0;
  ck_assert(tj_tir_is_const_int(idx->binary.a->binary.b, &five));
  ck_assert_int_eq(five, 5);
  ck_assert_ptr_eq(idx->binary.b, inner->loop.var);
  /* The input function is untouched. */
  ck_assert_int_eq(take_census(f).blocks, 2);
  tj_arena_free(a);
}
END_TEST

START_TEST(reduction_init_is_guarded_by_first_reduce_iteration) {
  tj_arena_t *a = tj_arena_create();
  tj_prim_func_t *f = tk_row_sum(a, 4, 7);
  const tj_prim_func_t *low = NULL; /* without the schedule step, which splits the init */
  TU_OK(tj_tir_lower_blocks(a, f, "row_sum", &low));
  TU_OK(tj_tir_flatten_buffers(a, low, "row_sum", &low));
  TU_OK(tj_tir_check_lowered(low, "row_sum"));
  census_t c = take_census(low);
  ck_assert_int_eq(c.blocks, 0);
  ck_assert_int_eq(c.non_flat, 0);
  ck_assert_int_eq(c.ifs, 1);
  /* The root alloc_buffer became an ALLOCATE around the whole body. */
  ck_assert_int_eq(low->body->kind, TJ_TIR_ALLOCATE);
  ck_assert_int_eq(c.allocates, 1);
  ck_assert_str_eq(low->body->allocate.buffer->name, "tmp");
  ck_assert_int_eq(low->body->allocate.buffer->ndim, 1);
  ck_assert(tj_tir_alloc_on_stack(low->body->allocate.buffer));
  /* if (k == 0) tmp[i] = 0, where k is the reduce loop (the inner loop of the nest). */
  const tj_tir_stmt_t *seq = low->body->allocate.body;
  ck_assert_int_eq(seq->kind, TJ_TIR_SEQ);
  const tj_tir_stmt_t *red_outer = seq->seq.stmts[0];
  const tj_tir_stmt_t *red_inner = red_outer->loop.body;
  ck_assert_int_eq(red_inner->kind, TJ_TIR_FOR);
  const tj_tir_stmt_t *guard = c.first_if;
  ck_assert_int_eq(guard->if_.cond->kind, TJ_TIR_EQ);
  ck_assert_ptr_eq(guard->if_.cond->binary.a, red_inner->loop.var);
  int64_t zero = -1;
  ck_assert(tj_tir_is_const_int(guard->if_.cond->binary.b, &zero));
  ck_assert_int_eq(zero, 0);
  ck_assert_int_eq(guard->if_.then_stmt->kind, TJ_TIR_BUFFER_STORE);
  ck_assert_int_eq(guard->if_.then_stmt->store.value->kind, TJ_TIR_FLOAT_IMM);
  ck_assert_ptr_null(guard->if_.else_stmt);
  /* The guarded init comes before the update in the loop body. */
  ck_assert_int_eq(red_inner->loop.body->kind, TJ_TIR_SEQ);
  ck_assert_ptr_eq(red_inner->loop.body->seq.stmts[0], guard);
  tj_arena_free(a);
}
END_TEST

/* ScheduleReductions: init split out, the output's contiguous loop innermost. */
START_TEST(reduction_is_decomposed_and_reordered) {
  tj_arena_t *a = tj_arena_create();
  tj_prim_func_t *f = tk_row_sum(a, 4, 7);
  const tj_prim_func_t *low = lower_ok(a, f, "row_sum");
  census_t c = take_census(low);
  ck_assert_int_eq(c.blocks, 0);
  ck_assert_int_eq(c.ifs, 0); /* no per-iteration init guard any more */
  ck_assert_int_eq(c.stores, 3);
  /* alloc { seq { seq { for i': tmp[i'] = 0 ; for k: for i: tmp[i] += A[i*7+k] } ; scale } } */
  const tj_tir_stmt_t *top = low->body->allocate.body;
  ck_assert_int_eq(top->kind, TJ_TIR_SEQ);
  const tj_tir_stmt_t *red = top->seq.stmts[0];
  ck_assert_int_eq(red->kind, TJ_TIR_SEQ);
  const tj_tir_stmt_t *init = red->seq.stmts[0], *upd = red->seq.stmts[1];
  ck_assert_int_eq(init->kind, TJ_TIR_FOR);
  ck_assert_int_eq(init->loop.body->kind, TJ_TIR_BUFFER_STORE);
  ck_assert_int_eq(init->loop.body->store.value->kind, TJ_TIR_FLOAT_IMM);
  int64_t e = 0;
  ck_assert(tj_tir_is_const_int(upd->loop.extent, &e));
  ck_assert_int_eq(e, 7); /* the reduce loop k is now outer */
  const tj_tir_stmt_t *inner = upd->loop.body;
  ck_assert_int_eq(inner->kind, TJ_TIR_FOR);
  ck_assert(tj_tir_is_const_int(inner->loop.extent, &e));
  ck_assert_int_eq(e, 4);
  ck_assert_int_eq(inner->loop.body->kind, TJ_TIR_BUFFER_STORE);
  ck_assert_ptr_eq(inner->loop.body->store.indices[0], inner->loop.var);
  /* A block that is not a plain reduction (no init) is left alone. */
  tj_prim_func_t *g = tk_elementwise(a, TJ_F32, 3, 5, TJ_TIR_ADD, true);
  const tj_prim_func_t *same = NULL;
  TU_OK(tj_tir_schedule_reductions(a, g, "add", &same));
  ck_assert_ptr_eq(same->body, g->body);
  tj_arena_free(a);
}
END_TEST

START_TEST(large_or_symbolic_allocations_go_to_the_heap) {
  tj_arena_t *a = tj_arena_create();
  int64_t small = 16 * 1024, big = 16 * 1024 + 1;
  ck_assert(tj_tir_alloc_on_stack(tk_buffer(a, "s", TJ_F32, 1, &small)));
  ck_assert(!tj_tir_alloc_on_stack(tk_buffer(a, "b", TJ_F32, 1, &big)));
  const tj_tir_expr_t *n = tj_tir_var(a, "n", TJ_I64);
  ck_assert(!tj_tir_alloc_on_stack(tj_buffer_new(a, "sym", TJ_F32, 1, &n, NULL)));
  tj_arena_free(a);
}
END_TEST

/* tj_tir_lower refuses f with `code` and a message naming the function and `why`. */
static void expect_lower_refused(tj_arena_t *a, const tj_prim_func_t *f, const char *name, tj_code_t code,
                                 const char *why) {
  const tj_prim_func_t *out = NULL;
  tj_status_t *s = tj_tir_lower(a, f, name, &out);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), code);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), name));
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), why));
  ck_assert_ptr_null(out);
  tj_status_free(s);
}

START_TEST(predicate_becomes_if_and_match_buffer_is_unsupported) {
  tj_arena_t *a = tj_arena_create();
  tj_prim_func_t *f = tk_pad1d(a, TJ_F32, 8, 1);
  /* Add T.where(i < 9) to the inner block realize. */
  const tj_tir_stmt_t *root_body = f->body->realize.block->body;
  const tj_tir_stmt_t *realize = root_body->loop.body;
  tj_tir_stmt_t *with_pred = (tj_tir_stmt_t *)tj_tir_realize(
      a, realize->realize.n_iter_values, realize->realize.iter_values,
      tj_tir_binary(a, TJ_TIR_LT, root_body->loop.var, tk_i64(a, 9)), realize->realize.block);
  tj_block_t *root = tj_block_new(a, "root");
  root->body = tj_tir_for(a, root_body->loop.var, root_body->loop.min, root_body->loop.extent, TJ_FOR_SERIAL, with_pred);
  tj_prim_func_t g = *f;
  g.body = tj_tir_realize(a, 0, NULL, NULL, root);
  const tj_prim_func_t *low = lower_ok(a, &g, "pad_where");
  ck_assert_int_eq(low->body->kind, TJ_TIR_FOR);
  ck_assert_int_eq(low->body->loop.body->kind, TJ_TIR_IF);
  ck_assert_int_eq(low->body->loop.body->if_.cond->kind, TJ_TIR_LT);

  /* A block with a match_buffer is refused with a clear status. */
  tj_block_t *mb = tj_block_new(a, "matcher");
  *mb = *realize->realize.block;
  tj_match_buffer_t m = {f->buffer_map[0], {f->buffer_map[0], 0, NULL}};
  mb->n_match_buffers = 1;
  mb->match_buffers = &m;
  tj_block_t *root2 = tj_block_new(a, "root");
  root2->body = tj_tir_for(a, root_body->loop.var, root_body->loop.min, root_body->loop.extent, TJ_FOR_SERIAL,
                           tj_tir_realize(a, realize->realize.n_iter_values, realize->realize.iter_values, NULL, mb));
  g.body = tj_tir_realize(a, 0, NULL, NULL, root2);
  expect_lower_refused(a, &g, "pad_match", TJ_ERR_UNSUPPORTED, "match_buffer");
  tj_arena_free(a);
}
END_TEST

/* A buffer whose element count passes int64 (as a fuzzed model had: 3683193895251170644
 * x 3) is refused with a status naming the function, not folded with an overflow. */
START_TEST(an_extent_past_int64_is_refused) {
  tj_arena_t *a = tj_arena_create();
  tj_prim_func_t *f = tk_elementwise(a, TJ_F32, 3683193895251170644LL, 3, TJ_TIR_ADD, false);
  expect_lower_refused(a, f, "huge_add", TJ_ERR_VERIFY, "overflows int64");
  tj_arena_free(a);
}
END_TEST

/* The seed's PrimFuncs, once the parser can read them. */
START_TEST(seed_prim_funcs_lower) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  tj_status_t *s = tj_parse_file(a, tu_project_path(TU_SEED_MODEL), &m);
  if (s && tj_status_code(s) == TJ_ERR_UNSUPPORTED) {
    printf("seed_prim_funcs_lower: parser not available (%s), skipped\n", tj_status_text(s));
    tj_status_free(s);
    tj_arena_free(a);
    return;
  }
  TU_OK(s);
  int n_prim = 0;
  for (int i = 0; i < m->n_funcs; i++) {
    if (!m->funcs[i].is_prim) continue;
    n_prim++;
    census_t before = take_census(m->funcs[i].prim);
    ck_assert_int_gt(before.blocks, 0);
    const tj_prim_func_t *low = lower_ok(a, m->funcs[i].prim, m->funcs[i].name);
    census_t c = take_census(low);
    ck_assert_int_eq(c.blocks, 0);
    ck_assert_int_eq(c.non_flat, 0);
    ck_assert_int_eq(c.non_i64_index, 0);
    if (strcmp(m->funcs[i].name, "conv2d2") == 0) {
      ck_assert_int_eq(c.allocates, 1); /* pad_temp, 16*34*34*16 halfs: heap */
      ck_assert(!tj_tir_alloc_on_stack(c.first_alloc->allocate.buffer));
      ck_assert_int_eq(c.ifs, 0); /* init split out by ScheduleReductions */
      ck_assert_int_eq(c.stores, 3); /* pad, init, update */
    } else if (strcmp(m->funcs[i].name, "layer_norm") == 0) {
      ck_assert_int_eq(c.allocates, 2); /* two 64 KiB f32 temps: stack */
      ck_assert(tj_tir_alloc_on_stack(c.first_alloc->allocate.buffer));
      ck_assert_int_eq(c.ifs, 1); /* two outputs: not rescheduled, init guarded */
    } else {
      ck_assert_int_eq(c.ifs, 0);
    }
  }
  ck_assert_int_eq(n_prim, 3);
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("lower");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, elementwise_lowers_to_flat_row_major_loops);
  tcase_add_test(tc, reduction_init_is_guarded_by_first_reduce_iteration);
  tcase_add_test(tc, reduction_is_decomposed_and_reordered);
  tcase_add_test(tc, large_or_symbolic_allocations_go_to_the_heap);
  tcase_add_test(tc, predicate_becomes_if_and_match_buffer_is_unsupported);
  tcase_add_test(tc, seed_prim_funcs_lower);
  tcase_add_test(tc, an_extent_past_int64_is_refused);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
