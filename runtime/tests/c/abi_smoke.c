/* Links against libsymm_runtime and checks that bad calls return errors
 * with messages instead of crashing. Runs without a GPU. */
#include "symm_runtime.h"

#include <stdio.h>
#include <string.h>

static int expect_error(int status, const char *fragment) {
  const char *message = symm_last_error();
  if (status != -1 || strstr(message, fragment) == NULL) {
    fprintf(stderr, "expected an error containing '%s', got %d '%s'\n", fragment, status, message);
    return 1;
  }
  printf("error as expected: %s\n", message);
  return 0;
}

int main(void) {
  int failures = 0;
  symm_runtime *runtime = NULL;
  failures += expect_error(symm_init(&runtime), "RANK is not set");
  failures += expect_error(symm_init(NULL), "out is NULL");
  symm_buffer *buffer = NULL;
  failures += expect_error(symm_alloc(NULL, "x", 16, &buffer), "runtime is NULL");
  failures += expect_error(symm_all_reduce(NULL, NULL, 0, 0, SYMM_BF16, SYMM_SUM, SYMM_ONE_SHOT, NULL),
                           "runtime is NULL");
  failures += expect_error(symm_graph_begin(NULL), "runtime is NULL");
  symm_graph *graph = NULL;
  failures += expect_error(symm_graph_end(NULL, &graph), "runtime is NULL");
  if (symm_rank(NULL) != -1 || symm_world_size(NULL) != -1 || symm_buffer_ptr(NULL, 0) != 0) {
    fprintf(stderr, "NULL handles must give -1 / 0\n");
    failures++;
  }
  symm_free(NULL);
  symm_finalize(NULL);
  symm_graph_free(NULL);
  return failures;
}
