/* ir/text/parse: the TVMScript reader on the seed, the conformance corpus, hand-written
 * error cases and sugar/explicit equivalences. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/text/parse.h"
#include "ir/text/print.h"
#include "ir/struct_equal.h"
#include "ir/visit.h"
#include "support/alloc.h"
#include "support/arena.h"
#include "testutil.h"

/* Parses text; returns the module or NULL, and the error text in err (may be NULL). */
static tj_module_t *parse_text(tj_arena_t *a, const char *text, size_t len, char *err, size_t err_len) {
  tj_module_t *m = NULL;
  tj_status_t *s = tj_parse_module(a, "m.rx", text, len, &m);
  if (err) err[0] = '\0';
  if (s) {
    if (err) snprintf(err, err_len, "%s", tj_status_text(s));
    ck_assert_ptr_null(m);
    tj_status_free(s);
    return NULL;
  }
  ck_assert_ptr_nonnull(m);
  return m;
}

static tj_module_t *parse_ok(tj_arena_t *a, const char *text) {
  char err[2048];
  tj_module_t *m = parse_text(a, text, strlen(text), err, sizeof err);
  ck_assert_msg(m != NULL, "unexpected parse error: %s", err);
  return m;
}

/* ---- the seed ---- */

static const tj_tir_stmt_t *strip_seq_first(const tj_tir_stmt_t *s) {
  return s->kind == TJ_TIR_SEQ ? s->seq.stmts[0] : s;
}

static const tj_block_t *first_block_under(const tj_tir_stmt_t *s) {
  while (s && s->kind == TJ_TIR_FOR) s = s->loop.body;
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(s->kind, TJ_TIR_BLOCK_REALIZE);
  return s->realize.block;
}

START_TEST(seed_parses_with_expected_structure) {
  char path[4096];
  snprintf(path, sizeof path, "%.3000s/examples/seed/model.rx", tu_source_dir());
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  TU_OK(tj_parse_file(a, path, &m));
  ck_assert_int_eq(m->n_funcs, 4);

  const tj_rx_func_t *main_fn = tj_module_find_relax(m, "main");
  ck_assert_ptr_nonnull(main_fn);
  ck_assert_int_eq(main_fn->n_params, 6);
  ck_assert_str_eq(tj_attrs_get_str(main_fn->attrs, "global_symbol", ""), "main");
  ck_assert_int_eq(tj_attrs_get_int(main_fn->attrs, "num_input", -1), 1);
  ck_assert_int_eq(main_fn->body->kind, TJ_RX_SEQ);
  ck_assert_int_eq(main_fn->body->seq.n_blocks, 1);
  const tj_rx_block_t *df = &main_fn->body->seq.blocks[0];
  ck_assert(df->is_dataflow);
  ck_assert_int_eq(df->n_bindings, 7);
  for (int i = 0; i < 6; i++) ck_assert_int_eq(df->bindings[i].var->kind, TJ_RX_DATAFLOW_VAR);
  ck_assert_int_eq(df->bindings[6].var->kind, TJ_RX_VAR); /* R.output(conv3) */
  ck_assert_ptr_eq(main_fn->body->seq.body, df->bindings[6].var);
  tj_call_tir_view_t view;
  ck_assert(tj_rx_as_call_tir(df->bindings[0].value, &view));
  ck_assert_str_eq(view.callee->var.name, "conv2d2");
  ck_assert_int_eq(view.n_args, 2);
  ck_assert_ptr_eq(view.args[0], main_fn->params[0]);
  ck_assert(tj_sinfo_is_tensor(df->bindings[0].var->sinfo));
  ck_assert_int_eq(df->bindings[0].var->sinfo->tensor.ndim, 4);

  const tj_prim_func_t *conv = tj_module_find_prim(m, "conv2d2");
  ck_assert_ptr_nonnull(conv);
  ck_assert_ptr_null(tj_attrs_get(conv->attrs, "global_symbol")); /* private */
  ck_assert_int_eq(conv->n_params, 3);
  for (int i = 0; i < 3; i++) {
    const tj_buffer_t *b = conv->buffer_map[i];
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(conv->params[i]->dtype.code, TJ_DT_HANDLE);
    ck_assert(tj_dtype_eq(b->dtype, TJ_F16));
    ck_assert_int_eq(b->ndim, 4);
    int64_t d;
    for (int k = 0; k < 4; k++) ck_assert(tj_dtype_eq(b->shape[k]->dtype, TJ_I64));
    ck_assert(tj_tir_is_const_int(b->shape[0], &d) && d == 16);
  }
  const tj_block_t *root = tj_prim_func_root_block(conv);
  ck_assert_ptr_nonnull(root);
  ck_assert_str_eq(root->name, "root");
  ck_assert_int_eq(root->n_iter_vars, 0);
  ck_assert_int_eq(root->n_alloc_buffers, 1);
  ck_assert_str_eq(root->alloc_buffers[0]->name, "pad_temp");
  ck_assert_int_eq(root->body->kind, TJ_TIR_SEQ);
  ck_assert_int_eq(root->body->seq.n, 2);
  const tj_block_t *cb = first_block_under(root->body->seq.stmts[1]);
  ck_assert_str_eq(cb->name, "conv2d_nhwc");
  ck_assert_int_eq(cb->n_iter_vars, 7);
  const char *kinds = "SSSSRRR";
  for (int i = 0; i < 7; i++) {
    ck_assert_int_eq(cb->iter_vars[i].kind, kinds[i] == 'S' ? TJ_ITER_SPATIAL : TJ_ITER_REDUCE);
    ck_assert(tj_dtype_eq(cb->iter_vars[i].var->dtype, TJ_I64));
  }
  ck_assert_ptr_nonnull(cb->init);
  ck_assert_int_eq(cb->init->kind, TJ_TIR_BUFFER_STORE);
  ck_assert_int_eq(cb->n_reads, 2);
  ck_assert_int_eq(cb->n_writes, 1);
  ck_assert_ptr_eq(cb->reads[0].buffer, root->alloc_buffers[0]);

  const tj_prim_func_t *ln = tj_module_find_prim(m, "layer_norm");
  ck_assert_ptr_nonnull(ln);
  const tj_block_t *lr = tj_prim_func_root_block(ln);
  ck_assert_int_eq(lr->n_alloc_buffers, 2);
  ck_assert(tj_dtype_eq(lr->alloc_buffers[0]->dtype, TJ_F32)); /* default dtype */
  const tj_block_t *red = first_block_under(strip_seq_first(lr->body));
  ck_assert_int_eq(red->body->kind, TJ_TIR_LET_STMT);
  ck_assert(tj_dtype_eq(red->body->let.var->dtype, TJ_F32));
  ck_assert_int_eq(red->body->let.body->kind, TJ_TIR_LET_STMT);
  ck_assert_int_eq(red->body->let.body->let.body->kind, TJ_TIR_SEQ);
  tj_arena_free(a);
}
END_TEST

/* file:line:col at the start of an error, then a caret line. */
static bool has_position_and_caret(const char *err) {
  const char *p = strstr(err, ".rx:");
  if (!p) return false;
  int line = 0, col = 0;
  if (sscanf(p + 4, "%d:%d:", &line, &col) != 2 || line < 1 || col < 1) return false;
  return strchr(err, '^') != NULL && strchr(err, '\n') != NULL;
}

/* ---- round trip: parse -> print -> parse is structurally equal ---- */

/* Returns NULL when the file parses and round-trips; otherwise a reason. */
static const char *round_trip_file(const char *path, char *why, size_t why_len) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m1 = NULL, *m2 = NULL;
  const char *result = NULL;
  tj_status_t *s = tj_parse_file(a, path, &m1);
  if (s) {
    snprintf(why, why_len, "does not parse: %s", tj_status_text(s));
    tj_status_free(s);
    tj_arena_free(a);
    return why;
  }
  char *text = tj_print_module(m1);
  if (!text) {
    result = "printer returned NULL";
  } else {
    s = tj_parse_module(a, "printed", text, strlen(text), &m2);
    if (s) {
      snprintf(why, why_len, "printed text does not parse: %s", tj_status_text(s));
      tj_status_free(s);
      result = why;
    } else if (!tj_struct_equal_module(m1, m2, why, why_len)) {
      result = why;
    }
  }
  tj_free(text);
  tj_arena_free(a);
  return result;
}

/* The corpus's modules round-trip under `tvmjit conformance` (tests/cli/conformance.sh). */
START_TEST(round_trip_seed) {
  char path[4096], why[2048];
  snprintf(path, sizeof path, "%.3000s/examples/seed/model.rx", tu_source_dir());
  const char *r = round_trip_file(path, why, sizeof why);
  ck_assert_msg(r == NULL, "seed does not round-trip: %s", r);
}
END_TEST

/* ---- robustness: mutated sources never crash and fail cleanly ---- */

START_TEST(mutated_sources_fail_cleanly) {
  char path[4096];
  size_t len = 0;
  snprintf(path, sizeof path, "%.3000s/examples/seed/model.rx", tu_source_dir());
  char *seed = tu_read_file(path, &len);
  ck_assert_msg(seed != NULL, "cannot read %s", path);
  char *buf = malloc(len + 64);
  uint64_t rng = 0x9e3779b97f4a7c15ULL;
  int parsed = 0, failed = 0;
  for (int iter = 0; iter < 1500; iter++) {
    memcpy(buf, seed, len);
    size_t n = len;
    int edits = 1 + iter % 4;
    for (int e = 0; e < edits; e++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      size_t pos = (size_t)(rng % n);
      switch ((rng >> 32) % 4) {
        case 0: buf[pos] = (char)(rng >> 40); break;                           /* replace */
        case 1: memmove(buf + pos, buf + pos + 1, n - pos - 1), n--; break;    /* delete */
        case 2: n = pos + 1; break;                                              /* truncate */
        default: buf[pos] = "()[]{}:,=\n \"'#"[(rng >> 40) % 14]; break;        /* punctuation */
      }
      if (n < 2) n = 2;
    }
    tj_arena_t *a = tj_arena_create();
    tj_module_t *m = NULL;
    tj_status_t *s = tj_parse_module(a, "m.rx", buf, n, &m);
    if (s) {
      failed++;
      ck_assert_ptr_null(m);
      /* a mutated operator name is unsupported, anything else malformed */
      ck_assert(tj_status_code(s) == TJ_ERR_PARSE || tj_status_code(s) == TJ_ERR_UNSUPPORTED);
      ck_assert_msg(has_position_and_caret(tj_status_text(s)), "error without position: %s", tj_status_text(s));
      tj_status_free(s);
    } else {
      parsed++;
      ck_assert_ptr_nonnull(m);
    }
    tj_arena_free(a);
  }
  printf("mutations: %d parsed, %d rejected\n", parsed, failed);
  ck_assert_int_gt(failed, 0);
  free(buf);
  free(seed);
}
END_TEST

START_TEST(allocation_failures_fail_cleanly) {
  const char *text =
      "@I.ir_module\nclass M:\n"
      "    @T.prim_func(private=True)\n"
      "    def k(A: T.Buffer((T.int64(4),), \"float16\"), B: T.Buffer((T.int64(4),), \"float16\")):\n"
      "        for i in T.grid(T.int64(4)):\n"
      "            with T.block(\"b\"):\n"
      "                vi = T.axis.spatial(T.int64(4), i)\n"
      "                B[vi] = T.max(A[vi], T.float16(0))\n"
      "    @R.function\n"
      "    def main(x: R.Tensor((4,), \"float16\")) -> R.Tensor((4,), \"float16\"):\n"
      "        cls = M\n"
      "        with R.dataflow():\n"
      "            y = R.call_tir(cls.k, (x,), out_sinfo=R.Tensor((4,), \"float16\"))\n"
      "            z = R.add(y, y)\n"
      "            R.output(z)\n"
      "        return z\n";
  int ok = 0, oom = 0;
  for (long n = 0; n < 400; n += 3) {
    tj_arena_t *a = tj_arena_create();
    if (!a) continue;
    tj_module_t *m = NULL;
    tj_alloc_fail_after(n);
    tj_status_t *s = tj_parse_module(a, "m.rx", text, strlen(text), &m);
    tj_alloc_fail_reset();
    if (s) {
      ck_assert_msg(tj_status_code(s) == TJ_ERR_OUT_OF_MEMORY, "after %ld allocations: %s", n, tj_status_text(s));
      ck_assert_ptr_null(m);
      oom++;
    } else {
      ck_assert_ptr_nonnull(m);
      ok++;
    }
    tj_status_free(s);
    tj_arena_free(a);
  }
  ck_assert_int_gt(oom, 0);
  ck_assert_int_gt(ok, 0);
}
END_TEST

/* ---- hand-written errors: exact position, caret, expectation ---- */

static void expect_error_at(const char *text, size_t len, const char *where, const char *phrase) {
  tj_arena_t *a = tj_arena_create();
  char err[4096];
  tj_module_t *m = parse_text(a, text, len, err, sizeof err);
  ck_assert_msg(m == NULL, "expected an error for: %s", text);
  ck_assert_msg(strncmp(err, where, strlen(where)) == 0, "expected '%s...', got: %s", where, err);
  ck_assert_msg(strstr(err, phrase) != NULL, "expected '%s' in: %s", phrase, err);
  ck_assert_msg(strchr(err, '^') != NULL, "no caret in: %s", err);
  tj_arena_free(a);
}

static void expect_error(const char *text, const char *where, const char *phrase) {
  expect_error_at(text, strlen(text), where, phrase);
}

static const char *const tir_prefix =
    "@T.prim_func\n"
    "def f(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n";

static char *with_prefix(const char *body) {
  size_t n = strlen(tir_prefix) + strlen(body) + 1;
  char *s = malloc(n);
  snprintf(s, n, "%s%s", tir_prefix, body);
  return s;
}

START_TEST(errors_unclosed_paren) {
  char *t = with_prefix("    for i in T.grid(4:\n        B[i] = A[i]\n");
  expect_error(t, "m.rx:3:22:", "expected ')' to close '(' at 3:20");
  free(t);
}
END_TEST

START_TEST(errors_unclosed_paren_at_end_of_file) {
  expect_error("@R.function\ndef f(x: R.Tensor((2,), \"float32\"):\n", "m.rx:2:35:", "expected ')' to close '(' at 2:6, found ':'");
  expect_error("@R.function\ndef f(x: R.Tensor((2,), \"float32\")", "m.rx:2:35:", "expected ')' to close '(' at 2:6, found end of file");
}
END_TEST

START_TEST(errors_unknown_intrinsic) {
  char *t = with_prefix("    for i in T.grid(4):\n        B[i] = T.frobnicate(A[i])\n");
  expect_error(t, "m.rx:4:16:", "unknown or unsupported function 'T.frobnicate'");
  free(t);
}
END_TEST

START_TEST(errors_undefined_name) {
  char *t = with_prefix("    for i in T.grid(4):\n        B[i] = C[i]\n");
  expect_error(t, "m.rx:4:16:", "name 'C' is not defined");
  free(t);
  expect_error("@R.function\ndef f(x: R.Tensor((2,), \"float32\")):\n    y = R.add(x, z)\n    return y\n", "m.rx:3:18:",
               "name 'z' is not defined");
}
END_TEST

START_TEST(errors_bad_indentation) {
  char *t = with_prefix("    for i in T.grid(4):\n        B[i] = A[i]\n      B[0] = A[0]\n");
  expect_error(t, "m.rx:5:7:", "unindent does not match");
  free(t);
  t = with_prefix("    for i in T.grid(4):\n    B[i] = A[i]\n");
  expect_error(t, "m.rx:4:5:", "expected an indented block after 'for'");
  free(t);
}
END_TEST

START_TEST(errors_truncated_and_empty) {
  expect_error("@R.function\ndef f(x: R.Tensor((2,), \"float32\")):\n", "m.rx:3:1:", "expected an indented block");
  expect_error("@R.function\ndef f(x: R.Tensor((2,), \"float32\")):\n    y = R.add(x,", "m.rx:3:17:", "expected ')' to close '(' at 3:14, found end of");
  expect_error("", "m.rx:1:1:", "no module");
  expect_error("# just a comment\n\n", "m.rx:1:1:", "no module");
  expect_error("@R.function\ndef f(x: R.Tensor((2,), \"float32\")):\n    y = \"abc\n", "m.rx:3:9:", "unterminated string");
}
END_TEST

START_TEST(errors_binary_garbage) {
  static const char garbage[] = "@I.ir_module\nclass M:\n    \x01\x00\xff\xfe";
  expect_error_at(garbage, sizeof garbage - 1, "m.rx:3:5:", "unexpected byte 0x01");
  /* no NUL terminator: the reader must stay within len */
  char *exact = malloc(12);
  memcpy(exact, "@R.function", 11);
  exact[11] = 'x';
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  tj_status_t *s = tj_parse_module(a, "m.rx", exact, 11, &m);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_null(m);
  tj_status_free(s);
  /* every byte value at every position of a small program: never crashes */
  const char *prog = "@R.function\ndef f(x: R.Tensor((2,), \"float32\")):\n    return x\n";
  size_t n = strlen(prog);
  char *buf = malloc(n);
  for (size_t pos = 0; pos < n; pos += 3)
    for (int b = 0; b < 256; b += 17) {
      memcpy(buf, prog, n);
      buf[pos] = (char)b;
      m = NULL;
      s = tj_parse_module(a, "m.rx", buf, n, &m);
      tj_status_free(s);
    }
  free(buf);
  free(exact);
  tj_arena_free(a);
}
END_TEST

START_TEST(errors_deep_nesting) {
  size_t depth = 100000;
  size_t n = strlen(tir_prefix) + 2 * depth + 64;
  char *t = malloc(n);
  size_t k = (size_t)snprintf(t, n, "%s    B[0] = ", tir_prefix);
  for (size_t i = 0; i < depth; i++) t[k++] = '(';
  t[k++] = '1';
  for (size_t i = 0; i < depth; i++) t[k++] = ')';
  t[k++] = '\n';
  tj_arena_t *a = tj_arena_create();
  char err[4096];
  ck_assert_ptr_null(parse_text(a, t, k, err, sizeof err));
  ck_assert_msg(strstr(err, "nested too deeply") != NULL, "%s", err);
  /* deep statement nesting */
  k = (size_t)snprintf(t, n, "%s", tir_prefix);
  for (int i = 0; i < 400 && k + 1000 < n; i++) {
    for (int s = 0; s < 4 * (i + 1); s++) t[k++] = ' ';
    k += (size_t)snprintf(t + k, n - k, "for i%d in range(2):\n", i);
  }
  ck_assert_ptr_null(parse_text(a, t, k, err, sizeof err));
  ck_assert_msg(strstr(err, "too deeply") != NULL, "%s", err);
  /* a long flat chain of operators */
  k = (size_t)snprintf(t, n, "%s    B[0] = A[0]", tir_prefix);
  for (int i = 0; i < 20000; i++) k += (size_t)snprintf(t + k, n - k, " + A[0]");
  t[k++] = '\n';
  tj_module_t *m = parse_text(a, t, k, err, sizeof err);
  (void)m; /* either accepted or rejected cleanly */
  free(t);
  tj_arena_free(a);
}
END_TEST

START_TEST(errors_relax_rules) {
  const char *sig = "@R.function\ndef f(x: R.Tensor((2,), \"float32\")):\n";
  char buf[1024];
  snprintf(buf, sizeof buf, "%s    with R.dataflow():\n        y = R.add(x, x)\n        R.output(y)\n        z = R.add(y, y)\n    return y\n", sig);
  expect_error(buf, "m.rx:6:9:", "no binding may follow R.output");
  snprintf(buf, sizeof buf, "%s    y = z = R.add(x, x)\n    return y\n", sig);
  expect_error(buf, "m.rx:3:9:", "chained assignment");
  snprintf(buf, sizeof buf, "%s    y = R.add(x, x)\n", sig);
  expect_error(buf, "m.rx:2:1:", "must end with a 'return'");
  snprintf(buf, sizeof buf, "%s    R.output(x)\n    return x\n", sig);
  expect_error(buf, "m.rx:3:5:", "R.output(...) is only allowed");
  snprintf(buf, sizeof buf, "%s    y = R.call_tir(\"f\", (x,), R.Tensor((T.Cast(\"int64\"),), \"float32\"))\n    return y\n", sig);
  expect_error(buf, "m.rx:3:41:", "T.Cast expects 2 arguments");
  snprintf(buf, sizeof buf, "%s    y = R.nn.rlu(x)\n    return y\n", sig);
  expect_error(buf, "m.rx:3:9:", "unknown or unsupported operator 'R.nn.rlu' (did you mean R.nn.relu?); `tvmjit ops`");
  snprintf(buf, sizeof buf, "%s    y = R.frobnicate(x)\n    return y\n", sig);
  expect_error(buf, "m.rx:3:9:", "unknown or unsupported operator 'R.frobnicate'; `tvmjit ops` lists");
  snprintf(buf, sizeof buf, "%s    y = R.permute_dims(x, axes=[0], bogus=1)\n    return y\n", sig);
  expect_error(buf, "m.rx:3:9:", "bogus");
  snprintf(buf, sizeof buf, "%s    y: R.Shape = x\n    return y\n", sig);
  expect_error(buf, "m.rx:3:5:", "cannot annotate 'y'");
}
END_TEST

/* ---- representation rules ---- */

START_TEST(buffer_sugar_equals_match_buffer) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *sugar = parse_ok(a,
      "@T.prim_func\n"
      "def f(A: T.Buffer((T.int64(4), 8), \"float16\"), B: T.Buffer((T.int64(4), 8), \"float16\")):\n"
      "    for i, j in T.grid(T.int64(4), 8):\n"
      "        with T.block(\"b\"):\n"
      "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "            B[vi, vj] = A[vi, vj] + T.float16(1)\n");
  tj_module_t *expl = parse_ok(a,
      "@T.prim_func\n"
      "def f(a: T.handle, b: T.handle):\n"
      "    A = T.match_buffer(a, (T.int64(4), 8), \"float16\")\n"
      "    B = T.match_buffer(b, [T.int64(4), 8], dtype=\"float16\")\n"
      "    for i, j in T.grid(T.int64(4), 8):\n"
      "        with T.block(\"b\"):\n"
      "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "            T.reads(A[vi, vj])\n"
      "            T.writes(B[vi, vj])\n"
      "            B[vi, vj] = A[vi, vj] + T.float16(1)\n");
  const tj_prim_func_t *f1 = sugar->funcs[0].prim, *f2 = expl->funcs[0].prim;
  ck_assert_int_eq(f1->n_params, f2->n_params);
  for (int i = 0; i < 2; i++) {
    ck_assert_ptr_nonnull(f2->buffer_map[i]);
    ck_assert(tj_dtype_eq(f1->buffer_map[i]->dtype, f2->buffer_map[i]->dtype));
  }
  char why[512] = "";
  ck_assert_msg(tj_struct_equal_prim_func(f1, f2, why, sizeof why), "not equal: %s", why);
  /* the inferred access regions are the written ones: points */
  const tj_block_t *b = first_block_under(tj_prim_func_root_block(f1)->body);
  ck_assert_int_eq(b->n_reads, 1);
  ck_assert_int_eq(b->n_writes, 1);
  int64_t ext;
  ck_assert(tj_tir_is_const_int(b->reads[0].ranges[0].extent, &ext) && ext == 1);
  ck_assert(tj_dtype_eq(b->reads[0].ranges[0].extent->dtype, TJ_I64));
  ck_assert(tj_dtype_eq(b->reads[0].ranges[1].extent->dtype, TJ_I32));
  tj_arena_free(a);
}
END_TEST

START_TEST(explicit_root_block_keeps_empty_regions) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@T.prim_func\n"
      "def f(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
      "    with T.block(\"root\"):\n"
      "        C = T.alloc_buffer((8,))\n"
      "        for i in range(8):\n"
      "            with T.block(\"c\"):\n"
      "                vi = T.axis.spatial(8, i)\n"
      "                C[vi] = A[vi] + A[vi + 1] * T.float32(2)\n"
      "        for i in range(8):\n"
      "            with T.block(\"b\"):\n"
      "                vi = T.axis.spatial(8, i)\n"
      "                B[vi] = C[vi]\n");
  const tj_prim_func_t *f = m->funcs[0].prim;
  ck_assert_str_eq(tj_attrs_get_str(f->attrs, "global_symbol", ""), "f");
  const tj_block_t *root = tj_prim_func_root_block(f);
  ck_assert_ptr_nonnull(root);
  ck_assert_int_eq(root->n_alloc_buffers, 1);
  ck_assert_int_eq(root->n_reads, 0);
  ck_assert_int_eq(root->n_writes, 0);
  const tj_block_t *c = first_block_under(root->body->seq.stmts[0]);
  ck_assert_int_eq(c->n_reads, 1); /* A[vi] and A[vi + 1]: one hull of extent 2 */
  int64_t ext;
  ck_assert(tj_tir_is_const_int(c->reads[0].ranges[0].extent, &ext) && ext == 2);
  ck_assert_int_eq(c->n_writes, 1);
  tj_arena_free(a);
}
END_TEST

START_TEST(literals_take_the_other_operand_type) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@T.prim_func(private=True)\n"
      "def f(A: T.Buffer((T.int64(4),), \"float16\"), n: T.int32):\n"
      "    for i in range(T.int64(4)):\n"
      "        A[i + 1 - 1] = A[i] * 2\n"
      "    for j in T.serial(n):\n"
      "        A[j // 2 % 3] = T.if_then_else(j < 2, A[j], T.float16(0))\n"
      "    A[0] = T.Cast(\"float16\", T.float32(4) * T.float32(5)) + T.Mul(T.float16(4), T.float16(5))\n"
      "    A[1] = T.float16(4) * T.float16(5)\n");
  const tj_prim_func_t *f = m->funcs[0].prim;
  ck_assert_ptr_null(f->attrs); /* private: no global_symbol */
  ck_assert_ptr_null(tj_prim_func_root_block(f)); /* no block: no root */
  const tj_tir_stmt_t *l1 = f->body->seq.stmts[0];
  ck_assert(tj_dtype_eq(l1->loop.var->dtype, TJ_I64));
  const tj_tir_stmt_t *st = l1->loop.body;
  const tj_tir_expr_t *idx = st->store.indices[0]; /* (i + 1) - 1 */
  ck_assert_int_eq(idx->kind, TJ_TIR_SUB);
  ck_assert(tj_dtype_eq(idx->binary.b->dtype, TJ_I64));
  ck_assert_int_eq(st->store.value->kind, TJ_TIR_MUL);
  ck_assert(tj_dtype_eq(st->store.value->binary.b->dtype, TJ_F16));
  ck_assert_int_eq(st->store.value->binary.b->kind, TJ_TIR_FLOAT_IMM);
  const tj_tir_stmt_t *st2 = f->body->seq.stmts[1]->loop.body;
  ck_assert_int_eq(st2->store.indices[0]->kind, TJ_TIR_FLOOR_MOD);
  ck_assert_int_eq(st2->store.indices[0]->binary.a->kind, TJ_TIR_FLOOR_DIV);
  ck_assert_int_eq(st2->store.value->kind, TJ_TIR_CALL);
  ck_assert_str_eq(st2->store.value->call.op, "tir.if_then_else");
  const tj_tir_expr_t *sum = f->body->seq.stmts[2]->store.value; /* float32 constants fold, T.Mul stays */
  ck_assert_int_eq(sum->kind, TJ_TIR_ADD);
  ck_assert_int_eq(sum->binary.a->kind, TJ_TIR_CAST);
  ck_assert_int_eq(sum->binary.a->unary.operand->kind, TJ_TIR_FLOAT_IMM);
  ck_assert(sum->binary.a->unary.operand->float_imm == 20.0);
  ck_assert_int_eq(sum->binary.b->kind, TJ_TIR_MUL);
  /* as TVM's const_fold.h, float16 arithmetic on constants is not folded */
  ck_assert_int_eq(f->body->seq.stmts[3]->store.value->kind, TJ_TIR_MUL);
  tj_arena_free(a);
}
END_TEST

/* a < b < c is (a < b) and (b < c): literal pairs fold, a false one makes the chain
 * False, the others are and-ed (an all-literal chain of three crashed, found by
 * fuzz_rx_verify: tests/fuzz/regressions/rx_verify/literal_comparison_chain.rx). */
START_TEST(chained_comparisons_fold_literal_pairs) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@T.prim_func(private=True)\n"
      "def f(A: T.Buffer((4,), \"float32\")):\n"
      "    for i in range(4):\n"
      "        A[i] = T.if_then_else(1 <= 3 < 113, A[i], T.float32(0))\n"
      "    for j in range(4):\n"
      "        A[j] = T.if_then_else(1 <= 3 < 2, A[j], T.float32(0))\n"
      "    for k in range(4):\n"
      "        A[k] = T.if_then_else(1 <= k < 3 < 9, A[k], T.float32(0))\n");
  const tj_prim_func_t *f = m->funcs[0].prim;
  const tj_tir_expr_t *v0 = f->body->seq.stmts[0]->loop.body->store.value;
  const tj_tir_expr_t *v1 = f->body->seq.stmts[1]->loop.body->store.value;
  const tj_tir_expr_t *v2 = f->body->seq.stmts[2]->loop.body->store.value;
  ck_assert_int_eq(v0->kind, TJ_TIR_BUFFER_LOAD); /* true: the then-arm */
  ck_assert_int_eq(v1->kind, TJ_TIR_FLOAT_IMM);   /* false: the else-arm */
  ck_assert_int_eq(v2->kind, TJ_TIR_CALL);        /* (1 <= k) and (k < 3); 3 < 9 folds away */
  ck_assert_int_eq(v2->call.args[0]->kind, TJ_TIR_AND);
  ck_assert_int_eq(v2->call.args[0]->binary.a->kind, TJ_TIR_LE);
  ck_assert_int_eq(v2->call.args[0]->binary.b->kind, TJ_TIR_LT);
  tj_arena_free(a);
}
END_TEST

/* Integer literal arithmetic is folded as Python would, but TVM's constants are int64:
 * a result past int64 is an error, not undefined behaviour (fuzz_pipeline found 28**28
 * in a shape: tests/fuzz/regressions/pipeline/literal_power_overflow.rx). */
START_TEST(literal_arithmetic_past_int64_is_an_error) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@T.prim_func(private=True)\n"
      "def f(A: T.Buffer((8,), \"float32\")):\n"
      "    for i in range((-1)**1000000000000000001 + 2**2 + 1**999999999999999999 + 0**0 + 2**62 // 2**61):\n"
      "        A[i] = T.float32(0)\n");
  int64_t extent = 0;
  ck_assert(tj_tir_is_const_int(m->funcs[0].prim->body->loop.extent, &extent));
  ck_assert_int_eq(extent, 7); /* -1 + 4 + 1 + 1 + 2 */
  tj_arena_free(a);
  static const char *const bad[] = {"2**63", "9223372036854775807 + 1", "(-9223372036854775807 - 1) // -1",
                                    "3037000500 * 3037000500", "-9223372036854775807 - 2"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[512];
    snprintf(text, sizeof text,
             "@T.prim_func(private=True)\ndef f(A: T.Buffer((8,), \"float32\")):\n    for i in range(%s):\n"
             "        A[i] = T.float32(0)\n",
             bad[i]);
    expect_error(text, "m.rx:3:", "overflows int64");
  }
}
END_TEST

START_TEST(relax_symbolic_shapes_and_sinfo) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@I.ir_module\n"
      "class Mod:\n"
      "    I.module_attrs({\"attr\": 10})\n"
      "    @R.function\n"
      "    def main(x: R.Tensor((\"n\", \"n * 2\"), dtype=\"float32\"), s: R.Shape(ndim=2), o: R.Object,\n"
      "             p: R.Prim(\"int64\"), t: R.Tuple(R.Tensor, R.Tensor(None, \"float32\", ndim=2))) -> R.Tensor(dtype=\"float32\", ndim=2):\n"
      "        n = T.int64()\n"
      "        cls = Mod\n"
      "        y: R.Tensor((n, n * 2), \"float32\") = cls.helper(x)\n"
      "        z = t[1]\n"
      "        return y\n"
      "    @R.function(private=True)\n"
      "    def helper(x: R.Tensor((\"m\", \"k\"), \"float32\")) -> R.Tensor((\"m\", \"k\"), \"float32\"):\n"
      "        return x\n");
  ck_assert_int_eq(tj_attrs_get_int(m->attrs, "attr", 0), 10);
  const tj_rx_func_t *f = tj_module_find_relax(m, "main");
  const tj_sinfo_t *xs = f->params[0]->sinfo;
  ck_assert_int_eq(xs->tensor.ndim, 2);
  ck_assert_int_eq(xs->tensor.shape[0]->kind, TJ_TIR_VAR);
  ck_assert_int_eq(xs->tensor.shape[1]->kind, TJ_TIR_MUL);
  ck_assert_ptr_eq(xs->tensor.shape[1]->binary.a, xs->tensor.shape[0]); /* one var per name */
  ck_assert(tj_dtype_eq(xs->tensor.shape[1]->binary.b->dtype, TJ_I64));
  ck_assert_int_eq(f->params[1]->sinfo->kind, TJ_SINFO_SHAPE);
  ck_assert_int_eq(f->params[1]->sinfo->shape.ndim, 2);
  ck_assert_int_eq(f->params[2]->sinfo->kind, TJ_SINFO_OBJECT);
  ck_assert_int_eq(f->params[3]->sinfo->kind, TJ_SINFO_PRIM);
  ck_assert_int_eq(f->params[4]->sinfo->tuple.n, 2);
  ck_assert_int_eq(f->params[4]->sinfo->tuple.fields[0]->tensor.ndim, -1);
  const tj_rx_block_t *b = &f->body->seq.blocks[0];
  ck_assert(!b->is_dataflow);
  ck_assert_int_eq(b->n_bindings, 2);
  const tj_sinfo_t *ys = b->bindings[0].var->sinfo;
  ck_assert_ptr_eq(ys->tensor.shape[0], xs->tensor.shape[0]); /* `n = T.int64()` reuses the param var */
  ck_assert_int_eq(b->bindings[0].value->call.callee->kind, TJ_RX_GLOBAL_VAR);
  ck_assert_int_eq(b->bindings[1].value->kind, TJ_RX_TUPLE_GET_ITEM);
  ck_assert_int_eq(b->bindings[1].var->sinfo->tensor.ndim, 2);
  ck_assert_ptr_null(tj_attrs_get(tj_module_find_relax(m, "helper")->attrs, "global_symbol"));
  tj_arena_free(a);
}
END_TEST

START_TEST(relax_ops_if_and_constants) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@R.function\n"
      "def f(c: R.Tensor((), \"bool\"), x: R.Tensor((2, 3), \"float32\")) -> R.Tensor((2, 3), \"float32\"):\n"
      "    if c:\n"
      "        w = R.add(x, R.const(1.5, \"float32\"))\n"
      "        y = R.multiply(w, w)\n"
      "    else:\n"
      "        y = R.astype(x, \"float32\")\n"
      "    with R.dataflow():\n"
      "        p = R.permute_dims(y, axes=[1, 0])\n"
      "        q = R.reshape(p, (6,))\n"
      "        R.output(q)\n"
      "    return y\n");
  const tj_rx_func_t *f = m->funcs[0].relax;
  ck_assert_str_eq(tj_attrs_get_str(f->attrs, "global_symbol", ""), "f");
  ck_assert_int_eq(f->body->seq.n_blocks, 2);
  const tj_rx_binding_t *ifb = &f->body->seq.blocks[0].bindings[0];
  ck_assert_int_eq(ifb->value->kind, TJ_RX_IF);
  const tj_rx_expr_t *then_b = ifb->value->if_.then_branch;
  ck_assert_int_eq(then_b->kind, TJ_RX_SEQ);
  ck_assert_int_eq(then_b->seq.blocks[0].n_bindings, 2);
  ck_assert_ptr_eq(then_b->seq.body, then_b->seq.blocks[0].bindings[1].var);
  const tj_rx_expr_t *add = then_b->seq.blocks[0].bindings[0].value;
  ck_assert(tj_rx_is_op_call(add, "relax.add"));
  ck_assert_int_eq(add->call.args[1]->kind, TJ_RX_CONSTANT);
  ck_assert_int_eq(add->call.args[1]->constant.ndim, 0);
  ck_assert(tj_sinfo_is_tensor(ifb->var->sinfo));
  const tj_rx_block_t *df = &f->body->seq.blocks[1];
  ck_assert(df->is_dataflow);
  ck_assert(tj_rx_is_op_call(df->bindings[0].value, "relax.permute_dims"));
  ck_assert_ptr_nonnull(tj_attrs_get(df->bindings[0].value->call.attrs, "axes"));
  ck_assert_int_eq(df->bindings[1].value->call.args[1]->kind, TJ_RX_SHAPE_EXPR);
  ck_assert_int_eq(df->bindings[1].var->kind, TJ_RX_VAR);
  tj_arena_free(a);
}
END_TEST

/* ---- TVMScript constructs: packed calls, call_tir_inplace, print, assert, match_cast ---- */

/* print(parse(text)) parses to a structurally equal module. */
static void assert_text_round_trips(tj_arena_t *a, tj_module_t *m1) {
  char why[512] = "";
  char *text = tj_print_module(m1);
  ck_assert_ptr_nonnull(text);
  tj_module_t *m2 = NULL;
  tj_status_t *s = tj_parse_module(a, "printed", text, strlen(text), &m2);
  ck_assert_msg(s == NULL, "printed text does not parse: %s\n%s", s ? tj_status_text(s) : "", text);
  ck_assert_msg(tj_struct_equal_module(m1, m2, why, sizeof why), "round trip differs: %s\n%s", why, text);
  tj_free(text);
}

static const tj_rx_expr_t *binding_value(const tj_rx_func_t *f, int block, int i) {
  return f->body->seq.blocks[block].bindings[i].value;
}

/* tvm.tir.const(value, dtype=None), as TVM's tests write literals: the dtype given, or
 * Python's default for the value (bool, int32, float32). */
/* TVM's ExprWithOp overloads: -x, //, ** and the four orderings are operator calls. */
START_TEST(python_operators_on_relax_values_are_op_calls) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@R.function\n"
      "def f(x: R.Tensor((2,), \"float32\"), y: R.Tensor((2,), \"float32\")):\n"
      "    a = -x\n"
      "    b = x // y\n"
      "    c = x ** y\n"
      "    d = x >= y\n"
      "    e = x < y\n"
      "    return (a, b, c, d, e)\n");
  const tj_rx_func_t *f = m->funcs[0].relax;
  const char *ops[] = {"relax.negative", "relax.floor_divide", "relax.power", "relax.greater_equal", "relax.less"};
  for (int i = 0; i < 5; i++) ck_assert_msg(tj_rx_is_op_call(binding_value(f, 0, i), ops[i]), "binding %d", i);
  ck_assert(tj_dtype_eq(binding_value(f, 0, 3)->sinfo->tensor.dtype, TJ_BOOL));
  tj_arena_free(a);
}
END_TEST

/* topi's batch_matmul names a buffer in a block attr: {"layout_free_placeholders": [B]}.
 * The value is the buffer itself (not its name): it prints as the buffer, round-trips,
 * compares by correspondence (renamed buffers are equal, another buffer is not) and
 * follows a TIR mutator that replaces the buffer. */
#define PLACEHOLDER_FN(which)                                                             \
  "@T.prim_func\n"                                                                        \
  "def f(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"               \
  "    for i in range(4):\n"                                                              \
  "        with T.block(\"b\"):\n"                                                         \
  "            vi = T.axis.spatial(4, i)\n"                                                \
  "            T.reads(A[vi])\n"                                                           \
  "            T.writes(B[vi])\n"                                                          \
  "            T.block_attr({\"layout_free_placeholders\": [" which "]})\n"                 \
  "            B[vi] = A[vi]\n"

/* The block named "b", under the implicit root block. */
static const tj_block_t *only_block(const tj_module_t *m) {
  const tj_tir_stmt_t *s = m->funcs[0].prim->body;
  for (;;) {
    if (s->kind == TJ_TIR_SEQ) s = s->seq.stmts[0];
    else if (s->kind == TJ_TIR_FOR) s = s->loop.body;
    else if (s->kind == TJ_TIR_BLOCK_REALIZE && strcmp(s->realize.block->name, "b") != 0) s = s->realize.block->body;
    else break;
  }
  ck_assert_int_eq(s->kind, TJ_TIR_BLOCK_REALIZE);
  return s->realize.block;
}

static const tj_buffer_t *rename_to_c(tj_tir_mutator_t *m, const tj_buffer_t *b) {
  if (strcmp(b->name, "A") != 0) return NULL;
  tj_buffer_t *c = tj_arena_memdup(m->arena, b, sizeof *b);
  c->name = "C";
  return c;
}

START_TEST(buffer_as_block_attr_value) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a, PLACEHOLDER_FN("A"));
  const tj_block_t *b = only_block(m);
  const tj_attr_value_t *v = tj_attrs_get(b->annotations, "layout_free_placeholders");
  ck_assert_ptr_nonnull(v);
  ck_assert_int_eq(v->kind, TJ_ATTR_LIST);
  ck_assert_int_eq(v->list.items[0].kind, TJ_ATTR_BUFFER);
  ck_assert_ptr_eq(v->list.items[0].buffer, m->funcs[0].prim->buffer_map[0]);
  char *text = tj_print_module(m);
  ck_assert_ptr_nonnull(strstr(text, "T.block_attr({\"layout_free_placeholders\": [A]})"));
  tj_module_t *again = parse_ok(a, text);
  tj_free(text);
  char why[512];
  ck_assert_msg(tj_struct_equal_module(m, again, why, sizeof why), "%s", why);
  tj_module_t *other = parse_ok(a, PLACEHOLDER_FN("B"));
  ck_assert(!tj_struct_equal_module(m, other, why, sizeof why));
  ck_assert_msg(strstr(why, "layout_free_placeholders") != NULL, "%s", why);
  tj_tir_mutator_t mut = {.arena = a, .buffer = rename_to_c};
  const tj_block_t *renamed = tj_tir_mutate_block(&mut, b);
  ck_assert(!mut.failed && renamed != b);
  v = tj_attrs_get(renamed->annotations, "layout_free_placeholders");
  ck_assert_str_eq(v->list.items[0].buffer->name, "C");
  ck_assert_str_eq(renamed->reads[0].buffer->name, "C"); /* in step with the body */
  tj_arena_free(a);
}
END_TEST

/* `x.astype(d)` is TVM's ExprWithOp.astype (R.astype); bfloat16 is a dtype of its own
 * that prints back as "bfloat16". */
START_TEST(astype_method_and_bfloat16) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@R.function\n"
      "def f(x: R.Tensor((2,), \"float32\")):\n"
      "    y = x.astype(\"bfloat16\")\n"
      "    z = R.add(y, y).astype(dtype=\"float16\")\n"
      "    return z\n");
  const tj_rx_func_t *f = m->funcs[0].relax;
  const tj_rx_expr_t *y = binding_value(f, 0, 0);
  ck_assert(tj_rx_is_op_call(y, "relax.astype"));
  ck_assert(tj_dtype_eq(y->sinfo->tensor.dtype, TJ_BF16));
  ck_assert(tj_rx_is_op_call(binding_value(f, 0, 1), "relax.add")); /* the receiver, bound once */
  ck_assert(tj_rx_is_op_call(binding_value(f, 0, 2), "relax.astype"));
  ck_assert(tj_dtype_eq(binding_value(f, 0, 2)->sinfo->tensor.dtype, TJ_F16));
  char *text = tj_print_module(m);
  ck_assert_ptr_nonnull(strstr(text, "R.astype(x, dtype=\"bfloat16\")"));
  ck_assert_ptr_nonnull(strstr(text, "R.Tensor((2,), dtype=\"bfloat16\")"));
  tj_free(text);
  tj_arena_free(a);
  expect_error("@R.function\n"
               "def f(x: R.Tensor((2,), \"float32\")):\n"
               "    y = x.astype(\"float16\", \"float32\")\n"
               "    return y\n",
               "m.rx:3:9:", "astype takes one argument, the dtype");
  expect_error("@R.function\n"
               "def f(x: R.Tensor((2,), \"bfloat32\")):\n"
               "    return x\n",
               "m.rx:2:", "data type");
}
END_TEST

/* `a = T.Var("a", "int64")` in a Relax body names the signature's symbolic var, as
 * `a = T.int64()` does; a different name is TVM's error. */
START_TEST(tir_var_constructor_declares_a_symbolic_var) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@R.function\n"
      "def f(x: R.Tensor((\"a\",), \"float32\")):\n"
      "    a = T.Var(\"a\", \"int64\")\n"
      "    y = R.call_pure_packed(\"id\", x, sinfo_args=R.Tensor((a * 2,), \"float32\"))\n"
      "    return y\n");
  const tj_rx_func_t *f = m->funcs[0].relax;
  const tj_tir_expr_t *dim = binding_value(f, 0, 0)->sinfo->tensor.shape[0];
  ck_assert_int_eq(dim->kind, TJ_TIR_MUL);
  ck_assert_ptr_eq(dim->binary.a, f->params[0]->sinfo->tensor.shape[0]); /* the parameter's var */
  tj_arena_free(a);
  expect_error("@R.function\n"
               "def f(x: R.Tensor((\"a\",), \"float32\")):\n"
               "    b = T.Var(\"a\", \"int64\")\n"
               "    return x\n",
               "m.rx:3:15:", "keeps the name");
}
END_TEST

START_TEST(tvm_tir_const_makes_a_typed_literal) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@T.prim_func(private=True)\n"
      "def f(A: T.Buffer((T.int64(4),), \"bool\"), B: T.Buffer((T.int64(4),), \"int64\")):\n"
      "    A[0] = tvm.tir.const(True, \"bool\")\n"
      "    B[0] = tvm.tir.const(3, dtype=\"int64\")\n"
      "    B[1] = T.Cast(\"int64\", tvm.tir.const(0.5))\n");
  const tj_prim_func_t *f = m->funcs[0].prim;
  const tj_tir_expr_t *p = f->body->seq.stmts[0]->store.value, *q = f->body->seq.stmts[1]->store.value;
  const tj_tir_expr_t *r = f->body->seq.stmts[2]->store.value->unary.operand;
  ck_assert(tj_dtype_eq(p->dtype, TJ_BOOL));
  ck_assert_int_eq(p->int_imm, 1);
  ck_assert(tj_dtype_eq(q->dtype, TJ_I64));
  ck_assert_int_eq(q->int_imm, 3);
  ck_assert(tj_dtype_eq(r->dtype, TJ_F32));
  tj_arena_free(a);
}
END_TEST

START_TEST(relax_packed_calls_as_tvm_builds_them) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@R.function(pure=False)\n"
      "def f(x: R.Tensor((2, 3), \"float32\")) -> R.Tensor((2, 3), \"float32\"):\n"
      "    a = R.call_packed(\"vm.builtin.copy\", x, sinfo_args=R.Tensor((2, 3), \"float32\"))\n"
      "    b = R.call_pure_packed(\"copy\", a, R.prim_value(1), sinfo_args=[x.struct_info])\n"
      "    c = R.call_dps_packed(\"dps\", b, R.Tensor((2, 3), dtype=\"float32\"))\n"
      "    d = R.call_dps_packed(\"dps2\", (b, c), [R.Tensor((2, 3), \"float32\"), R.Tensor((3,), \"int32\")])\n"
      "    o: R.Object = R.call_packed(\"g\", sinfo_args=R.Object)\n"
      "    R.print(c, d[1], format=\"c={} d1={}\")\n"
      "    R.assert_op(R.const(True, \"bool\"), [c, d[1]], format=\"{} {}\")\n"
      "    p = R.call_packed(\"h\", x)\n"
      "    e: R.Callable(ret=R.Object, purity=False) = R.ExternFunc(\"e\")\n"
      "    k = R.prim_value(T.FloatImm(\"float32\", 0.5))\n"
      "    return c\n");
  const tj_rx_func_t *f = m->funcs[0].relax;
  const tj_rx_expr_t *packed = binding_value(f, 0, 0);
  ck_assert_int_eq(packed->call.callee->kind, TJ_RX_EXTERN_FUNC); /* a call OF the ExternFunc */
  ck_assert_str_eq(packed->call.callee->string_imm, "vm.builtin.copy");
  ck_assert_int_eq(packed->call.n_sinfo_args, 1);
  ck_assert(tj_sinfo_is_tensor(packed->sinfo));
  const tj_rx_expr_t *pure = binding_value(f, 0, 1);
  ck_assert(tj_rx_is_op_call(pure, "relax.call_pure_packed")); /* op(ExternFunc, *args) */
  ck_assert_int_eq(pure->call.n_args, 3);
  ck_assert_int_eq(pure->call.args[0]->kind, TJ_RX_EXTERN_FUNC);
  ck_assert_int_eq(pure->call.args[2]->kind, TJ_RX_PRIM_VALUE);
  ck_assert_int_eq(binding_value(f, 0, 9)->sinfo->kind, TJ_SINFO_OBJECT); /* no sinfo_args: an Object */
  const tj_rx_binding_t *ext = &f->body->seq.blocks[0].bindings[10];
  ck_assert_int_eq(ext->var->sinfo->kind, TJ_SINFO_FUNC);
  ck_assert_int_eq(ext->var->sinfo->func.n_params, -1); /* R.Callable(ret=..., purity=...) is opaque */
  const tj_rx_expr_t *dps = binding_value(f, 0, 2);
  ck_assert(tj_rx_is_op_call(dps, "relax.call_dps_packed"));
  ck_assert_int_eq(dps->call.args[1]->kind, TJ_RX_TUPLE); /* a single argument is wrapped */
  ck_assert_int_eq(dps->call.args[1]->tuple.n, 1);
  const tj_rx_expr_t *dps2 = binding_value(f, 0, 3);
  ck_assert_int_eq(dps2->sinfo->kind, TJ_SINFO_TUPLE); /* a list of two outputs is a tuple */
  ck_assert_int_eq(binding_value(f, 0, 4)->sinfo->kind, TJ_SINFO_OBJECT);
  /* print: format first, then the values (the get-item was bound first) */
  const tj_rx_binding_t *pr = &f->body->seq.blocks[0].bindings[6];
  ck_assert(tj_rx_is_op_call(pr->value, "relax.print"));
  ck_assert_int_eq(pr->value->call.n_args, 3);
  ck_assert_str_eq(pr->value->call.args[0]->string_imm, "c={} d1={}");
  ck_assert_str_eq(pr->var->var.name, "_");
  ck_assert_int_eq(pr->var->sinfo->kind, TJ_SINFO_TUPLE);
  ck_assert_int_eq(pr->var->sinfo->tuple.n, 0);
  /* assert_op: condition, format, then the format args */
  const tj_rx_expr_t *as = f->body->seq.blocks[0].bindings[8].value; /* after d[1], bound again */
  ck_assert(tj_rx_is_op_call(as, "relax.assert_op"));
  ck_assert_int_eq(as->call.n_args, 4);
  ck_assert_str_eq(as->call.args[1]->string_imm, "{} {}");
  const tj_tir_expr_t *half = binding_value(f, 0, 11)->prim_value.value;
  ck_assert_int_eq(half->kind, TJ_TIR_FLOAT_IMM);
  ck_assert(tj_dtype_eq(half->dtype, TJ_F32));
  ck_assert(half->float_imm == 0.5);
  assert_text_round_trips(a, m);
  tj_arena_free(a);
}
END_TEST

START_TEST(relax_call_tir_inplace_and_match_cast) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@I.ir_module\n"
      "class Module:\n"
      "    @T.prim_func\n"
      "    def copy(A: T.Buffer((2, 3), \"int32\"), B: T.Buffer((2, 3), \"int32\"), C: T.Buffer((2, 3), \"int32\")):\n"
      "        T.evaluate(0)\n"
      "    @R.function\n"
      "    def main(x: R.Tensor((2, 3), \"int32\"), y: R.Tensor(\"int32\", ndim=2), c: R.Tensor((), \"bool\")):\n"
      "        m, n = T.int64(), T.int64()\n"
      "        y1 = R.match_cast(y, R.Tensor((m, n), \"int32\"))\n"
      "        r = R.call_tir_inplace(Module.copy, (x, y1), [0, -1], [R.Tensor((2, 3), \"int32\"), R.Tensor((2, 3), \"int32\")])\n"
      "        g = R.call_tir_with_grad(Module.copy, (x, x), R.Tensor((2, 3), \"int32\"), te_grad_name=\"copy_grad\", te_grad_kwargs={\"k\": 1.0})\n"
      "        if c:\n"
      "            R.print(x, format=\"then\")\n"
      "        else:\n"
      "            R.print(x, format=\"else\")\n"
      "        return (r, R.shape([m, n]))\n");
  const tj_rx_func_t *f = m->funcs[1].relax;
  const tj_rx_binding_t *mc = &f->body->seq.blocks[0].bindings[0];
  ck_assert_ptr_nonnull(mc->match_cast);
  ck_assert_ptr_eq(mc->var->sinfo, mc->match_cast);
  ck_assert_int_eq(mc->var->sinfo->tensor.shape[0]->kind, TJ_TIR_VAR);
  const tj_rx_expr_t *ip = binding_value(f, 0, 1);
  ck_assert(tj_rx_is_op_call(ip, "relax.call_tir_inplace"));
  const tj_attr_value_t *idx = tj_attrs_get(ip->call.attrs, "inplace_indices");
  ck_assert_ptr_nonnull(idx);
  ck_assert_int_eq(idx->list.n, 2);
  ck_assert_int_eq(idx->list.items[1].i, -1);
  const tj_rx_expr_t *grad = binding_value(f, 0, 2);
  ck_assert(tj_rx_is_op_call(grad, "relax.call_tir_with_grad"));
  ck_assert_str_eq(tj_attrs_get_str(grad->call.attrs, "te_grad_name", ""), "copy_grad");
  ck_assert_int_eq(tj_attrs_get(grad->call.attrs, "te_grad_kwargs")->kind, TJ_ATTR_DICT);
  const tj_rx_expr_t *iff = binding_value(f, 0, 3);
  ck_assert_int_eq(iff->kind, TJ_RX_IF);
  ck_assert(tj_rx_is_op_call(iff->if_.then_branch->seq.blocks[0].bindings[0].value, "relax.print"));
  assert_text_round_trips(a, m);
  tj_arena_free(a);
}
END_TEST

START_TEST(relax_construct_errors_name_the_place) {
  const char *mod = "@I.ir_module\nclass M:\n    @T.prim_func\n    def k(A: T.Buffer((2,), \"int32\")):\n"
                    "        T.evaluate(0)\n    @R.function\n    def main(x: R.Tensor((2,), \"int32\")):\n";
  char buf[1024];
  snprintf(buf, sizeof buf, "%s        r = R.call_tir_inplace(M.k, (x,), [-1], R.Tensor((2,), \"int32\"))\n        return r\n", mod);
  expect_error(buf, "m.rx:8:13:", "use R.call_tir instead");
  snprintf(buf, sizeof buf, "%s        r = R.call_tir_inplace(M.k, (x,), [0], R.Tensor((3,), \"int32\"))\n        return r\n", mod);
  expect_error(buf, "m.rx:8:13:", "same shape and dtype");
  snprintf(buf, sizeof buf, "%s        r = R.call_tir_inplace(M.k, (x,), [1], R.Tensor((2,), \"int32\"))\n        return r\n", mod);
  expect_error(buf, "m.rx:8:13:", "outside -1..0");
  snprintf(buf, sizeof buf, "%s        r = R.match_cast(x, R.Shape([2]))\n        return r\n", mod);
  expect_error(buf, "m.rx:8:13:", "R.match_cast can never succeed");
  snprintf(buf, sizeof buf, "%s        R.add(x, x)\n        return x\n", mod);
  expect_error(buf, "m.rx:8:9:", "must be bound to a name");
  snprintf(buf, sizeof buf, "%s        r = R.call_pure_packed(\"f\", x)\n        return r\n", mod);
  expect_error(buf, "m.rx:8:13:", "needs sinfo_args=");
  snprintf(buf, sizeof buf, "%s        r = R.assert_op(x)\n        return x\n", mod);
  expect_error(buf, "m.rx:8:13:", "must be a bool scalar");
  snprintf(buf, sizeof buf, "%s        a, b = x, x\n        return x\n", mod);
  expect_error(buf, "m.rx:8:16:", "only allowed to declare symbolic variables");
  snprintf(buf, sizeof buf, "%s        n = T.int32()\n        r = R.call_dps_packed(\"f\", x, R.Tensor((n,), \"int32\"))\n        return r\n", mod);
  expect_error(buf, "m.rx:9:49:", "int64");
}
END_TEST

START_TEST(relax_call_of_a_function_takes_the_callers_variables) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = parse_ok(a,
      "@I.ir_module\n"
      "class Module:\n"
      "    @R.function\n"
      "    def sub(x: R.Tensor((\"m\", \"n\"), \"float32\"), kk: R.Prim(value=\"k\")) -> R.Tuple(R.Tensor((\"n\", \"m\"), \"float32\"), R.Tensor((\"k\", \"q\"), \"float32\")):\n"
      "        y = R.permute_dims(x)\n"
      "        z = R.call_pure_packed(\"f\", sinfo_args=R.Tensor((k, 2), \"float32\"))\n"
      "        return (y, z)\n"
      "    @R.function\n"
      "    def main(a: R.Tensor((\"h\", 3), \"float32\"), c: R.Prim(value=\"w\")):\n"
      "        h = T.int64()\n"
      "        w = T.int64()\n"
      "        r = Module.sub(a, c)\n"
      "        return r\n");
  const tj_rx_func_t *mainf = m->funcs[1].relax;
  const tj_sinfo_t *r = mainf->body->seq.blocks[0].bindings[0].var->sinfo;
  ck_assert_int_eq(r->kind, TJ_SINFO_TUPLE);
  const tj_sinfo_t *t0 = r->tuple.fields[0], *t1 = r->tuple.fields[1];
  /* (n, m) of sub becomes (3, h) of main */
  int64_t d;
  ck_assert(tj_tir_is_const_int(t0->tensor.shape[0], &d) && d == 3);
  ck_assert_ptr_eq(t0->tensor.shape[1], mainf->params[0]->sinfo->tensor.shape[0]);
  /* (k, q): q is bound by no argument, so the shape is erased to unknown (rank kept) */
  ck_assert_int_eq(t1->tensor.ndim, 2);
  ck_assert_ptr_null(t1->tensor.shape);
  tj_arena_free(a);
}
END_TEST

START_TEST(failed_parse_leaves_output_untouched) {
  tj_arena_t *a = tj_arena_create();
  tj_module_t *sentinel = (tj_module_t *)(uintptr_t)0x1234;
  tj_module_t *m = sentinel;
  tj_status_t *s = tj_parse_module(a, "m.rx", "@R.function\ndef f(:\n", 20, &m);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_PARSE);
  ck_assert_ptr_eq(m, sentinel);
  tj_status_free(s);
  s = tj_parse_file(a, "/nonexistent/x.rx", &m);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_IO);
  tj_status_free(s);
  tj_arena_free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("parse");
  TCase *tc = tcase_create("parse");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, seed_parses_with_expected_structure);
  tcase_add_test(tc, errors_unclosed_paren);
  tcase_add_test(tc, errors_unclosed_paren_at_end_of_file);
  tcase_add_test(tc, errors_unknown_intrinsic);
  tcase_add_test(tc, errors_undefined_name);
  tcase_add_test(tc, errors_bad_indentation);
  tcase_add_test(tc, errors_truncated_and_empty);
  tcase_add_test(tc, errors_binary_garbage);
  tcase_add_test(tc, errors_deep_nesting);
  tcase_add_test(tc, errors_relax_rules);
  tcase_add_test(tc, buffer_sugar_equals_match_buffer);
  tcase_add_test(tc, literals_take_the_other_operand_type);
  tcase_add_test(tc, chained_comparisons_fold_literal_pairs);
  tcase_add_test(tc, literal_arithmetic_past_int64_is_an_error);
  tcase_add_test(tc, explicit_root_block_keeps_empty_regions);
  tcase_add_test(tc, relax_symbolic_shapes_and_sinfo);
  tcase_add_test(tc, relax_ops_if_and_constants);
  tcase_add_test(tc, failed_parse_leaves_output_untouched);
  tcase_add_test(tc, round_trip_seed);
  tcase_add_test(tc, relax_packed_calls_as_tvm_builds_them);
  tcase_add_test(tc, tvm_tir_const_makes_a_typed_literal);
  tcase_add_test(tc, tir_var_constructor_declares_a_symbolic_var);
  tcase_add_test(tc, python_operators_on_relax_values_are_op_calls);
  tcase_add_test(tc, astype_method_and_bfloat16);
  tcase_add_test(tc, buffer_as_block_attr_value);
  tcase_add_test(tc, relax_call_tir_inplace_and_match_cast);
  tcase_add_test(tc, relax_construct_errors_name_the_place);
  tcase_add_test(tc, relax_call_of_a_function_takes_the_callers_variables);
  tcase_add_test(tc, mutated_sources_fail_cleanly);
  tcase_add_test(tc, allocation_failures_fail_cleanly);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
