/* Per-call overhead of the public C API (issue 18: at most 5 us for a one-op model).
 *
 *   build/call_overhead [CALLS] [THREADS]
 *
 * Compiles a one-relu model (float32[1, 64], default pipeline) and calls it CALLS times
 * (default 200000) with tvmjit_function_call (a fresh output each call, freed at once).
 * Prints, per call, the median over batches of 1000 calls of wall time and the thread's
 * CPU time per call over the whole loop (the CPU time is the robust number on a shared
 * machine: other processes' time is not counted). Not a test: timing lives in bench/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tvmjit.h>

static const char MODEL[] =
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((1, 64), dtype=\"float32\")) -> R.Tensor((1, 64), dtype=\"float32\"):\n"
    "        with R.dataflow():\n"
    "            y = R.nn.relu(x)\n"
    "            R.output(y)\n"
    "        return y\n";

enum { BATCH = 1000 };

static double clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int fail(tvmjit_status_t *st) {
  fprintf(stderr, "call_overhead: %s\n", tvmjit_status_message(st));
  tvmjit_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  long calls = argc > 1 ? atol(argv[1]) : 200000;
  int threads = argc > 2 ? atoi(argv[2]) : 1;
  if (calls < BATCH) calls = BATCH;
  tvmjit_instance_options_t io;
  tvmjit_instance_options_init(&io);
  io.num_threads = threads;
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  tvmjit_tensor_t *x = NULL;
  int64_t shape[2] = {1, 64};
  tvmjit_status_t *st = tvmjit_instance_create(&io, &inst);
  if (!st) st = tvmjit_module_load_string(inst, "relu", MODEL, strlen(MODEL), NULL, &mod);
  if (!st) st = tvmjit_module_get_function(mod, "main", &fn);
  if (!st) st = tvmjit_tensor_new(TVMJIT_FLOAT32, 2, shape, &x);
  if (st) return fail(st);
  long batches = calls / BATCH;
  double *per_call = malloc(sizeof(double) * (size_t)batches);
  if (!per_call) return 1;
  const tvmjit_tensor_t *ins[1] = {x};
  double cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  for (long b = 0; b < batches; b++) {
    double t0 = clock_ns(CLOCK_MONOTONIC);
    for (int k = 0; k < BATCH; k++) {
      tvmjit_tensor_t *y = NULL;
      if ((st = tvmjit_function_call(fn, 1, ins, 1, &y))) return fail(st);
      tvmjit_tensor_free(y);
    }
    per_call[b] = (clock_ns(CLOCK_MONOTONIC) - t0) / BATCH;
  }
  double cpu_per_call = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / (double)(batches * BATCH);
  qsort(per_call, (size_t)batches, sizeof(double), cmp_double);
  printf("tvmjit_function_call, relu float32[1, 64], %d thread(s): median %.0f ns per call (batches of %d), "
         "min %.0f ns; thread CPU %.0f ns per call over %ld calls\n",
         threads, per_call[batches / 2], BATCH, per_call[0], cpu_per_call, batches * BATCH);
  free(per_call);
  tvmjit_tensor_free(x);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
  return 0;
}
