/* tvmjit conformance: checks tvmjit against the cases extracted from TVM's own pass and
 * parser tests (../shared/conformance/README.md says how each kind is checked). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/parse.h"
#include "ir/print.h"
#include "ir/struct_equal.h"
#include "ir/verify.h"
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
  tj_pipeline_t pipeline;
  TJ_RETURN_IF_ERROR(tj_pipeline_parse(arena, text, &pipeline));
  tj_pass_context_t ctx;
  tj_pass_context_init(&ctx, arena);
  return tj_pipeline_run(&ctx, &pipeline, NULL, in, out, NULL);
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

static result_t check_case(const case_info_t *c, char *why, size_t len) {
  tj_arena_t *arena = tj_arena_create();
  if (!arena) return fail(why, len, "out of memory%s", NULL);
  result_t r = RESULT_PASS;
  tj_module_t *before = NULL, *expected = NULL;
  tj_status_t *s = parse_case_file(arena, c, "before.rx", &before);
  if (strcmp(c->kind, "parse_error") == 0) {
    if (!s) s = tj_verify_module(before);
    if (is_not_built(s)) r = status_result(s, why, len, "");
    else if (s) tj_status_free(s);
    else r = fail(why, len, "accepted a module that TVM rejects%s", NULL);
  } else if (s) {
    r = status_result(s, why, len, "before.rx does not parse");
  } else if (strcmp(c->kind, "parse_ok") == 0) {
    r = check_round_trip(arena, before, why, len);
    if (r == RESULT_PASS && expect_says(c, "well_formed: true") && (s = tj_verify_module(before)))
      r = status_result(s, why, len, "verifier rejects a well-formed module");
  } else if (strcmp(c->kind, "well_formed") == 0) {
    s = tj_verify_module(before);
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
  } else {
    snprintf(why, len, "unknown kind '%s'", c->kind);
    r = RESULT_SKIP;
  }
  tj_arena_free(arena);
  return r;
}

/* ---- bookkeeping per kind ---- */
typedef struct tally {
  char kind[32];
  int n[3];
} tally_t;

static tally_t *tally_for(tally_t *t, int *n_kinds, const char *kind) {
  for (int i = 0; i < *n_kinds; i++)
    if (strcmp(t[i].kind, kind) == 0) return &t[i];
  tally_t *e = &t[(*n_kinds)++];
  snprintf(e->kind, sizeof e->kind, "%s", kind);
  return e;
}

static bool listed(const char *list, const char *name) {
  if (!list) return false;
  size_t n = strlen(name);
  for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
    if ((p == list || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0' || p[n] == '\r')) return true;
  return false;
}

static int run_conformance(int argc, char **argv) {
  const char *dir = "../shared/conformance", *baseline_path = NULL, *write_path = NULL;
  bool verbose = false;
  for (int i = 1; i < argc; i++) {
    const char *v;
    int rc = CLI_OK;
    if (cli_option(argc, argv, &i, "baseline", true, &v)) baseline_path = v;
    else if (cli_option(argc, argv, &i, "write-passing", true, &v)) write_path = v;
    else if (cli_flag(argv[i], "verbose", "conformance", &rc)) verbose = true;
    else if (argv[i][0] == '-') return cli_usage_error("conformance", "unknown option '%s'", argv[i]);
    else dir = argv[i];
    if (rc != CLI_OK) return rc;
    if ((baseline_path && !*baseline_path) || (write_path && !*write_path))
      return cli_usage_error("conformance", "option '%s' needs a file name", argv[i]);
  }
  char *manifest = read_text(dir, "MANIFEST.txt");
  if (!manifest) {
    fprintf(stderr, "tvmjit conformance: cannot read %s/MANIFEST.txt (give the corpus folder as argument)\n", dir);
    return CLI_FAILED;
  }
  char *baseline = NULL;
  if (baseline_path) {
    if (!(baseline = read_file(baseline_path))) {
      fprintf(stderr, "tvmjit conformance: cannot read baseline %s\n", baseline_path);
      tj_free(manifest);
      return CLI_FAILED;
    }
  }
  FILE *passing = write_path ? fopen(write_path, "w") : NULL;
  tally_t tallies[16];
  int n_kinds = 0, totals[3] = {0, 0, 0}, regressions = 0;
  for (char *name = strtok(manifest, "\r\n"); name; name = strtok(NULL, "\r\n")) {
    char case_dir[4096], why[1024] = "";
    snprintf(case_dir, sizeof case_dir, "%s/%s", dir, name);
    char *case_txt = read_text(case_dir, "case.txt");
    case_info_t c = {.dir = case_dir, .name = name, .expect = read_text(case_dir, "expect.txt")};
    result_t r;
    if (!case_txt) {
      snprintf(why, sizeof why, "missing case.txt");
      r = RESULT_FAIL;
      snprintf(c.kind, sizeof c.kind, "unknown");
    } else {
      case_field(case_txt, "kind", c.kind, sizeof c.kind);
      case_field(case_txt, "pipeline", c.pipeline, sizeof c.pipeline);
      if (!c.pipeline[0]) case_field(case_txt, "pass", c.pipeline, sizeof c.pipeline); /* one pass, no options */
      case_field(case_txt, "expected_transform", c.expected_transform, sizeof c.expected_transform);
      char *paren = strstr(c.expected_transform, "  (");
      if (paren) *paren = '\0';
      char precondition[256];
      case_field(case_txt, "precondition", precondition, sizeof precondition);
      if (precondition[0]) {
        /* e.g. the test swaps an op's legalization for its own: not reproducible here. */
        snprintf(why, sizeof why, "needs a change to the operator registry: %s", precondition);
        r = RESULT_SKIP;
      } else {
        r = check_case(&c, why, sizeof why);
      }
    }
    tally_t *t = tally_for(tallies, &n_kinds, c.kind);
    t->n[r]++;
    totals[r]++;
    bool expected_to_pass = listed(baseline, name);
    if (r == RESULT_FAIL) printf("FAIL %s: %s\n", name, why);
    else if (r == RESULT_SKIP && verbose) printf("SKIP %s: %s\n", name, why);
    if (r == RESULT_PASS && passing) fprintf(passing, "%s\n", name);
    if (r != RESULT_PASS && expected_to_pass) {
      printf("REGRESSION %s (listed in %s)\n", name, baseline_path);
      regressions++;
    }
    tj_free(case_txt);
    tj_free(c.expect);
  }
  printf("\n%-14s %7s %7s %8s\n", "kind", "passed", "failed", "skipped");
  for (int i = 0; i < n_kinds; i++)
    printf("%-14s %7d %7d %8d\n", tallies[i].kind, tallies[i].n[RESULT_PASS], tallies[i].n[RESULT_FAIL],
           tallies[i].n[RESULT_SKIP]);
  if (regressions) printf("%d regression(s) against %s\n", regressions, baseline_path);
  printf("conformance: %d passed, %d failed, %d skipped\n", totals[RESULT_PASS], totals[RESULT_FAIL],
         totals[RESULT_SKIP]);
  if (passing) fclose(passing);
  tj_free(manifest);
  tj_free(baseline);
  return regressions ? CLI_FAILED : CLI_OK;
}

const cli_command_t cli_cmd_conformance = {
    "conformance", "check tvmjit against TVM's own pass and parser test cases",
    "usage: tvmjit conformance [DIR] [--baseline FILE] [--write-passing FILE] [--verbose]\n"
    "\n"
    "Runs every case of the corpus in DIR (default ../shared/conformance) as its README\n"
    "says and prints, per kind and in total, 'N passed, M failed, K skipped', listing each\n"
    "failure with its reason (--verbose also lists skipped cases: passes not built yet).\n"
    "  --baseline FILE       cases (one name per line) that must pass: exit 1 if one does not\n"
    "  --write-passing FILE  write the names of the passing cases to FILE\n",
    run_conformance};
