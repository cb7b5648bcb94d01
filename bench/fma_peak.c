/* fma_peak: the float32 FMA throughput of this machine, for "percent of peak" figures.
 *
 * Each thread runs independent chains of vector FMAs (acc = acc * m + a) that never
 * touch memory: with ACC accumulators per thread there are ACC FMAs in flight, more
 * than latency x ports on current cores (4-5 cycles x 2 ports), so the loop is
 * throughput-bound. AVX-512 (16 lanes) when the CPU has it, else AVX2 + FMA (8 lanes).
 * One FMA is 2 FLOP per lane.
 *
 * It also measures the float16 bound of the seed as written (float16 accumulation,
 * every operation rounded, no native float16 arithmetic): per MAC, the product of two
 * float16 values in float32 (exact), rounded to float16 (F16C), widened, added to the
 * widened accumulator in float32 and rounded to float16 again. Rounding a float32 sum or
 * product of float16 values to float16 is correctly rounded (24 >= 2 x 11 + 2 bits), so
 * this is the cheapest exact emulation; it counts emulated MACs per second. Where the
 * CPU has AVX512-FP16 it also measures the native rate, "f16_native_gmacs": a float16
 * multiply then a float16 add (each rounded, as the seed's TIR says) on 32 lanes.
 * Where the CPU has AVX512-BF16 it also measures "bf16_gflops": chains of vdpbf16ps
 * (acc += a0 * b0 + a1 * b1 on 16 float32 lanes, 32 bfloat16 products), 4 FLOP per lane,
 * the bound of a bfloat16 dot product with float32 accumulation.
 * Prints one JSON object, the best of --reps short repetitions for each thread count
 * (the best window is the one no other process interrupted):
 *   {"isa": "avx512", "lanes": 16, "accumulators": 12, "gflops": {"1": 230.1, "2": 458.3},
 *    "f16_gmacs": {"1": 14.3, "2": 28.5}, "bf16_gflops": {"1": 236.0, "2": 470.1}}
 *
 * usage: fma_peak [--threads "1 2"] [--reps N] [--iters N]
 * build: cc -O2 -pthread bench/fma_peak.c -o fma_peak */
#include <cpuid.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ACC = 12, MAX_THREADS = 256 };

typedef struct job {
  long iters;
  int avx512, f16; /* f16: 1 emulated float16 MACs instead of FMAs, 2 native ones, 3 vdpbf16ps */
  float sink; /* keeps the result live */
  double t_start, t_end; /* taken by the worker itself, around its chains */
  pthread_barrier_t *start;
} job_t;

/* Twelve named accumulators, written out: an array indexed in a loop stays in memory
 * at -O2 and measures the store-to-load path instead of the FMA units. */
#define FOR_ACC(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define DECL(k) VEC acc##k = SET1(1.0f + (float)(k) * 1e-3f);
#define STEP(k) acc##k = FMA(acc##k, m, a);
#define SUM(k) s = ADD(s, acc##k);

#define VEC __m512
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
__attribute__((target("avx512f"))) static float chains_avx512(long iters) {
  FOR_ACC(DECL)
  const VEC m = SET1(0.999999f), a = SET1(1e-6f);
  for (long i = 0; i < iters; i++) {
    FOR_ACC(STEP)
    __asm__ volatile("" ::: "memory"); /* one round of chains per iteration, no folding */
  }
  VEC s = SET1(0.0f);
  FOR_ACC(SUM)
  return _mm512_reduce_add_ps(s);
}
#undef VEC
#undef SET1
#undef FMA
#undef ADD

#define VEC __m256
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
__attribute__((target("avx2,fma"))) static float chains_avx2(long iters) {
  FOR_ACC(DECL)
  const VEC m = SET1(0.999999f), a = SET1(1e-6f);
  for (long i = 0; i < iters; i++) {
    FOR_ACC(STEP)
    __asm__ volatile("" ::: "memory");
  }
  VEC s = SET1(0.0f);
  FOR_ACC(SUM)
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

#undef VEC
#undef SET1
#undef FMA
#undef ADD

/* Emulated float16 MACs: acc = f16(acc + f16(x * w)), acc kept widened to float32.
 * The empty asm makes x opaque each iteration so the product is not hoisted. */
#define F16_DECL(k) VEC acc##k = SET1(0.0f), x##k = SET1(0.5f + (float)(k) * 0.0625f);
#define F16_STEP(k)                                     \
  __asm__("" : "+v"(x##k));                             \
  acc##k = WIDEN(NARROW(ADD(acc##k, WIDEN(NARROW(MUL(x##k, w))))));
#define F16_SUM(k) s = ADD(s, acc##k);
/* The timed loop, for the VEC/SET1/ADD/MUL/NARROW/WIDEN of the ISA defined around it;
 * leaves the sum of the accumulators in s. */
#define F16_LOOP(iters)                   \
  FOR_ACC(F16_DECL)                       \
  const VEC w = SET1(0.0078125f);         \
  for (long i = 0; i < (iters); i++) {    \
    FOR_ACC(F16_STEP)                     \
  }                                       \
  VEC s = SET1(0.0f);                     \
  FOR_ACC(F16_SUM)

#define VEC __m512
#define SET1 _mm512_set1_ps
#define ADD _mm512_add_ps
#define MUL _mm512_mul_ps
#define NARROW(v) _mm512_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define WIDEN _mm512_cvtph_ps
__attribute__((target("avx512f"))) static float f16_avx512(long iters) {
  F16_LOOP(iters)
  return _mm512_reduce_add_ps(s);
}
#undef VEC
#undef SET1
#undef ADD
#undef MUL
#undef NARROW
#undef WIDEN

#define VEC __m256
#define SET1 _mm256_set1_ps
#define ADD _mm256_add_ps
#define MUL _mm256_mul_ps
#define NARROW(v) _mm256_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define WIDEN _mm256_cvtph_ps
__attribute__((target("avx2,f16c"))) static float f16_avx2(long iters) {
  F16_LOOP(iters)
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

/* Native float16 MACs (AVX512-FP16): acc = acc + x * w, a multiply and an add, each
 * rounded to float16 (no FMA: the seed rounds the product). */
#define H16_DECL(k) __m512h acc##k = _mm512_set1_ph((_Float16)0), x##k = _mm512_set1_ph((_Float16)(0.5f + (k) * 0.0625f));
#define H16_STEP(k)                         \
  {                                         \
    __asm__("" : "+v"(x##k));               \
    __m512h p##k = _mm512_mul_ph(x##k, w);  \
    __asm__("" : "+v"(p##k)); /* no FMA */  \
    acc##k = _mm512_add_ph(acc##k, p##k);   \
  }
#define H16_SUM(k) s = _mm512_add_ph(s, acc##k);
__attribute__((target("avx512fp16,avx512vl,avx512bw,avx512f"))) static float f16_native(long iters) {
  FOR_ACC(H16_DECL)
  const __m512h w = _mm512_set1_ph((_Float16)0.0078125f);
  for (long i = 0; i < iters; i++) {
    FOR_ACC(H16_STEP)
  }
  __m512h s = _mm512_set1_ph((_Float16)0);
  FOR_ACC(H16_SUM)
  return (float)_mm512_reduce_add_ph(s);
}

/* vdpbf16ps chains: acc = acc + x[2i] * w[2i] + x[2i+1] * w[2i+1], x and w constant
 * bfloat16 pairs (the instruction reads no accumulator-dependent operand but acc, so the
 * chains are as independent as the FMA ones). */
#define BF_DECL(k) __m512 acc##k = _mm512_set1_ps((float)(k) * 1e-3f); /* distinct: no merged chains */
#define BF_STEP(k) acc##k = _mm512_dpbf16_ps(acc##k, x, w);
#define BF_SUM(k) s = _mm512_add_ps(s, acc##k);
__attribute__((target("avx512bf16,avx512f"))) static float bf16_dot(long iters) {
  FOR_ACC(BF_DECL)
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f003f00); /* 0.5, 0.5 */
  const __m512bh w = (__m512bh)_mm512_set1_epi32(0x3c003c00); /* 2^-7, 2^-7 */
  for (long i = 0; i < iters; i++) {
    FOR_ACC(BF_STEP)
    __asm__ volatile("" ::: "memory");
  }
  __m512 s = _mm512_set1_ps(0.0f);
  FOR_ACC(BF_SUM)
  return _mm512_reduce_add_ps(s);
}

static double now_s(void);

static void *worker(void *p) {
  job_t *j = p;
  pthread_barrier_wait(j->start);
  j->t_start = now_s();
  if (j->f16 == 3) j->sink = bf16_dot(j->iters);
  else if (j->f16 == 2) j->sink = f16_native(j->iters);
  else if (j->f16) j->sink = j->avx512 ? f16_avx512(j->iters) : f16_avx2(j->iters);
  else j->sink = j->avx512 ? chains_avx512(j->iters) : chains_avx2(j->iters);
  j->t_end = now_s();
  return NULL;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* GFLOP/s (f16: G emulated MAC/s) of `threads` threads running the chains at once: the
 * time from the first worker's start to the last one's end, as the workers saw it (a
 * clock read by this thread could be late: preempted after the barrier, it would miss
 * the work and report an absurd rate). */
static double measure(int threads, long iters, int avx512, int f16) {
  pthread_t tid[MAX_THREADS];
  job_t jobs[MAX_THREADS];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
  for (int t = 0; t < threads; t++) {
    jobs[t] = (job_t){.iters = iters, .avx512 = avx512, .f16 = f16, .start = &start};
    if (pthread_create(&tid[t], NULL, worker, &jobs[t])) {
      fprintf(stderr, "fma_peak: cannot start thread %d\n", t);
      exit(1);
    }
  }
  pthread_barrier_wait(&start);
  float sink = 0;
  for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL), sink += jobs[t].sink;
  double first = jobs[0].t_start, last = jobs[0].t_end;
  for (int t = 1; t < threads; t++) {
    first = jobs[t].t_start < first ? jobs[t].t_start : first;
    last = jobs[t].t_end > last ? jobs[t].t_end : last;
  }
  double secs = last - first;
  pthread_barrier_destroy(&start);
  if (sink == 12345.678f) fprintf(stderr, "(unlikely)\n"); /* uses the results */
  double lanes = f16 == 2 ? 32 : avx512 ? 16 : 8;
  double per_lane = f16 == 3 ? 4.0 : f16 ? 1.0 : 2.0; /* vdpbf16ps: two multiply-adds per lane */
  return threads * (double)iters * ACC * lanes * per_lane / secs / 1e9;
}

int main(int argc, char **argv) {
  const char *thread_list = "1 2";
  /* Many short windows (about 1.3 ms of FMAs at 230 GFLOP/s): on a shared machine the best
   * of them is the one no other process interrupted; long windows never are clean. */
  int reps = 100;
  long iters = 500000;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) thread_list = argv[++i];
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) iters = atol(argv[++i]);
    else {
      fprintf(stderr, "fma_peak: unknown argument '%s'\nusage: fma_peak [--threads \"1 2\"] [--reps N] [--iters N]\n",
              argv[i]);
      return 2;
    }
  }
  if (reps < 1 || iters < 1) {
    fprintf(stderr, "fma_peak: --reps and --iters take positive counts\n");
    return 2;
  }
  __builtin_cpu_init();
  int avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    fprintf(stderr, "fma_peak: this CPU has neither AVX-512 nor AVX2+FMA\n");
    return 1;
  }
  unsigned eax, ebx, ecx = 0, edx;
  int f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)); /* CPUID.1:ECX.F16C */
  int counts[64], n = 0;
  char list[256];
  snprintf(list, sizeof list, "%s", thread_list);
  for (char *tok = strtok(list, " ,"); tok; tok = strtok(NULL, " ,")) {
    char *end;
    long t = strtol(tok, &end, 10);
    if (*end || t < 1 || t > MAX_THREADS || n == 64) {
      fprintf(stderr, "fma_peak: bad thread count '%s' (1 to %d, at most 64 counts)\n", tok, MAX_THREADS);
      return 2;
    }
    counts[n++] = (int)t;
  }
  printf("{\"isa\": \"%s\", \"lanes\": %d, \"accumulators\": %d", avx512 ? "avx512" : "avx2", avx512 ? 16 : 8, ACC);
  static const char *const keys[] = {"gflops", "f16_gmacs", "f16_native_gmacs", "bf16_gflops"};
  for (int f16 = 0; f16 <= 3; f16++) {
    if (f16 == 1 && !f16c) continue;                                 /* no F16C: no emulated figure */
    if (f16 == 2 && !__builtin_cpu_supports("avx512fp16")) continue; /* no native float16 */
    if (f16 == 3 && !__builtin_cpu_supports("avx512bf16")) continue; /* no vdpbf16ps */
    printf(", \"%s\": {", keys[f16]);
    for (int k = 0; k < n; k++) {
      double best = 0;
      for (int r = 0; r < reps; r++) {
        double g = measure(counts[k], iters, avx512, f16);
        best = g > best ? g : best;
      }
      printf("%s\"%d\": %.3f", k ? ", " : "", counts[k], best);
    }
    printf("}");
  }
  printf("}\n");
  return 0;
}
