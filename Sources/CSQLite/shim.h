#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H

#include <sqlite3.h>

/// `SQLITE_TRANSIENT` is a cast macro (`(sqlite3_destructor_type)-1`), which Swift does not import.
/// Binding text or blobs with it makes SQLite copy the bytes before the bind call returns; Swift's
/// String-to-pointer bridging only keeps the bytes alive for the duration of that call, so
/// `SQLITE_STATIC` would leave SQLite reading freed memory at step time.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif /* CSQLITE_SHIM_H */
