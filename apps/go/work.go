// The computations behind the contract's endpoints, kept apart from HTTP so
// they can be tested against the contract's vectors directly: path-integer
// parsing, the xorshift loop of /cpu and /lock, the counting and Fibonacci
// sequences, and /alloc's churn.
package main

import (
	"math/big"
	"runtime"
	"strconv"
)

// parsePathInt reads s as one or more ASCII digits (leading zeros allowed) and
// reports false for anything else or for a value above max, checking before
// each step so that 64-bit overflow cannot wrap into range.
func parsePathInt(s string, max uint64) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if d > max || n > (max-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// xorshift runs the contract's loop from 0x9E3779B97F4A7C15; uint64
// arithmetic in Go wraps and >> on unsigned values is logical.
func xorshift(iters uint64) uint64 {
	x := uint64(0x9E3779B97F4A7C15)
	for i := uint64(0); i < iters; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// countText is "1 2 … n": decimal, single spaces, nothing after the last.
func countText(n uint64) []byte {
	var out []byte
	for i := uint64(1); i <= n; i++ {
		if i > 1 {
			out = append(out, ' ')
		}
		out = strconv.AppendUint(out, i, 10)
	}
	return out
}

// fibText is "F0 F1 … Fn" (n+1 numbers), exact at any size with math/big.
func fibText(n int) []byte {
	var out []byte
	a, b := big.NewInt(0), big.NewInt(1)
	for i := 0; i <= n; i++ {
		if i > 0 {
			out = append(out, ' ')
		}
		out = a.Append(out, 10)
		a.Add(a, b)
		a, b = b, a
	}
	return out
}

// chunkBytes is the size of each short-lived object /alloc makes.
const chunkBytes = 256

// churn allocates about kib KiB as many small heap buffers, writes to every
// byte of each, holds them all in one list, then drops them for the collector.
func churn(kib int) {
	chunks := make([][]byte, kib*1024/chunkBytes)
	for i := range chunks {
		b := make([]byte, chunkBytes)
		for j := range b {
			b[j] = byte(i + j)
		}
		chunks[i] = b
	}
	// Every buffer stays reachable until all are allocated and written.
	runtime.KeepAlive(chunks)
}
