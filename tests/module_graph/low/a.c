#include "a.h"
#include "b.h"
int a_get(void) { b_put(1); return A_MAX; }
