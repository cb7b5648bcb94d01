/* The parallel runtime: the thread pool (runtime/thread_pool.c), T.parallel codegen
 * (jit/codegen_parallel.c) and the plumbing from instance to kernel. Kernels with
 * parallel loops must give the interpreter's bits for every thread count, including
 * extents smaller than the pool and 0/1, with local buffers inside the loop, nested
 * parallel loops, and many host threads calling at once. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/interp.h"
#include "ir/text/parse.h"
#include "jit/jit.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"
#include "support/alloc.h"
#include "testutil.h"
#include "transforms/tir/lower.h"
#include "tvmjit.h"

static const int thread_counts[] = {1, 2, 3, 7};
enum { N_COUNTS = sizeof thread_counts / sizeof thread_counts[0], MAX_ARGS = 8 };

/* ---------------- the pool alone ---------------- */

typedef struct cover {
  int64_t n;
  atomic_int *hits;
  atomic_int calls;
} cover_t;

static void count_hits(int64_t begin, int64_t end, void *ctx) {
  cover_t *c = ctx;
  ck_assert_int_le(0, begin);
  ck_assert_int_le(begin, end);
  ck_assert_int_le(end, c->n);
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&c->hits[i], 1);
  atomic_fetch_add(&c->calls, 1);
}

START_TEST(pool_runs_every_index_exactly_once) {
  static const int64_t ns[] = {0, 1, 2, 3, 5, 7, 8, 29, 1000};
  for (int t = 0; t < N_COUNTS; t++) {
    tj_thread_pool_t *pool;
    TU_OK(tj_thread_pool_create(thread_counts[t], &pool));
    ck_assert_int_eq(tj_thread_pool_num_threads(pool), thread_counts[t]);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      for (int rep = 0; rep < 20; rep++) {
        cover_t c = {ns[k], calloc((size_t)ns[k] + 1, sizeof(atomic_int)), 0};
        tj_thread_pool_parallel_for(pool, ns[k], count_hits, &c);
        for (int64_t i = 0; i < ns[k]; i++) ck_assert_int_eq(atomic_load(&c.hits[i]), 1);
        if (ns[k] == 0) ck_assert_int_eq(atomic_load(&c.calls), 0);
        free(c.hits);
      }
    }
    tj_thread_pool_free(pool);
  }
}
END_TEST

/* Each thread starts on its own contiguous range of chunks; one that is held up (here
 * the caller, in its first chunk) has the rest of its range taken over by the others.
 * The chunks hold each other up with flags, not sleeps, so that a loaded machine only
 * makes the tests slower: 64 indices in 8 chunks of 8, chunks 0-3 the caller's home
 * range, 4-7 the worker's. */
typedef struct takeover {
  atomic_int hits[64];
  pthread_t runner[64];
} takeover_t;

static void record_runner(takeover_t *t, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; i++) {
    t->runner[i] = pthread_self();
    atomic_fetch_add(&t->hits[i], 1);
  }
}

static bool all_done(takeover_t *t, int from, int to) {
  for (int i = from; i < to; i++)
    if (!atomic_load(&t->hits[i])) return false;
  return true;
}

/* Waits (up to 5 s: a machine that cannot run the other thread by then fails the test)
 * until indices [from, to) have run. */
static void wait_until_done(takeover_t *t, int from, int to) {
  for (int waited_us = 0; !all_done(t, from, to) && waited_us < 5000000; waited_us += 200) usleep(200);
}

/* The thread that runs chunk 0 is held up there until chunks 1-3 have run: the other
 * thread must take them over. That is the caller, whose home range 0-3 the worker takes
 * over once its own 4-7 is done; on a loaded host the worker may reach chunk 0 first
 * (the caller not yet scheduled: ASan build, load 8, 2026-12-07), and then the caller
 * runs 1-3. Either way 1-3 run on the thread not held up. */
static void held_up_first_chunk(int64_t begin, int64_t end, void *ctx) {
  if (begin == 0) wait_until_done(ctx, 8, 32);
  record_runner(ctx, begin, end);
}

START_TEST(a_held_up_threads_chunks_are_taken_over) {
  tj_thread_pool_t *pool;
  TU_OK(tj_thread_pool_create(2, &pool));
  takeover_t t = {0};
  tj_thread_pool_parallel_for(pool, 64, held_up_first_chunk, &t);
  for (int i = 0; i < 64; i++) ck_assert_int_eq(atomic_load(&t.hits[i]), 1);
  for (int i = 1; i < 8; i++) ck_assert(pthread_equal(t.runner[i], t.runner[0]));
  for (int i = 8; i < 32; i++)
    ck_assert_msg(!pthread_equal(t.runner[i], t.runner[0]), "index %d ran on the thread held up in chunk 0", i);
  tj_thread_pool_free(pool);
}
END_TEST

/* The worker, held up in its first chunk (4) until 5-7 have run; the caller, in its first
 * chunk (0), waits up to 5 s for the worker to start: then the caller runs 0-3 and takes
 * 7, 6, 5 over. A worker that has not started by then is late: the caller takes 4 too,
 * and the run is tried again. */
typedef struct home_range {
  takeover_t t;
  pthread_t caller;
  atomic_int worker_started;
} home_range_t;

static void held_up_fifth_chunk(int64_t begin, int64_t end, void *ctx) {
  home_range_t *h = ctx;
  if (begin == 32 && !pthread_equal(pthread_self(), h->caller)) {
    atomic_store(&h->worker_started, 1);
    wait_until_done(&h->t, 40, 64);
  }
  if (begin == 0) {
    /* long enough for a loaded host to schedule the worker; a late one only retries */
    for (int waited_us = 0; !atomic_load(&h->worker_started) && waited_us < 5000000; waited_us += 200) usleep(200);
  }
  record_runner(&h->t, begin, end);
}

START_TEST(the_caller_runs_its_own_range_first) {
  tj_thread_pool_t *pool;
  TU_OK(tj_thread_pool_create(2, &pool));
  bool worker_was_on_time = false;
  for (int attempt = 0; attempt < 20 && !worker_was_on_time; attempt++) {
    home_range_t h = {.caller = pthread_self()};
    tj_thread_pool_parallel_for(pool, 64, held_up_fifth_chunk, &h);
    worker_was_on_time = atomic_load(&h.worker_started);
    if (!worker_was_on_time) continue;
    for (int i = 0; i < 64; i++) {
      ck_assert_int_eq(atomic_load(&h.t.hits[i]), 1);
      bool by_caller = pthread_equal(h.t.runner[i], pthread_self()) != 0;
      ck_assert_msg(by_caller == (i < 32 || i >= 40), "index %d ran on the %s", i, by_caller ? "caller" : "worker");
    }
  }
  ck_assert_msg(worker_was_on_time, "the worker never started within 5 s in 20 runs");
  tj_thread_pool_free(pool);
}
END_TEST

START_TEST(chunks_are_contiguous_and_depend_only_on_n_and_threads) {
  for (int64_t n = 0; n < 50; n++)
    for (int t = 1; t <= 9; t++) {
      int nc = tj_thread_pool_num_chunks(n, t);
      ck_assert_int_eq(nc == 0, n == 0);
      ck_assert_int_le(nc, n);
      int64_t expect_begin = 0;
      for (int i = 0; i < nc; i++) {
        int64_t b, e;
        tj_thread_pool_chunk(n, nc, i, &b, &e);
        ck_assert_int_eq(b, expect_begin);
        ck_assert_int_gt(e, b); /* no empty chunk */
        expect_begin = e;
      }
      ck_assert_int_eq(expect_begin, n);
    }
}
END_TEST

/* Each thread's home range holds n * t / T to n * (t + 1) / T: an even split to one
 * iteration, e.g. 28 rows over 2 threads 14/14 (not 16/12), 7 rows 3/4, 10 rows 5/5. */
START_TEST(home_ranges_split_the_iterations_evenly) {
  for (int64_t n = 1; n < 300; n++)
    for (int t = 1; t <= 9; t++) {
      int nc = tj_thread_pool_num_chunks(n, t);
      ck_assert_int_eq(tj_thread_pool_home_chunk(nc, t, 0), 0);
      ck_assert_int_eq(tj_thread_pool_home_chunk(nc, t, t), nc);
      for (int th = 0; th < t; th++) {
        int c0 = tj_thread_pool_home_chunk(nc, t, th), c1 = tj_thread_pool_home_chunk(nc, t, th + 1);
        int64_t b = n, e = n, unused;
        if (c0 < nc) tj_thread_pool_chunk(n, nc, c0, &b, &unused);
        if (c1 < nc) tj_thread_pool_chunk(n, nc, c1, &e, &unused);
        ck_assert_msg(b == n * th / t && e == n * (th + 1) / t,
                      "n %lld over %d threads: thread %d's home is [%lld, %lld)", (long long)n, t, th, (long long)b,
                      (long long)e);
      }
    }
}
END_TEST

/* Uneven loops over 2 threads (7 rows, 28 rows, one iteration, ...) run every index once. */
START_TEST(uneven_loops_run_every_index_once) {
  static const int64_t ns[] = {1, 2, 3, 7, 10, 14, 28, 57};
  tj_thread_pool_t *pool;
  TU_OK(tj_thread_pool_create(2, &pool));
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (int rep = 0; rep < 50; rep++) {
      cover_t c = {ns[k], calloc((size_t)ns[k], sizeof(atomic_int)), 0};
      tj_thread_pool_parallel_for(pool, ns[k], count_hits, &c);
      for (int64_t i = 0; i < ns[k]; i++) ck_assert_int_eq(atomic_load(&c.hits[i]), 1);
      free(c.hits);
    }
  tj_thread_pool_free(pool);
}
END_TEST

typedef struct nested {
  tj_thread_pool_t *pool;
  atomic_int inner_hits;
} nested_t;

static void inner_body(int64_t begin, int64_t end, void *ctx) {
  atomic_fetch_add(&((nested_t *)ctx)->inner_hits, (int)(end - begin));
}

static void outer_body(int64_t begin, int64_t end, void *ctx) {
  nested_t *n = ctx;
  for (int64_t i = begin; i < end; i++) tj_thread_pool_parallel_for(n->pool, 10, inner_body, n);
}

START_TEST(parallel_for_inside_a_chunk_runs_inline) {
  tj_thread_pool_t *pool;
  TU_OK(tj_thread_pool_create(3, &pool));
  nested_t n = {pool, 0};
  tj_thread_pool_parallel_for(pool, 17, outer_body, &n);
  ck_assert_int_eq(atomic_load(&n.inner_hits), 170);
  tj_thread_pool_free(pool);
}
END_TEST

typedef struct host_arg {
  tj_thread_pool_t *pool;
  bool ok;
} host_arg_t;

static void *host_thread(void *p) {
  host_arg_t *h = p;
  h->ok = true;
  for (int rep = 0; rep < 200 && h->ok; rep++) {
    int64_t n = 1 + rep % 37;
    atomic_int hits[40] = {0};
    cover_t c = {n, hits, 0};
    tj_thread_pool_parallel_for(h->pool, n, count_hits, &c);
    for (int64_t i = 0; i < n; i++) h->ok &= atomic_load(&hits[i]) == 1;
  }
  return NULL;
}

START_TEST(host_threads_share_a_pool_without_deadlock) {
  tj_thread_pool_t *pool;
  TU_OK(tj_thread_pool_create(3, &pool));
  pthread_t th[8];
  host_arg_t args[8];
  for (int i = 0; i < 8; i++) {
    args[i] = (host_arg_t){pool, false};
    ck_assert_int_eq(pthread_create(&th[i], NULL, host_thread, &args[i]), 0);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(th[i], NULL);
    ck_assert(args[i].ok);
  }
  tj_thread_pool_free(pool);
}
END_TEST

START_TEST(thread_count_comes_from_option_then_environment) {
  int n = 0;
  unsetenv("TVMJIT_NUM_THREADS");
  TU_OK(tj_thread_pool_resolve_threads(5, &n));
  ck_assert_int_eq(n, 5);
  TU_OK(tj_thread_pool_resolve_threads(0, &n));
  ck_assert_int_ge(n, 1); /* the cores */
  setenv("TVMJIT_NUM_THREADS", "3", 1);
  TU_OK(tj_thread_pool_resolve_threads(0, &n));
  ck_assert_int_eq(n, 3);
  TU_OK(tj_thread_pool_resolve_threads(2, &n)); /* the option wins */
  ck_assert_int_eq(n, 2);
  static const char *const bad[] = {"abc", "0", "-2", "4x", "100000"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("TVMJIT_NUM_THREADS", bad[i], 1);
    tj_status_t *st = tj_thread_pool_resolve_threads(0, &n);
    ck_assert_ptr_nonnull(st);
    ck_assert_int_eq(tj_status_code(st), TJ_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(tj_status_text(st), "TVMJIT_NUM_THREADS"), "%s", tj_status_text(st));
    tj_status_free(st);
  }
  /* through the API: a clear error, no instance */
  setenv("TVMJIT_NUM_THREADS", "many", 1);
  tvmjit_instance_t *inst = NULL;
  tvmjit_status_t *st = tvmjit_instance_create(NULL, &inst);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_INVALID_ARGUMENT);
  ck_assert_msg(strstr(tvmjit_status_message(st), "TVMJIT_NUM_THREADS='many'"), "%s", tvmjit_status_message(st));
  tvmjit_status_free(st);
  ck_assert_ptr_null(inst);
  unsetenv("TVMJIT_NUM_THREADS");
  tvmjit_instance_options_t o;
  tvmjit_instance_options_init(&o);
  o.num_threads = -1;
  st = tvmjit_instance_create(&o, &inst);
  ck_assert_int_eq(tvmjit_status_code(st), TVMJIT_INVALID_ARGUMENT);
  tvmjit_status_free(st);
}
END_TEST

/* ---------------- kernels with T.parallel against the interpreter ---------------- */

/* "@N@" in the template becomes n, "@M@" n + 2. */
static char *instantiate(const char *tmpl, int64_t n) {
  size_t cap = strlen(tmpl) * 2 + 64, len = 0;
  char *out = malloc(cap);
  for (const char *p = tmpl; *p;) {
    if (strncmp(p, "@N@", 3) == 0 || strncmp(p, "@M@", 3) == 0) {
      len += (size_t)sprintf(out + len, "%lld", (long long)(p[1] == 'N' ? n : n + 2));
      p += 3;
    } else {
      out[len++] = *p++;
    }
  }
  out[len] = '\0';
  return out;
}

/* C = C / 2 + A * B row by row, the rows in parallel; blocks as TVMScript writes them.
 * Updating C in place catches an iteration that runs twice or not at all. */
static const char *elementwise_tmpl =
    "@T.prim_func\n"
    "def k(A: T.Buffer((@N@, 6), \"float32\"), B: T.Buffer((@N@, 6), \"float32\"), C: T.Buffer((@N@, 6), \"float32\")):\n"
    "    for i in T.parallel(@N@):\n"
    "        for j in range(6):\n"
    "            with T.block(\"c\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                C[vi, vj] = C[vi, vj] * T.float32(0.5) + A[vi, vj] * B[vi, vj]\n";

/* A local buffer per row (on the stack) and a large one (on the heap), both written
 * and read inside the parallel loop: shared storage would mix rows. */
static const char *local_buffer_tmpl =
    "@T.prim_func\n"
    "def k(A: T.Buffer((@N@, 8), \"float32\"), B: T.Buffer((@N@, 8), \"float32\"), C: T.Buffer((@N@, 8), \"float32\")):\n"
    "    for i in T.parallel(@N@):\n"
    "        with T.block(\"row\"):\n"
    "            vi = T.axis.spatial(@N@, i)\n"
    "            tmp = T.alloc_buffer((8,), \"float32\")\n"
    "            big = T.alloc_buffer((20000,), \"float32\")\n"
    "            for j in range(8):\n"
    "                with T.block(\"t\"):\n"
    "                    vj = T.axis.spatial(8, j)\n"
    "                    tmp[vj] = A[vi, vj] * B[vi, vj]\n"
    "                    big[vj * 2000] = A[vi, vj] + T.float32(3)\n"
    "            for j in range(8):\n"
    "                with T.block(\"o\"):\n"
    "                    vj = T.axis.spatial(8, j)\n"
    "                    C[vi, vj] = tmp[vj] + tmp[7 - vj] + big[(7 - vj) * 2000]\n";

/* Nested parallel loops (the inner one runs serially inside the outer's body), a
 * parallel loop inside a serial one (captures its variable), a scalar parameter, and
 * two parallel loops in sequence, the second reading what the first wrote. */
static const char *nested_tmpl =
    "@T.prim_func\n"
    "def k(A: T.Buffer((3, @N@, 5), \"float32\"), B: T.Buffer((3, @N@, 5), \"float32\"), C: T.Buffer((3, @N@, 5), \"float32\"), s: T.int64):\n"
    "    for o in range(3):\n"
    "        for i in T.parallel(@N@):\n"
    "            for j in T.parallel(5):\n"
    "                B[o, i, j] = A[o, i, j] * T.Cast(\"float32\", o + 1) + T.Cast(\"float32\", s)\n"
    "    for o in T.parallel(3):\n"
    "        for i in range(@N@):\n"
    "            for j in range(5):\n"
    "                C[o, i, j] = B[o, @N@ - 1 - i, 4 - j] - B[o, i, j]\n";

/* Integer data, one-dimensional, neighbours read across chunk boundaries. */
static const char *int_tmpl =
    "@T.prim_func\n"
    "def k(A: T.Buffer((@M@,), \"int32\"), B: T.Buffer((@M@,), \"int32\"), C: T.Buffer((@M@,), \"int32\")):\n"
    "    for i in T.parallel(@N@):\n"
    "        C[i + 1] = A[i] * B[i + 2] - A[i + 1] // T.int32(3)\n";

typedef struct kernel_case {
  tj_arena_t *arena;
  const tj_prim_func_t *f;
  void (*fn)(void);
  int n_buffers, n_scalars;
  int64_t scalars[MAX_ARGS];
  size_t bytes[MAX_ARGS];
  void *inputs[MAX_ARGS]; /* the data each buffer starts with */
  void *expected[MAX_ARGS];
} kernel_case_t;

static tj_jit_t *jit;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_u32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

static void fill(void *data, tj_dtype_t dt, size_t bytes) {
  size_t n = bytes / tj_dtype_bytes(dt);
  for (size_t i = 0; i < n; i++) {
    if (dt.code == TJ_DT_FLOAT) ((float *)data)[i] = (float)(int)(next_u32() % 2001 - 1000) / 64.0f;
    else ((int32_t *)data)[i] = (int32_t)(next_u32() % 201) - 100;
  }
}

/* Parses, compiles and runs the interpreter once for the expected bits. */
static void prepare(kernel_case_t *kc, const char *tmpl, int64_t n) {
  memset(kc, 0, sizeof *kc);
  char *text = instantiate(tmpl, n);
  kc->arena = tj_arena_create();
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(kc->arena, "parallel.py", text, strlen(text), &m));
  free(text);
  kc->f = tj_module_find_prim(m, "k");
  ck_assert_ptr_nonnull(kc->f);
  tj_jit_kernel_t k;
  tj_jit_options_t opts = {.opt_level = 2};
  TU_OK(tj_jit_compile_prim_func(jit, kc->f, "k", &opts, &k));
  kc->fn = k.fn;
  kc->n_buffers = k.n_buffers;
  kc->n_scalars = k.n_scalars;
  ck_assert_int_le(k.n_buffers, MAX_ARGS);
  for (int i = 0; i < k.n_scalars; i++) kc->scalars[i] = 7 + i;
  for (int i = 0; i < kc->n_buffers; i++) {
    const tj_buffer_t *b = kc->f->buffer_map[i];
    int64_t elems = 0;
    ck_assert(tj_buffer_static_size(b, &elems));
    kc->bytes[i] = (size_t)elems * tj_dtype_bytes(b->dtype);
    kc->inputs[i] = malloc(kc->bytes[i] + 1);
    kc->expected[i] = malloc(kc->bytes[i] + 1);
    fill(kc->inputs[i], b->dtype, kc->bytes[i]);
    memcpy(kc->expected[i], kc->inputs[i], kc->bytes[i]);
  }
  TU_OK(tj_interp_run_prim_func(kc->f, kc->f->n_params, kc->expected, kc->n_scalars ? kc->scalars : NULL));
}

static void release(kernel_case_t *kc) {
  for (int i = 0; i < kc->n_buffers; i++) {
    free(kc->inputs[i]);
    free(kc->expected[i]);
  }
  tj_arena_free(kc->arena);
}

static void call_kernel(const kernel_case_t *kc, void **bufs) {
  tj_kernel_t k;
  void *argv[MAX_ARGS * 2];
  TU_OK(tj_kernel_init(&k, "k", kc->fn, kc->n_buffers, kc->n_scalars));
  tj_kernel_call(&k, bufs, kc->scalars, argv);
  tj_kernel_release(&k);
}

/* Runs the kernel on fresh copies of the inputs; true when every buffer has the
 * interpreter's bits. */
static bool run_matches(const kernel_case_t *kc) {
  void *bufs[MAX_ARGS];
  for (int i = 0; i < kc->n_buffers; i++) {
    bufs[i] = malloc(kc->bytes[i] + 1);
    memcpy(bufs[i], kc->inputs[i], kc->bytes[i]);
  }
  call_kernel(kc, bufs);
  bool same = true;
  for (int i = 0; i < kc->n_buffers; i++) {
    same &= memcmp(bufs[i], kc->expected[i], kc->bytes[i]) == 0;
    free(bufs[i]);
  }
  return same;
}

static void check_template(const char *tmpl, const char *what) {
  static const int64_t extents[] = {0, 1, 2, 3, 5, 6, 7, 8, 13, 64};
  for (size_t e = 0; e < sizeof extents / sizeof extents[0]; e++) {
    kernel_case_t kc;
    prepare(&kc, tmpl, extents[e]);
    tj_thread_pool_set_current(NULL);
    ck_assert_msg(run_matches(&kc), "%s, extent %lld, no pool: differs from the interpreter", what,
                  (long long)extents[e]);
    for (int t = 0; t < N_COUNTS; t++) {
      tj_thread_pool_t *pool;
      TU_OK(tj_thread_pool_create(thread_counts[t], &pool));
      tj_thread_pool_set_current(pool);
      for (int rep = 0; rep < 3; rep++)
        ck_assert_msg(run_matches(&kc), "%s, extent %lld, %d threads: differs from the interpreter", what,
                      (long long)extents[e], thread_counts[t]);
      tj_thread_pool_set_current(NULL);
      tj_thread_pool_free(pool);
    }
    release(&kc);
  }
}

static void jit_setup(void) { TU_OK(tj_jit_create(&jit)); }
static void jit_teardown(void) { tj_jit_free(jit); }

START_TEST(elementwise_parallel_matches_interpreter) { check_template(elementwise_tmpl, "elementwise"); }
END_TEST

START_TEST(local_buffers_inside_parallel_loop_are_per_thread) { check_template(local_buffer_tmpl, "local buffer"); }
END_TEST

START_TEST(nested_and_sequential_parallel_loops_match_interpreter) { check_template(nested_tmpl, "nested"); }
END_TEST

START_TEST(int32_parallel_loop_matches_interpreter) { check_template(int_tmpl, "int32"); }
END_TEST

/* The IR: one outlined body for the outer loop of a nest, none for the inner one; the
 * runtime entry is called by name (resolved at link time, so cached objects work). */
START_TEST(only_the_outermost_parallel_loop_is_outlined) {
  char *text = instantiate(nested_tmpl, 4);
  tj_arena_t *a = tj_arena_create();
  tj_module_t *m = NULL;
  TU_OK(tj_parse_module(a, "nested.py", text, strlen(text), &m));
  free(text);
  const tj_prim_func_t *low = NULL;
  TU_OK(tj_tir_lower(a, tj_module_find_prim(m, "k"), "k", &low));
  char *ir = NULL;
  TU_OK(tj_jit_llvm_ir(low, "k", 0, &ir));
  ck_assert_msg(strstr(ir, "declare void @tvmjit_parallel_for(i64, ptr, ptr)"), "%s", ir);
  ck_assert_msg(strstr(ir, "define internal void @k.parallel0(i64 %0, i64 %1, ptr %2)"), "%s", ir);
  ck_assert_msg(strstr(ir, "define internal void @k.parallel1(i64 %0, i64 %1, ptr %2)"), "%s", ir);
  ck_assert_msg(!strstr(ir, "@k.parallel2"), "the inner parallel loop must not be outlined:\n%s", ir);
  int calls = 0;
  for (const char *p = ir; (p = strstr(p, "call void @tvmjit_parallel_for(")); p++) calls++;
  ck_assert_int_eq(calls, 2);
  tj_free(ir);
  tj_arena_free(a);
}
END_TEST

/* 8 host threads call one parallel kernel at once, all on the same pool. */
typedef struct kernel_thread {
  const kernel_case_t *kc;
  tj_thread_pool_t *pool;
  bool ok;
} kernel_thread_t;

static void *kernel_thread_main(void *p) {
  kernel_thread_t *t = p;
  tj_thread_pool_set_current(t->pool);
  t->ok = true;
  for (int rep = 0; rep < 30; rep++) t->ok &= run_matches(t->kc);
  return NULL;
}

START_TEST(host_threads_call_a_parallel_kernel_concurrently) {
  kernel_case_t kc;
  prepare(&kc, local_buffer_tmpl, 29);
  tj_thread_pool_t *pool;
  TU_OK(tj_thread_pool_create(3, &pool));
  pthread_t th[8];
  kernel_thread_t args[8];
  for (int i = 0; i < 8; i++) {
    args[i] = (kernel_thread_t){&kc, pool, false};
    ck_assert_int_eq(pthread_create(&th[i], NULL, kernel_thread_main, &args[i]), 0);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(th[i], NULL);
    ck_assert_msg(args[i].ok, "host thread %d got different bits", i);
  }
  tj_thread_pool_free(pool);
  release(&kc);
}
END_TEST

/* ---------------- through the public API ---------------- */

static const char *api_model =
    "from tvm.script import ir as I\n"
    "from tvm.script import tir as T\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func(private=True)\n"
    "    def scale(A: T.Buffer((37, 16), \"float32\"), C: T.Buffer((37, 16), \"float32\")):\n"
    "        for i in T.parallel(37):\n"
    "            for j in range(16):\n"
    "                with T.block(\"c\"):\n"
    "                    vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                    C[vi, vj] = A[vi, vj] * T.float32(0.5) + A[36 - vi, 15 - vj]\n"
    "    @R.function\n"
    "    def main(x: R.Tensor((37, 16), dtype=\"float32\")) -> R.Tensor((37, 16), dtype=\"float32\"):\n"
    "        cls = Module\n"
    "        with R.dataflow():\n"
    "            y = R.call_tir(cls.scale, (x,), out_sinfo=R.Tensor((37, 16), dtype=\"float32\"))\n"
    "            z = R.call_tir(cls.scale, (y,), out_sinfo=R.Tensor((37, 16), dtype=\"float32\"))\n"
    "            R.output(z)\n"
    "        return z\n";

static float api_expected(const float *x, int i, int j) {
  float y_ij = x[i * 16 + j] * 0.5f + x[(36 - i) * 16 + 15 - j];
  float y_rev = x[(36 - i) * 16 + 15 - j] * 0.5f + x[i * 16 + j];
  return y_ij * 0.5f + y_rev;
}

typedef struct api_thread {
  tvmjit_function_t *fn;
  const float *x;
  bool ok;
} api_thread_t;

static void *api_thread_main(void *p) {
  api_thread_t *t = p;
  int64_t dims[2] = {37, 16};
  tvmjit_tensor_t *x = NULL;
  t->ok = tvmjit_tensor_wrap(TVMJIT_FLOAT32, 2, dims, (void *)t->x, &x) == NULL;
  for (int rep = 0; rep < 50 && t->ok; rep++) {
    tvmjit_tensor_t *y = NULL;
    tvmjit_status_t *st = tvmjit_function_call(t->fn, 1, (const tvmjit_tensor_t *const *)&x, 1, &y);
    if (st) {
      tvmjit_status_free(st);
      t->ok = false;
      break;
    }
    const float *out = tvmjit_tensor_data(y);
    for (int i = 0; i < 37; i++)
      for (int j = 0; j < 16; j++) t->ok &= out[i * 16 + j] == api_expected(t->x, i, j);
    tvmjit_tensor_free(y);
  }
  tvmjit_tensor_free(x);
  return NULL;
}

START_TEST(api_threads_option_runs_parallel_kernels_from_many_threads) {
  float x[37 * 16];
  for (int i = 0; i < 37 * 16; i++) x[i] = (float)(i % 97) * 0.25f - 7.0f;
  for (int t = 0; t < N_COUNTS; t++) {
    tvmjit_instance_options_t o;
    tvmjit_instance_options_init(&o);
    o.num_threads = thread_counts[t];
    tvmjit_instance_t *inst = NULL;
    tvmjit_module_t *mod = NULL;
    tvmjit_function_t *fn = NULL;
    ck_assert_ptr_null(tvmjit_instance_create(&o, &inst));
    tvmjit_status_t *st = tvmjit_module_load_string(inst, "par.rx", api_model, strlen(api_model), NULL, &mod);
    ck_assert_msg(!st, "%s", st ? tvmjit_status_message(st) : "");
    ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
    pthread_t th[8];
    api_thread_t args[8];
    for (int i = 0; i < 8; i++) {
      args[i] = (api_thread_t){fn, x, false};
      ck_assert_int_eq(pthread_create(&th[i], NULL, api_thread_main, &args[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
      pthread_join(th[i], NULL);
      ck_assert_msg(args[i].ok, "%d threads: API thread %d got wrong results", thread_counts[t], i);
    }
    tvmjit_module_free(mod);
    tvmjit_instance_free(inst);
  }
}
END_TEST

/* ---------------- determinism of every model ---------------- */

/* Runs main of `path` with `threads` threads on inputs from a fixed seed; returns the
 * outputs' bytes concatenated (NULL when the model does not load: bad models). */
static unsigned char *run_model(const char *path, int threads, size_t *out_len) {
  tvmjit_instance_options_t o;
  tvmjit_instance_options_init(&o);
  o.num_threads = threads;
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(&o, &inst));
  tvmjit_status_t *st = tvmjit_module_load_file(inst, path, NULL, &mod);
  if (!st) st = tvmjit_module_get_function(mod, "main", &fn);
  if (st) {
    tvmjit_status_free(st);
    tvmjit_module_free(mod);
    tvmjit_instance_free(inst);
    return NULL;
  }
  int ni = tvmjit_function_num_inputs(fn), no = tvmjit_function_num_outputs(fn);
  tvmjit_tensor_t **in = calloc((size_t)ni + 1, sizeof *in), **out = calloc((size_t)no + 1, sizeof *out);
  rng = 0x2545f4914f6cdd1dull;
  for (int i = 0; i < ni; i++) {
    tvmjit_dtype_t dt;
    int ndim;
    const int64_t *shape;
    ck_assert_int_eq(tvmjit_function_input_info(fn, i, NULL, &dt, &ndim, &shape), 0);
    int64_t dims[8];
    for (int d = 0; d < ndim && d < 8; d++) dims[d] = shape[d] < 0 ? 3 : shape[d]; /* symbolic dims: 3 */
    ck_assert_ptr_null(tvmjit_tensor_new(dt, ndim, dims, &in[i]));
    unsigned char *d = tvmjit_tensor_data(in[i]);
    size_t nb = tvmjit_tensor_nbytes(in[i]);
    if (dt == TVMJIT_FLOAT16)
      for (size_t k = 0; k + 1 < nb; k += 2) {
        uint16_t h = tj_float_to_half((float)(int)(next_u32() % 2001 - 1000) / 1000.0f);
        memcpy(d + k, &h, 2);
      }
    else if (dt == TVMJIT_FLOAT32)
      for (size_t k = 0; k + 3 < nb; k += 4) {
        float f = (float)(int)(next_u32() % 2001 - 1000) / 1000.0f;
        memcpy(d + k, &f, 4);
      }
    else
      for (size_t k = 0; k < nb; k++) d[k] = (unsigned char)(next_u32() % 3);
  }
  st = tvmjit_function_call(fn, ni, (const tvmjit_tensor_t *const *)in, no, out);
  ck_assert_msg(!st, "%s, %d threads: %s", path, threads, st ? tvmjit_status_message(st) : "");
  size_t len = 0;
  for (int i = 0; i < no; i++) len += tvmjit_tensor_nbytes(out[i]);
  unsigned char *bytes = malloc(len + 1), *p = bytes;
  for (int i = 0; i < no; i++) {
    memcpy(p, tvmjit_tensor_data(out[i]), tvmjit_tensor_nbytes(out[i]));
    p += tvmjit_tensor_nbytes(out[i]);
    tvmjit_tensor_free(out[i]);
  }
  for (int i = 0; i < ni; i++) tvmjit_tensor_free(in[i]);
  free(in);
  free(out);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
  *out_len = len;
  return bytes;
}

/* Every model in tests/models and the seed: identical output bits at 1, 2 and 3 threads (issues 6
 * and 8). Models with T.parallel loops (parallel_rows.rx, and every model once the
 * schedule marks loops parallel) run them on 2 and 3 threads. */
START_TEST(every_model_gives_identical_bits_at_1_2_and_3_threads) {
  char dir[4096], path[4096 + 256];
  snprintf(dir, sizeof dir, "%s/tests/models", tu_source_dir());
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  char *paths[64];
  int n_paths = 0;
  for (struct dirent *e; (e = readdir(d)) && n_paths < 63;) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".rx") != 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    paths[n_paths++] = strdup(path);
  }
  closedir(d);
  snprintf(path, sizeof path, "%s/examples/seed/model.rx", tu_source_dir());
  paths[n_paths++] = strdup(path);
  int compared = 0;
  for (int m = 0; m < n_paths; m++) {
    size_t len1 = 0;
    unsigned char *one = run_model(paths[m], 1, &len1);
    if (one) {
      for (int threads = 2; threads <= 3; threads++) {
        size_t len = 0;
        unsigned char *many = run_model(paths[m], threads, &len);
        ck_assert_msg(many != NULL, "%s loads with 1 thread but not with %d", paths[m], threads);
        ck_assert_msg(len == len1 && memcmp(one, many, len) == 0, "%s: outputs at %d threads differ from 1 thread",
                      paths[m], threads);
        free(many);
      }
      free(one);
      compared++;
    }
    free(paths[m]);
  }
  ck_assert_int_ge(compared, 5); /* 4 good models in tests/models and the seed */
}
END_TEST

int main(void) {
  Suite *s = suite_create("parallel");
  TCase *pool = tcase_create("pool");
  tcase_add_test(pool, pool_runs_every_index_exactly_once);
  tcase_add_test(pool, a_held_up_threads_chunks_are_taken_over);
  tcase_add_test(pool, the_caller_runs_its_own_range_first);
  tcase_add_test(pool, chunks_are_contiguous_and_depend_only_on_n_and_threads);
  tcase_add_test(pool, home_ranges_split_the_iterations_evenly);
  tcase_add_test(pool, uneven_loops_run_every_index_once);
  tcase_add_test(pool, parallel_for_inside_a_chunk_runs_inline);
  tcase_add_test(pool, host_threads_share_a_pool_without_deadlock);
  tcase_add_test(pool, thread_count_comes_from_option_then_environment);
  suite_add_tcase(s, pool);
  TCase *kern = tcase_create("kernels");
  tcase_add_checked_fixture(kern, jit_setup, jit_teardown);
  tcase_set_timeout(kern, 600);
  tcase_add_test(kern, elementwise_parallel_matches_interpreter);
  tcase_add_test(kern, local_buffers_inside_parallel_loop_are_per_thread);
  tcase_add_test(kern, nested_and_sequential_parallel_loops_match_interpreter);
  tcase_add_test(kern, int32_parallel_loop_matches_interpreter);
  tcase_add_test(kern, only_the_outermost_parallel_loop_is_outlined);
  tcase_add_test(kern, host_threads_call_a_parallel_kernel_concurrently);
  tcase_add_test(kern, api_threads_option_runs_parallel_kernels_from_many_threads);
  suite_add_tcase(s, kern);
  TCase *models = tcase_create("models");
  tcase_set_timeout(models, 900);
  tcase_add_test(models, every_model_gives_identical_bits_at_1_2_and_3_threads);
  suite_add_tcase(s, models);
  return tu_run_suite(s);
}
