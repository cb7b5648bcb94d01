/* Differential testing, shared by test_differential.c (the project's own models) and
 * test_corpus_differential.c (TVM's conformance corpus): each PrimFunc with static shapes
 * is JIT-compiled and run on random inputs, and its results are held against the
 * reference TIR interpreter (ir/interp.c). Kernels without transcendental intrinsics must
 * agree bit for bit; with them (exp, log, ...), within a few ulps, because libm and the
 * interpreter's double-precision evaluation may round differently. The functions that
 * are not compared are listed with the reason. Header-only: each test includes it. */
#ifndef TJ_TESTS_DIFFERENTIAL_H
#define TJ_TESTS_DIFFERENTIAL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/text/parse.h"
#include "ir/visit.h"
#include "jit/jit.h"
#include "runtime/kernel.h"
#include "support/alloc.h"
#include "project.h"
#include "testutil.h"
#include "transforms/tir/lower.h"

enum { MAX_PARAMS = 32 };
/* Interpreter work limit (innermost statement executions) unless TVMJIT_SLOW_TESTS=1. */
static const double WORK_LIMIT = 4e6;

typedef struct tally {
  int compared, exact, skipped, failed;
} tally_t;

static tj_jit_t *jit;
/* When set, the JIT compiles each function with loops marked by mark_loops (the
 * interpreter still runs the original). */
static bool marking;
/* compile in the default float mode (FMA, reordered reductions, fast exp): compared within tolerance */
static bool relaxed;
/* float32 tolerance of the default float mode, relative to max(1, |y|) */
static double relaxed_f32_tol = 1e-5;
static int marked_vectorized, marked_unrolled, funcs_with_vectors;

/* ---- marking loops vectorized / unrolled, for the VectorizeLoop and UnrollLoop passes ---- */

static bool has_loop(const tj_tir_stmt_t *s) {
  if (!s) return false;
  switch (s->kind) {
    case TJ_TIR_FOR: return true;
    case TJ_TIR_BLOCK_REALIZE:
      return has_loop(s->realize.block->init) || has_loop(s->realize.block->body);
    case TJ_TIR_SEQ:
      for (int i = 0; i < s->seq.n; i++)
        if (has_loop(s->seq.stmts[i])) return true;
      return false;
    case TJ_TIR_LET_STMT: return has_loop(s->let.body);
    case TJ_TIR_IF: return has_loop(s->if_.then_stmt) || has_loop(s->if_.else_stmt);
    case TJ_TIR_ALLOCATE: return has_loop(s->allocate.body);
    default: return false;
  }
}

static bool small_const_extent(const tj_tir_stmt_t *loop, int64_t max) {
  int64_t ext;
  return loop->loop.kind == TJ_FOR_SERIAL && tj_tir_is_const_int(loop->loop.extent, &ext) && ext > 1 && ext <= max;
}

/* Every innermost serial loop with a constant extent up to 64 becomes T.vectorized (the
 * pass decides whether that is legal and keeps it serial otherwise); a loop whose body
 * is exactly such a loop becomes T.unroll when its extent is at most 4. */
static const tj_tir_stmt_t *mark_stmt(tj_tir_mutator_t *m, const tj_tir_stmt_t *s) {
  if (s->kind != TJ_TIR_FOR) return NULL;
  const tj_tir_stmt_t *body = tj_tir_mutate_stmt(m, s->loop.body);
  if (!body) return NULL;
  tj_for_kind_t kind = s->loop.kind;
  if (!has_loop(s->loop.body) && small_const_extent(s, 64)) kind = TJ_FOR_VECTORIZED, marked_vectorized++;
  else if (body->kind == TJ_TIR_FOR && body->loop.kind == TJ_FOR_VECTORIZED && small_const_extent(s, 4))
    kind = TJ_FOR_UNROLLED, marked_unrolled++;
  tj_tir_stmt_t *r = (tj_tir_stmt_t *)tj_tir_for(m->arena, s->loop.var, s->loop.min, s->loop.extent, kind, body);
  if (r) r->loop.annotations = s->loop.annotations;
  return r;
}

static bool vector_store(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  if (s->kind == TJ_TIR_BUFFER_STORE && s->store.value->dtype.lanes > 1) *(bool *)v->ctx = true;
  return true;
}

/* Counts the functions whose lowered form has a vector store. */
static void count_vectorized(tj_arena_t *a, const tj_prim_func_t *f, const char *name) {
  const tj_prim_func_t *low = NULL;
  tj_status_t *st = tj_tir_lower(a, f, name, &low);
  if (st) {
    tj_status_free(st);
    return;
  }
  bool found = false;
  tj_tir_visitor_t v = {.stmt = vector_store, .ctx = &found};
  tj_tir_visit_stmt(&v, low->body);
  funcs_with_vectors += found;
}

static const tj_prim_func_t *mark_loops(tj_arena_t *a, const tj_prim_func_t *f) {
  tj_tir_mutator_t m = {.arena = a, .stmt = mark_stmt};
  tj_prim_func_t *nf = TJ_ARENA_NEW(a, tj_prim_func_t);
  ck_assert_ptr_nonnull(nf);
  *nf = *f;
  nf->body = tj_tir_mutate_stmt(&m, f->body);
  ck_assert(!m.failed && nf->body);
  return nf;
}

/* ---- properties of a function ---- */

typedef struct scan {
  bool transcendental;
} scan_t;

static bool scan_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  if (e->kind == TJ_TIR_CALL && strcmp(e->call.op, "tir.if_then_else") != 0) ((scan_t *)v->ctx)->transcendental = true;
  if (e->kind == TJ_TIR_DIV && tj_dtype_is_float(e->dtype)) ((scan_t *)v->ctx)->transcendental = true;
  return true;
}

/* Static work estimate: executions of each store, summed (nested loop extents multiplied). */
static double work_of(const tj_tir_stmt_t *s) {
  if (!s) return 0;
  int64_t ext;
  switch (s->kind) {
    case TJ_TIR_FOR:
      if (!tj_tir_is_const_int(s->loop.extent, &ext)) return INFINITY;
      return (double)ext * work_of(s->loop.body);
    case TJ_TIR_BLOCK_REALIZE: return work_of(s->realize.block->init) + work_of(s->realize.block->body) + 1;
    case TJ_TIR_SEQ: {
      double w = 0;
      for (int i = 0; i < s->seq.n; i++) w += work_of(s->seq.stmts[i]);
      return w;
    }
    case TJ_TIR_LET_STMT: return work_of(s->let.body) + 1;
    case TJ_TIR_IF: return work_of(s->if_.then_stmt) + work_of(s->if_.else_stmt) + 1;
    case TJ_TIR_ALLOCATE: return work_of(s->allocate.body);
    default: return 1;
  }
}

/* Why a function cannot be compared, or NULL. */
static const char *unsupported(const tj_prim_func_t *f) {
  if (f->n_params > MAX_PARAMS) return "too many parameters";
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *b = f->buffer_map[i];
    int64_t n;
    if (!b) return "scalar parameters";
    if (!tj_buffer_static_size(b, &n)) return "symbolic shape";
    if (b->dtype.lanes != 1 || b->dtype.code == TJ_DT_HANDLE) return "vector or handle buffer";
  }
  const char *slow = getenv("TVMJIT_SLOW_TESTS");
  if (!(slow && *slow == '1') && work_of(f->body) > WORK_LIMIT) return "too slow for the interpreter (TVMJIT_SLOW_TESTS=1)";
  return NULL;
}

/* ---- random data ---- */

static uint64_t rng_state = 0x853c49e6748fea9bull;
static uint64_t next_u64(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void fill_random(void *data, tj_dtype_t dt, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double r = (double)(next_u64() >> 11) / 9007199254740992.0 * 4.0 - 2.0; /* [-2, 2) */
    switch (dt.code) {
      case TJ_DT_FLOAT:
        if (dt.bits == 16) ((uint16_t *)data)[i] = tj_float_to_half((float)r);
        else if (dt.bits == 32) ((float *)data)[i] = (float)r;
        else ((double *)data)[i] = r;
        break;
      case TJ_DT_BOOL: ((uint8_t *)data)[i] = r > 0; break;
      case TJ_DT_BFLOAT: ((uint16_t *)data)[i] = tj_float_to_bfloat((float)r); break;
      default: { /* small non-negative ints: they are often indices */
        int64_t v = (int64_t)(next_u64() % 3);
        memcpy((char *)data + i * (dt.bits / 8), &v, (size_t)dt.bits / 8); /* little-endian */
      }
    }
  }
}

/* Compares two buffers; returns the number of elements that differ beyond tolerance. */
static int64_t count_mismatches(const void *a, const void *b, tj_dtype_t dt, int64_t n, bool loose) {
  if (!loose || (dt.code != TJ_DT_FLOAT && dt.code != TJ_DT_BFLOAT)) return memcmp(a, b, (size_t)n * tj_dtype_bytes(dt)) ? n : 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double x, y, tol;
    /* bfloat16: one ulp (2^-7 of the magnitude), what a float32 value a few ulps off
     * gives where it lies next to a rounding boundary */
    if (dt.code == TJ_DT_BFLOAT)
      x = tj_bfloat_to_float(((const uint16_t *)a)[i]), y = tj_bfloat_to_float(((const uint16_t *)b)[i]), tol = 1.0 / 128;
    else if (dt.bits == 16) x = tj_half_to_float(((const uint16_t *)a)[i]), y = tj_half_to_float(((const uint16_t *)b)[i]), tol = 2e-3;
    else if (dt.bits == 32) x = ((const float *)a)[i], y = ((const float *)b)[i], tol = relaxed_f32_tol;
    else x = ((const double *)a)[i], y = ((const double *)b)[i], tol = 1e-12;
    if (isnan(x) && isnan(y)) continue;
    if (!(fabs(x - y) <= tol * fmax(1.0, fabs(y)))) bad++;
  }
  return bad;
}

static void call_kernel(void (*fn)(void), int n, void **buffers) {
  tj_kernel_t k;
  void *argv[MAX_PARAMS];
  TU_OK(tj_kernel_init(&k, "kernel", fn, n, 0));
  tj_kernel_call(&k, buffers, NULL, argv);
  tj_kernel_release(&k);
}

/* Runs one function both ways. */
static void compare_function(tj_arena_t *arena, const char *where, const char *name, const tj_prim_func_t *f,
                             tally_t *t) {
  const char *why = unsupported(f);
  if (why) {
    t->skipped++;
    if (getenv("TVMJIT_VERBOSE")) printf("  skip %s %s: %s\n", where, name, why);
    return;
  }
  void *ref[MAX_PARAMS] = {0}, *got[MAX_PARAMS] = {0};
  int64_t elems[MAX_PARAMS];
  for (int i = 0; i < f->n_params; i++) {
    const tj_buffer_t *b = f->buffer_map[i];
    tj_buffer_static_size(b, &elems[i]);
    size_t bytes = (size_t)elems[i] * tj_dtype_bytes(b->dtype) + 64;
    ref[i] = tj_aligned_alloc(bytes);
    got[i] = tj_aligned_alloc(bytes);
    ck_assert(ref[i] && got[i]);
    fill_random(ref[i], b->dtype, elems[i]);
    memcpy(got[i], ref[i], bytes);
  }
  tj_status_t *st = tj_interp_run_named(name, f, f->n_params, ref, NULL);
  if (st) {
    /* Random data can make an index go out of range; such a function is not comparable. */
    if (getenv("TVMJIT_VERBOSE")) printf("  skip %s %s: interpreter: %s\n", where, name, tj_status_text(st));
    tj_status_free(st);
    t->skipped++;
  } else {
    tj_jit_kernel_t k;
    tj_jit_options_t opts = {.opt_level = 2, .relaxed_float = relaxed};
    if (marking) {
      f = mark_loops(arena, f);
      count_vectorized(arena, f, name);
    }
    st = tj_jit_compile_prim_func(jit, f, name, &opts, &k);
    if (st && tj_status_code(st) == TJ_ERR_UNSUPPORTED) {
      /* Listed, not failed: a construct the CPU JIT does not lower (yet). */
      printf("  not lowered %s %s: %s\n", where, name, tj_status_text(st));
      tj_status_free(st);
      t->skipped++;
    } else if (st) {
      printf("  FAIL %s %s: does not compile: %s\n", where, name, tj_status_text(st));
      tj_status_free(st);
      t->failed++;
    } else {
      call_kernel(k.fn, f->n_params, got);
      scan_t sc = {false};
      tj_tir_visitor_t v = {.expr = scan_expr, .ctx = &sc};
      tj_tir_visit_stmt(&v, f->body);
      int64_t bad = 0;
      for (int i = 0; i < f->n_params; i++)
        bad += count_mismatches(got[i], ref[i], f->buffer_map[i]->dtype, elems[i], sc.transcendental || relaxed);
      t->compared++;
      if (bad) {
        printf("  FAIL %s %s: %lld elements differ from the interpreter\n", where, name, (long long)bad);
        t->failed++;
      } else if (!sc.transcendental && !relaxed) {
        t->exact++;
      }
    }
  }
  for (int i = 0; i < f->n_params; i++) {
    tj_aligned_free(ref[i]);
    tj_aligned_free(got[i]);
  }
}

static void compare_file(const char *path, tally_t *t, bool must_parse) {
  tj_arena_t *arena = tj_arena_create();
  tj_module_t *m = NULL;
  tj_status_t *st = tj_parse_file(arena, path, &m);
  if (st) {
    ck_assert_msg(!must_parse, "%s", tj_status_text(st));
    tj_status_free(st);
  } else {
    for (int i = 0; i < m->n_funcs; i++)
      if (m->funcs[i].is_prim) compare_function(arena, path, m->funcs[i].name, m->funcs[i].prim, t);
  }
  tj_arena_free(arena);
}

static void report(const char *what, const tally_t *t) {
  printf("differential (%s): %d compared (%d bit-exact, %d within tolerance), %d skipped, %d failed\n", what,
         t->compared, t->exact, t->compared - t->exact - t->failed, t->skipped, t->failed);
}

#endif
