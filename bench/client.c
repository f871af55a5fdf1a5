/*
 * bench/client.c — the load generator of `make bench`: replays a pool of pre-generated, signed
 * webhook requests (bench/gen.py) against 127.0.0.1 over keep-alive HTTP/1.1 connections.
 *
 *   closed  every connection sends its next request as soon as the previous answer arrived:
 *           the most the daemon can take (deliveries/s).
 *   open    requests are due on a fixed timetable (rate per second) whatever the answers do; a
 *           request that finds every connection busy waits, and its latency is counted from the
 *           time it was due, not from when it could be sent (no coordinated omission).
 *
 * Both run a warm-up (not counted) and then a measured window, both bounded in time and by the
 * pool: no request is ever sent twice, so every 202 is one new delivery row. After the window
 * no new request starts; those in flight are waited for (at most --drain seconds) so the totals
 * are exact for the durability check.
 *
 * It also samples, over the measured window: its own CPU time (getrusage), the daemon's CPU time
 * per thread (/proc/PID/task/TID/stat) and the whole machine's busy time (/proc/stat).
 * One JSON object goes to stdout.
 *
 * Build: gcc -O2 -o client client.c -lm. Linux only (epoll, timerfd).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNECTIONS 256
#define RBUF_SIZE 65536
#define MAX_THREADS 512

typedef struct {
    int fd;
    int busy;           /* a request is being sent or answered */
    long request;       /* pool index of the request in flight */
    double due;         /* when the request was due (open) or sent (closed), seconds */
    size_t sent;        /* bytes of the request written so far */
    char rbuf[RBUF_SIZE];
    size_t rlen;
} Connection;

/* options */
static const char *pool_path;
static int port;
static int open_mode;
static int connections = 16;
static double rate = 1000;
static double warmup = 2;
static double duration = 10;
static double drain_limit = 10;
static int daemon_pid;

/* pool */
static char *pool_data;
static char **requests;
static uint32_t *lengths;
static long pool_count;
static long next_request;

/* results */
static long status_counts[600];
static long other_status;
static long connection_errors;
static long consecutive_errors; /* since the last answer: the server is gone when it keeps growing */
static int server_gone;
static long abandoned; /* in flight when the drain limit ran out: answer unknown */
static long ok_total, ok_window, completed_total, sent_total;
static double *latencies; /* ms, requests that count for latency */
static long latency_count, latency_capacity;
static long max_queue;
static double max_send_lag; /* open: the longest wait of a due request for a free connection, s */
static int pool_exhausted;
static double last_ok_at; /* closed: the last 202 inside the window */

static Connection conns[MAX_CONNECTIONS];
static int epfd;
static double t0, window_start, window_end;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    fprintf(stderr, "client: %s: %s\n", what, strerror(errno));
    exit(2);
}

static void load_pool(void) {
    FILE *f = fopen(pool_path, "rb");
    if (!f) die(pool_path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    pool_data = malloc(size);
    if (!pool_data || fread(pool_data, 1, size, f) != (size_t)size) die("reading the pool");
    fclose(f);
    if (size < 9 || memcmp(pool_data, "PWBPOOL1\n", 9) != 0) {
        fprintf(stderr, "client: %s is not a pool file\n", pool_path);
        exit(2);
    }
    long capacity = 1024;
    requests = malloc(capacity * sizeof *requests);
    lengths = malloc(capacity * sizeof *lengths);
    long offset = 9;
    while (offset + 4 <= size) {
        uint32_t length;
        memcpy(&length, pool_data + offset, 4);
        offset += 4;
        if (offset + length > size) break;
        if (pool_count == capacity) {
            capacity *= 2;
            requests = realloc(requests, capacity * sizeof *requests);
            lengths = realloc(lengths, capacity * sizeof *lengths);
        }
        requests[pool_count] = pool_data + offset;
        lengths[pool_count] = length;
        pool_count++;
        offset += length;
    }
}

static void add_latency(double ms) {
    if (latency_count == latency_capacity) {
        latency_capacity = latency_capacity ? latency_capacity * 2 : 65536;
        latencies = realloc(latencies, latency_capacity * sizeof *latencies);
    }
    latencies[latency_count++] = ms;
}

static void open_connection(Connection *c) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (c->fd < 0) die("socket");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* 127.0.0.1 only */
    if (connect(c->fd, (struct sockaddr *)&address, sizeof address) < 0 && errno != EINPROGRESS) die("connect");
    c->busy = 0;
    c->rlen = 0;
    struct epoll_event event = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &event) < 0) die("epoll_ctl");
}

static void reopen_connection(Connection *c) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    open_connection(c);
}

static void flush_request(Connection *c);

static void start_request(Connection *c, long index, double due) {
    c->busy = 1;
    c->request = index;
    c->due = due;
    c->sent = 0;
    c->rlen = 0;
    sent_total++;
    flush_request(c);
}

static void fail_request(Connection *c) {
    connection_errors++;
    if (++consecutive_errors > 2 * connections + 50) server_gone = 1;
    completed_total++;
    c->busy = 0;
    reopen_connection(c);
}

static void flush_request(Connection *c) {
    while (c->busy && c->sent < lengths[c->request]) {
        ssize_t n = send(c->fd, requests[c->request] + c->sent, lengths[c->request] - c->sent, MSG_NOSIGNAL);
        if (n > 0) {
            c->sent += n;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN)) {
            return; /* EPOLLOUT resumes */
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            fail_request(c);
            return;
        }
    }
}

/* Parses a complete response at the start of rbuf; returns its length, 0 if incomplete, -1 if bad. */
static long parse_response(Connection *c, int *status, int *close_after) {
    char *end = memmem(c->rbuf, c->rlen, "\r\n\r\n", 4);
    if (!end) return c->rlen >= RBUF_SIZE ? -1 : 0;
    size_t head = end - c->rbuf + 4;
    if (c->rlen < 12 || strncmp(c->rbuf, "HTTP/1.", 7) != 0) return -1;
    *status = atoi(c->rbuf + 9);
    long content_length = -1;
    *close_after = strncmp(c->rbuf, "HTTP/1.0", 8) == 0;
    char *line = memchr(c->rbuf, '\n', head) + 1;
    while (line < c->rbuf + head - 2) {
        char *eol = memchr(line, '\n', c->rbuf + head - line);
        if (!eol) break;
        if (strncasecmp(line, "content-length:", 15) == 0) content_length = strtol(line + 15, NULL, 10);
        if (strncasecmp(line, "connection:", 11) == 0) {
            char *value = line + 11;
            while (*value == ' ') value++;
            if (strncasecmp(value, "close", 5) == 0) *close_after = 1;
        }
        if (strncasecmp(line, "transfer-encoding:", 18) == 0) return -1; /* not sent by the daemon */
        line = eol + 1;
    }
    if (content_length < 0) return -1;
    if (head + content_length > RBUF_SIZE) return -1;
    if (c->rlen < head + (size_t)content_length) return 0;
    return head + content_length;
}

static void on_response(Connection *c, int status, double now) {
    completed_total++;
    consecutive_errors = 0;
    if (status >= 0 && status < 600) status_counts[status]++;
    else other_status++;
    if (status == 202) ok_total++;
    if (!open_mode) {
        if (status == 202 && now >= window_start && now < window_end) {
            ok_window++;
            last_ok_at = now;
        }
        if (c->due >= window_start && c->due < window_end) add_latency((now - c->due) * 1000);
    } else {
        if (status == 202 && c->due >= window_start && c->due < window_end) ok_window++;
        if (c->due >= window_start && c->due < window_end) add_latency((now - c->due) * 1000);
    }
    c->busy = 0;
}

static void on_readable(Connection *c, double now) {
    for (;;) {
        if (c->rlen == RBUF_SIZE) {
            if (c->busy) fail_request(c);
            else reopen_connection(c);
            return;
        }
        ssize_t n = recv(c->fd, c->rbuf + c->rlen, RBUF_SIZE - c->rlen, 0);
        if (n > 0) {
            c->rlen += n;
            if (!c->busy) continue; /* unsolicited bytes: dropped at the next request */
            int status, close_after;
            long used = parse_response(c, &status, &close_after);
            if (used < 0) {
                fail_request(c);
                return;
            }
            if (used > 0) {
                on_response(c, status, now);
                memmove(c->rbuf, c->rbuf + used, c->rlen - used);
                c->rlen -= used;
                if (close_after) {
                    reopen_connection(c);
                    return;
                }
            }
        } else if (n == 0) {
            if (c->busy) fail_request(c);
            else reopen_connection(c);
            return;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return;
        } else if (errno == EINTR) {
            continue;
        } else {
            if (c->busy) fail_request(c);
            else reopen_connection(c);
            return;
        }
    }
}

/* ---- CPU sampling ---- */

typedef struct {
    int tid;
    char comm[32];
    long long ticks;
} ThreadSample;

typedef struct {
    ThreadSample threads[MAX_THREADS];
    int count;
    long long process_ticks;
    long long machine_busy, machine_total;
    double client_cpu;
    double at;
} Sample;

static long long read_stat_ticks(const char *path, char *comm, size_t comm_size) {
    char buf[1024];
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *open = strchr(buf, '(');
    char *close = strrchr(buf, ')');
    if (!open || !close) return -1;
    if (comm) {
        size_t length = close - open - 1;
        if (length >= comm_size) length = comm_size - 1;
        memcpy(comm, open + 1, length);
        comm[length] = 0;
    }
    /* fields after ")": state(3) ... utime(14) stime(15) */
    char *p = close + 2;
    long long utime = 0, stime = 0;
    for (int field = 3; field <= 15 && p; field++) {
        if (field == 14) utime = atoll(p);
        if (field == 15) stime = atoll(p);
        p = strchr(p, ' ');
        if (p) p++;
    }
    return utime + stime;
}

static void take_sample(Sample *s) {
    s->at = now_s();
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    s->client_cpu = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
                    usage.ru_stime.tv_usec / 1e6;
    s->count = 0;
    s->process_ticks = -1;
    if (daemon_pid > 0) {
        char path[256];
        snprintf(path, sizeof path, "/proc/%d/stat", daemon_pid);
        s->process_ticks = read_stat_ticks(path, NULL, 0);
        snprintf(path, sizeof path, "/proc/%d/task", daemon_pid);
        DIR *dir = opendir(path);
        if (dir) {
            struct dirent *entry;
            while ((entry = readdir(dir)) && s->count < MAX_THREADS) {
                if (!isdigit((unsigned char)entry->d_name[0])) continue;
                ThreadSample *t = &s->threads[s->count];
                t->tid = atoi(entry->d_name);
                snprintf(path, sizeof path, "/proc/%d/task/%d/stat", daemon_pid, t->tid);
                t->ticks = read_stat_ticks(path, t->comm, sizeof t->comm);
                if (t->ticks >= 0) s->count++;
            }
            closedir(dir);
        }
    }
    s->machine_busy = s->machine_total = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        long long v[10] = {0};
        if (fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
            for (int i = 0; i < 8; i++) s->machine_total += v[i];
            s->machine_busy = s->machine_total - v[3] - v[4]; /* minus idle and iowait */
        }
        fclose(f);
    }
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double percentile(double p) {
    if (latency_count == 0) return NAN;
    long index = (long)ceil(p / 100.0 * latency_count) - 1;
    if (index < 0) index = 0;
    if (index >= latency_count) index = latency_count - 1;
    return latencies[index];
}

static void print_number(const char *name, double value, int last) {
    if (isnan(value)) printf("\"%s\":null%s", name, last ? "" : ",");
    else printf("\"%s\":%.3f%s", name, value, last ? "" : ",");
}

static void report(Sample *a, Sample *b, double drained_at) {
    double window = b->at - a->at;
    long ticks_per_second = sysconf(_SC_CLK_TCK);
    qsort(latencies, latency_count, sizeof *latencies, compare_doubles);
    double mean = 0;
    for (long i = 0; i < latency_count; i++) mean += latencies[i];
    mean = latency_count ? mean / latency_count : NAN;

    printf("{\"mode\":\"%s\",\"connections\":%d,", open_mode ? "open" : "closed", connections);
    if (open_mode) printf("\"target_rate\":%.1f,", rate);
    printf("\"warmup_s\":%.1f,\"duration_s\":%.1f,\"window_s\":%.4f,", warmup, duration, window);
    printf("\"pool\":%ld,\"pool_exhausted\":%s,", pool_count, pool_exhausted ? "true" : "false");
    printf("\"sent_total\":%ld,\"completed_total\":%ld,\"ok_total\":%ld,\"ok_window\":%ld,", sent_total,
           completed_total, ok_total, ok_window);
    printf("\"connection_errors\":%ld,\"abandoned\":%ld,\"server_gone\":%s,\"status_counts\":{",
           connection_errors, abandoned, server_gone ? "true" : "false");
    int first = 1;
    for (int s = 0; s < 600; s++) {
        if (!status_counts[s]) continue;
        printf("%s\"%d\":%ld", first ? "" : ",", s, status_counts[s]);
        first = 0;
    }
    if (other_status) printf("%s\"other\":%ld", first ? "" : ",", other_status);
    printf("},");
    if (open_mode) {
        printf("\"achieved_rate\":%.1f,", ok_window / duration);
        printf("\"max_queue\":%ld,", max_queue);
        print_number("max_send_lag_ms", max_send_lag * 1000, 0);
    }
    /* a closed run that used up the pool inside the window is measured up to its last answer */
    double span = !open_mode && pool_exhausted && last_ok_at > a->at ? last_ok_at - a->at : window;
    printf("\"throughput_rps\":%.1f,", span > 0 ? ok_window / span : 0);
    printf("\"latency_ms\":{\"count\":%ld,", latency_count);
    print_number("mean", mean, 0);
    print_number("median", percentile(50), 0);
    print_number("p90", percentile(90), 0);
    print_number("p99", percentile(99), 0);
    print_number("p999", percentile(99.9), 0);
    print_number("max", latency_count ? latencies[latency_count - 1] : NAN, 1);
    printf("},");
    print_number("client_cpu_pct", window > 0 ? (b->client_cpu - a->client_cpu) / window * 100 : NAN, 0);
    if (a->machine_total && b->machine_total > a->machine_total)
        print_number("machine_busy_pct",
                     100.0 * (b->machine_busy - a->machine_busy) / (b->machine_total - a->machine_total), 0);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    printf("\"cpus\":%ld,", cpus);
    if (daemon_pid > 0 && a->process_ticks >= 0 && b->process_ticks >= 0) {
        print_number("daemon_cpu_pct",
                     window > 0 ? (double)(b->process_ticks - a->process_ticks) / ticks_per_second / window * 100
                                : NAN,
                     0);
        /* per thread name: the sum over threads of that name (threads that exist at both ends) */
        char names[MAX_THREADS][32];
        double pct[MAX_THREADS];
        int counts[MAX_THREADS];
        int n = 0;
        for (int i = 0; i < b->count; i++) {
            long long before = -1;
            for (int j = 0; j < a->count; j++)
                if (a->threads[j].tid == b->threads[i].tid) before = a->threads[j].ticks;
            if (before < 0) before = 0; /* started during the window */
            double value = (double)(b->threads[i].ticks - before) / ticks_per_second / window * 100;
            int k;
            for (k = 0; k < n; k++)
                if (strcmp(names[k], b->threads[i].comm) == 0) break;
            if (k == n) {
                snprintf(names[n], sizeof names[n], "%s", b->threads[i].comm);
                pct[n] = 0;
                counts[n] = 0;
                n++;
            }
            pct[k] += value;
            counts[k]++;
        }
        printf("\"daemon_threads\":[");
        for (int k = 0; k < n; k++) {
            printf("%s{\"name\":\"", k ? "," : "");
            for (const char *p = names[k]; *p; p++)
                if (*p != '"' && *p != '\\' && (unsigned char)*p >= 32) putchar(*p);
            printf("\",\"threads\":%d,\"cpu_pct\":%.1f}", counts[k], pct[k]);
        }
        printf("],");
    }
    print_number("drain_s", drained_at - b->at, 1);
    printf("}\n");
}

static void usage(void) {
    fprintf(stderr,
            "usage: client --pool FILE --port N [--mode closed|open] [--connections N] [--rate R]\n"
            "              [--warmup S] [--duration S] [--drain S] [--pid DAEMON_PID]\n");
    exit(2);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage();
        if (!strcmp(a, "--pool")) pool_path = v;
        else if (!strcmp(a, "--port")) port = atoi(v);
        else if (!strcmp(a, "--mode")) open_mode = !strcmp(v, "open");
        else if (!strcmp(a, "--connections")) connections = atoi(v);
        else if (!strcmp(a, "--rate")) rate = atof(v);
        else if (!strcmp(a, "--warmup")) warmup = atof(v);
        else if (!strcmp(a, "--duration")) duration = atof(v);
        else if (!strcmp(a, "--drain")) drain_limit = atof(v);
        else if (!strcmp(a, "--pid")) daemon_pid = atoi(v);
        else usage();
        i++;
    }
    if (!pool_path || port <= 0 || port > 65535 || connections < 1 || connections > MAX_CONNECTIONS ||
        rate <= 0 || warmup < 0 || duration <= 0 || duration > 600 || warmup > 600)
        usage();
    signal(SIGPIPE, SIG_IGN);
    load_pool();

    epfd = epoll_create1(0);
    if (epfd < 0) die("epoll_create1");
    for (int i = 0; i < connections; i++) open_connection(&conns[i]);

    int timer = -1;
    if (open_mode) {
        timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
        if (timer < 0) die("timerfd_create");
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = NULL};
        epoll_ctl(epfd, EPOLL_CTL_ADD, timer, &event);
    }

    Sample before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    int sampled_before = 0, sampled_after = 0;

    t0 = now_s() + 0.05; /* let the connections establish */
    window_start = t0 + warmup;
    window_end = window_start + duration;
    double hard_stop = window_end + drain_limit;
    long scheduled_total = open_mode ? (long)floor((warmup + duration) * rate) : 0;
    long dispatched = 0; /* open: timetable entries handed to a connection */
    double drained_at = 0;

    struct epoll_event events[MAX_CONNECTIONS + 1];
    for (;;) {
        double now = now_s();
        if (!sampled_before && now >= window_start) {
            take_sample(&before);
            sampled_before = 1;
        }
        if (!sampled_after && now >= window_end) {
            take_sample(&after);
            sampled_after = 1;
        }
        int accepting = now < window_end;

        if (open_mode) {
            /* hand every due timetable entry to an idle connection, oldest first */
            long due_count = now < t0 ? 0 : (long)floor((now - t0) * rate) + 1;
            if (due_count > scheduled_total) due_count = scheduled_total;
            if (due_count - dispatched > max_queue) max_queue = due_count - dispatched;
            for (int i = 0; i < connections && dispatched < due_count; i++) {
                Connection *c = &conns[i];
                if (c->busy) continue;
                if (next_request >= pool_count) {
                    pool_exhausted = 1;
                    break;
                }
                double due = t0 + dispatched / rate;
                if (now - due > max_send_lag && due >= window_start) max_send_lag = now - due;
                start_request(c, next_request++, due);
                dispatched++;
            }
        } else if (accepting && now >= t0) {
            for (int i = 0; i < connections; i++) {
                Connection *c = &conns[i];
                if (c->busy) continue;
                if (next_request >= pool_count) {
                    pool_exhausted = 1;
                    break;
                }
                start_request(c, next_request++, now);
            }
        }

        int in_flight = 0;
        for (int i = 0; i < connections; i++) in_flight += conns[i].busy;
        int finished = open_mode ? (dispatched >= scheduled_total || pool_exhausted) && now >= window_end
                                 : !accepting;
        if (finished && in_flight == 0) {
            drained_at = now;
            break;
        }
        if (server_gone) {
            drained_at = now;
            fprintf(stderr, "client: %ld requests in a row got no answer (the server is gone); stopping\n",
                    consecutive_errors);
            break;
        }
        if (now >= hard_stop) {
            drained_at = now;
            fprintf(stderr, "client: %d request(s) still unanswered %.0f s after the window; giving up\n", in_flight,
                    drain_limit);
            abandoned = in_flight;
            break;
        }

        int timeout_ms = 100;
        if (open_mode && dispatched < scheduled_total) {
            long due_count = now < t0 ? 0 : (long)floor((now - t0) * rate) + 1;
            double next_due = t0 + (due_count > dispatched ? dispatched : due_count) / rate;
            int any_idle = 0;
            for (int i = 0; i < connections; i++) any_idle |= !conns[i].busy;
            if (any_idle) {
                /* arm the timer for the next entry (absolute, nanosecond resolution) */
                struct itimerspec spec = {0};
                double at = next_due > now ? next_due : now + 1e-6;
                struct timespec mono;
                clock_gettime(CLOCK_MONOTONIC, &mono);
                double base = mono.tv_sec + mono.tv_nsec / 1e9;
                double target = base + (at - now);
                spec.it_value.tv_sec = (time_t)target;
                spec.it_value.tv_nsec = (long)((target - floor(target)) * 1e9);
                timerfd_settime(timer, TFD_TIMER_ABSTIME, &spec, NULL);
            }
        } else if (!sampled_before || !sampled_after) {
            double next = !sampled_before ? window_start : window_end;
            int ms = (int)ceil((next - now) * 1000);
            if (ms < timeout_ms) timeout_ms = ms < 0 ? 0 : ms;
        }
        int n = epoll_wait(epfd, events, MAX_CONNECTIONS + 1, timeout_ms);
        if (n < 0 && errno != EINTR) die("epoll_wait");
        double at = now_s();
        for (int i = 0; i < n; i++) {
            Connection *c = events[i].data.ptr;
            if (!c) {
                uint64_t expirations;
                while (read(timer, &expirations, sizeof expirations) > 0) {
                }
                continue;
            }
            if (events[i].events & (EPOLLOUT)) flush_request(c);
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(c, at);
        }
    }
    if (!sampled_after) take_sample(&after);
    report(&before, &after, drained_at);
    return 0;
}
