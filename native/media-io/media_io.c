/*
 * Batched UDP datagram I/O for RTP media, as a Node-API addon (Linux).
 *
 * Node's dgram layer costs, per datagram received: a libuv recvmsg plus one that returns
 * EAGAIN, a fresh ArrayBuffer, an rinfo object, and a call into JavaScript with its microtask
 * checkpoint; per datagram sent: a SendWrap object, an array and an address parse. A media
 * relay moves tens of thousands of small datagrams a second, so that overhead is most of what
 * it does. Here every media socket sits in one private epoll set, which libuv polls as a single
 * descriptor: when it turns readable, ready sockets are drained with recvmmsg(2) into one
 * arena shared with JavaScript, and JavaScript is called once for the whole batch (batch.c).
 * Sockets with relay rules move to a relay thread of their own (relay_thread.c, relay.c).
 * Sends are a plain sendto(2) on the caller's thread. IPv4 only, as the media path is. This file
 * is the addon's surface: set-up, sockets, sends.
 *
 * Batch layout (shared with JavaScript, see src/engine/media/rtp/native-udp.ts):
 *   arena: MAX_BATCH slots of SLOT_BYTES, datagram i at i * SLOT_BYTES;
 *   meta:  META_STRIDE x uint32 per datagram: socket token, length, source IPv4 (host order),
 *          source port, and with receive timestamps on, nanoseconds from the kernel's receipt of
 *          the datagram (SO_TIMESTAMPNS) to the batch's hand-over (else NO_AGE).
 *          The length's top bit (RELAYED) marks a datagram already relayed by a rule (relay.c),
 *          which JavaScript skips: it learns of those from the records (media_io.h).
 */
#include "media_io.h"

napi_value int_value(napi_env env, int64_t v) {
  napi_value out;
  napi_create_int64(env, v, &out);
  return out;
}

uint64_t monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

media_io *state_of(napi_env env) {
  void *data = NULL;
  napi_get_instance_data(env, &data);
  return (media_io *)data;
}

/* The poll handle keeps the event loop alive only while a socket is open, as a dgram socket does. */
static void track_open(media_io *io, int delta) {
  io->open_sockets += delta;
  if (io->open_sockets == 1 && delta > 0) uv_ref((uv_handle_t *)&io->poll);
  if (io->open_sockets == 0) uv_unref((uv_handle_t *)&io->poll);
}

static void free_after_close(uv_handle_t *handle) {
  media_io *io = handle->data;
  if (--io->handles_open > 0) return;
  relay_thread_free(io);
  for (int fd = 0; fd < io->table_len; fd++) free(io->rules[fd]);
  free(io->rules);
  free(io->tokens);
  free(io->reader_of);
  pthread_cond_destroy(&io->room);
  pthread_mutex_destroy(&io->lock);
  free(io);
}

/* Makes the by-descriptor tables cover `fd`; false when out of memory. */
static bool cover(media_io *io, int fd) {
  if (fd < io->table_len) return true;
  int len = fd + 1 > 2 * io->table_len ? fd + 1 : 2 * io->table_len;
  uint32_t *tokens = realloc(io->tokens, (size_t)len * sizeof *tokens);
  if (tokens != NULL) io->tokens = tokens;
  relay_rule **rules = realloc(io->rules, (size_t)len * sizeof *rules);
  if (rules != NULL) io->rules = rules;
  uint8_t *reader_of = realloc(io->reader_of, (size_t)len * sizeof *reader_of);
  if (reader_of != NULL) io->reader_of = reader_of;
  if (tokens == NULL || rules == NULL || reader_of == NULL) return false;
  memset(io->tokens + io->table_len, 0, (size_t)(len - io->table_len) * sizeof *tokens);
  memset(io->rules + io->table_len, 0, (size_t)(len - io->table_len) * sizeof *rules);
  memset(io->reader_of + io->table_len, ON_LOOP, (size_t)(len - io->table_len) * sizeof *reader_of);
  io->table_len = len;
  return true;
}

static void cleanup(void *arg) {
  media_io *io = (media_io *)arg;
  relay_thread_stop(io);
  if (io->polling) uv_poll_stop(&io->poll);
  uv_timer_stop(&io->flush_timer);
  close(io->epfd);
  napi_delete_reference(io->env, io->on_batch);
  napi_delete_reference(io->env, io->arena_ref);
  napi_delete_reference(io->env, io->meta_ref);
  napi_delete_reference(io->env, io->records_ref);
  napi_async_destroy(io->env, io->async_context);
  uv_close((uv_handle_t *)&io->poll, free_after_close);
  uv_close((uv_handle_t *)&io->flush_timer, free_after_close);
  uv_close((uv_handle_t *)&io->wake, free_after_close);
}

/*
 * init(onBatch(count, relayed), arena: Buffer, meta: Uint32Array, timestamps: boolean, records:
 * Uint32Array, relayThread = true, relayPriority = 0): once per Node environment. Without the
 * relay thread, the loop relays every socket itself. relayPriority 1 to 99 runs the relay thread
 * in SCHED_RR at that priority (relay_thread.c); 0 leaves it in the ordinary time-sharing class.
 */
static napi_value Init(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  bool timestamps = false;
  bool relay_thread = true;
  int32_t relay_priority = 0;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (state_of(env) != NULL) {
    napi_throw_error(env, NULL, "media_io: already initialised");
    return NULL;
  }
  void *arena;
  size_t arena_len;
  CHECK(env, napi_get_buffer_info(env, argv[1], &arena, &arena_len));
  napi_typedarray_type type;
  size_t meta_len;
  void *meta;
  CHECK(env, napi_get_typedarray_info(env, argv[2], &type, &meta_len, &meta, NULL, NULL));
  CHECK(env, napi_get_value_bool(env, argv[3], &timestamps));
  napi_typedarray_type records_type;
  size_t records_len;
  void *records;
  CHECK(env, napi_get_typedarray_info(env, argv[4], &records_type, &records_len, &records, NULL, NULL));
  napi_valuetype kind = napi_undefined;
  if (argc >= 6) CHECK(env, napi_typeof(env, argv[5], &kind));
  if (kind == napi_boolean) CHECK(env, napi_get_value_bool(env, argv[5], &relay_thread));
  kind = napi_undefined;
  if (argc >= 7) CHECK(env, napi_typeof(env, argv[6], &kind));
  if (kind == napi_number) CHECK(env, napi_get_value_int32(env, argv[6], &relay_priority));
  if (relay_priority < 0 || relay_priority > RELAY_PRIORITY_MAX) {
    napi_throw_range_error(env, NULL, "media_io: relayPriority is 0 to 99");
    return NULL;
  }
  if (arena_len < (size_t)MAX_BATCH * SLOT_BYTES || type != napi_uint32_array || meta_len < (size_t)MAX_BATCH * META_STRIDE ||
      records_type != napi_uint32_array || records_len < 1 + (size_t)MAX_RECORDS * RECORD_STRIDE) {
    napi_throw_range_error(env, NULL, "media_io: arena, meta or records too small");
    return NULL;
  }
  media_io *io = calloc(1, sizeof(media_io));
  if (io == NULL) {
    napi_throw_error(env, NULL, "media_io: out of memory");
    return NULL;
  }
  io->env = env;
  io->thread_epfd = io->thread_wake_fd = -1;
  io->arena = arena;
  io->meta = meta;
  io->records = records;
  io->records[0] = 0;
  io->timestamps = timestamps;
  io->relay_thread = relay_thread;
  io->relay_priority = relay_priority;
  /* Each slot's header points at its own part of the arena and its own source address, for good. */
  io->loop_reader = (reader){.msgs = io->msgs, .iov = io->iov, .from = io->from, .control = io->control};
  reader_init(&io->loop_reader, MAX_BATCH, io->arena, timestamps);
  io->epfd = epoll_create1(EPOLL_CLOEXEC);
  uv_loop_t *loop;
  napi_value name;
  if (io->epfd < 0 || !relay_thread_init(io) || napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &io->poll, io->epfd) != 0) {
    if (io->epfd >= 0) close(io->epfd);
    relay_thread_free(io);
    free(io);
    napi_throw_error(env, NULL, "media_io: cannot create the epoll sets");
    return NULL;
  }
  pthread_mutex_init(&io->lock, NULL);
  pthread_cond_init(&io->room, NULL);
  io->poll.data = io;
  uv_timer_init(loop, &io->flush_timer);
  io->flush_timer.data = io;
  uv_unref((uv_handle_t *)&io->flush_timer);
  uv_async_init(loop, &io->wake, on_wake);
  io->wake.data = io;
  uv_unref((uv_handle_t *)&io->wake);
  io->handles_open = 3;
  CHECK(env, napi_create_reference(env, argv[0], 1, &io->on_batch));
  CHECK(env, napi_create_reference(env, argv[1], 1, &io->arena_ref));
  CHECK(env, napi_create_reference(env, argv[2], 1, &io->meta_ref));
  CHECK(env, napi_create_reference(env, argv[4], 1, &io->records_ref));
  CHECK(env, napi_create_string_utf8(env, "MEDIA_IO", NAPI_AUTO_LENGTH, &name));
  CHECK(env, napi_async_init(env, NULL, name, &io->async_context));
  uv_poll_start(&io->poll, UV_READABLE, on_readable);
  io->polling = 1;
  uv_unref((uv_handle_t *)&io->poll);
  CHECK(env, napi_set_instance_data(env, io, NULL, NULL));
  CHECK(env, napi_add_env_cleanup_hook(env, cleanup, io));
  return NULL;
}

/* open(ipv4, port, token) -> fd, or -errno (EADDRINUSE when the port is taken). */
static napi_value Open(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  uint32_t ip, port, token;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  CHECK(env, napi_get_value_uint32(env, argv[0], &ip));
  CHECK(env, napi_get_value_uint32(env, argv[1], &port));
  CHECK(env, napi_get_value_uint32(env, argv[2], &token));
  media_io *io = state_of(env);
  if (io == NULL) return int_value(env, -EBADF);
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return int_value(env, -errno);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = {htonl(ip)}};
  struct epoll_event ev = {.events = EPOLLIN, .data = {.u64 = ((uint64_t)token << 32) | (uint32_t)fd}};
  int on = 1;
  if ((io->timestamps && setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) < 0) || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
      epoll_ctl(io->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
    int err = errno;
    close(fd);
    return int_value(env, -err);
  }
  pthread_mutex_lock(&io->lock);
  bool covered = cover(io, fd);
  if (covered) {
    io->tokens[fd] = token;
    io->reader_of[fd] = ON_LOOP;
  }
  pthread_mutex_unlock(&io->lock);
  if (!covered) {
    close(fd);
    return int_value(env, -ENOMEM);
  }
  track_open(io, 1);
  return int_value(env, fd);
}

/* The descriptor argument of localPort and close; false with a JavaScript error thrown. */
static bool fd_argument(napi_env env, napi_callback_info info, int32_t *fd) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && napi_get_value_int32(env, argv[0], fd) == napi_ok) return true;
  napi_throw_type_error(env, NULL, "media_io: expected a socket descriptor");
  return false;
}

/* localPort(fd) -> the bound port (for a socket opened on port 0), or -errno. */
static napi_value LocalPort(napi_env env, napi_callback_info info) {
  int32_t fd;
  if (!fd_argument(env, info, &fd)) return NULL;
  struct sockaddr_in sa;
  socklen_t len = sizeof sa;
  if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0) return int_value(env, -errno);
  return int_value(env, ntohs(sa.sin_port));
}

/* send(fd, buffer, ipv4, port) -> bytes sent, or -errno (EAGAIN when the send buffer is full). */
static napi_value Send(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  int32_t fd;
  uint32_t ip, port;
  void *data;
  size_t len;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  CHECK(env, napi_get_value_int32(env, argv[0], &fd));
  CHECK(env, napi_get_buffer_info(env, argv[1], &data, &len));
  CHECK(env, napi_get_value_uint32(env, argv[2], &ip));
  CHECK(env, napi_get_value_uint32(env, argv[3], &port));
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = {htonl(ip)}};
  ssize_t sent = sendto(fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa, sizeof sa);
  return int_value(env, sent < 0 ? -errno : sent);
}

/* close(fd): leaves its epoll set and closes; datagrams already in a batch or handed back are dropped by JavaScript. */
static napi_value Close(napi_env env, napi_callback_info info) {
  int32_t fd;
  if (!fd_argument(env, info, &fd)) return NULL;
  media_io *io = state_of(env);
  if (io == NULL || fd < 0) return NULL;
  /* Under the lock: the relay thread may be reading this socket, or sending on it by another's rule. */
  pthread_mutex_lock(&io->lock);
  epoll_ctl(io->epfd, EPOLL_CTL_DEL, fd, NULL);
  epoll_ctl(io->thread_epfd, EPOLL_CTL_DEL, fd, NULL);
  if (fd < io->table_len) {
    io->tokens[fd] = 0;
    free(io->rules[fd]);
    io->rules[fd] = NULL;
    io->reader_of[fd] = ON_LOOP;
  }
  int closed = close(fd);
  pthread_mutex_unlock(&io->lock);
  if (closed == 0) track_open(io, -1);
  return NULL;
}

static napi_value Register(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"init", NULL, Init, NULL, NULL, NULL, napi_default, NULL},
      {"open", NULL, Open, NULL, NULL, NULL, napi_default, NULL},
      {"localPort", NULL, LocalPort, NULL, NULL, NULL, napi_default, NULL},
      {"send", NULL, Send, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, Close, NULL, NULL, NULL, napi_default, NULL},
      {"relay", NULL, Relay, NULL, NULL, NULL, napi_default, NULL},
      {"takeRelayed", NULL, TakeRelayed, NULL, NULL, NULL, napi_default, NULL},
      {"probeRelayPriority", NULL, ProbeRelayPriority, NULL, NULL, NULL, napi_default, NULL},
  };
  const char *names[] = {"MAX_BATCH", "SLOT_BYTES", "META_STRIDE", "MAX_RECORDS", "RECORD_STRIDE"};
  const uint32_t values[] = {MAX_BATCH, SLOT_BYTES, META_STRIDE, MAX_RECORDS, RECORD_STRIDE};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    napi_value constant;
    napi_create_uint32(env, values[i], &constant);
    napi_set_named_property(env, exports, names[i], constant);
  }
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE_INIT() { return Register(env, exports); }
