/* Shared by the media I/O addon's files: media_io.c (set-up, sockets, sends), batch.c (the read
 * path on the event loop), relay.c (relay rules and records), relay_thread.c (the relay thread). */
#ifndef MEDIA_IO_H
#define MEDIA_IO_H

#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pthread.h>

#include <node_api.h>
#include <uv.h>

#define MAX_BATCH 256
/* The largest UDP datagram, so that nothing is truncated: hostile or not, every datagram reaches the
 * session whole and is counted there. Only the pages datagrams are written into are ever touched. */
#define SLOT_BYTES 65536
#define MAX_EVENTS 128
#define META_STRIDE 5
#define NO_AGE 0xffffffffu
#define CONTROL_BYTES CMSG_SPACE(sizeof(struct timespec))
/* One socket may fill at most this many slots per wake-up, so a flooded port cannot starve the rest. */
#define PER_SOCKET 32
#define RELAYED 0x80000000u
/*
 * Relayed datagrams are reported to JavaScript as records (relay.c), not one call per read: a
 * read that only relayed calls no JavaScript. Records go before any batch that has datagrams for
 * JavaScript, so JavaScript sees every socket's datagrams in order; otherwise they wait until
 * RECORD_BATCH are pending or RECORD_FLUSH_MS have passed. RECORD_BATCH bounds how long the
 * JavaScript bookkeeping holds the loop at a time.
 * Record i is RECORD_STRIDE words from word 1 of the records array (word 0: how many are pending):
 * socket token, sequence number, timestamp, SSRC (as they arrived), length, and nanoseconds from
 * the read that relayed it to its hand-over.
 */
#define RECORD_BATCH 64
#define RECORD_FLUSH_MS 20
/*
 * The relay thread's records wait for more: their hand-over holds the loop, not the relay, and
 * every wake-up of the loop competes with the thread for a core. At 400 calls (40,000 records a
 * second) the 20 ms flush comes first; batches of 256 measured a p99 of 1.06 and 1.17 ms, of
 * 1,024 0.91 and 0.95 ms (PERFORMANCE.md).
 */
#define THREAD_RECORD_BATCH 1024
/* Records waiting for JavaScript, at most: 0.4 s of 400 relayed calls. The relay thread waits
 * for room (the kernel's socket buffers hold what arrives meanwhile); the loop hands over first. */
#define MAX_RECORDS 16384
#define RECORD_STRIDE 6
/* Datagrams the relay thread read but may not relay, waiting for the loop (relay_thread.c). */
#define MAX_DEFERRED MAX_BATCH

/* The highest SCHED_RR priority (sched_get_priority_max(SCHED_RR) on Linux). */
#define RELAY_PRIORITY_MAX 99

/* Which reader a socket's datagrams go to: the event loop's epoll set, or the relay thread's. */
#define ON_LOOP 0
#define ON_THREAD 1

typedef struct {
  uint32_t peer_ip;
  uint32_t peer_port;
  uint32_t ssrc;
  uint32_t payload_type;
  int out_fd;
  uint32_t out_token;
  struct sockaddr_in dest;
  uint32_t out_ssrc;
  uint32_t seq_offset;
  uint32_t ts_offset;
  uint32_t out_payload_type;
} relay_rule;

/* Receive buffers for recvmmsg(2): one set for the event loop (over the shared arena), one for the relay thread. */
typedef struct {
  struct mmsghdr *msgs;
  struct iovec *iov;
  struct sockaddr_in *from;
  char (*control)[CONTROL_BYTES];
} reader;

typedef struct {
  uint32_t token, sequence, timestamp, ssrc, length;
  uint64_t at_ns;
} record;

/* A datagram the relay thread read and handed back to the loop, as it arrived. */
typedef struct {
  int fd;
  uint32_t token, length, ip, port;
  /* The kernel's receive time (CLOCK_REALTIME ns), or 0 without receive timestamps. */
  uint64_t received_ns;
  uint8_t *data;
} deferred;

typedef struct {
  napi_env env;
  uv_poll_t poll;
  int epfd;
  int open_sockets;
  int polling;
  int timestamps;
  napi_ref on_batch;
  napi_ref arena_ref;
  napi_ref meta_ref;
  napi_ref records_ref;
  napi_async_context async_context;
  uint8_t *arena;
  uint32_t *meta;
  /* JavaScript's records array: word 0 is how many records wait here (in `pending`). */
  uint32_t *records;
  uv_timer_t flush_timer;
  int flush_armed;
  /* Wakes the loop from the relay thread: records due, or datagrams handed back. */
  uv_async_t wake;
  /* The poll, timer and async handles still open at cleanup: the state is freed when the last one closes. */
  int handles_open;
  reader loop_reader;
  struct mmsghdr msgs[MAX_BATCH];
  struct iovec iov[MAX_BATCH];
  struct sockaddr_in from[MAX_BATCH];
  char control[MAX_BATCH][CONTROL_BYTES];
  struct epoll_event events[MAX_EVENTS];

  /* Everything below is shared with the relay thread and guarded by `lock`. */
  pthread_mutex_t lock;
  /* Signalled when the loop takes records or handed-back datagrams: the thread may be waiting for room. */
  pthread_cond_t room;
  record pending[MAX_RECORDS];
  int pending_count;
  deferred handed_back[MAX_DEFERRED];
  int handed_back_count;
  /* By descriptor: the open socket's token (0 when not ours), its relay rule if any, its reader. */
  uint32_t *tokens;
  relay_rule **rules;
  uint8_t *reader_of;
  int table_len;
  /* The relay thread (relay_thread.c), started with the first socket it takes over. */
  int relay_thread;
  /* The relay thread's SCHED_RR priority, or 0 for the ordinary time-sharing class. */
  int relay_priority;
  int thread_epfd;
  int thread_wake_fd;
  int thread_started;
  int thread_stop;
  /* The loop has been woken for the pending records and not taken them yet. */
  int records_signalled;
  pthread_t thread;
  reader thread_reader;
  uint8_t *thread_arena;
} media_io;

#define CHECK(env, call)                                        \
  do {                                                          \
    if ((call) != napi_ok) {                                    \
      napi_throw_error((env), NULL, "media_io: " #call);        \
      return NULL;                                              \
    }                                                           \
  } while (0)

napi_value int_value(napi_env env, int64_t v);
media_io *state_of(napi_env env);

uint64_t monotonic_ns(void);

/* batch.c */
uint64_t received_ns(struct msghdr *hdr);
void on_readable(uv_poll_t *handle, int status, int events);
void on_wake(uv_async_t *handle);

/* relay.c (record and hand-back functions: called with `lock` held) */
bool relay_datagram(const relay_rule *rule, uint8_t *p, uint32_t len, const struct sockaddr_in *from);
const relay_rule *relay_rule_of(media_io *io, int fd);
void record_relayed(media_io *io, uint32_t token, const uint8_t *p, uint32_t len, uint64_t at_ns);
int take_records(media_io *io);
void set_reader(media_io *io, int fd, uint32_t token, int to);
napi_value Relay(napi_env env, napi_callback_info info);
napi_value TakeRelayed(napi_env env, napi_callback_info info);

/* relay_thread.c */
bool reader_init(reader *r, int slots, uint8_t *arena, bool timestamps);
void reader_reset(reader *r, int first, int count, bool timestamps);
bool relay_thread_init(media_io *io);
bool relay_thread_start(media_io *io);
void relay_thread_stop(media_io *io);
void relay_thread_free(media_io *io);
napi_value ProbeRelayPriority(napi_env env, napi_callback_info info);

#endif
