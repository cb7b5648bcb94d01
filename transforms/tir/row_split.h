/* Row-independent kernels. Many kernels with a symbolic dim n compute each index along
 * n on its own: a dense layer over (1, s, 768) rows, an elementwise op, layer_norm over
 * the last axis, a conv over batch n. Such a kernel over n rows is the same as running it
 * over consecutive runs of rows, so the JIT compiles it at a few fixed row counts with
 * every static schedule (tiling, vectors, parallel loops) and the executor covers any n
 * with calls at offsets: one compile serves every n at the speed of static shapes.
 *
 * tj_tir_rows_independent is the proof obligation, checked on the PrimFunc before
 * lowering: every buffer with n has it in one dim, only 1s before it (a run of rows is
 * contiguous) and constants elsewhere; every loop over n binds only spatial block iters
 * over n; those iters index only that dim of such buffers (alone, or plus a block iter
 * over [0, 1), which is 0), which nothing else indexes;
 * a block over rows writes only buffers with rows; n appears nowhere else (no reduction
 * over n, no n in an expression). Then row r of every result reads only row r of every
 * row buffer and all of the others. */
#ifndef TJ_TRANSFORMS_TIR_ROW_SPLIT_H
#define TJ_TRANSFORMS_TIR_ROW_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/tir.h"
#include "support/arena.h"
#include "support/status.h"

/* True when f (whose buffers use the shape var n, not a parameter) computes every row
 * along n independently, as above. f has no scalar parameters. */
bool tj_tir_rows_independent(const tj_prim_func_t *f, const tj_tir_expr_t *n);

/* Loop iterations of f per row along n: the product of the constant extents of each
 * nest (loops over n count 1), summed over the nests; saturates at INT64_MAX / 2. For
 * choosing chunk sizes, not for correctness. */
int64_t tj_tir_row_work(const tj_prim_func_t *f, const tj_tir_expr_t *n);

/* f at n = rows, starting `row_offset` rows into every parameter that has n: a static
 * PrimFunc with one more parameter, the int64 row_offset, after f's. */
tj_status_t *tj_tir_row_chunk(tj_arena_t *arena, const tj_prim_func_t *f, const tj_tir_expr_t *n, int64_t rows,
                              const tj_prim_func_t **out);

#endif
