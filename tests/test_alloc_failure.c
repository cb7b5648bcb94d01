/* Allocation failure: the seed (examples/seed) read, passed, compiled and run through the
 * public API with the 1st, 2nd, ... Nth allocation failing (support/alloc.h), for every N
 * until the work succeeds. Each failure must come back as a clean status (code
 * out-of-memory, a message), with nothing leaked (tj_alloc_live here, LSan in the
 * sanitizer build) and no output file left behind; the run that finally succeeds must
 * give the reference bits (tests/fixtures/y_f16_acc16.npy, made by numpy).
 *
 * The sweep is split in phases, each swept over every N with the phases before it done
 * without injection: (1) read inputs, parse, verify, passes, lowering, codegen and JIT
 * with the kernels at opt level 0 (same allocations as O2 -- ours do not depend on the
 * level -- but LLVM compiles ~10x faster: about 60 vs 520 ms for the seed), (2) the call
 * at O2 (the O0 kernels run ~6x slower), (3) writing the result as .npy and .npz. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/alloc.h"
#include "testutil.h"
#include "tvmjit.h"

enum { N_PARAMS = 6, MAX_SWEEP = 100000 };

/* Everything phase 1 makes. */
typedef struct loaded {
  tvmjit_instance_t *inst;
  tvmjit_module_t *mod;
  tvmjit_function_t *fn;
  tvmjit_tensor_t *data;
  int n_params;
  char **param_names;
  tvmjit_tensor_t **params;
} loaded_t;

static void seed_path(char *buf, size_t size, const char *file) {
  snprintf(buf, size, "%s/examples/seed/%s", tu_source_dir(), file);
}

static void unload(loaded_t *l) {
  tvmjit_module_free(l->mod);
  tvmjit_instance_free(l->inst);
  tvmjit_tensor_free(l->data);
  if (l->param_names || l->params) tvmjit_npz_free(l->n_params, l->param_names, l->params);
  memset(l, 0, sizeof *l);
}

/* Phase 1: instance, inputs, module (parse, verify, passes), function (lower, JIT),
 * with the kernel cache in `cache_dir` (NULL: no cache). On failure everything made so
 * far is freed. */
static tvmjit_status_t *load_seed_cached(int opt_level, const char *cache_dir, loaded_t *l) {
  memset(l, 0, sizeof *l);
  char path[4096];
  tvmjit_instance_options_t io;
  tvmjit_instance_options_init(&io);
  io.num_threads = 1; /* one thread: the allocation order is the same in every run */
  io.cache.enable = cache_dir != NULL;
  io.cache.directory = cache_dir;
  tvmjit_status_t *st = tvmjit_instance_create(&io, &l->inst);
  seed_path(path, sizeof path, "data.npy");
  if (!st) st = tvmjit_tensor_load_npy(path, &l->data);
  seed_path(path, sizeof path, "params.npz");
  if (!st) st = tvmjit_npz_load(path, &l->n_params, &l->param_names, &l->params);
  tvmjit_module_options_t mo;
  tvmjit_module_options_init(&mo);
  mo.opt_level = opt_level;
  mo.use_cache = cache_dir != NULL;
  seed_path(path, sizeof path, "model.rx");
  if (!st) st = tvmjit_module_load_file(l->inst, path, &mo, &l->mod);
  if (!st) st = tvmjit_module_get_function(l->mod, "main", &l->fn);
  if (st) unload(l);
  return st;
}

/* Without the cache every kernel is compiled: the same allocations in every run. */
static tvmjit_status_t *load_seed(int opt_level, loaded_t *l) { return load_seed_cached(opt_level, NULL, l); }

/* Phase 2: main(data, weight1, weight2, weight3, gamma, beta); params.npz holds them in
 * that order (checked by the caller). */
static tvmjit_status_t *call_seed(const loaded_t *l, tvmjit_tensor_t **out_y) {
  const tvmjit_tensor_t *in[N_PARAMS] = {l->data};
  for (int i = 0; i < l->n_params && i + 1 < N_PARAMS; i++) in[i + 1] = l->params[i];
  return tvmjit_function_call(l->fn, N_PARAMS, in, 1, out_y);
}

static void check_params_order(const loaded_t *l) {
  static const char *const names[] = {"weight1", "weight2", "weight3", "gamma", "beta"};
  ck_assert_int_eq(l->n_params, N_PARAMS - 1);
  for (int i = 0; i < N_PARAMS - 1; i++) ck_assert_str_eq(l->param_names[i], names[i]);
}

/* The bytes of the numpy reference output. */
static char *reference(size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/fixtures/y_f16_acc16.npy", tu_source_dir());
  char *ref = tu_read_file(path, len);
  ck_assert_msg(ref != NULL, "cannot read %s", path);
  return ref;
}

/* y saved as .npy must be the reference file byte for byte. */
static void check_output(const tvmjit_tensor_t *y, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/check.npy", dir);
  tvmjit_status_t *st = tvmjit_tensor_save_npy(path, y);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  size_t n_got, n_ref;
  char *got = tu_read_file(path, &n_got), *ref = reference(&n_ref);
  ck_assert_msg(got && n_got == n_ref && memcmp(got, ref, n_ref) == 0, "the output differs from y_f16_acc16.npy");
  free(got);
  free(ref);
  remove(path);
}

/* Injects a failure after n allocations around one step; returns its status. */
#define WITH_FAILURE_AFTER(n, expr) (tj_alloc_fail_after(n), inject_result_ = (expr), tj_alloc_fail_reset(), inject_result_)
static tvmjit_status_t *inject_result_;

/* A failed step: out-of-memory with a message, and nothing left allocated. */
static void check_failure(tvmjit_status_t *st, long n, long live_before, const char *phase) {
  ck_assert_msg(tvmjit_status_code(st) == TVMJIT_OUT_OF_MEMORY, "%s, allocation %ld failed: code %d, not out-of-memory: %s",
                phase, n, (int)tvmjit_status_code(st), tvmjit_status_message(st));
  const char *msg = tvmjit_status_message(st);
  ck_assert_msg(msg && strstr(msg, "out of memory"), "%s, allocation %ld: message lacks 'out of memory': %s", phase, n,
                msg ? msg : "(null)");
  tvmjit_status_free(st);
  ck_assert_msg(tj_alloc_live() == live_before, "%s, allocation %ld failed: %ld block(s) leaked", phase, n,
                tj_alloc_live() - live_before);
}

START_TEST(read_passes_and_compile_fail_cleanly_at_every_allocation) {
  loaded_t l;
  /* Warm up process-lifetime state (LLVM's target, the op registry) before counting. */
  tvmjit_status_t *st = load_seed(0, &l);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  check_params_order(&l);
  unload(&l);
  long live = tj_alloc_live(), n = 0;
  for (; n < MAX_SWEEP; n++) {
    st = WITH_FAILURE_AFTER(n, load_seed(0, &l));
    if (!st) break;
    check_failure(st, n, live, "read/passes/compile");
  }
  printf("alloc_failure: read, passes and compile fail cleanly at each of their %ld allocations\n", n);
  ck_assert_int_gt(n, 100); /* the seed takes a few hundred: the sweep really ran */
  /* The module built after the sweep runs and gives the reference bits. */
  tvmjit_tensor_t *y = NULL;
  st = call_seed(&l, &y);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  const char *dir = tu_make_tmp_dir("tj_alloc");
  check_output(y, dir);
  tu_remove_tree(dir);
  tvmjit_tensor_free(y);
  unload(&l);
  ck_assert_int_eq(tj_alloc_live(), live);
}
END_TEST

START_TEST(a_call_fails_cleanly_at_every_allocation) {
  loaded_t l;
  tvmjit_status_t *st = load_seed(2, &l);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  check_params_order(&l);
  long live = tj_alloc_live(), n = 0;
  tvmjit_tensor_t *y = NULL;
  for (; n < MAX_SWEEP; n++) {
    st = WITH_FAILURE_AFTER(n, call_seed(&l, &y));
    if (!st) break;
    ck_assert_ptr_null(y); /* outputs are written only on success */
    check_failure(st, n, live, "call");
  }
  printf("alloc_failure: the call fails cleanly at each of its %ld allocations\n", n);
  ck_assert_int_gt(n, 3);
  const char *dir = tu_make_tmp_dir("tj_alloc");
  check_output(y, dir);
  tu_remove_tree(dir);
  tvmjit_tensor_free(y);
  unload(&l);
}
END_TEST

/* Files in the cache directory whose name starts with '.tmp-' (a store cut short). */
static int temp_files(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "find '%s' -name '.tmp-*' | wc -l", dir);
  FILE *p = popen(cmd, "r");
  int n = -1;
  if (p && fscanf(p, "%d", &n) != 1) n = -1;
  if (p) pclose(p);
  return n;
}

/* The cache: filled by each run of the cold sweep (emptied before it), read by each run
 * of the warm sweep. A failed store or load must not break the run's cleanliness. */
START_TEST(cached_loads_fail_cleanly_at_every_allocation) {
  char dir[256], cache[300];
  snprintf(dir, sizeof dir, "%s", tu_make_tmp_dir("tj_alloc_cache"));
  snprintf(cache, sizeof cache, "%s/cache", dir);
  loaded_t l;
  tvmjit_status_t *st = load_seed_cached(0, cache, &l); /* warm-up */
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  unload(&l);
  long live = tj_alloc_live(), cold = 0, warm = 0;
  for (; cold < MAX_SWEEP; cold++) {
    tu_remove_tree(cache);
    st = WITH_FAILURE_AFTER(cold, load_seed_cached(0, cache, &l));
    ck_assert_int_eq(temp_files(dir), 0);
    if (!st) break;
    check_failure(st, cold, live, "cold cache");
  }
  unload(&l); /* the cache is full now */
  for (; warm < MAX_SWEEP; warm++) {
    st = WITH_FAILURE_AFTER(warm, load_seed_cached(0, cache, &l));
    if (!st) break;
    check_failure(st, warm, live, "warm cache");
  }
  printf("alloc_failure: loading with a cold cache fails cleanly at each of its %ld allocations, "
         "with a warm cache at each of its %ld\n", cold, warm);
  ck_assert_int_gt(cold, 100);
  ck_assert_int_gt(warm, 100);
  tvmjit_tensor_t *y = NULL;
  st = call_seed(&l, &y);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  check_output(y, dir);
  tvmjit_tensor_free(y);
  unload(&l);
  ck_assert_int_eq(tj_alloc_live(), live);
  tu_remove_tree(dir);
}
END_TEST

static bool exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

START_TEST(writing_outputs_fails_cleanly_and_leaves_no_file) {
  /* A small tensor stands for the output: writing does not depend on its size. */
  int64_t shape[2] = {4, 8};
  tvmjit_tensor_t *t = NULL;
  ck_assert_ptr_null(tvmjit_tensor_new(TVMJIT_FLOAT16, 2, shape, &t));
  const char *tmp = tu_make_tmp_dir("tj_alloc");
  char dir[256], npy[512], npz[512];
  snprintf(dir, sizeof dir, "%s", tmp);
  snprintf(npy, sizeof npy, "%s/out.npy", dir);
  snprintf(npz, sizeof npz, "%s/out.npz", dir);
  long live = tj_alloc_live(), n_npy = 0, n_npz = 0;
  for (tvmjit_status_t *st; (st = WITH_FAILURE_AFTER(n_npy, tvmjit_tensor_save_npy(npy, t))); n_npy++) {
    check_failure(st, n_npy, live, "save .npy");
    ck_assert_msg(tu_count_entries(dir) == 0, "a failed .npy write left a file behind");
  }
  ck_assert(exists(npy));
  remove(npy);
  const char *names[1] = {"y"};
  const tvmjit_tensor_t *ts[1] = {t};
  for (tvmjit_status_t *st; (st = WITH_FAILURE_AFTER(n_npz, tvmjit_npz_save(npz, 1, names, ts))); n_npz++) {
    check_failure(st, n_npz, live, "save .npz");
    ck_assert_msg(tu_count_entries(dir) == 0, "a failed .npz write left a file behind");
  }
  ck_assert(exists(npz));
  printf("alloc_failure: writing fails cleanly at each of its allocations (.npy %ld, .npz %ld)\n", n_npy, n_npz);
  ck_assert_int_gt(n_npy, 0);
  ck_assert_int_gt(n_npz, 0);
  tu_remove_tree(dir);
  ck_assert_int_eq(tj_alloc_live(), live);
  tvmjit_tensor_free(t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("alloc_failure");
  TCase *tc = tcase_create("sweep");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, read_passes_and_compile_fail_cleanly_at_every_allocation);
  tcase_add_test(tc, a_call_fails_cleanly_at_every_allocation);
  tcase_add_test(tc, writing_outputs_fails_cleanly_and_leaves_no_file);
  tcase_add_test(tc, cached_loads_fail_cleanly_at_every_allocation);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
