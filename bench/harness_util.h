/* What the C peer harnesses (bench/onednn_seed.c, bench/layers/onednn_layers.c) share:
 * a monotonic clock, a comparator for medians and a count argument check. Header-only,
 * because each harness is built from one file by bench/peers.py. */
#ifndef TJ_BENCH_HARNESS_UTIL_H
#define TJ_BENCH_HARNESS_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double harness_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int harness_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The integer value of `flag`, at least lo; a usage error (exit 2) naming `prog` otherwise. */
static inline long harness_count_arg(const char *prog, const char *flag, const char *v, long lo) {
  char *end;
  long n = v ? strtol(v, &end, 10) : 0;
  if (!v || *end || n < lo) {
    fprintf(stderr, "%s: %s takes a count >= %ld\n", prog, flag, lo);
    exit(2);
  }
  return n;
}

#endif
