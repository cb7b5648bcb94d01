#include "project.h"

#include <stdio.h>

#include "testutil.h"

const char *tu_project_path(const char *relative) {
  static char paths[4][4096];
  static int next;
  char *p = paths[next++ & 3];
  snprintf(p, sizeof paths[0], "%s/%s", tu_source_dir(), relative);
  return p;
}

int tu_corpus_skip(const char *suite) {
  if (tu_shared_dir()) return 0;
  printf("%s: SKIP: TVM's conformance corpus (../shared/conformance, or TVMJIT_SHARED_DIR) is "
         "not part of a clone\n", suite);
  return 77;
}
