/* wasi_poll.c: poll_oneoff (clocks and descriptor readiness) and the
 * socket calls on descriptors the host handed over. */
#include <errno.h>
#include <endian.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wasi_internal.h"

#define SUB_SIZE 48u
#define EVENT_SIZE 32u
enum { EV_CLOCK = 0, EV_FD_READ = 1, EV_FD_WRITE = 2 };
enum { SUB_CLOCK_ABSTIME = 1, EV_FD_HANGUP = 1 };
enum { RI_RECV_PEEK = 1, RI_RECV_WAITALL = 2, RO_RECV_DATA_TRUNCATED = 1 };

typedef struct poll_sub {
  uint64_t userdata;
  uint8_t type;
  uint16_t error;     /* set: the event is ready at once with this error */
  int64_t wait_ns;    /* clock: time left until it fires */
  int pfd;            /* fd: index in the pollfd array, or -1 */
} poll_sub;

static int64_t now_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void parse_clock(const uint8_t *s, poll_sub *p) {
  static const clockid_t ids[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID,
                                  CLOCK_THREAD_CPUTIME_ID};
  uint32_t id, flags_lo;
  uint64_t timeout;
  memcpy(&id, s + 16, 4);
  memcpy(&timeout, s + 24, 8);
  flags_lo = s[40];
  id = le32toh(id);
  timeout = le64toh(timeout);
  if (id >= 4) {
    p->error = WASI_EINVAL;
    return;
  }
  int64_t t = timeout > INT64_MAX ? INT64_MAX : (int64_t)timeout;
  p->wait_ns = flags_lo & SUB_CLOCK_ABSTIME ? t - now_ns(ids[id]) : t;
  if (p->wait_ns < 0) p->wait_ns = 0;
}

/* Reads the subscriptions; fills pfds for descriptor ones.  Returns the
 * shortest clock wait, or -1 when there is none. */
static int64_t parse_subs(wasi_call *c, const uint8_t *in, uint32_t n, poll_sub *subs,
                          struct pollfd *pfds, nfds_t *npfds) {
  int64_t wait = -1;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *s = in + (size_t)i * SUB_SIZE;
    poll_sub *p = &subs[i];
    memcpy(&p->userdata, s, 8);
    p->userdata = le64toh(p->userdata);
    p->type = s[8];
    p->pfd = -1;
    if (p->type == EV_CLOCK) {
      parse_clock(s, p);
      if (!p->error && (wait < 0 || p->wait_ns < wait)) wait = p->wait_ns;
    } else if (p->type == EV_FD_READ || p->type == EV_FD_WRITE) {
      uint32_t fd;
      memcpy(&fd, s + 16, 4);
      wasi_fd *e = wasi_fd_get(c->w, le32toh(fd));
      if (!e) p->error = WASI_EBADF;
      else {
        p->pfd = (int)*npfds;
        pfds[(*npfds)++] = (struct pollfd){.fd = e->host_fd,
                                           .events = p->type == EV_FD_READ ? POLLIN : POLLOUT};
      }
    } else {
      p->error = WASI_EINVAL;
    }
  }
  return wait;
}

static void put_event(uint8_t *ev, const poll_sub *p, uint16_t error, uint64_t nbytes, uint16_t flags) {
  memset(ev, 0, EVENT_SIZE);
  wasi_put_u64(ev, p->userdata);
  wasi_put_u16(ev + 8, error);
  ev[10] = p->type;
  wasi_put_u64(ev + 16, nbytes);
  wasi_put_u16(ev + 24, flags);
}

/* One event per subscription that is ready: errors, ready descriptors,
 * and the clocks whose time has come. */
static uint32_t collect(const poll_sub *subs, uint32_t n, const struct pollfd *pfds,
                        int64_t elapsed, uint8_t *out) {
  uint32_t count = 0;
  for (uint32_t i = 0; i < n; i++) {
    const poll_sub *p = &subs[i];
    uint8_t *ev = out + (size_t)count * EVENT_SIZE;
    if (p->error) {
      put_event(ev, p, p->error, 0, 0);
    } else if (p->type == EV_CLOCK) {
      if (p->wait_ns > elapsed) continue;
      put_event(ev, p, 0, 0, 0);
    } else {
      const struct pollfd *f = &pfds[p->pfd];
      if (!f->revents) continue;
      int avail = 0;
      if (p->type == EV_FD_READ && ioctl(f->fd, FIONREAD, &avail) != 0) avail = 0;
      uint16_t err = f->revents & POLLNVAL ? WASI_EBADF : 0;
      put_event(ev, p, err, (uint64_t)(avail > 0 ? avail : 0), f->revents & POLLHUP ? EV_FD_HANGUP : 0);
    }
    count++;
  }
  return count;
}

uint32_t wasi_poll_oneoff(wasi_call *c, const twasm_val *a) {
  uint32_t n = A_I32(2);
  uint8_t *in, *out;
  if (n == 0) return WASI_EINVAL;
  if (!wasi_mem_range(c, A_I32(0), (uint64_t)n * SUB_SIZE, &in) ||
      !wasi_mem_range(c, A_I32(1), (uint64_t)n * EVENT_SIZE, &out))
    return WASI_EFAULT;
  poll_sub *subs = calloc(n, sizeof *subs);
  struct pollfd *pfds = calloc(n, sizeof *pfds);
  if (!subs || !pfds) {
    free(subs);
    free(pfds);
    return WASI_ENOMEM;
  }
  nfds_t npfds = 0;
  int64_t wait = parse_subs(c, in, n, subs, pfds, &npfds);
  for (uint32_t i = 0; i < n; i++)
    if (subs[i].error) wait = 0;
  struct timespec ts = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
  int64_t start = now_ns(CLOCK_MONOTONIC);
  int ready = ppoll(pfds, npfds, wait < 0 ? NULL : &ts, NULL);
  uint32_t err = ready < 0 ? wasi_errno_from_host(errno) : WASI_ESUCCESS;
  if (!err) {
    uint32_t count = collect(subs, n, pfds, now_ns(CLOCK_MONOTONIC) - start, out);
    if (!wasi_store_u32(c, A_I32(3), count)) err = WASI_EFAULT;
  }
  free(subs);
  free(pfds);
  return err;
}

/* The socket fd for a call needing the rights `needed`. */
static wasi_fd *socket_fd(wasi_call *c, uint32_t fd, uint64_t needed, uint32_t *err) {
  wasi_fd *e = wasi_fd_get(c->w, fd);
  *err = !e ? WASI_EBADF
         : e->filetype != WASI_FILETYPE_SOCKET_STREAM && e->filetype != WASI_FILETYPE_SOCKET_DGRAM
             ? WASI_ENOTSOCK
         : (e->rights_base & needed) != needed ? WASI_ENOTCAPABLE
                                               : WASI_ESUCCESS;
  return e;
}

uint32_t wasi_sock_accept(wasi_call *c, const twasm_val *a) {
  uint32_t err, flags = A_I32(1), n;
  uint8_t *out;
  wasi_fd *e = socket_fd(c, A_I32(0), WASI_RIGHT(WASI_R_SOCK_ACCEPT), &err);
  if (err) return err;
  if (flags & ~(uint32_t)WASI_FDFLAG_NONBLOCK) return WASI_EINVAL;
  if (!wasi_mem_range(c, A_I32(2), 4, &out)) return WASI_EFAULT;
  int fd = accept4(e->host_fd, NULL, NULL, SOCK_CLOEXEC | (flags ? SOCK_NONBLOCK : 0));
  if (fd < 0) return wasi_errno_from_host(errno);
  uint64_t rights = e->rights_inheriting & wasi_rights_of_type(WASI_FILETYPE_SOCKET_STREAM);
  if (!wasi_fd_add(c->w, fd, WASI_FILETYPE_SOCKET_STREAM, rights, rights, &n))
    return WASI_ENOMEM;
  wasi_put_u32(out, n);
  return WASI_ESUCCESS;
}

/* sock_recv and sock_send: one message through guest iovecs. */
static uint32_t sock_io(wasi_call *c, const twasm_val *a, bool recv, ssize_t *done, int *msg_flags) {
  uint32_t err;
  wasi_fd *e = socket_fd(c, A_I32(0), recv ? WASI_RIGHT_FD_READ : WASI_RIGHT_FD_WRITE, &err);
  if (err) return err;
  struct msghdr msg = {0};
  struct iovec *v;
  err = wasi_mem_iovecs(c, A_I32(1), A_I32(2), &v);
  if (err) return err;
  msg.msg_iov = v;
  msg.msg_iovlen = A_I32(2);
  uint32_t wflags = A_I32(3);
  int flags = recv ? ((wflags & RI_RECV_PEEK ? MSG_PEEK : 0) | (wflags & RI_RECV_WAITALL ? MSG_WAITALL : 0))
                   : MSG_NOSIGNAL;
  *done = recv ? recvmsg(e->host_fd, &msg, flags) : sendmsg(e->host_fd, &msg, flags);
  err = *done < 0 ? wasi_errno_from_host(errno) : WASI_ESUCCESS;
  *msg_flags = msg.msg_flags;
  free(v);
  return err;
}

uint32_t wasi_sock_recv(wasi_call *c, const twasm_val *a) {
  ssize_t got;
  int msg_flags;
  uint32_t err = sock_io(c, a, true, &got, &msg_flags);
  if (err) return err;
  if (!wasi_store_u32(c, A_I32(4), (uint32_t)got) ||
      !wasi_store_u16(c, A_I32(5), msg_flags & MSG_TRUNC ? RO_RECV_DATA_TRUNCATED : 0))
    return WASI_EFAULT;
  return WASI_ESUCCESS;
}

uint32_t wasi_sock_send(wasi_call *c, const twasm_val *a) {
  ssize_t sent;
  int msg_flags;
  uint32_t err = sock_io(c, a, false, &sent, &msg_flags);
  if (err) return err;
  return wasi_store_u32(c, A_I32(4), (uint32_t)sent) ? WASI_ESUCCESS : WASI_EFAULT;
}

uint32_t wasi_sock_shutdown(wasi_call *c, const twasm_val *a) {
  static const int how[] = {-1, SHUT_RD, SHUT_WR, SHUT_RDWR};
  uint32_t err, flags = A_I32(1);
  wasi_fd *e = socket_fd(c, A_I32(0), WASI_RIGHT(WASI_R_SOCK_SHUTDOWN), &err);
  if (err) return err;
  if (flags == 0 || flags > 3) return WASI_EINVAL;
  return wasi_host_result(shutdown(e->host_fd, how[flags]));
}
