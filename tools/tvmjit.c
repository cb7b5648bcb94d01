/* The tvmjit command: dispatches to the sub-commands in tools/cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

static const cli_command_t *const commands[] = {&cli_cmd_run, &cli_cmd_check, &cli_cmd_print,
                                                &cli_cmd_conformance, &cli_cmd_bench, &cli_cmd_cache,
                                                &cli_cmd_ops};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static void print_help(FILE *out) {
  fprintf(out,
          "usage: tvmjit COMMAND [options]\n"
          "\n"
          "tvmjit reads a TVMScript model (.rx: a Relax main plus TIR prim_funcs, as TVM's\n"
          "mod.script() prints it), runs TVM's Relax pipeline, JIT-compiles the kernels with\n"
          "LLVM for this CPU and runs them.\n"
          "\n"
          "commands:\n");
  for (int i = 0; i < N_COMMANDS; i++) fprintf(out, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
  fprintf(out,
          "\n"
          "'tvmjit COMMAND --help' describes one command.\n"
          "exit status: 0 success, 1 failure (bad model, bad input, failed check), 2 usage error\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_help(stderr);
    return CLI_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    print_help(stdout);
    return CLI_OK;
  }
  if (strcmp(name, "--version") == 0) {
    printf("tvmjit %s\n", TVMJIT_VERSION);
    return CLI_OK;
  }
  for (int i = 0; i < N_COMMANDS; i++) {
    if (strcmp(commands[i]->name, name) != 0) continue;
    if (cli_wants_help(argc - 1, argv + 1)) {
      fputs(commands[i]->usage, stdout);
      return CLI_OK;
    }
    return commands[i]->run(argc - 1, argv + 1);
  }
  fprintf(stderr, "tvmjit: unknown command '%s'; the commands are:", name);
  for (int i = 0; i < N_COMMANDS; i++) fprintf(stderr, " %s", commands[i]->name);
  fprintf(stderr, "\nsee 'tvmjit --help'\n");
  return CLI_USAGE;
}
