#include "tools/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void cli_report(tj_status_t *status) {
  if (!status) return;
  fprintf(stderr, "tvmjit: %s\n", tj_status_text(status));
  tj_status_free(status);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tvmjit %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nsee 'tvmjit %s --help'\n", cmd);
  va_end(ap);
  return CLI_USAGE;
}

bool cli_option(int argc, char **argv, int *i, const char *name, bool takes_value, const char **value) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, "--", 2) != 0 || strncmp(arg + 2, name, n) != 0) return false;
  const char *rest = arg + 2 + n;
  if (*rest == '=') {
    *value = rest + 1;
    return true;
  }
  if (*rest != '\0') return false;
  *value = NULL;
  if (takes_value && *i + 1 < argc) *value = argv[++*i];
  return true;
}

bool cli_flag(const char *arg, const char *name, const char *cmd, int *rc) {
  size_t n = strlen(name);
  if (strncmp(arg, "--", 2) != 0 || strncmp(arg + 2, name, n) != 0) return false;
  if (arg[2 + n] == '=') return *rc = cli_usage_error(cmd, "--%s takes no value", name), true;
  return arg[2 + n] == '\0';
}

bool cli_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
  return false;
}

void cli_print_messages(const char *messages) {
  for (const char *p = messages; *p;) {
    const char *nl = strchr(p, '\n');
    int n = nl ? (int)(nl - p) : (int)strlen(p);
    fprintf(stderr, "tvmjit: %.*s\n", n, p);
    p += n + (nl != NULL);
  }
}

bool cli_check_output_path(const char *path) {
  size_t n = strlen(path);
  if (n < 4 || (strcmp(path + n - 4, ".npy") != 0 && strcmp(path + n - 4, ".npz") != 0)) {
    fprintf(stderr, "tvmjit: --output '%s': the file name must end in .npy or .npz\n", path);
    return false;
  }
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    fprintf(stderr, "tvmjit: --output '%s' is a directory; give a file name in it\n", path);
    return false;
  }
  char dir[4096];
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
  if (access(dir, W_OK) != 0) {
    fprintf(stderr, "tvmjit: --output '%s': cannot write in directory '%s': %s\n", path, dir, strerror(errno));
    return false;
  }
  return true;
}

double cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double cli_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int cli_compare_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}
