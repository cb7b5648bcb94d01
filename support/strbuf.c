#include "support/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "support/alloc.h"

void tj_strbuf_init(tj_strbuf_t *sb) { memset(sb, 0, sizeof *sb); }

static bool reserve(tj_strbuf_t *sb, size_t extra) {
  if (sb->failed) return false;
  if (sb->len + extra + 1 <= sb->cap) return true;
  size_t cap = sb->cap ? sb->cap : 256;
  while (cap < sb->len + extra + 1) cap *= 2;
  char *d = tj_realloc(sb->data, cap);
  if (!d) {
    sb->failed = true;
    return false;
  }
  sb->data = d;
  sb->cap = cap;
  return true;
}

void tj_strbuf_append_n(tj_strbuf_t *sb, const char *s, size_t n) {
  if (!reserve(sb, n)) return;
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void tj_strbuf_append(tj_strbuf_t *sb, const char *s) { tj_strbuf_append_n(sb, s, strlen(s)); }

void tj_strbuf_printf(tj_strbuf_t *sb, const char *fmt, ...) {
  va_list ap, copy;
  va_start(ap, fmt);
  va_copy(copy, ap);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n >= 0 && reserve(sb, (size_t)n)) {
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
  }
  va_end(ap);
}

char *tj_strbuf_take(tj_strbuf_t *sb) {
  if (sb->failed) {
    tj_strbuf_free(sb);
    return NULL;
  }
  if (!sb->data) {
    if (!reserve(sb, 0)) return NULL;
    sb->data[0] = '\0';
  }
  char *d = sb->data;
  memset(sb, 0, sizeof *sb);
  return d;
}

void tj_strbuf_free(tj_strbuf_t *sb) {
  tj_free(sb->data);
  memset(sb, 0, sizeof *sb);
}
