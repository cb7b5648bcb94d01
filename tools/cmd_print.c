/* tvmjit print: read a model, optionally run passes, and print it as TVMScript. */
#include <stdio.h>
#include <string.h>

#include "api/driver.h"
#include "ir/print.h"
#include "support/alloc.h"
#include "tools/cli.h"

typedef struct print_args {
  const char *path, *passes, *mixed_precision, *print_before, *print_after;
  bool time_passes, print_after_all;
} print_args_t;

static int parse_print_args(int argc, char **argv, print_args_t *a) {
  memset(a, 0, sizeof *a);
  a->passes = "none";
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int rc = CLI_OK;
    if (cli_option(argc, argv, &i, "passes", true, &v)) {
      if (!v) return cli_usage_error("print", "--passes needs a value");
      a->passes = v;
    } else if (cli_option(argc, argv, &i, "mixed-precision", false, &v)) {
      if (v && strcmp(v, "float16") && strcmp(v, "float32"))
        return cli_usage_error("print", "--mixed-precision takes float16 or float32 (default float32)");
      a->mixed_precision = v ? v : "float32";
    } else if (cli_option(argc, argv, &i, "print-ir-before", true, &v)) a->print_before = v;
    else if (cli_flag(argv[i], "print-ir-after-all", "print", &rc)) a->print_after_all = true;
    else if (cli_option(argc, argv, &i, "print-ir-after", true, &v)) a->print_after = v;
    else if (cli_flag(argv[i], "time-passes", "print", &rc)) a->time_passes = true;
    else if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("print", "unknown option '%s'", argv[i]);
    else if (a->path) return cli_usage_error("print", "expected one model file, got '%s' and '%s'", a->path, argv[i]);
    else a->path = argv[i];
    if (rc != CLI_OK) return rc;
  }
  if (!a->path) return cli_usage_error("print", "missing the model file (FILE.rx)");
  return CLI_OK;
}

static int run_print(int argc, char **argv) {
  print_args_t a;
  int rc = parse_print_args(argc, argv, &a);
  if (rc != CLI_OK) return rc;
  tj_arena_t *arena = tj_arena_create();
  if (!arena) return cli_report(tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory")), CLI_FAILED;
  tj_pass_instruments_t ins = {.print_before = a.print_before,
                               .print_after = a.print_after_all ? "*" : a.print_after,
                               .print_file = stdout,
                               .time_passes = a.time_passes,
                               .verify_each = true};
  tj_driver_passes_t passes = {a.passes, a.mixed_precision, &ins};
  tj_pass_report_t report = {0};
  const tj_module_t *module = NULL;
  tj_status_t *status = tj_driver_load(arena, a.path, NULL, 0, &passes, &module, &report);
  if (status) {
    /* A usage mistake in --passes is a usage error (exit 2); anything else is exit 1. */
    rc = tj_status_code(status) == TJ_ERR_INVALID_ARGUMENT ? CLI_USAGE : CLI_FAILED;
    cli_report(status);
  } else {
    if (a.time_passes) fputs(tj_pass_report_text(arena, &report), stderr);
    char *text = tj_print_module(module);
    if (text) fputs(text, stdout);
    else cli_report(tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory while printing"));
    rc = text ? CLI_OK : CLI_FAILED;
    tj_free(text);
  }
  tj_arena_free(arena);
  return rc;
}

const cli_command_t cli_cmd_print = {
    "print", "print a model as TVMScript, after passes with --passes",
    "usage: tvmjit print FILE.rx [--passes P1,P2,...] [--mixed-precision[=float32|float16]]\n"
    "                    [--print-ir-before=P] [--print-ir-after=P] [--print-ir-after-all] [--time-passes]\n"
    "\n"
    "Reads FILE.rx, verifies it, runs the passes (default: none; 'default' is\n"
    "LegalizeOps,AnnotateTIROpPattern,FuseOps,FuseTIR; options in TVM's spelling, e.g.\n"
    "'ToMixedPrecision(out_dtype=\"float16\"),LegalizeOps') with the verifier after each,\n"
    "and prints the result as TVMScript (what TVM's mod.script() prints).\n"
    "exit status: 0 success, 1 bad model or a pass failed, 2 usage error (incl. unknown pass)\n",
    run_print};
