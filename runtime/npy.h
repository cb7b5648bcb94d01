/* NumPy .npy files (format versions 1.0, 2.0 and 3.0), read and written.
 *
 * Supported element types are the little-endian numbers tvmjit computes with:
 * <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1, C order, up to TJ_MAX_NDIM dims, and
 * bfloat16 as ml_dtypes saves it: descr '<V2' (also '|V2' and the name 'bfloat16' are
 * read), the raw 16-bit patterns; bfloat16 tensors are written as '<V2'.
 * Everything else (big-endian, Fortran order, object, structured, unknown dtypes) is
 * rejected with a message that names the file, says what is wrong and how to fix it.
 *
 * Error codes: TJ_ERR_IO for files that cannot be read or written and for malformed
 * files (bad magic, truncated data, lying header); TJ_ERR_INVALID_ARGUMENT for well-formed
 * files that hold something tvmjit does not take (dtype, order, rank). Messages start
 * with the file name, e.g.
 *   data.npy: Fortran-order arrays are not supported; save with np.ascontiguousarray(a)
 * All functions are thread-safe (no shared state). */
#ifndef TJ_RUNTIME_NPY_H
#define TJ_RUNTIME_NPY_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/tensor.h"
#include "support/status.h"

/* Reads the .npy file at `path` into a new tensor that owns its (64-byte aligned) data;
 * the caller frees it with tj_tensor_free. */
tj_status_t *tj_npy_load(const char *path, tj_tensor_t **out_tensor);

/* Same from `len` bytes in memory (not retained). `name` appears in messages, e.g.
 * "params.npz:weight1". */
tj_status_t *tj_npy_load_bytes(const void *data, size_t len, const char *name, tj_tensor_t **out_tensor);

/* Reads exactly `n` bytes into buf, or returns an error status naming the source. */
typedef tj_status_t *(*tj_npy_read_fn)(void *ctx, void *buf, size_t n);

/* Same from a stream of `total` bytes read through `read`: the data goes straight into
 * the tensor (no second copy of the file). Used for files and .npz members. */
tj_status_t *tj_npy_load_reader(tj_npy_read_fn read, void *ctx, size_t total, const char *name,
                                tj_tensor_t **out_tensor);

/* Serialises `t` in .npy format (version 1.0, header padded to 64 bytes) into a new
 * buffer the caller frees with tj_free. */
tj_status_t *tj_npy_encode(const tj_tensor_t *t, void **out_data, size_t *out_len);

/* Writes `t` to `path`. The bytes go to a temporary file in the same directory that is
 * renamed over `path` only once complete, so a failure never leaves a partial file
 * (the temporary file is removed). */
tj_status_t *tj_npy_save(const char *path, const tj_tensor_t *t);

/* The .npy descr ("<f2", "|b1", ...) of a dtype, or NULL when .npy cannot hold it. */
const char *tj_npy_descr(tj_dtype_t dtype);

/* Writes `len` bytes to `path` through a temporary file in the same directory and a
 * rename (shared by the .npy and .npz writers). */
tj_status_t *tj_npy_write_file_atomic(const char *path, const void *data, size_t len);

#endif
