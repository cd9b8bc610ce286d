/* bench/bare/crr.c — the floor of a crr transaction over loopback TCP: a client thread that
 * does socket, connect, send SIZE, recv SIZE, close in a loop, and a server thread that
 * accepts, recvs SIZE, sends SIZE, reads until the client's FIN (or reset), closes. Nothing
 * else: no options (as netperf's TCP_CRR) unless CLOSE is `reset`, which sets SO_LINGER 0 on
 * the client so its close sends a RST and leaves no TIME_WAIT (neper tcp_crr's default);
 * `fin` (the default) closes gracefully. No timing inside the loop beyond one clock read per
 * transaction to stop. Prints "transactions_per_s N" over the measured seconds after WARMUP.
 *
 * usage: crr SIZE WARMUP_S MEASURE_S CLIENT_CPU SERVER_CPU [fin|reset]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int listener;
static size_t size;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) { perror("sched_setaffinity"); exit(1); }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int full(int fd, char *buf, size_t n, int writing) {
    size_t done = 0;
    while (done < n) {
        ssize_t r = writing ? send(fd, buf + done, n - done, MSG_NOSIGNAL) : recv(fd, buf + done, n - done, 0);
        if (r <= 0) return -1;
        done += (size_t)r;
    }
    return 0;
}

static void *server(void *arg) {
    pin(*(int *)arg);
    char *buf = malloc(size), end;
    for (;;) {
        int fd = accept(listener, NULL, NULL);
        if (fd < 0) break;
        if (full(fd, buf, size, 0) == 0 && full(fd, buf, size, 1) == 0)
            while (recv(fd, &end, 1, 0) > 0) {}
        close(fd);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) { fprintf(stderr, "usage: crr SIZE WARMUP_S MEASURE_S CLIENT_CPU SERVER_CPU [fin|reset]\n"); return 2; }
    int reset = argc == 7 && strcmp(argv[6], "reset") == 0;
    if (argc == 7 && !reset && strcmp(argv[6], "fin") != 0) { fprintf(stderr, "crr: CLOSE must be fin or reset, got %s\n", argv[6]); return 2; }
    struct linger abortive = {.l_onoff = 1, .l_linger = 0};
    size = strtoul(argv[1], NULL, 10);
    double warmup = atof(argv[2]), measure = atof(argv[3]);
    int client_cpu = atoi(argv[4]), server_cpu = atoi(argv[5]);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    listener = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) || listen(listener, 128) ||
        getsockname(listener, (struct sockaddr *)&addr, &len)) { perror("listen"); return 1; }
    pthread_t t;
    pthread_create(&t, NULL, server, &server_cpu);
    pin(client_cpu);
    char *buf = calloc(1, size);
    double start = now(), open = start + warmup, stop = open + measure;
    unsigned long counted = 0;
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || (reset && setsockopt(fd, SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive)) ||
            connect(fd, (struct sockaddr *)&addr, sizeof addr)) { perror("connect"); return 1; }
        if (full(fd, buf, size, 1) || full(fd, buf, size, 0)) { perror("exchange"); return 1; }
        close(fd);
        double t1 = now();
        if (t1 >= stop) break;
        if (t1 >= open) counted++;
    }
    printf("transactions_per_s %.1f\n", counted / measure);
    return 0;
}
