// bench/bare/sink.c — the floor that bench/sink.sh holds `bytepath run --sink` against: one UDP
// sender pinned to one CPU, sending to an address past a veth pair that no socket owns, doing
// what bytepath's mechanism does and nothing else.
//
//   sink MECHANISM SIZE WARMUP_MS DURATION_MS CPU DEST_ADDR
//     copy      the seeds' message (8 fields of SIZE/8 bytes, each its own heap allocation)
//               serialized into one buffer, then send(2) of that buffer, one datagram.
//     zerocopy  sendmsg(2) of the 8 fields with MSG_ZEROCOPY | MSG_DONTWAIT on a socket with
//               SO_ZEROCOPY, from a pool of messages as large as bytepath's (the socket's send
//               buffer in messages plus two, at most 4 MiB counting 32 B per field, at least
//               two); a slot is reused only once its send is complete. The error queue is read
//               every 32 sends, whenever the socket is not writable and on ENOBUFS, as
//               bytepath reads it.
//     Both give each datagram a 4-byte sequence number over its first bytes, as bytepath does,
//     and send a message above one datagram (65507 B) as equal parts, as --udp-split does.
//   The socket is connected to DEST_ADDR port 9 (discard), nothing else set: bytepath leaves
//   SO_SNDBUF at its default too. No clock is read on the send path: the main thread sleeps
//   through the warm-up, reads the sender's byte count, sleeps DURATION_MS, reads it again.
//   prints: gbps=<payload Gbit/s over the measured phase> messages=<n> completions=<n>
//           copied=<n> (the last two: zerocopy completions, and those flagged copied)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
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

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

#define FIELDS 8
#define REAP_EVERY 32
#define POOL_MEMORY_CAP (4u << 20)
#define FIELD_OVERHEAD 32
#define SEQ_BYTES 4u // a datagram's number, over its first bytes
#define UDP_MAX_PAYLOAD 65507u
#define DONE_RING 65536 // ids in flight never exceed the pool, which is far smaller

struct message {
  char *field[FIELDS];
  uint64_t first_id, ids; // the send calls that carried it last; id done: done_id[id % ring] == id + 1
};

static size_t size, field_size, parts;
static int fd, cpu, zerocopy;
static _Atomic int stop;
static _Atomic uint64_t sent_bytes, sent_messages;
static uint64_t issued, completions, copied, since_reap;
static uint64_t done_id[DONE_RING];

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void pin(int c) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set))
    die("sched_setaffinity");
}

// Reads every pending notification; returns how many send calls they completed.
static uint64_t reap(void) {
  uint64_t n = 0;
  since_reap = 0;
  for (;;) {
    char control[128];
    struct msghdr msg = {.msg_control = control, .msg_controllen = sizeof control};
    if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return n;
      die("recvmsg(MSG_ERRQUEUE)");
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_IP || c->cmsg_type != IP_RECVERR)
        continue;
      struct sock_extended_err *e = (struct sock_extended_err *)CMSG_DATA(c);
      if (e->ee_origin != SO_EE_ORIGIN_ZEROCOPY) {
        errno = (int)e->ee_errno;
        die("error queue");
      }
      for (uint64_t id = e->ee_info; id <= e->ee_data; id++) {
        done_id[id % DONE_RING] = id + 1;
        n++;
        if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
          copied++;
      }
    }
  }
}

static void wait_writable_or_completion(void) {
  struct pollfd p = {.fd = fd, .events = POLLOUT};
  if (poll(&p, 1, 100) < 0 && errno != EINTR)
    die("poll");
}

// The iovec of bytes [lo, hi) of a message's fields, as bytepath's sub_iov makes it.
static int sub_iov(struct message *m, size_t lo, size_t hi, struct iovec *iov) {
  int used = 0;
  for (int i = 0; i < FIELDS; i++) {
    size_t start = (size_t)i * field_size, end = start + field_size;
    size_t a = lo > start ? lo : start, b = hi < end ? hi : end;
    if (a < b)
      iov[used++] = (struct iovec){.iov_base = m->field[i] + (a - start), .iov_len = b - a};
  }
  return used;
}

static void send_zerocopy(struct iovec *iov, int count) {
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)count};
  for (;;) {
    if (sendmsg(fd, &msg, MSG_ZEROCOPY | MSG_DONTWAIT) >= 0)
      break;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      completions += reap();
      wait_writable_or_completion();
    } else if (errno == ENOBUFS) { // option memory held by pending notifications
      uint64_t n = reap();
      completions += n;
      if (n == 0) {
        struct pollfd p = {.fd = fd, .events = 0};
        poll(&p, 1, 10);
      }
    } else {
      die("sendmsg(MSG_ZEROCOPY)");
    }
  }
  issued++;
  if (++since_reap >= REAP_EVERY)
    completions += reap();
}

// Part `part` of a message: the first size % parts parts are one byte longer.
static void part_range(size_t part, size_t *lo, size_t *hi) {
  size_t shorter = size / parts, longer = size % parts;
  *lo = part * shorter + (part < longer ? part : longer);
  *hi = *lo + shorter + (part < longer);
}

// zerocopy: the numbers go into the message's own memory (lent to the kernel with the rest),
// then one zero-copy send per datagram; the message's slot remembers its last send's id.
static void send_message_zerocopy(struct message *m, uint32_t *seq) {
  m->first_id = issued;
  for (size_t part = 0; part < parts; part++) {
    size_t lo, hi;
    part_range(part, &lo, &hi);
    for (size_t b = 0; b < SEQ_BYTES; b++) // the number may straddle two fields
      m->field[(lo + b) / field_size][(lo + b) % field_size] = (char)(*seq >> (8 * b));
    (*seq)++;
    struct iovec iov[FIELDS];
    send_zerocopy(iov, sub_iov(m, lo, hi, iov));
  }
  m->ids = issued - m->first_id;
}

// copy: the fields serialized into one buffer, then per datagram a 4-byte number and the
// part's bytes after it, as bytepath's datagram socket sends them.
static void send_message_copy(struct message *m, char *wire, uint32_t *seq) {
  for (int i = 0; i < FIELDS; i++)
    memcpy(wire + (size_t)i * field_size, m->field[i], field_size);
  for (size_t part = 0; part < parts; part++) {
    size_t lo, hi;
    part_range(part, &lo, &hi);
    uint32_t number = (*seq)++;
    struct iovec iov[2] = {{.iov_base = &number, .iov_len = SEQ_BYTES},
                           {.iov_base = wire + lo + SEQ_BYTES, .iov_len = hi - lo - SEQ_BYTES}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
    while (sendmsg(fd, &msg, 0) < 0)
      if (errno != ENOBUFS && errno != EINTR)
        die("sendmsg");
  }
}

static int slot_free(const struct message *m) {
  for (uint64_t id = m->first_id; id < m->first_id + m->ids; id++)
    if (done_id[id % DONE_RING] != id + 1)
      return 0;
  return 1;
}

static void wait_for_slot(struct message *m) {
  while (!slot_free(m)) {
    uint64_t n = reap();
    completions += n;
    if (n == 0) {
      struct pollfd p = {.fd = fd, .events = 0};
      poll(&p, 1, 100);
    }
  }
}

static size_t pool_size(size_t send_buffer) {
  size_t window = (send_buffer + size - 1) / size + 2;
  size_t cap = POOL_MEMORY_CAP / (size + FIELDS * FIELD_OVERHEAD);
  size_t n = window < cap ? window : cap;
  return n < 2 ? 2 : n;
}

static void *sender(void *arg) {
  (void)arg;
  pin(cpu);
  int sndbuf = 0;
  socklen_t len = sizeof sndbuf;
  if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len))
    die("getsockopt(SO_SNDBUF)");
  size_t n = zerocopy ? pool_size((size_t)sndbuf) : 1;
  struct message *pool = calloc(n, sizeof *pool);
  char *wire = malloc(size);
  if (!pool || !wire)
    die("malloc");
  for (size_t s = 0; s < n; s++)
    for (int i = 0; i < FIELDS; i++)
      if (!(pool[s].field[i] = calloc(1, field_size)))
        die("malloc");
  uint64_t messages = 0, bytes = 0;
  uint32_t seq = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    struct message *m = &pool[messages % n];
    if (zerocopy) {
      wait_for_slot(m);
      send_message_zerocopy(m, &seq);
    } else {
      send_message_copy(m, wire, &seq);
    }
    messages++;
    bytes += size;
    atomic_store_explicit(&sent_bytes, bytes, memory_order_relaxed);
    atomic_store_explicit(&sent_messages, messages, memory_order_relaxed);
  }
  return NULL;
}

static void sleep_ms(uint64_t ms) {
  struct timespec t = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000};
  while (nanosleep(&t, &t) && errno == EINTR) {
  }
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 7 || (strcmp(argv[1], "copy") && strcmp(argv[1], "zerocopy"))) {
    fprintf(stderr, "usage: sink copy|zerocopy SIZE WARMUP_MS DURATION_MS CPU DEST_ADDR\n");
    return 2;
  }
  zerocopy = !strcmp(argv[1], "zerocopy");
  size = strtoull(argv[2], NULL, 0);
  if (size < 64 || size % FIELDS || size > (1u << 20)) {
    fprintf(stderr, "SIZE %zu: a multiple of 8 from 64 B to 1 MiB\n", size);
    return 2;
  }
  field_size = size / FIELDS;
  parts = (size + UDP_MAX_PAYLOAD - 1) / UDP_MAX_PAYLOAD; // bytepath's --udp-split
  uint64_t warmup = strtoull(argv[3], NULL, 0), duration = strtoull(argv[4], NULL, 0);
  cpu = atoi(argv[5]);
  struct sockaddr_in dest = {.sin_family = AF_INET, .sin_port = htons(9)};
  if (inet_pton(AF_INET, argv[6], &dest.sin_addr) != 1) {
    fprintf(stderr, "DEST_ADDR %s: an IPv4 address\n", argv[6]);
    return 2;
  }
  if ((fd = socket(AF_INET, SOCK_DGRAM, 0)) < 0)
    die("socket");
  int one = 1;
  if (zerocopy && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one))
    die("setsockopt(SO_ZEROCOPY)");
  if (connect(fd, (struct sockaddr *)&dest, sizeof dest))
    die("connect");
  pthread_t t;
  if (pthread_create(&t, NULL, sender, NULL))
    die("pthread_create");
  sleep_ms(warmup);
  uint64_t b0 = atomic_load(&sent_bytes), m0 = atomic_load(&sent_messages), t0 = now_ns();
  sleep_ms(duration);
  uint64_t b1 = atomic_load(&sent_bytes), m1 = atomic_load(&sent_messages), t1 = now_ns();
  atomic_store(&stop, 1);
  pthread_join(t, NULL);
  printf("gbps=%.6f messages=%llu completions=%llu copied=%llu\n",
         (double)(b1 - b0) * 8.0 / (double)(t1 - t0), (unsigned long long)(m1 - m0),
         (unsigned long long)completions, (unsigned long long)copied);
  return 0;
}
