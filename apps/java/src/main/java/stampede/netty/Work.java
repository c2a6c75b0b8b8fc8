// The computations behind the contract's endpoints (apps/CONTRACT.md): the
// xorshift loop of /cpu and /lock, the sequences of /api/count and /api/fib,
// and the garbage-collector pressure of /alloc. Pure functions with no Netty
// types, so they can be read against the contract's test vectors.
package stampede.netty;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

final class Work {

    /** The one process-wide lock that /lock holds while it computes. */
    private static final Object GLOBAL_LOCK = new Object();

    /** Size of each short-lived array /alloc creates (the contract asks for 64 to 1024). */
    static final int ALLOC_CHUNK_BYTES = 256;

    private Work() {}

    /** The contract's xorshift, {@code iters} rounds from 0x9E3779B97F4A7C15, as unsigned decimal. */
    static String xorshift(int iters) {
        long x = 0x9E3779B97F4A7C15L;
        for (int i = 0; i < iters; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return Long.toUnsignedString(x);
    }

    /** {@link #xorshift} computed while holding the process-wide lock. */
    static String xorshiftLocked(int iters) {
        synchronized (GLOBAL_LOCK) {
            return xorshift(iters);
        }
    }

    /** {@code "1 2 ... n"}: decimal, single spaces, nothing after the last number. */
    static String count(int n) {
        StringBuilder out = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            if (i > 1) {
                out.append(' ');
            }
            out.append(i);
        }
        return out.toString();
    }

    /** {@code "F0 F1 ... Fn"} (n + 1 numbers), exact at any size with {@link BigInteger}. */
    static String fib(int n) {
        StringBuilder out = new StringBuilder();
        BigInteger a = BigInteger.ZERO;
        BigInteger b = BigInteger.ONE;
        for (int i = 0; i <= n; i++) {
            if (i > 0) {
                out.append(' ');
            }
            out.append(a);
            BigInteger next = a.add(b);
            a = b;
            b = next;
        }
        return out.toString();
    }

    /** Allocates about {@code kib} KiB as small arrays held in a list, writes to each, drops them. */
    static void alloc(int kib) {
        int chunks = (int) ((long) kib * 1024 / ALLOC_CHUNK_BYTES);
        List<byte[]> held = new ArrayList<>(chunks);
        for (int i = 0; i < chunks; i++) {
            byte[] chunk = new byte[ALLOC_CHUNK_BYTES];
            for (int b = 0; b < ALLOC_CHUNK_BYTES; b += 64) {
                chunk[b] = (byte) i;
            }
            held.add(chunk);
        }
        held.clear();
    }
}
