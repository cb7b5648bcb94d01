/* tvmjit print: read a model, optionally run passes, and print it as TVMScript, or draw
 * main's dataflow (--graph: Graphviz DOT; --graph-svg: rendered by Graphviz's `dot`). */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/driver.h"
#include "ir/dot.h"
#include "ir/text/print.h"
#include "support/alloc.h"
#include "support/strbuf.h"
#include "tools/cli.h"
#include "tvmjit.h"

typedef struct print_args {
  const char *path, *passes, *mixed_precision, *print_before, *print_after, *graph_svg;
  bool time_passes, print_after_all, graph;
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
      if (v && strcmp(v, "float16") && strcmp(v, "float32") && strcmp(v, "bfloat16"))
        return cli_usage_error("print", "--mixed-precision takes float32, float16 or bfloat16 (default float32)");
      a->mixed_precision = v ? v : "float32";
    } else if (cli_option(argc, argv, &i, "print-ir-before", true, &v)) a->print_before = v;
    else if (cli_flag(argv[i], "print-ir-after-all", "print", &rc)) a->print_after_all = true;
    else if (cli_option(argc, argv, &i, "print-ir-after", true, &v)) a->print_after = v;
    else if (cli_flag(argv[i], "time-passes", "print", &rc)) a->time_passes = true;
    else if (cli_flag(argv[i], "graph", "print", &rc)) a->graph = true;
    else if (cli_option(argc, argv, &i, "graph-svg", true, &v)) {
      if (!v || !*v) return cli_usage_error("print", "--graph-svg needs the output file (OUT.svg)");
      a->graph_svg = v;
    }
    else if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("print", "unknown option '%s'", argv[i]);
    else if (a->path) return cli_usage_error("print", "expected one model file, got '%s' and '%s'", a->path, argv[i]);
    else a->path = argv[i];
    if (rc != CLI_OK) return rc;
  }
  if (!a->path) return cli_usage_error("print", "missing the model file (FILE.rx)");
  if (a->graph && a->graph_svg) return cli_usage_error("print", "--graph and --graph-svg exclude each other");
  return CLI_OK;
}

/* Runs Graphviz's `dot` on the DOT text: written to OUT.svg.dot, rendered to
 * OUT.svg.tmp, renamed to OUT.svg, so that a failure never leaves a half-written
 * picture. No shell is involved, so any file name is safe. */
static int render_svg(const char *dot_text, const char *svg_path) {
  size_t n = strlen(svg_path) + 8;
  char *dot_path = malloc(n), *tmp_path = malloc(n);
  int rc = CLI_FAILED;
  FILE *f = NULL;
  if (!dot_path || !tmp_path) goto done;
  snprintf(dot_path, n, "%s.dot", svg_path);
  snprintf(tmp_path, n, "%s.tmp", svg_path);
  if (!(f = fopen(dot_path, "w")) || fputs(dot_text, f) == EOF || fclose(f) != 0) {
    if (f) fclose(f);
    fprintf(stderr, "tvmjit print: cannot write %s: %s\n", dot_path, strerror(errno));
    goto done;
  }
  char *args[] = {"dot", "-Tsvg", "-o", tmp_path, dot_path, NULL};
  pid_t pid;
  int status = 0;
  extern char **environ;
  if (posix_spawnp(&pid, "dot", NULL, NULL, args, environ) != 0) {
    fprintf(stderr, "tvmjit print: --graph-svg needs Graphviz's 'dot' (apt-get install graphviz); "
                    "--graph prints the DOT text instead\n");
  } else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "tvmjit print: Graphviz's dot failed on %s\n", dot_path);
  } else if (rename(tmp_path, svg_path) != 0) {
    fprintf(stderr, "tvmjit print: cannot write %s: %s\n", svg_path, strerror(errno));
  } else {
    rc = CLI_OK;
  }
  remove(dot_path);
  remove(tmp_path);
done:
  if (!dot_path || !tmp_path) cli_report(tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory"));
  free(dot_path);
  free(tmp_path);
  return rc;
}

/* The memory plan of main compiled with the same passes, for the graph's note: which
 * intermediate buffers share bytes. Compiling goes through the kernel cache, so a
 * second picture costs little. When main cannot be compiled as drawn (e.g. it still
 * calls operators because no LegalizeOps ran) the note says so instead. */
static char *memory_plan_note(const print_args_t *a) {
  tvmjit_instance_options_t io;
  tvmjit_module_options_t mo;
  tvmjit_instance_options_init(&io);
  tvmjit_module_options_init(&mo);
  mo.passes = a->passes;
  mo.mixed_precision = a->mixed_precision;
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  tvmjit_status_t *st = tvmjit_instance_create(&io, &inst);
  if (!st) st = tvmjit_module_load_file(inst, a->path, &mo, &mod);
  if (!st) st = tvmjit_module_get_function(mod, "main", &fn);
  char *note;
  if (st) {
    const char *why = tvmjit_status_message(st);
    size_t line = strcspn(why, "\n");
    tj_strbuf_t sb;
    tj_strbuf_init(&sb);
    tj_strbuf_printf(&sb, "no memory plan: main does not compile as drawn (%.*s)", (int)line, why);
    note = tj_strbuf_take(&sb);
    tvmjit_status_free(st);
  } else {
    note = tj_strdup(tvmjit_function_memory_plan(fn));
  }
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
  return note;
}

/* The final module as TVMScript, or main's graph. With a --print-ir-* option the
 * instruments have printed what was asked for, so the module is not printed again. */
static int print_result(const print_args_t *a, const tj_module_t *module) {
  bool graph = a->graph || a->graph_svg;
  if (!graph && (a->print_before || a->print_after || a->print_after_all)) return CLI_OK;
  char *note = graph ? memory_plan_note(a) : NULL;
  char *text = graph ? tj_dot_function(module, "main", note) : tj_print_module(module);
  tj_free(note);
  int rc = CLI_FAILED;
  if (!text && graph && !tj_module_find_relax(module, "main"))
    fprintf(stderr, "tvmjit print: %s has no Relax function 'main' to draw\n", a->path);
  else if (!text)
    cli_report(tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory while printing"));
  else if (a->graph_svg)
    rc = render_svg(text, a->graph_svg);
  else
    rc = fputs(text, stdout) == EOF ? CLI_FAILED : CLI_OK;
  tj_free(text);
  return rc;
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
  tj_status_t *status = tj_driver_load(arena, a.path, NULL, 0, &passes, &module, &report, NULL);
  if (status) {
    /* A usage mistake in --passes is a usage error (exit 2); anything else is exit 1. */
    rc = tj_status_code(status) == TJ_ERR_INVALID_ARGUMENT ? CLI_USAGE : CLI_FAILED;
    cli_report(status);
  } else {
    if (a.time_passes) fputs(tj_pass_report_text(arena, &report), stderr);
    rc = print_result(&a, module);
  }
  tj_arena_free(arena);
  return rc;
}

const cli_command_t cli_cmd_print = {
    "print", "print a model as TVMScript, after passes with --passes",
    "usage: tvmjit print FILE.rx [--passes P1,P2,...] [--mixed-precision[=float32|float16|bfloat16]]\n"
    "                    [--print-ir-before=P] [--print-ir-after=P] [--print-ir-after-all] [--time-passes]\n"
    "                    [--graph | --graph-svg OUT.svg]\n"
    "\n"
    "Reads FILE.rx, verifies it, runs the passes (default: none; 'default' is\n"
    "DispatchSortScan,LegalizeOps,AnnotateTIROpPattern,FuseOps,FuseTIR; options in TVM's spelling, e.g.\n"
    "'ToMixedPrecision(out_dtype=\"float16\"),LegalizeOps') with the verifier after each,\n"
    "and prints the result as TVMScript (what TVM's mod.script() prints).\n"
    "With --print-ir-before/after the instruments print the module at those passes\n"
    "and the final module is not printed again.\n"
    "--graph prints main's dataflow as Graphviz DOT instead (one box per call, with the\n"
    "kernel's op pattern, dtype and shape; after FuseOps each fused function is a\n"
    "cluster; a note lists the memory plan: which intermediates share workspace bytes);\n"
    "--graph-svg OUT.svg renders it with Graphviz's dot (package graphviz).\n"
    "exit status: 0 success, 1 bad model or a pass failed, 2 usage error (incl. unknown pass)\n",
    run_print};
