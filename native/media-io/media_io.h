/* Shared by media_io.c (the batched I/O) and relay.c (relay rules). */
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
 * JavaScript bookkeeping holds the loop (and with it the relay) at a time.
 * Record i is RECORD_STRIDE words from word 1 of the records array (word 0: how many are pending):
 * socket token, sequence number, timestamp, SSRC (as they arrived), length, and nanoseconds from
 * the read that relayed it to its hand-over.
 */
#define RECORD_BATCH 64
#define RECORD_FLUSH_MS 20
/* Room for a read's worth of records beyond a batch that is not yet due. */
#define MAX_RECORDS (RECORD_BATCH + MAX_BATCH)
#define RECORD_STRIDE 6

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
  uint32_t *records;
  int record_count;
  uint64_t record_at[MAX_RECORDS];
  uv_timer_t flush_timer;
  int flush_armed;
  /* The poll and timer handles still open at cleanup: the state is freed when the last one closes. */
  int handles_open;
  struct mmsghdr msgs[MAX_BATCH];
  struct iovec iov[MAX_BATCH];
  struct sockaddr_in from[MAX_BATCH];
  char control[MAX_BATCH][CONTROL_BYTES];
  struct epoll_event events[MAX_EVENTS];
  /* By descriptor: the open socket's token (0 when not ours) and its relay rule, if any. */
  uint32_t *tokens;
  relay_rule **rules;
  int table_len;
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
void on_readable(uv_poll_t *handle, int status, int events);

/* relay.c */
bool relay_datagram(media_io *io, const relay_rule *rule, int slot);
const relay_rule *relay_rule_of(media_io *io, int fd);
void record_relayed(media_io *io, uint32_t token, int slot, uint64_t at_ns);
int take_records(media_io *io);
napi_value Relay(napi_env env, napi_callback_info info);
napi_value TakeRelayed(napi_env env, napi_callback_info info);

#endif
