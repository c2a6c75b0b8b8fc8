// Parses the integers in request paths exactly as apps/CONTRACT.md requires:
// ASCII digits only, decimal, leading zeros allowed, and anything else (a
// sign, a letter, a space, a value above the endpoint's maximum, a value too
// big for 64 bits) rejected with 400. Route constraints such as {id:int}
// would answer 404 instead, and int.Parse accepts signs and spaces, hence
// this small parser behind plain string route parameters.
namespace Stampede.AspNetCore;

internal static class PathInt
{
    /// <summary>
    /// True when <paramref name="text"/> is one or more ASCII digits whose value is at most
    /// <paramref name="max"/>. Stops at the first digit past the maximum, so no length of input
    /// can overflow.
    /// </summary>
    public static bool TryParse(string text, int max, out int value)
    {
        value = 0;
        if (text.Length == 0)
        {
            return false;
        }
        long accumulated = 0;
        foreach (char c in text)
        {
            if (c < '0' || c > '9')
            {
                return false;
            }
            accumulated = accumulated * 10 + (c - '0');
            if (accumulated > max)
            {
                return false;
            }
        }
        value = (int)accumulated;
        return true;
    }
}
