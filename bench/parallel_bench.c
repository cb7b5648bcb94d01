/* parallel_bench: what the parallel runtime costs and gains.
 *
 * 1. Dispatch overhead: tj_thread_pool_parallel_for with an empty body (n = 64), in
 *    microseconds per call, back to back (workers still spinning) and after an idle gap
 *    (workers asleep on the condition variable, so the call includes waking them).
 * 2. Speedup of two hand-written T.parallel float32 kernels, called directly (no
 *    executor, buffers allocated once): a 3x3 NHWC convolution 16x32x32x16 (the seed's
 *    shape, input pre-padded) and an elementwise y = x * 2 + 1 over 4M floats, at 1
 *    and N threads; and the convolution with a serial outer loop against T.parallel on
 *    one thread (the cost of outlining). The two runs of a comparison are interleaved;
 *    min and median milliseconds are reported, and the ratio A/B (> 1: B is faster).
 *
 * usage: parallel_bench [--reps N] [--threads N]   (N threads for the second column;
 *        default 2). Build: cmake --build build --target parallel_bench */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/text/parse.h"
#include "jit/jit.h"
#include "runtime/thread_pool.h"
#include "support/alloc.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void empty_body(int64_t begin, int64_t end, void *ctx) {
  (void)begin, (void)end, (void)ctx;
}

static void dispatch_overhead(int threads, int reps) {
  tj_thread_pool_t *pool;
  tj_status_t *st = tj_thread_pool_create(threads, &pool);
  if (st) {
    fprintf(stderr, "parallel_bench: %s\n", tj_status_text(st));
    exit(1);
  }
  tj_thread_pool_parallel_for(pool, 64, empty_body, NULL); /* start the workers */
  double *hot = malloc(sizeof(double) * (size_t)reps), *cold = malloc(sizeof(double) * (size_t)reps);
  for (int r = 0; r < reps; r++) {
    double t0 = now_us();
    tj_thread_pool_parallel_for(pool, 64, empty_body, NULL);
    hot[r] = now_us() - t0;
  }
  int cold_reps = reps < 200 ? reps : 200;
  for (int r = 0; r < cold_reps; r++) {
    usleep(2000); /* well past the spin: the workers sleep */
    double t0 = now_us();
    tj_thread_pool_parallel_for(pool, 64, empty_body, NULL);
    cold[r] = now_us() - t0;
  }
  double hot_med = median(hot, reps), cold_med = median(cold, cold_reps); /* sorts: [0] is the min */
  printf("empty parallel_for, %d thread(s), back to back: median %.2f us, min %.2f us\n", threads, hot_med, hot[0]);
  printf("empty parallel_for, %d thread(s), workers asleep: median %.2f us, min %.2f us\n", threads, cold_med,
         cold[0]);
  free(hot);
  free(cold);
  tj_thread_pool_free(pool);
}

static const char *conv_text =
    "@T.prim_func\n"
    "def conv(x: T.Buffer((16, 34, 34, 16), \"float32\"), w: T.Buffer((3, 3, 16, 16), \"float32\"), "
    "y: T.Buffer((16, 32, 32, 16), \"float32\")):\n"
    "    for nh in T.parallel(512):\n"
    "        for ow in range(32):\n"
    "            for oc in range(16):\n"
    "                y[nh // 32, nh % 32, ow, oc] = T.float32(0)\n"
    "            for kh in range(3):\n"
    "                for kw in range(3):\n"
    "                    for ic in range(16):\n"
    "                        for oc in range(16):\n"
    "                            y[nh // 32, nh % 32, ow, oc] = y[nh // 32, nh % 32, ow, oc] + "
    "x[nh // 32, nh % 32 + kh, ow + kw, ic] * w[kh, kw, ic, oc]\n";

static const char *axpb_text =
    "@T.prim_func\n"
    "def axpb(x: T.Buffer((4096, 1024), \"float32\"), unused: T.Buffer((1,), \"float32\"), "
    "y: T.Buffer((4096, 1024), \"float32\")):\n"
    "    for i in T.parallel(4096):\n"
    "        for j in range(1024):\n"
    "            y[i, j] = x[i, j] * T.float32(2) + T.float32(1)\n";

typedef void (*kernel3_t)(void *, void *, void *);

static kernel3_t compile(tj_jit_t *jit, tj_arena_t *a, const char *text, const char *name) {
  tj_module_t *m = NULL;
  tj_jit_kernel_t k;
  tj_jit_options_t opts = {.opt_level = 2};
  tj_status_t *st = tj_parse_module(a, name, text, strlen(text), &m);
  if (!st) st = tj_jit_compile_prim_func(jit, tj_module_find_prim(m, name), name, &opts, &k);
  if (st) {
    fprintf(stderr, "parallel_bench: %s\n", tj_status_text(st));
    exit(1);
  }
  return (kernel3_t)(void (*)(void))k.fn;
}

/* Kernel ka on a pool of ta threads against kb on tb threads, interleaved. */
static void compare(const char *what, kernel3_t ka, int ta, kernel3_t kb, int tb, size_t n0, size_t n1, size_t n2,
                    int reps) {
  float *b0 = tj_aligned_alloc(n0 * 4), *b1 = tj_aligned_alloc(n1 * 4), *b2 = tj_aligned_alloc(n2 * 4);
  for (size_t i = 0; i < n0; i++) b0[i] = (float)(i % 17) * 0.125f - 1.0f;
  for (size_t i = 0; i < n1; i++) b1[i] = (float)(i % 13) * 0.0625f - 0.375f;
  memset(b2, 0, n2 * 4);
  kernel3_t ks[2] = {ka, kb};
  int counts[2] = {ta, tb};
  tj_thread_pool_t *pools[2];
  for (int p = 0; p < 2; p++)
    if (tj_thread_pool_create(counts[p], &pools[p])) exit(1);
  double *times[2] = {malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps)};
  for (int p = 0; p < 2; p++) { /* warm-up: page in, start workers */
    tj_thread_pool_set_current(pools[p]);
    ks[p](b0, b1, b2);
  }
  for (int r = 0; r < reps; r++)
    for (int p = 0; p < 2; p++) {
      tj_thread_pool_set_current(pools[p]);
      double t0 = now_us();
      ks[p](b0, b1, b2);
      times[p][r] = (now_us() - t0) / 1e3;
    }
  tj_thread_pool_set_current(NULL);
  double med[2], mins[2];
  for (int p = 0; p < 2; p++) {
    med[p] = median(times[p], reps);
    mins[p] = times[p][0];
    printf("%s, %s, %d thread(s): median %.3f ms, min %.3f ms\n", what, p ? "B" : "A", counts[p], med[p], mins[p]);
    free(times[p]);
    tj_thread_pool_free(pools[p]);
  }
  printf("%s: A/B time ratio %.2fx (median), %.2fx (min)\n", what, med[0] / med[1], mins[0] / mins[1]);
  tj_aligned_free(b0);
  tj_aligned_free(b1);
  tj_aligned_free(b2);
}

int main(int argc, char **argv) {
  int reps = 200, threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--threads") == 0) threads = atoi(argv[i + 1]);
  }
  if (reps < 1 || threads < 1) {
    fprintf(stderr, "usage: parallel_bench [--reps N] [--threads N]\n");
    return 2;
  }
  dispatch_overhead(1, reps * 50);
  dispatch_overhead(threads, reps * 50);
  tj_jit_t *jit;
  if (tj_jit_create(&jit)) return 1;
  tj_arena_t *a = tj_arena_create();
  kernel3_t conv = compile(jit, a, conv_text, "conv");
  /* The same kernel with a serial outer loop: what outlining costs at one thread. */
  char *serial_text = tj_strdup(conv_text);
  memcpy(strstr(serial_text, "T.parallel(512)"), "range(512)     ", 15);
  kernel3_t conv_serial = compile(jit, a, serial_text, "conv");
  kernel3_t axpb = compile(jit, a, axpb_text, "axpb");
  enum { X = 16 * 34 * 34 * 16, W = 3 * 3 * 16 * 16, Y = 16 * 32 * 32 * 16, E = 4096 * 1024 };
  compare("conv3x3 nhwc 16x32x32x16 f32 (A: 1 thread, B: N threads)", conv, 1, conv, threads, X, W, Y, reps);
  compare("conv3x3 (A: serial outer loop, B: T.parallel on 1 thread)", conv_serial, 1, conv, 1, X, W, Y, reps);
  compare("elementwise 4M f32 (A: 1 thread, B: N threads)", axpb, 1, axpb, threads, E, 1, E, reps);
  tj_free(serial_text);
  tj_arena_free(a);
  tj_jit_free(jit);
  return 0;
}
