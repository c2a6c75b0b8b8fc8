// /fortunes' page: the rows read from the database plus the one added at
// request time, sorted by message and written as HTML with every message
// through System.Text.Encodings.Web's HtmlEncoder (no Razor in a minimal
// API), so the <script> row never comes back as markup. The encoder allows
// every Unicode range, so the Japanese row stays UTF-8 text instead of
// numeric references; it still encodes & < > " ' (and +).
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Unicode;

namespace Stampede.AspNetCore;

/// <summary>One row of the fortune table.</summary>
public sealed record Fortune(int Id, string Message);

internal static class Fortunes
{
    public const string AddedMessage = "Additional fortune added at request time.";

    private const string Head =
        "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>";
    private const string Foot = "</table></body></html>";

    private static readonly HtmlEncoder Encoder = HtmlEncoder.Create(UnicodeRanges.All);

    public static string Render(List<Fortune> rows)
    {
        var fortunes = new List<Fortune>(rows) { new(0, AddedMessage) };
        fortunes.Sort((a, b) => ByCodePoint(a.Message, b.Message));
        var html = new StringBuilder(Head);
        foreach (Fortune fortune in fortunes)
        {
            html.Append("<tr><td>").Append(fortune.Id).Append("</td><td>")
                .Append(Encoder.Encode(fortune.Message)).Append("</td></tr>");
        }
        return html.Append(Foot).ToString();
    }

    /// <summary>
    /// The contract's order: code points (the UTF-8 bytes' order). string.CompareOrdinal compares
    /// UTF-16 code units, which puts U+10000 and above before U+E000..U+FFFF.
    /// </summary>
    public static int ByCodePoint(string a, string b)
    {
        StringRuneEnumerator x = a.EnumerateRunes();
        StringRuneEnumerator y = b.EnumerateRunes();
        while (true)
        {
            bool moreX = x.MoveNext();
            bool moreY = y.MoveNext();
            if (!moreX || !moreY)
            {
                return moreX.CompareTo(moreY);
            }
            int order = x.Current.Value.CompareTo(y.Current.Value);
            if (order != 0)
            {
                return order;
            }
        }
    }
}
