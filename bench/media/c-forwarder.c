/*
 * The floor for the media benchmark: a relay in C with no RTP logic at all, one thread, the same
 * system calls as the media I/O addon (epoll, recvmmsg per ready socket, sendto per datagram).
 * What it costs is what the kernel costs; what our relay costs above it is ours.
 *
 * Usage: c-forwarder FIRST_PORT CALLER CALLEE [CALLER CALLEE ...]. For each call it binds two
 * sockets on 127.0.0.1 (from FIRST_PORT on, even ports, skipping taken ones), prints their ports
 * ("callerTarget calleeTarget") one call per line, then forwards what each receives to the other
 * endpoint until killed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define BATCH 32
#define SLOT 2048

typedef struct {
  int fd;
  int out_fd;
  struct sockaddr_in to;
} leg;

static struct sockaddr_in loopback(int port) {
  return (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = {htonl(INADDR_LOOPBACK)}};
}

static int bind_next(int *port) {
  for (; *port < 65534; *port += 2) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = loopback(*port);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
      *port += 2;
      return fd;
    }
    if (fd >= 0) close(fd);
  }
  return -1;
}

int main(int argc, char **argv) {
  if (argc < 4 || (argc - 2) % 2 != 0) {
    fprintf(stderr, "usage: c-forwarder FIRST_PORT CALLER CALLEE [CALLER CALLEE ...]\n");
    return 2;
  }
  int calls = (argc - 2) / 2, port = atoi(argv[1]);
  leg *legs = calloc((size_t)calls * 2, sizeof *legs);
  int ep = epoll_create1(0);
  for (int c = 0; c < calls; c++) {
    leg *a = &legs[2 * c], *b = &legs[2 * c + 1];
    a->fd = bind_next(&port);
    b->fd = bind_next(&port);
    if (a->fd < 0 || b->fd < 0) return 1;
    a->out_fd = b->fd;
    a->to = loopback(atoi(argv[3 + 2 * c]));
    b->out_fd = a->fd;
    b->to = loopback(atoi(argv[2 + 2 * c]));
    for (leg *l = a; l <= b; l++) {
      struct epoll_event ev = {.events = EPOLLIN, .data = {.ptr = l}};
      epoll_ctl(ep, EPOLL_CTL_ADD, l->fd, &ev);
    }
    struct sockaddr_in sa, sb;
    socklen_t la = sizeof sa, lb = sizeof sb;
    getsockname(a->fd, (struct sockaddr *)&sa, &la);
    getsockname(b->fd, (struct sockaddr *)&sb, &lb);
    printf("%d %d\n", ntohs(sa.sin_port), ntohs(sb.sin_port));
  }
  fflush(stdout);
  static char buf[BATCH][SLOT];
  struct mmsghdr msgs[BATCH];
  struct iovec iov[BATCH];
  struct epoll_event events[128];
  for (int i = 0; i < BATCH; i++) {
    iov[i] = (struct iovec){buf[i], SLOT};
    msgs[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1};
  }
  for (;;) {
    int ready = epoll_wait(ep, events, 128, -1);
    for (int e = 0; e < ready; e++) {
      leg *l = events[e].data.ptr;
      int got = recvmmsg(l->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
      for (int i = 0; i < got; i++) sendto(l->out_fd, buf[i], msgs[i].msg_len, MSG_DONTWAIT, (struct sockaddr *)&l->to, sizeof l->to);
    }
  }
}
