/* Hand-built IR for the fusion tests (AnnotateTIROpPattern, FuseOps, FuseTIR): small
 * PrimFuncs in the shape LegalizeOps emits (root block, loop nest, one block per
 * stage) and a Relax main of call_tir bindings. Header-only: each test includes it. */
#ifndef TJ_TESTS_FUSION_IR_H
#define TJ_TESTS_FUSION_IR_H

#include <check.h>
#include <stdarg.h>
#include <string.h>

#include "ir/module.h"
#include "ir/visit.h"

#define FI_MAX 8

static inline const tj_tir_expr_t *fi_i64(tj_arena_t *a, int64_t v) { return tj_tir_i64(a, v); }

static inline const tj_buffer_t *fi_buf(tj_arena_t *a, const char *name, tj_dtype_t dt, int ndim, const int64_t *dims) {
  const tj_tir_expr_t *shape[FI_MAX];
  for (int i = 0; i < ndim; i++) shape[i] = fi_i64(a, dims[i]);
  return tj_buffer_new(a, name, dt, ndim, shape, NULL);
}

static inline tj_buffer_region_t fi_region(tj_arena_t *a, const tj_buffer_t *b, int n, const tj_tir_expr_t *const *idx) {
  tj_range_t *r = TJ_ARENA_ARRAY(a, tj_range_t, n + 1);
  for (int i = 0; i < n; i++) r[i] = (tj_range_t){idx[i], fi_i64(a, 1)};
  return (tj_buffer_region_t){b, n, r};
}

/* A block over a perfect loop nest. ivs are the block iter vars (made by the caller
 * with tj_tir_var so the body can use them); one loop per iter var. */
typedef struct fi_block_spec {
  const char *name;
  int n;
  const int64_t *extents;
  const char *kinds; /* "SSR" */
  const tj_tir_expr_t *const *ivs;
  int n_reads, n_writes;
  const tj_buffer_region_t *reads, *writes;
  const tj_tir_stmt_t *init, *body;
} fi_block_spec_t;

static inline const tj_tir_stmt_t *fi_block(tj_arena_t *a, const fi_block_spec_t *s) {
  tj_block_t *b = tj_block_new(a, s->name);
  tj_iter_var_t *iv = TJ_ARENA_ARRAY(a, tj_iter_var_t, s->n + 1);
  const tj_tir_expr_t *loops[FI_MAX];
  for (int i = 0; i < s->n; i++) {
    iv[i] = (tj_iter_var_t){s->ivs[i], {fi_i64(a, 0), fi_i64(a, s->extents[i])},
                            s->kinds[i] == 'R' ? TJ_ITER_REDUCE : TJ_ITER_SPATIAL};
    loops[i] = tj_tir_var(a, "i", TJ_I64);
  }
  b->n_iter_vars = s->n;
  b->iter_vars = iv;
  b->n_reads = s->n_reads;
  b->reads = s->n_reads ? tj_arena_memdup(a, s->reads, sizeof(*s->reads) * (size_t)s->n_reads) : NULL;
  b->n_writes = s->n_writes;
  b->writes = s->n_writes ? tj_arena_memdup(a, s->writes, sizeof(*s->writes) * (size_t)s->n_writes) : NULL;
  b->init = s->init;
  b->body = s->body;
  const tj_tir_stmt_t *st = tj_tir_realize(a, s->n, loops, NULL, b);
  for (int i = s->n - 1; i >= 0; i--) st = tj_tir_for(a, loops[i], fi_i64(a, 0), fi_i64(a, s->extents[i]), TJ_FOR_SERIAL, st);
  return st;
}

static inline const tj_prim_func_t *fi_prim(tj_arena_t *a, int n_bufs, const tj_buffer_t *const *bufs, int n_allocs,
                                     const tj_buffer_t *const *allocs, int n_stmts, const tj_tir_stmt_t *const *stmts,
                                     bool with_root) {
  tj_prim_func_t *f = TJ_ARENA_NEW(a, tj_prim_func_t);
  const tj_tir_expr_t **params = TJ_ARENA_ARRAY(a, const tj_tir_expr_t *, n_bufs + 1);
  const tj_buffer_t **map = TJ_ARENA_ARRAY(a, const tj_buffer_t *, n_bufs + 1);
  for (int i = 0; i < n_bufs; i++) {
    params[i] = tj_tir_var(a, bufs[i]->name, TJ_HANDLE);
    map[i] = bufs[i];
  }
  f->n_params = n_bufs;
  f->params = params;
  f->buffer_map = map;
  f->attrs = tj_attrs_set(a, NULL, "tir.noalias", tj_attr_bool(true));
  const tj_tir_stmt_t *body = tj_tir_seq(a, n_stmts, stmts);
  if (with_root) {
    tj_block_t *root = tj_block_new(a, "root");
    root->n_alloc_buffers = n_allocs;
    root->alloc_buffers = n_allocs ? tj_arena_memdup(a, allocs, sizeof(*allocs) * (size_t)n_allocs) : NULL;
    root->body = body;
    body = tj_tir_realize(a, 0, NULL, NULL, root);
  }
  f->body = body;
  return f;
}

static inline const tj_tir_expr_t *fi_load(tj_arena_t *a, const tj_buffer_t *b, int n, ...) {
  const tj_tir_expr_t *idx[FI_MAX];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) idx[i] = va_arg(ap, const tj_tir_expr_t *);
  va_end(ap);
  return tj_tir_load(a, b, n, idx);
}

/* B = unary(A) elementwise on a 2-D tensor: relu when op is MAX with 0. */
static inline const tj_prim_func_t *fi_relu(tj_arena_t *a, tj_dtype_t dt, int64_t n, int64_t m, const char *in_name,
                                     const char *out_name, bool with_root) {
  int64_t dims[2] = {n, m};
  const tj_buffer_t *A = fi_buf(a, in_name, dt, 2, dims), *B = fi_buf(a, out_name, dt, 2, dims);
  const tj_tir_expr_t *iv[2] = {tj_tir_var(a, "v_i0", TJ_I64), tj_tir_var(a, "v_i1", TJ_I64)};
  const tj_tir_expr_t *val = tj_tir_binary(a, TJ_TIR_MAX, tj_tir_load(a, A, 2, iv), tj_tir_float(a, dt, 0));
  tj_buffer_region_t r = fi_region(a, A, 2, iv), w = fi_region(a, B, 2, iv);
  fi_block_spec_t s = {"compute", 2, dims, "SS", iv, 1, 1, &r, &w, NULL, tj_tir_store(a, B, 2, iv, val)};
  const tj_tir_stmt_t *st = fi_block(a, &s);
  if (!with_root) st = tj_tir_store(a, B, 2, iv, val); /* a bare statement: no blocks at all */
  const tj_buffer_t *bufs[2] = {A, B};
  return fi_prim(a, 2, bufs, 0, NULL, 1, &st, with_root);
}

/* C = A + B (2-D, same shapes), block named `block`, output buffer `out_name`. */
static inline const tj_prim_func_t *fi_add(tj_arena_t *a, tj_dtype_t dt, int64_t n, int64_t m, const char *block,
                                    const char *out_name) {
  int64_t dims[2] = {n, m};
  const tj_buffer_t *A = fi_buf(a, "A", dt, 2, dims), *B = fi_buf(a, "B", dt, 2, dims),
                    *C = fi_buf(a, out_name, dt, 2, dims);
  const tj_tir_expr_t *iv[2] = {tj_tir_var(a, "v_i0", TJ_I64), tj_tir_var(a, "v_i1", TJ_I64)};
  const tj_tir_expr_t *val = tj_tir_binary(a, TJ_TIR_ADD, tj_tir_load(a, A, 2, iv), tj_tir_load(a, B, 2, iv));
  tj_buffer_region_t r[2] = {fi_region(a, A, 2, iv), fi_region(a, B, 2, iv)}, w = fi_region(a, C, 2, iv);
  fi_block_spec_t s = {block, 2, dims, "SS", iv, 2, 1, r, &w, NULL, tj_tir_store(a, C, 2, iv, val)};
  const tj_tir_stmt_t *st = fi_block(a, &s);
  const tj_buffer_t *bufs[3] = {A, B, C};
  return fi_prim(a, 3, bufs, 0, NULL, 1, &st, true);
}

/* C[i, j] = sum_k A[i, k] * B[k, j] with T.init. */
static inline const tj_prim_func_t *fi_matmul(tj_arena_t *a, tj_dtype_t dt, int64_t n, int64_t k, int64_t m) {
  int64_t da[2] = {n, k}, db[2] = {k, m}, dc[2] = {n, m}, ext[3] = {n, m, k};
  const tj_buffer_t *A = fi_buf(a, "A", dt, 2, da), *B = fi_buf(a, "B", dt, 2, db), *C = fi_buf(a, "matmul", dt, 2, dc);
  const tj_tir_expr_t *iv[3] = {tj_tir_var(a, "v_i", TJ_I64), tj_tir_var(a, "v_j", TJ_I64),
                                tj_tir_var(a, "v_k", TJ_I64)};
  const tj_tir_expr_t *ia[2] = {iv[0], iv[2]}, *ib[2] = {iv[2], iv[1]}, *ic[2] = {iv[0], iv[1]};
  const tj_tir_expr_t *val =
      tj_tir_binary(a, TJ_TIR_ADD, tj_tir_load(a, C, 2, ic),
                    tj_tir_binary(a, TJ_TIR_MUL, tj_tir_load(a, A, 2, ia), tj_tir_load(a, B, 2, ib)));
  tj_buffer_region_t r[2] = {fi_region(a, A, 2, ia), fi_region(a, B, 2, ib)}, w = fi_region(a, C, 2, ic);
  fi_block_spec_t s = {"matmul", 3, ext, "SSR", iv, 2, 1, r, &w, tj_tir_store(a, C, 2, ic, tj_tir_float(a, dt, 0)),
                       tj_tir_store(a, C, 2, ic, val)};
  const tj_tir_stmt_t *st = fi_block(a, &s);
  const tj_buffer_t *bufs[3] = {A, B, C};
  return fi_prim(a, 3, bufs, 0, NULL, 1, &st, true);
}

/* ---- Relax ---- */
static inline const tj_sinfo_t *fi_tensor(tj_arena_t *a, tj_dtype_t dt, int64_t n, int64_t m) {
  int64_t dims[2] = {n, m};
  return tj_sinfo_tensor_static(a, dt, 2, dims);
}

static inline const tj_rx_expr_t *fi_call_tir(tj_arena_t *a, const char *callee, const tj_sinfo_t *out, int n, ...) {
  const tj_rx_expr_t *args[FI_MAX];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, const tj_rx_expr_t *);
  va_end(ap);
  return tj_rx_make_call_tir(a, tj_rx_global_var(a, callee), n, args, out, NULL);
}

/* A public function with one dataflow block; `ret` must be a non-dataflow var bound in it. */
static inline const tj_rx_func_t *fi_main(tj_arena_t *a, int n_params, const tj_rx_expr_t *const *params, int n_bindings,
                                   const tj_rx_binding_t *bindings, const tj_rx_expr_t *ret) {
  tj_rx_func_t *f = TJ_ARENA_NEW(a, tj_rx_func_t);
  tj_rx_block_t blk = {true, n_bindings, tj_arena_memdup(a, bindings, sizeof(*bindings) * (size_t)n_bindings)};
  f->n_params = n_params;
  f->params = tj_arena_memdup(a, params, sizeof(*params) * (size_t)n_params);
  f->ret_sinfo = ret->sinfo;
  f->body = tj_rx_seq(a, 1, &blk, ret);
  f->attrs = tj_attrs_set(a, NULL, "global_symbol", tj_attr_str("main"));
  f->is_pure = true;
  return f;
}

/* Finds the binding whose var has this name in a function's first block. */
static inline const tj_rx_binding_t *fi_find_binding(const tj_rx_func_t *f, const char *name) {
  const tj_rx_block_t *blk = &f->body->seq.blocks[0];
  for (int i = 0; i < blk->n_bindings; i++)
    if (strcmp(blk->bindings[i].var->var.name, name) == 0) return &blk->bindings[i];
  return NULL;
}

/* Block names of a PrimFunc in program order, joined by ','. */
typedef struct fi_names {
  char text[512];
} fi_names_t;

static inline bool fi_collect_block(tj_tir_visitor_t *v, const tj_block_t *b) {
  fi_names_t *n = v->ctx;
  if (strcmp(b->name, "root") == 0) return true;
  if (n->text[0]) strncat(n->text, ",", sizeof n->text - strlen(n->text) - 1);
  strncat(n->text, b->name, sizeof n->text - strlen(n->text) - 1);
  return true;
}

static inline void fi_block_names(const tj_prim_func_t *f, fi_names_t *out) {
  out->text[0] = '\0';
  tj_tir_visitor_t v = {.block = fi_collect_block, .ctx = out};
  tj_tir_visit_stmt(&v, f->body);
}

/* ---- parsing TVMScript and running passes ---- */
#include <stdio.h>
#include <stdlib.h>

#include "ir/text/parse.h"
#include "ir/struct_equal.h"
#include "project.h"
#include "testutil.h"
#include "transforms/transforms.h"

/* True once the TVMScript reader is linked in (it is written in parallel). */
static inline bool fi_parser_available(void) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  static const char text[] = "@I.ir_module\nclass M:\n    @T.prim_func\n    def f(A: T.Buffer((4,), \"float32\")):\n"
                             "        A[0] = T.float32(1)\n";
  tj_status_t *st = tj_parse_module(a, "probe.rx", text, sizeof text - 1, &m);
  bool ok = st == NULL || tj_status_code(st) != TJ_ERR_UNSUPPORTED;
  tj_status_free(st);
  tj_arena_free(a);
  return ok;
}

/* True once structural equality is linked in (the stub compares pointers). */
static inline bool fi_struct_equal_available(void) {
  tj_arena_t *a = tj_arena_create();
  bool ok = tj_struct_equal_tir_expr(tj_tir_i64(a, 3), tj_tir_i64(a, 3));
  tj_arena_free(a);
  return ok;
}

static inline tj_status_t *fi_parse_text(tj_arena_t *a, const char *text, tj_module_t **out) {
  return tj_parse_module(a, "inline.rx", text, strlen(text), out);
}

/* Applies "A() -> B()" (the pipeline= syntax of case.txt). */
static inline tj_status_t *fi_apply_pipeline(const tj_pass_context_t *ctx, const tj_module_t *m, const char *pipeline,
                                      const tj_module_t **out) {
  const char *p = pipeline;
  while (*p) {
    while (*p == ' ' || *p == '-' || *p == '>') p++;
    if (!*p) break;
    size_t n = strcspn(p, "(");
    const tj_module_t *next = NULL;
    tj_status_t *st;
    if (strncmp(p, "AnnotateTIROpPattern", n) == 0 && n == 20)
      st = tj_annotate_tir_op_pattern(ctx, m, &next);
    else if (strncmp(p, "FuseOps", n) == 0 && n == 7)
      st = tj_fuse_ops(ctx, m, -1, &next);
    else if (strncmp(p, "FuseTIR", n) == 0 && n == 7)
      st = tj_fuse_tir(ctx, m, &next);
    else if (strncmp(p, "LegalizeOps", n) == 0 && n == 11)
      st = tj_legalize_ops(ctx, m, &next);
    else
      return tj_status_new(TJ_ERR_NOT_FOUND, "unknown pass in pipeline '%s'", pipeline);
    if (st) return st;
    m = next;
    p += n;
    p += strcspn(p, ")");
    if (*p) p++;
    while (*p == ' ') p++;
    if (strncmp(p, "->", 2) != 0) break; /* a trailing note such as "(applied to expected.rx ...)" */
  }
  *out = m;
  return NULL;
}

#endif
