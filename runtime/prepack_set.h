/* The constant weights of one executable that its kernels read packed (prepack.h), each
 * packed once per distinct constant and layout when the executable is made, and the
 * constants nothing reads but through those copies (the executable then keeps no copy
 * of its own). The JIT's compile driver describes the calls; this file packs. */
#ifndef TJ_RUNTIME_PREPACK_SET_H
#define TJ_RUNTIME_PREPACK_SET_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/executable.h"
#include "runtime/prepack.h"
#include "support/arena.h"
#include "support/status.h"

/* One weight a call's kernel reads packed: the call's argument `arg`, laid out as
 * prepack.h describes with `perm` (the weight's rank entries), `lanes` and `to`. */
typedef struct tj_packed_read {
  int arg;
  int perm[TJ_MAX_NDIM];
  int64_t lanes;
  tj_dtype_t to;
  int winograd_m; /* 0, or the Winograd transform of prepack.h */
  bool source_unread; /* the kernel reads only the packed copy, never the weight */
} tj_packed_read_t;

/* A call as the packer sees it. */
typedef struct tj_packed_call {
  const char *binding, *kernel; /* for messages */
  int n_args;
  const int *args;              /* value indices into the `values` given to the build */
  int n_reads;
  const tj_packed_read_t *reads;
} tj_packed_call_t;

typedef struct tj_prepack_set {
  int n_calls;
  int **value_of_read;         /* per call and read: the packed weight's value id in exe */
  const void **unread_source;  /* per value: the packed data to pass for it, or NULL */
} tj_prepack_set_t;

/* Told of each constant's data nothing reads any more once its packed copies are made
 * (every read of every value with that data is a packed read of a source_unread kernel),
 * right after its last copy is written; it may free the data. `reuse`: a weight packed
 * later fits in its block (support/alloc.h's cache serves a request from a block of 1
 * to 2 times its size), so it is worth keeping in the allocator's cache rather than
 * giving it back to the system. */
typedef struct tj_prepack_release {
  void (*fn)(void *ctx, const void *data, bool reuse);
  void *ctx;
} tj_prepack_release_t;

/* Packs what `calls` read packed into `exe` (one constant value each, owned by exe).
 * values[v] describes value v (the read ones must be constants with data); other_uses
 * (may be NULL) counts reads of value v outside the calls (outputs that copy it): a
 * constant is "unread" only when every read of it is a packed read of a source_unread
 * kernel. `release` (may be NULL) is told of the sources nothing else reads once they
 * are packed. Arrays in *out live in `arena`. */
tj_status_t *tj_prepack_set_build(tj_arena_t *arena, int n_calls, const tj_packed_call_t *calls, int n_values,
                                  const tj_value_desc_t *values, const int *other_uses, tj_executable_t *exe,
                                  const tj_prepack_release_t *release, tj_prepack_set_t *out);

#endif
