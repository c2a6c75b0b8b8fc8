// Maps the contract's endpoints (apps/CONTRACT.md) onto minimal API routes.
// Path integers arrive as plain string route values and go through PathInt,
// so a malformed or out-of-range integer answers 400 while an empty or extra
// segment finds no route and answers 404. /sleep awaits Task.Delay, so no
// thread-pool thread waits; the database endpoints await Npgsql (Database.cs)
// and answer 503 when the database is unset or unreachable.
namespace Stampede.AspNetCore;

internal static class Endpoints
{
    private const string Hello = "Hello, World!";

    public static void MapContract(this WebApplication app, Database database)
    {
        app.MapGet("/db", () => WithDatabase(async () => Results.Json((await database.ReadWorlds(1))[0])));
        app.MapGet("/queries", (HttpRequest request) => WithDatabase(async () =>
            Results.Json(await database.ReadWorlds(Worlds.QueryCount(FirstQueries(request))))));
        app.MapGet("/updates", (HttpRequest request) => WithDatabase(async () =>
            Results.Json(await database.UpdateWorlds(Worlds.QueryCount(FirstQueries(request))))));
        app.MapGet("/fortunes", () => WithDatabase(async () =>
            Results.Text(Fortunes.Render(await database.ReadFortunes()), "text/html; charset=utf-8")));
        app.MapGet("/plaintext", () => Results.Text(Hello, "text/plain"));
        app.MapGet("/json", () => Results.Json(new Greeting(Hello)));
        app.MapGet("/values/{id}", (string id) =>
            WithInt(id, int.MaxValue, value => Results.Json(value)));
        // The sequence API answers plain text, numbers separated by single spaces.
        app.MapGet("/api/count/{n}", (string n) =>
            WithInt(n, 100_000, count => Results.Text(Work.Count(count), "text/plain")));
        app.MapGet("/api/fib/{n}", (string n) =>
            WithInt(n, 10_000, count => Results.Text(Work.Fib(count), "text/plain")));
        app.MapGet("/cpu/{iters}", (string iters) =>
            WithInt(iters, 10_000_000, rounds => Results.Json(new CpuResult(Work.Xorshift(rounds)))));
        app.MapGet("/lock/{iters}", (string iters) =>
            WithInt(iters, 10_000_000, rounds => Results.Json(new CpuResult(Work.XorshiftLocked(rounds)))));
        app.MapGet("/alloc/{kib}", (string kib) =>
            WithInt(kib, 65_536, size =>
            {
                Work.Alloc(size);
                return Results.Json(new Allocated(size));
            }));
        app.MapGet("/sleep/{ms}", async (string ms) =>
        {
            if (!PathInt.TryParse(ms, 10_000, out int delay))
            {
                return BadRequest();
            }
            await Task.Delay(delay);
            return Results.Json(new Slept(delay));
        });
    }

    private static string? FirstQueries(HttpRequest request)
    {
        var values = request.Query["queries"];
        return values.Count > 0 ? values[0] : null;
    }

    private static async Task<IResult> WithDatabase(Func<Task<IResult>> answer)
    {
        try
        {
            return await answer();
        }
        catch (DatabaseUnavailable e)
        {
            return Results.Text(e.Message + "\n", "text/plain", statusCode: StatusCodes.Status503ServiceUnavailable);
        }
    }

    private static IResult WithInt(string segment, int max, Func<int, IResult> answer) =>
        PathInt.TryParse(segment, max, out int value) ? answer(value) : BadRequest();

    private static IResult BadRequest() =>
        Results.Text("Bad Request\n", "text/plain", statusCode: StatusCodes.Status400BadRequest);
}
