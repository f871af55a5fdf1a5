#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H

/* Debian's libpq-dev puts the client headers under /usr/include/postgresql. Naming the directory
   here keeps the build free of pkg-config; libpq-fe.h finds postgres_ext.h beside itself. */
#include <postgresql/libpq-fe.h>

#endif /* CLIBPQ_SHIM_H */
