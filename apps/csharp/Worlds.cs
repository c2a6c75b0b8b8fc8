// The parts of /queries and /updates that need no database: how many rows a
// request asks for, and which rows an update batch writes. Kept apart from
// Database so they can be tested without one.
using System.Globalization;
using System.Text.Json.Serialization;

namespace Stampede.AspNetCore;

/// <summary>One row of the world table, as /db, /queries and /updates answer it.</summary>
public sealed record World(
    [property: JsonPropertyName("id")] int Id,
    [property: JsonPropertyName("randomNumber")] int RandomNumber);

internal static class Worlds
{
    /// <summary>The most rows /queries and /updates touch per request.</summary>
    public const int MaxQueries = 500;

    /// <summary>
    /// The first <c>queries</c> parameter clamped to 1..500; missing, empty or not a decimal
    /// integer means 1, a number too big for a long means 500.
    /// </summary>
    public static int QueryCount(string? text)
    {
        if (string.IsNullOrEmpty(text) || !IsInteger(text))
        {
            return 1;
        }
        if (!long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long n))
        {
            return text[0] == '-' ? 1 : MaxQueries;
        }
        return (int)Math.Clamp(n, 1, MaxQueries);
    }

    /// <summary>An optional sign then ASCII digits only (long.TryParse alone allows spaces).</summary>
    private static bool IsInteger(string text)
    {
        int start = text[0] is '+' or '-' ? 1 : 0;
        if (start == text.Length)
        {
            return false;
        }
        for (int i = start; i < text.Length; i++)
        {
            if (text[i] is < '0' or > '9')
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>
    /// Gives <c>worlds[i]</c> the number <c>numbers[i]</c> and returns the batch to write: each
    /// id once, ascending (concurrent batches lock rows in one order and cannot deadlock). An id
    /// drawn twice keeps its last number, in the table and in every answered copy, so the answer
    /// is what a read-back finds.
    /// </summary>
    public static (int[] Ids, int[] Numbers) PlanUpdates(World[] worlds, int[] numbers)
    {
        var last = new SortedDictionary<int, int>();
        for (int i = 0; i < worlds.Length; i++)
        {
            last[worlds[i].Id] = numbers[i];
        }
        for (int i = 0; i < worlds.Length; i++)
        {
            worlds[i] = worlds[i] with { RandomNumber = last[worlds[i].Id] };
        }
        return (last.Keys.ToArray(), last.Values.ToArray());
    }
}
