/* LZ4 block compression, for the raw webhook payloads the store keeps compressed (liblz4-dev). */
#ifndef PWB_CLZ4_SHIM_H
#define PWB_CLZ4_SHIM_H

#include <lz4.h>

#endif
