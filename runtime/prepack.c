/* Packing one constant weight (prepack.h). A plain copy in the packed order: the
 * destination is written contiguously and each source row is read in runs of `lanes`
 * elements of one stride. BERT's 768x3072 FFN weight (9.4 MB) packs in a few ms, once. */
#include "runtime/prepack.h"

#include "runtime/prepack_winograd.h"

#include <stdatomic.h>
#include <string.h>

static atomic_long runs;

long tj_prepack_runs(void) { return atomic_load(&runs); }

tj_status_t *tj_prepack_bytes(const tj_prepack_desc_t *d, size_t *out_bytes) {
  if (d->winograd_m) return tj_prepack_winograd_bytes(d, out_bytes);
  bool seen[TJ_MAX_NDIM] = {0};
  if (d->ndim < 1 || d->ndim >= TJ_MAX_NDIM || d->lanes < 1)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "prepack: rank %d, %lld lanes", d->ndim, (long long)d->lanes);
  for (int i = 0; i < d->ndim; i++) {
    if (d->perm[i] < 0 || d->perm[i] >= d->ndim || seen[d->perm[i]])
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "prepack: the dim order is not a permutation");
    seen[d->perm[i]] = true;
  }
  int64_t f = d->shape[d->perm[d->ndim - 1]];
  if (f % d->lanes)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "prepack: %lld lanes do not divide the vector dim (%lld)",
                         (long long)d->lanes, (long long)f);
  bool widen = d->from.code == TJ_DT_FLOAT && d->from.bits == 16 && d->to.code == TJ_DT_FLOAT && d->to.bits == 32;
  if (d->from.lanes != 1 || d->to.lanes != 1 || (!tj_dtype_eq(d->from, d->to) && !widen))
    return tj_status_new(TJ_ERR_UNSUPPORTED, "prepack: converting between these dtypes is not supported");
  size_t n = tj_dtype_bytes(d->to);
  for (int i = 0; i < d->ndim; i++) n *= (size_t)d->shape[i];
  *out_bytes = n;
  return NULL;
}

int tj_prepack_ndim(const tj_prepack_desc_t *d) { return d->winograd_m ? 4 : d->ndim + 1; }

void tj_prepack_shape(const tj_prepack_desc_t *d, int64_t *out_shape) {
  if (d->winograd_m) return tj_prepack_winograd_shape(d, out_shape);
  int n = d->ndim;
  out_shape[0] = d->shape[d->perm[n - 1]] / d->lanes;
  for (int q = 0; q + 1 < n; q++) out_shape[1 + q] = d->shape[d->perm[q]];
  out_shape[n] = d->lanes;
}

tj_status_t *tj_prepack_run(const tj_prepack_desc_t *d, const void *weight, void *dst) {
  size_t bytes;
  TJ_RETURN_IF_ERROR(tj_prepack_bytes(d, &bytes));
  atomic_fetch_add(&runs, 1);
  if (d->winograd_m) return tj_prepack_winograd_run(d, weight, dst), NULL;
  int n = d->ndim;
  int64_t stride[TJ_MAX_NDIM], ext[TJ_MAX_NDIM + 1], st[TJ_MAX_NDIM + 1], idx[TJ_MAX_NDIM + 1] = {0};
  stride[n - 1] = 1;
  for (int i = n - 2; i >= 0; i--) stride[i] = stride[i + 1] * d->shape[i + 1];
  /* the outer loops of the packed order, fv then j0..j{n-2}, and their source strides */
  int64_t vstride = stride[d->perm[n - 1]];
  ext[0] = d->shape[d->perm[n - 1]] / d->lanes;
  st[0] = vstride * d->lanes;
  for (int q = 0; q + 1 < n; q++) ext[1 + q] = d->shape[d->perm[q]], st[1 + q] = stride[d->perm[q]];
  size_t in_bytes = tj_dtype_bytes(d->from), out_bytes = tj_dtype_bytes(d->to);
  bool widen = !tj_dtype_eq(d->from, d->to);
  const unsigned char *src = weight;
  unsigned char *out = dst;
  size_t rows = bytes / out_bytes / (size_t)d->lanes;
  for (size_t r = 0; r < rows; r++) {
    int64_t at = 0;
    for (int q = 0; q < n; q++) at += idx[q] * st[q];
    const unsigned char *s = src + (size_t)at * in_bytes;
    size_t step = (size_t)vstride * in_bytes;
    if (widen)
      for (int64_t fi = 0; fi < d->lanes; fi++, out += 4, s += step) {
        uint16_t h;
        memcpy(&h, s, 2);
        float v = tj_half_to_float(h);
        memcpy(out, &v, 4);
      }
    else if (out_bytes == 4) /* float32, the usual case: a fixed-size copy the compiler inlines */
      for (int64_t fi = 0; fi < d->lanes; fi++, out += 4, s += step) memcpy(out, s, 4);
    else
      for (int64_t fi = 0; fi < d->lanes; fi++, out += out_bytes, s += step) memcpy(out, s, out_bytes);
    for (int q = n - 1; q >= 0 && ++idx[q] == ext[q]; q--) idx[q] = 0;
  }
  return NULL;
}
