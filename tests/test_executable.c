/* runtime/executable: building, the static memory plan, input checks, ffi calls with
 * pointer and int64 arguments, output copies, concurrent runs. Kernels are plain C
 * functions with the kernel signature. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/executable.h"
#include "runtime/memory_plan.h"
#include "support/alloc.h"
#include "testutil.h"

/* ---- kernels: void f(void *buf..., int64_t scalar...) ---- */

static void k_add_const(void *in, void *out, int64_t n, int64_t c) {
  const float *a = in;
  float *o = out;
  for (int64_t i = 0; i < n; i++) o[i] = a[i] + (float)c;
}

static void k_mul_const(void *in, void *out, int64_t n, int64_t c) {
  const float *a = in;
  float *o = out;
  for (int64_t i = 0; i < n; i++) o[i] = a[i] * (float)c;
}

static void k_add(void *x, void *y, void *out, int64_t n) {
  const float *a = x, *b = y;
  float *o = out;
  for (int64_t i = 0; i < n; i++) o[i] = a[i] + b[i];
}

/* Eight arguments: more than fit in registers, so libffi must place some on the stack. */
static void k_wide(void *a, void *b, void *c, void *d, void *out, int64_t n, int64_t s1, int64_t s2) {
  const float *pa = a, *pb = b, *pc = c, *pd = d;
  float *o = out;
  for (int64_t i = 0; i < n; i++) o[i] = pa[i] + 2 * pb[i] + 3 * pc[i] + 4 * pd[i] + (float)(s1 * 10 + s2);
}

#define N 1024

typedef struct chain {
  tj_executable_t *exe;
  int x, t1, t2, t3, out;
} chain_t;

static int add_value(tj_executable_t *exe, const char *name, tj_value_kind_t kind, int index, tj_dtype_t dt, int ndim,
                     const int64_t *shape, const void *data) {
  tj_value_desc_t d = {.name = name, .dtype = dt, .ndim = ndim, .kind = kind, .index = index, .const_data = data};
  for (int i = 0; i < ndim; i++) d.shape[i] = shape[i];
  int id;
  TU_OK(tj_executable_add_value(exe, &d, &id));
  return id;
}

/* out = (((x + 1) * 2) + 3) * 4 through three intermediates t1, t2, t3. */
static chain_t build_chain(void) {
  chain_t c;
  TU_OK(tj_executable_create(&c.exe));
  int add, mul;
  TU_OK(tj_executable_add_kernel(c.exe, "add_const", (void (*)(void))k_add_const, 2, 2, &add));
  TU_OK(tj_executable_add_kernel(c.exe, "mul_const", (void (*)(void))k_mul_const, 2, 2, &mul));
  int64_t shape[1] = {N};
  c.x = add_value(c.exe, "x", TJ_VALUE_INPUT, 0, TJ_F32, 1, shape, NULL);
  c.t1 = add_value(c.exe, "t1", TJ_VALUE_INTERMEDIATE, 0, TJ_F32, 1, shape, NULL);
  c.t2 = add_value(c.exe, "t2", TJ_VALUE_INTERMEDIATE, 0, TJ_F32, 1, shape, NULL);
  c.t3 = add_value(c.exe, "t3", TJ_VALUE_INTERMEDIATE, 0, TJ_F32, 1, shape, NULL);
  c.out = add_value(c.exe, "y", TJ_VALUE_OUTPUT, 0, TJ_F32, 1, shape, NULL);
  int a0[2] = {c.x, c.t1}, a1[2] = {c.t1, c.t2}, a2[2] = {c.t2, c.t3}, a3[2] = {c.t3, c.out};
  int64_t s1[2] = {N, 1}, s2[2] = {N, 2}, s3[2] = {N, 3}, s4[2] = {N, 4};
  TU_OK(tj_executable_add_call(c.exe, add, 2, a0, s1, "t1"));
  TU_OK(tj_executable_add_call(c.exe, mul, 2, a1, s2, "t2"));
  TU_OK(tj_executable_add_call(c.exe, add, 2, a2, s3, "t3"));
  TU_OK(tj_executable_add_call(c.exe, mul, 2, a3, s4, "y"));
  TU_OK(tj_executable_plan_memory(c.exe));
  return c;
}

static tj_tensor_t *input_vector(float base) {
  int64_t shape[1] = {N};
  tj_tensor_t *t;
  TU_OK(tj_tensor_new(TJ_F32, 1, shape, &t));
  for (int i = 0; i < N; i++) ((float *)t->data)[i] = base + (float)i * 0.5f;
  return t;
}

static float chain_expected(float x) { return ((x + 1) * 2 + 3) * 4; }

START_TEST(chain_runs_and_reuses_memory) {
  chain_t c = build_chain();
  ck_assert_int_eq(tj_executable_num_inputs(c.exe), 1);
  ck_assert_int_eq(tj_executable_num_outputs(c.exe), 1);
  ck_assert_int_eq(tj_executable_num_calls(c.exe), 4);
  ck_assert_int_eq(tj_executable_num_kernels(c.exe), 2);
  ck_assert_str_eq(tj_executable_input(c.exe, 0)->name, "x");
  ck_assert_str_eq(tj_executable_output(c.exe, 0)->name, "y");
  /* t1 (calls 0..1) and t3 (calls 2..3) never live together; t2 (1..2) overlaps both. */
  const tj_value_desc_t *t1 = tj_executable_value(c.exe, c.t1), *t2 = tj_executable_value(c.exe, c.t2),
                        *t3 = tj_executable_value(c.exe, c.t3);
  ck_assert_uint_eq(t1->offset, t3->offset);
  ck_assert_uint_ne(t1->offset, t2->offset);
  ck_assert_uint_eq(t1->offset % 64, 0);
  ck_assert_uint_eq(t2->offset % 64, 0);
  ck_assert_uint_eq(tj_executable_unplanned_bytes(c.exe), 3 * N * 4);
  ck_assert_uint_eq(tj_executable_workspace_bytes(c.exe), 2 * N * 4);
  ck_assert_uint_lt(tj_executable_workspace_bytes(c.exe), tj_executable_unplanned_bytes(c.exe));

  tj_tensor_t *x = input_vector(-3.0f);
  const tj_tensor_t *ins[1] = {x};
  tj_tensor_t *outs[1] = {NULL};
  TU_OK(tj_executable_run(c.exe, 1, ins, 1, outs));
  ck_assert_ptr_nonnull(outs[0]);
  ck_assert_ptr_ne(outs[0]->data, x->data);
  for (int i = 0; i < N; i++) ck_assert_float_eq(((float *)outs[0]->data)[i], chain_expected(((float *)x->data)[i]));
  tj_tensor_free(outs[0]);
  tj_tensor_free(x);
  tj_executable_free(c.exe);
}
END_TEST

/* Calls one after another share one run state: after the first, a call allocates
 * exactly what a fresh output tensor takes, and a call into the caller's storage
 * allocates nothing. Results stay right on every call (the kept workspace holds the
 * previous run's intermediates, which each kernel overwrites). */
START_TEST(steady_state_calls_allocate_only_their_outputs) {
  chain_t c = build_chain();
  int64_t shape[1] = {N};
  long before = tj_alloc_count();
  tj_tensor_t *probe;
  TU_OK(tj_tensor_new_uninit(TJ_F32, 1, shape, &probe));
  long per_output = tj_alloc_count() - before;
  tj_tensor_free(probe);
  ck_assert_int_eq(tj_executable_run_states_made(c.exe), 0);
  for (int k = 0; k < 3; k++) {
    tj_tensor_t *x = input_vector((float)k - 3.0f);
    const tj_tensor_t *ins[1] = {x};
    tj_tensor_t *outs[1] = {NULL};
    before = tj_alloc_count();
    TU_OK(tj_executable_run(c.exe, 1, ins, 1, outs));
    long made = tj_alloc_count() - before;
    if (k > 0) ck_assert_int_eq(made, per_output);
    for (int i = 0; i < N; i++) ck_assert_float_eq(((float *)outs[0]->data)[i], chain_expected(((float *)x->data)[i]));
    tj_tensor_t *dest;
    TU_OK(tj_tensor_new(TJ_F32, 1, shape, &dest));
    const tj_tensor_t *dests[1] = {dest};
    before = tj_alloc_count();
    TU_OK(tj_executable_run_into(c.exe, 1, ins, 1, dests, NULL, NULL));
    ck_assert_int_eq(tj_alloc_count() - before, 0);
    ck_assert_mem_eq(dest->data, outs[0]->data, N * sizeof(float));
    tj_tensor_free(dest);
    tj_tensor_free(outs[0]);
    tj_tensor_free(x);
  }
  ck_assert_int_eq(tj_executable_run_states_made(c.exe), 1);
  /* A failed call (a wrong destination) frees the state it held: the next one makes one. */
  tj_tensor_t *x = input_vector(0), *small;
  int64_t small_shape[1] = {N / 2};
  TU_OK(tj_tensor_new(TJ_F32, 1, small_shape, &small));
  const tj_tensor_t *ins[1] = {x}, *dests[1] = {small};
  tj_status_t *st = tj_executable_run_into(c.exe, 1, ins, 1, dests, NULL, NULL);
  ck_assert_ptr_nonnull(st);
  tj_status_free(st);
  tj_tensor_t *outs[1] = {NULL};
  TU_OK(tj_executable_run(c.exe, 1, ins, 1, outs));
  ck_assert_int_eq(tj_executable_run_states_made(c.exe), 2);
  tj_tensor_free(outs[0]);
  tj_tensor_free(small);
  tj_tensor_free(x);
  tj_executable_free(c.exe);
}
END_TEST

/* The slot number at the start of the plan line of value `name`. */
static int slot_of(const char *text, const char *name) {
  char pat[64];
  snprintf(pat, sizeof pat, "  %s ", name);
  const char *p = strstr(text, pat);
  ck_assert_ptr_nonnull(p);
  while (p > text && p[-1] != '\n') p--;
  int slot = -1;
  ck_assert_int_eq(sscanf(p, "%d", &slot), 1);
  return slot;
}

START_TEST(memory_plan_text_shows_slots_offsets_and_totals) {
  chain_t c = build_chain();
  char *text = tj_executable_memory_plan_text(c.exe);
  ck_assert_ptr_nonnull(text);
  ck_assert_msg(strstr(text, "3 intermediates in a workspace of 8192 bytes (unplanned 12288 bytes, 33.3% saved)"),
                "%s", text);
  /* One line per intermediate with its name, type, live calls, offset and size. */
  const char *names[3] = {"t1", "t2", "t3"};
  const char *lives[3] = {"0..1", "1..2", "2..3"};
  int ids[3] = {c.t1, c.t2, c.t3};
  for (int i = 0; i < 3; i++) {
    char want[128];
    const tj_value_desc_t *v = tj_executable_value(c.exe, ids[i]);
    char pat[16];
    snprintf(pat, sizeof pat, "  %s ", names[i]);
    const char *line = strstr(text, pat);
    ck_assert_ptr_nonnull(line);
    const char *eol = strchr(line, '\n');
    ck_assert_ptr_nonnull(eol);
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(eol - line), line);
    snprintf(want, sizeof want, " %zu", v->offset);
    ck_assert_msg(strstr(buf, want), "offset missing in '%s'", buf);
    ck_assert_msg(strstr(buf, "float32[1024]") && strstr(buf, lives[i]) && strstr(buf, " 4096"), "line '%s'", buf);
  }
  /* t1 and t3 share a slot, t2 has its own. */
  ck_assert_int_eq(slot_of(text, "t1"), slot_of(text, "t3"));
  ck_assert_int_ne(slot_of(text, "t1"), slot_of(text, "t2"));
  tj_free(text);
  tj_executable_free(c.exe);
}
END_TEST

/* Random lifetimes: no two blocks live at the same step may share a byte. */
START_TEST(memory_plan_never_overlaps_live_blocks) {
  srand(12345);
  for (int trial = 0; trial < 200; trial++) {
    int n = 1 + rand() % 24;
    tj_memory_block_t blocks[24];
    size_t sum = 0;
    for (int i = 0; i < n; i++) {
      int a = rand() % 30, b = rand() % 30;
      blocks[i].first = a < b ? a : b;
      blocks[i].last = a < b ? b : a;
      blocks[i].size = 1 + (size_t)(rand() % 5000);
      sum += tj_memory_plan_round(blocks[i].size);
    }
    size_t total = tj_memory_plan_assign(n, blocks);
    ck_assert_uint_le(total, sum);
    for (int i = 0; i < n; i++) {
      ck_assert_uint_eq(blocks[i].offset % 64, 0);
      ck_assert_uint_le(blocks[i].offset + blocks[i].size, total);
      for (int j = 0; j < i; j++) {
        bool live_together = blocks[i].first <= blocks[j].last && blocks[j].first <= blocks[i].last;
        bool share = blocks[i].offset < blocks[j].offset + blocks[j].size &&
                     blocks[j].offset < blocks[i].offset + blocks[i].size;
        ck_assert_msg(!(live_together && share), "trial %d: blocks %d and %d overlap", trial, i, j);
      }
    }
  }
}
END_TEST

static tj_executable_t *build_f16_exe(void) {
  tj_executable_t *exe;
  TU_OK(tj_executable_create(&exe));
  int k;
  TU_OK(tj_executable_add_kernel(exe, "noop", (void (*)(void))k_add, 3, 1, &k));
  int64_t shape[4] = {16, 32, 32, 16}, wshape[4] = {16, 3, 3, 16};
  int data = add_value(exe, "data", TJ_VALUE_INPUT, 0, TJ_F16, 4, shape, NULL);
  int w = add_value(exe, "weight1", TJ_VALUE_INPUT, 1, TJ_F16, 4, wshape, NULL);
  int out = add_value(exe, "out", TJ_VALUE_OUTPUT, 0, TJ_F16, 4, shape, NULL);
  int args[3] = {data, w, out};
  int64_t n = 0;
  TU_OK(tj_executable_add_call(exe, k, 3, args, &n, "out"));
  TU_OK(tj_executable_plan_memory(exe));
  return exe;
}

static void expect_run_error(tj_executable_t *exe, int n, const tj_tensor_t *const *ins, const char *want) {
  tj_tensor_t *outs[1] = {NULL};
  tj_status_t *s = tj_executable_run(exe, n, ins, 1, outs);
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INVALID_ARGUMENT);
  ck_assert_str_eq(tj_status_message(s), want);
  ck_assert_ptr_null(outs[0]);
  tj_status_free(s);
}

START_TEST(input_mismatches_name_parameter_expected_and_got) {
  tj_executable_t *exe = build_f16_exe();
  int64_t shape[4] = {16, 32, 32, 16}, wshape[4] = {16, 3, 3, 16}, small[4] = {1, 32, 32, 16};
  tj_tensor_t *f32, *f16, *w, *f16_small;
  TU_OK(tj_tensor_new(TJ_F32, 4, shape, &f32));
  TU_OK(tj_tensor_new(TJ_F16, 4, shape, &f16));
  TU_OK(tj_tensor_new(TJ_F16, 4, wshape, &w));
  TU_OK(tj_tensor_new(TJ_F16, 4, small, &f16_small));
  const tj_tensor_t *wrong_dtype[2] = {f32, w};
  expect_run_error(exe, 2, wrong_dtype, "input 'data': expected float16[16, 32, 32, 16], got float32[16, 32, 32, 16]");
  const tj_tensor_t *wrong_shape[2] = {f16_small, w};
  expect_run_error(exe, 2, wrong_shape, "input 'data': expected float16[16, 32, 32, 16], got float16[1, 32, 32, 16]");
  const tj_tensor_t *swapped[2] = {f16, f16};
  expect_run_error(exe, 2, swapped, "input 'weight1': expected float16[16, 3, 3, 16], got float16[16, 32, 32, 16]");
  const tj_tensor_t *one[1] = {f16};
  expect_run_error(exe, 1, one, "expected 2 inputs (data, weight1), got 1");
  const tj_tensor_t *missing[2] = {f16, NULL};
  expect_run_error(exe, 2, missing, "input 'weight1': expected float16[16, 3, 3, 16], got no tensor");
  /* Wrong output count. */
  const tj_tensor_t *good[2] = {f16, w};
  tj_tensor_t *outs[2] = {NULL, NULL};
  tj_status_t *s = tj_executable_run(exe, 2, good, 2, outs);
  ck_assert_ptr_nonnull(s);
  ck_assert_str_eq(tj_status_message(s), "expected room for 1 output, got 2");
  tj_status_free(s);
  tj_tensor_free(f32);
  tj_tensor_free(f16);
  tj_tensor_free(w);
  tj_tensor_free(f16_small);
  tj_executable_free(exe);
}
END_TEST

START_TEST(constants_scalars_and_stack_arguments) {
  tj_executable_t *exe;
  TU_OK(tj_executable_create(&exe));
  int wide;
  TU_OK(tj_executable_add_kernel(exe, "wide", (void (*)(void))k_wide, 5, 3, &wide));
  int64_t shape[1] = {N};
  static float cdata[N];
  for (int i = 0; i < N; i++) cdata[i] = (float)(i % 3);
  int a = add_value(exe, "a", TJ_VALUE_INPUT, 0, TJ_F32, 1, shape, NULL);
  int b = add_value(exe, "b", TJ_VALUE_CONSTANT, 0, TJ_F32, 1, shape, cdata);
  int c = add_value(exe, "c", TJ_VALUE_INPUT, 1, TJ_F32, 1, shape, NULL);
  int out = add_value(exe, "out", TJ_VALUE_OUTPUT, 0, TJ_F32, 1, shape, NULL);
  int args[5] = {a, b, c, b, out};
  int64_t scalars[3] = {N, 7, 5};
  TU_OK(tj_executable_add_call(exe, wide, 5, args, scalars, "out"));
  TU_OK(tj_executable_plan_memory(exe));
  ck_assert_uint_eq(tj_executable_workspace_bytes(exe), 0);
  tj_tensor_t *x = input_vector(1.0f), *y = input_vector(-2.0f);
  const tj_tensor_t *ins[2] = {x, y};
  tj_tensor_t *outs[1];
  TU_OK(tj_executable_run(exe, 2, ins, 1, outs));
  for (int i = 0; i < N; i++) {
    float want = ((float *)x->data)[i] + 2 * cdata[i] + 3 * ((float *)y->data)[i] + 4 * cdata[i] + 75.0f;
    ck_assert_float_eq(((float *)outs[0]->data)[i], want);
  }
  tj_tensor_free(outs[0]);
  tj_tensor_free(x);
  tj_tensor_free(y);
  tj_executable_free(exe);
}
END_TEST

/* `return (y, x, c, y)`: only the first y is the kernel's own output; the input, the
 * constant and the repeated y come back as copies, never as the caller's memory. */
START_TEST(outputs_never_alias_inputs_or_constants) {
  tj_executable_t *exe;
  TU_OK(tj_executable_create(&exe));
  int add;
  TU_OK(tj_executable_add_kernel(exe, "add", (void (*)(void))k_add, 3, 1, &add));
  int64_t shape[1] = {N};
  static float cdata[N];
  for (int i = 0; i < N; i++) cdata[i] = (float)i;
  int x = add_value(exe, "x", TJ_VALUE_INPUT, 0, TJ_F32, 1, shape, NULL);
  int c = add_value(exe, "c", TJ_VALUE_CONSTANT, 0, TJ_F32, 1, shape, cdata);
  int y = add_value(exe, "y", TJ_VALUE_OUTPUT, 0, TJ_F32, 1, shape, NULL);
  TU_OK(tj_executable_set_output(exe, 1, x));
  TU_OK(tj_executable_set_output(exe, 2, c));
  TU_OK(tj_executable_set_output(exe, 3, y));
  tj_status_t *s = tj_executable_set_output(exe, 3, x);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "output position 3 is given twice"));
  tj_status_free(s);
  int args[3] = {x, c, y};
  int64_t n = N;
  TU_OK(tj_executable_add_call(exe, add, 3, args, &n, "y"));
  TU_OK(tj_executable_plan_memory(exe));
  ck_assert_int_eq(tj_executable_num_outputs(exe), 4);
  tj_tensor_t *in = input_vector(0.25f);
  const tj_tensor_t *ins[1] = {in};
  tj_tensor_t *outs[4];
  TU_OK(tj_executable_run(exe, 1, ins, 4, outs));
  for (int o = 0; o < 4; o++) {
    ck_assert(outs[o]->owns_data);
    ck_assert_ptr_ne(outs[o]->data, in->data);
    ck_assert_ptr_ne(outs[o]->data, cdata);
    for (int p = 0; p < o; p++) ck_assert_ptr_ne(outs[o]->data, outs[p]->data);
  }
  ck_assert_int_eq(memcmp(outs[1]->data, in->data, N * 4), 0);
  ck_assert_int_eq(memcmp(outs[2]->data, cdata, N * 4), 0);
  ck_assert_int_eq(memcmp(outs[3]->data, outs[0]->data, N * 4), 0);
  ck_assert_float_eq(((float *)outs[0]->data)[10], ((float *)in->data)[10] + 10.0f);
  for (int o = 0; o < 4; o++) tj_tensor_free(outs[o]);
  tj_tensor_free(in);
  tj_executable_free(exe);
}
END_TEST

/* ---- concurrency ---- */

typedef struct worker {
  const tj_executable_t *exe;
  float base;
  int ok;
  int runs;
} worker_t;

static void *worker_main(void *arg) {
  worker_t *w = arg;
  tj_tensor_t *x = input_vector(w->base);
  const tj_tensor_t *ins[1] = {x};
  w->ok = 1;
  for (int r = 0; r < w->runs && w->ok; r++) {
    tj_tensor_t *outs[1];
    tj_status_t *s = tj_executable_run(w->exe, 1, ins, 1, outs);
    if (s) {
      tj_status_free(s);
      w->ok = 0;
      break;
    }
    for (int i = 0; i < N; i++)
      if (((float *)outs[0]->data)[i] != chain_expected(((float *)x->data)[i])) w->ok = 0;
    tj_tensor_free(outs[0]);
  }
  tj_tensor_free(x);
  return NULL;
}

START_TEST(eight_threads_run_one_executable) {
  chain_t c = build_chain();
  pthread_t th[8];
  worker_t w[8];
  for (int i = 0; i < 8; i++) {
    /* Half the threads share an input, half have their own: every result must match. */
    w[i] = (worker_t){c.exe, i % 2 ? (float)i : 1.0f, 0, 200};
    ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
  }
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 8; i++) ck_assert_msg(w[i].ok, "thread %d got a wrong result", i);
  tj_executable_free(c.exe);
}
END_TEST

/* ---- building errors and ownership ---- */

static int released;
static void release_counter(void *p) { released += *(int *)p; }

START_TEST(building_errors_are_reported) {
  tj_executable_t *exe;
  TU_OK(tj_executable_create(&exe));
  int k, id;
  TU_OK(tj_executable_add_kernel(exe, "add", (void (*)(void))k_add, 3, 1, &k));
  int64_t shape[1] = {4};
  int x = add_value(exe, "x", TJ_VALUE_INPUT, 0, TJ_F32, 1, shape, NULL);
  tj_value_desc_t d = {.name = "x2", .dtype = TJ_F32, .ndim = 1, .shape = {4}, .kind = TJ_VALUE_INPUT, .index = 0};
  tj_status_t *s = tj_executable_add_value(exe, &d, &id);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "input position 0 is given twice ('x' and 'x2')"));
  tj_status_free(s);
  d.index = 1;
  d.nbytes = 3;
  s = tj_executable_add_value(exe, &d, &id);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "nbytes 3 does not match its type (16 bytes)"));
  tj_status_free(s);
  d.nbytes = 0;
  d.kind = TJ_VALUE_CONSTANT;
  s = tj_executable_add_value(exe, &d, &id);
  ck_assert_ptr_nonnull(strstr(tj_status_message(s), "constant 'x2' has no data"));
  tj_status_free(s);
  int args[3] = {x, x, 99};
  int64_t n = 4;
  s = tj_executable_add_call(exe, k, 3, args, &n, "lv");
  ck_assert_str_eq(tj_status_message(s), "call 'lv': argument 2 is value id 99, which does not exist");
  tj_status_free(s);
  s = tj_executable_add_call(exe, k, 2, args, &n, "lv");
  ck_assert_str_eq(tj_status_message(s), "call 'lv': kernel 'add' takes 3 buffers, the call passes 2");
  tj_status_free(s);
  s = tj_executable_add_call(exe, 5, 3, args, &n, "lv");
  ck_assert_str_eq(tj_status_message(s), "call 'lv': kernel id 5 does not exist");
  tj_status_free(s);
  /* Running before planning is a caller bug, reported rather than crashing. */
  tj_tensor_t *t;
  TU_OK(tj_tensor_new(TJ_F32, 1, shape, &t));
  const tj_tensor_t *ins[1] = {t};
  s = tj_executable_run(exe, 1, ins, 0, NULL);
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_INTERNAL);
  tj_status_free(s);
  tj_tensor_free(t);
  /* A hole in the output positions. */
  TU_OK(tj_executable_set_output(exe, 1, x));
  s = tj_executable_plan_memory(exe);
  ck_assert_str_eq(tj_status_message(s), "output position 0 has no value");
  tj_status_free(s);
  static int one = 1, ten = 10;
  released = 0;
  TU_OK(tj_executable_own(exe, &one, release_counter));
  TU_OK(tj_executable_own(exe, &ten, release_counter));
  tj_executable_free(exe);
  ck_assert_int_eq(released, 11);
}
END_TEST

START_TEST(allocation_failures_are_clean) {
  chain_t c = build_chain();
  tj_tensor_t *x = input_vector(0.0f);
  const tj_tensor_t *ins[1] = {x};
  int failures = 0;
  for (long n = 0; n < 12; n++) {
    tj_tensor_t *outs[1] = {NULL};
    tj_alloc_fail_after(n);
    tj_status_t *s = tj_executable_run(c.exe, 1, ins, 1, outs);
    tj_alloc_fail_reset();
    if (s) {
      failures++;
      ck_assert_int_eq(tj_status_code(s), TJ_ERR_OUT_OF_MEMORY);
      ck_assert_ptr_null(outs[0]);
      tj_status_free(s);
    } else {
      ck_assert_float_eq(((float *)outs[0]->data)[0], chain_expected(0.0f));
      tj_tensor_free(outs[0]);
    }
  }
  ck_assert_int_gt(failures, 0);
  tj_tensor_free(x);
  tj_executable_free(c.exe);
  /* Building under failing allocations never leaks either. */
  for (long n = 0; n < 40; n++) {
    tj_executable_t *exe = NULL;
    tj_alloc_fail_after(n);
    tj_status_t *s = tj_executable_create(&exe);
    int k = -1, v = -1;
    int64_t shape[1] = {4};
    tj_value_desc_t d = {.name = "v", .dtype = TJ_F32, .ndim = 1, .shape = {4}, .kind = TJ_VALUE_INTERMEDIATE};
    if (!s) s = tj_executable_add_kernel(exe, "add", (void (*)(void))k_add, 3, 1, &k);
    if (!s) s = tj_executable_add_value(exe, &d, &v);
    int args[3] = {v, v, v};
    int64_t cnt = shape[0];
    if (!s) s = tj_executable_add_call(exe, k, 3, args, &cnt, "v");
    if (!s) s = tj_executable_plan_memory(exe);
    tj_alloc_fail_reset();
    if (s) tj_status_free(s);
    tj_executable_free(exe);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("executable");
  TCase *tc = tcase_create("executable");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, chain_runs_and_reuses_memory);
  tcase_add_test(tc, steady_state_calls_allocate_only_their_outputs);
  tcase_add_test(tc, memory_plan_text_shows_slots_offsets_and_totals);
  tcase_add_test(tc, memory_plan_never_overlaps_live_blocks);
  tcase_add_test(tc, input_mismatches_name_parameter_expected_and_got);
  tcase_add_test(tc, constants_scalars_and_stack_arguments);
  tcase_add_test(tc, outputs_never_alias_inputs_or_constants);
  tcase_add_test(tc, eight_threads_run_one_executable);
  tcase_add_test(tc, building_errors_are_reported);
  tcase_add_test(tc, allocation_failures_are_clean);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
