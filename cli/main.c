/* main.c: placeholder until the command line lands. */
#include <stdio.h>
int main(void) { fprintf(stderr, "penumbra: not built yet\n"); return 2; }
