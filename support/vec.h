/* The one growable array of the tree. TJ_VEC(T) is a struct {T *items; int n, cap;
 * tj_arena_t *arena}: with an arena the storage comes from it and is never freed one
 * by one (IR passes); with arena NULL it comes from the heap (tj_realloc) and
 * tj_vec_free releases it. A zeroed vector is empty and heap-backed.
 *
 * Growth goes through the allocation hook, so failure is injectable: tj_vec_push and
 * tj_vec_reserve return false when out of memory and leave the vector as it was. */
#ifndef TJ_SUPPORT_VEC_H
#define TJ_SUPPORT_VEC_H

#include <stdbool.h>
#include <stddef.h>

#include "support/arena.h"

#define TJ_VEC(type)     \
  struct {               \
    type *items;         \
    int n, cap;          \
    tj_arena_t *arena;   \
  }

/* The common case: a vector of pointers (IR nodes compared by identity). */
typedef TJ_VEC(const void *) tj_ptr_vec_t;

/* Internal: returns storage for at least `need` elements holding the first `n` of
 * `items`, or `items` unchanged (and *cap untouched) when out of memory. */
void *tj_vec_grow_(const void *items, int n, int *cap, int need, size_t elem, tj_arena_t *arena);
void tj_vec_free_(const void *items, tj_arena_t *arena);

/* Room for k more elements; false when out of memory. */
#define tj_vec_reserve(v, k)                                                                          \
  ((v)->n + (k) <= (v)->cap ||                                                                         \
   ((v)->items = tj_vec_grow_((v)->items, (v)->n, &(v)->cap, (v)->n + (k), sizeof *(v)->items, (v)->arena), \
    (v)->n + (k) <= (v)->cap))
/* Appends x; false when out of memory (the vector is unchanged). */
#define tj_vec_push(v, x) (tj_vec_reserve((v), 1) ? ((v)->items[(v)->n++] = (x), true) : false)
#define tj_vec_clear(v) ((v)->n = 0)
/* Heap vectors release their storage; arena vectors just become empty. */
#define tj_vec_free(v) (tj_vec_free_((v)->items, (v)->arena), (v)->items = NULL, (v)->n = (v)->cap = 0)

/* Index of the first element equal to p in a pointer vector, or -1. */
int tj_ptr_vec_find(const tj_ptr_vec_t *v, const void *p);
/* Appends p unless already present; false only when out of memory. */
bool tj_ptr_vec_add_unique(tj_ptr_vec_t *v, const void *p);
/* Removes the element at index i, keeping the order of the rest. */
void tj_ptr_vec_remove_at(tj_ptr_vec_t *v, int i);

#endif
