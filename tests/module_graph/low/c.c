#include "a.h"
#include "c.h"
int c_first(void) { return a_get(); }
