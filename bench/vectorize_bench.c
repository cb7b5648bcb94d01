/* Scalar vs vectorized elementwise kernels (VectorizeLoop, not a test): relu(A * B + A)
 * over the seed's NHWC shape 16x32x32x16 in float16 and float32, one thread, the
 * innermost loop written as a serial loop or as T.vectorized(16). The CPU schedule is
 * off, so the only difference is the loop kind (the serial form is left to LLVM's own
 * loop vectorizer). Prints min/median thread-CPU microseconds and checks that both
 * forms give the same bits.
 *
 *   build/vectorize_bench [--repeat N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/text/parse.h"
#include "jit/jit.h"
#include "runtime/kernel.h"
#include "support/alloc.h"

static const char *const KERNEL =
    "@T.prim_func(private=True)\n"
    "def k(A: T.Buffer((T.int64(16), T.int64(32), T.int64(32), T.int64(16)), \"%1$s\"),"
    " B: T.Buffer((T.int64(16), T.int64(32), T.int64(32), T.int64(16)), \"%1$s\"),"
    " C: T.Buffer((T.int64(16), T.int64(32), T.int64(32), T.int64(16)), \"%1$s\")):\n"
    "    for n, h, w in T.grid(T.int64(16), T.int64(32), T.int64(32)):\n"
    "        for c in %2$s(T.int64(16)):\n"
    "            with T.block(\"C\"):\n"
    "                vn, vh, vw, vc = T.axis.remap(\"SSSS\", [n, h, w, c])\n"
    "                C[vn, vh, vw, vc] = T.max(A[vn, vh, vw, vc] * B[vn, vh, vw, vc] + A[vn, vh, vw, vc], T.%1$s(0))\n";

enum { N_ELEMS = 16 * 32 * 32 * 16 };

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Compiles the kernel for dtype with the inner loop kind; NULL on error (printed). */
static void (*compile(tj_jit_t *jit, const char *dtype, const char *loop))(void) {
  char src[2048];
  snprintf(src, sizeof src, KERNEL, dtype, loop);
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  tj_status_t *st = tj_parse_module(a, "bench", src, strlen(src), &m);
  tj_jit_kernel_t k = {0};
  tj_jit_options_t opts = {.opt_level = 2, .no_schedule = true, .no_cache = true};
  if (!st) st = tj_jit_compile_prim_func(jit, m->funcs[0].prim, "k", &opts, &k);
  if (st) fprintf(stderr, "vectorize_bench: %s %s: %s\n", dtype, loop, tj_status_text(st));
  tj_status_free(st);
  tj_arena_free(a);
  return k.fn;
}

static void time_one(void (*fn)(void), void **bufs, int repeat, double *min, double *med) {
  double *t = malloc(sizeof(double) * (size_t)repeat);
  tj_kernel_t k; /* the runtime's call convention, prepared once outside the clock */
  void *argv[3];
  tj_status_t *st = tj_kernel_init(&k, "k", fn, 3, 0);
  if (st) {
    fprintf(stderr, "vectorize_bench: %s\n", tj_status_text(st));
    exit(1);
  }
  tj_kernel_call(&k, bufs, NULL, argv);
  for (int r = 0; r < repeat; r++) {
    double t0 = now_us();
    tj_kernel_call(&k, bufs, NULL, argv);
    t[r] = now_us() - t0;
  }
  tj_kernel_release(&k);
  qsort(t, (size_t)repeat, sizeof(double), cmp_double);
  *min = t[0];
  *med = t[repeat / 2];
  free(t);
}

int main(int argc, char **argv) {
  int repeat = 200;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: vectorize_bench [--repeat N]\n");
      return 2;
    }
  }
  if (repeat < 1) repeat = 1;
  tj_jit_t *jit = NULL;
  tj_status_t *st = tj_jit_create(&jit);
  if (st) {
    fprintf(stderr, "vectorize_bench: %s\n", tj_status_text(st));
    return 1;
  }
  const char *dtypes[] = {"float16", "float32"};
  int status = 0;
  printf("relu(A*B+A), 16x32x32x16, 1 thread, %d runs: thread-CPU microseconds\n", repeat);
  printf("%-8s %-12s %10s %10s\n", "dtype", "inner loop", "min", "median");
  for (int d = 0; d < 2; d++) {
    size_t bytes = (size_t)N_ELEMS * (d == 0 ? 2 : 4);
    void *bufs[2][3];
    unsigned seed = 7;
    for (int v = 0; v < 2; v++)
      for (int i = 0; i < 3; i++) bufs[v][i] = tj_aligned_alloc(bytes);
    for (size_t i = 0; i < (size_t)N_ELEMS; i++)
      for (int b = 0; b < 2; b++) {
        float x = (float)rand_r(&seed) / RAND_MAX * 4 - 2;
        if (d == 0) ((_Float16 *)bufs[0][b])[i] = ((_Float16 *)bufs[1][b])[i] = (_Float16)x;
        else ((float *)bufs[0][b])[i] = ((float *)bufs[1][b])[i] = x;
      }
    const char *loops[] = {"T.serial", "T.vectorized"};
    for (int v = 0; v < 2; v++) {
      void (*fn)(void) = compile(jit, dtypes[d], loops[v]);
      if (!fn) {
        status = 1;
        continue;
      }
      double mn, md;
      time_one(fn, bufs[v], repeat, &mn, &md);
      printf("%-8s %-12s %10.1f %10.1f\n", dtypes[d], loops[v], mn, md);
    }
    if (!status && memcmp(bufs[0][2], bufs[1][2], bytes) != 0) {
      printf("%s: serial and vectorized results DIFFER\n", dtypes[d]);
      status = 1;
    } else if (!status) {
      printf("%s: serial and vectorized results are bit-identical\n", dtypes[d]);
    }
    for (int v = 0; v < 2; v++)
      for (int i = 0; i < 3; i++) tj_aligned_free(bufs[v][i]);
  }
  tj_jit_free(jit);
  return status;
}
