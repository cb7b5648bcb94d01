/* The one hash map of the tree: open addressing with linear probing, keys compared by
 * identity (pointer maps: IR nodes) or by content (string maps). Keys are not copied:
 * a key must live as long as the map. NULL keys are not stored.
 *
 * Storage comes from `arena` when set (never freed one by one) or from the heap
 * (tj_map_free releases it). Growth goes through the allocation hook; tj_map_put
 * returns false when out of memory and leaves the map as it was.
 *
 *   tj_map_t m = TJ_PTR_MAP(arena);        tj_map_t names = TJ_STR_MAP(NULL);
 *   if (!tj_map_put(&m, var, value)) ...  v = tj_map_get(&m, var);   tj_map_free(&names); */
#ifndef TJ_SUPPORT_MAP_H
#define TJ_SUPPORT_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include "support/arena.h"

typedef struct tj_map {
  const void **keys; /* NULL = empty slot */
  void **values;
  size_t cap, n;     /* cap is 0 or a power of two */
  tj_arena_t *arena; /* NULL: heap */
  bool str_keys;     /* keys are NUL-terminated strings compared with strcmp */
} tj_map_t;

#define TJ_PTR_MAP(arena_) ((tj_map_t){.arena = (arena_)})
#define TJ_STR_MAP(arena_) ((tj_map_t){.arena = (arena_), .str_keys = true})

/* Inserts or replaces; false when out of memory (or key NULL). */
bool tj_map_put(tj_map_t *m, const void *key, void *value);
/* The value, or NULL when absent (use tj_map_find when NULL is a stored value). */
void *tj_map_get(const tj_map_t *m, const void *key);
bool tj_map_find(const tj_map_t *m, const void *key, void **out_value);
/* Removes the key if present; returns whether it was. */
bool tj_map_remove(tj_map_t *m, const void *key);
/* Iteration in slot order (not insertion order): size_t it = 0; while
 * (tj_map_next(&m, &it, &k, &v)) ...  Either output may be NULL. */
bool tj_map_next(const tj_map_t *m, size_t *it, const void **out_key, void **out_value);
/* Heap maps release their storage; both kinds become empty and reusable. */
void tj_map_free(tj_map_t *m);

#endif
