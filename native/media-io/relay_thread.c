/*
 * The relay thread of the media I/O addon.
 *
 * On the event loop a relayed datagram waits for whatever JavaScript is running, and the loop's
 * own work around each wake-up (timers, a second epoll_wait, the records' bookkeeping) adds to
 * every packet's delay. So a socket whose reads the loop relayed whole (batch.c) moves to this
 * thread's epoll set, and the thread relays it with no JavaScript and no loop in the way:
 *
 *   loop's epoll set  --(a read relayed whole)-->  thread's epoll set
 *   loop's epoll set  <--(rule removed, or a datagram that fails it)--  thread's epoll set
 *
 * The thread never calls JavaScript. It leaves a record of each relayed datagram in the pending
 * list and wakes the loop (uv_async_send) when THREAD_RECORD_BATCH are waiting or the oldest is
 * RECORD_FLUSH_MS old. A datagram that fails the socket's rule, and the rest of that read, it
 * hands back to the loop with the socket, so that JavaScript still sees each socket's datagrams
 * in the order they arrived, after the records of those before them. When the pending list or
 * the hand-back queue is full, the thread waits for the loop and the kernel's socket buffers hold
 * what arrives. Everything it shares with the loop is under the lock, taken per socket read, so
 * that the loop waits at most one socket's read (a recvmmsg and the sends) for a rule change.
 */
#include <sched.h>
#include <sys/eventfd.h>

#include "media_io.h"

/* Points `slots` headers at their slots of `arena` (SLOT_BYTES each) and their own address and control buffers. */
bool reader_init(reader *r, int slots, uint8_t *arena, bool timestamps) {
  if (r->msgs == NULL) {
    r->msgs = calloc((size_t)slots, sizeof *r->msgs);
    r->iov = calloc((size_t)slots, sizeof *r->iov);
    r->from = calloc((size_t)slots, sizeof *r->from);
    r->control = calloc((size_t)slots, sizeof *r->control);
    if (r->msgs == NULL || r->iov == NULL || r->from == NULL || r->control == NULL) return false;
  }
  for (int slot = 0; slot < slots; slot++) {
    r->iov[slot].iov_base = arena + (size_t)slot * SLOT_BYTES;
    r->iov[slot].iov_len = SLOT_BYTES;
    r->msgs[slot].msg_hdr.msg_iov = &r->iov[slot];
    r->msgs[slot].msg_hdr.msg_iovlen = 1;
    r->msgs[slot].msg_hdr.msg_name = &r->from[slot];
    if (timestamps) r->msgs[slot].msg_hdr.msg_control = r->control[slot];
  }
  return true;
}

/* The kernel rewrites only the lengths (and msg_len, msg_flags) of a slot's header. */
void reader_reset(reader *r, int first, int count, bool timestamps) {
  for (int i = first; i < first + count; i++) {
    r->msgs[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
    r->msgs[i].msg_hdr.msg_controllen = timestamps ? CONTROL_BYTES : 0;
  }
}

/* Queues datagram `slot` of the thread's read of `fd` for the loop, as it arrived. */
static void hand_back(media_io *io, int fd, uint32_t token, int slot) {
  reader *r = &io->thread_reader;
  struct msghdr *hdr = &r->msgs[slot].msg_hdr;
  uint32_t length = (hdr->msg_flags & MSG_TRUNC) ? SLOT_BYTES + 1 : r->msgs[slot].msg_len;
  uint8_t *copy = length <= SLOT_BYTES ? malloc(length > 0 ? length : 1) : NULL;
  /* Out of memory loses this datagram only, as a full socket buffer would. */
  if (copy == NULL && length <= SLOT_BYTES) return;
  if (copy != NULL) memcpy(copy, r->iov[slot].iov_base, length);
  io->handed_back[io->handed_back_count++] = (deferred){
      .fd = fd, .token = token, .length = length, .ip = ntohl(r->from[slot].sin_addr.s_addr), .port = ntohs(r->from[slot].sin_port),
      .received_ns = io->timestamps ? received_ns(hdr) : 0, .data = copy,
  };
}

/* Reads `fd` once and relays by its rule; true when it handed datagrams (and the socket) back to the loop. */
static bool relay_socket(media_io *io, int fd, uint32_t token) {
  const relay_rule *rule = relay_rule_of(io, fd);
  if (rule == NULL) {
    /* The socket it relays to has closed: the loop reads this one again, for JavaScript. */
    set_reader(io, fd, token, ON_LOOP);
    return true;
  }
  reader *r = &io->thread_reader;
  reader_reset(r, 0, PER_SOCKET, io->timestamps);
  int got = recvmmsg(fd, r->msgs, PER_SOCKET, MSG_DONTWAIT, NULL);
  if (got <= 0) return false;
  uint64_t at = monotonic_ns();
  bool back = false;
  for (int i = 0; i < got; i++) {
    uint8_t *p = r->iov[i].iov_base;
    uint32_t len = r->msgs[i].msg_len;
    if (!back && !(r->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) && relay_datagram(rule, p, len, &r->from[i])) {
      record_relayed(io, token, p, len, at);
    } else {
      back = true;
      hand_back(io, fd, token, i);
    }
  }
  if (back) set_reader(io, fd, token, ON_LOOP);
  return back;
}

/* Milliseconds until the oldest pending record is due, or -1 when none waits unannounced. */
static int records_timeout(media_io *io) {
  if (io->pending_count == 0 || io->records_signalled) return -1;
  uint64_t age = monotonic_ns() - io->pending[0].at_ns;
  uint64_t due = (uint64_t)RECORD_FLUSH_MS * 1000000u;
  return age >= due ? 0 : (int)((due - age + 999999u) / 1000000u);
}

/* Whether the loop must be woken for the records: enough of them, or the oldest due. */
static bool records_due(media_io *io) {
  if (io->pending_count == 0 || io->records_signalled) return false;
  return io->pending_count >= THREAD_RECORD_BATCH || records_timeout(io) == 0;
}

static void *relay_main(void *arg) {
  media_io *io = arg;
  struct epoll_event events[MAX_EVENTS];
  int timeout = -1;
  for (;;) {
    int ready = epoll_wait(io->thread_epfd, events, MAX_EVENTS, timeout);
    pthread_mutex_lock(&io->lock);
    bool wake = false;
    for (int e = 0; e < ready && !io->thread_stop; e++) {
      int fd = (int)(events[e].data.u64 & 0xffffffffu);
      uint32_t token = (uint32_t)(events[e].data.u64 >> 32);
      if (token == 0) {
        uint64_t ignored;
        if (read(io->thread_wake_fd, &ignored, sizeof ignored) < 0) ignored = 0;
        continue;
      }
      /* Room for a whole read's records and hand-backs, or wait for the loop to take them. */
      while (!io->thread_stop && (io->pending_count > MAX_RECORDS - PER_SOCKET || io->handed_back_count > MAX_DEFERRED - PER_SOCKET)) {
        io->records_signalled = 1;
        uv_async_send(&io->wake);
        pthread_cond_wait(&io->room, &io->lock);
      }
      /* Moved to the loop, or closed (and maybe its descriptor reused), since epoll_wait. */
      if (io->thread_stop || fd >= io->table_len || io->tokens[fd] != token || io->reader_of[fd] != ON_THREAD) continue;
      wake |= relay_socket(io, fd, token);
      /* Let a waiting rule change or hand-over in between sockets. */
      pthread_mutex_unlock(&io->lock);
      pthread_mutex_lock(&io->lock);
    }
    if (records_due(io)) {
      io->records_signalled = 1;
      wake = true;
    }
    timeout = records_timeout(io);
    bool stop = io->thread_stop;
    pthread_mutex_unlock(&io->lock);
    if (stop) return NULL;
    if (wake) uv_async_send(&io->wake);
  }
}

/*
 * Real-time priority for the relay thread (rtp.relay_thread_priority). In the time-sharing class a
 * woken relay thread often waits behind whatever runs on its core (the loop's JavaScript, another
 * process) for a millisecond or more, and the packets that arrived meanwhile wait with it: that
 * wait is most of the relay's p99 latency on a busy host (PERFORMANCE.md). In SCHED_RR it runs as
 * soon as a datagram wakes it. It needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least the priority
 * (systemd: LimitRTPRIO=); the kernel's real-time throttling (sched_rt_runtime_us) still leaves
 * the other threads their share if a flood keeps it busy. The event loop is never real-time.
 * Starts `start` in SCHED_RR at `priority`; pthread_create's result.
 */
static int create_realtime(pthread_t *thread, void *(*start)(void *), void *arg, int priority) {
  pthread_attr_t attr;
  struct sched_param param = {.sched_priority = priority};
  int error = pthread_attr_init(&attr);
  if (error != 0) return error;
  if ((error = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED)) == 0 && (error = pthread_attr_setschedpolicy(&attr, SCHED_RR)) == 0 &&
      (error = pthread_attr_setschedparam(&attr, &param)) == 0)
    error = pthread_create(thread, &attr, start, arg);
  pthread_attr_destroy(&attr);
  return error;
}

static void *probe_main(void *arg) { return arg; }

/*
 * probeRelayPriority(priority) -> 0 if a thread may run in SCHED_RR at `priority` here, else the
 * errno that refuses it (EPERM without CAP_SYS_NICE or RLIMIT_RTPRIO, or in a cgroup without a
 * real-time budget). It starts and joins a thread with those attributes, as relay_thread_start would.
 */
napi_value ProbeRelayPriority(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t priority;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  CHECK(env, napi_get_value_int32(env, argv[0], &priority));
  if (priority < 1 || priority > RELAY_PRIORITY_MAX) return int_value(env, EINVAL);
  pthread_t probe;
  int error = create_realtime(&probe, probe_main, NULL, priority);
  if (error == 0) pthread_join(probe, NULL);
  return int_value(env, error);
}

/* Starts the relay thread if it is not running; false if it cannot be started. Called with the lock held. */
bool relay_thread_start(media_io *io) {
  if (io->thread_started) return true;
  if (io->thread_stop) return false;
  if (io->thread_arena == NULL) {
    /* Address space, not memory: a page is backed once a datagram lands in it. */
    io->thread_arena = malloc((size_t)PER_SOCKET * SLOT_BYTES);
    if (io->thread_arena == NULL || !reader_init(&io->thread_reader, PER_SOCKET, io->thread_arena, io->timestamps)) return false;
  }
  bool started = io->relay_priority > 0 && create_realtime(&io->thread, relay_main, io, io->relay_priority) == 0;
  /* Refused (probeRelayPriority said so at start-up, or the limits changed since): time-sharing, as without. */
  if (!started && pthread_create(&io->thread, NULL, relay_main, io) != 0) return false;
  /* Named for top -H, ps -L and perf: an operator can see (and prioritise) the relay apart from the loop. */
  pthread_setname_np(io->thread, "media-relay");
  io->thread_started = 1;
  return true;
}

/* Stops the relay thread and waits for it. Called with the lock free. */
void relay_thread_stop(media_io *io) {
  pthread_mutex_lock(&io->lock);
  int started = io->thread_started;
  io->thread_stop = 1;
  pthread_cond_broadcast(&io->room);
  pthread_mutex_unlock(&io->lock);
  if (!started) return;
  uint64_t one = 1;
  if (write(io->thread_wake_fd, &one, sizeof one) < 0) one = 0;
  pthread_join(io->thread, NULL);
  io->thread_started = 0;
}

/* The thread's epoll set, with an eventfd (token 0) to wake it for stopping. */
bool relay_thread_init(media_io *io) {
  io->thread_epfd = epoll_create1(EPOLL_CLOEXEC);
  io->thread_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN, .data = {.u64 = (uint32_t)io->thread_wake_fd}};
  return io->thread_epfd >= 0 && io->thread_wake_fd >= 0 && epoll_ctl(io->thread_epfd, EPOLL_CTL_ADD, io->thread_wake_fd, &ev) == 0;
}

/* Frees what the thread owned, once it has stopped. */
void relay_thread_free(media_io *io) {
  for (int i = 0; i < io->handed_back_count; i++) free(io->handed_back[i].data);
  io->handed_back_count = 0;
  if (io->thread_epfd >= 0) close(io->thread_epfd);
  if (io->thread_wake_fd >= 0) close(io->thread_wake_fd);
  reader *r = &io->thread_reader;
  free(r->msgs);
  free(r->iov);
  free(r->from);
  free(r->control);
  free(io->thread_arena);
}
