/* Packing one constant weight (prepack.h). A plain copy in the packed order: when the
 * other dims keep their order (every conv weight and matmul weight the schedules pack),
 * block by block as transposes of [lanes][row] tiles; else element by element, the
 * destination written contiguously and each source row read in runs of `lanes`
 * elements of one stride. BERT's 768x3072 FFN weight (9.4 MB) packs in a few ms, once. */
#include "runtime/prepack.h"

#include "runtime/prepack_winograd.h"

#include <stdatomic.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

/* Whether the dims other than the vector dim keep their order in the packed layout
 * (perm[0..n-2] increasing): then the weight is [A][F][B] (A: the dims before the
 * vector dim, F: the vector dim, B: the dims after it) and each packed [B][lanes] block
 * is the transpose of a [lanes][B] block of rows. ResNet's conv weights, O I H W ->
 * O/lanes I H W lanes, are all of this kind (A = 1). */
static bool keeps_order(const tj_prepack_desc_t *d) {
  for (int q = 0; q + 2 < d->ndim; q++)
    if (d->perm[q] > d->perm[q + 1]) return false;
  return true;
}

/* dst[b * lanes + fi] = src[fi * cols + b] for fi < lanes, b < cols, in tiles of one
 * cache line of each source row (the element by element gather read each line once
 * per element it holds, from 32 rows 18 KB apart in a 512x512x3x3 weight). */
#define DEFINE_TRANSPOSE(NAME, T)                                                          \
  static void NAME(const T *src, int64_t lanes, int64_t cols, T *dst) {                    \
    enum { TILE = 64 / sizeof(T) };                                                        \
    for (int64_t b0 = 0; b0 < cols; b0 += TILE) {                                          \
      int64_t b1 = cols - b0 < TILE ? cols : b0 + TILE;                                    \
      for (int64_t fi = 0; fi < lanes; fi++) {                                             \
        const T *s = src + fi * cols;                                                      \
        for (int64_t b = b0; b < b1; b++) dst[b * lanes + fi] = s[b];                      \
      }                                                                                    \
    }                                                                                      \
  }
DEFINE_TRANSPOSE(transpose_u8, uint8_t)
DEFINE_TRANSPOSE(transpose_u16, uint16_t)
DEFINE_TRANSPOSE(transpose_u32, uint32_t)
DEFINE_TRANSPOSE(transpose_u64, uint64_t)

#ifdef __SSE2__
/* 4-byte elements with lanes and cols multiples of 4, in 4x4 register transposes (SSE2,
 * every x86-64 CPU): a 512x512x3x3 weight into memory already mapped took 3.2-4.6 ms of
 * thread CPU element by element, 2.1 ms so (min of 7, Ice Lake host). */
static void transpose_4x4(const uint32_t *src, int64_t lanes, int64_t cols, uint32_t *dst) {
  for (int64_t b0 = 0; b0 < cols; b0 += 16) {
    int64_t b1 = cols - b0 < 16 ? cols : b0 + 16;
    for (int64_t fi = 0; fi < lanes; fi += 4) {
      const uint32_t *s = src + fi * cols;
      for (int64_t b = b0; b < b1; b += 4) {
        __m128 r0 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(s + b)));
        __m128 r1 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(s + cols + b)));
        __m128 r2 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(s + 2 * cols + b)));
        __m128 r3 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(s + 3 * cols + b)));
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3); /* shuffles only: the bits move unchanged */
        _mm_storeu_si128((__m128i *)(dst + b * lanes + fi), _mm_castps_si128(r0));
        _mm_storeu_si128((__m128i *)(dst + (b + 1) * lanes + fi), _mm_castps_si128(r1));
        _mm_storeu_si128((__m128i *)(dst + (b + 2) * lanes + fi), _mm_castps_si128(r2));
        _mm_storeu_si128((__m128i *)(dst + (b + 3) * lanes + fi), _mm_castps_si128(r3));
      }
    }
  }
}
#endif

static void transpose_block(size_t elem, const void *src, int64_t lanes, int64_t cols, void *dst) {
  if (cols == 1) return (void)memcpy(dst, src, elem * (size_t)lanes);
#ifdef __SSE2__
  if (elem == 4 && lanes % 4 == 0 && cols % 4 == 0) return transpose_4x4(src, lanes, cols, dst);
#endif
  if (elem == 4) transpose_u32(src, lanes, cols, dst);
  else if (elem == 2) transpose_u16(src, lanes, cols, dst);
  else if (elem == 8) transpose_u64(src, lanes, cols, dst);
  else transpose_u8(src, lanes, cols, dst);
}

/* The same bytes as pack_gather, block by block (keeps_order, no conversion), for the
 * vector blocks fv in [begin, end). */
static void pack_blocks(const tj_prepack_desc_t *d, const void *weight, void *dst, int64_t begin, int64_t end) {
  int v = d->perm[d->ndim - 1];
  int64_t outer = 1, cols = 1, f = d->shape[v];
  for (int i = 0; i < v; i++) outer *= d->shape[i];
  for (int i = v + 1; i < d->ndim; i++) cols *= d->shape[i];
  size_t elem = tj_dtype_bytes(d->to), block = elem * (size_t)(d->lanes * cols);
  const unsigned char *src = weight;
  unsigned char *out = (unsigned char *)dst + block * (size_t)(begin * outer);
  for (int64_t fv = begin; fv < end; fv++)
    for (int64_t a = 0; a < outer; a++, out += block)
      transpose_block(elem, src + elem * (size_t)((a * f + fv * d->lanes) * cols), d->lanes, cols, out);
}

/* Any permutation and the float16 -> float32 widening, element by element. */
static void pack_gather(const tj_prepack_desc_t *d, size_t bytes, const void *weight, void *dst) {
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
    else
      for (int64_t fi = 0; fi < d->lanes; fi++, out += out_bytes, s += step) memcpy(out, s, out_bytes);
    for (int q = n - 1; q >= 0 && ++idx[q] == ext[q]; q--) idx[q] = 0;
  }
}

static bool by_blocks(const tj_prepack_desc_t *d) {
  size_t elem = tj_dtype_bytes(d->to);
  return tj_dtype_eq(d->from, d->to) && (elem == 1 || elem == 2 || elem == 4 || elem == 8) && keeps_order(d);
}

int64_t tj_prepack_parts(const tj_prepack_desc_t *d) {
  if (d->winograd_m) return d->shape[0];
  return by_blocks(d) ? d->shape[d->perm[d->ndim - 1]] / d->lanes : 1;
}

tj_status_t *tj_prepack_run_parts(const tj_prepack_desc_t *d, const void *weight, void *dst, int64_t begin,
                                  int64_t end) {
  size_t bytes;
  TJ_RETURN_IF_ERROR(tj_prepack_bytes(d, &bytes));
  if (begin >= end) return NULL;
  if (begin == 0) atomic_fetch_add(&runs, 1);
  if (d->winograd_m) tj_prepack_winograd_run(d, weight, dst, begin, end);
  else if (by_blocks(d)) pack_blocks(d, weight, dst, begin, end);
  else pack_gather(d, bytes, weight, dst);
  return NULL;
}

tj_status_t *tj_prepack_run(const tj_prepack_desc_t *d, const void *weight, void *dst) {
  return tj_prepack_run_parts(d, weight, dst, 0, tj_prepack_parts(d));
}
