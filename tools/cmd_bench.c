/* tvmjit bench: compile a model, run it after a warm-up, and report latency, GFLOP/s,
 * compile time and peak memory (text, or one JSON object with --json). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tools/cli.h"
#include "tools/inputs.h"
#include "tvmjit.h"

typedef struct bench_args {
  cli_model_args_t m; /* model, inputs, passes, threads: shared with run */
  int warmup, runs, json, no_cache, profile, verbose;
} bench_args_t;

typedef struct bench_result {
  double compile_ms, min_ms, median_ms, max_ms, mean_ms;
  double compile_cpu_ms, params_ms; /* cli_loaded_t's */
  double flops; /* per call; < 0 when unknown */
  long peak_rss_kib;
  char jit[512]; /* the module report's "jit: ..." line: kernels compiled or from the cache */
  const double *samples_ms; /* in run order */
  int n_calls;              /* --profile: kernel calls per run */
  double *call_ms;          /* --profile: runs x n_calls kernel call times */
  double *call_median_ms;   /* --profile: n_calls medians over the runs */
  double overhead_median_ms; /* --profile: median over runs of (latency - that run's kernel times) */
} bench_result_t;

static int parse_bench_args(int argc, char **argv, bench_args_t *a) {
  memset(a, 0, sizeof *a);
  cli_model_args_init(&a->m);
  a->warmup = 3;
  a->runs = 20;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    long n;
    int rc = CLI_OK;
    if (cli_model_option("bench", argc, argv, &i, &a->m, &rc)) {
      if (rc != CLI_OK) return rc;
    } else if (cli_option(argc, argv, &i, "warmup", true, &v)) {
      if (cli_parse_int(v, 0, 1000000, &n)) return cli_usage_error("bench", "--warmup takes a count from 0 to 1000000");
      a->warmup = (int)n;
    } else if (cli_option(argc, argv, &i, "runs", true, &v)) {
      if (cli_parse_int(v, 1, 1000000, &n)) return cli_usage_error("bench", "--runs takes a count from 1 to 1000000");
      a->runs = (int)n;
    } else if (cli_flag(argv[i], "no-cache", "bench", &rc)) a->no_cache = 1;
    else if (cli_flag(argv[i], "profile", "bench", &rc)) a->profile = 1;
    else if (cli_flag(argv[i], "verbose", "bench", &rc)) a->verbose = 1;
    else if (cli_flag(argv[i], "json", "bench", &rc)) a->json = 1;
    else if ((rc = cli_model_positional("bench", &a->m, argv[i])) != CLI_OK) return rc;
    if (rc != CLI_OK) return rc;
  }
  if (!a->m.model) return cli_usage_error("bench", "missing the model file (MODEL.rx)");
  return CLI_OK;
}

/* Median of v[0], v[stride], ... (n values); leaves them sorted in scratch. */
static double median(const double *v, int n, int stride, double *scratch) {
  for (int k = 0; k < n; k++) scratch[k] = v[(size_t)k * (size_t)stride];
  qsort(scratch, (size_t)n, sizeof(double), cli_compare_double);
  return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}

/* One call; the outputs it allocates are part of the measured time, as for any caller. */
static int call_once(const tvmjit_function_t *fn, const cli_bound_inputs_t *b, double *out_ms, double *call_ms) {
  enum { MAX_OUT = 64 };
  int n_out = tvmjit_function_num_outputs(fn);
  if (n_out > MAX_OUT) {
    fprintf(stderr, "tvmjit: the function returns %d outputs; bench handles at most %d\n", n_out, MAX_OUT);
    return CLI_FAILED;
  }
  tvmjit_tensor_t *outs[MAX_OUT] = {0};
  double t0 = cli_now_ms();
  tvmjit_status_t *st =
      tvmjit_function_call_profiled(fn, b->n, (const tvmjit_tensor_t *const *)b->tensors, n_out, outs, call_ms);
  *out_ms = cli_now_ms() - t0;
  for (int i = 0; i < n_out; i++) tvmjit_tensor_free(outs[i]);
  if (st) return cli_report(st), CLI_FAILED;
  return CLI_OK;
}

/* The executor's share of each run (its latency minus the kernel times of the same run),
 * median over the runs. Latency minus the sum of per-kernel medians is no overhead: a
 * median of sums is not the sum of medians: on ResNet-18 (24 calls, 30 runs, 2-vCPU VM at
 * load 16) the median latency was 429 ms against 313 ms of summed kernel medians, while
 * latency minus the same run's kernel times had a median of 0.026 ms. Clobbers scratch[0..n). */
static double run_overhead_median(const double *samples, const double *call_ms, int n, int n_calls, double *scratch) {
  for (int k = 0; k < n; k++) {
    double kernels = 0;
    for (int c = 0; c < n_calls; c++) kernels += call_ms[(size_t)k * (size_t)n_calls + (size_t)c];
    scratch[k] = samples[k] - kernels;
  }
  return median(scratch, n, 1, scratch);
}

/* Warm-up calls, then `runs` timed calls; fills the latency fields of r. */
static int measure(const bench_args_t *a, const tvmjit_function_t *fn, const cli_bound_inputs_t *b, double *samples,
                   bench_result_t *r) {
  double ms;
  for (int k = 0; k < a->warmup; k++)
    if (call_once(fn, b, &ms, r->call_ms) != CLI_OK) return CLI_FAILED;
  for (int k = 0; k < a->runs; k++)
    if (call_once(fn, b, &samples[k], r->call_ms ? r->call_ms + (size_t)k * (size_t)r->n_calls : NULL) != CLI_OK)
      return CLI_FAILED;
  int n = a->runs;
  double *sorted = malloc(sizeof(double) * (size_t)n);
  if (!sorted) {
    fprintf(stderr, "tvmjit: out of memory for %d timings\n", n);
    return CLI_FAILED;
  }
  double sum = 0;
  for (int k = 0; k < n; k++) sum += samples[k];
  r->median_ms = median(samples, n, 1, sorted);
  r->min_ms = sorted[0];
  r->max_ms = sorted[n - 1];
  r->mean_ms = sum / n;
  r->samples_ms = samples;
  for (int c = 0; c < r->n_calls; c++) r->call_median_ms[c] = median(r->call_ms + c, n, r->n_calls, sorted);
  if (r->call_ms) r->overhead_median_ms = run_overhead_median(samples, r->call_ms, n, r->n_calls, sorted);
  free(sorted);
  return CLI_OK;
}

/* --profile: each kernel call's median time and share of the summed medians; the rest of
 * the latency is the executor (argument binding, output allocation, libffi). */
static void print_profile(const bench_args_t *a, const tvmjit_function_t *fn, const bench_result_t *r) {
  const double *med = r->call_median_ms;
  double total = 0;
  for (int c = 0; c < r->n_calls; c++) total += med[c];
  printf("kernel calls (median over %d runs):\n", a->runs);
  for (int c = 0; c < r->n_calls; c++)
    printf("  %3d  %-40s %9.3f ms %5.1f%%\n", c, tvmjit_function_kernel_call_name(fn, c), med[c],
           total > 0 ? 100 * med[c] / total : 0);
  printf("  sum of kernel medians %.3f ms; median latency %.3f ms\n", total, r->median_ms);
  printf("  executor overhead (latency minus the same run's kernel times, median over runs): %.3f ms\n",
         r->overhead_median_ms);
}

static void json_string(const char *s);

static void print_json_profile(const bench_args_t *a, const tvmjit_function_t *fn, const bench_result_t *r) {
  printf(", \"profile\": [");
  for (int c = 0; c < r->n_calls; c++) {
    printf("%s{\"kernel\": ", c ? ", " : "");
    json_string(tvmjit_function_kernel_call_name(fn, c));
    printf(", \"median_ms\": %.6f}", r->call_median_ms[c]);
  }
  printf("], \"overhead_median_ms\": %.6f", r->overhead_median_ms);
}

static void json_string(const char *s) {
  if (!s) {
    printf("null");
    return;
  }
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static void print_json(const bench_args_t *a, const tvmjit_function_t *fn, const bench_result_t *r) {
  printf("{\"model\": ");
  json_string(a->m.model);
  printf(", \"function\": ");
  json_string(a->m.function);
  printf(", \"passes\": ");
  json_string(a->m.passes);
  printf(", \"mixed_precision\": ");
  json_string(a->m.mixed_precision);
  printf(", \"threads\": ");
  if (a->m.threads) printf("%d", a->m.threads);
  else printf("null");
  printf(", \"strict_float\": %s", a->m.strict_float ? "true" : "false");
  printf(", \"warmup\": %d, \"runs\": %d, \"compile_ms\": %.3f, \"compile_cpu_ms\": %.3f, \"params_ms\": %.3f, \"jit\": ",
         a->warmup, a->runs, r->compile_ms, r->compile_cpu_ms, r->params_ms);
  json_string(r->jit);
  printf(", \"latency_ms\": {\"min\": %.6f, \"median\": %.6f, \"max\": %.6f, \"mean\": %.6f}", r->min_ms,
         r->median_ms, r->max_ms, r->mean_ms);
  if (r->flops >= 0)
    printf(", \"flops\": %.0f, \"gflops_median\": %.4f, \"gflops_best\": %.4f", r->flops,
           r->flops / r->median_ms / 1e6, r->flops / r->min_ms / 1e6);
  else
    printf(", \"flops\": null, \"gflops_median\": null, \"gflops_best\": null");
  if (r->call_ms) print_json_profile(a, fn, r);
  printf(", \"peak_rss_kib\": %ld, \"samples_ms\": [", r->peak_rss_kib);
  for (int k = 0; k < a->runs; k++) printf("%s%.6f", k ? ", " : "", r->samples_ms[k]);
  printf("]}\n");
}

static void print_text(const bench_args_t *a, const bench_result_t *r) {
  char threads[32] = "default";
  if (a->m.threads) snprintf(threads, sizeof threads, "%d", a->m.threads);
  printf("model %s (%s), passes %s, mixed precision %s, threads %s\n", a->m.model, a->m.function, a->m.passes,
         a->m.mixed_precision ? a->m.mixed_precision : "off", threads);
  printf("compile: %.1f ms (parse, passes and JIT; %.1f ms CPU)", r->compile_ms, r->compile_cpu_ms);
  if (a->m.bind_params) printf(", of which %.1f ms reading --params", r->params_ms);
  printf("\n");
  if (r->jit[0]) printf("  %s\n", r->jit);
  printf("latency over %d runs after %d warm-up: min %.3f ms, median %.3f ms, max %.3f ms\n", a->runs, a->warmup,
         r->min_ms, r->median_ms, r->max_ms);
  if (r->flops >= 0)
    printf("work: %.1f MFLOP per call: %.2f GFLOP/s at the median, %.2f at the best run\n", r->flops / 1e6,
           r->flops / r->median_ms / 1e6, r->flops / r->min_ms / 1e6);
  else
    printf("work: FLOPs unknown (operators not lowered to TIR, or symbolic loops)\n");
  printf("peak RSS: %.1f MiB\n", r->peak_rss_kib / 1024.0);
}

static int bench_loaded(const bench_args_t *a, const tvmjit_function_t *fn, bench_result_t *r) {
  cli_bound_inputs_t b;
  memset(&b, 0, sizeof b);
  int rc = cli_bind_inputs(&a->m, fn, &b);
  double *samples = rc == CLI_OK ? malloc(sizeof(double) * (size_t)a->runs) : NULL;
  double first_ms;
  /* A symbolic function's call list is made for the inputs' shapes by its first call. */
  if (a->profile && rc == CLI_OK) rc = call_once(fn, &b, &first_ms, NULL);
  if (a->profile) {
    r->n_calls = tvmjit_function_num_kernel_calls(fn);
    r->call_ms = calloc((size_t)a->runs * (size_t)r->n_calls + 1, sizeof(double));
    r->call_median_ms = calloc((size_t)r->n_calls + 1, sizeof(double));
  }
  if (rc == CLI_OK && (!samples || (a->profile && (!r->call_ms || !r->call_median_ms)))) {
    fprintf(stderr, "tvmjit: out of memory for %d timings\n", a->runs);
    rc = CLI_FAILED;
  }
  if (rc == CLI_OK) rc = measure(a, fn, &b, samples, r);
  if (rc == CLI_OK) {
    struct rusage ru;
    r->peak_rss_kib = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1; /* KiB on Linux */
    r->flops = tvmjit_function_flops(fn);
    if (a->json) print_json(a, fn, r);
    else print_text(a, r);
    if (!a->json && r->call_ms) print_profile(a, fn, r);
  }
  free(samples);
  free(r->call_ms);
  free(r->call_median_ms);
  cli_free_bound(&b);
  return rc;
}

static int run_bench(int argc, char **argv) {
  bench_args_t a;
  int rc = parse_bench_args(argc, argv, &a);
  if (rc != CLI_OK) return rc;
  tvmjit_instance_options_t iopts;
  tvmjit_module_options_t mopts;
  cli_model_options(&a.m, a.no_cache, &iopts, &mopts);
  mopts.time_passes = a.verbose;
  cli_loaded_t l;
  bench_result_t r = {0};
  rc = cli_load(&a.m, &iopts, &mopts, false, &l);
  r.compile_ms = l.compile_ms;
  r.compile_cpu_ms = l.compile_cpu_ms;
  r.params_ms = l.params_ms;
  if (rc == CLI_OK && a.verbose) fputs(tvmjit_module_report(l.mod), stderr);
  if (rc == CLI_OK) {
    /* Compile time depends on the kernel cache: keep the line that says what it did. */
    const char *jit = strstr(tvmjit_module_report(l.mod), "jit: ");
    if (jit) snprintf(r.jit, sizeof r.jit, "%.*s", (int)strcspn(jit, "\n"), jit);
    rc = bench_loaded(&a, l.fn, &r);
  }
  cli_unload(&l);
  return rc;
}

const cli_command_t cli_cmd_bench = {
    "bench", "measure a model: latency, GFLOP/s, compile time, memory",
    "usage: tvmjit bench MODEL.rx [options]\n"
    "\n"
    "Compiles MODEL.rx as 'tvmjit run' does, calls one of its functions --warmup times,\n"
    "then --runs times with a clock around each call (output allocation included), and\n"
    "reports min/median/max latency, GFLOP/s, compile time and peak RSS.\n"
    "\n"
    "inputs (as for 'tvmjit run'):\n"
    "  --function NAME             the Relax function to run (default main)\n"
    "  --input [NAME=]FILE.npy     bind parameters in order, or by name (repeatable)\n"
    "  --params FILE.npz           bind parameters by name (keys are parameter names)\n"
    "  --bind-params               the --params tensors become constants of the model (BindParams),\n"
    "                              and what depends on them only is computed at load (FoldConstant)\n"
    "  --fill zeros|ones|random    fill parameters not given otherwise; --seed N for random\n"
    "compilation:\n"
    "  --passes none|default|P1,P2(opt=...),...   pass pipeline (default: default)\n"
    "  --mixed-precision[=float32|float16|bfloat16]  run ToMixedPrecision first: float32\n"
    "                              accumulates in float32, float16 in float16 (both store\n"
    "                              float16), bfloat16 stores bfloat16 and accumulates in float32\n"
    "  --convert-inputs            convert float inputs of another float dtype (see run --help)\n"
    "  --threads N                 worker threads (default: TVMJIT_NUM_THREADS or cores)\n"
    "  --no-schedule               compile kernels as plain loops (no CPU schedule)\n"
    "  --no-prepack                kernels repack constant weights every call (for comparison)\n"
    "  --strict-float              float32 exactly as the IR's operations, in its order (by\n"
    "                              default, as TVM compiles it, a*b+c may become one FMA and\n"
    "                              a conv may reorder its sum; float16 is always exact)\n"
    "  --no-cache                  compile every kernel; do not read or write the kernel cache\n"
    "                              (the compile time is then a cold compile)\n"
    "measuring:\n"
    "  --warmup N                  untimed calls first (default 3)\n"
    "  --runs N                    timed calls (default 20)\n"
    "  --profile                   also time every kernel call and print each one's median,\n"
    "                              and the executor's overhead: each run's latency minus its\n"
    "                              kernel times, median over the runs\n"
    "  --verbose                   compile phases on stderr: each pass's time, then the JIT's\n"
    "                              (lower, codegen, optimize, emit, link)\n"
    "  --json                      one JSON object on stdout: model, passes, threads,\n"
    "                              strict_float,\n"
    "                              compile_ms, compile_cpu_ms, params_ms (reading --params\n"
    "                              for --bind-params), jit (kernels compiled / from the cache),\n"
    "                              latency_ms {min, median, max, mean}, flops,\n"
    "                              gflops_median, gflops_best, profile (with --profile:\n"
    "                              [{kernel, median_ms}] per call), overhead_median_ms, peak_rss_kib, samples_ms\n"
    "\n"
    "FLOPs are counted from the kernels' TIR after the passes: each float +, -, *, /,\n"
    "min, max, compare or math call once per loop iteration (a multiply-add is 2);\n"
    "index arithmetic, casts, loads and stores count nothing. The seed network's three\n"
    "convolutions are 226.5 MFLOP of it.\n"
    "\n"
    "exit status: 0 success, 1 bad model or input, 2 usage error\n",
    run_bench};
