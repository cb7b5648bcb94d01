#include "runtime/memory_plan.h"

#include <stdbool.h>
#include <stdlib.h>

#include "support/alloc.h"

static bool tj_memory_plan_overlap_in_time(const tj_memory_block_t *a, const tj_memory_block_t *b) {
  return a->first <= b->last && b->first <= a->last;
}

static int tj_memory_plan_cmp_offset(const void *pa, const void *pb) {
  const tj_memory_block_t *a = *(const tj_memory_block_t *const *)pa;
  const tj_memory_block_t *b = *(const tj_memory_block_t *const *)pb;
  return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* Best-fit offset for `blk` among the `n` live neighbours (sorted by offset). */
static size_t tj_memory_plan_best_offset(const tj_memory_block_t *blk, int n, const tj_memory_block_t **live) {
  size_t cursor = 0, best = (size_t)-1, best_gap = (size_t)-1;
  for (int i = 0; i < n; i++) {
    if (live[i]->offset > cursor) {
      size_t gap = live[i]->offset - cursor;
      if (gap >= blk->size && gap < best_gap) {
        best = cursor;
        best_gap = gap;
      }
    }
    size_t end = live[i]->offset + live[i]->size;
    if (end > cursor) cursor = end;
  }
  return best != (size_t)-1 ? best : cursor;
}

size_t tj_memory_plan_assign(int n, tj_memory_block_t *blocks) {
  if (n <= 0) return 0;
  int *order = tj_malloc(sizeof *order * (size_t)n);
  const tj_memory_block_t **live = tj_malloc(sizeof *live * (size_t)n);
  if (!order || !live) {
    tj_free(order);
    tj_free(live);
    return (size_t)-1;
  }
  for (int i = 0; i < n; i++) {
    order[i] = i;
    blocks[i].size = tj_memory_plan_round(blocks[i].size);
  }
  /* Placement order: larger first (hardest to fit), then earlier, then by index so the
   * plan is deterministic. Insertion sort: the lists are short and qsort takes no context. */
  for (int i = 1; i < n; i++) {
    int v = order[i], j = i;
    while (j > 0) {
      const tj_memory_block_t *a = &blocks[v], *b = &blocks[order[j - 1]];
      bool before = a->size != b->size ? a->size > b->size : a->first != b->first ? a->first < b->first : v < order[j - 1];
      if (!before) break;
      order[j] = order[j - 1];
      j--;
    }
    order[j] = v;
  }
  size_t total = 0;
  for (int k = 0; k < n; k++) {
    tj_memory_block_t *blk = &blocks[order[k]];
    int n_live = 0;
    for (int p = 0; p < k; p++) {
      const tj_memory_block_t *other = &blocks[order[p]];
      if (tj_memory_plan_overlap_in_time(blk, other)) live[n_live++] = other;
    }
    qsort(live, (size_t)n_live, sizeof *live, tj_memory_plan_cmp_offset);
    blk->offset = tj_memory_plan_best_offset(blk, n_live, live);
    if (blk->offset + blk->size > total) total = blk->offset + blk->size;
  }
  tj_free(order);
  tj_free(live);
  return total;
}
