/* Differential test on the project's own models (examples/, tests/models/): see
 * differential.h. TVM's conformance corpus gets the same treatment in
 * test_corpus_differential.c. */
#include "differential.h"
#include "passes.h"
#include "transforms/tir/schedule.h"

/* A Relax model (path relative to the source tree) through a pipeline. */
static const tj_module_t *run_pipeline(tj_arena_t *arena, const char *pipeline, const char *rel, char *path,
                                       size_t path_size) {
  snprintf(path, path_size, "%s/%s", tu_source_dir(), rel);
  tj_module_t *m = NULL;
  TU_OK(tj_parse_file(arena, path, &m));
  return tu_run_passes(arena, pipeline, m);
}

static const tj_module_t *default_pipeline(tj_arena_t *arena, const char *rel, char *path, size_t path_size) {
  return run_pipeline(arena, "default", rel, path, path_size);
}

/* Each PrimFunc the default pipeline makes of a model (legalized, fused), JIT-compiled
 * with the CPU schedule, against the interpreter. */
static void compare_pipeline_file(const char *rel, tally_t *t) {
  char path[4096];
  tj_arena_t *arena = tj_arena_create();
  const tj_module_t *out = default_pipeline(arena, rel, path, sizeof path);
  for (int i = 0; i < out->n_funcs; i++)
    if (out->funcs[i].is_prim) compare_function(arena, path, out->funcs[i].name, out->funcs[i].prim, t);
  tj_arena_free(arena);
}

/* The kernels of the models in files (NULL-terminated), bit-exact: n_kernels of them. */
static void expect_kernels_bit_exact(const char *what, const char *const *files, int n_kernels) {
  ck_assert_ptr_null(tj_jit_create(&jit));
  tally_t t = {0};
  for (int i = 0; files[i]; i++) compare_pipeline_file(files[i], &t);
  report(what, &t);
  ck_assert_int_eq(t.failed, 0);
  ck_assert_int_eq(t.compared, n_kernels);
  ck_assert_int_eq(t.exact, n_kernels);
  tj_jit_free(jit);
}

/* The kernels of `file` in the default float mode (reassociated sums, polynomial exp,
 * prefetches): n_kernels of them, each within tolerance of the interpreter. */
static void expect_kernels_within_tolerance(const char *what, const char *file, int n_kernels) {
  ck_assert_ptr_null(tj_jit_create(&jit));
  tally_t t = {0};
  relaxed = true;
  compare_pipeline_file(file, &t);
  relaxed = false;
  report(what, &t);
  ck_assert_int_eq(t.failed, 0);
  ck_assert_int_eq(t.compared, n_kernels);
  tj_jit_free(jit);
}

/* NCHW convs of every kind ResNet-18 and MobileNetV2 use (the schedule vectorizes their
 * output channels or x, strided and depthwise, float32 and float16): bit-exact. */
START_TEST(nchw_conv_kernels_match_the_interpreter) {
  const char *const files[] = {"tests/models/nchw_conv_layouts.rx", NULL};
  expect_kernels_bit_exact("NCHW convs", files, 10);
}
END_TEST

/* Convs whose register tile spans several vectors of output channels
 * (tests/models/channel_tile_convs.rx: odd widths, strides, padding, the stem, NHWC, a
 * bias + relu epilogue, float16): JIT-compiled, bit-exact against the interpreter. */
START_TEST(channel_tile_conv_kernels_match_the_interpreter) {
  const char *const files[] = {"tests/models/channel_tile_convs.rx", NULL};
  expect_kernels_bit_exact("channel-blocked conv tiles", files, 8);
}
END_TEST

/* Convs whose padding is a copy, read from the input itself
 * (tests/models/copy_pad_convs.rx: NHWC 1x1 at stride 1 and 2 with a residual, an NCHW
 * 1x1 stride-2 downsample with a scale and shift): bit-exact. */
START_TEST(copy_pad_conv_kernels_match_the_interpreter) {
  const char *const files[] = {"tests/models/copy_pad_convs.rx", NULL};
  expect_kernels_bit_exact("convs without padding", files, 3);
}
END_TEST

/* Strided convs with 3 input channels vectorized along x (tests/models/x_tile_convs.rx:
 * the x tile at 34x64 with a scale, shift and clip, with a batch of 2 and a residual
 * add, with odd padded rows, and a 24-wide output that keeps the channel tile):
 * bit-exact. */
START_TEST(x_tile_conv_kernels_match_the_interpreter) {
  const char *const files[] = {"tests/models/x_tile_convs.rx", NULL};
  expect_kernels_bit_exact("x-vectorized strided convs", files, 4);
}
END_TEST

/* K-blocked conv tiles and residual rows (tests/models/conv_tile_blocks.rx: 2x3 outputs
 * with 590 KB of weights (1024 x 16 x 3 x 3), stride 1 and 2, a batch of 2, residual
 * adds, and a windowed 12x12 conv with one): bit-exact; in the default float mode
 * (weights prefetched, tir.prefetch) within tolerance. */
START_TEST(k_blocked_conv_kernels_match_the_interpreter) {
  const char *const files[] = {"tests/models/conv_tile_blocks.rx", NULL};
  expect_kernels_bit_exact("K-blocked conv tiles", files, 4);
  /* the default float mode: rx unrolled in the tile, the next weights prefetched */
  expect_kernels_within_tolerance("K-blocked conv tiles, default float mode", files[0], 4);
}
END_TEST

/* 1x1 convs (tests/models/pointwise_kernels.rx): the pointwise rule's GEMM tile along
 * the flattened pixels (odd channel counts, batch 2, batch-norm + clip and residual
 * epilogues, masked tails at 14x14 and 7x7, blocks of input channels) and the ones it
 * leaves to the conv rule, and a tile without a tail taken over a wider one with a tail:
 * bit-exact. The one whose output is large enough for superblocks of pixels is too slow
 * for the interpreter: see the next test. */
START_TEST(pointwise_conv_kernels_match_the_interpreter) {
  const char *const files[] = {"tests/models/pointwise_kernels.rx", NULL};
  expect_kernels_bit_exact("1x1 convs", files, 12);
}
END_TEST

/* Matmuls at the schedule's edges (tests/models/gemv_gemm_kernels.rx: M = 1 with K odd
 * and N not a multiple of the vector width, small M, float16, a fused bias add):
 * JIT-compiled with the schedule, bit-exact against the interpreter. */
START_TEST(matmul_kernels_match_the_interpreter) {
  const char *const files[] = {"tests/models/gemv_gemm_kernels.rx", "tests/models/matmul_kernels.rx",
                               "tests/models/batch_matmul_kernels.rx", NULL};
  expect_kernels_bit_exact("matmuls", files, 19);
}
END_TEST

/* Reshape / transpose chains inlined into one nest (tests/models/attention_reshapes.rx):
 * bit-exact against the interpreter. */
START_TEST(inlined_reshape_chains_match_the_interpreter) {
  const char *const files[] = {"tests/models/attention_reshapes.rx", NULL};
  expect_kernels_bit_exact("reshape / transpose chains", files, 2);
}
END_TEST

/* Row reductions (softmax, layer_norm, row sum/max, an int32 sum) in the default float
 * mode: the rows reduce in vector partial results and exp is a polynomial; within
 * tolerance of the interpreter. */
START_TEST(row_reductions_in_the_default_float_mode_match_the_interpreter) {
  expect_kernels_within_tolerance("row reductions, default float mode", "tests/models/row_reductions.rx", 5);
}
END_TEST

/* layer_norm over rows shorter than two vectors, fused by blocks of rows with the
 * per-row 1 / sqrt(var + eps) computed a vector of rows at a time
 * (tests/models/short_rows.rx: rows of 16, 8 and 7, blocks of 32, 16, 48 and 20 rows,
 * a bfloat16 cast after it, a bfloat16 input cast before it): within tolerance of the
 * interpreter (whose rsqrt is libm's) in the default float mode. test_schedule.c checks
 * that the scheduled TIR keeps the IR's bits in both modes. */
START_TEST(short_row_layer_norms_match_the_interpreter) {
  expect_kernels_within_tolerance("short-row layer_norms, default float mode", "tests/models/short_rows.rx", 5);
}
END_TEST

/* The same kernels in the strict float mode: the statistics of a block of rows of 16
 * (and of 8) take the rows as vector lanes, each term loaded from the block's row vectors
 * through an in-register transpose (jit/codegen.c, load_transposed; one kernel reads
 * bfloat16 through it); a wrong lane of the transpose is another row's statistics. Within
 * the tolerance of a kernel with a sqrt (libm's in the interpreter). */
START_TEST(short_row_layer_norms_match_the_interpreter_in_the_strict_mode) {
  ck_assert_ptr_null(tj_jit_create(&jit));
  tally_t t = {0};
  compare_pipeline_file("tests/models/short_rows.rx", &t);
  report("short-row layer_norms, strict", &t);
  ck_assert_int_eq(t.failed, 0);
  ck_assert_int_eq(t.compared, 5);
  tj_jit_free(jit);
}
END_TEST

/* The JIT's code for the statistics of rows of 16: the terms by the transpose's shuffles
 * (its first stage swaps 8-lane halves between rows: mask 0-7, 16-23), and after LLVM's
 * optimizations no gather (LLVM's loop vectorizer gathered the scalar rows' terms). */
START_TEST(short_row_statistics_load_their_terms_by_a_transpose) {
  char path[4096];
  tj_arena_t *arena = tj_arena_create();
  const tj_module_t *m = default_pipeline(arena, "tests/models/short_rows.rx", path, sizeof path);
  const tj_prim_func_t *f = NULL, *low = NULL;
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i].is_prim && !strcmp(m->funcs[i].name, "fused_layer_norm_cast")) f = m->funcs[i].prim;
  ck_assert_ptr_nonnull(f);
  tj_tir_schedule_options_t so = tj_jit_schedule_options(true, false);
  so.vector_bits = 512;
  TU_OK(tj_tir_lower_scheduled(arena, f, "fused_layer_norm_cast", &so, &low));
  char *raw = NULL, *opt = NULL;
  TU_OK(tj_jit_llvm_ir(low, "ln_raw", 0, &raw));
  TU_OK(tj_jit_llvm_ir(low, "ln_opt", 2, &opt));
  ck_assert_ptr_nonnull(
      strstr(raw, "<16 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 16, i32 17"));
  ck_assert_ptr_null(strstr(opt, "gather"));
  tj_free(raw);
  tj_free(opt);
  tj_arena_free(arena);
}
END_TEST

/* Global pooling (tests/models/global_pools.rx) in the default float mode: each
 * plane's row reduced in vector partial results (schedule_global_pool.c); within
 * tolerance of the interpreter. */
START_TEST(global_pools_in_the_default_float_mode_match_the_interpreter) {
  expect_kernels_within_tolerance("global pools, default float mode", "tests/models/global_pools.rx", 5);
}
END_TEST

/* 3x3 stride-1 convs by Winograd transforms (tests/models/winograd_convs.rx, with
 * TVMJIT_WINOGRAD=1): F(2x2) with tiles past both edges, F(4x4) with a batch of two
 * and F(2x2) at 14x14 with one (so that it makes two bands),
 * channels no multiple of 16, a band of tile rows past the output, a fused scale /
 * shift / relu and residual adds; the weights are inputs (transformed per call). Within
 * tolerance of the interpreter in the default float mode; in the strict mode the rule
 * does not apply: bit-exact. */
START_TEST(winograd_conv_kernels_match_the_interpreter) {
  const char *const files[] = {"tests/models/winograd_convs.rx", NULL};
  ck_assert_int_eq(setenv("TVMJIT_WINOGRAD", "1", 1), 0);
  expect_kernels_bit_exact("Winograd convs, strict float mode", files, 6);
  /* F(4x4)'s transforms multiply by up to 8 and 5 before the sums (docs/numerics.md):
   * 1e-4 of max(1, |y|) where the direct sums hold 1e-5 */
  relaxed_f32_tol = 1e-4;
  expect_kernels_within_tolerance("Winograd convs, default float mode", files[0], 6);
  relaxed_f32_tol = 1e-5;
  ck_assert_int_eq(unsetenv("TVMJIT_WINOGRAD"), 0);
}
END_TEST

/* 3x3 stride-1 NHWC convs by Winograd transforms (tests/models/winograd_nhwc_convs.rx,
 * schedule_winograd_nhwc.c): F(2x2) and F(4x4), channels that fill 4- and 8-lane vectors
 * only, a batch of two, a block of tiles mostly past the image, a fused shift / scale /
 * relu and a residual add; the weights are inputs (transformed per call). As above. */
START_TEST(nhwc_winograd_conv_kernels_match_the_interpreter) {
  const char *const files[] = {"tests/models/winograd_nhwc_convs.rx", NULL};
  ck_assert_int_eq(setenv("TVMJIT_WINOGRAD", "1", 1), 0);
  expect_kernels_bit_exact("NHWC Winograd convs, strict float mode", files, 5);
  relaxed_f32_tol = 1e-4;
  expect_kernels_within_tolerance("NHWC Winograd convs, default float mode", files[0], 5);
  relaxed_f32_tol = 1e-5;
  ck_assert_int_eq(unsetenv("TVMJIT_WINOGRAD"), 0);
}
END_TEST

/* float32 `got` within 1e-5 of `want` relative to want's largest magnitude (as
 * bench/models holds whole models to PyTorch): a conv's sums of hundreds of terms,
 * contracted into FMAs, differ from the plain loops' by a few ulps of their partial
 * sums, which is more than 1e-5 of an output near zero. Other dtypes: bit for bit. */
static bool within_scale(const void *got, const void *want, tj_dtype_t dt, size_t bytes) {
  if (!tj_dtype_eq(dt, TJ_F32)) return memcmp(got, want, bytes) == 0;
  const float *g = got, *w = want;
  size_t n = bytes / sizeof(float);
  double scale = 0, worst = 0;
  for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(w[i]));
  for (size_t i = 0; i < n; i++) {
    if (isnan(g[i]) != isnan(w[i])) return false;
    if (!isnan(w[i])) worst = fmax(worst, fabs((double)g[i] - w[i]));
  }
  return worst <= 1e-5 * fmax(scale, 1.0);
}

/* Runs f compiled with and without the CPU schedule (strict float, or the default
 * float mode when `relaxed`) on the same random inputs; true when every output bit
 * agrees (relaxed: within_scale). */
static bool scheduled_matches_plain_loops(const char *name, const tj_prim_func_t *f) {
  void *plain[MAX_PARAMS] = {0}, *sched[MAX_PARAMS] = {0};
  size_t bytes[MAX_PARAMS];
  for (int i = 0; i < f->n_params; i++) {
    int64_t n;
    ck_assert(tj_buffer_static_size(f->buffer_map[i], &n));
    bytes[i] = (size_t)n * tj_dtype_bytes(f->buffer_map[i]->dtype);
    plain[i] = tj_aligned_alloc(bytes[i] + 64);
    sched[i] = tj_aligned_alloc(bytes[i] + 64);
    ck_assert(plain[i] && sched[i]);
    fill_random(plain[i], f->buffer_map[i]->dtype, n);
    memcpy(sched[i], plain[i], bytes[i]);
  }
  tj_jit_kernel_t kp, ks;
  tj_jit_options_t po = {.opt_level = 2, .no_schedule = true}, so = {.opt_level = 2, .relaxed_float = relaxed};
  TU_OK(tj_jit_compile_prim_func(jit, f, name, &po, &kp));
  call_kernel(kp.fn, f->n_params, plain);
  TU_OK(tj_jit_compile_prim_func(jit, f, name, &so, &ks));
  call_kernel(ks.fn, f->n_params, sched);
  bool same = true;
  for (int i = 0; i < f->n_params; i++) {
    same &= relaxed ? within_scale(sched[i], plain[i], f->buffer_map[i]->dtype, bytes[i])
                    : memcmp(plain[i], sched[i], bytes[i]) == 0;
    tj_aligned_free(plain[i]);
    tj_aligned_free(sched[i]);
  }
  return same;
}

/* Every prim_func of the default pipeline's output for `file`, JIT-compiled with the
 * schedule and as plain loops: the same bits. Returns how many were compared. */
static int every_kernel_matches_plain_loops(const char *file) {
  ck_assert_ptr_null(tj_jit_create(&jit));
  char path[4096];
  tj_arena_t *arena = tj_arena_create();
  const tj_module_t *out = default_pipeline(arena, file, path, sizeof path);
  int checked = 0;
  for (int i = 0; i < out->n_funcs; i++) {
    if (!out->funcs[i].is_prim) continue;
    ck_assert_msg(scheduled_matches_plain_loops(out->funcs[i].name, out->funcs[i].prim), "%s differs",
                  out->funcs[i].name);
    checked++;
  }
  tj_arena_free(arena);
  tj_jit_free(jit);
  return checked;
}

/* Every 1x1 conv of tests/models/pointwise_kernels.rx, the one walking superblocks of
 * pixels (2->52 at 80x128, a 2.1 MB output) included. */
START_TEST(pointwise_conv_kernels_match_plain_loops) {
  ck_assert_int_eq(every_kernel_matches_plain_loops("tests/models/pointwise_kernels.rx"), 13);
}
END_TEST

/* tests/models/parallel_splits.rx: a 1x1 conv blocked over its input channels in two
 * groups of tiles, and a K-blocked 3x3/2 conv with its rows in two shares: the same bits as its plain loops (and, with TVMJIT_SLOW_TESTS=1, as
 * the interpreter: it is over the interpreter's work limit otherwise). */
START_TEST(parallel_split_kernels_match_plain_loops_and_the_interpreter) {
  ck_assert_int_eq(every_kernel_matches_plain_loops("tests/models/parallel_splits.rx"), 2);
  const char *slow = getenv("TVMJIT_SLOW_TESTS");
  if (slow && *slow == '1') {
    const char *const files[] = {"tests/models/parallel_splits.rx", NULL};
    expect_kernels_bit_exact("parallel splits", files, 2);
  }
}
END_TEST

/* tests/models/packed_matmul.rx: weights over 4 MB packed per call, one column panel
 * per parallel iteration (float32 and float16). */
START_TEST(packed_weight_matmuls_match_plain_loops) {
  ck_assert_int_eq(every_kernel_matches_plain_loops("tests/models/packed_matmul.rx"), 2);
}
END_TEST

/* tests/models/panel_matmul.rx: input weights copied per group of column panels, in K
 * blocks (K not a multiple of 512) with the 8 x 3 tile and the next group's rows
 * prefetched (K blocks of 384 and of 385, an odd prefetch split), and with odd M (3-row
 * tile). */
START_TEST(panel_group_matmuls_match_plain_loops) {
  ck_assert_int_eq(every_kernel_matches_plain_loops("tests/models/panel_matmul.rx"), 4);
}
END_TEST

/* tests/models/conv_k_blocks_14.rx: K-blocked convs with 13x13 and 14x14 outputs
 * (partial sums of 11 and 25 KB), stride 2 from an odd input and a residual add, and a
 * 1x1 stride-2 one with 512 KB of weights, the next block's weights prefetched. */
START_TEST(k_blocked_14x14_convs_match_plain_loops) {
  ck_assert_int_eq(every_kernel_matches_plain_loops("tests/models/conv_k_blocks_14.rx"), 3);
  /* the default float mode (rx unrolled in the stride-1 tile, FMA): within tolerance */
  relaxed = true;
  ck_assert_int_eq(every_kernel_matches_plain_loops("tests/models/conv_k_blocks_14.rx"), 3);
  relaxed = false;
}
END_TEST

/* A matmul + bias + gelu (tests/models/matmul_gelu.rx): gelu's diamond (x read twice)
 * fused into the matmul's write-back gives the bits of the kernel's plain loops, and
 * (erf being the JIT's own, not libm's) agrees with the interpreter within tolerance. */
START_TEST(a_matmul_with_a_fused_gelu_matches_plain_loops_and_the_interpreter) {
  ck_assert_int_eq(every_kernel_matches_plain_loops("tests/models/matmul_gelu.rx"), 3);
  ck_assert_ptr_null(tj_jit_create(&jit));
  tally_t t = {0};
  compare_pipeline_file("tests/models/matmul_gelu.rx", &t);
  report("matmul + gelu", &t);
  ck_assert_int_eq(t.failed, 0);
  ck_assert_int_eq(t.compared, 3);
  tj_jit_free(jit);
}
END_TEST

/* Depthwise convs and pools at odd sizes (tests/models/plane_windows.rx: strides 1 and
 * 2, a last vector overlapping the one before, widths under a vector, a 5x5 kernel, the
 * batch-norm and clip epilogue, max and average pools, stride 2 with the window's
 * columns shifted for aligned fills and the same padded after the input only): at 512 bits every kernel is
 * scheduled by the plane-window rule (schedule_depthwise.c); JIT-compiled with the
 * schedule each agrees bit for bit with its plain loops and (strict float) with the
 * interpreter; the two that divide (batch norm, average) are held to the interpreter
 * within a few ulps, as every division (differential.h). In the default float mode (FMA)
 * within tolerance. */
START_TEST(plane_window_kernels_match_plain_loops_and_the_interpreter) {
  const char *rel = "tests/models/plane_windows.rx";
  char path[4096];
  tj_arena_t *arena = tj_arena_create();
  const tj_module_t *out = default_pipeline(arena, rel, path, sizeof path);
  tj_tir_schedule_options_t o = {.enabled = true, .vector_bits = 512};
  int planes = 0, same = 0;
  ck_assert_ptr_null(tj_jit_create(&jit));
  for (int i = 0; i < out->n_funcs; i++) {
    if (!out->funcs[i].is_prim) continue;
    const tj_prim_func_t *g;
    tj_tir_schedule_stats_t st;
    TU_OK(tj_tir_schedule(arena, out->funcs[i].prim, out->funcs[i].name, &o, &g, &st));
    planes += st.plane_windows;
    same += scheduled_matches_plain_loops(out->funcs[i].name, out->funcs[i].prim);
  }
  tj_arena_free(arena);
  ck_assert_int_eq(planes, 11);
  ck_assert_int_eq(same, 11);
  tally_t t = {0};
  compare_pipeline_file(rel, &t);
  report("plane windows", &t);
  ck_assert_int_eq(t.failed, 0);
  ck_assert_int_eq(t.compared, 11);
  ck_assert_int_eq(t.exact, 9);
  tally_t r = {0};
  relaxed = true;
  compare_pipeline_file(rel, &r);
  relaxed = false;
  report("plane windows, default float mode", &r);
  ck_assert_int_eq(r.failed, 0);
  ck_assert_int_eq(r.compared, 11);
  tj_jit_free(jit);
}
END_TEST

static void project_models(void) {
  ck_assert_ptr_null(tj_jit_create(&jit));
  tally_t t = {0};
  char path[4096];
  const char *files[] = {"examples/seed/model.rx", "tests/models/relu_f16.rx", "tests/models/schedule_kernels.rx",
                         "tests/models/parallel_rows.rx"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", tu_source_dir(), files[i]);
    compare_file(path, &t, true);
  }
  report("project models", &t);
  ck_assert_int_eq(t.failed, 0);
  ck_assert_int_ge(t.compared, 2); /* relu and layer_norm at least; conv2d2 with TVMJIT_SLOW_TESTS */
  tj_jit_free(jit);
}

/* The float32 seed's layers with bfloat16 storage: the convs read bfloat16 through the
 * widened schedule (float32 copies of weights and padding) and round their output to
 * bfloat16; every kernel as the interpreter computes it (strict float mode). */
START_TEST(bfloat16_seed_kernels_match_the_interpreter) {
  ck_assert_ptr_null(tj_jit_create(&jit));
  tally_t t = {0};
  char path[4096];
  tj_arena_t *arena = tj_arena_create();
  const tj_module_t *out = run_pipeline(arena, "ToMixedPrecision(storage_dtype=\"bfloat16\"),default",
                                        "tests/models/seed_small_f32.rx", path, sizeof path);
  for (int i = 0; i < out->n_funcs; i++)
    if (out->funcs[i].is_prim) compare_function(arena, path, out->funcs[i].name, out->funcs[i].prim, &t);
  tj_arena_free(arena);
  report("bfloat16 seed", &t);
  ck_assert_int_eq(t.failed, 0);
  ck_assert_int_eq(t.skipped, 0);
  ck_assert_int_ge(t.exact, 3); /* the casts and the two convs; layer_norm's rsqrt is libm's: within tolerance */
  tj_jit_free(jit);
}
END_TEST

START_TEST(project_models_match_the_interpreter) { project_models(); }
END_TEST

/* The same functions with their innermost loops marked T.vectorized (and small loops
 * around them T.unroll): VectorizeLoop vectorizes what is legal, keeps the rest serial,
 * and the results stay bit-exact. */
START_TEST(project_models_vectorized_match_the_interpreter) {
  marking = true;
  project_models();
  printf("differential: %d loops marked vectorized, %d unrolled; %d functions got vector stores\n",
         marked_vectorized, marked_unrolled, funcs_with_vectors);
  ck_assert_int_ge(funcs_with_vectors, 2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("differential");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, project_models_match_the_interpreter);
  tcase_add_test(tc, bfloat16_seed_kernels_match_the_interpreter);
  tcase_add_test(tc, project_models_vectorized_match_the_interpreter);
  tcase_add_test(tc, nchw_conv_kernels_match_the_interpreter);
  tcase_add_test(tc, channel_tile_conv_kernels_match_the_interpreter);
  tcase_add_test(tc, copy_pad_conv_kernels_match_the_interpreter);
  tcase_add_test(tc, x_tile_conv_kernels_match_the_interpreter);
  tcase_add_test(tc, matmul_kernels_match_the_interpreter);
  tcase_add_test(tc, inlined_reshape_chains_match_the_interpreter);
  tcase_add_test(tc, panel_group_matmuls_match_plain_loops);
  tcase_add_test(tc, a_matmul_with_a_fused_gelu_matches_plain_loops_and_the_interpreter);
  tcase_add_test(tc, pointwise_conv_kernels_match_the_interpreter);
  tcase_add_test(tc, k_blocked_conv_kernels_match_the_interpreter);
  tcase_add_test(tc, plane_window_kernels_match_plain_loops_and_the_interpreter);
  tcase_add_test(tc, row_reductions_in_the_default_float_mode_match_the_interpreter);
  tcase_add_test(tc, short_row_layer_norms_match_the_interpreter);
  tcase_add_test(tc, short_row_layer_norms_match_the_interpreter_in_the_strict_mode);
  tcase_add_test(tc, short_row_statistics_load_their_terms_by_a_transpose);
  tcase_add_test(tc, global_pools_in_the_default_float_mode_match_the_interpreter);
  tcase_add_test(tc, parallel_split_kernels_match_plain_loops_and_the_interpreter);
  tcase_add_test(tc, winograd_conv_kernels_match_the_interpreter);
  tcase_add_test(tc, nhwc_winograd_conv_kernels_match_the_interpreter);
  tcase_add_test(tc, packed_weight_matmuls_match_plain_loops);
  tcase_add_test(tc, pointwise_conv_kernels_match_plain_loops);
  tcase_add_test(tc, k_blocked_14x14_convs_match_plain_loops);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
