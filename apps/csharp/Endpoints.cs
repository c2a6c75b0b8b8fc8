// Maps the contract's endpoints (apps/CONTRACT.md) onto minimal API routes.
// Path integers arrive as plain string route values and go through PathInt,
// so a malformed or out-of-range integer answers 400 while an empty or extra
// segment finds no route and answers 404. /sleep awaits Task.Delay, so no
// thread-pool thread waits.
namespace Stampede.AspNetCore;

internal static class Endpoints
{
    private const string Hello = "Hello, World!";

    public static void MapContract(this WebApplication app)
    {
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

    private static IResult WithInt(string segment, int max, Func<int, IResult> answer) =>
        PathInt.TryParse(segment, max, out int value) ? answer(value) : BadRequest();

    private static IResult BadRequest() =>
        Results.Text("Bad Request\n", "text/plain", statusCode: StatusCodes.Status400BadRequest);
}
