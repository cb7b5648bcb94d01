/* transforms/tir/schedule: which rule rewrites which nest, and that the scheduled
 * function computes the same bits as the original, run through the reference
 * interpreter (the JIT side is in test_differential.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "ir/module.h"
#include "ir/text/parse.h"
#include "ir/visit.h"
#include "support/alloc.h"
#include "testutil.h"
#include "transforms/pass_manager.h"
#include "transforms/tir/schedule.h"
#include "transforms/transforms.h"

enum { MAX_PARAMS = 16 };

static const tj_module_t *load(tj_arena_t *a, const char *rel, const char *pipeline) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", tu_source_dir(), rel);
  tj_module_t *m = NULL;
  TU_OK(tj_parse_file(a, path, &m));
  if (!pipeline) return m;
  tj_pipeline_t p;
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, a);
  const tj_module_t *out = NULL;
  TU_OK(tj_pipeline_parse(a, pipeline, &p));
  TU_OK(tj_pipeline_run(&ctx, &p, NULL, m, &out, NULL));
  return out;
}

static const tj_prim_func_t *prim(const tj_module_t *m, const char *name) {
  const tj_prim_func_t *f = tj_module_find_prim(m, name);
  ck_assert_msg(f != NULL, "no PrimFunc '%s'", name);
  return f;
}

static tj_tir_schedule_stats_t schedule_with(tj_arena_t *a, const tj_prim_func_t *f, int bits, bool native_f16,
                                             const tj_prim_func_t **out) {
  tj_tir_schedule_options_t o = {.enabled = true, .vector_bits = bits, .native_f16 = native_f16};
  tj_tir_schedule_stats_t st;
  TU_OK(tj_tir_schedule(a, f, "f", &o, out, &st));
  return st;
}

static tj_tir_schedule_stats_t schedule(tj_arena_t *a, const tj_prim_func_t *f, int bits,
                                        const tj_prim_func_t **out) {
  return schedule_with(a, f, bits, false, out);
}

/* ---- loop kinds in a function ---- */
typedef struct kinds {
  int parallel, vectorized, unrolled, allocates, blocks;
  int64_t parallel_extent; /* of the last parallel loop */
  int64_t window_rows;     /* first dim of the last "*_window" buffer allocated */
} kinds_t;

static bool kinds_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  kinds_t *k = v->ctx;
  if (s->kind == TJ_TIR_FOR) {
    k->parallel += s->loop.kind == TJ_FOR_PARALLEL;
    k->vectorized += s->loop.kind == TJ_FOR_VECTORIZED;
    k->unrolled += s->loop.kind == TJ_FOR_UNROLLED;
    if (s->loop.kind == TJ_FOR_PARALLEL) tj_tir_is_const_int(s->loop.extent, &k->parallel_extent);
  }
  if (s->kind == TJ_TIR_ALLOCATE && strstr(s->allocate.buffer->name, "_window"))
    tj_tir_is_const_int(s->allocate.buffer->shape[0], &k->window_rows);
  k->allocates += s->kind == TJ_TIR_ALLOCATE;
  k->blocks += s->kind == TJ_TIR_BLOCK_REALIZE;
  return true;
}

static bool window_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  if (s->kind == TJ_TIR_ALLOCATE && strstr(s->allocate.buffer->name, "_window")) *(int *)v->ctx = s->allocate.buffer->ndim;
  return true;
}

/* Dims of the (last) padding window a function allocates, 0 without one. */
static int window_ndim(const tj_prim_func_t *f) {
  int n = 0;
  tj_tir_visitor_t v = {.stmt = window_stmt, .ctx = &n};
  tj_tir_visit_stmt(&v, f->body);
  return n;
}

static kinds_t kinds_of(const tj_prim_func_t *f) {
  kinds_t k = {0};
  tj_tir_visitor_t v = {.stmt = kinds_stmt, .ctx = &k};
  tj_tir_visit_stmt(&v, f->body);
  return k;
}

/* ---- interpreter comparison ---- */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double next_uniform(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / (double)(1ull << 53) * 2 - 1;
}

static void fill(void *p, tj_dtype_t dt, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double v = next_uniform();
    if (dt.bits == 16) ((_Float16 *)p)[i] = (_Float16)v;
    else if (dt.bits == 32) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
  }
}

/* Runs f and g on the same random inputs through the interpreter: every byte equal. */
static void assert_same_bits(const char *name, const tj_prim_func_t *f, const tj_prim_func_t *g) {
  void *a[MAX_PARAMS], *b[MAX_PARAMS];
  size_t bytes[MAX_PARAMS];
  ck_assert_int_le(f->n_params, MAX_PARAMS);
  for (int i = 0; i < f->n_params; i++) {
    int64_t n;
    ck_assert(tj_buffer_static_size(f->buffer_map[i], &n));
    bytes[i] = (size_t)n * tj_dtype_bytes(f->buffer_map[i]->dtype);
    a[i] = tj_malloc(bytes[i]);
    b[i] = tj_malloc(bytes[i]);
    fill(a[i], f->buffer_map[i]->dtype, n);
    memcpy(b[i], a[i], bytes[i]);
  }
  TU_OK(tj_interp_run_named(name, f, f->n_params, a, NULL));
  TU_OK(tj_interp_run_named(name, g, g->n_params, b, NULL));
  for (int i = 0; i < f->n_params; i++) {
    ck_assert_msg(memcmp(a[i], b[i], bytes[i]) == 0, "%s: parameter %d differs after scheduling", name, i);
    tj_free(a[i]);
    tj_free(b[i]);
  }
}

/* ---- tests ---- */

START_TEST(disabled_or_null_options_leave_the_function_alone) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/schedule_kernels.rx", NULL);
  const tj_prim_func_t *f = prim(m, "conv_f16_relu"), *g = NULL;
  tj_tir_schedule_options_t off = {.enabled = false, .vector_bits = 512};
  TU_OK(tj_tir_schedule(a, f, "f", &off, &g, NULL));
  ck_assert_ptr_eq(f, g);
  TU_OK(tj_tir_schedule(a, f, "f", NULL, &g, NULL));
  ck_assert_ptr_eq(f, g);
  tj_arena_free(a);
}
END_TEST

START_TEST(conv_rule_fires_on_the_seed_fused_conv) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "examples/seed/model.rx", "default");
  const tj_prim_func_t *g;
  tj_tir_schedule_stats_t st = schedule(a, prim(m, "fused_conv2d2_relu"), 512, &g);
  ck_assert_int_eq(st.conv, 1);
  ck_assert_int_eq(st.fused_epilogues, 1); /* relu in the write-back */
  ck_assert_int_eq(st.repacked, 1);        /* OHWI weights to HWIO */
  ck_assert_int_eq(st.injective, 0);       /* the padding is no nest of its own: */
  ck_assert_int_eq(st.windowed, 1);        /* each output row fills its 3 padded input rows */
  ck_assert_int_eq(st.widened, 1);         /* float16 kept in float32 registers */
  kinds_t k = kinds_of(g);
  ck_assert_int_eq(k.blocks, 1); /* only the root block is left */
  ck_assert_int_eq(k.parallel, 1); /* blocks of 8 output rows: 16 images x 4 */
  ck_assert_int_eq(k.parallel_extent, 64);
  ck_assert_int_eq(k.window_rows, 10); /* 8 rows + the 3x3 kernel's 2 */
  ck_assert_int_eq(k.unrolled, 3); /* init, update, write-back tiles */
  ck_assert_int_eq(k.vectorized, 5); /* the tiles, the window fill and the weight repack */
  /* The relu's intermediate buffer and pad_temp are gone. */
  ck_assert_int_eq(tj_prim_func_root_block(g)->n_alloc_buffers, 0);
  ck_assert_int_eq(k.allocates, 3); /* padding window, packed weights, accumulator tile */
  /* layer_norm: statistics per row in parallel, the normalisation vectorized. */
  st = schedule(a, prim(m, "layer_norm"), 512, &g);
  ck_assert_int_eq(st.reduction, 1);
  ck_assert_int_eq(st.injective, 1);
  tj_arena_free(a);
}
END_TEST

/* gelu after a matmul + bias (tests/models/matmul_gelu.rx) reads the bias add's result
 * twice: the whole diamond (add, multiply, erf, multiply, add, multiply) goes into the
 * matmul's write-back, and no intermediate buffer or nest of its own is left. */
START_TEST(a_gelu_diamond_fuses_into_the_matmul) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/matmul_gelu.rx", "default");
  const tj_prim_func_t *g;
  tj_tir_schedule_stats_t st = schedule(a, prim(m, "fused_matmul_add_gelu"), 512, &g);
  ck_assert_int_eq(st.conv, 1);
  ck_assert_int_eq(st.fused_epilogues, 6);
  ck_assert_int_eq(st.injective, 0);
  ck_assert_int_eq(tj_prim_func_root_block(g)->n_alloc_buffers, 0);
  tj_arena_free(a);
}
END_TEST

START_TEST(conv_rule_fires_on_float32_and_mixed_precision_convs) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/seed_f32_ops.rx", "default");
  const tj_prim_func_t *g;
  tj_tir_schedule_stats_t st = schedule(a, prim(m, "fused_conv2d_relu"), 256, &g);
  ck_assert_int_eq(st.conv, 1);
  ck_assert_int_eq(st.fused_epilogues, 1);
  ck_assert_int_eq(st.widened, 0);
  m = load(a, "tests/models/seed_f32_ops.rx", "ToMixedPrecision(out_dtype=\"float32\"),default");
  st = schedule(a, prim(m, "fused_conv2d_cast_relu_cast2"), 512, &g);
  ck_assert_int_eq(st.conv, 1);
  ck_assert_int_eq(st.widened, 1);
  ck_assert_int_ge(st.fused_epilogues, 2); /* cast to float16, relu, cast to float32 */
  m = load(a, "tests/models/seed_f32_ops.rx", "ToMixedPrecision(out_dtype=\"float16\"),default");
  st = schedule(a, prim(m, "fused_conv2d_relu_cast2"), 512, &g);
  ck_assert_int_eq(st.conv, 1);
  ck_assert_int_eq(st.widened, 1);
  tj_arena_free(a);
}
END_TEST

START_TEST(scheduled_kernels_compute_the_same_bits) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/schedule_kernels.rx", NULL);
  static const struct {
    const char *name;
    int conv, injective, reduction, epilogues, windowed;
  } want[] = {
      /* the convs' padding is computed per output row (windowed), except where the
       * window would recompute too much of it: then it stays an injective nest */
      {"conv_f16_relu", 1, 0, 0, 1, 1},          {"conv_mixed_cast_relu", 1, 0, 0, 2, 1},
      {"conv_strided_dilated_bias", 1, 1, 0, 1, 0}, {"add_tail", 0, 1, 0, 0, 0},
      {"row_sum", 1, 0, 0, 0, 0},                {"row_stats", 0, 0, 1, 0, 0},
  };
  const int bits[] = {512, 256, 128};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    for (size_t j = 0; j < sizeof bits / sizeof bits[0]; j++) {
      const tj_prim_func_t *f = prim(m, want[i].name), *g;
      tj_tir_schedule_stats_t st = schedule(a, f, bits[j], &g);
      ck_assert_msg(st.conv == want[i].conv && st.injective == want[i].injective &&
                        st.reduction == want[i].reduction && st.fused_epilogues == want[i].epilogues &&
                        st.windowed == want[i].windowed,
                    "%s: conv %d injective %d reduction %d epilogues %d windowed %d", want[i].name, st.conv,
                    st.injective, st.reduction, st.fused_epilogues, st.windowed);
      assert_same_bits(want[i].name, f, g);
    }
  tj_arena_free(a);
}
END_TEST

/* Runs f and g on the same random inputs through the interpreter; their outputs agree
 * within `rtol` of the largest output (float32 parameters only). Returns the largest
 * difference seen, so a test can also require that something changed. */
static double max_diff(const tj_prim_func_t *f, const tj_prim_func_t *g, double rtol) {
  void *a[8], *b[8];
  size_t bytes[8];
  ck_assert_int_le(f->n_params, 8);
  for (int i = 0; i < f->n_params; i++) {
    int64_t n;
    ck_assert(tj_buffer_static_size(f->buffer_map[i], &n));
    ck_assert(tj_dtype_eq(f->buffer_map[i]->dtype, TJ_F32));
    bytes[i] = (size_t)n * 4;
    a[i] = tj_malloc(bytes[i]);
    b[i] = tj_malloc(bytes[i]);
    fill(a[i], TJ_F32, n);
    memcpy(b[i], a[i], bytes[i]);
  }
  TU_OK(tj_interp_run_named("f", f, f->n_params, a, NULL));
  TU_OK(tj_interp_run_named("g", g, g->n_params, b, NULL));
  double worst = 0, scale = 0;
  for (int i = 0; i < f->n_params; i++)
    for (size_t e = 0; e < bytes[i] / 4; e++) {
      double x = ((float *)a[i])[e], y = ((float *)b[i])[e];
      worst = fabs(x - y) > worst ? fabs(x - y) : worst;
      scale = fabs(x) > scale ? fabs(x) : scale;
    }
  for (int i = 0; i < f->n_params; i++) {
    tj_free(a[i]);
    tj_free(b[i]);
  }
  ck_assert_msg(worst <= rtol * scale, "outputs differ by %g (largest output %g)", worst, scale);
  return worst;
}

/* reorder_reductions: a float32 conv takes rx innermost (unrolled around the tile), its
 * outputs within rounding of the IR's order; float16 accumulators and strided convs
 * keep their order (and bits). */
START_TEST(float32_conv_reductions_reorder_only_when_allowed) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/schedule_kernels.rx", NULL);
  tj_tir_schedule_options_t o = {.enabled = true, .vector_bits = 512, .reorder_reductions = true};
  tj_tir_schedule_stats_t st;
  const tj_prim_func_t *f = prim(m, "conv_f32_relu"), *g;
  TU_OK(tj_tir_schedule(a, f, "f", &o, &g, &st));
  ck_assert_int_eq(st.conv, 1);
  ck_assert_int_eq(st.reordered, 1);
  ck_assert_int_eq(kinds_of(g).unrolled, 4); /* rx, and the init, update, write-back tiles */
  ck_assert(max_diff(f, g, 1e-5) > 0);       /* another order: not the same bits, but close */
  static const char *const kept[] = {"conv_f16_relu", "conv_strided_dilated_bias"};
  for (int i = 0; i < 2; i++) {
    f = prim(m, kept[i]);
    TU_OK(tj_tir_schedule(a, f, "f", &o, &g, &st));
    ck_assert_int_eq(st.conv, 1);
    ck_assert_int_eq(st.reordered, 0);
    assert_same_bits(kept[i], f, g);
  }
  tj_arena_free(a);
}
END_TEST

/* With AVX512-FP16 a float16 conv keeps its float16 arithmetic: no widening, the
 * padding window and accumulator in float16, and the same bits. A float32 accumulator
 * over float16 inputs (mixed precision) is still widened. */
START_TEST(native_float16_convs_are_not_widened) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/schedule_kernels.rx", NULL);
  const tj_prim_func_t *f = prim(m, "conv_f16_relu"), *g;
  tj_tir_schedule_stats_t st = schedule_with(a, f, 512, true, &g);
  ck_assert_int_eq(st.conv, 1);
  ck_assert_int_eq(st.widened, 0);
  ck_assert_int_eq(st.windowed, 1);
  assert_same_bits("conv_f16_relu (native float16)", f, g);
  f = prim(m, "conv_mixed_cast_relu");
  st = schedule_with(a, f, 512, true, &g);
  ck_assert_int_eq(st.widened, 1);
  assert_same_bits("conv_mixed_cast_relu (native float16)", f, g);
  m = load(a, "examples/seed/model.rx", "default");
  st = schedule_with(a, prim(m, "fused_conv2d2_relu"), 512, true, &g);
  ck_assert_int_eq(st.conv, 1);
  ck_assert_int_eq(st.widened, 0);
  tj_arena_free(a);
}
END_TEST

START_TEST(nchw_grouped_strided_conv_computes_the_same_bits) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/nchw_group_conv.rx", "default");
  for (int i = 0; i < m->n_funcs; i++) {
    if (!m->funcs[i].is_prim) continue;
    const tj_prim_func_t *g;
    schedule(a, m->funcs[i].prim, 512, &g);
    assert_same_bits(m->funcs[i].name, m->funcs[i].prim, g);
  }
  tj_tir_schedule_stats_t st = schedule(a, prim(m, "fused_conv2d_add"), 512, &(const tj_prim_func_t *){NULL});
  ck_assert_int_eq(st.conv, 1); /* vectors of 4 along x (NCHW's last dim) */
  tj_arena_free(a);
}
END_TEST

/* Transposes run in tiles (each cache line of the input serves several output rows);
 * extents with no divisor fit for a tile stay untiled. Either way the bits are the same. */
START_TEST(transposes_are_tiled_where_the_extents_allow) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/transpose_kernels.rx", "default");
  int tiled = 0, prims = 0;
  for (int i = 0; i < m->n_funcs; i++) {
    if (!m->funcs[i].is_prim) continue;
    const tj_prim_func_t *f = m->funcs[i].prim, *g;
    tj_tir_schedule_stats_t st = schedule(a, f, 512, &g);
    bool prime = f->buffer_map[0]->shape[0]->kind == TJ_TIR_INT_IMM && f->buffer_map[0]->shape[0]->int_imm == 29;
    ck_assert_msg(st.transpose_tiles == !prime, "%s: %d transpose tiles", m->funcs[i].name, st.transpose_tiles);
    ck_assert_int_eq(st.injective, 1);
    assert_same_bits(m->funcs[i].name, f, g);
    tiled += st.transpose_tiles;
    prims++;
  }
  ck_assert_int_eq(prims, 4);
  ck_assert_int_eq(tiled, 3);
  tj_arena_free(a);
}
END_TEST

/* Chains of copying nests (tests/models/attention_reshapes.rx: reshape -> transpose ->
 * transpose, transpose -> reshape) become one parallel loop from the input: the copies
 * are substituted into the last nest, their intermediate buffers dropped. Same bits. */
START_TEST(reshape_and_transpose_chains_inline_into_one_loop) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/attention_reshapes.rx", "default");
  static const struct {
    const char *name;
    int inlined;
  } want[] = {{"fused_reshape_transpose_transpose1", 2}, {"fused_transpose2_reshape1", 1}};
  for (int i = 0; i < 2; i++) {
    const tj_prim_func_t *f = prim(m, want[i].name), *g;
    tj_tir_schedule_stats_t st = schedule(a, f, 512, &g);
    ck_assert_int_eq(st.inlined, want[i].inlined);
    ck_assert_int_eq(st.injective, 1);
    ck_assert_int_eq(tj_prim_func_root_block(g)->n_alloc_buffers, 0);
    ck_assert_int_eq(kinds_of(g).parallel, 1);
    assert_same_bits(want[i].name, f, g);
  }
  tj_arena_free(a);
}
END_TEST

/* NCHW convs as PyTorch models write them (tests/models/nchw_conv_layouts.rx): the dense
 * ones vectorize their output channels (weights repacked with them innermost, the tile
 * along x), whatever the stride; the depthwise ones, whose input would be gathered
 * along channels, keep x; the stride-1 1x1 ones (117 pixels: 7 whole vectors and a
 * masked tail) take the pointwise rule's tile along the pixels, except 48 output
 * channels at 512 bits (the conv rule's 3-vector channel tile). Every one computes the same bits as the original, at 512 and 256
 * bits, float32 and float16. */
START_TEST(nchw_convs_vectorize_output_channels_and_compute_the_same_bits) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/nchw_conv_layouts.rx", "default");
  static const struct {
    const char *name;
    int pointwise[2]; /* at 512, 256 bits: 1 = a stride-1 1x1 conv vectorized along its
                       * flattened pixels, 0 = the conv rule (weights repacked if dense) */
    int dense;        /* output channels vectorized by the conv rule (weights repacked) */
  } want[] = {{"fused_conv2d_relu", {0, 0}, 1}, {"conv2d1", {0, 0}, 1}, {"conv2d2", {0, 0}, 1},
              {"conv2d3", {0, 0}, 1},           {"conv2d4", {0, 1}, 1}, {"conv2d5", {0, 0}, 0},
              {"conv2d6", {0, 0}, 0},           {"conv2d7", {0, 0}, 1}, {"conv2d8", {0, 0}, 1},
              {"conv2d9", {1, 1}, 1}};
  const int bits[] = {512, 256};
  int checked = 0;
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    for (size_t j = 0; j < sizeof bits / sizeof bits[0]; j++) {
      const tj_prim_func_t *f = prim(m, want[i].name), *g;
      tj_tir_schedule_stats_t st = schedule(a, f, bits[j], &g);
      int pointwise = want[i].pointwise[j], repacked = want[i].dense && !pointwise;
      ck_assert_msg(st.conv == 1 && st.repacked == repacked && st.pointwise == pointwise,
                    "%s at %d bits: conv %d repacked %d pointwise %d", want[i].name, bits[j], st.conv, st.repacked,
                    st.pointwise);
      assert_same_bits(want[i].name, f, g);
      checked++;
    }
  ck_assert_int_eq(checked, 20);
  /* 590 KB of weights: one parallel iteration per block of output channels (4 vectors
   * of 16 in the tile, see channel_tile: 256 / 64), its 3 output rows inside, their
   * input channels walked in blocks (see build_k_blocked), the padding materialised by
   * its own nest. */
  const tj_prim_func_t *g;
  tj_tir_schedule_stats_t st = schedule(a, prim(m, "conv2d8"), 512, &g);
  ck_assert_int_eq(st.windowed, 0);
  ck_assert_int_eq(st.injective, 1);
  ck_assert_int_eq(kinds_of(g).parallel_extent, 4);
  /* The depthwise stride-2 conv goes plane by plane (schedule_depthwise.c): a window of
   * the block's padded rows, [row, x], read along x with stride 2. (The stride-1 one, 9
   * wide, is one odd vector per row: left to the conv rule.) */
  st = schedule(a, prim(m, "conv2d6"), 512, &g);
  ck_assert_int_eq(st.windowed, 1);
  ck_assert_int_eq(st.plane_windows, 1);
  ck_assert_int_eq(window_ndim(g), 2);
  st = schedule(a, prim(m, "conv2d5"), 512, &g);
  ck_assert_int_eq(st.plane_windows, 0);
  tj_arena_free(a);
}
END_TEST

static bool acc_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  const tj_buffer_t **acc = v->ctx;
  if (s->kind == TJ_TIR_ALLOCATE && strstr(s->allocate.buffer->name, "_acc")) *acc = s->allocate.buffer;
  return true;
}

typedef struct named_alloc {
  const char *suffix;
  const tj_buffer_t *found;
} named_alloc_t;

static bool named_alloc_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  named_alloc_t *n = v->ctx;
  const char *name = s->kind == TJ_TIR_ALLOCATE ? s->allocate.buffer->name : NULL;
  size_t len = name ? strlen(name) : 0, want = strlen(n->suffix);
  if (len >= want && strcmp(name + len - want, n->suffix) == 0) n->found = s->allocate.buffer;
  return true;
}

/* The buffer allocated in f whose name ends with suffix, or NULL. */
static const tj_buffer_t *allocated(const tj_prim_func_t *f, const char *suffix) {
  named_alloc_t n = {suffix, NULL};
  tj_tir_visitor_t v = {.stmt = named_alloc_stmt, .ctx = &n};
  tj_tir_visit_stmt(&v, f->body);
  return n.found;
}

/* A stride-2 depthwise row of 5 outputs (tests/models/nchw_conv_layouts.rx, dws2: 9 wide
 * -> 5) is computed in one vector of 8 lanes (a power of 2: a span load and a permute
 * per window row, not a 5-lane vector LLVM splits into 4 + 1) and stores its 5 columns;
 * the window's rows cover the 8 lanes' stride-2 span (2 + 2 * 8 columns). Same bits at
 * 512 and 256 bits. */
START_TEST(narrow_stride2_depthwise_rows_compute_whole_power_of_2_vectors) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/nchw_conv_layouts.rx", "default");
  const int bits[] = {512, 256};
  for (int j = 0; j < 2; j++) {
    const tj_prim_func_t *f = prim(m, "conv2d6"), *g;
    tj_tir_schedule_stats_t st = schedule(a, f, bits[j], &g);
    ck_assert_int_eq(st.plane_windows, 1);
    const tj_buffer_t *acc = allocated(g, "_acc"), *win = allocated(g, "_window");
    int64_t lanes = 0, cols = 0;
    ck_assert_ptr_nonnull(acc);
    ck_assert_ptr_nonnull(win);
    ck_assert(tj_tir_is_const_int(acc->shape[1], &lanes) && tj_tir_is_const_int(win->shape[1], &cols));
    ck_assert_int_eq(lanes, 8);
    ck_assert_int_ge(cols, 2 + 2 * 8);
    assert_same_bits("conv2d6", f, g);
  }
  tj_arena_free(a);
}
END_TEST

static bool count_prefetch(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  if (e->kind == TJ_TIR_CALL && strcmp(e->call.op, "tir.prefetch") == 0) ++*(int *)v->ctx;
  return true;
}

static int prefetches(const tj_prim_func_t *f) {
  int n = 0;
  tj_tir_visitor_t v = {.expr = count_prefetch, .ctx = &n};
  tj_tir_visit_stmt(&v, f->body);
  return n;
}

/* Dense NCHW convs with few output positions and weights over 512 KB
 * (tests/models/conv_tile_blocks.rx, 2x3 outputs, 1024 channels) walk their
 * input channels in blocks, every tile's partial sums kept in a local [positions, x,
 * lanes] buffer between blocks, and prefetch the next block's weights, each line once:
 * 8 channels x 9 taps x 64 lanes = 288 lines over 2 tiles x 24 k steps (rc, ry; rx
 * inside), 6 tir.prefetch per step, in either float mode and at stride 2 (the
 * interpreter skips them); an epilogue that
 * adds a tensor read at the output's own indices reads a per-row local copy of it,
 * K-blocked or not (the 12x12 conv with small weights). Same bits as the unscheduled
 * kernels at 512 and 256 bits. */
START_TEST(k_blocked_tiles_and_residual_rows_compute_the_same_bits) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/conv_tile_blocks.rx", "default");
  static const struct {
    const char *name;
    int64_t positions; /* the partial sums' first dim at 512 bits; 0: not K-blocked */
    bool residual;
  } want[] = {
      {"fused_conv2d_add_relu", 2, true}, /* 2x3 output (2 rows), residual add */
      {"fused_conv2d1_relu", 2, false},   /* stride 2 */
      {"conv2d2", 2, false},              /* a batch of 2 at 1x3: 2 x 1 rows */
      {"fused_conv2d3_add1_relu1", 0, true},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const tj_prim_func_t *f = prim(m, want[i].name), *g;
    tj_tir_schedule_stats_t st = schedule(a, f, 512, &g);
    ck_assert_msg(st.conv == 1, "%s: conv %d", want[i].name, st.conv);
    const tj_buffer_t *part = allocated(g, "_part"), *row = allocated(g, "_row");
    int64_t positions = 0;
    if (part) ck_assert(part->ndim == 3 && tj_tir_is_const_int(part->shape[0], &positions));
    ck_assert_msg(positions == want[i].positions, "%s: %lld positions", want[i].name, (long long)positions);
    ck_assert_msg((row != NULL) == want[i].residual, "%s: residual rows %d", want[i].name, row != NULL);
    ck_assert_int_eq(prefetches(g), positions ? 6 : 0);
    assert_same_bits(want[i].name, f, g);
    /* rx unrolled in the tile (default float mode) except at stride 2 (rx does not
     * slide): the same prefetches */
    tj_tir_schedule_options_t o = {.enabled = true, .vector_bits = 512, .reorder_reductions = true};
    TU_OK(tj_tir_schedule(a, f, "f", &o, &g, &st));
    ck_assert_int_eq(prefetches(g), positions ? 6 : 0);
    ck_assert_int_eq(st.reordered, strcmp(want[i].name, "fused_conv2d1_relu") != 0);
    schedule(a, f, 256, &g);
    assert_same_bits(want[i].name, f, g);
  }
  tj_arena_free(a);
}
END_TEST

/* Partial sums up to 32 KB local (tests/models/conv_k_blocks_14.rx: 14 x 14 x 32 and
 * 13 x 13 x 16 floats) K-block the 14x14 convs with large weights too, with the next
 * block's weights prefetched: 128 -> 256 stride 2 (8 channels a block, 288 lines of
 * weights over 2 x 7 tiles x 24 steps: 1 prefetch a step) and 240 -> 272 (40 channels
 * of 9 x 16 lanes: 360 lines over 13 x 120 steps); weights of exactly 512 KB are
 * channel-blocked (the 1x1 stride-2 256 -> 512 conv, 7x7 output). (Bits:
 * test_differential, through the JIT, as the interpreter is too slow for them.) */
START_TEST(k_blocks_take_14x14_outputs) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/conv_k_blocks_14.rx", "default");
  static const struct {
    const char *name;
    int64_t positions, lanes;
  } want[] = {{"fused_conv2d_multiply_add_relu", 14, 32}, {"fused_conv2d1_add1_relu1", 13, 16}, {"conv2d2", 7, 32}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const tj_prim_func_t *g;
    tj_tir_schedule_stats_t st = schedule(a, prim(m, want[i].name), 512, &g);
    ck_assert_int_eq(st.conv, 1);
    const tj_buffer_t *part = allocated(g, "_part");
    int64_t positions = 0, lanes = 0;
    ck_assert_msg(part && part->ndim == 3, "%s: not K-blocked", want[i].name);
    ck_assert(tj_tir_is_const_int(part->shape[0], &positions) && tj_tir_is_const_int(part->shape[2], &lanes));
    ck_assert_int_eq(positions, want[i].positions);
    ck_assert_int_eq(lanes, want[i].lanes);
    ck_assert_int_eq(prefetches(g), 1);
  }
  tj_arena_free(a);
}
END_TEST

/* The register tile a scheduled conv accumulates in: {outputs along the tile dim, lanes}. */
static void acc_shape(const tj_prim_func_t *f, int64_t *tile, int64_t *lanes) {
  const tj_buffer_t *acc = NULL;
  tj_tir_visitor_t v = {.stmt = acc_stmt, .ctx = &acc};
  tj_tir_visit_stmt(&v, f->body);
  ck_assert_ptr_nonnull(acc);
  ck_assert_int_eq(acc->ndim, 2);
  ck_assert(tj_tir_is_const_int(acc->shape[0], tile) && tj_tir_is_const_int(acc->shape[1], lanes));
}

/* Convs vectorized along output channels read from repacked weights
 * (tests/models/channel_tile_convs.rx): at 512 bits the tile spans several 16-lane
 * vectors of channels by as many x-positions as keep it within 24 accumulators (the
 * most accumulators, then the most vectors); at 256 bits one vector, as before. Every
 * kernel computes the same bits as the original at both widths. */
START_TEST(channel_tiles_span_several_vectors_and_compute_the_same_bits) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/channel_tile_convs.rx", "default");
  static const struct {
    const char *name;
    int64_t tile, lanes; /* at 512 bits */
  } want[] = {
      {"conv2d", 7, 32},  /* x 7, 64 channels: 7 x 2 vectors (4 vectors would leave 1 x 4) */
      {"conv2d1", 5, 64}, /* x 5, 64 channels: 5 x 4 */
      {"conv2d2", 5, 48}, /* x 10, 48 channels: 5 x 3 */
      {"conv2d3", 5, 48}, /* stride 2: x 5, 48 channels */
      {"conv2d4", 7, 32}, /* the 7x7 stride-2 stem, 3 input channels: x 7, 64 channels */
      {"conv2d5", 6, 64}, /* NHWC stride 2: x 6, 64 channels */
      {"fused_conv2d6_add_relu", 11, 32}, /* NHWC 1x1 + bias + relu: x 11, 32 channels */
      {"conv2d7", 9, 32},                 /* float16: x 9, 32 channels */
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const tj_prim_func_t *f = prim(m, want[i].name), *g;
    int64_t tile, lanes;
    tj_tir_schedule_stats_t st = schedule(a, f, 512, &g);
    ck_assert_msg(st.conv == 1 && st.repacked == 1, "%s: conv %d repacked %d", want[i].name, st.conv, st.repacked);
    acc_shape(g, &tile, &lanes);
    ck_assert_msg(tile == want[i].tile && lanes == want[i].lanes, "%s: tile %lld x %lld lanes", want[i].name,
                  (long long)tile, (long long)lanes);
    assert_same_bits(want[i].name, f, g);
    schedule(a, f, 256, &g);
    acc_shape(g, &tile, &lanes);
    ck_assert_int_le(lanes, 8);
    assert_same_bits(want[i].name, f, g);
  }
  tj_arena_free(a);
}
END_TEST

static bool pad_load_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  int *n = v->ctx;
  if (e->kind == TJ_TIR_BUFFER_LOAD && strstr(e->load.buffer->name, "pad_temp")) (*n)++;
  return true;
}

/* How many loads of f read a buffer named pad_temp* (the padding or its window). */
static int pad_loads(const tj_prim_func_t *f) {
  int n = 0;
  tj_tir_visitor_t v = {.expr = pad_load_expr, .ctx = &n};
  tj_tir_visit_stmt(&v, f->body);
  return n;
}

/* Convs without padding (tests/models/copy_pad_convs.rx: NHWC 1x1 at stride 1 and 2,
 * the second with a residual add and relu, an NCHW 1x1 stride-2 downsample with a
 * per-channel scale and shift): the NHWC ones read the copy LegalizeOps writes as their
 * padding from the input itself (their reduction walks its last dim), neither windowed
 * nor materialised, at 512 and 256 bits; the NCHW one, reading one element per channel
 * plane, keeps its window; a channel-blocked NCHW 1x1/2 (conv_k_blocks_14.rx's 256 ->
 * 512, whose copy was materialised whole) reads its input in place. Every kernel
 * computes the same bits as the original. */
START_TEST(copy_padding_is_read_from_the_input) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/copy_pad_convs.rx", "default");
  static const struct {
    const char *name;
    bool in_place;
  } want[] = {{"conv2d", true}, {"fused_conv2d1_add_relu", true}, {"fused_conv2d2_multiply_add1", false}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const tj_prim_func_t *f = prim(m, want[i].name), *g;
    ck_assert_int_gt(pad_loads(f), 0);
    for (int bits = 256; bits <= 512; bits += 256) {
      tj_tir_schedule_stats_t st = schedule(a, f, bits, &g);
      ck_assert_msg(st.conv == 1 && st.windowed == !want[i].in_place && st.inlined == want[i].in_place,
                    "%s at %d bits: conv %d windowed %d inlined %d", want[i].name, bits, st.conv, st.windowed, st.inlined);
      ck_assert_msg((pad_loads(g) == 0) == want[i].in_place, "%s at %d bits: %d loads of its padding", want[i].name, bits,
                    pad_loads(g));
      assert_same_bits(want[i].name, f, g);
    }
  }
  const tj_module_t *kb = load(a, "tests/models/conv_k_blocks_14.rx", "default");
  const tj_prim_func_t *g;
  tj_tir_schedule_stats_t st = schedule(a, prim(kb, "conv2d2"), 512, &g);
  ck_assert_int_eq(st.inlined, 1);
  ck_assert_int_eq(pad_loads(g), 0);
  tj_arena_free(a);
}
END_TEST

/* NCHW stride-2 convs with 3 input channels (tests/models/x_tile_convs.rx): at 512 bits
 * the conv rule vectorizes x and tiles the output channels (acc [channels, x lanes]),
 * reading the input through a window phased along x ([c, ry, rx, x]), also with odd
 * padded rows; the one whose output rows are no whole vectors keeps the
 * channel-vectorized tile (acc [x-positions, channels], window [c, ry, padded row]).
 * At 512 and 256 bits every kernel keeps its bits. */
START_TEST(few_channel_strided_convs_vectorize_x) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/x_tile_convs.rx", "default");
  static const struct {
    const char *name;
    int64_t acc_rows, acc_lanes;
    int window_dims;
  } want[] = {{"fused_conv2d_multiply_add_tir_clip", 12, 32, 4},
              {"fused_conv2d1_add1", 10, 16, 4},
              {"conv2d2", 8, 16, 4},
              {"conv2d3", 12, 16, 3}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const tj_prim_func_t *f = prim(m, want[i].name), *g;
    for (int bits = 256; bits <= 512; bits += 256) {
      tj_tir_schedule_stats_t st = schedule(a, f, bits, &g);
      ck_assert_int_eq(st.conv, 1);
      ck_assert_int_eq(st.windowed, 1);
      if (bits == 512) {
        const tj_buffer_t *acc = allocated(g, "_acc");
        int64_t rows, lanes;
        ck_assert(acc && tj_tir_is_const_int(acc->shape[0], &rows) && tj_tir_is_const_int(acc->shape[1], &lanes));
        ck_assert_msg(rows == want[i].acc_rows && lanes == want[i].acc_lanes, "%s: acc [%lld, %lld]", want[i].name,
                      (long long)rows, (long long)lanes);
        ck_assert_int_eq(window_ndim(g), want[i].window_dims);
      }
      assert_same_bits(want[i].name, f, g);
    }
  }
  tj_arena_free(a);
}
END_TEST

/* Reductions (tests/models/reductions.rx): a reduction to one element becomes parallel
 * vector partial results (its float sum rounds differently: checked against a double
 * reference in test_ops_reduce.c); reductions over leading axes reduce V neighbouring
 * outputs as one vector with the reduce loops outside it, bit for bit. */
START_TEST(reductions_are_vectorized) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/reductions.rx", "LegalizeOps");
  const tj_prim_func_t *g = NULL;
  tj_tir_schedule_stats_t st = schedule(a, prim(m, "sum"), 256, &g);
  ck_assert_int_eq(st.reduction, 1);
  kinds_t k = kinds_of(g);
  ck_assert_int_eq(k.blocks, 1);
  ck_assert_int_eq(k.vectorized, 2);    /* the partial results' init and update */
  ck_assert_int_eq(k.allocates, 1);     /* the partial results */
  st = schedule(a, prim(m, "max"), 256, &g); /* int32 with keepdims: exact */
  ck_assert_int_eq(st.reduction, 1);
  ck_assert_int_eq(kinds_of(g).vectorized, 2);
  assert_same_bits("max", prim(m, "max"), g);
  st = schedule(a, prim(m, "sum1"), 256, &g); /* x[k0, ax0]: a column sum */
  ck_assert_int_eq(st.reduction, 1);
  ck_assert_int_eq(kinds_of(g).vectorized, 2);
  assert_same_bits("sum1", prim(m, "sum1"), g);
  st = schedule(a, prim(m, "sum1"), 2048, &g); /* 64 lanes: one vector per strip */
  ck_assert_int_eq(st.reduction, 1);
  assert_same_bits("sum1", prim(m, "sum1"), g);
  st = schedule(a, prim(m, "mean"), 256, &g); /* over (0, 1) of (64, 32, 128), then divide */
  ck_assert_int_eq(st.reduction, 1);
  ck_assert_int_ge(kinds_of(g).vectorized, 2);
  assert_same_bits("mean", prim(m, "mean"), g);
  tj_arena_free(a);
}
END_TEST

/* Row reductions (tests/models/row_reductions.rx) with reorder_reductions: each row in
 * vector partial results (vectorized loops and local accumulators), within rounding of
 * the IR's order; the int32 sum exactly; without reorder_reductions the same bits.
 * softmax's and layer_norm's nests are fused row by row in both modes
 * (schedule_row_fusion.c): the strict run checks that the fusion is exact. */
START_TEST(row_reductions_vectorize_only_when_reordering_is_allowed) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/row_reductions.rx", "LegalizeOps");
  static const char *const names[] = {"softmax", "layer_norm", "sum", "max", "sum1"};
  for (int i = 0; i < 5; i++) {
    const tj_prim_func_t *f = prim(m, names[i]), *g;
    tj_tir_schedule_options_t o = {.enabled = true, .vector_bits = 512, .reorder_reductions = true};
    tj_tir_schedule_stats_t st;
    TU_OK(tj_tir_schedule(a, f, names[i], &o, &g, &st));
    ck_assert_int_ge(st.reduction, 1);
    /* softmax's four nests and layer_norm's two run row by row, in one parallel loop */
    ck_assert_int_eq(st.row_groups, i < 2);
    kinds_t k = kinds_of(g);
    if (i < 2) ck_assert_int_le(k.parallel, 1);
    /* their intermediates (exps, row max and sum; the statistics) are one row, per row */
    if (i < 2) ck_assert_int_eq(g->body->realize.block->n_alloc_buffers, 0);
    ck_assert_msg(k.allocates >= 4 && k.vectorized >= 4, "%s: %d allocates, %d vectorized loops", names[i],
                  k.allocates, k.vectorized);
    if (i == 4) assert_same_bits(names[i], f, g);
    else max_diff(f, g, 1e-5);
    o.reorder_reductions = false;
    TU_OK(tj_tir_schedule(a, f, names[i], &o, &g, &st));
    assert_same_bits(names[i], f, g);
  }
  tj_arena_free(a);
}
END_TEST

static bool row_value_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  if (s->kind == TJ_TIR_ALLOCATE && !strcmp(s->allocate.buffer->name, "row_value")) ++*(int *)v->ctx;
  return true;
}

/* An unrolled loop around a vectorized one: the statistics of K rows a vector
 * (schedule_row_lanes.c: for r in T.unroll(K): for il in T.vectorized(K)). */
static bool lanes_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  if (s->kind == TJ_TIR_FOR && s->loop.kind == TJ_FOR_UNROLLED && s->loop.body->kind == TJ_TIR_FOR &&
      s->loop.body->loop.kind == TJ_FOR_VECTORIZED)
    ++*(int *)v->ctx;
  return true;
}

/* layer_norm over rows shorter than two vectors (tests/models/short_rows.rx): its nests
 * fused by blocks of rows (one parallel loop over the leading row dims, the block's
 * statistics local), 1 / sqrt(var + eps) computed for the whole block when it holds a
 * multiple of 16 rows (rows of 16 with a bfloat16 cast, of 8, of 7) and not otherwise
 * (20 rows). Both float modes; the same bits as the IR in both (the statistics of rows
 * this short keep their order). */
START_TEST(short_rows_fuse_by_blocks_and_hoist_per_row_values) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/short_rows.rx", "default");
  static const char *const names[] = {"fused_layer_norm_cast", "layer_norm1", "layer_norm2", "layer_norm3"};
  static const int64_t parallel[] = {64, 64, 64, 64};
  for (int strict = 0; strict < 2; strict++)
    for (int i = 0; i < 4; i++) {
      const tj_prim_func_t *f = prim(m, names[i]), *g;
      tj_tir_schedule_options_t o = {.enabled = true, .vector_bits = 512, .reorder_reductions = !strict};
      tj_tir_schedule_stats_t st;
      TU_OK(tj_tir_schedule(a, f, names[i], &o, &g, &st));
      ck_assert_int_eq(st.row_groups, 1);
      kinds_t k = kinds_of(g);
      ck_assert_int_eq(k.parallel, 1);
      ck_assert_int_eq(k.parallel_extent, parallel[i]);
      ck_assert_int_eq(g->body->realize.block->n_alloc_buffers, 0); /* the statistics are per block */
      int hoisted = 0;
      tj_tir_visitor_t v = {.stmt = row_value_stmt, .ctx = &hoisted};
      tj_tir_visit_stmt(&v, g->body);
      ck_assert_msg(hoisted == (i < 3), "%s: %d row_value buffers", names[i], hoisted);
      /* rows of 16 in blocks of 32 and of 8 in blocks of 16: statistics with the rows as
       * lanes; rows of 7 (no power of two) and blocks of 20 rows (no multiple of 16): not */
      int lanes = 0;
      tj_tir_visitor_t lv = {.stmt = lanes_stmt, .ctx = &lanes};
      tj_tir_visit_stmt(&lv, g->body);
      ck_assert_msg(lanes == (i < 2), "%s: %d statistics loops with rows as lanes", names[i], lanes);
      assert_same_bits(names[i], f, g);
    }
  tj_arena_free(a);
}
END_TEST

/* Global pooling (tests/models/global_pools.rx): with reorder_reductions a reduction
 * over a whole plane of at least two vectors takes the global pool rule, each plane's
 * row in vector partial results (adaptive_avg_pool2d with its multiply fused, a mean
 * without keepdims with its divide, a max), within rounding of the IR's order (the max
 * exactly: it only compares); a 5x5 plane is too short at 512 bits (not at 256), the
 * NHWC mean reduces other dims than the last two; in the strict mode nothing takes it
 * and every kernel keeps its bits. */
START_TEST(global_pools_reduce_each_plane_in_vectors) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/global_pools.rx", "default");
  static const char *const names[] = {"adaptive_avg_pool2d", "mean", "max", "sum", "mean1"};
  static const int stages[] = {1, 1, 0, 0, 0};
  const int bits[] = {512, 256};
  for (size_t j = 0; j < sizeof bits / sizeof bits[0]; j++)
    for (int i = 0; i < 5; i++) {
      const tj_prim_func_t *f = prim(m, names[i]), *g;
      tj_tir_schedule_options_t o = {.enabled = true, .vector_bits = bits[j], .reorder_reductions = true};
      tj_tir_schedule_stats_t st;
      TU_OK(tj_tir_schedule(a, f, names[i], &o, &g, &st));
      bool pooled = i < 3 || (i == 3 && bits[j] == 256);
      ck_assert_msg(st.global_pools == pooled, "%s at %d bits: %d global pools", names[i], bits[j], st.global_pools);
      if (pooled) {
        ck_assert_int_eq(st.fused_epilogues, stages[i]);
        ck_assert_int_ge(kinds_of(g).vectorized, 3);
        /* the sums are one local element per row: no root buffer is left */
        ck_assert_int_eq(tj_prim_func_root_block(g)->n_alloc_buffers, 0);
      }
      if (i == 2) assert_same_bits(names[i], f, g);
      else max_diff(f, g, 1e-6);
      o.reorder_reductions = false;
      TU_OK(tj_tir_schedule(a, f, names[i], &o, &g, &st));
      ck_assert_int_eq(st.global_pools, 0);
      assert_same_bits(names[i], f, g);
    }
  tj_arena_free(a);
}
END_TEST

/* 3x3 stride-1 convs (tests/models/winograd_convs.rx) take the Winograd rule only with
 * both `winograd` and reorder_reductions (the default float mode): within rounding of the
 * direct sums through the interpreter, their scale / shift / relu and the residual add
 * fused into the output transform; otherwise the conv rule keeps the bits. */
static void expect_winograd_only_in_the_default_float_mode(const char *file, int want_convs, int want_fused) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, file, "default");
  int convs = 0, fused = 0;
  for (int i = 0; i < m->n_funcs; i++) {
    if (!m->funcs[i].is_prim) continue;
    const char *name = m->funcs[i].name;
    const tj_prim_func_t *f = m->funcs[i].prim, *g;
    tj_tir_schedule_options_t o = {
        .enabled = true, .vector_bits = 512, .fp_contract = true, .reorder_reductions = true, .winograd = true};
    tj_tir_schedule_stats_t st;
    TU_OK(tj_tir_schedule(a, f, name, &o, &g, &st));
    ck_assert_msg(st.winograd == 1, "%s: %d Winograd convs", name, st.winograd);
    fused += st.fused_epilogues;
    max_diff(f, g, 1e-5);
    convs++;
    o.reorder_reductions = false;
    TU_OK(tj_tir_schedule(a, f, name, &o, &g, &st));
    ck_assert_int_eq(st.winograd, 0);
    assert_same_bits(name, f, g);
    o.reorder_reductions = true, o.winograd = false;
    TU_OK(tj_tir_schedule(a, f, name, &o, &g, &st));
    ck_assert_int_eq(st.winograd, 0);
  }
  ck_assert_int_eq(convs, want_convs);
  ck_assert_int_eq(fused, want_fused);
  tj_arena_free(a);
}

START_TEST(winograd_convs_transform_only_in_the_default_float_mode) {
  /* subtract, multiply, relu; the residual add and its relu (read along the output's
   * rows); relu; the residual add and its relu, twice; relu */
  expect_winograd_only_in_the_default_float_mode("tests/models/winograd_convs.rx", 6, 11);
}
END_TEST

/* The same for NHWC convs (tests/models/winograd_nhwc_convs.rx, schedule_winograd_nhwc.c):
 * subtract, multiply, relu; the residual add and its relu; relu. */
START_TEST(nhwc_winograd_convs_transform_only_in_the_default_float_mode) {
  expect_winograd_only_in_the_default_float_mode("tests/models/winograd_nhwc_convs.rx", 5, 6);
}
END_TEST

/* A decomposed batch_norm behind a conv: the nests that expand its parameters sit
 * between the conv and its elementwise chain; they run first, so the whole chain
 * (subtract, divide, multiply, add) becomes the conv's epilogue. Same bits. */
START_TEST(batch_norm_chain_fuses_into_the_conv) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m =
      load(a, "tests/models/conv_batch_norm.rx", "DecomposeOpsForInference,LegalizeOps,AnnotateTIROpPattern,FuseOps,FuseTIR");
  const tj_prim_func_t *f =
      prim(m, "fused_conv2d_expand_dims_subtract_expand_dims_add_tir_sqrt_divide_expand_dims_multiply_expand_dims_add1");
  const tj_prim_func_t *g;
  tj_tir_schedule_stats_t st = schedule(a, f, 512, &g);
  ck_assert_int_eq(st.conv, 1);
  ck_assert_int_ge(st.fused_epilogues, 4); /* was 2: only the chain's first steps */
  assert_same_bits("conv_bn", f, g);
  tj_arena_free(a);
}
END_TEST

/* Linear layers (tests/models/matmul_kernels.rx): the conv rule schedules each matmul,
 * with a register tile several vectors wide where the width allows; the bits match. */
static int check_matmul_bits(tj_arena_t *a, const char *file) {
  const tj_module_t *m = load(a, file, "default");
  int prims = 0;
  const int bits[] = {512, 256};
  for (int i = 0; i < m->n_funcs; i++) {
    if (!m->funcs[i].is_prim) continue;
    prims++;
    for (size_t j = 0; j < sizeof bits / sizeof bits[0]; j++) {
      const tj_prim_func_t *g;
      tj_tir_schedule_stats_t st = schedule(a, m->funcs[i].prim, bits[j], &g);
      ck_assert_msg(st.conv == 1, "%s: conv rule %d", m->funcs[i].name, st.conv);
      assert_same_bits(m->funcs[i].name, m->funcs[i].prim, g);
    }
  }
  return prims;
}

START_TEST(matmuls_compute_the_same_bits) {
  tj_arena_t *a = tj_arena_create();
  ck_assert_int_eq(check_matmul_bits(a, "tests/models/matmul_kernels.rx"), 3);
  /* GEMV column blocks, small M, float16, rows not a multiple of the tile */
  ck_assert_int_eq(check_matmul_bits(a, "tests/models/gemv_gemm_kernels.rx"), 10);
  /* batch_matmul: weights [batch..., K, N] */
  ck_assert_int_eq(check_matmul_bits(a, "tests/models/batch_matmul_kernels.rx"), 6);
  /* ... with the matmul tile (4 rows x 4 vectors for N = 128), where a broadcast
   * weight (read at batch index 0) keeps the conv rule's one-vector tile */
  const tj_module_t *m = load(a, "tests/models/batch_matmul_kernels.rx", "default");
  const tj_prim_func_t *g;
  int64_t tile, lanes;
  schedule(a, prim(m, "matmul"), 512, &g);
  acc_shape(g, &tile, &lanes);
  ck_assert_msg(tile == 4 && lanes == 64, "batch_matmul tile %lld x %lld", (long long)tile, (long long)lanes);
  schedule(a, prim(m, "matmul5"), 512, &g);
  acc_shape(g, &tile, &lanes);
  ck_assert_int_eq(lanes, 16);
  tj_arena_free(a);
}
END_TEST

/* 1x1 NCHW convs (tests/models/pointwise_kernels.rx): stride-1 float32 ones take the
 * pointwise rule's GEMM tile along the flattened pixels (at 512 and 256 bits; 14x14 and
 * 7x7 with a masked tail), except at 512 bits a masked one with small weights and
 * output channels in threes of vectors (the conv rule's channel tile); the others
 * (stride 2, NHWC, float16) the conv rule; every kernel keeps its bits. At 512 bits
 * 8->16 at 16x14 (14 vectors of pixels) takes 8 x 2 vectors, no tail, over 8 x 3 with
 * one. */
static bool partial_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  if (s->kind == TJ_TIR_ALLOCATE && strstr(s->allocate.buffer->name, "_partial")) *(bool *)v->ctx = true;
  return true;
}

/* The function keeps tile sums between blocks of input channels (a "*_partial" buffer). */
static bool blocked_over_inputs(const tj_prim_func_t *f) {
  bool found = false;
  tj_tir_visitor_t v = {.stmt = partial_stmt, .ctx = &found};
  tj_tir_visit_stmt(&v, f->body);
  return found;
}

/* tir.prefetch calls in f: reads (rw 0) and writes (rw 1). */
typedef struct prefetch_count {
  int reads, writes;
} prefetch_count_t;

static bool count_prefetch_rw(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  prefetch_count_t *p = v->ctx;
  int64_t rw = -1;
  if (e->kind == TJ_TIR_CALL && !strcmp(e->call.op, "tir.prefetch") && tj_tir_is_const_int(e->call.args[1], &rw))
    rw ? p->writes++ : p->reads++;
  return true;
}

static prefetch_count_t prefetch_calls(const tj_prim_func_t *f) {
  prefetch_count_t p = {0, 0};
  tj_tir_visitor_t v = {.expr = count_prefetch_rw, .ctx = &p};
  tj_tir_visit_stmt(&v, f->body);
  return p;
}

START_TEST(pointwise_convs_take_the_gemm_tile_and_compute_the_same_bits) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/pointwise_kernels.rx", "default");
  const int bits[] = {512, 256};
  for (size_t j = 0; j < sizeof bits / sizeof bits[0]; j++) {
    int pointwise = 0, prims = 0, blocked = 0, exact_tiles = 0, prefetching = 0;
    for (int i = 0; i < m->n_funcs; i++) {
      if (!m->funcs[i].is_prim) continue;
      const tj_prim_func_t *g;
      tj_tir_schedule_stats_t st = schedule(a, m->funcs[i].prim, bits[j], &g);
      ck_assert_msg(st.conv == 1, "%s: conv rule %d", m->funcs[i].name, st.conv);
      pointwise += st.pointwise;
      blocked += blocked_over_inputs(g);
      const tj_buffer_t *x = g->buffer_map ? g->buffer_map[0] : NULL;
      int64_t c_in = 0, w = 0, tile, lanes;
      if (bits[j] == 512 && x && x->ndim == 4 && tj_tir_is_const_int(x->shape[1], &c_in) &&
          tj_tir_is_const_int(x->shape[3], &w) && c_in == 8 && w == 14) {
        acc_shape(g, &tile, &lanes);
        ck_assert_msg(tile == 8 && lanes == 32, "8->16 at 16x14: tile %lld x %lld lanes", (long long)tile,
                      (long long)lanes);
        exact_tiles++;
      }
      /* Only 2->52 at 80x128 (input and output 2.2 MB) prefetches its next pixel block:
       * a line of input per vector of the tile and each c step, and every output line
       * of the tile before it (rows x vectors, at least as many). */
      prefetch_count_t pf = prefetch_calls(g);
      if (st.pointwise && pf.reads + pf.writes) {
        ck_assert_int_gt(pf.reads, 0);
        ck_assert_int_ge(pf.writes, pf.reads);
        prefetching++;
      }
      prims++;
      assert_same_bits(m->funcs[i].name, m->funcs[i].prim, g);
    }
    ck_assert_int_eq(prims, 13);
    ck_assert_int_eq(prefetching, 1);
    /* at 512 bits the 14x14 conv to 48 channels goes to the conv rule's 7 x 3-vector tile */
    ck_assert_int_eq(pointwise, bits[j] == 512 ? 8 : 9);
    ck_assert_int_eq(exact_tiles, bits[j] == 512 ? 1 : 0);
    /* 200 input channels at 7x7 and 256 at 14x14 are blocked over the input channels */
    if (bits[j] == 512) ck_assert_int_eq(blocked, 2);
  }
  tj_arena_free(a);
}
END_TEST

/* A blocked 1x1 conv's parallel loop splits evenly over 2 threads
 * (tests/models/parallel_splits.rx; the pool gives each thread a contiguous range): 256 ->
 * 32 at 14x14, blocked over its input channels, runs 5 pixel blocks x 2 groups of 2
 * tiles (one group of 4 made 5 iterations, 3/2); a K-blocked 3x3/2 conv 288 -> 160 to
 * 5x7 runs its 5 channel blocks x 2 shares of its rows. Same bits. */
START_TEST(blocked_pointwise_groups_split_evenly) {
  tj_arena_t *a = tj_arena_create();
  const tj_module_t *m = load(a, "tests/models/parallel_splits.rx", "default");
  const tj_prim_func_t *g;
  tj_tir_schedule_stats_t st = schedule(a, prim(m, "conv2d"), 512, &g);
  ck_assert_int_eq(st.pointwise, 1);
  ck_assert(blocked_over_inputs(g));
  ck_assert_int_eq(kinds_of(g).parallel_extent, 10);
  assert_same_bits("conv2d", prim(m, "conv2d"), g);
  /* 5 channel blocks of 32 (K-blocked) x 2 shares of the 5 output rows (3 + 2) */
  st = schedule(a, prim(m, "conv2d1"), 512, &g);
  ck_assert_int_eq(st.conv, 1);
  ck_assert_int_eq(kinds_of(g).parallel_extent, 10);
  assert_same_bits("conv2d1", prim(m, "conv2d1"), g);
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("schedule");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, disabled_or_null_options_leave_the_function_alone);
  tcase_add_test(tc, conv_rule_fires_on_the_seed_fused_conv);
  tcase_add_test(tc, conv_rule_fires_on_float32_and_mixed_precision_convs);
  tcase_add_test(tc, a_gelu_diamond_fuses_into_the_matmul);
  tcase_add_test(tc, reshape_and_transpose_chains_inline_into_one_loop);
  tcase_add_test(tc, scheduled_kernels_compute_the_same_bits);
  tcase_add_test(tc, nchw_grouped_strided_conv_computes_the_same_bits);
  tcase_add_test(tc, nchw_convs_vectorize_output_channels_and_compute_the_same_bits);
  tcase_add_test(tc, narrow_stride2_depthwise_rows_compute_whole_power_of_2_vectors);
  tcase_add_test(tc, channel_tiles_span_several_vectors_and_compute_the_same_bits);
  tcase_add_test(tc, native_float16_convs_are_not_widened);
  tcase_add_test(tc, pointwise_convs_take_the_gemm_tile_and_compute_the_same_bits);
  tcase_add_test(tc, blocked_pointwise_groups_split_evenly);
  tcase_add_test(tc, float32_conv_reductions_reorder_only_when_allowed);
  tcase_add_test(tc, transposes_are_tiled_where_the_extents_allow);
  tcase_add_test(tc, batch_norm_chain_fuses_into_the_conv);
  tcase_add_test(tc, matmuls_compute_the_same_bits);
  tcase_add_test(tc, k_blocked_tiles_and_residual_rows_compute_the_same_bits);
  tcase_add_test(tc, k_blocks_take_14x14_outputs);
  tcase_add_test(tc, copy_padding_is_read_from_the_input);
  tcase_add_test(tc, few_channel_strided_convs_vectorize_x);
  tcase_add_test(tc, reductions_are_vectorized);
  tcase_add_test(tc, row_reductions_vectorize_only_when_reordering_is_allowed);
  tcase_add_test(tc, short_rows_fuse_by_blocks_and_hoist_per_row_values);
  tcase_add_test(tc, global_pools_reduce_each_plane_in_vectors);
  tcase_add_test(tc, winograd_convs_transform_only_in_the_default_float_mode);
  tcase_add_test(tc, nhwc_winograd_convs_transform_only_in_the_default_float_mode);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
