/* The Winograd weight transform done once at load (prepack.h, winograd_m != 0): a
 * float32 [F, C, 3, 3] weight becomes U[fb, p, c, w] = (G w[fb * L + w, c] G^T)[p] (L =
 * lanes; 1 for transforms/tir/schedule_winograd.c, whose GEMMs broadcast U[f, p, c]
 * along the input channels, one output channel per row of the tile). Per
 * call it would cost the kernel a pass over the weight and a write of (m+2)^2 / 9 times
 * its size: for ResNet-18's 512-channel convs F(2x2) that is 16.8 MB. */
#include "runtime/prepack_winograd.h"

#include <stdbool.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX512_PATH 1
#endif

#include "support/winograd.h"

/* The weight's layout, from perm (weight dim perm[q] holds logical dim q of [F, C, 3,
 * 3]): OIHW ({0, 1, 2, 3}, schedule_winograd.c) or OHWI ({0, 3, 1, 2},
 * schedule_winograd_nhwc.c). */
static bool oihw(const tj_prepack_desc_t *d) {
  return d->perm[0] == 0 && d->perm[1] == 1 && d->perm[2] == 2 && d->perm[3] == 3;
}
static bool ohwi(const tj_prepack_desc_t *d) {
  return d->perm[0] == 0 && d->perm[1] == 3 && d->perm[2] == 1 && d->perm[3] == 2;
}
static int kdim(const tj_prepack_desc_t *d, int q) { return d->perm[q]; }

tj_status_t *tj_prepack_winograd_bytes(const tj_prepack_desc_t *d, size_t *out_bytes) {
  const tj_winograd_t *w = tj_winograd(d->winograd_m);
  if (!w || d->ndim != 4 || !(oihw(d) || ohwi(d)) || d->shape[kdim(d, 2)] != 3 || d->shape[kdim(d, 3)] != 3 ||
      d->lanes < 1 || d->shape[0] % d->lanes || !tj_dtype_eq(d->from, TJ_F32) || !tj_dtype_eq(d->to, TJ_F32))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "prepack: Winograd F(%dx%d, 3x3) of a rank-%d weight", d->winograd_m,
                         d->winograd_m, d->ndim);
  *out_bytes = (size_t)(w->alpha * w->alpha) * (size_t)d->shape[kdim(d, 1)] * (size_t)d->shape[0] * 4;
  return NULL;
}

void tj_prepack_winograd_shape(const tj_prepack_desc_t *d, int64_t *out_shape) {
  const tj_winograd_t *w = tj_winograd(d->winograd_m);
  out_shape[0] = d->shape[0] / d->lanes;
  out_shape[1] = w ? w->alpha * w->alpha : 0;
  out_shape[2] = d->shape[kdim(d, 1)];
  out_shape[3] = d->lanes;
}

/* KERNELS kernels of consecutive input channels at a time, each lane computing exactly
 * tj_winograd_weight's sums in their order, in double, rounded once (the same bits: the
 * build contracts no multiply-add, -std=c11). ResNet-18 transforms 65,536 kernels per
 * load. A 128x128 weight into mapped memory, thread CPU, min of 7 (Ice Lake host): one
 * kernel at a time 1.5-1.7 ms, so (two lanes per SSE2 register, alpha a constant, rows
 * written by memcpy) 1.0-1.1 ms. */
enum { KERNELS = 8 };

#ifdef __SSE2__
typedef __m128d lanes_t; /* two kernels */
#define LANES_PER 2
static inline lanes_t lanes_mul(lanes_t a, double c) { return _mm_mul_pd(a, _mm_set1_pd(c)); }
static inline lanes_t lanes_add(lanes_t a, lanes_t b) { return _mm_add_pd(a, b); }
#else
typedef double lanes_t;
#define LANES_PER 1
static inline lanes_t lanes_mul(lanes_t a, double c) { return a * c; }
static inline lanes_t lanes_add(lanes_t a, lanes_t b) { return a + b; }
#endif
enum { GROUPS = KERNELS / LANES_PER };

static inline void transform_kernels(const double (*G)[3], int alpha, const float *g, float u[][KERNELS]) {
  lanes_t x[9][GROUPS];
  for (int e = 0; e < 9; e++)
    for (int q = 0; q < GROUPS; q++) {
#ifdef __SSE2__
      x[e][q] = _mm_set_pd(g[(2 * q + 1) * 9 + e], g[2 * q * 9 + e]);
#else
      x[e][q] = g[q * 9 + e];
#endif
    }
  for (int a = 0; a < alpha; a++) { /* row a of t = G g, then row a of u = t G^T */
    lanes_t t[3][GROUPS];
    for (int j = 0; j < 3; j++)
      for (int q = 0; q < GROUPS; q++)
        t[j][q] = lanes_add(lanes_add(lanes_mul(x[j][q], G[a][0]), lanes_mul(x[3 + j][q], G[a][1])),
                            lanes_mul(x[6 + j][q], G[a][2]));
    for (int b = 0; b < alpha; b++)
      for (int q = 0; q < GROUPS; q++) {
        lanes_t v = lanes_add(lanes_add(lanes_mul(t[0][q], G[b][0]), lanes_mul(t[1][q], G[b][1])),
                              lanes_mul(t[2][q], G[b][2]));
#ifdef __SSE2__
        _mm_storel_pi((__m64 *)&u[a * alpha + b][2 * q], _mm_cvtpd_ps(v));
#else
        u[a * alpha + b][q] = (float)v;
#endif
      }
  }
}

#ifdef HAVE_AVX512_PATH
/* The same sums for all KERNELS kernels in one AVX-512 register of doubles, in the same
 * order (multiplies and adds, never fused: the same bits as the SSE2 lanes); rows go
 * straight to `rows` (row p at rows + p * stride). On hosts with AVX-512F (the Ice Lake,
 * Sapphire Rapids and Zen 5 hosts), chosen at run time. The inputs are put together
 * from scalar loads: with vgatherdps (slow microcode on the Ice Lake host) the gathers
 * took 55% of the time. Thread CPU, min of 15, into memory already faulted in, Ice Lake
 * host: 128x128 F(4x4) 1.0-1.1 ms with SSE2 (above), 0.47-0.52 with gathers, 0.29 now;
 * 256x256 F(2x2) 2.1 with gathers, 0.83 now. */
__attribute__((target("avx512f"))) static void transform_kernels_avx512(const double (*G)[3], int alpha,
                                                                        const float *g, float *rows, int64_t stride) {
  __m512d x[9];
  for (int e = 0; e < 9; e++)
    x[e] = _mm512_cvtps_pd(_mm256_setr_ps(g[e], g[9 + e], g[18 + e], g[27 + e], g[36 + e], g[45 + e], g[54 + e], g[63 + e]));
  for (int a = 0; a < alpha; a++) { /* row a of t = G g, then row a of u = t G^T */
    __m512d t[3];
    for (int j = 0; j < 3; j++)
      t[j] = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(x[j], _mm512_set1_pd(G[a][0])),
                                         _mm512_mul_pd(x[3 + j], _mm512_set1_pd(G[a][1]))),
                           _mm512_mul_pd(x[6 + j], _mm512_set1_pd(G[a][2])));
    for (int b = 0; b < alpha; b++) {
      __m512d v = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(t[0], _mm512_set1_pd(G[b][0])),
                                              _mm512_mul_pd(t[1], _mm512_set1_pd(G[b][1]))),
                                _mm512_mul_pd(t[2], _mm512_set1_pd(G[b][2])));
      _mm256_storeu_ps(rows + (a * alpha + b) * stride, _mm512_cvtpd_ps(v));
    }
  }
}

static bool host_has_avx512(void) {
  static int known = -1; /* benign race: every thread computes the same value */
  if (known < 0) {
    __builtin_cpu_init();
    known = __builtin_cpu_supports("avx512f") != 0;
  }
  return known == 1;
}
#endif

void tj_prepack_winograd_run(const tj_prepack_desc_t *d, const float *weight, float *dst, int64_t begin, int64_t end) {
  const tj_winograd_t *w = tj_winograd(d->winograd_m);
  int64_t C = d->shape[kdim(d, 1)], P = w->alpha * w->alpha, L = d->lanes;
  float u[TJ_WINOGRAD_MAX_ALPHA * TJ_WINOGRAD_MAX_ALPHA][KERNELS];
  float tail[KERNELS * 9] = {0};
  bool channels_last = ohwi(d);
#ifdef HAVE_AVX512_PATH
  bool wide = host_has_avx512();
#else
  bool wide = false;
#endif
  for (int64_t f = begin; f < end; f++)
    for (int64_t c0 = 0; c0 < C; c0 += KERNELS) {
      int64_t n = C - c0 < KERNELS ? C - c0 : KERNELS;
      const float *g = weight + (f * C + c0) * 9;
      if (channels_last) { /* OHWI: tap e of channel c at (f * 9 + e) * C + c, into kernel order */
        for (int64_t k = 0; k < n; k++)
          for (int e = 0; e < 9; e++) tail[k * 9 + e] = weight[(f * 9 + e) * C + c0 + k];
        g = tail;
      } else if (n < KERNELS)
        g = memcpy(tail, g, sizeof(float) * 9 * (size_t)n); /* lanes past n: zeros, unused */
#ifdef HAVE_AVX512_PATH
      if (wide && L == 1 && n == KERNELS) { /* whole rows: straight into place */
        transform_kernels_avx512(w->g, (int)w->alpha, g, dst + f * P * C + c0, C);
        continue;
      }
      if (wide) {
        transform_kernels_avx512(w->g, (int)w->alpha, g, u[0], KERNELS);
      } else
#endif
      if (w->alpha == 6) transform_kernels(w->g, 6, g, u);
      else transform_kernels(w->g, 4, g, u);
      if (L == 1) /* transforms/tir/schedule_winograd.c's layout: rows of consecutive channels */
        for (int64_t p = 0; p < P; p++) memcpy(dst + (f * P + p) * C + c0, u[p], sizeof(float) * (size_t)n);
      else
        for (int64_t p = 0; p < P; p++)
          for (int64_t k = 0; k < n; k++) dst[((f / L * P + p) * C + c0 + k) * L + f % L] = u[p][k];
    }
}
