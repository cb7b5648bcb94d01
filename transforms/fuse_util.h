/* Small arena-backed containers used by the fusion passes: a growable pointer vector
 * and a pointer-keyed hash map (keys compared by identity, as IR nodes are). Both
 * allocate from an arena, so nothing is freed one by one; an allocation failure is
 * reported by the push/put call returning false. */
#ifndef TJ_TRANSFORMS_FUSE_UTIL_H
#define TJ_TRANSFORMS_FUSE_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "support/arena.h"

typedef struct tj_ptr_vec {
  const void **items;
  int n, cap;
} tj_ptr_vec_t;

bool tj_ptr_vec_push(tj_arena_t *a, tj_ptr_vec_t *v, const void *item);
int tj_ptr_vec_find(const tj_ptr_vec_t *v, const void *item); /* index or -1 */

typedef struct tj_ptr_map {
  const void **keys;
  void **values;
  size_t cap, n; /* cap is a power of two (0 = empty) */
} tj_ptr_map_t;

bool tj_ptr_map_put(tj_arena_t *a, tj_ptr_map_t *m, const void *key, void *value);
/* NULL when absent (store non-NULL values only). */
void *tj_ptr_map_get(const tj_ptr_map_t *m, const void *key);

#endif
