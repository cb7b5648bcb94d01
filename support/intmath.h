/* Small integer helpers shared by the schedule (transforms/tir) and the code generator (jit). */
#ifndef TVMJIT_SUPPORT_INTMATH_H
#define TVMJIT_SUPPORT_INTMATH_H

#include <stdint.h>

/* Greatest common divisor of two non-negative values (gcd(a, 0) = a). */
static inline int64_t tj_gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

#endif
