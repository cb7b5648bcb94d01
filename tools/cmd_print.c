/* tvmjit print: read a model (optionally run passes) and print it as TVMScript. */
#include <stdio.h>
#include <string.h>

#include "ir/parse.h"
#include "ir/print.h"
#include "support/alloc.h"
#include "tools/cli.h"

static int run_print(int argc, char **argv) {
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("print", "unknown option '%s'", argv[i]);
    if (path) return cli_usage_error("print", "expected one model file, got '%s' and '%s'", path, argv[i]);
    path = argv[i];
  }
  if (!path) return cli_usage_error("print", "missing the model file (FILE.rx)");
  tj_arena_t *arena = tj_arena_create();
  if (!arena) return cli_report(tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory")), CLI_FAILED;
  tj_module_t *module = NULL;
  tj_status_t *status = tj_parse_file(arena, path, &module);
  int rc = CLI_OK;
  if (status) {
    cli_report(status);
    rc = CLI_FAILED;
  } else {
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
    "print", "print a model as TVMScript (after passes, with --passes)",
    "usage: tvmjit print FILE.rx\n"
    "\n"
    "Reads FILE.rx and prints it back as TVMScript (what TVM's mod.script() prints).\n",
    run_print};
