/* Options and input binding shared by tvmjit run and tvmjit bench (tools/inputs.h). */
#include "tools/inputs.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

void cli_model_args_init(cli_model_args_t *a) {
  memset(a, 0, sizeof *a);
  a->function = "main";
  a->passes = "default";
}

int cli_parse_int(const char *s, long lo, long hi, long *out) {
  char *end;
  if (!s || !*s) return -1;
  long v = strtol(s, &end, 10);
  if (*end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

bool cli_model_option(const char *cmd, int argc, char **argv, int *i, cli_model_args_t *a, int *rc) {
  const char *v = NULL;
  long n;
  *rc = CLI_OK;
  if (cli_option(argc, argv, i, "function", true, &v)) a->function = v;
  else if (cli_option(argc, argv, i, "input", true, &v)) {
    if (a->n_inputs == CLI_MAX_INPUTS) return *rc = cli_usage_error(cmd, "at most %d --input options", CLI_MAX_INPUTS), true;
    a->inputs[a->n_inputs++] = v;
  } else if (cli_option(argc, argv, i, "params", true, &v)) a->params = v;
  else if (cli_option(argc, argv, i, "fill", true, &v)) {
    if (!v || (strcmp(v, "zeros") && strcmp(v, "ones") && strcmp(v, "random")))
      return *rc = cli_usage_error(cmd, "--fill takes zeros, ones or random"), true;
    a->fill = v;
  } else if (cli_option(argc, argv, i, "seed", true, &v)) {
    if (cli_parse_int(v, 0, LONG_MAX, &n)) return *rc = cli_usage_error(cmd, "--seed takes a non-negative integer"), true;
    a->seed = (unsigned long)n;
  } else if (cli_option(argc, argv, i, "passes", true, &v)) a->passes = v;
  else if (cli_option(argc, argv, i, "mixed-precision", false, &v)) {
    if (v && strcmp(v, "float16") && strcmp(v, "float32") && strcmp(v, "bfloat16"))
      return *rc = cli_usage_error(cmd, "%s", "--mixed-precision takes float32, float16 or bfloat16 (default float32)"), true;
    a->mixed_precision = v ? v : "float32";
  } else if (cli_flag(argv[*i], "no-schedule", cmd, rc)) a->no_schedule = 1;
  else if (cli_flag(argv[*i], "no-prepack", cmd, rc)) a->no_prepack = 1;
  else if (cli_flag(argv[*i], "strict-float", cmd, rc)) a->strict_float = 1;
  else if (cli_flag(argv[*i], "bind-params", cmd, rc)) a->bind_params = 1;
  else if (cli_flag(argv[*i], "convert-inputs", cmd, rc)) a->convert_inputs = 1;
  else if (cli_option(argc, argv, i, "threads", true, &v)) {
    if (cli_parse_int(v, 1, 1024, &n)) return *rc = cli_usage_error(cmd, "--threads takes a count from 1 to 1024"), true;
    a->threads = (int)n;
  } else
    return false;
  if (!v && (strcmp(argv[*i], "--input") == 0 || strcmp(argv[*i], "--params") == 0 ||
             strcmp(argv[*i], "--function") == 0 || strcmp(argv[*i], "--passes") == 0))
    *rc = cli_usage_error(cmd, "option '%s' needs a value", argv[*i]);
  return true;
}

int cli_model_positional(const char *cmd, cli_model_args_t *a, const char *arg) {
  if (arg[0] == '-' && arg[1]) return cli_usage_error(cmd, "unknown option '%s'", arg);
  if (a->model) return cli_usage_error(cmd, "expected one model file, got '%s' and '%s'", a->model, arg);
  a->model = arg;
  return CLI_OK;
}

void cli_free_bound(cli_bound_inputs_t *b) {
  for (int i = 0; i < b->n; i++) {
    bool from_npz = false;
    for (int k = 0; k < b->npz_count; k++) from_npz |= b->tensors[i] == b->npz_tensors[k];
    if (!from_npz) tvmjit_tensor_free(b->tensors[i]);
  }
  free(b->tensors);
  free(b->sources);
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

void cli_type_str(tvmjit_dtype_t dt, int ndim, const int64_t *shape, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s[", tvmjit_dtype_name(dt));
  for (int d = 0; d < ndim && n < (int)len; d++)
    n += shape[d] < 0 ? snprintf(buf + n, len - (size_t)n, "%s?", d ? ", " : "")
                      : snprintf(buf + n, len - (size_t)n, "%s%lld", d ? ", " : "", (long long)shape[d]);
  if (n < (int)len) snprintf(buf + n, len - (size_t)n, "]");
}

static bool is_float_dtype(tvmjit_dtype_t d) {
  return d == TVMJIT_FLOAT16 || d == TVMJIT_FLOAT32 || d == TVMJIT_FLOAT64 || d == TVMJIT_BFLOAT16;
}

/* Checks a given tensor against parameter i; prints the message and returns false on
 * mismatch. With --convert-inputs a float tensor of another float dtype is replaced by a
 * converted copy (*t; the original is freed when `owned`). */
static bool check_input(const cli_model_args_t *a, const tvmjit_function_t *fn, int i, tvmjit_tensor_t **t,
                        bool owned, const char *source) {
  const char *name;
  tvmjit_dtype_t dt;
  int ndim;
  const int64_t *shape;
  tvmjit_function_input_info(fn, i, &name, &dt, &ndim, &shape);
  tvmjit_dtype_t got_dt = tvmjit_tensor_dtype(*t);
  bool shape_ok = ndim == tvmjit_tensor_ndim(*t);
  for (int d = 0; shape_ok && d < ndim; d++) shape_ok = shape[d] < 0 || shape[d] == tvmjit_tensor_shape(*t)[d]; /* -1: symbolic */
  bool convertible = shape_ok && dt != got_dt && is_float_dtype(dt) && is_float_dtype(got_dt);
  if (convertible && a->convert_inputs) {
    tvmjit_tensor_t *c = NULL;
    tvmjit_status_t *st = tvmjit_tensor_new(dt, ndim, tvmjit_tensor_shape(*t), &c);
    if (!st) st = tvmjit_tensor_convert(*t, c);
    if (st) return tvmjit_tensor_free(c), cli_report(st), false;
    if (owned) tvmjit_tensor_free(*t);
    *t = c;
    return true;
  }
  if (shape_ok && dt == got_dt) return true;
  char want[256], got[256];
  cli_type_str(dt, ndim, shape, want, sizeof want);
  cli_type_str(got_dt, tvmjit_tensor_ndim(*t), tvmjit_tensor_shape(*t), got, sizeof got);
  if (convertible)
    fprintf(stderr, "tvmjit: input '%s': expected %s, got %s from %s; pass --convert-inputs to convert it to %s "
            "(rounded to nearest even), or save it as %s%s\n", name, want, got, source, tvmjit_dtype_name(dt),
            tvmjit_dtype_name(dt), dt == TVMJIT_BFLOAT16 ? " ('<V2', as ml_dtypes saves bfloat16)" : "");
  else
    fprintf(stderr, "tvmjit: input '%s': expected %s, got %s from %s\n", name, want, got, source);
  return false;
}

static double next_random(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return (double)(*state >> 11) / 9007199254740992.0 * 2.0 - 1.0; /* uniform in [-1, 1) */
}

/* --fill random: floats uniform in [-1, 1); integers uniform in [-8, 8) (unsigned: [0, 16))
 * so that an index, a count or a mask input is not all zeros; bools half true. */
static double random_value(tvmjit_dtype_t dt, uint64_t *rng) {
  double u = next_random(rng);
  switch (dt) {
    case TVMJIT_FLOAT16: case TVMJIT_FLOAT32: case TVMJIT_FLOAT64: case TVMJIT_BFLOAT16: return u;
    case TVMJIT_BOOL: return u >= 0;
    case TVMJIT_UINT8: case TVMJIT_UINT16: case TVMJIT_UINT32: case TVMJIT_UINT64: return floor((u + 1) * 8);
    default: return floor(u * 8);
  }
}

static double fill_value(const char *how, tvmjit_dtype_t dt, uint64_t *rng) {
  if (strcmp(how, "ones") == 0) return 1.0;
  return strcmp(how, "random") == 0 ? random_value(dt, rng) : 0.0;
}

/* A parameter with a symbolic dim (-1) has no size to fill: says so, returns false. */
static bool fillable(const tvmjit_function_t *fn, int i) {
  const char *name;
  int ndim;
  const int64_t *shape;
  tvmjit_function_input_info(fn, i, &name, NULL, &ndim, &shape);
  for (int d = 0; d < ndim; d++)
    if (shape[d] < 0) {
      fprintf(stderr, "tvmjit: input '%s' has a symbolic dim %d, so --fill cannot size it: give it with --input\n",
              name, d);
      return false;
    }
  return true;
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
  for (size_t k = 0; k < n; k++) v[k] = fill_value(how, dt, rng);
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

/* Keys of a --params archive that name no parameter: a whole checkpoint is fine, said
 * once in a warning. */
static void warn_unused_keys(const cli_model_args_t *a, const tvmjit_function_t *fn, const cli_bound_inputs_t *b) {
  char unused[1024] = "";
  int n_unused = 0;
  for (int k = 0; k < b->npz_count; k++) {
    if (param_index(fn, b->npz_names[k]) >= 0) continue;
    size_t used = strlen(unused);
    if (n_unused++ < 20) snprintf(unused + used, sizeof unused - used, "%s%s", used ? ", " : "", b->npz_names[k]);
  }
  if (n_unused)
    fprintf(stderr, "tvmjit: warning: %s: %d key(s) are not parameters of %s and are ignored: %s%s\n", a->params,
            n_unused, a->function, unused, n_unused > 20 ? ", ..." : "");
}

int cli_bind_inputs(const cli_model_args_t *a, const tvmjit_function_t *fn, cli_bound_inputs_t *b) {
  int n_params = tvmjit_function_num_inputs(fn);
  char names[1024];
  list_params(fn, names, sizeof names);
  b->tensors = calloc((size_t)n_params + 1, sizeof *b->tensors);
  b->sources = calloc((size_t)n_params + 1, sizeof *b->sources);
  if (!b->tensors || !b->sources) {
    fprintf(stderr, "tvmjit: out of memory binding %d inputs\n", n_params);
    return CLI_FAILED;
  }
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
      const char *pname;
      tvmjit_function_input_info(fn, idx, &pname, NULL, NULL, NULL);
      fprintf(stderr, "tvmjit: --input '%s': parameter '%s' is already given; give each parameter once\n", spec, pname);
      return CLI_FAILED;
    }
    if ((st = tvmjit_tensor_load_npy(path, &b->tensors[idx]))) return cli_report(st), CLI_FAILED;
    b->sources[idx] = path;
    if (!check_input(a, fn, idx, &b->tensors[idx], true, path)) return CLI_FAILED;
  }
  if (a->params && !a->bind_params) { /* with --bind-params they are constants of the model already */
    if ((st = tvmjit_npz_load(a->params, &b->npz_count, &b->npz_names, &b->npz_tensors)))
      return cli_report(st), CLI_FAILED;
    warn_unused_keys(a, fn, b);
    for (int k = 0; k < b->npz_count; k++) {
      int idx = param_index(fn, b->npz_names[k]);
      if (idx < 0 || b->tensors[idx]) continue; /* --input wins over --params */
      b->tensors[idx] = b->npz_tensors[k];
      b->sources[idx] = a->params;
      if (!check_input(a, fn, idx, &b->tensors[idx], false, a->params)) return CLI_FAILED;
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
    if (!fillable(fn, i)) return CLI_FAILED;
    if ((st = fill_tensor(fn, i, a->fill, &rng, &b->tensors[i]))) return cli_report(st), CLI_FAILED;
    b->sources[i] = a->fill;
  }
  return CLI_OK;
}


/* ---- loading ---- */

void cli_model_options(const cli_model_args_t *a, bool no_cache, tvmjit_instance_options_t *out_instance,
                       tvmjit_module_options_t *out_module) {
  tvmjit_instance_options_init(out_instance);
  out_instance->num_threads = a->threads;
  if (no_cache) out_instance->cache.enable = 0;
  tvmjit_module_options_init(out_module);
  out_module->passes = a->passes;
  out_module->mixed_precision = a->mixed_precision;
  out_module->no_schedule = a->no_schedule;
  out_module->no_prepack = a->no_prepack;
  out_module->strict_float = a->strict_float;
}

/* Whether `--input NAME=FILE` gives parameter `name` (it then stays an input). */
static bool given_by_input(const cli_model_args_t *a, const char *name) {
  for (int k = 0; k < a->n_inputs; k++) {
    const char *eq = strchr(a->inputs[k], '=');
    if (eq && strlen(name) == (size_t)(eq - a->inputs[k]) && strncmp(a->inputs[k], name, strlen(name)) == 0) return true;
  }
  return false;
}

/* --bind-params: loads the module with the --params tensors bound as constants (keys
 * that name no parameter are skipped, as without --bind-params). */
static tvmjit_status_t *load_bound(const cli_model_args_t *a, const tvmjit_module_options_t *mopts, cli_loaded_t *out) {
  int n = 0, n_bound = 0;
  char **names = NULL;
  tvmjit_tensor_t **tensors = NULL;
  double t0 = cli_now_ms();
  tvmjit_status_t *st = tvmjit_npz_load(a->params, &n, &names, &tensors);
  out->params_ms = cli_now_ms() - t0;
  if (st) return st;
  for (int k = 0; k < n; k++)
    if (!given_by_input(a, names[k])) { /* swapped to the front: every entry is still freed once */
      char *name = names[n_bound];
      tvmjit_tensor_t *t = tensors[n_bound];
      names[n_bound] = names[k], tensors[n_bound] = tensors[k];
      names[k] = name, tensors[k] = t;
      n_bound++;
    }
  tvmjit_module_options_t o = *mopts;
  o.n_bind_params = n_bound;
  o.bind_param_names = (const char *const *)names;
  o.bind_params = (const tvmjit_tensor_t *const *)tensors;
  o.bind_params_skip_unknown = 1;
  st = tvmjit_module_load_file(out->inst, a->model, &o, &out->mod);
  /* The weights are the module's now: those it no longer reads (weights FoldConstant
   * transposed) go at once, those its kernels read only packed once they are packed. */
  for (int k = 0; !st && k < n_bound; k++) {
    tvmjit_status_t *kept = tvmjit_module_adopt_tensor(out->mod, tensors[k]);
    if (kept) tvmjit_status_free(kept); /* out of memory: it stays ours, freed at unload */
    else tensors[k] = NULL;
  }
  out->bound_count = n, out->bound_names = names, out->bound_tensors = tensors;
  return st;
}

int cli_load(const cli_model_args_t *a, const tvmjit_instance_options_t *iopts, const tvmjit_module_options_t *mopts,
             bool print_messages, cli_loaded_t *out) {
  memset(out, 0, sizeof *out);
  if (a->bind_params && !a->params) {
    fprintf(stderr, "tvmjit: --bind-params binds the tensors of --params: give --params FILE.npz too\n");
    return CLI_USAGE;
  }
  tvmjit_status_t *st = tvmjit_instance_create(iopts, &out->inst);
  double t0 = cli_now_ms(), cpu0 = cli_cpu_ms();
  if (!st) st = a->bind_params ? load_bound(a, mopts, out) : tvmjit_module_load_file(out->inst, a->model, mopts, &out->mod);
  if (!st) st = tvmjit_module_get_function(out->mod, a->function, &out->fn);
  out->compile_ms = cli_now_ms() - t0;
  out->compile_cpu_ms = cli_cpu_ms() - cpu0;
  if (print_messages) cli_print_messages(out->mod ? tvmjit_module_messages(out->mod) : "");
  if (!st) return CLI_OK;
  /* A bad --passes / --mixed-precision value is a usage error. */
  int rc = tvmjit_status_code(st) == TVMJIT_INVALID_ARGUMENT ? CLI_USAGE : CLI_FAILED;
  cli_report(st);
  return rc;
}

void cli_unload(cli_loaded_t *l) {
  tvmjit_module_free(l->mod);
  tvmjit_instance_free(l->inst);
  if (l->bound_names) tvmjit_npz_free(l->bound_count, l->bound_names, l->bound_tensors);
  memset(l, 0, sizeof *l);
}
