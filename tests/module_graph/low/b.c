#include "a.h"
#include "b.h"
#include "c.h"
static struct c_item last;
void b_put(int v) { last.v = v < A_MAX ? v : A_MAX; }
