/*
 * The read path of the media I/O addon: drains the ready sockets of the epoll set with
 * recvmmsg(2), relays what the sockets' rules allow (relay.c), and hands the rest to JavaScript
 * in one call per read, with the records of relayed datagrams (see media_io.h) before them.
 */
#include "media_io.h"

/* Writes each datagram's age, from the kernel's receive timestamp to now, into its meta. */
static void stamp_ages(media_io *io, int count) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  for (int slot = 0; slot < count; slot++) {
    uint32_t age = NO_AGE;
    struct msghdr *hdr = &io->msgs[slot].msg_hdr;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(hdr); c != NULL; c = CMSG_NXTHDR(hdr, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
      struct timespec at;
      memcpy(&at, CMSG_DATA(c), sizeof at);
      int64_t ns = (int64_t)(now.tv_sec - at.tv_sec) * 1000000000 + (now.tv_nsec - at.tv_nsec);
      age = ns < 0 ? 0 : ns >= NO_AGE ? NO_AGE - 1 : (uint32_t)ns;
    }
    io->meta[(size_t)slot * META_STRIDE + 4] = age;
  }
}

/* Calls JavaScript once with the pending records and the first `count` slots of the arena. */
static void hand_over(media_io *io, int count) {
  int relayed = take_records(io);
  if (io->timestamps && count > 0) stamp_ages(io, count);
  napi_env env = io->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value callback, receiver, argv[2], result;
  if (napi_get_reference_value(env, io->on_batch, &callback) == napi_ok && napi_get_global(env, &receiver) == napi_ok) {
    argv[0] = int_value(env, count);
    argv[1] = int_value(env, relayed);
    /* make_callback, as libuv callbacks into Node must: it runs the microtask queue afterwards. */
    if (napi_make_callback(env, io->async_context, receiver, callback, 2, argv, &result) == napi_pending_exception) {
      napi_value error;
      napi_get_and_clear_last_exception(env, &error);
      napi_fatal_exception(env, error);
    }
  }
  napi_close_handle_scope(env, scope);
}

static void on_records_due(uv_timer_t *timer) {
  media_io *io = (media_io *)timer->data;
  io->flush_armed = 0;
  if (io->record_count > 0) hand_over(io, 0);
}

/*
 * Drains ready sockets into the arena, relaying what the sockets' rules allow, then hands the
 * batch to JavaScript in one call; a read that only relayed leaves its records to wait.
 */
void on_readable(uv_poll_t *handle, int status, int events) {
  (void)events;
  media_io *io = (media_io *)handle->data;
  if (status < 0) return;
  int ready = epoll_wait(io->epfd, io->events, MAX_EVENTS, 0);
  int count = 0;
  int for_js = 0;
  uint64_t relayed_at = 0;
  for (int e = 0; e < ready && count < MAX_BATCH; e++) {
    int fd = (int)(io->events[e].data.u64 & 0xffffffffu);
    uint32_t token = (uint32_t)(io->events[e].data.u64 >> 32);
    int room = MAX_BATCH - count;
    if (room > PER_SOCKET) room = PER_SOCKET;
    /* The kernel rewrites only the lengths (and msg_len, msg_flags) of a slot's header. */
    for (int i = 0; i < room; i++) {
      io->msgs[count + i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
      io->msgs[count + i].msg_hdr.msg_controllen = io->timestamps ? CONTROL_BYTES : 0;
    }
    int got = recvmmsg(fd, &io->msgs[count], (unsigned)room, MSG_DONTWAIT, NULL);
    if (got <= 0) continue; /* EAGAIN, or an error queued by ICMP: media is best effort. */
    const relay_rule *rule = relay_rule_of(io, fd);
    for (int i = 0; i < got; i++) {
      int slot = count + i;
      uint32_t *m = io->meta + (size_t)slot * META_STRIDE;
      /* Cannot happen for UDP over IPv4 (65,507 bytes at most); should it, JavaScript drops the datagram. */
      m[0] = token;
      m[1] = (io->msgs[slot].msg_hdr.msg_flags & MSG_TRUNC) ? SLOT_BYTES + 1 : io->msgs[slot].msg_len;
      m[2] = ntohl(io->from[slot].sin_addr.s_addr);
      m[3] = ntohs(io->from[slot].sin_port);
      if (rule != NULL && m[1] <= SLOT_BYTES && relay_datagram(io, rule, slot)) {
        m[1] |= RELAYED;
        if (relayed_at == 0) relayed_at = monotonic_ns();
        record_relayed(io, token, slot, relayed_at);
      } else {
        rule = NULL;
        for_js++;
      }
    }
    count += got;
  }
  if (count == 0) return;
  if (for_js == 0 && io->record_count < RECORD_BATCH) {
    if (!io->flush_armed) {
      uv_timer_start(&io->flush_timer, on_records_due, RECORD_FLUSH_MS, 0);
      io->flush_armed = 1;
    }
    return;
  }
  hand_over(io, count);
}
