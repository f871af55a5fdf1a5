/*
 * Fixed-arity wrappers around libmicrohttpd's variadic entry points (MHD_start_daemon,
 * MHD_get_daemon_info, MHD_get_connection_info): Swift cannot call C variadic functions, and a
 * wrapper with named parameters is easier to read than an option list anyway. Everything here is
 * prefixed `pwb_` so it cannot collide with libmicrohttpd's own names.
 */
#ifndef PWB_CMICROHTTPD_SHIM_H
#define PWB_CMICROHTTPD_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>

/*
 * Called once per request with the raw request target (path and query, not percent-decoded),
 * before libmicrohttpd splits and decodes it. Its return value becomes the request's `*con_cls`,
 * and libmicrohttpd then promises a MHD_OPTION_NOTIFY_COMPLETED call for that request.
 */
typedef void *(*pwb_uri_logger)(void *context, const char *uri, struct MHD_Connection *connection);

/*
 * Called once when a connection is accepted (MHD_CONNECTION_NOTIFY_STARTED) and once when it is
 * closed (MHD_CONNECTION_NOTIFY_CLOSED), on the connection's polling thread; `*socket_context` is
 * the connection's own pointer (MHD_CONNECTION_INFO_SOCKET_CONTEXT reads it back). libmicrohttpd
 * 0.9.75 reports the close before it closes the socket (MHD_cleanup_connections), so the socket
 * stays this connection's until the callback returns.
 */
typedef void (*pwb_connection_notifier)(void *context, struct MHD_Connection *connection, void **socket_context,
                                        enum MHD_ConnectionNotificationCode code);

/*
 * The daemon flags the bridge uses: libmicrohttpd's own polling threads (epoll when the library
 * has it, else poll), an inter-thread channel (MHD_quiesce_daemon needs it with a thread pool),
 * suspend/resume (a request whose answer comes later parks its connection instead of a thread), no
 * error log on stderr, and IPv6 / dual stack as asked.
 */
static inline unsigned int pwb_daemon_flags(int ipv6, int dual_stack) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
    if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES) {
        flags |= MHD_USE_EPOLL;
    } else {
        flags |= MHD_USE_POLL;
    }
    if (dual_stack) {
        flags |= MHD_USE_DUAL_STACK;
    } else if (ipv6) {
        flags |= MHD_USE_IPv6;
    }
    return flags;
}

/* 1 when libmicrohttpd was built with epoll (the flags above then use it). */
static inline int pwb_has_epoll(void) {
    return MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES;
}

/*
 * Starts a daemon. Exactly one of `address` (bind there) and `listen_fd` >= 0 (an already bound,
 * listening socket, e.g. from systemd socket activation) is used; `listen_fd` wins when both are
 * given. A thread pool size of 0 or 1 means a single polling thread. Returns NULL on failure
 * (errno is usually meaningful: EADDRINUSE, EACCES, ...).
 */
static inline struct MHD_Daemon *pwb_start_daemon(
    unsigned int flags, const struct sockaddr *address, int listen_fd, MHD_AccessHandlerCallback handler,
    void *handler_context, pwb_uri_logger uri_logger, void *uri_logger_context,
    MHD_RequestCompletedCallback completed, void *completed_context, pwb_connection_notifier notifier,
    void *notifier_context, unsigned int connection_limit,
    unsigned int per_ip_limit, unsigned int timeout_seconds, size_t connection_memory_limit,
    unsigned int thread_pool_size) {
    struct MHD_OptionItem options[11];
    size_t count = 0;
    if (listen_fd >= 0) {
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, (intptr_t)listen_fd, NULL};
    } else {
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, (void *)address};
    }
    /* Options taking two pointers pass the function in `value` (see MHD_OPTION_ARRAY). */
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)uri_logger, uri_logger_context};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_context};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notifier, notifier_context};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, (intptr_t)connection_limit, NULL};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)per_ip_limit, NULL};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)timeout_seconds, NULL};
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)connection_memory_limit, NULL};
    if (thread_pool_size > 1) {
        options[count++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)thread_pool_size, NULL};
    }
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context, MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

/* The port the daemon listens on (the real one when it was asked for port 0), or -1. */
static inline int pwb_daemon_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    if (info == NULL) {
        return -1;
    }
    return (int)info->port;
}

/* The daemon's listening socket, or -1 (after MHD_quiesce_daemon, for example). */
static inline int pwb_daemon_listen_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    if (info == NULL) {
        return -1;
    }
    return (int)info->listen_fd;
}

/* The peer's address of a connection, or NULL. Valid while the connection is. */
static inline const struct sockaddr *pwb_connection_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL) {
        return NULL;
    }
    return info->client_addr;
}

/* 1 for the notification of a connection just accepted, 0 for one being closed. */
static inline int pwb_connection_started(enum MHD_ConnectionNotificationCode code) {
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}

/* The connection's socket, or -1. Valid while the connection is. */
static inline int pwb_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL) {
        return -1;
    }
    return (int)info->connect_fd;
}

/* The connection's socket context (what the connection notifier stored in `*socket_context`). */
static inline void *pwb_connection_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (info == NULL) {
        return NULL;
    }
    return info->socket_context;
}

#endif
