/* Static memory planning: places buffers with known sizes and lifetimes in one arena so
 * that buffers whose lifetimes overlap never share bytes. Pure computation, no state. */
#ifndef TJ_RUNTIME_MEMORY_PLAN_H
#define TJ_RUNTIME_MEMORY_PLAN_H

#include <stddef.h>

#define TJ_MEMORY_PLAN_ALIGN 64

typedef struct tj_memory_block {
  size_t size;   /* bytes needed (rounded up to TJ_MEMORY_PLAN_ALIGN by the planner) */
  int first;     /* first step that uses the buffer */
  int last;      /* last step that uses it (inclusive) */
  size_t offset; /* out: byte offset in the arena, a multiple of TJ_MEMORY_PLAN_ALIGN */
} tj_memory_block_t;

/* Assigns every block's offset, greedy best-fit: largest blocks first, each into the
 * smallest gap left by the already placed blocks that are live at the same time, or
 * above them all. Returns the arena size, or (size_t)-1 if out of memory. */
size_t tj_memory_plan_assign(int n, tj_memory_block_t *blocks);

static inline size_t tj_memory_plan_round(size_t n) {
  return (n + TJ_MEMORY_PLAN_ALIGN - 1) & ~(size_t)(TJ_MEMORY_PLAN_ALIGN - 1);
}

#endif
