/* Stress: the seed (examples/seed) called from 8 threads at once through the public API,
 * 100 calls each, on one module of an instance with the default thread pool. Every
 * output must be bit for bit the output of a single-threaded run (an instance with one
 * thread, one call), which itself must be the numpy reference
 * (tests/fixtures/y_f16_acc16.npy). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tvmjit.h"

enum { N_THREADS = 8, N_CALLS = 100, N_PARAMS = 6 };

typedef struct seed {
  tvmjit_instance_t *inst;
  tvmjit_module_t *mod;
  tvmjit_function_t *fn;
  tvmjit_tensor_t *data;
  int n_params;
  char **names;
  tvmjit_tensor_t **params;
  const tvmjit_tensor_t *inputs[N_PARAMS];
} seed_t;

#define OK(expr)                                                                            \
  do {                                                                                      \
    tvmjit_status_t *st_ = (expr);                                                          \
    ck_assert_msg(st_ == NULL, "%s: %s", #expr, st_ ? tvmjit_status_message(st_) : ""); \
  } while (0)

static void load(seed_t *s, int num_threads) {
  memset(s, 0, sizeof *s);
  char path[4096];
  tvmjit_instance_options_t io;
  tvmjit_instance_options_init(&io);
  io.num_threads = num_threads;
  OK(tvmjit_instance_create(&io, &s->inst));
  tvmjit_module_options_t mo;
  tvmjit_module_options_init(&mo);
  mo.use_cache = 0;
  snprintf(path, sizeof path, "%s/examples/seed/model.rx", tu_source_dir());
  OK(tvmjit_module_load_file(s->inst, path, &mo, &s->mod));
  OK(tvmjit_module_get_function(s->mod, "main", &s->fn));
  snprintf(path, sizeof path, "%s/examples/seed/data.npy", tu_source_dir());
  OK(tvmjit_tensor_load_npy(path, &s->data));
  snprintf(path, sizeof path, "%s/examples/seed/params.npz", tu_source_dir());
  OK(tvmjit_npz_load(path, &s->n_params, &s->names, &s->params));
  /* main(data, weight1, weight2, weight3, gamma, beta): bind the archive by name. */
  ck_assert_int_eq(tvmjit_function_num_inputs(s->fn), N_PARAMS);
  s->inputs[0] = s->data;
  for (int i = 1; i < N_PARAMS; i++) {
    const char *name;
    tvmjit_function_input_info(s->fn, i, &name, NULL, NULL, NULL);
    for (int k = 0; k < s->n_params; k++)
      if (strcmp(s->names[k], name) == 0) s->inputs[i] = s->params[k];
    ck_assert_msg(s->inputs[i] != NULL, "params.npz has no '%s'", name);
  }
}

static void unload(seed_t *s) {
  tvmjit_tensor_free(s->data);
  tvmjit_npz_free(s->n_params, s->names, s->params);
  tvmjit_module_free(s->mod);
  tvmjit_instance_free(s->inst);
}

typedef struct worker {
  const seed_t *seed;
  const void *want;
  size_t nbytes;
  int bad_calls, errors;
} worker_t;

static void *work(void *arg) {
  worker_t *w = arg;
  for (int k = 0; k < N_CALLS; k++) {
    tvmjit_tensor_t *y = NULL;
    tvmjit_status_t *st = tvmjit_function_call(w->seed->fn, N_PARAMS, w->seed->inputs, 1, &y);
    if (st) {
      w->errors++;
      tvmjit_status_free(st);
      continue;
    }
    if (tvmjit_tensor_nbytes(y) != w->nbytes || memcmp(tvmjit_tensor_data(y), w->want, w->nbytes) != 0) w->bad_calls++;
    tvmjit_tensor_free(y);
  }
  return NULL;
}

START_TEST(eight_threads_call_the_seed_100_times_each_with_single_thread_bits) {
  /* The single-threaded reference, checked against numpy's. */
  seed_t one;
  load(&one, 1);
  tvmjit_tensor_t *ref = NULL;
  OK(tvmjit_function_call(one.fn, N_PARAMS, one.inputs, 1, &ref));
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/fixtures/y_f16_acc16.npy", tu_source_dir());
  tvmjit_tensor_t *numpy = NULL;
  OK(tvmjit_tensor_load_npy(path, &numpy));
  ck_assert_uint_eq(tvmjit_tensor_nbytes(ref), tvmjit_tensor_nbytes(numpy));
  ck_assert_msg(memcmp(tvmjit_tensor_data(ref), tvmjit_tensor_data(numpy), tvmjit_tensor_nbytes(ref)) == 0,
                "the single-threaded run differs from y_f16_acc16.npy");
  tvmjit_tensor_free(numpy);
  unload(&one);

  seed_t many;
  load(&many, 0);
  worker_t workers[N_THREADS];
  pthread_t threads[N_THREADS];
  for (int t = 0; t < N_THREADS; t++) {
    workers[t] = (worker_t){&many, tvmjit_tensor_data(ref), tvmjit_tensor_nbytes(ref), 0, 0};
    ck_assert_int_eq(pthread_create(&threads[t], NULL, work, &workers[t]), 0);
  }
  int bad = 0, errors = 0;
  for (int t = 0; t < N_THREADS; t++) {
    pthread_join(threads[t], NULL);
    bad += workers[t].bad_calls;
    errors += workers[t].errors;
  }
  printf("stress: %d threads x %d calls: %d error(s), %d output(s) differing from the single-threaded run\n",
         N_THREADS, N_CALLS, errors, bad);
  ck_assert_int_eq(errors, 0);
  ck_assert_int_eq(bad, 0);
  tvmjit_tensor_free(ref);
  unload(&many);
}
END_TEST

int main(void) {
  Suite *s = suite_create("stress");
  TCase *tc = tcase_create("seed");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, eight_threads_call_the_seed_100_times_each_with_single_thread_bits);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
