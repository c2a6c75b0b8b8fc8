#!/usr/bin/env python3
"""Splits a core's time, from `perf script` of a system-wide `cpu-clock`
recording of that core, into where a load generator's work goes.

Each sample is classified by its whole stack, not only its leaf: a sample
whose stack passes through the TCP/IP stack (tcp_*, ip_*, the loopback
device, net_rx_action) is "kernel TCP/IP" even when its leaf is a memcpy or
a lock, because that work is what any client pays to move bytes over
loopback: the floor. UDP's path (udp_*, the same IP and loopback layers)
is "kernel UDP/IP" in the same way, for QUIC. The rest of the kernel is
split into system-call entry and exit, io_uring, epoll, scheduling and
other. User space is split by the leaf's symbol into TLS/QUIC crypto
(ring's and rustls' AEAD, header protection and hashing: what encrypting
each packet costs), QUIC (quinn-proto), the allocator (malloc/free/memcpy
in libc) and the rest of the tool. Idle samples are left out, and the
shares are of the busy samples.

    perf script -F comm,pid,ip,sym,dso | breakdown.py LABEL
"""
import re
import sys
from collections import Counter

TCP = re.compile(r"^(tcp_|__tcp_|ip_|__ip_|ip6_|inet_|__inet_|sk_|__sk_|sock_|__sock_|skb_|__skb_|"
                 r"__netif_|netif_|net_rx_action|__dev_queue_xmit|dev_hard_start_xmit|loopback_xmit|"
                 r"process_backlog|__napi_poll|validate_xmit|nf_hook|security_sock|tcp4_|tcp6_|release_sock|lock_sock)")
UDP = re.compile(r"^(udp_|__udp|udpv6_|udp4_|udp6_|__udp4_|__udp6_)")
CRYPTO = re.compile(r"(ring_core_|ring::|rustls::crypto|aes_|_aes|gcm_|_gcm|ghash|chacha|poly1305|sha256|sha512|"
                    r"x25519|p256|ecp_nistz256|bn_mul|CRYPTO_|aesni|vpaes|header_protection)", re.I)
QUIC = re.compile(r"^(quinn_proto|<quinn_proto)")
ALLOC = re.compile(r"^(malloc|free|realloc|calloc|cfree|_int_malloc|_int_free|__memmove|__memcpy|__memset|"
                   r"memcpy|memmove|memset|__libc_malloc|__libc_free|__rust_alloc|__rust_dealloc|__rdl_)")
IDLE = re.compile(r"^(default_idle|cpu_idle_poll|native_safe_halt|pv_native_safe_halt|acpi_idle|intel_idle|"
                  r"mwait_idle|do_idle|cpuidle_|arch_cpu_idle|poll_idle)")
CLASSES = [
    ("io_uring", re.compile(r"^(io_|__io_|io_uring)")),
    ("epoll", re.compile(r"^(ep_|__ep_|do_epoll|__x64_sys_epoll)")),
    ("scheduling", re.compile(r"^(schedule|__schedule|finish_task_switch|pick_next|try_to_wake_up|"
                              r"__wake_up|wake_up|enqueue_|dequeue_|update_curr|psi_)")),
    ("syscall entry/exit", re.compile(r"^(entry_SYSCALL|do_syscall_64|syscall_exit|__x64_sys_|"
                                      r"syscall_return|exit_to_user_mode|__fdget|fput|__fget)")),
]


def samples(stream):
    """Yields (comm, frames) per sample; frames are (symbol, dso), leaf first."""
    head, frames = None, []
    for line in stream:
        if not line.strip():
            if head is not None:
                yield head, frames
            head, frames = None, []
        elif line[0] not in " \t":
            head, frames = line.split()[0], []
        else:
            parts = line.split(None, 1)
            rest = parts[1] if len(parts) > 1 else ""
            m = re.match(r"(.*?)(?:\+0x[0-9a-f]+)? \((.*)\)\s*$", rest)
            frames.append((m.group(1), m.group(2)) if m else (rest.strip(), ""))
    if head is not None:
        yield head, frames


def classify(frames):
    if not frames:
        return "unknown"
    leaf_sym, leaf_dso = frames[0]
    if IDLE.match(leaf_sym):
        return None
    if "kernel" not in leaf_dso and "vmlinux" not in leaf_dso:
        if CRYPTO.search(leaf_sym):
            return "user TLS/QUIC crypto"
        if QUIC.match(leaf_sym):
            return "user QUIC (quinn-proto)"
        if ALLOC.match(leaf_sym):
            return "user allocator, copies"
        return "user space, other"
    if any(UDP.match(sym) for sym, _ in frames):
        return "kernel UDP/IP"
    if any(TCP.match(sym) for sym, _ in frames):
        return "kernel TCP/IP"
    for name, pattern in CLASSES:
        if any(pattern.match(sym) for sym, _ in frames):
            return f"kernel {name}"
    return "kernel other"


def main():
    label = sys.argv[1] if len(sys.argv) > 1 else "tool"
    counts = Counter()
    for _comm, frames in samples(sys.stdin):
        kind = classify(frames)
        if kind is not None:
            counts[kind] += 1
    busy = sum(counts.values()) or 1
    order = ["user TLS/QUIC crypto", "user QUIC (quinn-proto)", "user allocator, copies", "user space, other",
             "kernel UDP/IP", "kernel TCP/IP", "kernel syscall entry/exit", "kernel io_uring", "kernel epoll",
             "kernel scheduling", "kernel other", "unknown"]
    print(f"{label}: {busy} busy samples of the core")
    for kind in order:
        if counts[kind]:
            print(f"  {kind:<28} {100 * counts[kind] / busy:5.1f}%")


if __name__ == "__main__":
    main()
