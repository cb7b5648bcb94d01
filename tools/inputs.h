/* What `tvmjit run` and `tvmjit bench` share: the options naming the model, how to
 * compile it and where its inputs come from, and binding those inputs to a compiled
 * function's parameters. */
#ifndef TJ_TOOLS_INPUTS_H
#define TJ_TOOLS_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tvmjit.h"

enum { CLI_MAX_INPUTS = 64 };

typedef struct cli_model_args {
  const char *model, *function, *passes, *mixed_precision;
  const char *params, *fill;
  const char *inputs[CLI_MAX_INPUTS]; /* --input values, in order */
  int n_inputs, threads;
  int no_schedule; /* --no-schedule: kernels as plain loops */
  int no_prepack;  /* --no-prepack: kernels repack constant weights per call */
  int strict_float; /* --strict-float: float32 exactly as the IR's operations, in order */
  int bind_params;  /* --bind-params: the --params tensors become constants (BindParams + FoldConstant) */
  int convert_inputs; /* --convert-inputs: a float input of another float dtype is converted (rounded to nearest even) */
  unsigned long seed;
} cli_model_args_t;

/* Defaults: function main, passes default. */
void cli_model_args_init(cli_model_args_t *a);
/* Takes argv[*i] if it is one of the shared options (--function, --input, --params,
 * --fill, --seed, --passes, --mixed-precision, --threads, --no-schedule), advancing *i past a value
 * given as the next argument, and returns true. A bad value prints a usage error of
 * `cmd` and sets *rc to CLI_USAGE. Returns false for any other argument. */
bool cli_model_option(const char *cmd, int argc, char **argv, int *i, cli_model_args_t *a, int *rc);
/* An argument no option took: the model file, or an error for an unknown option or a
 * second model file. Returns CLI_OK or CLI_USAGE. */
int cli_model_positional(const char *cmd, cli_model_args_t *a, const char *arg);
/* Parses a decimal integer in [lo, hi]; 0 on success, -1 otherwise. */
int cli_parse_int(const char *s, long lo, long hi, long *out);

/* The options `a` gives the instance and the module (threads, passes, mixed precision,
 * schedule, float mode); `no_cache` turns the kernel cache off. The caller adds the
 * command's own options. */
void cli_model_options(const cli_model_args_t *a, bool no_cache, tvmjit_instance_options_t *out_instance,
                       tvmjit_module_options_t *out_module);

/* A model compiled for a command: instance, module and the function to call. */
typedef struct cli_loaded {
  tvmjit_instance_t *inst;
  tvmjit_module_t *mod;
  tvmjit_function_t *fn;
  double compile_ms; /* loading the model and compiling the function */
  /* of which: process CPU time (steadier than wall time on a shared machine), and
   * reading the --params archive for --bind-params (0 without) */
  double compile_cpu_ms, params_ms;
  /* --bind-params: the --params archive, borrowed by the module until cli_unload */
  int bound_count;
  char **bound_names;
  tvmjit_tensor_t **bound_tensors;
} cli_loaded_t;

/* Creates the instance, loads a->model and compiles a->function. With print_messages
 * the module's compile messages go to stderr first (also on failure). On failure the
 * error is reported and the result is CLI_USAGE for a bad --passes or
 * --mixed-precision value, else CLI_FAILED; `out` is freed with cli_unload in any case. */
int cli_load(const cli_model_args_t *a, const tvmjit_instance_options_t *iopts, const tvmjit_module_options_t *mopts,
             bool print_messages, cli_loaded_t *out);
void cli_unload(cli_loaded_t *l);

/* The tensors bound to a function's parameters, one per parameter. */
typedef struct cli_bound_inputs {
  int n;
  tvmjit_tensor_t **tensors; /* n of them; a model may have hundreds of weights */
  const char **sources;      /* where each came from, for messages */
  int npz_count;
  char **npz_names;
  tvmjit_tensor_t **npz_tensors;
} cli_bound_inputs_t;

/* Binds --input files, then --params keys, then --fill for the rest; checks dtype and
 * shape of each. Prints the error and returns CLI_FAILED on bad input. `b` must start
 * zeroed and is freed with cli_free_bound in any case. */
int cli_bind_inputs(const cli_model_args_t *a, const tvmjit_function_t *fn, cli_bound_inputs_t *b);
void cli_free_bound(cli_bound_inputs_t *b);
/* "float16[16, 32, 32, 16]" */
void cli_type_str(tvmjit_dtype_t dt, int ndim, const int64_t *shape, char *buf, size_t len);

#endif
