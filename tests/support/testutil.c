#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tu_shared_dir(void) {
  static char path[4096];
  const char *env = getenv("TVMJIT_SHARED_DIR");
  snprintf(path, sizeof path, "%s", env && *env ? env : "../shared");
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
  return path;
}

const char *tu_source_dir(void) {
  const char *env = getenv("TVMJIT_SOURCE_DIR");
  return env && *env ? env : ".";
}

char *tu_read_file(const char *path, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return NULL;
  }
  long n = ftell(f);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (!buf) return NULL;
  buf[n] = '\0';
  if (out_len) *out_len = (size_t)n;
  return buf;
}

int tu_run_suite(Suite *suite) {
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}

const char *tu_make_tmp_dir(const char *prefix) {
  static char path[256];
  snprintf(path, sizeof path, "/tmp/%s_XXXXXX", prefix);
  ck_assert_ptr_nonnull(mkdtemp(path));
  return path;
}

void tu_remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    unlink(path);
    return;
  }
  DIR *d = opendir(path);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char sub[1024];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    tu_remove_tree(sub);
  }
  if (d) closedir(d);
  rmdir(path);
}

int tu_count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  if (d) closedir(d);
  return n;
}
