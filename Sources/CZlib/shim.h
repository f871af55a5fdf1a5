/* zlib, for the raw webhook payloads the store keeps compressed (zlib1g-dev). */
#ifndef PWB_CZLIB_SHIM_H
#define PWB_CZLIB_SHIM_H

#include <zlib.h>

#endif
