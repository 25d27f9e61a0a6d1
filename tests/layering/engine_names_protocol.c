/* An engine-layer file that names the protocol table's rows: it must not compile against
 * pn_engine (src/protocol is not on its include path; the engine reaches a protocol only
 * through the row pn_engine_init is given). tests/CMakeLists.txt: layering_engine_names_protocol. */
#include "protocols.h"
