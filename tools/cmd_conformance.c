/* tvmjit conformance: checks tvmjit against the cases extracted from TVM's own pass and
 * parser tests (../shared/conformance/README.md says how each kind is checked). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/driver.h"
#include "ir/text/parse.h"
#include "ir/text/print.h"
#include "ir/struct_equal.h"
#include "ir/verify/verify.h"
#include "support/alloc.h"
#include "tools/cli.h"
#include "transforms/pass_manager.h"

typedef enum { RESULT_PASS, RESULT_FAIL, RESULT_SKIP } result_t;

typedef struct case_info {
  const char *dir;
  const char *name;
  char kind[32];
  char pipeline[512];
  char expected_transform[256];
  char commit[48];
  char *expect; /* expect.txt contents or NULL */
} case_info_t;

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) tj_strbuf_append_n(&sb, buf, n);
  fclose(f);
  if (!sb.data) tj_strbuf_append(&sb, "");
  return tj_strbuf_take(&sb);
}

static char *read_text(const char *dir, const char *name) {
  tj_strbuf_t path;
  tj_strbuf_init(&path);
  tj_strbuf_printf(&path, "%s/%s", dir, name);
  char *p = tj_strbuf_take(&path);
  char *text = p ? read_file(p) : NULL;
  tj_free(p);
  return text;
}

/* Copies the value of "key=" from case.txt into out. */
static void case_field(const char *text, const char *key, char *out, size_t len) {
  out[0] = '\0';
  size_t klen = strlen(key);
  for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
      const char *v = line + klen + 1;
      size_t n = strcspn(v, "\n");
      if (n >= len) n = len - 1;
      memcpy(out, v, n);
      out[n] = '\0';
      return;
    }
  }
}

static tj_status_t *parse_case_file(tj_arena_t *arena, const case_info_t *c, const char *file, tj_module_t **out) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", c->dir, file);
  return tj_parse_file(arena, path, out);
}

/* Applies a pipeline written as in case.txt: "A() -> B(opt=...)". */
static tj_status_t *run_pipeline(tj_arena_t *arena, const char *text, const tj_module_t *in,
                                 const tj_module_t **out) {
  tj_driver_passes_t passes = {.passes = text};
  return tj_driver_run_passes(arena, &passes, in, out, NULL);
}

static bool is_not_built(tj_status_t *s) {
  return s && tj_status_code(s) == TJ_ERR_UNSUPPORTED && strstr(tj_status_message(s), "is not built yet");
}

/* Records a failure reason (owned by the caller's buffer). */
static result_t fail(char *why, size_t len, const char *fmt, const char *detail) {
  snprintf(why, len, fmt, detail ? detail : "");
  return RESULT_FAIL;
}

static result_t status_result(tj_status_t *s, char *why, size_t len, const char *what) {
  if (is_not_built(s)) {
    snprintf(why, len, "%s", tj_status_message(s));
    tj_status_free(s);
    return RESULT_SKIP;
  }
  snprintf(why, len, "%s: %s", what, tj_status_text(s));
  tj_status_free(s);
  return RESULT_FAIL;
}

/* Prepends `what` to the reason already in `why`. */
static void prefix(char *why, size_t len, const char *what) {
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s%s", what, why);
  snprintf(why, len, "%s", tmp);
}

static result_t check_round_trip(tj_arena_t *arena, const tj_module_t *m, char *why, size_t len) {
  char *text = tj_print_module(m);
  if (!text) return fail(why, len, "out of memory while printing%s", NULL);
  tj_module_t *again = NULL;
  tj_status_t *s = tj_parse_module(arena, "<printed>", text, strlen(text), &again);
  tj_free(text);
  if (s) return status_result(s, why, len, "printed module does not parse back");
  char diff[512];
  if (!tj_struct_equal_module(m, again, diff, sizeof diff))
    return fail(why, len, "round trip is not structurally equal: %s", diff);
  return RESULT_PASS;
}

/* TVM's parse_equal cases compare two standalone functions, which may be named
 * differently: compare the functions themselves, without their global_symbol. */
static bool functions_equal(tj_arena_t *arena, const tj_module_t *a, const tj_module_t *b, char *diff, size_t len) {
  if (a->n_funcs != 1 || b->n_funcs != 1 || a->funcs[0].is_prim != b->funcs[0].is_prim)
    return tj_struct_equal_module(a, b, diff, len);
  if (a->funcs[0].is_prim) {
    tj_prim_func_t fa = *a->funcs[0].prim, fb = *b->funcs[0].prim;
    fa.attrs = tj_attrs_remove(arena, fa.attrs, "global_symbol");
    fb.attrs = tj_attrs_remove(arena, fb.attrs, "global_symbol");
    return tj_struct_equal_prim_func(&fa, &fb, diff, len);
  }
  tj_rx_func_t fa = *a->funcs[0].relax, fb = *b->funcs[0].relax;
  fa.attrs = tj_attrs_remove(arena, fa.attrs, "global_symbol");
  fb.attrs = tj_attrs_remove(arena, fb.attrs, "global_symbol");
  return tj_struct_equal_rx_func(&fa, &fb, diff, len);
}

static bool expect_says(const case_info_t *c, const char *needle) { return c->expect && strstr(c->expect, needle); }

/* The corpus commit (README: the one docs/tvm-semantics.md describes) predates TVM's
 * check of call annotations against inference; the later cases (v0.23.0) have it. */
#define CORPUS_COMMIT "b3d01c2295cde9dcd02980bad49fcd9cd3049231"

static tj_status_t *verify_as_case(const case_info_t *c, const tj_module_t *m) {
  tj_verify_options_t o = {.trust_call_annotations = strcmp(c->commit, CORPUS_COMMIT) == 0};
  return tj_verify_module_with(m, &o);
}

static result_t check_case(const case_info_t *c, char *why, size_t len) {
  tj_arena_t *arena = tj_arena_create();
  if (!arena) return fail(why, len, "out of memory%s", NULL);
  result_t r = RESULT_PASS;
  tj_module_t *before = NULL, *expected = NULL;
  tj_status_t *s = parse_case_file(arena, c, "before.rx", &before);
  if (strcmp(c->kind, "parse_error") == 0) {
    if (!s) s = verify_as_case(c, before);
    if (is_not_built(s)) r = status_result(s, why, len, "");
    else if (s) tj_status_free(s);
    else r = fail(why, len, "accepted a module that TVM rejects%s", NULL);
  } else if (s) {
    r = status_result(s, why, len, "before.rx does not parse");
  } else if (strcmp(c->kind, "parse_ok") == 0) {
    r = check_round_trip(arena, before, why, len);
    if (r == RESULT_PASS && expect_says(c, "well_formed: true") && (s = verify_as_case(c, before)))
      r = status_result(s, why, len, "verifier rejects a well-formed module");
  } else if (strcmp(c->kind, "well_formed") == 0) {
    s = verify_as_case(c, before);
    bool want = expect_says(c, "well_formed: true");
    if (want && s) r = status_result(s, why, len, "verifier rejects a well-formed module");
    else if (!want && !s) r = fail(why, len, "verifier accepts an ill-formed module%s", NULL);
    else if (s) tj_status_free(s);
  } else if (strcmp(c->kind, "parse_equal") == 0) {
    char diff[512];
    if ((s = parse_case_file(arena, c, "expected.rx", &expected))) r = status_result(s, why, len, "expected.rx");
    else if (!functions_equal(arena, before, expected, diff, sizeof diff))
      r = fail(why, len, "not structurally equal: %s", diff);
  } else if (strcmp(c->kind, "op_pattern") == 0) {
    const tj_module_t *out = NULL;
    char func[128] = "";
    long want = -1;
    const char *line = c->expect ? strstr(c->expect, "op_pattern ") : NULL;
    if (!line || sscanf(line, "op_pattern %127s = %*s (%ld)", func, &want) != 2)
      r = fail(why, len, "cannot read expect.txt%s", NULL);
    else if ((s = run_pipeline(arena, "AnnotateTIROpPattern()", before, &out)))
      r = status_result(s, why, len, "AnnotateTIROpPattern failed");
    else {
      const tj_prim_func_t *f = tj_module_find_prim(out, func);
      long got = f ? (long)tj_attrs_get_int(f->attrs, "op_pattern", -1) : -2;
      if (got != want) {
        snprintf(why, len, "op_pattern of '%s' is %ld, expected %ld", func, got, want);
        r = RESULT_FAIL;
      }
    }
  } else if (strcmp(c->kind, "pass_error") == 0) {
    const tj_module_t *out = NULL;
    s = run_pipeline(arena, c->pipeline, before, &out);
    if (is_not_built(s)) r = status_result(s, why, len, "");
    else if (s) tj_status_free(s);
    else r = fail(why, len, "pipeline succeeded but TVM raises an error%s", NULL);
  } else if (strcmp(c->kind, "pass_runs") == 0) { /* the test only checks that the pipeline runs */
    const tj_module_t *out = NULL;
    if ((s = run_pipeline(arena, c->pipeline, before, &out))) r = status_result(s, why, len, "pipeline failed");
  } else if (strcmp(c->kind, "pass_pair") == 0) {
    const tj_module_t *out = NULL, *exp_out = NULL;
    char diff[512];
    if ((s = parse_case_file(arena, c, "expected.rx", &expected))) r = status_result(s, why, len, "expected.rx");
    else if ((s = run_pipeline(arena, c->pipeline, before, &out))) r = status_result(s, why, len, "pipeline failed");
    else if (c->expected_transform[0] &&
             (s = run_pipeline(arena, c->expected_transform, expected, &exp_out)))
      r = status_result(s, why, len, "expected_transform failed");
    else if (!tj_struct_equal_module(out, exp_out ? exp_out : expected, diff, sizeof diff))
      r = fail(why, len, "result differs from expected.rx: %s", diff);
    else if ((r = check_round_trip(arena, out, why, len)) != RESULT_PASS)
      prefix(why, len, "the pass output: ");
  } else {
    snprintf(why, len, "unknown kind '%s'", c->kind);
    r = RESULT_SKIP;
  }
  tj_arena_free(arena);
  return r;
}

/* ---- per module: parse, round trip, rejection ---- */

/* What holds for one corpus module file; the parse list records it per file. */
typedef enum { MODULE_FAILS, MODULE_PARSES, MODULE_ROUND_TRIPS, MODULE_REJECTS } module_status_t;
static const char *const k_module_status[] = {"fails", "parses", "round_trips", "rejects"};

/* file:line:col at the start of the message, then a caret line: what a user is shown. */
static bool has_position_and_caret(const char *err) {
  const char *p = strstr(err, ".rx:");
  int line = 0, col = 0;
  if (!p || sscanf(p + 4, "%d:%d:", &line, &col) != 2 || line < 1 || col < 1) return false;
  return strchr(err, '^') != NULL && strchr(err, '\n') != NULL;
}

static module_status_t check_module(const char *path, bool must_reject) {
  tj_arena_t *arena = tj_arena_create();
  if (!arena) return MODULE_FAILS;
  tj_module_t *m = NULL;
  tj_status_t *s = tj_parse_file(arena, path, &m);
  module_status_t r;
  if (must_reject) {
    r = s && has_position_and_caret(tj_status_text(s)) ? MODULE_REJECTS : MODULE_FAILS;
  } else if (s) {
    r = MODULE_FAILS;
  } else {
    char why[256];
    r = check_round_trip(arena, m, why, sizeof why) == RESULT_PASS ? MODULE_ROUND_TRIPS : MODULE_PARSES;
  }
  tj_status_free(s);
  tj_arena_free(arena);
  return r;
}

/* A listed status holds when the module does at least as much now. */
static bool module_status_holds(module_status_t listed, module_status_t now) {
  if (listed == MODULE_REJECTS || now == MODULE_REJECTS) return listed == now;
  return now >= listed;
}

/* ---- the baselines: what must keep holding ---- */

/* Finds the line "key" or "key <word>" in a list; returns the rest of the line (may be
 * empty) or NULL. Lines starting with '#' are comments. */
static const char *list_entry(const char *list, const char *key) {
  if (!list) return NULL;
  size_t n = strlen(key);
  for (const char *p = strstr(list, key); p; p = strstr(p + 1, key))
    if ((p == list || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0' || p[n] == '\r' || p[n] == ' '))
      return p + n + (p[n] == ' ');
  return NULL;
}

static int parse_module_status(const char *word) {
  for (int i = 0; i < 4; i++) {
    size_t n = strlen(k_module_status[i]);
    if (strncmp(word, k_module_status[i], n) == 0 && (word[n] == '\n' || word[n] == '\0' || word[n] == '\r'))
      return i;
  }
  return -1;
}

typedef struct run {
  const char *dir;
  const char *baseline_path, *parse_baseline_path;
  char *baseline, *parse_baseline; /* file contents, NULL when not given */
  FILE *write_passing, *write_parsing;
  bool verbose;
  int regressions, new_passes, listed_missing;
  int module_counts[4], modules_new;
} run_t;

/* Regressions are listed with their reason up to this many; the rest are counted, so that
 * a broken pass gives a short message that still names cases. */
enum { MAX_LISTED_REGRESSIONS = 10 };

static void report_regression(run_t *run, const char *what, const char *why) {
  if (run->regressions++ < MAX_LISTED_REGRESSIONS) printf("REGRESSION %s: %.400s\n", what, why);
}

static void check_case_modules(run_t *run, const char *name, const char *case_dir, const char *kind) {
  static const char *const files[2] = {"before.rx", "expected.rx"};
  for (int i = 0; i < 2; i++) {
    char path[4200], key[512];
    snprintf(path, sizeof path, "%s/%s", case_dir, files[i]);
    snprintf(key, sizeof key, "%s/%s", name, files[i]);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    fclose(f);
    module_status_t now = check_module(path, i == 0 && strcmp(kind, "parse_error") == 0);
    run->module_counts[now]++;
    if (now != MODULE_FAILS && run->write_parsing) fprintf(run->write_parsing, "%s %s\n", key, k_module_status[now]);
    const char *entry = list_entry(run->parse_baseline, key);
    int listed = entry ? parse_module_status(entry) : -1;
    if (listed >= 0 && !module_status_holds((module_status_t)listed, now)) {
      char why[128];
      snprintf(why, sizeof why, "listed as '%s' in %s, now '%s'", k_module_status[listed], run->parse_baseline_path,
               k_module_status[now]);
      report_regression(run, key, why);
    } else if (run->parse_baseline && now != MODULE_FAILS && (listed < 0 || (int)now > listed)) {
      run->modules_new++;
    }
  }
}

static void judge_case(run_t *run, const char *name, result_t r, const char *why) {
  bool listed = list_entry(run->baseline, name) != NULL;
  if (r != RESULT_PASS && listed) report_regression(run, name, why[0] ? why : "skipped");
  else if (r == RESULT_PASS && run->baseline && !listed) run->new_passes++;
  /* Without a baseline every failure is news; with one, only regressions are. */
  if (r == RESULT_FAIL && (!run->baseline || run->verbose)) printf("FAIL %s: %s\n", name, why);
  else if (r == RESULT_SKIP && run->verbose) printf("SKIP %s: %s\n", name, why);
  if (r == RESULT_PASS && run->write_passing) fprintf(run->write_passing, "%s\n", name);
}

/* Reads case.txt and runs the case; fills c->kind. */
static result_t run_case(case_info_t *c, char *why, size_t len) {
  char *case_txt = read_text(c->dir, "case.txt");
  if (!case_txt) {
    snprintf(c->kind, sizeof c->kind, "unknown");
    return fail(why, len, "missing case.txt%s", NULL);
  }
  case_field(case_txt, "kind", c->kind, sizeof c->kind);
  case_field(case_txt, "pipeline", c->pipeline, sizeof c->pipeline);
  if (!c->pipeline[0]) case_field(case_txt, "pass", c->pipeline, sizeof c->pipeline); /* one pass, no options */
  case_field(case_txt, "expected_transform", c->expected_transform, sizeof c->expected_transform);
  case_field(case_txt, "commit", c->commit, sizeof c->commit);
  char *paren = strstr(c->expected_transform, "  (");
  if (paren) *paren = '\0';
  char precondition[256];
  case_field(case_txt, "precondition", precondition, sizeof precondition);
  tj_free(case_txt);
  if (precondition[0]) {
    /* e.g. the test swaps an op's legalization for its own: not reproducible here. */
    snprintf(why, len, "needs a change to the operator registry: %s", precondition);
    return RESULT_SKIP;
  }
  return check_case(c, why, len);
}

/* Baseline entries whose case is gone from the corpus: said, not failed (the corpus is
 * not ours), so that a renamed case does not silently drop out of the baseline. */
static void check_listed_cases_exist(run_t *run, const char *manifest_copy) {
  if (!run->baseline) return;
  char *copy = strdup(run->baseline);
  if (!copy) return;
  for (char *line = strtok(copy, "\r\n"); line; line = strtok(NULL, "\r\n")) {
    if (line[0] == '#' || list_entry(manifest_copy, line)) continue;
    if (run->listed_missing++ < MAX_LISTED_REGRESSIONS)
      printf("warning: %s lists '%s', which is not in the corpus\n", run->baseline_path, line);
  }
  free(copy);
}

/* ---- bookkeeping per kind ---- */
typedef struct tally {
  char kind[32];
  int n[3];
} tally_t;

static tally_t *tally_for(tally_t *t, int *n_kinds, const char *kind) {
  for (int i = 0; i < *n_kinds; i++)
    if (strcmp(t[i].kind, kind) == 0) return &t[i];
  if (*n_kinds == 16) return &t[15]; /* more kinds than the corpus has: lump the rest */
  tally_t *e = &t[(*n_kinds)++];
  snprintf(e->kind, sizeof e->kind, "%s", kind);
  return e;
}

static void print_summary(const run_t *run, const tally_t *tallies, int n_kinds, const int totals[3]) {
  printf("\n%-14s %7s %7s %8s\n", "kind", "passed", "failed", "skipped");
  for (int i = 0; i < n_kinds; i++)
    printf("%-14s %7d %7d %8d\n", tallies[i].kind, tallies[i].n[RESULT_PASS], tallies[i].n[RESULT_FAIL],
           tallies[i].n[RESULT_SKIP]);
  const int *m = run->module_counts;
  printf("modules: %d parse (%d of them round-trip), %d parse_error inputs rejected with a position, %d fail\n",
         m[MODULE_PARSES] + m[MODULE_ROUND_TRIPS], m[MODULE_ROUND_TRIPS], m[MODULE_REJECTS], m[MODULE_FAILS]);
  if (run->regressions > MAX_LISTED_REGRESSIONS)
    printf("... and %d more regression(s)\n", run->regressions - MAX_LISTED_REGRESSIONS);
  if (run->regressions) printf("%d regression(s) against the baseline\n", run->regressions);
  if (run->new_passes)
    printf("%d passing case(s) not in %s yet: add them with --write-passing %s\n", run->new_passes, run->baseline_path,
           run->baseline_path);
  if (run->modules_new)
    printf("%d module(s) do more than %s lists: update it with --write-parsing %s\n", run->modules_new,
           run->parse_baseline_path, run->parse_baseline_path);
  printf("conformance: %d passed, %d failed, %d skipped\n", totals[RESULT_PASS], totals[RESULT_FAIL],
         totals[RESULT_SKIP]);
}

static bool read_list(const char *path, char **out) {
  if (!path) return true;
  *out = read_file(path);
  if (!*out) fprintf(stderr, "tvmjit conformance: cannot read %s\n", path);
  return *out != NULL;
}

/* Options that take a file name: where each one's value goes. */
static bool file_option(int argc, char **argv, int *i, const char *name, const char **slot, bool *missing) {
  const char *v = NULL;
  if (!cli_option(argc, argv, i, name, true, &v)) return false;
  *slot = v;
  *missing = !v || !*v;
  return true;
}

static int parse_args(int argc, char **argv, run_t *run, const char **write_passing, const char **write_parsing) {
  for (int i = 1; i < argc; i++) {
    int rc = CLI_OK;
    bool missing = false;
    if (file_option(argc, argv, &i, "baseline", &run->baseline_path, &missing) ||
        file_option(argc, argv, &i, "parse-baseline", &run->parse_baseline_path, &missing) ||
        file_option(argc, argv, &i, "write-passing", write_passing, &missing) ||
        file_option(argc, argv, &i, "write-parsing", write_parsing, &missing)) {
      if (missing) return cli_usage_error("conformance", "option '%s' needs a file name", argv[i]);
    } else if (cli_flag(argv[i], "verbose", "conformance", &rc)) {
      run->verbose = true;
    } else if (argv[i][0] == '-') {
      return cli_usage_error("conformance", "unknown option '%s'", argv[i]);
    } else {
      run->dir = argv[i];
    }
    if (rc != CLI_OK) return rc;
  }
  return CLI_OK;
}

static int run_conformance(int argc, char **argv) {
  run_t run = {.dir = "../shared/conformance"};
  const char *write_passing = NULL, *write_parsing = NULL;
  int rc = parse_args(argc, argv, &run, &write_passing, &write_parsing);
  if (rc != CLI_OK) return rc;
  char *manifest = read_text(run.dir, "MANIFEST.txt");
  if (!manifest) {
    fprintf(stderr, "tvmjit conformance: cannot read %s/MANIFEST.txt (give the corpus folder as argument)\n", run.dir);
    return CLI_FAILED;
  }
  char *manifest_copy = strdup(manifest);
  char passing_tmp[4200] = "", parsing_tmp[4200] = "";
  rc = CLI_FAILED;
  if (!manifest_copy || !read_list(run.baseline_path, &run.baseline) ||
      !read_list(run.parse_baseline_path, &run.parse_baseline))
    goto done;
  /* Written under a temporary name and renamed at the end: an interrupted run never
   * leaves a half-written baseline behind. */
  if (write_passing) snprintf(passing_tmp, sizeof passing_tmp, "%s.tmp", write_passing);
  if (write_parsing) snprintf(parsing_tmp, sizeof parsing_tmp, "%s.tmp", write_parsing);
  if ((write_passing && !(run.write_passing = fopen(passing_tmp, "w"))) ||
      (write_parsing && !(run.write_parsing = fopen(parsing_tmp, "w")))) {
    fprintf(stderr, "tvmjit conformance: cannot write %s\n", run.write_passing ? parsing_tmp : passing_tmp);
    goto done;
  }
  if (run.write_parsing)
    fprintf(run.write_parsing, "# Corpus modules and what must keep holding for each (tvmjit conformance --write-parsing):\n"
                               "# parses; round_trips (parses, and print -> parse is structurally equal);\n"
                               "# rejects (a parse_error input, rejected with file:line:col and a caret).\n");
  tally_t tallies[16];
  int n_kinds = 0, totals[3] = {0, 0, 0};
  for (char *name = strtok(manifest, "\r\n"); name; name = strtok(NULL, "\r\n")) {
    char case_dir[4096], why[1024] = "";
    snprintf(case_dir, sizeof case_dir, "%s/%s", run.dir, name);
    case_info_t c = {.dir = case_dir, .name = name, .expect = read_text(case_dir, "expect.txt")};
    result_t r = run_case(&c, why, sizeof why);
    tally_t *t = tally_for(tallies, &n_kinds, c.kind);
    t->n[r]++;
    totals[r]++;
    judge_case(&run, name, r, why);
    check_case_modules(&run, name, case_dir, c.kind);
    tj_free(c.expect);
  }
  check_listed_cases_exist(&run, manifest_copy);
  print_summary(&run, tallies, n_kinds, totals);
  rc = run.regressions ? CLI_FAILED : CLI_OK;
done:
  if (run.write_passing && fclose(run.write_passing) == 0 && rc == CLI_OK) rename(passing_tmp, write_passing);
  if (run.write_parsing && fclose(run.write_parsing) == 0 && rc == CLI_OK) rename(parsing_tmp, write_parsing);
  if (passing_tmp[0]) remove(passing_tmp);
  if (parsing_tmp[0]) remove(parsing_tmp);
  tj_free(manifest);
  free(manifest_copy);
  tj_free(run.baseline);
  tj_free(run.parse_baseline);
  return rc;
}

const cli_command_t cli_cmd_conformance = {
    "conformance", "check tvmjit against TVM's own pass and parser test cases",
    "usage: tvmjit conformance [DIR] [--baseline FILE] [--parse-baseline FILE]\n"
    "                          [--write-passing FILE] [--write-parsing FILE] [--verbose]\n"
    "\n"
    "Runs every case of the corpus in DIR (default ../shared/conformance) as its README\n"
    "says and prints, per kind and in total, 'N passed, M failed, K skipped'. It also\n"
    "parses every module file of every case and prints it back (round trip).\n"
    "Without a baseline each failure is listed with its reason; with one, only the\n"
    "regressions are (the first 10, then a count), and the exit status is 1 if any.\n"
    "  --baseline FILE        cases (one name per line) that must pass\n"
    "  --parse-baseline FILE  module files ('CASE/before.rx parses|round_trips|rejects')\n"
    "                         that must keep parsing, round-tripping or being rejected\n"
    "  --write-passing FILE   write the names of the passing cases to FILE\n"
    "  --write-parsing FILE   write what holds for each module file to FILE\n"
    "  --verbose              list every failure and skipped case (passes not built yet)\n"
    "Both baselines are the project's tests/conformance_baseline.txt and\n"
    "tests/conformance_parsing.txt; after a change that makes more cases pass:\n"
    "  tvmjit conformance DIR --write-passing tests/conformance_baseline.txt \\\n"
    "                         --write-parsing tests/conformance_parsing.txt\n",
    run_conformance};
