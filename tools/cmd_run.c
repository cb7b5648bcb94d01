/* tvmjit run: compile and run a model. */
#include <stdio.h>

#include "tools/cli.h"

static int run_run(int argc, char **argv) {
  fprintf(stderr, "tvmjit run: the JIT is not built yet\n");
  return CLI_FAILED;
}

const cli_command_t cli_cmd_run = {"run", "compile a model for this CPU and run it",
                                   "usage: tvmjit run MODEL.rx [options]\n", run_run};
