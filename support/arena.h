/* Bump-pointer arena for compile-time data (IR nodes, strings). Everything allocated
 * from an arena is freed at once by tj_arena_free; nothing is freed one by one.
 * Not thread-safe: one arena per compilation. Allocation failure returns NULL (the
 * arena then stays usable and records the failure, see tj_arena_failed). */
#ifndef TJ_SUPPORT_ARENA_H
#define TJ_SUPPORT_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tj_arena tj_arena_t;

tj_arena_t *tj_arena_create(void);
void tj_arena_free(tj_arena_t *arena);
/* Zero-filled, aligned to 16 bytes. */
void *tj_arena_alloc(tj_arena_t *arena, size_t size);
/* The same, not zeroed: for blocks the caller fills whole (FoldConstant's results, up
 * to 28 MB for BERT, were zeroed and then written; untouched, a large one can also be
 * backed by huge pages, see tj_advise_huge_pages). */
void *tj_arena_alloc_uninit(tj_arena_t *arena, size_t size);
#define TJ_ARENA_NEW(arena, type) ((type *)tj_arena_alloc((arena), sizeof(type)))
#define TJ_ARENA_ARRAY(arena, type, n) ((type *)tj_arena_alloc((arena), sizeof(type) * (size_t)(n)))
char *tj_arena_strdup(tj_arena_t *arena, const char *s);
char *tj_arena_strndup(tj_arena_t *arena, const char *s, size_t n);
char *tj_arena_printf(tj_arena_t *arena, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *tj_arena_memdup(tj_arena_t *arena, const void *p, size_t n);
/* True once any allocation from this arena has failed. */
bool tj_arena_failed(const tj_arena_t *arena);
size_t tj_arena_bytes_used(const tj_arena_t *arena);

#endif
