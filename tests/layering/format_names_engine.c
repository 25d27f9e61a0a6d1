/* A format-layer file that names the engine: it must not compile against pn_format (the
 * engine's folder is not on its include path). tests/CMakeLists.txt: layering_format. */
#include "engine.h"
