#include "support/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/alloc.h"

struct tj_status {
  tj_code_t code;
  char *message;
  int n_context;
  char **context; /* innermost first */
  char *text;     /* cached tj_status_text */
};

static char oom_message[] = "out of memory";
static tj_status_t oom_status = {TJ_ERR_OUT_OF_MEMORY, oom_message, 0, NULL, oom_message};

static char *vformat(const char *fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n < 0) return NULL;
  char *s = tj_malloc((size_t)n + 1);
  if (!s) return NULL;
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

tj_status_t *tj_status_newv(tj_code_t code, const char *fmt, va_list ap) {
  tj_status_t *s = tj_calloc(1, sizeof *s);
  if (!s) return &oom_status;
  s->code = code;
  s->message = vformat(fmt, ap);
  if (!s->message) {
    tj_free(s);
    return &oom_status;
  }
  return s;
}

tj_status_t *tj_status_new(tj_code_t code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tj_status_t *s = tj_status_newv(code, fmt, ap);
  va_end(ap);
  return s;
}

tj_status_t *tj_status_annotate(tj_status_t *status, const char *fmt, ...) {
  if (!status || status == &oom_status) return status;
  va_list ap;
  va_start(ap, fmt);
  char *line = vformat(fmt, ap);
  va_end(ap);
  if (!line) return status; /* context is best effort; the error itself survives */
  char **grown = tj_realloc(status->context, sizeof(char *) * (size_t)(status->n_context + 1));
  if (!grown) {
    tj_free(line);
    return status;
  }
  status->context = grown;
  status->context[status->n_context++] = line;
  tj_free(status->text);
  status->text = NULL;
  return status;
}

tj_code_t tj_status_code(const tj_status_t *status) { return status ? status->code : TJ_OK; }

const char *tj_status_message(const tj_status_t *status) { return status ? status->message : "ok"; }

int tj_status_context_count(const tj_status_t *status) { return status ? status->n_context : 0; }

const char *tj_status_context(const tj_status_t *status, int i) {
  if (!status || i < 0 || i >= status->n_context) return NULL;
  return status->context[i];
}

const char *tj_status_text(tj_status_t *status) {
  if (!status) return "ok";
  if (status->text) return status->text;
  size_t n = strlen(status->message) + 1;
  for (int i = 0; i < status->n_context; i++) n += strlen(status->context[i]) + 2;
  char *t = tj_malloc(n);
  if (!t) return status->message;
  t[0] = '\0';
  for (int i = status->n_context - 1; i >= 0; i--) {
    strcat(t, status->context[i]);
    strcat(t, ": ");
  }
  strcat(t, status->message);
  status->text = t;
  return t;
}

const char *tj_code_name(tj_code_t code) {
  switch (code) {
    case TJ_OK: return "ok";
    case TJ_ERR_INVALID_ARGUMENT: return "invalid argument";
    case TJ_ERR_PARSE: return "parse error";
    case TJ_ERR_VERIFY: return "verification failed";
    case TJ_ERR_UNSUPPORTED: return "unsupported";
    case TJ_ERR_IO: return "i/o error";
    case TJ_ERR_OUT_OF_MEMORY: return "out of memory";
    case TJ_ERR_NOT_FOUND: return "not found";
    case TJ_ERR_INTERNAL: return "internal error";
    case TJ_ERR_COMPILE: return "compile error";
  }
  return "unknown error";
}

void tj_status_free(tj_status_t *status) {
  if (!status || status == &oom_status) return;
  for (int i = 0; i < status->n_context; i++) tj_free(status->context[i]);
  tj_free(status->context);
  tj_free(status->message);
  tj_free(status->text);
  tj_free(status);
}
