// Reads the server's settings from the environment, as apps/CONTRACT.md
// specifies for every reference server: PORT (default 9009) and THREADS
// (unset or empty means the runtime's default). THREADS pins the .NET thread
// pool's minimum and maximum worker count, the unit of parallelism that
// ASP.NET Core request handling runs on. A bad value stops the server at
// start with a message naming the variable.
using System.Globalization;

namespace Stampede.AspNetCore;

/// <summary>The environment-derived configuration; <c>Threads == null</c> means the runtime's default.</summary>
internal sealed record Settings(int Port, int? Threads)
{
    private const int DefaultPort = 9009;

    /// <summary>The legacy I/O completion thread limit caps what SetMinThreads accepts.</summary>
    private const int MaxThreads = 1000;

    public string ThreadsLabel => Threads is int n ? $"{n} threads" : "runtime default";

    public static Settings FromEnvironment() =>
        new(ReadInt("PORT", 0, 65535) ?? DefaultPort, ReadInt("THREADS", 1, MaxThreads));

    /// <summary>Sets min = max = THREADS; the minimum first, since a maximum below the minimum is refused.</summary>
    public void ApplyToThreadPool()
    {
        if (Threads is not int n)
        {
            return;
        }
        if (!ThreadPool.SetMinThreads(n, n) || !ThreadPool.SetMaxThreads(n, n))
        {
            throw new ArgumentException($"THREADS={n}: the thread pool refused min = max = {n}");
        }
    }

    private static int? ReadInt(string name, int min, int max)
    {
        string? raw = Environment.GetEnvironmentVariable(name);
        if (string.IsNullOrWhiteSpace(raw))
        {
            return null;
        }
        if (int.TryParse(raw.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out int value)
            && value >= min && value <= max)
        {
            return value;
        }
        throw new ArgumentException($"{name}={raw} is not an integer in {min}..{max}; fix or unset it");
    }
}
