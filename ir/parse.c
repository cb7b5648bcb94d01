/* STUB: replaced by the parser. */
#include "ir/parse.h"
tj_status_t *tj_parse_module(tj_arena_t *arena, const char *filename, const char *text, size_t len,
                             tj_module_t **out_module) {
  return tj_status_new(TJ_ERR_UNSUPPORTED, "%s: the TVMScript reader is not built yet", filename);
}
tj_status_t *tj_parse_file(tj_arena_t *arena, const char *path, tj_module_t **out_module) {
  return tj_status_new(TJ_ERR_UNSUPPORTED, "%s: the TVMScript reader is not built yet", path);
}
