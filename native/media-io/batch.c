/*
 * The read path of the media I/O addon on the event loop: drains the ready sockets of the loop's
 * epoll set with recvmmsg(2), relays what the sockets' rules allow (relay.c), and hands the rest
 * to JavaScript in one call per read, after the datagrams the relay thread handed back and with
 * the records of relayed datagrams (see media_io.h) before them all.
 */
#include "media_io.h"

/* The kernel's receive time of a datagram (SO_TIMESTAMPNS, CLOCK_REALTIME) in nanoseconds, or 0. */
uint64_t received_ns(struct msghdr *hdr) {
  for (struct cmsghdr *c = CMSG_FIRSTHDR(hdr); c != NULL; c = CMSG_NXTHDR(hdr, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    struct timespec at;
    memcpy(&at, CMSG_DATA(c), sizeof at);
    return (uint64_t)at.tv_sec * 1000000000u + (uint64_t)at.tv_nsec;
  }
  return 0;
}

/*
 * Writes each datagram's age, from the kernel's receive timestamp to now, into its meta: the
 * first `handed_back` slots came from the relay thread with their receive times, the rest from
 * this read's control messages.
 */
static void stamp_ages(media_io *io, const uint64_t *handed_back_at, int handed_back, int count) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
  for (int slot = 0; slot < count; slot++) {
    uint64_t at = slot < handed_back ? handed_back_at[slot] : received_ns(&io->msgs[slot].msg_hdr);
    int64_t age = now_ns - (int64_t)at;
    io->meta[(size_t)slot * META_STRIDE + 4] = at == 0 ? NO_AGE : age < 0 ? 0 : age >= NO_AGE ? NO_AGE - 1 : (uint32_t)age;
  }
}

/* Calls JavaScript once with `relayed` records (already taken) and the first `count` slots of the arena. */
static void hand_over(media_io *io, int count, int relayed) {
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
  pthread_mutex_lock(&io->lock);
  io->flush_armed = 0;
  int relayed = take_records(io);
  pthread_mutex_unlock(&io->lock);
  if (relayed > 0) hand_over(io, 0, relayed);
}

/* Moves the datagrams the relay thread handed back into the arena's first slots; how many. */
static int take_handed_back(media_io *io, int *fds, uint64_t *received_at) {
  int count = io->handed_back_count;
  for (int slot = 0; slot < count; slot++) {
    deferred *d = &io->handed_back[slot];
    uint32_t *m = io->meta + (size_t)slot * META_STRIDE;
    m[0] = d->token;
    m[1] = d->length;
    m[2] = d->ip;
    m[3] = d->port;
    if (d->length <= SLOT_BYTES) memcpy(io->arena + (size_t)slot * SLOT_BYTES, d->data, d->length);
    fds[slot] = d->fd;
    received_at[slot] = d->received_ns;
    free(d->data);
  }
  io->handed_back_count = 0;
  if (count > 0) pthread_cond_signal(&io->room);
  return count;
}

/*
 * Hands JavaScript what the relay thread handed back, then drains the loop's ready sockets into
 * the arena, relaying what the sockets' rules allow; calls JavaScript once for it all. A read
 * that only relayed leaves its records to wait, unless `records_due`. A socket whose whole read
 * was relayed goes to the relay thread. Called with the lock free; JavaScript runs without it.
 */
static void drain(media_io *io, bool records_due) {
  int back_fds[MAX_DEFERRED];
  uint64_t back_at[MAX_DEFERRED];
  pthread_mutex_lock(&io->lock);
  if (io->pending_count > MAX_RECORDS - MAX_BATCH) {
    /* No room for this read's records: JavaScript takes the ones waiting first. */
    int relayed = take_records(io);
    pthread_mutex_unlock(&io->lock);
    hand_over(io, 0, relayed);
    pthread_mutex_lock(&io->lock);
  }
  int handed_back = take_handed_back(io, back_fds, back_at);
  int count = handed_back;
  int for_js = handed_back;
  uint64_t relayed_at = 0;
  int ready = epoll_wait(io->epfd, io->events, MAX_EVENTS, 0);
  for (int e = 0; e < ready && count < MAX_BATCH; e++) {
    int fd = (int)(io->events[e].data.u64 & 0xffffffffu);
    uint32_t token = (uint32_t)(io->events[e].data.u64 >> 32);
    int room = MAX_BATCH - count;
    if (room > PER_SOCKET) room = PER_SOCKET;
    reader_reset(&io->loop_reader, count, room, io->timestamps);
    int got = recvmmsg(fd, &io->msgs[count], (unsigned)room, MSG_DONTWAIT, NULL);
    if (got <= 0) continue; /* EAGAIN, or an error queued by ICMP: media is best effort. */
    const relay_rule *rule = relay_rule_of(io, fd);
    /* Datagrams of this socket handed back in this batch go first: nothing after them is relayed. */
    for (int i = 0; i < handed_back && rule != NULL; i++)
      if (back_fds[i] == fd) rule = NULL;
    bool whole_read_relayed = rule != NULL;
    for (int i = 0; i < got; i++) {
      int slot = count + i;
      uint32_t *m = io->meta + (size_t)slot * META_STRIDE;
      uint8_t *p = io->iov[slot].iov_base;
      /* Cannot happen for UDP over IPv4 (65,507 bytes at most); should it, JavaScript drops the datagram. */
      m[0] = token;
      m[1] = (io->msgs[slot].msg_hdr.msg_flags & MSG_TRUNC) ? SLOT_BYTES + 1 : io->msgs[slot].msg_len;
      m[2] = ntohl(io->from[slot].sin_addr.s_addr);
      m[3] = ntohs(io->from[slot].sin_port);
      if (rule != NULL && m[1] <= SLOT_BYTES && relay_datagram(rule, p, m[1], &io->from[slot])) {
        if (relayed_at == 0) relayed_at = monotonic_ns();
        record_relayed(io, token, p, m[1], relayed_at);
        m[1] |= RELAYED;
      } else {
        rule = NULL;
        whole_read_relayed = false;
        for_js++;
      }
    }
    if (whole_read_relayed && io->relay_thread && relay_thread_start(io)) set_reader(io, fd, token, ON_THREAD);
    count += got;
  }
  int relayed = 0;
  bool call = for_js > 0 || io->pending_count >= RECORD_BATCH || (records_due && io->pending_count > 0);
  if (call) {
    relayed = take_records(io);
    if (io->timestamps && count > 0) stamp_ages(io, back_at, handed_back, count);
  } else if (io->pending_count > 0 && !io->flush_armed) {
    uv_timer_start(&io->flush_timer, on_records_due, RECORD_FLUSH_MS, 0);
    io->flush_armed = 1;
  }
  pthread_mutex_unlock(&io->lock);
  if (call) hand_over(io, count, relayed);
}

void on_readable(uv_poll_t *handle, int status, int events) {
  (void)events;
  if (status < 0) return;
  drain((media_io *)handle->data, false);
}

/* The relay thread's call: records are due, or it handed datagrams back. */
void on_wake(uv_async_t *handle) {
  drain((media_io *)handle->data, true);
}
