/* tvmjit run: compile a model for this CPU and run it on inputs from .npy/.npz files. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/cli.h"
#include "tools/inputs.h"
#include "tvmjit.h"

typedef struct run_args {
  cli_model_args_t m; /* model, inputs, passes, threads: shared with bench */
  const char *output;
  const char *print_ir_before, *print_ir_after;
  int repeat;
  int verbose, time_passes, print_ir_after_all, print_memory_plan;
  int no_cache, cache_debug;
} run_args_t;

static int parse_run_args(int argc, char **argv, run_args_t *a) {
  memset(a, 0, sizeof *a);
  cli_model_args_init(&a->m);
  a->repeat = 1;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    long n;
    int rc = CLI_OK;
    if (cli_model_option("run", argc, argv, &i, &a->m, &rc)) {
      if (rc != CLI_OK) return rc;
      continue;
    }
    if (cli_option(argc, argv, &i, "output", true, &v)) a->output = v;
    else if (cli_option(argc, argv, &i, "repeat", true, &v)) {
      if (cli_parse_int(v, 1, 1000000, &n)) return cli_usage_error("run", "--repeat takes a count from 1 to 1000000");
      a->repeat = (int)n;
    } else if (cli_flag(argv[i], "verbose", "run", &rc)) a->verbose = 1;
    else if (cli_flag(argv[i], "time-passes", "run", &rc)) a->time_passes = 1;
    else if (cli_flag(argv[i], "print-ir-after-all", "run", &rc)) a->print_ir_after_all = 1;
    else if (cli_option(argc, argv, &i, "print-ir-after", true, &v)) a->print_ir_after = v;
    else if (cli_option(argc, argv, &i, "print-ir-before", true, &v)) a->print_ir_before = v;
    else if (cli_flag(argv[i], "print-memory-plan", "run", &rc)) a->print_memory_plan = 1;
    else if (cli_flag(argv[i], "no-cache", "run", &rc)) a->no_cache = 1;
    else if (cli_flag(argv[i], "cache-debug", "run", &rc)) a->cache_debug = 1;
    else if ((rc = cli_model_positional("run", &a->m, argv[i])) != CLI_OK) return rc;
    if (rc != CLI_OK) return rc;
    if (!v && strcmp(argv[i], "--output") == 0) return cli_usage_error("run", "option '%s' needs a value", argv[i]);
  }
  if (!a->m.model) return cli_usage_error("run", "missing the model file (MODEL.rx)");
  return CLI_OK;
}

/* ---- results ---- */

static void print_summary(int i, const tvmjit_tensor_t *t) {
  tvmjit_tensor_t *f64 = NULL;
  tvmjit_status_t *st = tvmjit_tensor_new(TVMJIT_FLOAT64, tvmjit_tensor_ndim(t), tvmjit_tensor_shape(t), &f64);
  if (!st) st = tvmjit_tensor_convert(t, f64);
  if (st) {
    cli_report(st);
    tvmjit_tensor_free(f64);
    return;
  }
  const double *v = tvmjit_tensor_data(f64);
  size_t n = tvmjit_tensor_nbytes(f64) / sizeof(double);
  double lo = n ? v[0] : 0, hi = lo, sum = 0;
  for (size_t k = 0; k < n; k++) {
    lo = v[k] < lo ? v[k] : lo;
    hi = v[k] > hi ? v[k] : hi;
    sum += v[k];
  }
  char type[256];
  cli_type_str(tvmjit_tensor_dtype(t), tvmjit_tensor_ndim(t), tvmjit_tensor_shape(t), type, sizeof type);
  printf("output %d: %s min %.6g max %.6g mean %.6g\n  first values:", i, type, lo, hi, n ? sum / (double)n : 0.0);
  for (size_t k = 0; k < n && k < 8; k++) printf(" %.6g", v[k]);
  printf("\n");
  tvmjit_tensor_free(f64);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int write_outputs(const run_args_t *a, int n, tvmjit_tensor_t **outs) {
  tvmjit_status_t *st = NULL;
  if (ends_with(a->output, ".npz")) {
    char names_buf[CLI_MAX_INPUTS][32];
    const char *names[CLI_MAX_INPUTS];
    for (int i = 0; i < n && i < CLI_MAX_INPUTS; i++) {
      snprintf(names_buf[i], sizeof names_buf[i], n == 1 ? "output" : "output%d", i);
      names[i] = names_buf[i];
    }
    st = tvmjit_npz_save(a->output, n, names, (const tvmjit_tensor_t *const *)outs);
  } else if (ends_with(a->output, ".npy")) {
    if (n != 1) {
      fprintf(stderr, "tvmjit: %s returns %d outputs; write them with --output FILE.npz\n", a->m.function, n);
      return CLI_FAILED;
    }
    st = tvmjit_tensor_save_npy(a->output, outs[0]);
  } else {
    fprintf(stderr, "tvmjit: --output '%s': the file name must end in .npy or .npz\n", a->output);
    return CLI_FAILED;
  }
  if (st) return cli_report(st), CLI_FAILED;
  return CLI_OK;
}

static int execute(const run_args_t *a, const tvmjit_function_t *fn, cli_bound_inputs_t *b) {
  int n_out = tvmjit_function_num_outputs(fn);
  if (n_out > CLI_MAX_INPUTS) {
    fprintf(stderr, "tvmjit: %s returns %d outputs; run handles at most %d\n", a->m.function, n_out, CLI_MAX_INPUTS);
    return CLI_FAILED;
  }
  tvmjit_tensor_t *outs[CLI_MAX_INPUTS] = {0};
  double *times = malloc(sizeof(double) * (size_t)a->repeat);
  if (!times) {
    fprintf(stderr, "tvmjit: out of memory for %d timings\n", a->repeat);
    return CLI_FAILED;
  }
  int rc = CLI_OK;
  for (int r = 0; r < a->repeat && rc == CLI_OK; r++) {
    for (int i = 0; i < n_out; i++) tvmjit_tensor_free(outs[i]), outs[i] = NULL;
    double t0 = cli_now_ms();
    tvmjit_status_t *st =
        tvmjit_function_call(fn, b->n, (const tvmjit_tensor_t *const *)b->tensors, n_out, outs);
    times[r] = cli_now_ms() - t0;
    if (st) cli_report(st), rc = CLI_FAILED;
  }
  if (rc == CLI_OK && a->repeat > 1) {
    qsort(times, (size_t)a->repeat, sizeof(double), cli_compare_double);
    fprintf(stderr, "latency over %d runs: min %.3f ms, median %.3f ms, max %.3f ms\n", a->repeat, times[0],
            times[a->repeat / 2], times[a->repeat - 1]);
  }
  if (rc == CLI_OK) {
    if (a->output) rc = write_outputs(a, n_out, outs);
    else
      for (int i = 0; i < n_out; i++) print_summary(i, outs[i]);
  }
  for (int i = 0; i < n_out; i++) tvmjit_tensor_free(outs[i]);
  free(times);
  return rc;
}

static int run_run(int argc, char **argv) {
  run_args_t a;
  int rc = parse_run_args(argc, argv, &a);
  if (rc != CLI_OK) return rc;
  if (a.output && !cli_check_output_path(a.output)) return CLI_FAILED; /* before the long work */
  tvmjit_instance_options_t iopts;
  tvmjit_module_options_t mopts;
  cli_model_options(&a.m, a.no_cache, &iopts, &mopts);
  mopts.ir_dump = stdout;
  mopts.print_ir_before = a.print_ir_before;
  mopts.print_ir_after = a.print_ir_after;
  mopts.print_ir_after_all = a.print_ir_after_all;
  mopts.time_passes = a.time_passes;
  if (a.cache_debug) mopts.cache_debug = 1;
  cli_loaded_t l;
  rc = cli_load(&a.m, &iopts, &mopts, true, &l);
  if (rc == CLI_OK) {
    if (a.print_memory_plan) fputs(tvmjit_function_memory_plan(l.fn), stdout);
    cli_bound_inputs_t b;
    memset(&b, 0, sizeof b);
    rc = cli_bind_inputs(&a.m, l.fn, &b);
    if (rc == CLI_OK) rc = execute(&a, l.fn, &b);
    cli_free_bound(&b);
    /* After the run: a symbolic function compiles on its first call. */
    if (a.verbose || a.time_passes) fputs(tvmjit_module_report(l.mod), stderr);
  }
  cli_unload(&l);
  return rc;
}

const cli_command_t cli_cmd_run = {
    "run", "compile a model for this CPU and run it",
    "usage: tvmjit run MODEL.rx [options]\n"
    "\n"
    "Compiles MODEL.rx (passes, then LLVM for this CPU) and runs one of its functions.\n"
    "\n"
    "inputs:\n"
    "  --function NAME             the Relax function to run (default main)\n"
    "  --input [NAME=]FILE.npy     bind parameters in order, or by name (repeatable)\n"
    "  --params FILE.npz           bind parameters by name (keys are parameter names)\n"
    "  --bind-params               the --params tensors become constants of the model (BindParams),\n"
    "                              and what depends on them only is computed at load (FoldConstant)\n"
    "  --fill zeros|ones|random    fill parameters not given otherwise; --seed N for random\n"
    "outputs:\n"
    "  --output FILE.npy|FILE.npz  write the result(s); without it print shape, dtype,\n"
    "                              min, max, mean and the first values\n"
    "compilation:\n"
    "  --passes none|default|P1,P2(opt=...),...   pass pipeline (default: default =\n"
    "                              DispatchSortScan,LegalizeOps,AnnotateTIROpPattern,\n"
    "                              FuseOps,FuseTIR)\n"
    "  --mixed-precision[=float32|float16|bfloat16]  run ToMixedPrecision first: float32 stores\n"
    "                              in float16 and accumulates in float32, float16 does both in\n"
    "                              float16, bfloat16 stores in bfloat16, accumulates in float32\n"
    "  --convert-inputs            an --input/--params array of another float dtype than its\n"
    "                              parameter's is converted to it (e.g. float32 .npy for a\n"
    "                              bfloat16 input: rounded to nearest even); without it, an error\n"
    "  --print-ir-before=P, --print-ir-after=P, --print-ir-after-all, --time-passes\n"
    "  --print-memory-plan         show each intermediate's slot in the workspace\n"
    "  --no-schedule               compile kernels as plain loops (no CPU schedule)\n"
    "  --no-prepack                kernels repack constant weights every call (for comparison)\n"
    "  --strict-float              float32 exactly as the IR's operations, in its order (by\n"
    "                              default, as TVM compiles it, a*b+c may become one FMA and\n"
    "                              a conv may reorder its sum; float16 is always exact)\n"
    "  --no-cache                  compile every kernel; do not read or write the kernel cache\n"
    "                              (also TVMJIT_CACHE=0; see 'tvmjit cache --help')\n"
    "  --cache-debug               per kernel: cache hit or miss, the key and a hash of each\n"
    "                              key component (compare two runs to see why one missed)\n"
    "running:\n"
    "  --repeat N                  run N times and report min/median/max latency\n"
    "  --threads N                 threads for parallel loops (default: TVMJIT_NUM_THREADS,\n"
    "                              else every core); results are the same bits for any N\n"
    "  --verbose                   compile statistics (kernels compiled, times)\n"
    "\n"
    "exit status: 0 success, 1 bad model or input (nothing is written), 2 usage error\n",
    run_run};
