/* six
 lines */
#define BIG 1



