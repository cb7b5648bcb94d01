/* TIR-to-TIR lowering for the JIT: a sequence of small passes, each a plain function
 * from one PrimFunc to the next (the input is never modified; unchanged subtrees are
 * shared). A CPU schedule (loop order, tiling, vectorize, parallel) slots in between
 * the passes later without touching codegen.
 *
 *   ScheduleReductions  (a first CPU schedule step) a reduction block in a perfect
 *                   loop nest gets its init split into its own nest and the spatial loop
 *                   over the output's contiguous dimension moved innermost; each output
 *                   keeps its accumulation order, so results are bit-identical.
 *   LowerBlocks     every BlockRealize becomes its body: iter vars replaced by their
 *                   bound values, T.where as an `if`, T.init guarded by
 *                   `r0 == min0 && ...` over the reduce iter vars, alloc_buffers as
 *                   TJ_TIR_ALLOCATE around the block's statement.
 *   FlattenBuffers  every buffer becomes one-dimensional; indices become row-major
 *                   (or strided) int64 arithmetic.
 *   VectorizeLoop   a T.vectorized loop with constant extent L becomes its body with the
 *                   var replaced by Ramp(min, 1, L) and dependent expressions widened to
 *                   L lanes (vectorize_loop.c); where that is not valid it stays serial.
 *   UnrollLoop      a T.unroll loop with constant extent becomes copies of its body with
 *                   the var replaced by constants (unroll_loop.c).
 *
 * After tj_tir_lower the function has no blocks, every load/store has one int64 index,
 * and each buffer is either a parameter (buffer_map) or introduced by an ALLOCATE.
 * Integer FLOOR_DIV/FLOOR_MOD and `tir.if_then_else` keep their TIR meaning; codegen
 * implements them (floor semantics; only the chosen branch is evaluated). */
#ifndef TJ_TRANSFORMS_TIR_LOWER_H
#define TJ_TRANSFORMS_TIR_LOWER_H

#include <stdbool.h>

#include "ir/tir.h"
#include "support/status.h"
#include "transforms/tir/schedule.h"

/* Allocations at most this big with a static size live on the stack; larger or
 * symbolic ones on the heap (freed when the ALLOCATE's body ends). */
#define TJ_TIR_STACK_ALLOC_LIMIT (64 * 1024)

/* PrimFunc attr set by tj_tir_lower_scheduled when schedule->fp_contract: codegen lets
 * float32/float64 multiply and add contract into FMA (TVM's LLVM target default). It is
 * part of the kernel's canonical text, hence of every cache key. */
#define TJ_ATTR_FP_CONTRACT "tvmjit.fp_contract"

/* Widest vector VectorizeLoop makes; wider T.vectorized loops stay serial. */
#define TJ_TIR_MAX_VECTOR_LANES 64
/* Most statements UnrollLoop makes from one loop; bigger T.unroll loops stay serial. */
#define TJ_TIR_MAX_UNROLL_STMTS 4096

/* The pipeline: ScheduleReductions, LowerBlocks, SimplifyBounds, FlattenBuffers, VectorizeLoop,
 * UnrollLoop, then tj_tir_check_lowered.
 * `name` is used in messages only. Nodes are allocated in `arena`. */
tj_status_t *tj_tir_lower(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                          const tj_prim_func_t **out_lowered);
/* The same with the CPU schedule (schedule.h) first; schedule NULL or disabled = tj_tir_lower. */
tj_status_t *tj_tir_lower_scheduled(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                    const tj_tir_schedule_options_t *schedule, const tj_prim_func_t **out_lowered);

tj_status_t *tj_tir_schedule_reductions(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                        const tj_prim_func_t **out);
/* Top-level loop nests with a symbolic extent: the first loop not of extent 1 becomes
 * T.parallel when it is spatial and distinct iterations write distinct elements
 * (schedule_symbolic.c). Run after ScheduleReductions. */
tj_status_t *tj_tir_parallel_symbolic(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                      const tj_prim_func_t **out);
tj_status_t *tj_tir_lower_blocks(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                 const tj_prim_func_t **out);
/* Integer index arithmetic simplified with constant loop bounds: x // c and x % c whose x
 * stays within one multiple of c fold (simplify_bounds.c). Exact. Run after LowerBlocks. */
tj_status_t *tj_tir_simplify_bounds(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                    const tj_prim_func_t **out);
/* Kernels that test a loaded value in an if_then_else condition (TOPI's max pool
 * gradient) read out of bounds by design: their loads that cannot be proven in bounds
 * read 0 outside (guard_loads.c). Other kernels come back unchanged. */
tj_status_t *tj_tir_guard_loads(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                const tj_prim_func_t **out);
tj_status_t *tj_tir_flatten_buffers(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                    const tj_prim_func_t **out);
tj_status_t *tj_tir_vectorize_loops(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                    const tj_prim_func_t **out);
tj_status_t *tj_tir_unroll_loops(tj_arena_t *arena, const tj_prim_func_t *f, const char *name,
                                 const tj_prim_func_t **out);

/* Checks the lowered form described above; the status names the offending node. */
tj_status_t *tj_tir_check_lowered(const tj_prim_func_t *f, const char *name);

/* The placement policy for an ALLOCATE'd (flat) buffer: true = stack. */
bool tj_tir_alloc_on_stack(const tj_buffer_t *buffer);

#endif
