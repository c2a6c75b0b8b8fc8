// The computations behind the contract's endpoints (apps/CONTRACT.md): the
// xorshift loop of /cpu and /lock, the sequences of /api/count and /api/fib,
// and the garbage-collector pressure of /alloc. Pure functions with no
// ASP.NET Core types, so they can be read against the contract's test vectors.
using System.Globalization;
using System.Numerics;
using System.Text;

namespace Stampede.AspNetCore;

internal static class Work
{
    /// <summary>The one process-wide lock that /lock holds while it computes.</summary>
    private static readonly object GlobalLock = new();

    /// <summary>Size of each short-lived array /alloc creates (the contract asks for 64 to 1024).</summary>
    private const int AllocChunkBytes = 256;

    /// <summary>The contract's xorshift, <paramref name="iters"/> rounds from 0x9E3779B97F4A7C15, in decimal.</summary>
    public static string Xorshift(int iters)
    {
        ulong x = 0x9E3779B97F4A7C15UL;
        for (int i = 0; i < iters; i++)
        {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        return x.ToString(CultureInfo.InvariantCulture);
    }

    /// <summary><see cref="Xorshift"/> computed while holding the process-wide lock.</summary>
    public static string XorshiftLocked(int iters)
    {
        lock (GlobalLock)
        {
            return Xorshift(iters);
        }
    }

    /// <summary><c>"1 2 ... n"</c>: decimal, single spaces, nothing after the last number.</summary>
    public static string Count(int n)
    {
        var text = new StringBuilder();
        for (int i = 1; i <= n; i++)
        {
            if (i > 1)
            {
                text.Append(' ');
            }
            text.Append(i.ToString(CultureInfo.InvariantCulture));
        }
        return text.ToString();
    }

    /// <summary><c>"F0 F1 ... Fn"</c> (n + 1 numbers), exact at any size with <see cref="BigInteger"/>.</summary>
    public static string Fib(int n)
    {
        var text = new StringBuilder();
        BigInteger a = BigInteger.Zero;
        BigInteger b = BigInteger.One;
        for (int i = 0; i <= n; i++)
        {
            if (i > 0)
            {
                text.Append(' ');
            }
            text.Append(a.ToString(CultureInfo.InvariantCulture));
            BigInteger next = a + b;
            a = b;
            b = next;
        }
        return text.ToString();
    }

    /// <summary>Allocates about <paramref name="kib"/> KiB as small arrays held in a list, writes to each, drops them.</summary>
    public static void Alloc(int kib)
    {
        int chunks = (int)((long)kib * 1024 / AllocChunkBytes);
        var held = new List<byte[]>(chunks);
        for (int i = 0; i < chunks; i++)
        {
            var chunk = new byte[AllocChunkBytes];
            for (int b = 0; b < AllocChunkBytes; b += 64)
            {
                chunk[b] = (byte)i;
            }
            held.Add(chunk);
        }
        held.Clear();
    }
}
