/* Constant weights packed once, when a model is loaded, for kernels that read them in a
 * blocked layout (transforms/tir/schedule_prepack.c describes the layout; the JIT's
 * compile driver fills the description from it). Without this each such kernel made the
 * same copy on every call. */
#ifndef TJ_RUNTIME_PREPACK_H
#define TJ_RUNTIME_PREPACK_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/tensor.h"
#include "support/dtype.h"
#include "support/status.h"

/* packed[fv, j0, ..., j{n-2}, fi] = (to) weight[idx], idx[perm[q]] = jq for q < n-1 and
 * idx[perm[n-1]] = fv * lanes + fi; weight is dense, row-major, of `shape`. */
typedef struct tj_prepack_desc {
  int ndim;
  int64_t shape[TJ_MAX_NDIM];
  int perm[TJ_MAX_NDIM];
  int64_t lanes;
  tj_dtype_t from, to; /* equal, or float16 -> float32 */
  /* 2 or 4: instead of the copy, the Winograd F(m x m, 3x3) weight transform of a float32
   * [F, C, 3, 3] weight: packed[fb, p, c, w] = (G weight[fb * lanes + w, c] G^T)[p] for
   * the (m + 2)^2 positions p (support/winograd.h). perm {0, 1, 2, 3} for such a weight
   * (OIHW), {0, 3, 1, 2} for an OHWI one ([F, 3, 3, C]); no other. */
  int winograd_m;
} tj_prepack_desc_t;

/* The packed tensor's bytes; an error when the description is not one this file packs
 * (lanes not dividing the vector dim, a perm that is not one, another conversion). */
tj_status_t *tj_prepack_bytes(const tj_prepack_desc_t *d, size_t *out_bytes);
/* The packed tensor's rank: ndim + 1 for a copy, 4 for a Winograd transform. */
int tj_prepack_ndim(const tj_prepack_desc_t *d);
/* The packed tensor's shape (tj_prepack_ndim dims) into out_shape. */
void tj_prepack_shape(const tj_prepack_desc_t *d, int64_t *out_shape);
/* Writes the packed weight into dst (tj_prepack_bytes of it). Thread-safe. */
tj_status_t *tj_prepack_run(const tj_prepack_desc_t *d, const void *weight, void *dst);
/* The same in parts that threads may write at once: the packed tensor's outermost
 * blocks (a Winograd weight's output channels), tj_prepack_parts of them (1 for the
 * element by element layouts). Parts [begin, end) of dst only; any split writes the
 * same bytes. A run counts once (tj_prepack_runs), in the call with begin 0. */
int64_t tj_prepack_parts(const tj_prepack_desc_t *d);
tj_status_t *tj_prepack_run_parts(const tj_prepack_desc_t *d, const void *weight, void *dst, int64_t begin,
                                  int64_t end);
/* How many weights tj_prepack_run packed in this process (tests: once at load, never
 * per call). */
long tj_prepack_runs(void);

#endif
