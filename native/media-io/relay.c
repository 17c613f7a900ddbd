/*
 * Relay rules of the media I/O addon (batch.c and relay_thread.c read the sockets; this file relays).
 *
 * JavaScript may give a socket one rule for a passthrough bridge that needs nothing but a header
 * rewrite. RTP from the socket's latched peer, with the stream's SSRC and audio payload type and a
 * payload the bridge would take, then gets its SSRC, sequence number, timestamp and payload type
 * rewritten (the other leg's sequencer offsets, RFC 3550 section 5.1) and is sent on the other
 * leg's socket at once, before JavaScript runs. JavaScript still learns of it, for the statistics,
 * from a record of its original header and arrival time (see media_io.h), handed over in bulk.
 * The first datagram of a socket's read that fails the rule, and everything after it in that
 * read, goes to JavaScript alone, so the order on the wire stays the order of arrival.
 *
 * A socket with a rule is read by the relay thread (relay_thread.c) once the loop has relayed a
 * whole read of it, and goes back to the loop when its rule goes or a datagram fails it.
 */
#include "media_io.h"

#define RTP_HEADER 12
/* The bridge's largest relayed payload (MAX_PAYLOAD in media-bridge.ts): an Ethernet MTU. */
#define MAX_PAYLOAD 1500

static uint32_t read32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void write32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

/*
 * Relays the datagram `p` of `len` octets from `from` by `rule` if it is RTP the bridge would pass
 * through unchanged but for the header: version 2, not RTCP (RFC 5761 section 4), from the latched
 * peer, with the rule's SSRC and payload type, a well-formed header and at most MAX_PAYLOAD octets
 * of payload. The header is restored afterwards, so JavaScript reads what arrived.
 */
bool relay_datagram(const relay_rule *rule, uint8_t *p, uint32_t len, const struct sockaddr_in *from) {
  if (len < RTP_HEADER || p[0] >> 6 != 2 || (p[1] >= 192 && p[1] <= 223)) return false;
  if ((uint32_t)(p[1] & 0x7f) != rule->payload_type || read32(p + 8) != rule->ssrc) return false;
  if (ntohl(from->sin_addr.s_addr) != rule->peer_ip || ntohs(from->sin_port) != rule->peer_port) return false;
  uint32_t offset = RTP_HEADER + (p[0] & 0x0f) * 4u;
  if (p[0] & 0x10) {
    if (len < offset + 4) return false;
    offset += 4 + ((uint32_t)p[offset + 2] << 8 | p[offset + 3]) * 4u;
  }
  uint32_t padding = (p[0] & 0x20) ? p[len - 1] : 0;
  if (offset + padding > len || len - padding - offset > MAX_PAYLOAD) return false;

  uint8_t saved[RTP_HEADER];
  memcpy(saved, p, RTP_HEADER);
  uint32_t seq = ((uint32_t)p[2] << 8 | p[3]) + rule->seq_offset;
  p[1] = (uint8_t)((p[1] & 0x80) | rule->out_payload_type);
  p[2] = (uint8_t)(seq >> 8);
  p[3] = (uint8_t)seq;
  write32(p + 4, read32(p + 4) + rule->ts_offset);
  write32(p + 8, rule->out_ssrc);
  /* Best effort, as every media send: a full buffer or an unreachable peer loses this packet only. */
  sendto(rule->out_fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)&rule->dest, sizeof rule->dest);
  memcpy(p, saved, RTP_HEADER);
  return true;
}

/* Notes a relayed datagram (its header as it arrived) for JavaScript; room is kept by the caller. */
void record_relayed(media_io *io, uint32_t token, const uint8_t *p, uint32_t len, uint64_t at_ns) {
  io->pending[io->pending_count++] = (record){
      .token = token, .sequence = (uint32_t)p[2] << 8 | p[3], .timestamp = read32(p + 4), .ssrc = read32(p + 8), .length = len, .at_ns = at_ns,
  };
  /* Word 0 is read by JavaScript without the lock, to skip a call when nothing waits. */
  __atomic_store_n(&io->records[0], (uint32_t)io->pending_count, __ATOMIC_RELAXED);
}

/* Hands the pending records over into JavaScript's array, with their ages; returns how many. */
int take_records(media_io *io) {
  int count = io->pending_count;
  if (io->flush_armed) {
    uv_timer_stop(&io->flush_timer);
    io->flush_armed = 0;
  }
  if (count == 0) return 0;
  uint64_t now = monotonic_ns();
  for (int i = 0; i < count; i++) {
    const record *from = &io->pending[i];
    uint32_t *r = io->records + 1 + (size_t)i * RECORD_STRIDE;
    uint64_t age = now > from->at_ns ? now - from->at_ns : 0;
    r[0] = from->token;
    r[1] = from->sequence;
    r[2] = from->timestamp;
    r[3] = from->ssrc;
    r[4] = from->length;
    r[5] = age >= NO_AGE ? NO_AGE - 1 : (uint32_t)age;
  }
  io->pending_count = 0;
  io->records_signalled = 0;
  __atomic_store_n(&io->records[0], 0u, __ATOMIC_RELAXED);
  pthread_cond_signal(&io->room);
  return count;
}

/*
 * Moves socket `fd` (token `token`) to the reader `to` (ON_LOOP or ON_THREAD): out of one epoll
 * set, into the other. Level-triggered, so datagrams already waiting are seen by the new reader.
 */
void set_reader(media_io *io, int fd, uint32_t token, int to) {
  if (io->reader_of[fd] == to) return;
  struct epoll_event ev = {.events = EPOLLIN, .data = {.u64 = ((uint64_t)token << 32) | (uint32_t)fd}};
  epoll_ctl(to == ON_THREAD ? io->epfd : io->thread_epfd, EPOLL_CTL_DEL, fd, NULL);
  epoll_ctl(to == ON_THREAD ? io->thread_epfd : io->epfd, EPOLL_CTL_ADD, fd, &ev);
  io->reader_of[fd] = (uint8_t)to;
}

/* takeRelayed() -> how many records JavaScript is to read now (before it changes a rule or sends). */
napi_value TakeRelayed(napi_env env, napi_callback_info info) {
  (void)info;
  media_io *io = state_of(env);
  if (io == NULL) return int_value(env, 0);
  pthread_mutex_lock(&io->lock);
  int count = take_records(io);
  pthread_mutex_unlock(&io->lock);
  return int_value(env, count);
}

/* The rule of `fd`, if it has one and the socket it sends on is still the one it was made for. */
const relay_rule *relay_rule_of(media_io *io, int fd) {
  const relay_rule *rule = fd < io->table_len ? io->rules[fd] : NULL;
  if (rule == NULL || rule->out_fd >= io->table_len || io->tokens[rule->out_fd] != rule->out_token) return NULL;
  return rule;
}

/* A rule from the words of relay(), or NULL with -EBADF or -ENOMEM in `error`. */
static relay_rule *new_rule(media_io *io, const uint32_t *r, int *error) {
  int out_fd = (int)r[4];
  if (out_fd < 0 || out_fd >= io->table_len || io->tokens[out_fd] == 0) {
    *error = -EBADF;
    return NULL;
  }
  relay_rule *rule = malloc(sizeof *rule);
  if (rule == NULL) {
    *error = -ENOMEM;
    return NULL;
  }
  *rule = (relay_rule){
      .peer_ip = r[0], .peer_port = r[1], .ssrc = r[2], .payload_type = r[3],
      .out_fd = out_fd, .out_token = io->tokens[out_fd],
      .dest = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r[6]), .sin_addr = {htonl(r[5])}},
      .out_ssrc = r[7], .seq_offset = r[8], .ts_offset = r[9], .out_payload_type = r[10] & 0x7f,
  };
  return rule;
}

/*
 * Replaces the rule of `fd` with `r` (the words of relay()), or removes it when `r` is NULL;
 * 0, -EBADF or -ENOMEM. A socket left without a rule is read by the loop again. One that gets a
 * rule stays with the loop until the loop has relayed a whole read of it (batch.c): datagrams
 * already handed to JavaScript in the current batch must reach it before any later one is relayed.
 */
static int set_rule(media_io *io, int fd, const uint32_t *r) {
  free(io->rules[fd]);
  int error = 0;
  io->rules[fd] = r == NULL ? NULL : new_rule(io, r, &error);
  if (io->rules[fd] == NULL) set_reader(io, fd, io->tokens[fd], ON_LOOP);
  return error;
}

/*
 * relay(fd, rule: Uint32Array) -> 0, or -EBADF when either socket is not open here. The rule, in
 * order: peer IPv4, peer port, SSRC, payload type; the socket to send on, destination IPv4 and
 * port; the SSRC to write, sequence and timestamp offsets, payload type to write.
 * relay(fd, null) removes the socket's rule.
 */
napi_value Relay(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  CHECK(env, napi_get_value_int32(env, argv[0], &fd));
  media_io *io = state_of(env);
  if (io == NULL || fd < 0 || fd >= io->table_len || io->tokens[fd] == 0) return int_value(env, -EBADF);
  napi_valuetype kind;
  CHECK(env, napi_typeof(env, argv[1], &kind));
  const uint32_t *r = NULL;
  if (kind != napi_null && kind != napi_undefined) {
    napi_typedarray_type type;
    size_t length;
    void *data;
    CHECK(env, napi_get_typedarray_info(env, argv[1], &type, &length, &data, NULL, NULL));
    if (type != napi_uint32_array || length < 11) {
      napi_throw_type_error(env, NULL, "media_io: a relay rule is a Uint32Array of 11");
      return NULL;
    }
    r = data;
  }
  /* Under the lock, so the relay thread is not between reading and relaying this socket. */
  pthread_mutex_lock(&io->lock);
  int result = set_rule(io, fd, r);
  pthread_mutex_unlock(&io->lock);
  return int_value(env, result);
}
