/* tvmjit ops: the operator table, read from the registry (ir/op/table.def through
 * tj_op_all), so that the listing and the README block generated from it
 * (tools/update_ops_table.sh) can never disagree with what the reader accepts. */
#include <stdio.h>
#include <string.h>

#include "ir/op.h"
#include "tools/cli.h"
#include "transforms/legalize/legalize.h"

typedef struct op_row {
  const char *name, *family, *dtypes;
  char notes[256];
} op_row_t;

/* The row of one op: notes say what a user should know before relying on it. */
static void describe(const tj_op_def_t *def, op_row_t *row) {
  row->name = def->script_name;
  row->family = tj_op_family(def);
  row->dtypes = def->dtypes ? def->dtypes : "-";
  const char *kept = tj_legalizer_lookup(def->name) ? "" : "not lowered by LegalizeOps";
  const char *note = def->notes ? def->notes : "";
  snprintf(row->notes, sizeof row->notes, "%s%s%s", kept, *kept && *note ? "; " : "", note);
}

static bool listed(const tj_op_def_t *def) { return def->script_name && strncmp(def->script_name, "R.", 2) == 0; }

static void print_text(const tj_op_def_t *const *ops, int n) {
  int shown = 0;
  printf("%-28s %-15s %-13s %s\n", "operator", "family", "dtypes", "notes");
  for (int i = 0; i < n; i++) {
    if (!listed(ops[i])) continue;
    op_row_t r;
    describe(ops[i], &r);
    if (r.notes[0]) printf("%-28s %-15s %-13s %s\n", r.name, r.family, r.dtypes, r.notes);
    else printf("%-28s %-15s %s\n", r.name, r.family, r.dtypes);
    shown++;
  }
  printf("\n%d operators. An operator not listed is reported as unsupported, naming the nearest one.\n", shown);
}

/* Pipes in notes would split a markdown cell. */
static void print_cell(const char *s) {
  for (; *s; s++) {
    if (*s == '|') fputs("\\|", stdout);
    else putchar(*s);
  }
}

static void print_markdown(const tj_op_def_t *const *ops, int n) {
  printf("| operator | family | dtypes | notes |\n|---|---|---|---|\n");
  for (int i = 0; i < n; i++) {
    if (!listed(ops[i])) continue;
    op_row_t r;
    describe(ops[i], &r);
    printf("| `%s` | %s | %s | ", r.name, r.family, r.dtypes);
    print_cell(r.notes);
    printf(" |\n");
  }
}

static int run_ops(int argc, char **argv) {
  bool markdown = false;
  for (int i = 1; i < argc; i++) {
    int rc = CLI_OK;
    if (cli_flag(argv[i], "markdown", "ops", &rc)) {
      if (rc != CLI_OK) return rc;
      markdown = true;
      continue;
    }
    return cli_usage_error("ops", "unknown argument '%s'", argv[i]);
  }
  int n = 0;
  const tj_op_def_t *const *ops = tj_op_all(&n);
  if (markdown) print_markdown(ops, n);
  else print_text(ops, n);
  return CLI_OK;
}

const cli_command_t cli_cmd_ops = {
    "ops", "list the supported Relax operators (name, family, dtypes, notes)",
    "usage: tvmjit ops [--markdown]\n"
    "\n"
    "Lists every Relax operator tvmjit reads, infers and runs, from its operator registry:\n"
    "the script name, the TVM source family, the dtypes it accepts (\"any -> bool\": any\n"
    "input, a bool result; \"-\": not stated yet) and notes on semantics where tvmjit defines\n"
    "what TVM leaves undefined (docs/numerics.md).\n"
    "\n"
    "  --markdown    a Markdown table (the README's operator table is generated from it by\n"
    "                tools/update_ops_table.sh)\n"
    "exit status: 0 success, 2 usage error\n",
    run_ops};
