/* tvmjit check: read and verify a model. */
#include <stdio.h>
#include <string.h>

#include "api/driver.h"
#include "ir/verify/verify.h"
#include "tools/cli.h"

static int run_check(int argc, char **argv) {
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1] != '\0') return cli_usage_error("check", "unknown option '%s'", argv[i]);
    if (path) return cli_usage_error("check", "expected one model file, got '%s' and '%s'", path, argv[i]);
    path = argv[i];
  }
  if (!path) return cli_usage_error("check", "missing the model file (FILE.rx)");
  tj_arena_t *arena = tj_arena_create();
  if (!arena) return cli_report(tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory")), CLI_FAILED;
  tj_module_t *module = NULL;
  /* The driver's first step, then the verifier on its own: every problem is listed. */
  tj_status_t *status = tj_driver_parse(arena, path, NULL, 0, &module);
  if (!status) status = tj_verify_module(module);
  int rc = CLI_OK;
  if (status) {
    /* The verifier reports one problem per line; print each as its own message, after
     * the file's name (parse errors already start with file:line:col). */
    const char *text = tj_status_text(status);
    if (tj_status_code(status) != TJ_ERR_VERIFY) fprintf(stderr, "%s\n", text);
    for (const char *p = text; tj_status_code(status) == TJ_ERR_VERIFY && *p;) {
      size_t n = strcspn(p, "\n");
      fprintf(stderr, "%s: %.*s\n", path, (int)n, p);
      p += n + (p[n] == '\n');
    }
    tj_status_free(status);
    rc = CLI_FAILED;
  } else {
    printf("%s: ok (%d functions)\n", path, module->n_funcs);
  }
  tj_arena_free(arena);
  return rc;
}

const cli_command_t cli_cmd_check = {
    "check", "read and verify a model; report every problem",
    "usage: tvmjit check FILE.rx\n"
    "\n"
    "Reads FILE.rx and runs the verifier: Relax well-formedness, every call_tir argument\n"
    "and out_sinfo against the callee's buffers, TIR scoping and dtypes.\n"
    "Prints one message per problem, naming function, binding, callee and parameter.\n"
    "exit status: 0 well-formed, 1 problems found, 2 usage error\n",
    run_check};
