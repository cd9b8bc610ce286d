// bench/bare/bare.c — the floor that bench/floor.sh holds bytepath against: one flow, two
// threads pinned like `bytepath --pin S,R`, doing nothing but the system calls of the flow.
// Everything else (timing, the stop) is kept off the per-message path or to one clock read
// per round trip, so whatever bytepath adds on top shows as a ratio below 1.
//
//   bare stream TRANSPORT SIZE WARMUP_MS DURATION_MS SENDER_CPU RECEIVER_CPU
//     sender: send(2) (write(2) on pipes) of SIZE bytes in a loop, partial sends continued;
//     receiver: recv(2) (read(2)) of what is left of the current SIZE-byte message.
//     Neither reads a clock: the main thread sleeps through the warm-up, reads the receiver's
//     message count, sleeps DURATION_MS, reads it again and raises the stop flag.
//     prints: gbps=<receiver payload Gbit/s over the measured phase> messages=<n>
//   bare rr TRANSPORT SIZE WARMUP_MS DURATION_MS COUNT CLIENT_CPU SERVER_CPU
//     client: send SIZE bytes, read until the whole SIZE-byte answer is in, one
//     clock_gettime(CLOCK_MONOTONIC) per round trip (the sample is the interval between
//     successive reads, as bytepath's); server: read a whole request, send it back.
//     Measured after WARMUP_MS, for DURATION_MS or COUNT round trips, whichever ends first.
//     prints: p50_ns=<> mean_ns=<> round_trips=<n>
//
// TRANSPORT: tcp (127.0.0.1; TCP_NODELAY on both ends for rr, as bytepath sets it, none for
// stream), unix (socketpair(AF_UNIX, SOCK_STREAM)), pipe (two pipes, one each way).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// One side's descriptors: it reads `rd` and writes `wr` (the same socket, or two pipe ends).
struct side {
  int rd, wr, is_socket, cpu;
};

static size_t size;
static _Atomic int stop;
static _Atomic uint64_t received; // stream: whole messages in, published with a plain store

static void die(const char *what) {
  perror(what);
  exit(1);
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set)) die("pthread_setaffinity_np");
}

// A message buffer as bytepath lays it out: page aligned and alone on its pages, so no other
// data shares a cache line with it (a line the receiver writes and the sender reads would move
// between the CPUs on every message) and its offset in the page is the same in every run.
static char *message_buffer(int fill) {
  size_t len = (size + 4095) & ~(size_t)4095;
  char *buf = aligned_alloc(4096, len);
  if (!buf) die("aligned_alloc");
  memset(buf, fill, len);
  return buf;
}

static void send_whole(const struct side *s, const char *buf) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = s->is_socket ? send(s->wr, buf + done, size - done, MSG_NOSIGNAL)
                             : write(s->wr, buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("send");
    done += (size_t)n;
  }
}

// Reads until a whole message is in; 0 at a clean end of the flow.
static int recv_whole(const struct side *s, char *buf) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = s->is_socket ? recv(s->rd, buf + done, size - done, 0)
                             : read(s->rd, buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die("recv");
    if (n == 0) {
      if (done) die("end of flow inside a message");
      return 0;
    }
    done += (size_t)n;
  }
  return 1;
}

static void end_writing(const struct side *s) {
  if (s->is_socket) shutdown(s->wr, SHUT_WR);
  else close(s->wr);
}

static void *stream_sender(void *arg) {
  const struct side *s = arg;
  pin(s->cpu);
  char *buf = message_buffer(0xa5);
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) send_whole(s, buf);
  end_writing(s);
  return NULL;
}

static void *stream_receiver(void *arg) {
  const struct side *s = arg;
  pin(s->cpu);
  char *buf = message_buffer(0);
  uint64_t messages = 0;
  while (recv_whole(s, buf))
    atomic_store_explicit(&received, ++messages, memory_order_relaxed);
  return NULL;
}

static void *rr_server(void *arg) {
  const struct side *s = arg;
  pin(s->cpu);
  char *buf = message_buffer(0);
  while (recv_whole(s, buf)) send_whole(s, buf);
  end_writing(s);
  return NULL;
}

struct rr_client {
  struct side side;
  uint64_t warmup_ns, duration_ns, count;
  uint32_t *samples;
  uint64_t taken;
};

static void *rr_client(void *arg) {
  struct rr_client *c = arg;
  pin(c->side.cpu);
  char *buf = message_buffer(0x5a);
  uint64_t last = now_ns(), from = last + c->warmup_ns, until = from + c->duration_ns;
  while (c->taken < c->count) {
    send_whole(&c->side, buf);
    if (!recv_whole(&c->side, buf)) die("server ended the flow");
    uint64_t t = now_ns();
    if (t >= until) break;
    if (t >= from) c->samples[c->taken++] = (uint32_t)(t - last);
    last = t;
  }
  end_writing(&c->side);
  return NULL;
}

// Fills a[0] (sender/client) and a[1] (receiver/server) with a connected flow.
static void connect_flow(const char *transport, int rr, struct side a[2]) {
  int one = 1;
  if (!strcmp(transport, "tcp")) {
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || c < 0) die("socket");
    if (bind(l, (struct sockaddr *)&addr, len) || listen(l, 1)) die("bind/listen");
    if (getsockname(l, (struct sockaddr *)&addr, &len)) die("getsockname");
    if (connect(c, (struct sockaddr *)&addr, len)) die("connect");
    int r = accept(l, NULL, NULL);
    if (r < 0) die("accept");
    close(l);
    if (rr && (setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
               setsockopt(r, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one)))
      die("TCP_NODELAY");
    a[0] = (struct side){c, c, 1, 0};
    a[1] = (struct side){r, r, 1, 0};
  } else if (!strcmp(transport, "unix")) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds)) die("socketpair");
    a[0] = (struct side){fds[0], fds[0], 1, 0};
    a[1] = (struct side){fds[1], fds[1], 1, 0};
  } else if (!strcmp(transport, "pipe")) {
    int to_receiver[2], to_sender[2];
    if (pipe(to_receiver) || pipe(to_sender)) die("pipe");
    a[0] = (struct side){to_sender[0], to_receiver[1], 0, 0};
    a[1] = (struct side){to_receiver[0], to_sender[1], 0, 0};
  } else {
    fprintf(stderr, "bare: unknown transport %s (tcp, unix, pipe)\n", transport);
    exit(2);
  }
}

static void sleep_ms(uint64_t ms) {
  struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
  while (nanosleep(&t, &t) && errno == EINTR) {
  }
}

static int stream(const char *transport, uint64_t warmup_ms, uint64_t duration_ms, int cpus[2]) {
  struct side s[2];
  connect_flow(transport, 0, s);
  s[0].cpu = cpus[0];
  s[1].cpu = cpus[1];
  pthread_t t[2];
  pthread_create(&t[0], NULL, stream_sender, &s[0]);
  pthread_create(&t[1], NULL, stream_receiver, &s[1]);
  sleep_ms(warmup_ms);
  uint64_t t0 = now_ns(), m0 = atomic_load_explicit(&received, memory_order_relaxed);
  sleep_ms(duration_ms);
  uint64_t t1 = now_ns(), m1 = atomic_load_explicit(&received, memory_order_relaxed);
  atomic_store(&stop, 1);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  printf("gbps=%.6f messages=%llu\n", (double)(m1 - m0) * size * 8.0 / (double)(t1 - t0),
         (unsigned long long)(m1 - m0));
  return 0;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static int rr(const char *transport, uint64_t warmup_ms, uint64_t duration_ms, uint64_t count,
              int cpus[2]) {
  struct side s[2];
  connect_flow(transport, 1, s);
  s[1].cpu = cpus[1];
  // No round trip is shorter than 1 us here: that bounds the samples a duration can take.
  uint64_t most = duration_ms * 1000;
  struct rr_client c = {.side = s[0], .warmup_ns = warmup_ms * 1000000,
                        .duration_ns = duration_ms * 1000000,
                        .count = count && count < most ? count : most};
  c.side.cpu = cpus[0];
  c.samples = malloc(c.count * sizeof *c.samples);
  if (!c.samples) die("malloc");
  memset(c.samples, 0, c.count * sizeof *c.samples); // fault the pages in before timing
  pthread_t t[2];
  pthread_create(&t[1], NULL, rr_server, &s[1]);
  pthread_create(&t[0], NULL, rr_client, &c);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  if (!c.taken) {
    fprintf(stderr, "bare: no round trip measured\n");
    return 1;
  }
  double sum = 0;
  for (uint64_t i = 0; i < c.taken; i++) sum += c.samples[i];
  qsort(c.samples, c.taken, sizeof *c.samples, cmp_u32);
  printf("p50_ns=%u mean_ns=%.1f round_trips=%llu\n", c.samples[(c.taken - 1) / 2],
         sum / (double)c.taken, (unsigned long long)c.taken);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 8 && !strcmp(argv[1], "stream")) {
    size = strtoull(argv[3], NULL, 0);
    int cpus[2] = {atoi(argv[6]), atoi(argv[7])};
    return stream(argv[2], strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0), cpus);
  }
  if (argc == 9 && !strcmp(argv[1], "rr")) {
    size = strtoull(argv[3], NULL, 0);
    int cpus[2] = {atoi(argv[7]), atoi(argv[8])};
    return rr(argv[2], strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0),
              strtoull(argv[6], NULL, 0), cpus);
  }
  fprintf(stderr,
          "usage: bare stream TRANSPORT SIZE WARMUP_MS DURATION_MS SENDER_CPU RECEIVER_CPU\n"
          "       bare rr TRANSPORT SIZE WARMUP_MS DURATION_MS COUNT CLIENT_CPU SERVER_CPU\n");
  return 2;
}
