void b_put(int v);
