/* The Winograd weight transform done once at load (prepack.h, winograd_m != 0): a
 * float32 [F, C, 3, 3] weight becomes U[fb, p, c, w] = (G w[fb * L + w, c] G^T)[p] (L =
 * lanes; 1 for transforms/tir/schedule_winograd.c, whose GEMMs broadcast U[f, p, c]
 * along the input channels, one output channel per row of the tile). Per
 * call it would cost the kernel a pass over the weight and a write of (m+2)^2 / 9 times
 * its size: for ResNet-18's 512-channel convs F(2x2) that is 16.8 MB. */
#include "runtime/prepack_winograd.h"

#include "support/winograd.h"

tj_status_t *tj_prepack_winograd_bytes(const tj_prepack_desc_t *d, size_t *out_bytes) {
  const tj_winograd_t *w = tj_winograd(d->winograd_m);
  if (!w || d->ndim != 4 || d->shape[2] != 3 || d->shape[3] != 3 || d->lanes < 1 || d->shape[0] % d->lanes ||
      !tj_dtype_eq(d->from, TJ_F32) || !tj_dtype_eq(d->to, TJ_F32))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "prepack: Winograd F(%dx%d, 3x3) of a rank-%d weight", d->winograd_m,
                         d->winograd_m, d->ndim);
  *out_bytes = (size_t)(w->alpha * w->alpha) * (size_t)d->shape[1] * (size_t)d->shape[0] * 4;
  return NULL;
}

void tj_prepack_winograd_shape(const tj_prepack_desc_t *d, int64_t *out_shape) {
  const tj_winograd_t *w = tj_winograd(d->winograd_m);
  out_shape[0] = d->shape[0] / d->lanes;
  out_shape[1] = w ? w->alpha * w->alpha : 0;
  out_shape[2] = d->shape[1];
  out_shape[3] = d->lanes;
}

void tj_prepack_winograd_run(const tj_prepack_desc_t *d, const float *weight, float *dst) {
  const tj_winograd_t *w = tj_winograd(d->winograd_m);
  int64_t F = d->shape[0], C = d->shape[1], P = w->alpha * w->alpha, L = d->lanes;
  float u[TJ_WINOGRAD_MAX_ALPHA * TJ_WINOGRAD_MAX_ALPHA];
  for (int64_t f = 0; f < F; f++)
    for (int64_t c = 0; c < C; c++) {
      tj_winograd_weight(w, weight + (f * C + c) * 9, u);
      for (int64_t p = 0; p < P; p++) dst[((f / L * P + p) * C + c) * L + f % L] = u[p];
    }
}
