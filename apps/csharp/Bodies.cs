// The JSON bodies of the contract's endpoints, serialised per request by
// System.Text.Json through minimal API results. Field names are spelled out
// so the output does not depend on the host's naming policy.
using System.Text.Json.Serialization;

namespace Stampede.AspNetCore;

/// <summary>Body of /json.</summary>
public sealed record Greeting([property: JsonPropertyName("message")] string Message);

/// <summary>Body of /cpu and /lock: the 64-bit result as a string, since it may exceed 2^63.</summary>
public sealed record CpuResult([property: JsonPropertyName("result")] string Result);

/// <summary>Body of /alloc.</summary>
public sealed record Allocated([property: JsonPropertyName("allocated_kib")] int AllocatedKib);

/// <summary>Body of /sleep.</summary>
public sealed record Slept([property: JsonPropertyName("slept_ms")] int SleptMs);
