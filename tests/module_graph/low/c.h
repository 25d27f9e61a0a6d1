struct c_item { int v; };
int c_first(void);
