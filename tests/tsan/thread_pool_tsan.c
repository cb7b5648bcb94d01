/* The thread pool under ThreadSanitizer (built and run by tests/cli/tsan_pool.sh, with
 * runtime/thread_pool.c compiled -fsanitize=thread; the library's own build is not).
 * The chunks write plain ints, and the caller reads and resets them after each call,
 * so a missing happens-before edge between a worker's chunk and the caller's return
 * is a race TSan reports. 8 host threads share the pool; chunks call parallel_for
 * again (nested: inline); thread counts 1 to 4. Exits non-zero on a wrong count. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/thread_pool.h"

typedef struct job {
  int *data;
} job_t;

static tj_thread_pool_t *pool;

static void add_one(int64_t begin, int64_t end, void *ctx) {
  job_t *j = ctx;
  for (int64_t i = begin; i < end; i++) j->data[i] += 1;
}

static void nested(int64_t begin, int64_t end, void *ctx) {
  job_t *j = ctx;
  for (int64_t i = begin; i < end; i++) {
    job_t inner = {j->data + i * 5};
    tj_thread_pool_parallel_for(pool, 5, add_one, &inner);
  }
}

static void *host(void *arg) {
  long *bad = arg;
  *bad = 0;
  for (int r = 0; r < 300; r++) {
    int64_t n = 1 + (r * 7) % 61;
    int *d = calloc((size_t)n * 5, sizeof(int));
    job_t j = {d};
    tj_thread_pool_parallel_for(pool, n, add_one, &j);
    tj_thread_pool_parallel_for(pool, n, add_one, &j);
    for (int64_t i = 0; i < n; i++) *bad += d[i] != 2;
    for (int64_t i = 0; i < n * 5; i++) d[i] = 0;
    tj_thread_pool_parallel_for(pool, n, nested, &j);
    for (int64_t i = 0; i < n * 5; i++) *bad += d[i] != 1;
    free(d);
  }
  return NULL;
}

int main(void) {
  long total = 0;
  for (int t = 1; t <= 4; t++) {
    if (tj_thread_pool_create(t, &pool)) return 1;
    pthread_t th[8];
    long bad[8];
    for (int i = 0; i < 8; i++) pthread_create(&th[i], NULL, host, &bad[i]);
    for (int i = 0; i < 8; i++) {
      pthread_join(th[i], NULL);
      total += bad[i];
    }
    long b;
    host(&b); /* alone: every call gets the pool */
    total += b;
    tj_thread_pool_free(pool);
  }
  printf("thread pool under TSan: %ld wrong counts\n", total);
  return total != 0;
}
