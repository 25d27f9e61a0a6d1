#define A_MAX 4
int a_get(void);
