/* Shared pieces of the tvmjit command: each sub-command lives in tools/cmd_<name>.c. */
#ifndef TJ_TOOLS_CLI_H
#define TJ_TOOLS_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "ir/module.h"
#include "support/status.h"

/* Exit codes of every sub-command. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

typedef struct cli_command {
  const char *name;
  const char *summary;
  const char *usage; /* full --help text */
  int (*run)(int argc, char **argv);
} cli_command_t;

extern const cli_command_t cli_cmd_check, cli_cmd_print, cli_cmd_run, cli_cmd_conformance, cli_cmd_bench;
extern const cli_command_t cli_cmd_cache, cli_cmd_ops;

/* Prints "tvmjit: <status text>" to stderr and frees the status. */
void cli_report(tj_status_t *status);
/* Prints a usage error ("tvmjit CMD: message; see 'tvmjit CMD --help'") and returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True if argv[i] is "--name" or "--name=value"; sets *value (NULL when no '=' and
 * the option takes no value). For options with a value given as the next argument,
 * advances *i. Returns false if it is another option. */
bool cli_option(int argc, char **argv, int *i, const char *name, bool takes_value, const char **value);
/* True if arg is the flag "--name"; "--name=..." is true too, with *rc set to a usage
 * error of `cmd` (a flag takes no value). */
bool cli_flag(const char *arg, const char *name, const char *cmd, int *rc);
bool cli_wants_help(int argc, char **argv);
/* Prints the library's messages (tvmjit_module_messages) to stderr, "tvmjit: " first. */
void cli_print_messages(const char *messages);
/* Checks before any work that `path` can be written as an output: it ends in .npy or
 * .npz, is not a directory, and its directory exists and is writable. Prints the
 * problem and returns false otherwise. */
bool cli_check_output_path(const char *path);

/* Monotonic clock in milliseconds, for latency reports. */
double cli_now_ms(void);
/* CPU time of the whole process (every thread) in milliseconds. */
double cli_cpu_ms(void);
/* qsort comparator for doubles (ascending), for medians. */
int cli_compare_double(const void *x, const void *y);

#endif
