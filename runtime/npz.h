/* NumPy .npz archives (zip files of .npy members, stored or deflated) through libzip.
 *
 * A loaded archive owns one tensor per member, named like numpy's keys: the member name
 * without its ".npy" suffix. Error codes as in runtime/npy.h; a missing key is
 * TJ_ERR_NOT_FOUND and its message lists the keys present:
 *   params.npz: no array named 'weight4'; the archive holds: weight1, weight2, gamma
 * A loaded archive is immutable and may be read from several threads. */
#ifndef TJ_RUNTIME_NPZ_H
#define TJ_RUNTIME_NPZ_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/tensor.h"
#include "support/status.h"

typedef struct tj_npz tj_npz_t;

/* Loads every member of the archive at `path`; free with tj_npz_free. */
tj_status_t *tj_npz_load(const char *path, tj_npz_t **out_npz);
/* Same from `len` bytes in memory (copied as needed, not retained); `name` is used in
 * messages. */
tj_status_t *tj_npz_load_bytes(const void *data, size_t len, const char *name, tj_npz_t **out_npz);
void tj_npz_free(tj_npz_t *npz);

/* Members in archive order. */
int tj_npz_count(const tj_npz_t *npz);
const char *tj_npz_name(const tj_npz_t *npz, int i);
const tj_tensor_t *tj_npz_tensor(const tj_npz_t *npz, int i);
/* The tensor named `key`, or NULL. */
const tj_tensor_t *tj_npz_find(const tj_npz_t *npz, const char *key);
/* The tensor named `key`, or TJ_ERR_NOT_FOUND listing the keys present. The tensor stays
 * owned by the archive. */
tj_status_t *tj_npz_get(const tj_npz_t *npz, const char *key, const tj_tensor_t **out_tensor);
/* Moves member i's tensor to the caller (who frees it with tj_tensor_free); the archive
 * keeps the name and answers NULL for it afterwards. */
tj_tensor_t *tj_npz_take(tj_npz_t *npz, int i);

/* Writes `n` tensors as members "<names[i]>.npy" (like np.savez, or np.savez_compressed
 * when `compress`) to a temporary file in the same directory, renamed into place when
 * complete. Names must be unique, non-empty and contain no '/'. */
tj_status_t *tj_npz_save(const char *path, int n, const char *const *names, const tj_tensor_t *const *tensors,
                         bool compress);

#endif
