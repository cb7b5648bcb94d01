/* Tensors: dtype, shape and 64-byte aligned data that the tensor either owns or
 * borrows from the caller. Not thread-safe to mutate; safe to read from many threads. */
#ifndef TJ_RUNTIME_TENSOR_H
#define TJ_RUNTIME_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/dtype.h"
#include "support/status.h"

#define TJ_MAX_NDIM 8

typedef struct tj_tensor {
  tj_dtype_t dtype;
  int ndim;
  int64_t shape[TJ_MAX_NDIM];
  void *data;
  bool owns_data;
} tj_tensor_t;

/* A new zero-filled tensor that owns 64-byte aligned storage. */
tj_status_t *tj_tensor_new(tj_dtype_t dtype, int ndim, const int64_t *shape, tj_tensor_t **out_tensor);
/* The same without the zero fill, for storage that is written before it is read (the
 * outputs of a run: zeroing the seed's 1 MiB output took 35 us of a 1.5 ms call). */
tj_status_t *tj_tensor_new_uninit(tj_dtype_t dtype, int ndim, const int64_t *shape, tj_tensor_t **out_tensor);
/* A tensor that borrows `data` (caller keeps ownership and must keep it alive). */
tj_status_t *tj_tensor_wrap(tj_dtype_t dtype, int ndim, const int64_t *shape, void *data,
                            tj_tensor_t **out_tensor);
void tj_tensor_free(tj_tensor_t *t);
/* The same, with owned data given back to the system, not kept in the allocator's cache
 * of large blocks (support/alloc.h): for data freed for good, such as a weight once packed. */
void tj_tensor_free_uncached(tj_tensor_t *t);
int64_t tj_tensor_numel(const tj_tensor_t *t);
size_t tj_tensor_nbytes(const tj_tensor_t *t);
/* "float16[16, 32, 32, 16]" into buf. */
const char *tj_tensor_type_str(tj_dtype_t dtype, int ndim, const int64_t *shape, char *buf, size_t len);
/* Element i converted to double (any supported dtype). */
double tj_tensor_get_f64(const tj_tensor_t *t, int64_t i);
void tj_tensor_set_f64(tj_tensor_t *t, int64_t i, double v);

#endif
