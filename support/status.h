/* Status values: every fallible internal function returns tj_status_t* (NULL = ok).
 *
 * A status carries a code, a message and context lines added by each layer on the
 * way up (innermost first), in the style of IREE's iree_status_t. The caller that
 * receives a non-NULL status owns it and must free it (or return it further up).
 * Creating a status never fails: if memory runs out, a static out-of-memory status is
 * returned instead, and freeing it is a no-op. */
#ifndef TJ_SUPPORT_STATUS_H
#define TJ_SUPPORT_STATUS_H

#include <stdarg.h>
#include <stddef.h>

typedef enum tj_code {
  TJ_OK = 0,
  TJ_ERR_INVALID_ARGUMENT = 1, /* bad value from the caller: shape, dtype, option */
  TJ_ERR_PARSE = 2,            /* malformed TVMScript text */
  TJ_ERR_VERIFY = 3,           /* ill-formed IR (verifier) */
  TJ_ERR_UNSUPPORTED = 4,      /* valid input that tvmjit does not handle (yet) */
  TJ_ERR_IO = 5,               /* file system or format error */
  TJ_ERR_OUT_OF_MEMORY = 6,
  TJ_ERR_NOT_FOUND = 7,        /* unknown name: function, parameter, pass */
  TJ_ERR_INTERNAL = 8,         /* a bug in tvmjit */
  TJ_ERR_COMPILE = 9,          /* LLVM failed */
} tj_code_t;

typedef struct tj_status tj_status_t;

/* printf-style constructors. */
tj_status_t *tj_status_new(tj_code_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
tj_status_t *tj_status_newv(tj_code_t code, const char *fmt, va_list ap);

/* Adds one line of context ("while compiling 'fused_conv2d2_relu'") and returns the
 * same status. Passing NULL returns NULL, so `return tj_status_annotate(s, ...)` works
 * on any result. */
tj_status_t *tj_status_annotate(tj_status_t *status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

tj_code_t tj_status_code(const tj_status_t *status);
/* The innermost message only. */
const char *tj_status_message(const tj_status_t *status);
/* Number of context lines and the i-th (0 = innermost). */
int tj_status_context_count(const tj_status_t *status);
const char *tj_status_context(const tj_status_t *status, int i);
/* The message followed by the context lines, outermost context first:
 * "ctx_outer: ctx_inner: message". Owned by the status. */
const char *tj_status_text(tj_status_t *status);
const char *tj_code_name(tj_code_t code);

void tj_status_free(tj_status_t *status);

/* Propagate a failing status. */
#define TJ_RETURN_IF_ERROR(expr)         \
  do {                                   \
    tj_status_t *tj_s_ = (expr);         \
    if (tj_s_) return tj_s_;             \
  } while (0)

#endif
