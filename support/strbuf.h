/* A growable string for printers and messages. On allocation failure the buffer
 * remembers it (`failed`) and further appends are ignored, so callers check once. */
#ifndef TJ_SUPPORT_STRBUF_H
#define TJ_SUPPORT_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tj_strbuf {
  char *data; /* always NUL-terminated once anything was appended */
  size_t len, cap;
  bool failed;
} tj_strbuf_t;

void tj_strbuf_init(tj_strbuf_t *sb);
void tj_strbuf_append(tj_strbuf_t *sb, const char *s);
void tj_strbuf_append_n(tj_strbuf_t *sb, const char *s, size_t n);
void tj_strbuf_printf(tj_strbuf_t *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the string to the caller (free with tj_free); NULL if anything failed. */
char *tj_strbuf_take(tj_strbuf_t *sb);
void tj_strbuf_free(tj_strbuf_t *sb);

#endif
