/* The control: a format-layer file naming its own layer and base compiles against
 * pn_format, so the two refusals above fail for the include path, not the probe. */
#include "checksum.h"
#include "crc32c.h"
#include "redo.h"

uint32_t pn_layering_probe(const uint8_t *page);
uint32_t pn_layering_probe(const uint8_t *page)
{
	return pn_crc32c(page, 8) ^ pn_page_checksum(page, 8192, 0) ^ PN_REC_COUNT;
}
