/* Schedule: a rule-based CPU schedule for one PrimFunc, the first step of tj_tir_lower
 * when enabled (lower.h). It rewrites the statements of the root block, each a loop
 * nest over one block as LegalizeOps and FuseTIR write them, into plain loops marked
 * parallel / vectorized / unrolled with local buffers. Rules, tried in this order on
 * each nest (one file each):
 *
 *   global pool (schedule_global_pool.c)  with reorder_reductions, a reduction over the
 *                                whole of an input's last two dims (adaptive_avg_pool2d to
 *                                1x1, mean over H, W): each plane's contiguous row reduced
 *                                in vector partial results, its elementwise stages fused.
 *   rows (schedule_row_fusion.c)  consecutive nests over the same rows with a row
 *                                reduction among them (softmax, layer_norm), every
 *                                written buffer accessed at its own row: one parallel loop
 *                                over the rows, each nest at one row through the
 *                                injective or row reduction rule, intermediates that only
 *                                the group uses shrunk to one row per row.
 *   full reduction (schedule_full_reduction.c)  a reduction to one element (R.sum(x)):
 *                                P parallel chunks of V-lane partial results over a flat
 *                                view of the input, combined in order at the end.
 *   column reduction (schedule_column_reduction.c)  reduce loops over leading dims, the
 *                                innermost spatial dim last in every access: V outputs
 *                                reduced together as one vector, reduce loops outside it.
 *   conv (schedule_conv.c)       a reduction C[s...] = f(C[s...], ...) over spatial
 *                                vars s: register tile of several outputs along C's
 *                                second-to-last dim x one vector along its last dim in
 *                                a local accumulator, reduction loops outside the tile in
 *                                their original order, read-only weights repacked so
 *                                the vector dim is contiguous, the following elementwise
 *                                nests (relu, cast, bias add) fused into the write-back;
 *                                the padding computed per block of output rows into a
 *                                local window (schedule_window.c); without native
 *                                float16 (native_f16), float16 inputs read as float32
 *                                copies and float16 arithmetic done in float32 with a
 *                                rounding after each operation (bit-identical, fewer
 *                                conversions).
 *   injective (schedule_injective.c)  a spatial block: outer loops fused and parallel,
 *                                innermost loop vectorized; following elementwise nests
 *                                that read only its result are fused in. A nest that
 *                                reads an input transposed runs in tiles of 16 x 16
 *                                outputs, so each cache line read serves 16 rows.
 *   row reduction (schedule_row_reduction.c)  reduce loops innermost: spatial loops fused
 *                                and parallel, each row reduced in place.
 *
 * Every output element is computed by the same operations in the same order as in the
 * original function (reductions start from the init value and take their terms in the
 * original loop order), so results are bit-identical; only the order across
 * independent elements changes. Three exceptions: reorder_reductions lets a
 * float32/float64 conv take its terms in another order and a row reduction (or a global
 * pool) take them in
 * vector partial results (schedule_row_vector.c), and a full reduction combines
 * partial results (float sums round differently, within float tolerance). A nest no rule matches
 * stays as it is. */
#ifndef TJ_TRANSFORMS_TIR_SCHEDULE_H
#define TJ_TRANSFORMS_TIR_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/tir.h"
#include "support/status.h"

typedef struct tj_tir_schedule_options {
  bool enabled;     /* false: tj_tir_schedule returns the function unchanged */
  int vector_bits;  /* SIMD register width: 512 (AVX-512), 256 (AVX2), 128; 0 = 128 */
  int conv_tile;    /* outputs per register tile along the tiled dim; 0 = default (16 with
                       512-bit vectors, else 8) */
  /* Width of the host's floating-point units: 256 where a 512-bit vector op runs as two
   * 256-bit halves (AMD Zen 4: one 512-bit FMA per cycle, Ice Lake's two 512-bit ports
   * do two); 0 = vector_bits (full width). Tiles whose lanes are partly idle cost in
   * proportion there (schedule_pointwise.c). */
  int datapath_bits;
  bool fp_contract; /* mark the lowered function TJ_ATTR_FP_CONTRACT (see lower.h) */
  /* A float32/float64 conv may take its reduction terms in another order (within
   * rounding of the IR's order, as TVM's schedules reorder reduction loops): the
   * reduction that slides along the register tile (rx in x + rx) goes innermost, so
   * each input value loaded serves up to K outputs of the tile. Never for float16. */
  bool reorder_reductions;
  /* With reorder_reductions: 3x3 stride-1 NCHW float32 convs by Winograd's F(m x m, 3x3)
   * (schedule_winograd.c), exact in real arithmetic only. Off unless asked for
   * (TVMJIT_WINOGRAD=1): on the Ice Lake host it measured no faster than the direct
   * tile in ResNet-18 yet (docs/cpu-schedule.md). */
  bool winograd;
  /* The host computes float16 vectors natively (AVX512-FP16): a float16 conv keeps its
   * float16 arithmetic (twice the lanes, no conversions) instead of being widened. */
  bool native_f16;
  /* The host has AVX512-BF16 and the float mode allows reordered sums: a conv or matmul
   * summing bfloat16 products into float32 takes its reduction in pairs, one
   * tir.tvmjit.bf16_dot2 (vdpbf16ps) per pair (schedule_conv.c; docs/numerics.md). */
  bool bf16_dot;
  /* Bit p: parameter p is a constant of the model at every call (a bound weight), so its
   * caller can pack it once, at load. With `prepacked` set, a conv or matmul that would
   * repack such a weight on every call reads it packed from a new buffer parameter
   * instead, described in *prepacked (see tj_tir_prepack_t). */
  uint64_t constant_params;
  struct tj_tir_prepacks *prepacked; /* out; NULL: every repack stays in the kernel */
} tj_tir_schedule_options_t;

/* A weight the caller packs: the kernel's buffer parameter `packed_param` holds
 * param `param` (a read-only [d0, ..., d{n-1}] weight) as
 *   packed[fv, j0, ..., j{n-2}, fi] = weight[idx],  idx[perm[q]] = jq (q < n-1),
 *                                                    idx[perm[n-1]] = fv * lanes + fi,
 * converted to `dtype` (the weight's own, or float32 for a float16 weight). */
enum { TJ_TIR_MAX_PREPACKS = 8, TJ_TIR_PREPACK_MAX_DIMS = 8 };
typedef struct tj_tir_prepack {
  int param, packed_param;
  int ndim; /* of the weight */
  int perm[TJ_TIR_PREPACK_MAX_DIMS];
  int64_t lanes;
  tj_dtype_t dtype;
  /* 0: the permuting copy above. 2 or 4: the Winograd F(m x m, 3x3) weight transform of
   * a float32 [F, C, 3, 3] weight, packed[fb, p, c, w] = (G weight[fb * lanes + w, c]
   * G^T)[p] over the (m + 2)^2 positions p (schedule_winograd.c; perm unused). */
  int winograd_m;
  /* Nothing in the kernel reads the weight itself any more: its caller need not keep it. */
  bool source_unread;
} tj_tir_prepack_t;
typedef struct tj_tir_prepacks {
  int n;
  tj_tir_prepack_t items[TJ_TIR_MAX_PREPACKS];
} tj_tir_prepacks_t;

/* Statistics for tests: how many nests each rule rewrote. */
typedef struct tj_tir_schedule_stats {
  int conv, injective, reduction, fused_epilogues, repacked;
  int widened;  /* convs computing float16 values in float32 registers */
  int windowed; /* convs computing their padded input per output row */
  int reordered; /* convs whose reduction loops were reordered (reorder_reductions) */
  int transpose_tiles; /* injective nests run in tiles because they read an input transposed */
  int inlined;         /* copying nests (reshape, transpose) substituted into the nest reading them */
  int moved;           /* small nests run as plain loops before a producer whose epilogue they split */
  int row_groups;      /* runs of nests over the same rows run row by row (schedule_row_fusion.c) */
  int pointwise;       /* 1x1 convs tiled as GEMMs along the flattened pixels (schedule_pointwise.c) */
  int plane_windows;   /* depthwise convs and pools walked plane by plane (schedule_depthwise.c) */
  int global_pools;    /* reductions over whole planes, each plane's row in vectors (schedule_global_pool.c) */
  int winograd;        /* 3x3 convs computed by Winograd transforms (schedule_winograd.c) */
} tj_tir_schedule_stats_t;

/* Schedules `f` (never modified; the result shares unchanged nodes). `stats` may be NULL. */
tj_status_t *tj_tir_schedule(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                             const tj_tir_schedule_options_t *opts, const tj_prim_func_t **out,
                             tj_tir_schedule_stats_t *stats);

#endif
