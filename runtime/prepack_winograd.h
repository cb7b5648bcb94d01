/* The Winograd weight transform of prepack.h (winograd_m != 0). Internal to prepack.c. */
#ifndef TJ_RUNTIME_PREPACK_WINOGRAD_H
#define TJ_RUNTIME_PREPACK_WINOGRAD_H

#include "runtime/prepack.h"

/* Checks the description (a float32 [F, C, 3, 3] weight, m = 2 or 4) and sizes U. */
tj_status_t *tj_prepack_winograd_bytes(const tj_prepack_desc_t *d, size_t *out_bytes);
/* [F / lanes, (m + 2)^2, C, lanes] */
void tj_prepack_winograd_shape(const tj_prepack_desc_t *d, int64_t *out_shape);
/* dst[fb, p, c, w] = (G weight[fb * lanes + w, c] G^T)[p] for the output channels
 * fb * lanes + w in [begin, end); the description checked by _bytes. */
void tj_prepack_winograd_run(const tj_prepack_desc_t *d, const float *weight, float *dst, int64_t begin, int64_t end);

#endif
