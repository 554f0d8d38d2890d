/* Joins symm's runtime outside any launcher: symm_init must refuse with a
 * message (RANK is not set), which proves the library loaded and runs. */
#include <stdio.h>
#include <symm_runtime.h>

int main(void) {
  symm_runtime *runtime = NULL;
  if (symm_init(&runtime) != 0) {
    printf("symm_init refused: %s\n", symm_last_error());
    return 0;
  }
  symm_finalize(runtime);
  printf("symm_init joined\n");
  return 0;
}
