/* A plain driver for a fuzz target, for builds without libFuzzer (gcc, the normal
 * ctest suite): feeds every file named on the command line, and every regular file
 * inside each directory named, to LLVMFuzzerTestOneInput once. Missing directories
 * are skipped (the generated seed corpora exist only after tests/fuzz/make_seeds).
 * A crash or a failed harness check aborts with the file name printed first. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) {
      uint8_t *bigger = realloc(buf, cap *= 2);
      if (!bigger) free(buf);
      buf = bigger;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "replay: out of memory reading %s\n", path);
    return 1;
  }
  fprintf(stderr, "replay: %s\n", path);
  /* An exact-size copy, so ASan sees reads past the input's end. */
  uint8_t *exact = malloc(len ? len : 1);
  if (exact) memcpy(exact, buf, len);
  free(buf);
  if (!exact) return 1;
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int replay_dir(const char *dir, int *count) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  char **names = NULL;
  int n = 0, failed = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char **more = realloc(names, sizeof *names * (size_t)(n + 1));
    if (!more) break;
    names = more;
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    names[n] = malloc(len);
    if (!names[n]) break;
    snprintf(names[n++], len, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_names);
  for (int i = 0; i < n; i++) {
    struct stat st;
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      failed |= replay_file(names[i]);
      (*count)++;
    } else if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      failed |= replay_dir(names[i], count);
    }
    free(names[i]);
  }
  free(names);
  return failed;
}

int main(int argc, char **argv) {
  int failed = 0, count = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      failed |= replay_dir(argv[i], &count);
    } else {
      failed |= replay_file(argv[i]);
      count++;
    }
  }
  printf("replayed %d inputs\n", count);
  return failed;
}
