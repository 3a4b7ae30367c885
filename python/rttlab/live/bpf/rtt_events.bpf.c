// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/* rttlab live: the kernel's RTT events, per TCP connection, through a BPF ring buffer.
 *
 * A sock_ops program (attached to a cgroup v2 by rttlab/live/loader.py through a bpf_link).
 * On connection establishment it switches on the RTT, RTO, retransmission and state-change
 * callbacks (bpf_sock_ops_cb_flags_set, include/uapi/linux/bpf.h); each callback then writes
 * one `struct rttlab_event` to the ring buffer. Nothing in the kernel's behaviour changes: the
 * program returns 1 and sets no reply. Field meanings: docs/live.md.
 *
 * Kernel sources of each callback (Linux 6.18):
 * - RTT_CB: tcp_rtt_estimator() -> tcp_bpf_rtt(sk, mrtt_us, srtt), net/ipv4/tcp_input.c,
 *   after SRTT/MDEV/RTTVAR were updated with the sample; args[0] = mrtt_us (the sample),
 *   args[1] = srtt (<< 3) on kernels that pass them (6.18 does), 0 on older ones.
 * - RTO_CB: tcp_write_timeout(), net/ipv4/tcp_timer.c, called by tcp_retransmit_timer()
 *   before it retransmits and backs off; args = icsk_retransmits, icsk_rto (jiffies, the
 *   value that just expired), whether the retry limit is reached.
 * - RETRANS_CB: __tcp_retransmit_skb(), net/ipv4/tcp_output.c; args = first sequence number,
 *   segments, tcp_transmit_skb()'s return value.
 * - STATE_CB: tcp_set_state(), net/ipv4/tcp.c; args = old state, new state.
 *
 * Fields the UAPI context lacks (mdev_us, rttvar_us, icsk_rto, ca_state, backoff) are read from
 * the kernel's struct tcp_sock through bpf_skc_to_tcp_sock() and CO-RE: the partial struct
 * definitions below are relocated by libbpf against /sys/kernel/btf/vmlinux at load time, so
 * no vmlinux.h is generated or shipped.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

/* The ring buffer, socket storage and kernel-read helpers are GPL-only; the kernel accepts
 * "Dual MIT/GPL" as GPL-compatible (include/linux/license.h), which keeps this file under the
 * project's MIT licence too. */
char _license[] SEC("license") = "Dual MIT/GPL";

/* CO-RE views of the kernel's structs: only the fields read, matched by name at load time. */
struct inet_connection_sock {
	__u32 icsk_rto;
	__u8 icsk_backoff;
	__u8 icsk_retransmits;
} __attribute__((preserve_access_index));

struct tcp_options_received {
	__u16 tstamp_ok : 1;
} __attribute__((preserve_access_index));

struct tcp_sock {
	struct inet_connection_sock inet_conn;
	struct tcp_options_received rx_opt;
	__u32 srtt_us;
	__u32 mdev_us;
	__u32 rttvar_us;
	__u32 snd_una;
	__u32 snd_nxt;
} __attribute__((preserve_access_index));

struct sock;
struct sk_buff;

/* Pseudo-op of a per-ACK sample (see rttlab_probe below), beside BPF_SOCK_OPS_*_CB. */
#define RTTLAB_ACK_SAMPLE 100

/* One event; the layout is read by rttlab/live/events.py (keep both in step). */
struct rttlab_event {
	__u64 ts_ns;       /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 cookie;      /* bpf_get_socket_cookie(): the connection's key */
	__u32 op;          /* BPF_SOCK_OPS_*_CB */
	__u32 family;      /* AF_INET / AF_INET6 */
	__u32 local_ip[4]; /* network byte order; IPv4 in [0] */
	__u32 remote_ip[4];
	__u32 local_port;  /* host byte order */
	__u32 remote_port; /* host byte order */
	__u32 args[3];     /* the callback's arguments (see above) */
	__u32 srtt_us;     /* tp->srtt_us: SRTT << 3, microseconds */
	__u32 mdev_us;     /* tp->mdev_us: medium deviation << 2 */
	__u32 rttvar_us;   /* tp->rttvar_us: RTTVAR << 2 as used for the RTO */
	__u32 rto_jiffies; /* icsk->icsk_rto */
	__u32 rtt_min_us;  /* windowed min RTT */
	__u32 snd_una;
	__u32 snd_nxt;
	__u32 snd_cwnd;
	__u32 packets_out;
	__u32 retrans_out;
	__u32 total_retrans;
	__u32 state;       /* sk_state */
	__u32 backoff;     /* icsk_backoff */
	__u32 retransmits; /* icsk_retransmits */
	__u32 flags;       /* bit 0: timestamps negotiated (tp->rx_opt.tstamp_ok); bit 1: the
			    * tcp_sock fields above were read */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* 4 MiB: ~25 000 events of 168 bytes */
} events SEC(".maps");

/* Events the ring buffer had no room for (bpf_ringbuf_reserve failed), per CPU: shown by
 * `rttlab live` so that no event is lost silently. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} overruns SEC(".maps");

/* Per watched socket (marked when established in the cgroup): the SRTT and MDEV last seen and
 * when, to recover every sample the estimator took (rttlab_probe below). */
struct watch {
	__u64 ts_ns;
	__u32 srtt_us;
	__u32 mdev_us;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct watch);
} watched SEC(".maps");

static __always_inline void count_overrun(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&overruns, &zero);
	if (n)
		*n += 1;
}

/* If the estimator moved since `w` was taken, report the sample that moved it, stamped `ts`:
 * from the tracepoint, the previous arrival (the segment that carried it, w->ts_ns); from an
 * RTO or retransmission callback on an ESTABLISHED socket, that same arrival too (in that state
 * samples are taken only by tcp_ack() under tcp_rcv_established(), whose segment the tracepoint
 * stamped; a timer takes none), so a stall's last sample keeps its ACK's time and not the
 * timeout's; from any other callback, now (a sample taken outside tcp_rcv_established(), e.g.
 * while closing, is known only to have come between the last arrival and now). tcp_rtt_estimator() (net/ipv4/tcp_input.c) does
 * `srtt += m - (srtt >> 3)` (and `srtt = m << 3` on the first sample), so the sample is
 * exactly m = new - old + (old >> 3). A sample equal to SRTT/8 leaves SRTT alone but still moves
 * MDEV (`mdev += -(mdev >> 2)` unless MDEV < 4 us): both are compared. */
static __always_inline void flush(struct watch *w, struct tcp_sock *tp, __u64 cookie, __u64 ts, int check_mdev)
{
	__u32 srtt = BPF_CORE_READ(tp, srtt_us);
	__u32 mdev = BPF_CORE_READ(tp, mdev_us);
	if (srtt == w->srtt_us && mdev == w->mdev_us)
		return;
	struct rttlab_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_overrun();
	} else {
		__builtin_memset(e, 0, sizeof(*e));
		__u32 old = w->srtt_us;
		__s64 m = old ? (__s64)srtt - old + (old >> 3) : srtt >> 3;
		/* One sample moves MDEV in a known way (tcp_rtt_estimator()); anything else means two
		 * or more samples came between two looks: reported as merged, not as a sample. */
		__s64 err = m - (old >> 3), dm;
		if (!old) {
			dm = (m << 1) - (__s64)w->mdev_us;
		} else if (err < 0) {
			dm = -err - (w->mdev_us >> 2);
			if (dm > 0)
				dm >>= 3;
		} else {
			dm = err - (w->mdev_us >> 2);
		}
		int merged = m <= 0 || (check_mdev && (__u32)((__s64)w->mdev_us + dm) != mdev);
		e->ts_ns = ts;
		e->cookie = cookie;
		e->op = RTTLAB_ACK_SAMPLE;
		e->args[0] = merged ? 0 : (__u32)m;
		e->args[1] = srtt;
		e->args[2] = merged;
		e->srtt_us = old;
		e->mdev_us = mdev;
		e->rttvar_us = BPF_CORE_READ(tp, rttvar_us);
		e->rto_jiffies = BPF_CORE_READ(tp, inet_conn.icsk_rto);
		e->snd_una = BPF_CORE_READ(tp, snd_una);
		e->snd_nxt = BPF_CORE_READ(tp, snd_nxt);
		e->backoff = BPF_CORE_READ(tp, inet_conn.icsk_backoff);
		e->retransmits = BPF_CORE_READ(tp, inet_conn.icsk_retransmits);
		struct tcp_options_received *rx = &tp->rx_opt;
		e->flags = (BPF_CORE_READ_BITFIELD_PROBED(rx, tstamp_ok) ? 1 : 0) | 2;
		bpf_ringbuf_submit(e, 0);
	}
	w->srtt_us = srtt;
	w->mdev_us = mdev;
}

#define CB_FLAGS (BPF_SOCK_OPS_RTO_CB_FLAG | BPF_SOCK_OPS_RETRANS_CB_FLAG | \
		  BPF_SOCK_OPS_STATE_CB_FLAG | BPF_SOCK_OPS_RTT_CB_FLAG)

static __always_inline void emit(struct bpf_sock_ops *skops, __u32 op)
{
	struct bpf_sock *sk0 = skops->sk;
	if (sk0) {
		/* A sample taken since the last arrival goes out before this event (time order). */
		struct watch *w = bpf_sk_storage_get(&watched, sk0, 0, 0);
		struct tcp_sock *tp0 = w ? bpf_skc_to_tcp_sock(sk0) : 0;
		if (w && tp0 && op != BPF_SOCK_OPS_RTT_CB) {
			int at_arrival = (op == BPF_SOCK_OPS_RTO_CB || op == BPF_SOCK_OPS_RETRANS_CB) &&
					 skops->state == BPF_TCP_ESTABLISHED;
			flush(w, tp0, bpf_get_socket_cookie(skops),
			      at_arrival ? w->ts_ns : bpf_ktime_get_ns(), 1);
		} else if (w && tp0 && skops->args[1]) {
			/* Inside tcp_rtt_estimator(): MDEV is updated, SRTT not yet stored, and the
			 * arguments hold this sample and the new SRTT. An SRTT that moved since the
			 * last look is an earlier sample not yet reported: out with it first; then this
			 * one, exactly, so that no once-per-RTT sample is ever merged into another. */
			__u32 mdev = BPF_CORE_READ(tp0, mdev_us);
			w->mdev_us = mdev; /* compare SRTT only: MDEV already holds this sample */
			flush(w, tp0, bpf_get_socket_cookie(skops), bpf_ktime_get_ns(), 0);
			struct rttlab_event *s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
			if (!s) {
				count_overrun();
			} else {
				__builtin_memset(s, 0, sizeof(*s));
				s->ts_ns = bpf_ktime_get_ns();
				s->cookie = bpf_get_socket_cookie(skops);
				s->op = RTTLAB_ACK_SAMPLE;
				s->args[0] = skops->args[0];
				s->args[1] = skops->args[1];
				s->srtt_us = w->srtt_us;
				s->mdev_us = mdev;
				s->rttvar_us = BPF_CORE_READ(tp0, rttvar_us);
				s->rto_jiffies = BPF_CORE_READ(tp0, inet_conn.icsk_rto);
				s->snd_una = skops->snd_una;
				s->snd_nxt = skops->snd_nxt;
				s->flags = 2 | (BPF_CORE_READ_BITFIELD_PROBED(&tp0->rx_opt, tstamp_ok) ? 1 : 0);
				bpf_ringbuf_submit(s, 0);
			}
			w->srtt_us = skops->args[1];
			w->mdev_us = mdev;
		}
	}
	struct rttlab_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&overruns, &zero);
		if (n)
			*n += 1;
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->cookie = bpf_get_socket_cookie(skops);
	e->op = op;
	e->family = skops->family;
	e->local_ip[0] = skops->local_ip4;
	e->remote_ip[0] = skops->remote_ip4;
	e->local_ip[1] = skops->local_ip6[1];
	e->remote_ip[1] = skops->remote_ip6[1];
	e->local_ip[2] = skops->local_ip6[2];
	e->remote_ip[2] = skops->remote_ip6[2];
	e->local_ip[3] = skops->local_ip6[3];
	e->remote_ip[3] = skops->remote_ip6[3];
	if (skops->family == 10 /* AF_INET6 */) {
		e->local_ip[0] = skops->local_ip6[0];
		e->remote_ip[0] = skops->remote_ip6[0];
	}
	e->local_port = skops->local_port;
	e->remote_port = __builtin_bswap32(skops->remote_port) & 0xffff; /* stored big-endian in the upper half */
	e->args[0] = skops->args[0];
	e->args[1] = skops->args[1];
	e->args[2] = skops->args[2];
	e->srtt_us = skops->srtt_us;
	e->rtt_min_us = skops->rtt_min;
	e->snd_una = skops->snd_una;
	e->snd_nxt = skops->snd_nxt;
	e->snd_cwnd = skops->snd_cwnd;
	e->packets_out = skops->packets_out;
	e->retrans_out = skops->retrans_out;
	e->total_retrans = skops->total_retrans;
	e->state = skops->state;
	e->mdev_us = 0;
	e->rttvar_us = 0;
	e->rto_jiffies = 0;
	e->backoff = 0;
	e->retransmits = 0;
	e->flags = 0;
	e->pad = 0;
	struct bpf_sock *sk = skops->sk;
	if (sk) {
		struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
		if (tp) {
			e->mdev_us = BPF_CORE_READ(tp, mdev_us);
			e->rttvar_us = BPF_CORE_READ(tp, rttvar_us);
			e->rto_jiffies = BPF_CORE_READ(tp, inet_conn.icsk_rto);
			e->backoff = BPF_CORE_READ(tp, inet_conn.icsk_backoff);
			e->retransmits = BPF_CORE_READ(tp, inet_conn.icsk_retransmits);
			struct tcp_options_received *rx = &tp->rx_opt;
			e->flags = (BPF_CORE_READ_BITFIELD_PROBED(rx, tstamp_ok) ? 1 : 0) | 2;
		}
	}
	bpf_ringbuf_submit(e, 0);
}

SEC("sockops")
int rttlab_sockops(struct bpf_sock_ops *skops)
{
	__u32 op = skops->op;

	switch (op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		/* Keep whatever flags another program set; add ours. */
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | CB_FLAGS);
		struct bpf_sock *sk = skops->sk;
		if (sk) {
			struct watch *w = bpf_sk_storage_get(&watched, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
			if (w) {
				/* The handshake's sample is in already: start from it. */
				w->ts_ns = bpf_ktime_get_ns();
				w->srtt_us = skops->srtt_us;
				struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
				w->mdev_us = tp ? BPF_CORE_READ(tp, mdev_us) : 0;
			}
		}
		emit(skops, op);
		break;
	case BPF_SOCK_OPS_RTT_CB:
	case BPF_SOCK_OPS_RTO_CB:
	case BPF_SOCK_OPS_RETRANS_CB:
	case BPF_SOCK_OPS_STATE_CB:
		emit(skops, op);
		break;
	}
	return 1;
}

/* Every RTT sample, not one per round trip: BPF_SOCK_OPS_RTT_CB fires only where
 * tcp_rtt_estimator() opens a new MDEV window (`after(snd_una, rtt_seq)`, once per RTT). The
 * tcp_probe tracepoint (tcp_rcv_established(), before the segment is processed) sees the
 * estimator as the previous segment left it: a change since then is one sample, recovered
 * exactly (flush above) and stamped with that segment's arrival. Only sockets the sock_ops
 * program marked are looked at. A raw (BTF) tracepoint needs no tracefs, kprobes or BPF
 * trampolines; where it cannot attach, rttlab live reports the once-per-RTT samples instead. */
SEC("tp_btf/tcp_probe")
int BPF_PROG(rttlab_probe, struct sock *sk, struct sk_buff *skb)
{
	struct watch *w = bpf_sk_storage_get(&watched, sk, 0, 0);
	if (!w)
		return 0;
	flush(w, (struct tcp_sock *)sk, bpf_get_socket_cookie(sk), w->ts_ns, 1);
	w->ts_ns = bpf_ktime_get_ns();
	return 0;
}
