/* A base-layer file that names the format layer: it must not compile against pn_base.
 * tests/CMakeLists.txt: layering_base. */
#include "walfmt.h"
