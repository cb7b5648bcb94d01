/* tvmjit run: compile a model for this CPU and run it on inputs from .npy/.npz files. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/cli.h"
#include "tvmjit.h"

enum { MAX_INPUTS = 64 };

typedef struct run_args {
  const char *model, *function, *params, *output, *fill, *passes, *mixed_precision;
  const char *print_ir_before, *print_ir_after;
  const char *inputs[MAX_INPUTS];
  int n_inputs, repeat, threads;
  unsigned long seed;
  int verbose, time_passes, print_ir_after_all, print_memory_plan;
} run_args_t;

static int parse_int(const char *s, long lo, long hi, long *out) {
  char *end;
  if (!s || !*s) return -1;
  long v = strtol(s, &end, 10);
  if (*end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int parse_run_args(int argc, char **argv, run_args_t *a) {
  memset(a, 0, sizeof *a);
  a->function = "main";
  a->passes = "default";
  a->repeat = 1;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    long n;
    if (cli_option(argc, argv, &i, "function", true, &v)) a->function = v;
    else if (cli_option(argc, argv, &i, "input", true, &v)) {
      if (a->n_inputs == MAX_INPUTS) return cli_usage_error("run", "at most %d --input options", MAX_INPUTS);
      a->inputs[a->n_inputs++] = v;
    } else if (cli_option(argc, argv, &i, "params", true, &v)) a->params = v;
    else if (cli_option(argc, argv, &i, "output", true, &v)) a->output = v;
    else if (cli_option(argc, argv, &i, "fill", true, &v)) {
      if (!v || (strcmp(v, "zeros") && strcmp(v, "ones") && strcmp(v, "random")))
        return cli_usage_error("run", "--fill takes zeros, ones or random");
      a->fill = v;
    } else if (cli_option(argc, argv, &i, "seed", true, &v)) {
      if (parse_int(v, 0, LONG_MAX, &n)) return cli_usage_error("run", "--seed takes a non-negative integer");
      a->seed = (unsigned long)n;
    } else if (cli_option(argc, argv, &i, "passes", true, &v)) a->passes = v;
    else if (cli_option(argc, argv, &i, "mixed-precision", false, &v)) {
      if (v && strcmp(v, "float16") && strcmp(v, "float32"))
        return cli_usage_error("run", "--mixed-precision takes float16 or float32 (default float32)");
      a->mixed_precision = v ? v : "float32";
    } else if (cli_option(argc, argv, &i, "repeat", true, &v)) {
      if (parse_int(v, 1, 1000000, &n)) return cli_usage_error("run", "--repeat takes a count from 1 to 1000000");
      a->repeat = (int)n;
    } else if (cli_option(argc, argv, &i, "threads", true, &v)) {
      if (parse_int(v, 1, 1024, &n)) return cli_usage_error("run", "--threads takes a count from 1 to 1024");
      a->threads = (int)n;
    } else if (cli_option(argc, argv, &i, "verbose", false, &v)) a->verbose = 1;
    else if (cli_option(argc, argv, &i, "time-passes", false, &v)) a->time_passes = 1;
    else if (cli_option(argc, argv, &i, "print-ir-after-all", false, &v)) a->print_ir_after_all = 1;
    else if (cli_option(argc, argv, &i, "print-ir-after", true, &v)) a->print_ir_after = v;
    else if (cli_option(argc, argv, &i, "print-ir-before", true, &v)) a->print_ir_before = v;
    else if (cli_option(argc, argv, &i, "print-memory-plan", false, &v)) a->print_memory_plan = 1;
    else if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("run", "unknown option '%s'", argv[i]);
    else if (a->model) return cli_usage_error("run", "expected one model file, got '%s' and '%s'", a->model, argv[i]);
    else a->model = argv[i];
    if (!v && (strcmp(argv[i], "--input") == 0 || strcmp(argv[i], "--params") == 0 ||
                           strcmp(argv[i], "--output") == 0 || strcmp(argv[i], "--function") == 0 ||
                           strcmp(argv[i], "--passes") == 0))
      return cli_usage_error("run", "option '%s' needs a value", argv[i]);
  }
  if (!a->model) return cli_usage_error("run", "missing the model file (MODEL.rx)");
  return CLI_OK;
}

/* ---- binding inputs ---- */

typedef struct bound_inputs {
  int n;
  tvmjit_tensor_t *tensors[MAX_INPUTS];
  const char *sources[MAX_INPUTS]; /* where each came from, for messages */
  int npz_count;
  char **npz_names;
  tvmjit_tensor_t **npz_tensors;
} bound_inputs_t;

static void free_bound(bound_inputs_t *b) {
  for (int i = 0; i < b->n; i++) {
    bool from_npz = false;
    for (int k = 0; k < b->npz_count; k++) from_npz |= b->tensors[i] == b->npz_tensors[k];
    if (!from_npz) tvmjit_tensor_free(b->tensors[i]);
  }
  if (b->npz_names) tvmjit_npz_free(b->npz_count, b->npz_names, b->npz_tensors);
}

static int param_index(const tvmjit_function_t *fn, const char *name) {
  for (int i = 0; i < tvmjit_function_num_inputs(fn); i++) {
    const char *pname;
    tvmjit_function_input_info(fn, i, &pname, NULL, NULL, NULL);
    if (strcmp(pname, name) == 0) return i;
  }
  return -1;
}

static void list_params(const tvmjit_function_t *fn, char *buf, size_t len) {
  buf[0] = '\0';
  for (int i = 0; i < tvmjit_function_num_inputs(fn); i++) {
    const char *pname;
    tvmjit_function_input_info(fn, i, &pname, NULL, NULL, NULL);
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", i ? ", " : "", pname);
  }
}

static void type_str(tvmjit_dtype_t dt, int ndim, const int64_t *shape, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s[", tvmjit_dtype_name(dt));
  for (int d = 0; d < ndim && n < (int)len; d++) n += snprintf(buf + n, len - (size_t)n, "%s%lld", d ? ", " : "", (long long)shape[d]);
  if (n < (int)len) snprintf(buf + n, len - (size_t)n, "]");
}

/* Checks a given tensor against parameter i; prints the message and returns false on mismatch. */
static bool check_input(const tvmjit_function_t *fn, int i, const tvmjit_tensor_t *t, const char *source) {
  const char *name;
  tvmjit_dtype_t dt;
  int ndim;
  const int64_t *shape;
  tvmjit_function_input_info(fn, i, &name, &dt, &ndim, &shape);
  bool ok = dt == tvmjit_tensor_dtype(t) && ndim == tvmjit_tensor_ndim(t) &&
            memcmp(shape, tvmjit_tensor_shape(t), sizeof(int64_t) * (size_t)ndim) == 0;
  if (!ok) {
    char want[256], got[256];
    type_str(dt, ndim, shape, want, sizeof want);
    type_str(tvmjit_tensor_dtype(t), tvmjit_tensor_ndim(t), tvmjit_tensor_shape(t), got, sizeof got);
    fprintf(stderr, "tvmjit: input '%s': expected %s, got %s from %s\n", name, want, got, source);
  }
  return ok;
}

static double next_random(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return (double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0; /* uniform in [-1, 1) */
}

static tvmjit_status_t *fill_tensor(const tvmjit_function_t *fn, int i, const char *how, uint64_t *rng,
                                    tvmjit_tensor_t **out) {
  tvmjit_dtype_t dt;
  int ndim;
  const int64_t *shape;
  tvmjit_function_input_info(fn, i, NULL, &dt, &ndim, &shape);
  tvmjit_tensor_t *t;
  tvmjit_status_t *st = tvmjit_tensor_new(TVMJIT_FLOAT64, ndim, shape, &t);
  if (st) return st;
  double *v = tvmjit_tensor_data(t);
  size_t n = tvmjit_tensor_nbytes(t) / sizeof(double);
  for (size_t k = 0; k < n; k++) v[k] = strcmp(how, "ones") == 0 ? 1.0 : strcmp(how, "random") == 0 ? next_random(rng) : 0.0;
  /* Values are made in float64, then converted element-wise to the parameter dtype. */
  tvmjit_tensor_t *typed;
  st = tvmjit_tensor_new(dt, ndim, shape, &typed);
  if (!st) st = tvmjit_tensor_convert(t, typed);
  tvmjit_tensor_free(t);
  if (st) {
    tvmjit_tensor_free(typed);
    return st;
  }
  *out = typed;
  return NULL;
}

static int bind_inputs(const run_args_t *a, const tvmjit_function_t *fn, bound_inputs_t *b) {
  int n_params = tvmjit_function_num_inputs(fn);
  char names[1024];
  list_params(fn, names, sizeof names);
  b->n = n_params;
  tvmjit_status_t *st;
  int next_positional = 0;
  for (int k = 0; k < a->n_inputs; k++) {
    const char *spec = a->inputs[k], *eq = strchr(spec, '=');
    const char *path = eq ? eq + 1 : spec;
    int idx;
    if (eq) {
      char pname[256];
      snprintf(pname, sizeof pname, "%.*s", (int)(eq - spec), spec);
      idx = param_index(fn, pname);
      if (idx < 0) {
        fprintf(stderr, "tvmjit: --input '%s': %s has no parameter '%s' (parameters: %s)\n", spec, a->function, pname, names);
        return CLI_FAILED;
      }
    } else {
      while (next_positional < n_params && b->tensors[next_positional]) next_positional++;
      idx = next_positional;
      if (idx >= n_params) {
        fprintf(stderr, "tvmjit: --input '%s': %s takes %d parameters (%s) and all are already given\n", spec,
                a->function, n_params, names);
        return CLI_FAILED;
      }
    }
    if (b->tensors[idx]) {
      fprintf(stderr, "tvmjit: --input '%s': parameter %d is given twice\n", spec, idx);
      return CLI_FAILED;
    }
    if ((st = tvmjit_tensor_load_npy(path, &b->tensors[idx]))) return cli_report(st), CLI_FAILED;
    b->sources[idx] = path;
    if (!check_input(fn, idx, b->tensors[idx], path)) return CLI_FAILED;
  }
  if (a->params) {
    if ((st = tvmjit_npz_load(a->params, &b->npz_count, &b->npz_names, &b->npz_tensors)))
      return cli_report(st), CLI_FAILED;
    for (int k = 0; k < b->npz_count; k++) {
      int idx = param_index(fn, b->npz_names[k]);
      if (idx < 0) {
        fprintf(stderr, "tvmjit: %s: key '%s' is not a parameter of %s (parameters: %s)\n", a->params,
                b->npz_names[k], a->function, names);
        return CLI_FAILED;
      }
      if (b->tensors[idx]) continue; /* --input wins over --params */
      b->tensors[idx] = b->npz_tensors[k];
      b->sources[idx] = a->params;
      if (!check_input(fn, idx, b->tensors[idx], a->params)) return CLI_FAILED;
    }
  }
  uint64_t rng = 0x9e3779b97f4a7c15ull ^ (a->seed * 0x2545f4914f6cdd1dull + 1);
  for (int i = 0; i < n_params; i++) {
    if (b->tensors[i]) continue;
    const char *pname;
    tvmjit_function_input_info(fn, i, &pname, NULL, NULL, NULL);
    if (!a->fill) {
      fprintf(stderr,
              "tvmjit: input '%s' is missing: give --input %s=FILE.npy, --params FILE.npz with a key '%s', or --fill zeros|ones|random\n",
              pname, pname, pname);
      return CLI_FAILED;
    }
    if ((st = fill_tensor(fn, i, a->fill, &rng, &b->tensors[i]))) return cli_report(st), CLI_FAILED;
    b->sources[i] = a->fill;
  }
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
  type_str(tvmjit_tensor_dtype(t), tvmjit_tensor_ndim(t), tvmjit_tensor_shape(t), type, sizeof type);
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
    char names_buf[MAX_INPUTS][32];
    const char *names[MAX_INPUTS];
    for (int i = 0; i < n && i < MAX_INPUTS; i++) {
      snprintf(names_buf[i], sizeof names_buf[i], n == 1 ? "output" : "output%d", i);
      names[i] = names_buf[i];
    }
    st = tvmjit_npz_save(a->output, n, names, (const tvmjit_tensor_t *const *)outs);
  } else if (ends_with(a->output, ".npy")) {
    if (n != 1) {
      fprintf(stderr, "tvmjit: %s returns %d outputs; write them with --output FILE.npz\n", a->function, n);
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

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int compare_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static int execute(const run_args_t *a, const tvmjit_function_t *fn, bound_inputs_t *b) {
  int n_out = tvmjit_function_num_outputs(fn);
  if (n_out > MAX_INPUTS) n_out = MAX_INPUTS;
  tvmjit_tensor_t *outs[MAX_INPUTS] = {0};
  double *times = malloc(sizeof(double) * (size_t)a->repeat);
  if (!times) {
    fprintf(stderr, "tvmjit: out of memory for %d timings\n", a->repeat);
    return CLI_FAILED;
  }
  int rc = CLI_OK;
  for (int r = 0; r < a->repeat && rc == CLI_OK; r++) {
    for (int i = 0; i < n_out; i++) tvmjit_tensor_free(outs[i]), outs[i] = NULL;
    double t0 = now_ms();
    tvmjit_status_t *st =
        tvmjit_function_call(fn, b->n, (const tvmjit_tensor_t *const *)b->tensors, n_out, outs);
    times[r] = now_ms() - t0;
    if (st) cli_report(st), rc = CLI_FAILED;
  }
  if (rc == CLI_OK && a->repeat > 1) {
    qsort(times, (size_t)a->repeat, sizeof(double), compare_double);
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
  tvmjit_instance_options_t iopts;
  tvmjit_instance_options_init(&iopts);
  iopts.num_threads = a.threads;
  tvmjit_module_options_t mopts;
  tvmjit_module_options_init(&mopts);
  mopts.passes = a.passes;
  mopts.mixed_precision = a.mixed_precision;
  mopts.ir_dump = stdout;
  mopts.print_ir_before = a.print_ir_before;
  mopts.print_ir_after = a.print_ir_after;
  mopts.print_ir_after_all = a.print_ir_after_all;
  mopts.time_passes = a.time_passes;
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  tvmjit_status_t *st = tvmjit_instance_create(&iopts, &inst);
  if (!st) st = tvmjit_module_load_file(inst, a.model, &mopts, &mod);
  if (!st) st = tvmjit_module_get_function(mod, a.function, &fn);
  if (st) {
    /* A bad --passes / --mixed-precision value is a usage error. */
    rc = tvmjit_status_code(st) == TVMJIT_INVALID_ARGUMENT ? CLI_USAGE : CLI_FAILED;
    cli_report(st);
  } else {
    if (a.verbose || a.time_passes) fputs(tvmjit_module_report(mod), stderr);
    if (a.print_memory_plan) fputs(tvmjit_function_memory_plan(fn), stdout);
    bound_inputs_t b;
    memset(&b, 0, sizeof b);
    rc = bind_inputs(&a, fn, &b);
    if (rc == CLI_OK) rc = execute(&a, fn, &b);
    free_bound(&b);
  }
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
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
    "  --fill zeros|ones|random    fill parameters not given otherwise; --seed N for random\n"
    "outputs:\n"
    "  --output FILE.npy|FILE.npz  write the result(s); without it print shape, dtype,\n"
    "                              min, max, mean and the first values\n"
    "compilation:\n"
    "  --passes none|default|P1,P2(opt=...),...   pass pipeline (default: default =\n"
    "                              LegalizeOps,AnnotateTIROpPattern,FuseOps,FuseTIR)\n"
    "  --mixed-precision[=float32|float16]  run ToMixedPrecision(out_dtype=...) first\n"
    "  --print-ir-before=P, --print-ir-after=P, --print-ir-after-all, --time-passes\n"
    "  --print-memory-plan         show each intermediate's slot in the workspace\n"
    "running:\n"
    "  --repeat N                  run N times and report min/median/max latency\n"
    "  --threads N                 worker threads (accepted; kernels run on one thread until\n"
    "                              the parallel runtime lands)\n"
    "  --verbose                   compile statistics (kernels compiled, times)\n"
    "\n"
    "exit status: 0 success, 1 bad model or input (nothing is written), 2 usage error\n",
    run_run};
