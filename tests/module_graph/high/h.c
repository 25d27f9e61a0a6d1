#include "../low/a.h"
int h_counter = 0;
int h_helper(void) { return 1; }
void high_hook(void) { h_counter += a_get(); }
