/* Shared machinery of the schedule rules (schedule.h): the analysed loop nest, the
 * context a rule sees, and small builders. Internal to transforms/tir/schedule*.c. */
#ifndef TJ_TRANSFORMS_TIR_SCHEDULE_RULES_H
#define TJ_TRANSFORMS_TIR_SCHEDULE_RULES_H

#include "transforms/tir/schedule.h"

#define TJ_SCHED_MAX_NEST 12
/* Nests with fewer iterations in their parallel loop stay serial (not worth a fork). */
#define TJ_SCHED_PARALLEL_MIN_WORK 16384

/* A perfect nest of serial loops [0, extent) with static extents over one block whose
 * iter vars are bound one to one to the loops (predicate true, no match or alloc
 * buffers), as LegalizeOps writes them. */
typedef struct tj_sched_nest {
  int n;
  const tj_tir_stmt_t *loops[TJ_SCHED_MAX_NEST];
  int64_t extent[TJ_SCHED_MAX_NEST]; /* per loop */
  const tj_tir_stmt_t *realize;
  const tj_block_t *block;
  int iter_of_loop[TJ_SCHED_MAX_NEST];
  int loop_of_iter[TJ_SCHED_MAX_NEST];
  int n_reduce;
} tj_sched_nest_t;

bool tj_sched_collect_nest(const tj_tir_stmt_t *s, tj_sched_nest_t *out);
/* The index of the block iter var `e` is, or -1 when it is none of them. */
int tj_sched_iter_index(const tj_block_t *b, const tj_tir_expr_t *e);

/* The context of one tj_tir_schedule call. */
typedef struct tj_sched_ctx {
  tj_arena_t *arena;
  const tj_tir_schedule_options_t *opts;
  const tj_prim_func_t *func;
  const tj_block_t *root;
  int n_stmts;
  const tj_tir_stmt_t *const *stmts; /* the root block's body statements */
  bool *drop_alloc;                  /* per root alloc buffer: no longer used */
  tj_tir_schedule_stats_t stats;
  bool oom;
  /* Weights the caller packs (opts->prepacked): the new buffer parameter of each item,
   * appended to the function's params after the rules ran. */
  const tj_buffer_t *prepack_buf[TJ_TIR_MAX_PREPACKS];
} tj_sched_ctx_t;

/* The packed buffer parameter for constant param `param` packed as `want` (its packed
 * param index not yet set), `to` when it is new; NULL when the caller cannot pack it
 * (not a constant, no room, or the same weight packed another way): the kernel then
 * repacks it itself. schedule_prepack.c. */
const tj_buffer_t *tj_sched_prepack(tj_sched_ctx_t *c, const tj_tir_prepack_t *want, const tj_buffer_t *to);
/* Appends the packed buffers to nf's params (after the existing ones, so every other
 * parameter keeps its index) and completes opts->prepacked. */
tj_status_t *tj_sched_append_prepacked(tj_sched_ctx_t *c, const char *name, tj_prim_func_t *nf);

/* A rule looks at stmts[i] (and may consume the ones after it); returns how many
 * statements it replaced with *out (0 = no match). Sets ctx->oom on allocation failure. */
typedef int (*tj_sched_rule_fn)(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
int tj_sched_rule_conv(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
int tj_sched_rule_pointwise(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
/* 3x3 stride-1 NCHW convs by Winograd F(m x m, 3x3), default float mode only (schedule_winograd.c). */
int tj_sched_rule_winograd(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
/* The same for NHWC convs with OHWI weights, vectors along the channels (schedule_winograd_nhwc.c). */
int tj_sched_rule_winograd_nhwc(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
/* Depthwise convs and pools over NCHW planes with their padding (schedule_depthwise.c). */
int tj_sched_rule_plane_window(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
/* Global pooling: reductions over the whole of an input's last two dims (schedule_global_pool.c). */
int tj_sched_rule_global_pool(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
int tj_sched_rule_injective(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
int tj_sched_rule_reduction(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
int tj_sched_rule_row_fusion(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
int tj_sched_rule_full_reduction(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);
int tj_sched_rule_column_reduction(tj_sched_ctx_t *c, int i, const tj_tir_stmt_t **out);

/* One row of a row reduction, `init` then `body` for r in [0, K), with its terms in
 * vector partial results (schedule_row_vector.c); NULL when the options do not allow
 * reordering or the body is not a plain accumulation (ctx->oom on allocation failure). */
const tj_tir_stmt_t *tj_sched_row_reduce_vector(tj_sched_ctx_t *c, const tj_tir_stmt_t *init,
                                                const tj_tir_stmt_t *body, const tj_tir_expr_t *r, int64_t K);

/* A nest over a block of short rows (for i: for v in T.vectorized: store) with its
 * per-row subexpressions (no v, a call or division: layer_norm's 1 / sqrt(var + eps))
 * computed first for the whole block, V rows a vector (schedule_row_hoist.c); s itself
 * when there is nothing to hoist, NULL on allocation failure. */
const tj_tir_stmt_t *tj_sched_hoist_row_values(tj_sched_ctx_t *c, const tj_tir_stmt_t *s);

/* A row reduction over a block of short rows (for i: init; for r: update) with K rows
 * a vector, each lane one row's chain in its order (schedule_row_lanes.c); s itself when
 * it does not match, NULL on allocation failure. */
const tj_tir_stmt_t *tj_sched_row_lanes(tj_sched_ctx_t *c, const tj_tir_stmt_t *s);

/* The injective nest stmts[i] scheduled (with its epilogue), or with `retarget` its
 * values converted to retarget's dtype and stored there instead (no epilogue). NULL
 * when it does not match; *used = statements consumed. */
const tj_tir_stmt_t *tj_sched_injective_nest(tj_sched_ctx_t *c, int i, const tj_buffer_t *retarget, int *used);
/* How many leading loops of extents[0..n_outer) to fuse into one parallel loop. */
int tj_sched_fused_prefix(const int64_t *extent, int n_outer);

/* Vector lanes for elements of `dt` (arithmetic on float16 happens in float32). */
int tj_sched_lanes(const tj_sched_ctx_t *c, tj_dtype_t dt);

/* ---- checks ---- */
/* The block's statement(s) only read `written` buffers at the indices they store them at,
 * call no non-TIR function, and (unless allow_reduce) use no reduce iter var. */
bool tj_sched_pure_update(const tj_block_t *b, const tj_tir_stmt_t *s);
/* Loads + stores of `buf` in s (NULL-safe). */
int tj_sched_count_uses(const tj_tir_stmt_t *s, const tj_buffer_t *buf);
/* Whether s stores to buf (or binds it as a block's match_buffer source). */
bool tj_sched_writes(const tj_tir_stmt_t *s, const tj_buffer_t *buf);
/* The first load of `buf` in `e` when every load of it there has the same indices,
 * else (none, or loads at different indices) NULL. */
const tj_tir_expr_t *tj_sched_single_load(const tj_tir_expr_t *e, const tj_buffer_t *buf);
/* True when `buf` is a parameter buffer of the function. */
bool tj_sched_is_param(const tj_sched_ctx_t *c, const tj_buffer_t *buf);
/* Index of `buf` among the root's alloc buffers, or -1. */
int tj_sched_root_alloc(const tj_sched_ctx_t *c, const tj_buffer_t *buf);
/* True when indices[k] is exactly the var of the block's iter var it[k] for every k. */
bool tj_sched_store_is_identity(const tj_block_t *b, const tj_tir_stmt_t *store);

/* ---- conv ---- */
/* Read-only weights up to this many elements are repacked (once per call) so the conv's
 * vector dim is contiguous: 4M covers every conv of ResNet-50 (512x512x3x3 = 2.4M). */
#define TJ_SCHED_MAX_REPACK_ELEMS (4 << 20)
/* The conv's vector and tile dims (iter var indices; in: C's last and second-to-last
 * dims), chosen from the shape and the way the update reads its inputs
 * (schedule_conv_axes.c). */
void tj_sched_conv_pick_axes(const tj_sched_ctx_t *c, const tj_sched_nest_t *nest, const tj_tir_stmt_t *store,
                             int *vec_iter, int *tile_iter);

/* Bytes of the parameters the conv's update reads along its vector dim (its weights). */
int64_t tj_sched_conv_weight_bytes(const tj_sched_ctx_t *c, const tj_sched_nest_t *nest, const tj_tir_stmt_t *store,
                                   int vec_iter);

/* ---- epilogue fusion ---- */
#define TJ_SCHED_MAX_EPILOGUE 8
typedef struct tj_sched_epilogue {
  int n;
  const tj_tir_stmt_t *stores[TJ_SCHED_MAX_EPILOGUE]; /* each stage's store */
  const tj_block_t *blocks[TJ_SCHED_MAX_EPILOGUE];
  const tj_buffer_t *inputs[TJ_SCHED_MAX_EPILOGUE];   /* the buffer each stage consumes */
  const tj_buffer_t *out;                             /* the last stage's output */
  int span; /* statements after the producer that the fused nest replaces */
  /* Small nests among them that the stages do not depend on (a decomposed batch_norm's
   * expand_dims of its parameters, between the conv and its subtract): run before. */
  int n_before;
  const tj_tir_stmt_t *before[TJ_SCHED_MAX_EPILOGUE];
} tj_sched_epilogue_t;
/* Collects stmts[next], stmts[next+1], ... that are elementwise maps of `cur` (written
 * by stmts[producer] at the identity indices of its shape): each reads cur only at its
 * own identity indices, cur is a root allocation nobody else uses, and the stage writes
 * a buffer of the same shape at the identity indices. A small nest in between that
 * neither reads what the producer and the stages so far write nor writes what they
 * touch is stepped over and moved before the producer. */
void tj_sched_collect_epilogue(tj_sched_ctx_t *c, int producer, int next, const tj_buffer_t *cur,
                               tj_sched_epilogue_t *ep);
/* A Winograd rule's result r for the conv whose padding copy is `pad` and output
 * `conv_out` (schedule_winograd.c; both layouts): marks what is no longer allocated,
 * counts it, and returns the statements consumed (1 with c->oom when r is NULL). */
int tj_sched_winograd_commit(tj_sched_ctx_t *c, const tj_tir_stmt_t *r, const tj_buffer_t *pad,
                             const tj_buffer_t *conv_out, const tj_sched_epilogue_t *ep, const tj_tir_stmt_t **out);
/* IR pieces both Winograd rules build from (schedule_winograd.c): sum_i coef[i] *
 * term[i] over the nonzero coefficients (+-1 without a multiply); a float32 buffer named
 * after `named_after` with `suffix` (local: a stack buffer); s[0..n) in sequence. NULL on
 * allocation failure or a NULL input. */
const tj_tir_expr_t *tj_sched_wino_lin_comb(tj_sched_ctx_t *c, int n, const double *coef,
                                            const tj_tir_expr_t *const *term);
const tj_buffer_t *tj_sched_wino_buffer(tj_sched_ctx_t *c, const tj_buffer_t *named_after, const char *suffix, int n,
                                        const int64_t *shape, bool local);
const tj_tir_stmt_t *tj_sched_wino_seq(tj_sched_ctx_t *c, int n, const tj_tir_stmt_t *const *s);
/* r preceded by the nests the epilogue moved before the producer. */
const tj_tir_stmt_t *tj_sched_with_before(tj_sched_ctx_t *c, const tj_sched_epilogue_t *ep, const tj_tir_stmt_t *r);
/* The fused value: `value` (the producer's element) through every stage, at the
 * element `idx` (ndim of the output). Marks the intermediate buffers dropped. */
const tj_tir_expr_t *tj_sched_apply_epilogue(tj_sched_ctx_t *c, const tj_sched_epilogue_t *ep,
                                             const tj_tir_expr_t *value, const tj_tir_expr_t *const *idx);

/* ---- a conv's padding computed per outer iteration (schedule_window.c) ---- */
/* PHASED: e = v * s + r along the consumer's vector dim v (s >= 2, r a reduce iter var
 * of extent K): two local dims [K, V], element (k, j) holding P at j * s + k, so the
 * vectorized conv reads local[r, v] contiguously instead of gathering every s-th value
 * (strided convs vectorized along x: the depthwise stride-2 convs of MobileNet). */
typedef enum tj_window_mode { TJ_WINDOW_FIXED, TJ_WINDOW_SLIDE, TJ_WINDOW_FULL, TJ_WINDOW_PHASED } tj_window_mode_t;
typedef struct tj_sched_window_dim {
  tj_window_mode_t mode;
  const tj_tir_expr_t *index; /* FIXED: the index; SLIDE: its outer part A; FULL, PHASED: the index */
  int64_t extent;             /* in the local buffer (FIXED: 1; PHASED: K * V) */
  int reduce_iter;            /* SLIDE, PHASED: the consumer's reduce iter var (r) */
  int vec_iter;               /* PHASED: the consumer's vector iter var (v) */
  int64_t stride, vec_extent; /* PHASED: s and V */
} tj_sched_window_dim_t;
/* Row blocks: one window serves `rows` consecutive values of the consumer's outer iter
 * var `row_iter` (A of one SLIDE dim is that var, stride 1): the window starts at the
 * block's first row, holds K + rows - 1 elements along that dim, and the consumer at
 * row offset `row_offset` (a var of the loop over the block) reads element
 * row_offset + r. rows = 1: one window per value. */
typedef struct tj_sched_row_block {
  int row_iter;
  int64_t rows;
  const tj_tir_expr_t *row_offset;
} tj_sched_row_block_t;
typedef struct tj_sched_window {
  const tj_buffer_t *from;     /* the padded buffer the producer writes */
  const tj_buffer_t *local;    /* what one outer iteration reads of it (window and full dims) */
  const tj_block_t *producer, *consumer;
  tj_sched_window_dim_t dims[TJ_SCHED_MAX_NEST];  /* per dim of `from` */
  const tj_tir_expr_t *bound[TJ_SCHED_MAX_NEST];  /* FIXED/SLIDE index for this iteration */
  tj_sched_row_block_t block;
  int block_dim; /* the SLIDE dim along row_iter, -1 when rows = 1 */
  /* > 0: the fill writes only this many elements of the local buffer's innermost dim
   * (the rest pads each row to whole vectors, so rows start 64-byte aligned). */
  int64_t fill_inner;
  /* The fill ends a row with a vector overlapping the one before (the overlap written
   * twice, with the same values) instead of serial elements, and keeps full vectors. */
  bool fill_overlap;
  /* > 0: element j of the local buffer's innermost (FULL) dim holds P's element
   * j - col_offset, computed by the producer's expression like the others (columns
   * before 0 are its padding): shifts P's columns so that an aligned one starts a
   * vector of the fill (schedule_depthwise.c). */
  int64_t col_offset;
} tj_sched_window_t;
/* stmts[producer] writes a root buffer P at its identity indices that the consumer nest
 * reads in `value` (all loads at the same indices) in a way the window covers; outer[k]
 * marks the consumer's iter vars bound per outer iteration; vec_iter is the consumer's
 * vectorized iter var (-1: none), which strided dims are phased along. False: keep P. */
bool tj_sched_window_plan(tj_sched_ctx_t *c, int producer, const tj_sched_nest_t *consumer,
                          const tj_tir_expr_t *value, const bool *outer, int64_t outer_iterations,
                          tj_dtype_t local_dtype, const tj_sched_row_block_t *block, int vec_iter,
                          tj_sched_window_t *w);
/* The consumer iter var a SLIDE dim of the planned window slides along (its A is that
 * var itself), or -1: what a row block may split. */
int tj_sched_window_row_iter(const tj_sched_window_t *w);
/* Binds the outer iter vars (values by consumer iter var; others unused) for the fill. */
bool tj_sched_window_bind(tj_sched_ctx_t *c, tj_sched_window_t *w, const tj_tir_expr_t *const *outer_values);
/* The loops that fill the local buffer for the bound iteration. */
const tj_tir_stmt_t *tj_sched_window_fill(tj_sched_ctx_t *c, const tj_sched_window_t *w);
/* The local buffer's element that replaces the load of P at the consumer element
 * whose iter values are `values`. */
const tj_tir_expr_t *tj_sched_window_load(tj_sched_ctx_t *c, const tj_sched_window_t *w,
                                          const tj_tir_expr_t *const *values);

/* ---- builders (NULL on OOM, propagate NULL) ---- */
const tj_tir_expr_t *tj_sched_var(tj_sched_ctx_t *c, const char *name);
const tj_tir_stmt_t *tj_sched_loop(tj_sched_ctx_t *c, const tj_tir_expr_t *var, int64_t extent, tj_for_kind_t kind,
                                   const tj_tir_stmt_t *body);
const tj_tir_expr_t *tj_sched_add(tj_sched_ctx_t *c, const tj_tir_expr_t *x, const tj_tir_expr_t *y);
const tj_tir_expr_t *tj_sched_mul(tj_sched_ctx_t *c, const tj_tir_expr_t *x, int64_t k);
/* Index values for a fused loop var over extents ext[0..n): floordiv/floormod. */
bool tj_sched_unfuse(tj_sched_ctx_t *c, const tj_tir_expr_t *fused, int n, const int64_t *ext,
                     const tj_tir_expr_t **out);
/* Replace every load of `buf` by `value`. */
const tj_tir_expr_t *tj_sched_replace_load(tj_sched_ctx_t *c, const tj_tir_expr_t *e, const tj_buffer_t *buf,
                                           const tj_tir_expr_t *value);
/* Substitute the block's iter vars (all of them) with values[iter]. */
const tj_tir_expr_t *tj_sched_subst_expr(tj_sched_ctx_t *c, const tj_block_t *b, const tj_tir_expr_t *e,
                                         const tj_tir_expr_t *const *values);
const tj_tir_stmt_t *tj_sched_subst_stmt(tj_sched_ctx_t *c, const tj_block_t *b, const tj_tir_stmt_t *s,
                                         const tj_tir_expr_t *const *values);
const tj_tir_expr_t *tj_sched_cast_like(tj_sched_ctx_t *c, const tj_tir_expr_t *var, const tj_tir_expr_t *value);
/* What block b (a producer: buf[iter vars] = value) stores at idx[0..n_iter_vars): its
 * value with the iter vars replaced; NULL on failure. */
const tj_tir_expr_t *tj_sched_producer_value(tj_sched_ctx_t *c, const tj_block_t *b, const tj_tir_expr_t *const *idx);
/* e with every load of buf replaced by what its producer b stores there (inlined);
 * NULL when a load's indices do not match b's iter vars or on failure. */
const tj_tir_expr_t *tj_sched_inline_producer(tj_sched_ctx_t *c, const tj_tir_expr_t *e, const tj_block_t *b,
                                              const tj_buffer_t *buf);

#endif
