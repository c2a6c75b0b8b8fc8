// Entry point of the C# reference server for Stampede's benchmark contract
// (apps/CONTRACT.md): an ASP.NET Core minimal API on Kestrel, listening on
// 0.0.0.0:$PORT, with request logging off and $THREADS applied to the thread
// pool. The generic host turns SIGTERM into a graceful stop, bounded here to
// 2 seconds so the process ends within the contract's 5.
//
// How to run: `dotnet publish -c Release -o out && PORT=9009 dotnet out/app.dll`
// (see app.toml for the GC, spin and db_pool knobs; DATABASE_URL and
// DATABASE_POOL_SIZE feed the database endpoints, see Database.cs).
using System.Net;
using Stampede.AspNetCore;

Settings settings;
Database database;
try
{
    settings = Settings.FromEnvironment();
    settings.ApplyToThreadPool();
    database = Database.FromEnvironment();
}
catch (ArgumentException e)
{
    Console.Error.WriteLine($"aspnetcore: error: {e.Message}");
    return 2;
}

var builder = WebApplication.CreateBuilder(args);
builder.Logging.ClearProviders();
builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Any, settings.Port));
builder.Services.Configure<HostOptions>(host => host.ShutdownTimeout = TimeSpan.FromSeconds(2));

var app = builder.Build();
// Gives routing's bodiless 404 and 405 answers a Content-Type and a body.
app.UseStatusCodePages("text/plain", "Status code: {0}");
app.MapContract(database);
app.Lifetime.ApplicationStarted.Register(() => Console.WriteLine(
    $"aspnetcore: listening on {string.Join(", ", app.Urls)} (thread pool: {settings.ThreadsLabel})"));

app.Run();
return 0;
