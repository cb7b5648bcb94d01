/* Per-kernel benchmark of the CPU schedule: every PrimFunc of a model after the pass
 * pipeline, compiled with and without the schedule, run on the same random inputs;
 * prints min/median thread-CPU and wall milliseconds of each and whether their outputs
 * are bit-identical.
 *
 *   build/bench_kernels MODEL.rx [--pipeline TEXT] [--repeat N] [--print NAME]
 *
 * --pipeline defaults to "default"; e.g. 'ToMixedPrecision(out_dtype="float16"),default'.
 * --print NAME prints that PrimFunc after the schedule (before lowering); --ir NAME its
 * optimised LLVM IR. --float-modes compares the scheduled kernel in strict float mode
 * (left) and in the default one (right: FMA contraction, reordered conv reductions; see
 * tvmjit_module_options_t.strict_float) instead of plain loops vs scheduled; --print
 * and --ir then show the default mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/driver.h"
#include "ir/text/print.h"
#include "jit/jit.h"
#include "runtime/kernel.h"
#include "support/alloc.h"
#include "support/strbuf.h"
#include "transforms/tir/lower.h"
#include "transforms/transforms.h"

enum { MAX_PARAMS = 32 };

static double now_ms(clockid_t clk) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void fill(void *data, tj_dtype_t dt, int64_t n, unsigned *seed) {
  for (int64_t i = 0; i < n; i++) {
    double v = (double)rand_r(seed) / RAND_MAX * 2 - 1;
    if (dt.code == TJ_DT_FLOAT && dt.bits == 32) ((float *)data)[i] = (float)v;
    else if (dt.code == TJ_DT_FLOAT && dt.bits == 16) ((_Float16 *)data)[i] = (_Float16)v;
    else if (dt.code == TJ_DT_FLOAT && dt.bits == 64) ((double *)data)[i] = v;
    else memset((char *)data + i * tj_dtype_bytes(dt), 0, tj_dtype_bytes(dt));
  }
}

typedef struct timing {
  double cpu_min, cpu_med, wall_min, wall_med;
} timing_t;

static timing_t time_kernel(const tj_jit_kernel_t *jk, void **bufs, int repeat) {
  double *cpu = malloc(sizeof(double) * repeat), *wall = malloc(sizeof(double) * repeat);
  tj_kernel_t k; /* the runtime's call convention, prepared once outside the clock */
  void *argv[2 * MAX_PARAMS];
  int64_t scalars[MAX_PARAMS] = {0};
  tj_status_t *st = tj_kernel_init(&k, jk->symbol, jk->fn, jk->n_buffers, jk->n_scalars);
  if (st) {
    fprintf(stderr, "bench_kernels: %s\n", tj_status_text(st));
    exit(1);
  }
  tj_kernel_call(&k, bufs, scalars, argv);
  for (int r = 0; r < repeat; r++) {
    double c0 = now_ms(CLOCK_THREAD_CPUTIME_ID), w0 = now_ms(CLOCK_MONOTONIC);
    tj_kernel_call(&k, bufs, scalars, argv);
    cpu[r] = now_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
    wall[r] = now_ms(CLOCK_MONOTONIC) - w0;
  }
  tj_kernel_release(&k);
  qsort(cpu, repeat, sizeof(double), cmp_double);
  qsort(wall, repeat, sizeof(double), cmp_double);
  timing_t t = {cpu[0], cpu[repeat / 2], wall[0], wall[repeat / 2]};
  free(cpu);
  free(wall);
  return t;
}

int main(int argc, char **argv) {
  const char *model = NULL, *pipeline = "default", *print = NULL, *ir = NULL;
  int repeat = 20;
  bool relaxed = false; /* --float-modes: scheduled strict (left) vs default float mode (right) */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--pipeline") && i + 1 < argc) pipeline = argv[++i];
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--print") && i + 1 < argc) print = argv[++i];
    else if (!strcmp(argv[i], "--ir") && i + 1 < argc) ir = argv[++i];
    else if (!strcmp(argv[i], "--float-modes")) relaxed = true;
    else model = argv[i];
  }
  if (!model || repeat < 1) {
    fprintf(stderr, "usage: bench_kernels MODEL.rx [--pipeline TEXT] [--repeat N] [--print NAME] [--ir NAME] [--float-modes]\n");
    return 2;
  }
  tj_arena_t *arena = tj_arena_create();
  const tj_module_t *m;
  tj_driver_passes_t passes = {.passes = pipeline};
  tj_status_t *st = tj_driver_load(arena, model, NULL, 0, &passes, &m, NULL, NULL);
  tj_jit_t *jit = NULL;
  if (!st) st = tj_jit_create(&jit);
  if (st) {
    fprintf(stderr, "bench_kernels: %s\n", tj_status_text(st));
    return 1;
  }
  printf("%-36s %10s %10s %10s %10s %8s  %s\n", "kernel", "cpu min", "cpu med", "sched min", "sched med", "speedup",
         "bits");
  /* --print and --ir show the kernel as the JIT schedules it (default float mode with
   * --float-modes, else strict) */
  tj_tir_schedule_options_t so = tj_jit_schedule_options(true, relaxed);
  for (int i = 0; i < m->n_funcs; i++) {
    if (!m->funcs[i].is_prim) continue;
    const char *name = m->funcs[i].name;
    const tj_prim_func_t *f = m->funcs[i].prim;
    if (print && !strcmp(print, name)) {
      const tj_prim_func_t *sf;
      tj_tir_schedule_stats_t ss;
      st = tj_tir_schedule(arena, f, name, &so, &sf, &ss);
      if (st) return fprintf(stderr, "%s\n", tj_status_text(st)), 1;
      tj_strbuf_t sb;
      tj_strbuf_init(&sb);
      tj_print_prim_func(&sb, name, sf);
      char *text = tj_strbuf_take(&sb);
      printf("%s\n# conv %d, injective %d, reduction %d, fused epilogues %d, repacked %d, widened %d, windowed %d, reordered %d, plane windows %d\n",
             text, ss.conv, ss.injective, ss.reduction, ss.fused_epilogues, ss.repacked, ss.widened, ss.windowed, ss.reordered,
             ss.plane_windows);
      tj_free(text);
    }
    if (ir && !strcmp(ir, name)) {
      const tj_prim_func_t *low;
      char *text = NULL;
      st = tj_tir_lower_scheduled(arena, f, name, &so, &low);
      if (!st) st = tj_jit_llvm_ir(low, name, 2, &text);
      if (st) return fprintf(stderr, "%s\n", tj_status_text(st)), 1;
      printf("%s\n", text);
      tj_free(text);
    }
    void *a[MAX_PARAMS], *b[MAX_PARAMS];
    int64_t bytes[MAX_PARAMS];
    unsigned seed = 1234;
    for (int k = 0; k < f->n_params; k++) {
      const tj_buffer_t *buf = f->buffer_map[k];
      int64_t n = 1;
      tj_buffer_static_size(buf, &n);
      bytes[k] = n * (int64_t)tj_dtype_bytes(buf->dtype);
      a[k] = tj_aligned_alloc((size_t)bytes[k] + 64);
      b[k] = tj_aligned_alloc((size_t)bytes[k] + 64);
      fill(a[k], buf->dtype, n, &seed);
      memcpy(b[k], a[k], (size_t)bytes[k]);
    }
    tj_jit_kernel_t k0, k1;
    tj_jit_options_t o0 = {.opt_level = 2, .no_schedule = !relaxed}, o1 = {.opt_level = 2, .relaxed_float = relaxed};
    st = tj_jit_compile_prim_func(jit, f, name, &o0, &k0);
    if (!st) st = tj_jit_compile_prim_func(jit, f, name, &o1, &k1);
    if (st) {
      printf("%-36s %s\n", name, tj_status_text(st));
      continue;
    }
    timing_t t0 = time_kernel(&k0, a, repeat);
    timing_t t1 = time_kernel(&k1, b, repeat);
    bool same = true;
    for (int k = 0; k < f->n_params; k++) same &= memcmp(a[k], b[k], (size_t)bytes[k]) == 0;
    printf("%-36s %10.3f %10.3f %10.3f %10.3f %7.1fx  %s\n", name, t0.cpu_min, t0.cpu_med, t1.cpu_min, t1.cpu_med,
           t0.cpu_min / t1.cpu_min, same ? "identical" : "DIFFER");
    for (int k = 0; k < f->n_params; k++) {
      tj_aligned_free(a[k]);
      tj_aligned_free(b[k]);
    }
  }
  tj_jit_free(jit);
  tj_arena_free(arena);
  return 0;
}
